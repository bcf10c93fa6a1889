/* Calls small for their mesh (small.h): the choice between the distributed routine and one
 * device per process, from the seconds each way measured on the same shape, and the one-device
 * solve (syevd's too: every process solves the gathered matrix, cuSOLVER's results the same on
 * the same GPUs, and writes its own devices' rows).
 *
 * On a 1D mesh device r's row-major shard of A is, read column-major, the column panel r of
 * Aᵀ (Np x rows, leading dimension Np), so the shards laid end to end in mesh order are the
 * whole Aᵀ, and potrs' row shards of B laid so are the whole Bᵀ (nrhs x Np): the gathered
 * matrix is solved as the one-device path of the handlers solves a whole shard. */
#include "small.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int tsr_jax_path(const int64_t calls[TSR_JAX_PATHS], const double mean[TSR_JAX_PATHS],
                 double floor) {
  if (calls[0] < 2 || (calls[1] < 2 && floor >= mean[0])) return 0;
  if (calls[1] < 2) return 1;
  return mean[1] < mean[0];
}

/* The mesh devices process `owner` holds. */
static int held_by(const call_t *c, int64_t owner) {
  int k = 0;
  for (int r = 0; r < c->ndev; r++) k += c->owners[r] == owner;
  return k;
}

bool tsr_jax_small_eligible(const call_t *c, const part_t *p) {
  /* syevd's routine goes through host memory even on one device; its row blocks must cover A
   * without padding (its eigenvectors come back in them) */
  const bool eig = c->op == OP_SYEVD && p->rows * c->ndev == p->n && p->cols == p->n;
  if (c->ndev < (eig ? 1 : 2) || c->gcols != 1 || p->n < 1 || !(eig || tsr_jax_queue_solves(c, p)))
    return false;
  if (!c->comm || c->platform != TESSERA_JAX_CPU) return true; /* a GPU per endpoint */
  for (int r = 0; r < c->ndev; r++) /* host gathers take as many shards from each process */
    if (held_by(c, c->owners[r]) != c->mine) return false;
  return true;
}

double tsr_jax_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The timings of the call's shape on its platform, a free or the oldest entry made for it. */
static tsr_jax_timing_t *timing_of(tsr_jax_state_t *s, const call_t *c, const part_t *p) {
  const int64_t key[5] = {c->op, p->dtype, p->n, c->ndev, p->batch};
  tsr_jax_timing_t *t = s->timing[c->platform];
  for (int i = 0; i < TSR_JAX_SHAPES; i++)
    if (!memcmp(t[i].key, key, sizeof key)) return &t[i];
  tsr_jax_timing_t *e = &t[s->timing_next[c->platform]];
  s->timing_next[c->platform] = (s->timing_next[c->platform] + 1) % TSR_JAX_SHAPES;
  *e = (tsr_jax_timing_t){.key = {key[0], key[1], key[2], key[3], key[4]}};
  return e;
}

/* The least seconds the call takes on one device: its flops (LAWN 41's leading terms; complex
 * four times) at the device's peak rate, the rate the cost model assumes before it has
 * measured. */
static double one_device_floor(tessera_context_t *ctx, const call_t *c, const part_t *p) {
  tessera_device_info_t info;
  const tessera_device_kind_t kind =
      c->platform == TESSERA_JAX_CPU ? TESSERA_DEVICE_CPU : TESSERA_DEVICE_CUDA;
  if (tessera_device_info(ctx, kind, 0, &info) || !(info.gflops > 0)) return 0;
  const double n = (double)p->n, k = c->op == OP_CHOLESKY ? 0 : (double)p->nrhs;
  const bool complex = p->dtype == TESSERA_C64 || p->dtype == TESSERA_C128;
  const double flops =
      c->op == OP_SYEVD
          ? (4.0 / 3 + (p->vectors ? 4 : 0)) * n * n * n
          : (c->op == OP_LU_SOLVE ? 2 * n * n * n / 3 : n * n * n / 3) + 2 * n * n * k;
  return (complex ? 4 : 1) * flops / (info.gflops * 1e9);
}

