/* The Hermitian eigensolver over processes (front.h: tsr_eig_processes, and the tile-level
 * form's tsr_eig_tile_processes).
 *
 * Process 0 (the root) holds A and runs the stages whose data only it has: the band reduction,
 * the bulge chasing and the tridiagonal divide and conquer read and write host arrays (the band,
 * T, the merges' plans decided from values) that no tile flow describes, so it runs them alone
 * (tsr_root_run: the others wait with it), or solves A whole in one stage on one of its devices
 * where its policy finds that faster (loops/policy.c). With vectors the back-transformations of the
 * two stages, whose columns
 * are independent and which hold most of the flops (4 n³ of them), are then dealt over the
 * processes: the root broadcasts both stages' reflectors (tsr_eig_solve's host arrays), sends
 * each process a block of E's columns, every process applies Q1 Q2 to its block on its own
 * workers and devices (tsr_eig_back), and the blocks come back to the root's array. Every
 * process that gave w receives the eigenvalues; every one returns the same status. */
#include <stdlib.h>
#include <string.h>

#include "distributed/dist.h"
#include "runtime/base.h"
#include "linalg/front/front.h"

enum { ROOT = 0 };

/* A send (or receive) of count elements of buf to (from) peer, in chunks MPI can count. */
static int xfer(tessera_context_t *ctx, tessera_comm_t *c, bool send, void *buf, size_t count,
                tessera_dtype_t dt, int peer) {
  const size_t es = tessera_dtype_size(dt);
  for (size_t at = 0; at < count; at += TSR_MESSAGE_ELEMENTS) {
    const size_t k = count - at < TSR_MESSAGE_ELEMENTS ? count - at : TSR_MESSAGE_ELEMENTS;
    char *b = (char *)buf + at * es;
    const int rc = send ? tessera_comm_send(c, b, k, (tessera_comm_type_t)dt, peer, NULL)
                        : tessera_comm_recv(c, b, k, (tessera_comm_type_t)dt, peer, NULL);
    if (rc) return tsr_error(ctx, rc, "%s", tessera_comm_last_error(c));
  }
  return 0;
}

/* Process p's columns of E: [first, first + count). */
static void columns_of(int64_t n, int p, int size, int64_t *first, int64_t *count) {
  *first = n * p / size;
  *count = n * (p + 1) / size - *first;
}

/* Columns c0 .. c0 + m - 1 of a (lda) to or from the packed n x m block `blk`. */
static void pack(size_t es, int64_t n, int64_t m, char *a, int64_t lda, int64_t c0, char *blk,
                 bool into_a) {
  for (int64_t j = 0; j < m; j++) {
    char *col = a + (size_t)((c0 + j) * lda) * es, *p = blk + (size_t)(j * n) * es;
    memcpy(into_a ? col : p, into_a ? p : col, (size_t)n * es);
  }
}

/* The root's reflectors on every process (the others allocate theirs). */
static int share_reflectors(tessera_context_t *ctx, tessera_comm_t *c, tessera_dtype_t dt,
                            int64_t n, tsr_eig_reflectors_t *r) {
  const bool root = tessera_comm_rank(c) == ROOT;
  const size_t es = tessera_dtype_size(dt);
  int64_t head[4] = {r->nb, r->nv, r->ntau, r->steps};
  int rc = tsr_root_broadcast(ctx, c, head, sizeof head);
  if (rc) return rc;
  const size_t sizes[4] = {(size_t)head[1] + 1, (size_t)head[2] + 1,
                           (size_t)((n - head[0]) * head[3] * head[0]),
                           (size_t)(head[3] * head[0] * head[0])};
  void **arrays[4] = {&r->v, &r->tau, &r->V, &r->T};
  int lack = 0;
  if (!root) {
    r->nb = (int)head[0], r->nv = head[1], r->ntau = head[2], r->steps = head[3];
    for (int i = 0; i < 4; i++)
      if (sizes[i] && !(*arrays[i] = malloc(sizes[i] * es))) lack = TESSERA_ERR_NOMEM;
  }
  if (lack) /* this process's message; the others take the agreement's */
    tsr_error(ctx, lack, "syevd: out of memory for the reflectors of n = %lld", (long long)n);
  rc = tsr_dist_agree_on(ctx, c, lack, "a process is out of memory for the reflectors");
  for (int i = 0; i < 4 && !rc; i++) rc = tsr_root_broadcast(ctx, c, *arrays[i], sizes[i] * es);
  return rc;
}

/* One process's block of columns for tsr_eig_back (tsr_all_run). */
typedef struct {
  tessera_context_t *ctx;
  tessera_dtype_t dt;
  int64_t n, m;
  void *e;
  int64_t lde;
  const tsr_eig_reflectors_t *r;
} back_t;

static int back_call(void *p) {
  const back_t *b = p;
  return tsr_eig_back(b->ctx, b->dt, b->n, b->m, b->e, b->lde, b->r);
}