int tsr_jax_small_choose(tsr_jax_state_t *s, tessera_context_t *ctx, const call_t *c,
                         const part_t *p, tsr_jax_timing_t **entry) {
  tsr_jax_timing_t *e = *entry = timing_of(s, c, p);
  /* calls, then nanoseconds (the means, one device's floor), then syevd's method where the
   * context's configuration fixes it (TESSERA_EIG_METHOD: 2 one stage on one device, 1 the
   * routine, 0 by cost): the processes' largest of each */
  enum { V = 2 * TSR_JAX_PATHS + 2 };
  int64_t v[V];
  for (int k = 0; k < TSR_JAX_PATHS; k++) {
    v[k] = e->calls[k];
    v[TSR_JAX_PATHS + k] = (int64_t)(e->mean[k] * 1e9);
  }
  v[V - 2] = (int64_t)(one_device_floor(ctx, c, p) * 1e9);
  const tessera_eig_method_t m = tessera_config(ctx)->eig_method;
  v[V - 1] = c->op != OP_SYEVD ? 0 : m == TESSERA_EIG_ONE ? 2 : m == TESSERA_EIG_TWO ? 1 : 0;
  if (c->comm && tessera_comm_allreduce(c->comm, v, v, V, TESSERA_COMM_I64, TESSERA_MAX, NULL)) {
    fprintf(stderr, "tessera.jax: %s\n", tessera_comm_last_error(c->comm));
    return TESSERA_ERR_TIMEOUT;
  }
  if (v[V - 1]) return v[V - 1] == 2;
  double mean[TSR_JAX_PATHS];
  for (int k = 0; k < TSR_JAX_PATHS; k++) mean[k] = 1e-9 * (double)v[TSR_JAX_PATHS + k];
  return tsr_jax_path(v, mean, 1e-9 * (double)v[V - 2]);
}

void tsr_jax_small_record(tsr_jax_timing_t *e, int path, double seconds) {
  const int64_t averaged = ++e->calls[path] - 1; /* the first call is the warm-up */
  if (averaged > 0) e->mean[path] += (seconds - e->mean[path]) / (double)averaged;
}

/* Bytes rounded up to a multiple of 256 (each part of a workspace starts so aligned). */
static size_t aligned(size_t bytes) {
  return (bytes + 255) / 256 * 256;
}

/* One call's memory on one node: a tessera buffer (a device's pool, or pinned host memory). */
typedef struct {
  tessera_data_t *h;
  char *at;
} buffer_t;

static int buffer(tessera_context_t *ctx, int node, size_t bytes, buffer_t *b) {
  int rc = tessera_data_create_on(ctx, node, bytes, 1, 1, &b->h);
  b->at = rc ? NULL : tessera_data_ptr(b->h);
  return rc;
}

/* The sizes of a call's parts: each device's A shard and B rows (potrs) in elements, the bytes
 * of an element, and the gathered slots of each process over processes. */
typedef struct {
  int64_t np, sa, sb, slot;
  size_t es;
  int procs, me, per; /* per: the slots each process gives (its devices, or its GPUs) */
} sizes_t;

/* Device r's place among the slots the processes give, in the order of their gather. */
static int64_t slot_of(const call_t *c, const sizes_t *z, int r) {
  int j = 0;
  for (int q = 0; q < r; q++) j += c->owners[q] == c->owners[r];
  return (int64_t)c->rank_of[c->owners[r]] * z->per + j;
}

/* Over processes: every process's slots into `stage` on `node` (slot k at stage + k * slot
 * elements), each slot device r's A shard then its B rows. On CPUs one host gather of this
 * process's slots packed after the stage; on GPUs one gather over every GPU endpoint, each GPU
 * giving one of this process's devices' slots from a buffer of its own (the node's: after the
 * stage), `extra` the others' buffers. */
static int gather(tessera_context_t *ctx, const call_t *c, const part_t *p, int count, int node,
                  const sizes_t *z, char *stage, buffer_t *extra) {
  const size_t slot = (size_t)z->slot * z->es, whole = (size_t)z->procs * z->per * slot;
  const int gpus = c->platform == TESSERA_JAX_CPU ? 0 : z->per;
  void *send[MAX_DEVICES], *recv[MAX_DEVICES];
  int rc = 0;
  for (int g = 0; g < gpus && !rc; g++) {
    recv[g] = stage;
    if (1 + g != node) rc = buffer(ctx, 1 + g, whole + slot, &extra[g]);
    if (!rc && 1 + g != node) recv[g] = extra[g].at;
    send[g] = (char *)recv[g] + whole;
  }
  for (int i = 0; i < count && !rc; i++) {
    const int to = gpus ? 1 + i : node; /* GPU endpoint i gives this process's device i */
    char *at = gpus ? send[i] : stage + whole + (size_t)i * slot;
    rc = tessera_memory_copy(ctx, to, at, p[i].node, p[i].a, (size_t)z->sa * z->es);
    if (!rc && z->sb)
      rc = tessera_memory_copy(ctx, to, at + z->sa * z->es, p[i].node, p[i].b,
                               (size_t)z->sb * z->es);
  }
  if (rc) return rc;
  const tessera_comm_type_t type = (tessera_comm_type_t)p[0].dtype;
  rc = gpus ? tessera_comm_allgather_group(c->comm, (const void *const *)send, recv,
                                           (size_t)z->slot, type, NULL)
            : tessera_comm_allgather(c->comm, stage + whole, stage, (size_t)(z->per * z->slot),
                                     type, NULL);
  if (rc) fprintf(stderr, "tessera.jax: %s\n", tessera_comm_last_error(c->comm));
  return rc;
}

/* syevd's parts of the workspace past A: the eigenvalues, cuSOLVER's workspace, and a block
 * of V's rows on its way to a device (byte offsets from the start of the workspace). */
typedef struct {
  size_t w, work, work_bytes, rows;
} eig_parts_t;

/* The solve on the gathered matrix at `a` (node's memory; potrs' Bᵀ at b, lu_solve's in
 * place in participant w's buffer; syevd's parts at e), the info and log det at `head`, then
 * the status read. syevd's gathered matrix is Aᵀ (the conjugate of the Hermitian A), whose
 * upper triangle holds A's lower: its eigenvectors come out conjugated (write_back). */
static int one_solve(tessera_context_t *ctx, const call_t *c, const part_t *p, int w, char *head,
                     char *a, char *b, const eig_parts_t *e, int32_t *info, double *logdet) {
  const part_t *q = &p[w];
  int *winfo = (int *)(head + 8);
  double *wlogdet = c->op == OP_POTRS && q->logdet ? (double *)head : NULL;
  int rc = c->op == OP_SYEVD
               ? tessera_queue_syevd(ctx, q->node, q->queue,
                                     q->vectors ? TESSERA_VECTORS : TESSERA_VALUES, TESSERA_UPPER,
                                     (tessera_dtype_t)q->dtype, q->n, a, q->n, head + e->w,
                                     head + e->work, e->work_bytes, winfo)
               : tsr_jax_queue_solve(ctx, c, q, a, c->op == OP_LU_SOLVE ? q->b : b, winfo, wlogdet);
  if (!rc) rc = tessera_queue_sync(ctx, q->node, q->queue);
  if (!rc) rc = tessera_memory_copy(ctx, TESSERA_HOST_NODE, info, q->node, winfo, sizeof *info);
  if (!rc && wlogdet)
    rc = tessera_memory_copy(ctx, TESSERA_HOST_NODE, logdet, q->node, wlogdet, sizeof *logdet);
  return rc;
}

/* The result into every device's buffers: potrs' rows of X, cholesky's factor, lu_solve's whole
 * Xᵀ from participant w's. */
static int write_back(tessera_context_t *ctx, const call_t *c, const part_t *p, int count, int w,
                      const sizes_t *z, const char *a, const char *b, char *head,
                      const eig_parts_t *e) {
  int rc = 0;
  const size_t rs = p[0].dtype == TESSERA_F32 || p[0].dtype == TESSERA_C64 ? 4 : 8;
  for (int i = 0; i < count && !rc && c->op == OP_SYEVD; i++) {
    /* the eigenvalues; the device's rows of V, row-major: of the conjugated eigenvectors U in a
     * (column-major), (U's rows r0 ..)ᴴ, which is that block read row-major */
    const part_t *q = &p[w];
    rc = tessera_memory_copy(ctx, p[i].node, p[i].w, q->node, head + e->w, (size_t)q->n * rs);
    if (rc || !q->vectors) continue;
    const int64_t r0 = p[i].rank * p[i].rows;
    rc = tessera_queue_transpose(ctx, q->node, q->queue, (tessera_dtype_t)q->dtype, p[i].rows, q->n,
                                 a + r0 * z->es, q->n, head + e->rows, q->n);
    if (!rc) rc = tessera_queue_sync(ctx, q->node, q->queue);
    if (!rc)
      rc = tessera_memory_copy(ctx, p[i].node, p[i].a, q->node, head + e->rows,
                               (size_t)z->sa * z->es);
  }
  for (int i = 0; i < count && !rc && c->op != OP_SYEVD; i++) {
    if (c->op == OP_POTRS && z->sb)
      rc = tessera_memory_copy(ctx, p[i].node, p[i].b, p[w].node, b + p[i].rank * z->sb * z->es,
                               (size_t)z->sb * z->es);
    else if (c->op == OP_CHOLESKY)
      rc = tessera_memory_copy(ctx, p[i].node, p[i].a, p[w].node, a + p[i].rank * z->sa * z->es,
                               (size_t)z->sa * z->es);
    else if (c->op == OP_LU_SOLVE && i != w)
      rc = tessera_memory_copy(ctx, p[i].node, p[i].b, p[w].node, p[w].b,
                               (size_t)(p[w].nrhs * z->np) * z->es);
  }
  return rc;
}