/* E = Q1 Q2 E on the root's array a (lda) by blocks of columns dealt over the processes. */
static int deal_back(tessera_context_t *ctx, tessera_comm_t *c, const char *f, tessera_dtype_t dt,
                     int64_t n, void *a, int64_t lda, tsr_eig_reflectors_t *r) {
  const int me = tessera_comm_rank(c), size = tessera_comm_size(c);
  const size_t es = tessera_dtype_size(dt);
  int64_t c0, m, most = 0;
  for (int p = 0; p < size; p++) {
    columns_of(n, p, size, &c0, &m);
    if (m > most) most = m;
  }
  int rc = share_reflectors(ctx, c, dt, n, r);
  if (rc) return rc;
  /* a block of `most` columns: the root's for packing, each other process's E */
  char *blk = size > 1 ? malloc((size_t)(n * most) * es) : NULL;
  rc = tsr_dist_agree_on(ctx, c, size > 1 && !blk ? TESSERA_ERR_NOMEM : 0,
                         "a process is out of memory for its columns of E");
  for (int p = 1; p < size && !rc; p++) { /* the blocks out */
    columns_of(n, p, size, &c0, &m);
    if (me == ROOT) pack(es, n, m, a, lda, c0, blk, false);
    if (me == ROOT || me == p) rc = xfer(ctx, c, me == ROOT, blk, (size_t)(n * m), dt, me ? 0 : p);
  }
  rc = tsr_dist_agree(c, rc);
  if (!rc) {
    columns_of(n, me, size, &c0, &m);
    back_t b = {
        ctx, dt, n, m, me == ROOT ? (char *)a + (size_t)(c0 * lda) * es : blk, me == ROOT ? lda : n,
        r};
    rc = tsr_all_run(ctx, c, f, back_call, &b);
  }
  for (int p = 1; p < size && !rc; p++) { /* and back */
    columns_of(n, p, size, &c0, &m);
    if (me == ROOT || me == p) rc = xfer(ctx, c, me == p, blk, (size_t)(n * m), dt, me ? 0 : p);
    if (!rc && me == ROOT) pack(es, n, m, a, lda, c0, blk, true);
  }
  free(blk);
  return tsr_dist_agree(c, rc);
}

/* One call's arguments, for the root's part (tsr_root_run). */
typedef struct {
  tsr_eig_call_t x;
  int one;               /* the root solves in one stage on one of its devices */
  tessera_scope_t where; /* there */
  size_t work;           /* with that much GPU workspace */
} call_t;

/* The root's part on one process, or its one-stage solve. */
static int solve_call(void *p) {
  const call_t *c = p;
  const tsr_eig_call_t *x = &c->x;
  if (c->one)
    return tsr_eig_one(x->ctx, x->f, x->job, x->uplo, x->dt, x->n, x->a, x->lda, x->w, c->where,
                       c->work);
  return tsr_eig_solve(x->ctx, x->f, x->job, x->uplo, x->dt, x->n, x->a, x->lda, x->w, NULL);
}

int tsr_eig_processes(tessera_context_t *ctx, tessera_comm_t *comm, const char *f,
                      tessera_job_t job, tessera_uplo_t uplo, tessera_dtype_t dt, int64_t n,
                      void *a, int64_t lda, void *w) {
  tsr_eig_reflectors_t r = {0};
  const double t0 = tsr_now();
  const bool many = tessera_comm_size(comm) > 1;
  call_t c = {{ctx, f, job, uplo, dt, n, a, lda, w}, 0, tessera_get_scope(ctx), 0};
  /* over processes the root's policy picks the method: in one stage on one of its devices, or
   * the two stages with the band reduction and the back-transformations dealt */
  if (many && tessera_comm_rank(comm) == ROOT)
    c.one = tsr_eig_one_stage(ctx, job, dt, n, &c.where, &c.work);
  int rc = many ? tsr_root_broadcast(ctx, comm, &c.one, sizeof c.one) : 0;
  if (!rc && (!many || c.one)) {
    rc = tsr_root_run(ctx, comm, f, solve_call, &c);
  } else if (!rc) {
    rc = tsr_eig_two_stages(&c.x, comm, &r);
    if (rc == 0 && job == TESSERA_VECTORS) rc = deal_back(ctx, comm, f, dt, n, a, lda, &r);
    /* the two stages' seconds with their dealt parts, for the root's policy */
    if (rc == 0 && tessera_comm_rank(comm) == ROOT)
      tsr_eig_measured(ctx, false, tessera_get_scope(ctx), job, dt, n, tsr_now() - t0);
  }
  tsr_eig_reflectors_free(&r);
  if (rc < 0) return rc;
  const size_t rs = tsr_dtype_single(dt) ? sizeof(float) : sizeof(double);
  const int s = tsr_root_broadcast(ctx, comm, w, (size_t)n * rs);
  return s ? s : rc;
}

int tsr_eig_lapack_processes(tessera_context_t *ctx, const char *f, tessera_job_t job,
                             tessera_uplo_t uplo, tessera_dtype_t dt, int64_t n, void *a,
                             int64_t lda, void *w, int rc) {
  int64_t tile = 1;
  const int64_t values[4] = {job, uplo, dt, n};
  const int argno[4] = {2, 3, 4, 5};
  rc = tsr_lapack_agree(ctx, f, 4, values, argno, rc, &tile);
  if (rc || n == 0) return rc;
  return tsr_eig_processes(ctx, tessera_context_comm(ctx), f, job, uplo, dt, n, a, lda, w);
}