/* syevd: whether its one-device solve left the status unsure (an info, or a NaN among the
 * eigenvalues at w on q's node), agreed over the processes; then *declined. */
static int eig_unsure(tessera_context_t *ctx, const call_t *c, const part_t *q, const char *w,
                      int32_t *info, bool *declined) {
  const bool single = q->dtype == TESSERA_F32 || q->dtype == TESSERA_C64;
  const size_t rs = single ? 4 : 8;
  char *host = malloc((size_t)q->n * rs);
  int64_t unsure = *info != 0;
  int rc = host ? tessera_memory_copy(ctx, TESSERA_HOST_NODE, host, q->node, w, (size_t)q->n * rs)
                : TESSERA_ERR_NOMEM;
  for (int64_t i = 0; i < q->n && !rc && !unsure; i++)
    unsure = single ? isnan(((const float *)host)[i]) : isnan(((const double *)host)[i]);
  free(host);
  if (!rc && c->comm &&
      tessera_comm_allreduce(c->comm, &unsure, &unsure, 1, TESSERA_COMM_I64, TESSERA_MAX, NULL)) {
    fprintf(stderr, "tessera.jax: %s\n", tessera_comm_last_error(c->comm));
    return TESSERA_ERR_TIMEOUT;
  }
  *declined = !rc && unsure;
  if (*declined) *info = 0;
  return rc;
}

/* Counts a call that ran on one device. */
static void counted(tsr_jax_state_t *s) {
  pthread_mutex_lock(&s->lock);
  s->one_device_calls++;
  pthread_mutex_unlock(&s->lock);
}

/* One device's block of a batch (members first .. first + count - 1) in its workspace: the
 * infos, the log dets, the members' whole matrices and Bᵀ (each `ma` and `mb` bytes). */
typedef struct {
  int64_t first, count;
  buffer_t ws;
  size_t ol, oa, ob;
} block_t;

/* Enqueues block k's gather from every device (device r's rows of a member are the columns r of
 * its Aᵀ), its solve and its results' way back, on the queue of participant k. */
static int block_solve(tessera_context_t *ctx, const call_t *c, const part_t *p, int count, int k,
                       const block_t *bk, size_t sa, size_t sb, size_t ma, size_t mb) {
  const part_t *q = &p[k];
  const size_t n = (size_t)bk->count;
  char *A = bk->ws.at + bk->oa, *B = bk->ws.at + bk->ob;
  int rc = 0;
  for (int i = 0; i < count && !rc; i++) {
    const size_t r = (size_t)p[i].rank, f = (size_t)bk->first;
    rc = tessera_queue_copy(ctx, q->node, A + r * sa, ma, p[i].node,
                            (char *)p[i].a + f * p[i].a_step, p[i].a_step, sa, n, q->queue);
    if (!rc && sb)
      rc = tessera_queue_copy(ctx, q->node, B + r * sb, mb, p[i].node,
                              (char *)p[i].b + f * p[i].b_step, p[i].b_step, sb, n, q->queue);
  }
  part_t w = *q; /* the gathered block, as one device's whole matrices */
  w.batch = bk->count;
  w.a_step = ma;
  w.b_step = mb;
  if (!rc)
    rc = tsr_jax_queue_solve(ctx, c, &w, A, B, (int *)bk->ws.at, (double *)(bk->ws.at + bk->ol));
  for (int i = 0; i < count && !rc; i++) {
    const size_t r = (size_t)p[i].rank, f = (size_t)bk->first;
    if (c->op == OP_CHOLESKY)
      rc = tessera_queue_copy(ctx, p[i].node, (char *)p[i].a + f * p[i].a_step, p[i].a_step,
                              q->node, A + r * sa, ma, sa, n, q->queue);
    else if (sb)
      rc = tessera_queue_copy(ctx, p[i].node, (char *)p[i].b + f * p[i].b_step, p[i].b_step,
                              q->node, B + r * sb, mb, sb, n, q->queue);
  }
  return rc;
}

int tsr_jax_small_batch(tsr_jax_state_t *s, tessera_context_t *ctx, const call_t *c,
                        const part_t *p, int count, int32_t *status, double *logdet,
                        bool *declined) {
  const int64_t batch = p[0].batch, np = p[0].cols, nrhs = c->op == OP_POTRS ? p[0].nrhs : 0;
  const size_t es = tessera_dtype_size((tessera_dtype_t)p[0].dtype);
  /* each device's share of a member (bytes), a member's whole matrix and Bᵀ */
  const size_t sa = (size_t)(p[0].rows * p[0].cols) * es, sb = (size_t)(p[0].rows * nrhs) * es;
  const size_t ma = (size_t)(np * np) * es, mb = (size_t)(np * nrhs) * es;
  /* GPUs solve their blocks at once, each on its own queue; the host's devices are one */
  const int64_t parts = c->platform == TESSERA_JAX_CPU || batch < count ? 1 : count;
  block_t bk[MAX_DEVICES] = {{0}};
  int rc = 0;
  for (int k = 0; k < parts && !rc; k++) {
    bk[k].first = batch * k / parts;
    bk[k].count = batch * (k + 1) / parts - bk[k].first;
    const size_t m = (size_t)bk[k].count;
    bk[k].ol = aligned(m * sizeof(int));
    bk[k].oa = bk[k].ol + aligned(m * sizeof(double));
    bk[k].ob = bk[k].oa + aligned(m * ma);
    rc = buffer(ctx, p[k].node, bk[k].ob + m * mb, &bk[k].ws);
  }
  *declined = rc == TESSERA_ERR_NOMEM;
  for (int k = 0; k < parts && !rc && !*declined; k++)
    rc = block_solve(ctx, c, p, count, k, &bk[k], sa, sb, ma, mb);
  for (int k = 0; k < parts && !rc && !*declined; k++) {
    const size_t m = (size_t)bk[k].count;
    rc = tessera_queue_sync(ctx, p[k].node, p[k].queue);
    if (!rc)
      rc = tessera_memory_copy(ctx, TESSERA_HOST_NODE, status + bk[k].first, p[k].node, bk[k].ws.at,
                               m * sizeof *status);
    if (!rc && p[0].logdet)
      rc = tessera_memory_copy(ctx, TESSERA_HOST_NODE, logdet + bk[k].first, p[k].node,
                               bk[k].ws.at + bk[k].ol, m * sizeof *logdet);
  }
  if (rc && !*declined)
    for (int k = 0; k < parts; k++) /* what a failure left enqueued, before the memory goes */
      if (bk[k].ws.h) (void)tessera_queue_sync(ctx, p[k].node, p[k].queue);
  if (rc < 0 && !*declined) fprintf(stderr, "tessera.jax: %s\n", tessera_last_error(ctx));
  for (int k = 0; k < parts; k++)
    if (bk[k].ws.h) (void)tessera_data_release(ctx, bk[k].ws.h);
  if (*declined) return 0;
  if (!rc) counted(s);
  return rc;
}