/* The one stage on the root's accelerator of scope `where` (cuSOLVER's workspace work_bytes)
 * for a distributed A: its tiles collected into one array in that device's memory (received
 * there from their owners, no host array), the solve there, with VECTORS the eigenvectors dealt
 * back into A's tiles from it; w broadcast. *unsure (the same everywhere) as
 * tsr_eig_one_tiles's, A then as it was. */
static int one_on_root(tessera_context_t *ctx, const char *f, tessera_job_t job,
                       tessera_uplo_t uplo, tessera_matrix_t *A, void *w, tessera_scope_t where,
                       size_t work_bytes, bool *unsure) {
  const double t0 = tsr_now();
  tessera_comm_t *c = A->comm;
  const bool root = tessera_comm_rank(c) == ROOT;
  const tessera_dtype_t dt = A->dtype;
  const int64_t n = A->n;
  int node = TESSERA_HOST_NODE, rc = 0;
  tessera_data_t *h = NULL; /* the root's array */
  if (root && tessera_scope_nodes(ctx, where, &node, 1) < 1)
    rc = tsr_error(ctx, TESSERA_ERR_STATE, "%s: the one-stage solver's device has no memory", f);
  if (root && !rc)
    rc = tessera_data_create_on(ctx, node, (size_t)n, (size_t)n, tessera_dtype_size(dt), &h);
  rc = tsr_dist_agree_on(ctx, c, rc, "process 0 cannot hold A in its device's memory");
  void *at = h ? tessera_data_ptr(h) : NULL;
  if (!rc) rc = tsr_lapack_collect_on(A, at, node);
  int64_t st[2] = {0, 0}; /* the root's status, and whether its solve is unsure */
  if (!rc && root) {
    const tsr_syevd_args_t args = tsr_eig_one_args(job, uplo, dt, n, work_bytes);
    int info = 0;
    st[0] = tsr_eig_one_task(ctx, &args, h, w, &info, where);
    st[1] = !st[0] && tsr_eig_unsure(dt, n, w, info);
  }
  if (!rc) rc = tsr_root_broadcast(ctx, c, st, sizeof st);
  if (!rc) rc = tsr_dist_agree_on(ctx, c, (int)st[0], "process 0's one-stage solve failed");
  *unsure = !rc && st[1];
  if (!rc && !*unsure && job == TESSERA_VECTORS) rc = tsr_lapack_deal_on(at, node, A);
  if (!rc && !*unsure)
    rc = tsr_root_broadcast(ctx, c, w, (size_t)n * (tsr_dtype_single(dt) ? 4 : 8));
  if (h) {
    const int r = tessera_data_release(ctx, h);
    if (!rc) rc = r;
  }
  if (!rc && !*unsure && root) tsr_eig_measured(ctx, true, where, job, dt, n, tsr_now() - t0);
  return rc;
}

/* The tile-level form of a distributed A (its checks gave rc): in one stage on the root's
 * accelerator where its policy takes that (one_on_root), else A collected into an array of
 * process 0, solved there as the LAPACK-style call over processes does, the eigenvectors dealt
 * back into A's tiles. */
int tsr_eig_tile_processes(tessera_context_t *ctx, const char *f, tessera_job_t job,
                           tessera_uplo_t uplo, tessera_matrix_t *A, void *w, int rc) {
  const int64_t n = A->n, values[3] = {job, uplo, n};
  const int argno[3] = {1, 2, 3};
  const char *names[3] = {"argument 1 (job)", "argument 2 (uplo)", "the order of A"};
  rc = tsr_dist_same_on(ctx, A->comm, f, 3, values, argno, names, rc);
  if (rc || n == 0) return rc;
  const bool root = tessera_comm_rank(A->comm) == 0;
  tessera_scope_t where = tessera_get_scope(ctx);
  size_t work = 0;
  int one = root && tsr_eig_one_stage(ctx, job, A->dtype, n, &where, &work) && work > 0;
  rc = tsr_root_broadcast(ctx, A->comm, &one, sizeof one);
  if (!rc && one) {
    bool unsure = false;
    rc = one_on_root(ctx, f, job, uplo, A, w, where, work, &unsure);
    if (rc || !unsure) return rc;
  }
  if (rc) return rc;
  void *h = root ? malloc((size_t)(n * n) * tessera_dtype_size(A->dtype)) : NULL;
  rc = tsr_lapack_collect(A, h);
  if (!rc) rc = tsr_eig_processes(ctx, A->comm, f, job, uplo, A->dtype, n, h, n, w);
  if (rc >= 0 && (rc > 0 || job == TESSERA_VECTORS)) { /* the vectors, or NaN */
    const int s = tsr_lapack_deal(h, A);
    if (!rc) rc = s;
  }
  free(h);
  return rc;
}