int tsr_jax_small_solve(tsr_jax_state_t *s, tessera_context_t *ctx, const call_t *c,
                        const part_t *p, int count, double *logdet, bool *declined) {
  *declined = false;
  sizes_t z = {.np = p[0].cols, .sa = p[0].rows * p[0].cols, .es = tessera_dtype_size(p[0].dtype)};
  z.sb = c->op == OP_POTRS ? p[0].rows * p[0].nrhs : 0;
  z.slot = z.sa + z.sb;
  z.procs = c->comm ? tessera_comm_size(c->comm) : 1;
  z.me = c->comm ? tessera_comm_rank(c->comm) : 0;
  z.per = !c->comm ? 0 : c->platform == TESSERA_JAX_CPU ? c->mine : tessera_comm_devices(c->comm);
  const int w = 0; /* this process's first device in mesh order (mesh device 0 where it is) */
  const int node = p[w].node;
  /* the info and log det, A, potrs' Bᵀ, then over processes the gather's stage and send */
  const int64_t bnrhs = c->op == OP_POTRS ? p[0].nrhs : 0;
  const size_t oa = 256, ob = oa + aligned((size_t)(z.np * z.np) * z.es),
               oe = ob + aligned((size_t)(z.np * bnrhs) * z.es);
  /* syevd: its eigenvalues, cuSOLVER's workspace, a device's rows of V */
  eig_parts_t e = {.w = oe, .work = oe, .rows = oe};
  if (c->op == OP_SYEVD) {
    e.work_bytes = tessera_queue_syevd_work_bytes((tessera_dtype_t)p[0].dtype, z.np);
    e.work = e.w + aligned((size_t)z.np * 8);
    e.rows = e.work + aligned(e.work_bytes);
  }
  const size_t os = c->op == OP_SYEVD ? e.rows + aligned((size_t)z.sa * z.es) : oe,
               staged = c->comm ? (size_t)((z.procs + 1) * z.per * z.slot) * z.es : 0;
  buffer_t ws = {0}, extra[MAX_DEVICES] = {{0}};
  int rc = buffer(ctx, node, os + staged, &ws);
  if (!rc && c->comm) rc = gather(ctx, c, p, count, node, &z, ws.at + os, extra);
  if (c->comm) { /* every process has its whole matrix, or every one declines */
    int all = rc;
    if (tessera_agree(c->comm, &all)) {
      fprintf(stderr, "tessera.jax: %s\n", tessera_comm_last_error(c->comm));
      rc = all = TESSERA_ERR_TIMEOUT;
    }
    if (all == TESSERA_ERR_NOMEM)
      *declined = true;
    else if (!rc)
      rc = all;
  } else if (rc == TESSERA_ERR_NOMEM) {
    *declined = true;
  }
  for (int r = 0; r < c->ndev && !rc && !*declined; r++) { /* the slots in mesh order */
    if (!c->comm) {
      for (int i = 0; i < count && !rc; i++)
        if (p[i].rank == r) {
          rc = tessera_memory_copy(ctx, node, ws.at + oa + r * z.sa * z.es, p[i].node, p[i].a,
                                   (size_t)z.sa * z.es);
          if (!rc && z.sb)
            rc = tessera_memory_copy(ctx, node, ws.at + ob + r * z.sb * z.es, p[i].node, p[i].b,
                                     (size_t)z.sb * z.es);
        }
      continue;
    }
    const char *from = ws.at + os + slot_of(c, &z, r) * z.slot * z.es;
    rc = tessera_memory_copy(ctx, node, ws.at + oa + r * z.sa * z.es, node, from,
                             (size_t)z.sa * z.es);
    if (!rc && z.sb)
      rc = tessera_memory_copy(ctx, node, ws.at + ob + r * z.sb * z.es, node, from + z.sa * z.es,
                               (size_t)z.sb * z.es);
  }
  int32_t info = 0;
  if (!rc && !*declined)
    rc = one_solve(ctx, c, p, w, ws.at, ws.at + oa, ws.at + ob, &e, &info, logdet);
  /* syevd reads no NaN in A before its solve: a NaN or no convergence there leaves the status to
   * the distributed routine, which finds the column LAPACK names */
  if (!rc && !*declined && c->op == OP_SYEVD)
    rc = eig_unsure(ctx, c, &p[w], ws.at + e.w, &info, declined);
  if (!rc && !*declined && info == 0)
    rc = write_back(ctx, c, p, count, w, &z, ws.at + oa, ws.at + ob, ws.at, &e);
  if (rc < 0 && !*declined) fprintf(stderr, "tessera.jax: %s\n", tessera_last_error(ctx));
  for (int g = 0; g < MAX_DEVICES; g++)
    if (extra[g].h) (void)tessera_data_release(ctx, extra[g].h);
  if (ws.h) (void)tessera_data_release(ctx, ws.h);
  if (*declined) return 0;
  counted(s);
  return tsr_jax_agree(c, rc ? rc : info);
}
