/* The XLA FFI handlers: each device's call decodes its shard, joins the rendezvous of its
 * execution, and the last to arrive runs the multi-device routine on every shard in place. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "cholesky.h"
#include "eig.h"
#include "lu.h"
#include "qr.h"
#include "small.h"
#include "svd.h"
#include "xla.h"

enum { RHS = TESSERA_JAX_RHS_ROWS | TESSERA_JAX_RHS_WHOLE_T | TESSERA_JAX_SQUARE };

/* The handler table, indexed as python/tessera/_native.py's OPS (defined at the end, after
 * the handlers): each operation's name, flags (its operands, attributes and results) and
 * handlers per platform. */
typedef struct {
  const char *name;
  int flags;
  XLA_FFI_Handler *handler[TESSERA_JAX_PLATFORMS];
} op_spec_t;
static const op_spec_t OPS[OP_COUNT];

static int dtype_of(XLA_FFI_DataType t) {
  switch (t) {
  case XLA_FFI_DataType_F32:
    return TESSERA_F32;
  case XLA_FFI_DataType_F64:
    return TESSERA_F64;
  case XLA_FFI_DataType_C64:
    return TESSERA_C64;
  case XLA_FFI_DataType_C128:
    return TESSERA_C128;
  default:
    return -1;
  }
}

/* Checks that this process's participants describe the same call (the leader prints why not). */
static int same_call(const call_t *c, const part_t *p, int count) {
  for (int i = 1; i < count; i++)
    if (p[i].rows != p[0].rows || p[i].cols != p[0].cols || p[i].nrhs != p[0].nrhs ||
        p[i].m != p[0].m || p[i].n != p[0].n || p[i].tile != p[0].tile ||
        p[i].lower != p[0].lower || p[i].dtype != p[0].dtype || p[i].logdet != p[0].logdet ||
        p[i].vectors != p[0].vectors || p[i].mixed != p[0].mixed || p[i].hrows != p[0].hrows ||
        p[i].trans != p[0].trans || p[i].batch != p[0].batch)
      return fprintf(stderr, "tessera.jax: the devices' calls disagree (device %d)\n", p[i].rank),
             TESSERA_ERR_STATE;
  if (c->op == OP_QR || c->op == OP_LEAST_SQUARES) return tsr_jax_qr_shape(c, p);
  if (c->op == OP_POLAR || c->op == OP_GESVD) return tsr_jax_svd_shape(c, p);
  const int64_t grows = c->ndev / c->gcols;
  if (p[0].n > p[0].cols * c->gcols || p[0].rows * grows != p[0].cols * c->gcols ||
      (double)p[0].rows * grows < (double)p[0].n) {
    fprintf(stderr,
            "tessera.jax: %d x %d shards of %lld x %lld do not hold a matrix of order %lld\n",
            (int)grows, c->gcols, (long long)p[0].rows, (long long)p[0].cols, (long long)p[0].n);
    return TESSERA_ERR_STATE;
  }
  return 0;
}

/* Every process describes the same operation, with shards of the same shape (the matrices'
 * views compare the rest; syevd has none), folded with each process's own check of its
 * devices' calls (`rc`, 0 or negative) into one collective: 0, the lowest such status, or
 * TESSERA_ERR_STATE, the same on every process. */
static int same_op(const call_t *c, const part_t *p, int rc) {
  if (!c->comm) return rc;
  enum { K = 13 };
  const int64_t v[K] = {c->op,    p->lower, p->logdet, p->nrhs,  p->vectors, p->n,    p->m,
                        p->dtype, p->rows,  p->cols,   p->hrows, p->trans,   p->batch};
  int differs = -1;
  if (tessera_agree_values(c->comm, K, v, &differs, &rc)) {
    fprintf(stderr, "tessera.jax: %s\n", tessera_comm_last_error(c->comm));
    return TESSERA_ERR_TIMEOUT;
  }
  if (rc < 0) return rc;
  static const char *const what[K] = {"the operation",
                                      "the triangle",
                                      "the log det",
                                      "the right-hand sides",
                                      "the eigenvectors",
                                      "the order",
                                      "the rows (m)",
                                      "the dtype",
                                      "the shards' rows",
                                      "the shards' columns",
                                      "the n x n shards' rows",
                                      "the transpose",
                                      "the batch"};
  if (differs >= 0) {
    fprintf(stderr, "tessera.jax: the processes' calls disagree (%s)\n", what[differs]);
    return TESSERA_ERR_STATE;
  }
  return 0;
}

/* The operation's multi-device routine on the participants' shards. */
static int routine(tessera_context_t *ctx, const call_t *c, const part_t *p, int count,
                   double *logdet) {
  if (c->op == OP_QR || c->op == OP_LEAST_SQUARES) return tsr_jax_qr(ctx, c, p, count);
  if (c->op == OP_SYEVD) return tsr_jax_eig(ctx, c, p, count);
  if (c->op == OP_POLAR || c->op == OP_GESVD) return tsr_jax_svd(ctx, c, p, count);
  if (c->op == OP_LU_SOLVE || c->op == OP_LU_FACTOR || c->op == OP_LU_FACTORED)
    return tsr_jax_lu(ctx, c, p, count);
  return tsr_jax_cholesky(ctx, c, p, count, logdet);
}

/* A whole batch's statuses and log dets, for a batch run at once; or its shape's timings, where
 * the batch runs member by member, for the time that takes. */
typedef struct {
  int32_t *status;
  double *logdet;
  bool ran;
  tsr_jax_timing_t *timing;
} all_t;

/* Runs the routine on the participants' shards (leader only): `*logdet` for potrs. A call
 * small for its mesh runs the routine or on one device per process, as the seconds each way
 * measured on its shape say (small.c). With `all`, p is a whole batch of Cholesky solves in one
 * process: where the one-device path is taken, the batch runs there at once
 * (tsr_jax_small_batch; all->ran, its statuses and log dets in all's arrays), else nothing runs
 * (the caller runs the members one by one). */
static int solve(tsr_jax_state_t *s, tessera_context_t *ctx, const call_t *c, const part_t *p,
                 int count, double *logdet, all_t *all) {
  int rc = same_op(c, p, same_call(c, p, count));
  if (rc) return rc;
  uint64_t gpus = 0;
  for (int i = 0; i < count; i++)
    if (p[i].node != TESSERA_HOST_NODE) gpus |= 1ull << (p[i].node - 1); /* node 1 + g: GPU g */
  rc = tsr_jax_hold(s, ctx, c->platform, gpus);
  if (rc < 0) {
    fprintf(stderr, "tessera.jax: %s\n", tessera_last_error(ctx));
    return tsr_jax_agree(c, rc);
  }
  tsr_jax_timing_t *timing = NULL;
  int path = tsr_jax_small_eligible(c, p) ? tsr_jax_small_choose(s, ctx, c, p, &timing) : 0;
  const double t0 = tsr_jax_seconds();
  bool declined = false;
  if (all) { /* the batch's shape measured as a whole: at once, or member by member */
    if (path == 1)
      rc = tsr_jax_small_batch(s, ctx, c, p, count, all->status, all->logdet, &declined);
    all->ran = path == 1 && !declined && rc >= 0;
    if (all->ran && timing) tsr_jax_small_record(timing, 1, tsr_jax_seconds() - t0);
    all->timing = path == 0 ? timing : NULL;
    tsr_jax_unhold(s, ctx, c->platform);
    return path < 0 ? path : rc;
  }
  if (path == 1) rc = tsr_jax_small_solve(s, ctx, c, p, count, logdet, &declined);
  if (path == 1 && declined) path = 0;
  if (path < 0) rc = path;
  if (path == 0) rc = routine(ctx, c, p, count, logdet);
  if (timing && path >= 0) tsr_jax_small_record(timing, path, tsr_jax_seconds() - t0);
  tsr_jax_unhold(s, ctx, c->platform);
  return rc;
}

/* What the leader hands its followers: the log det of a call of one member, and how many
 * members' statuses and log dets (the first ones) it wrote itself. */
typedef struct {
  double logdet;
  int64_t written;
} led_t;

/* The leader's call: the routine on the participants' shards (solve), member by member for a
 * batch, whose statuses and log dets the leader writes into every participant's buffers as each
 * member ends (led->written of them). A member's info does not stop the batch; a failure does,
 * its status returned for the members left (written by each participant). */
static int lead(tsr_jax_state_t *s, tessera_context_t *ctx, const call_t *c, const part_t *p,
                int count, led_t *led) {
  const int64_t batch = p[0].batch;
  if (batch == 1) return solve(s, ctx, c, p, count, &led->logdet, NULL);
  tsr_jax_timing_t *timing = NULL;
  if (!c->comm && p[0].mixed < 0 && (c->op == OP_POTRS || c->op == OP_CHOLESKY)) {
    all_t all = {.status = malloc((size_t)batch * sizeof *all.status),
                 .logdet = calloc((size_t)batch, sizeof(double))};
    int rc = all.status && all.logdet ? solve(s, ctx, c, p, count, NULL, &all) : TESSERA_ERR_NOMEM;
    for (int k = 0; k < count && !rc && all.ran; k++)
      rc = tsr_jax_write_members(ctx, &p[k], 0, batch, all.status, all.logdet);
    free(all.status), free(all.logdet);
    if (rc || all.ran) {
      led->written = rc ? 0 : batch;
      return rc;
    }
    timing = all.timing;
  }
  const double t0 = tsr_jax_seconds();
  part_t m[MAX_DEVICES];
  for (int64_t i = 0; i < p[0].batch; i++) {
    for (int k = 0; k < count; k++) m[k] = tsr_jax_member(&p[k], i);
    double logdet = 0;
    const int32_t status = solve(s, ctx, c, m, count, &logdet, NULL);
    int rc = status < 0 ? status : 0;
    for (int k = 0; k < count && !rc; k++)
      rc = tsr_jax_write_members(ctx, &p[k], i, 1, &status, &logdet);
    if (rc) return rc;
    led->written = i + 1;
  }
  if (timing) tsr_jax_small_record(timing, 0, tsr_jax_seconds() - t0);
  return 0;
}

/* Whether a call runs on XLA's stream (queued): a mesh of one device of this process, a
 * matrix of one tile, an operation with a whole-matrix solve on a queue (potrs, cholesky,
 * lu_solve). */
static int is_queued(const call_t *c, const part_t *p) {
  return c->ndev == 1 && !c->comm && p->tile >= p->n && tsr_jax_queue_solves(c, p);
}

/* A queued call: on the handler's thread, enqueued on XLA's stream (tessera_queue_posv,
 * tessera_queue_gesv), the status and log det written by the device in the stream's order; no
 * rendezvous, task or wait on the host. The shard is the whole matrix, read column-major as
 * Aᵀ (cholesky_ops, lu_solve): potrs solves Xᵀ Aᵀ = Bᵀ from the right, lu_solve (Aᵀ)ᵀ x = b. */
static int queued(tessera_context_t *ctx, const call_t *c, const part_t *p) {
  const int rc = same_call(c, p, 1);
  return rc ? rc : tsr_jax_queue_solve(ctx, c, p, p->a, p->b, p->st, p->ld);
}

/* The batch of a call's buffers (NULL ones skipped), each `own[i]` dims a member's and any
 * before them the batch's, the same on every buffer: the product of those, else -1. */
static int64_t batch_of(const XLA_FFI_Buffer *const *x, const int *own, int count) {
  const int lead = (int)x[0]->rank - own[0];
  int64_t batch = 1;
  for (int d = 0; d < lead; d++) batch *= x[0]->dims[d];
  for (int i = 0; i < count; i++) {
    if (!x[i]) continue;
    if (x[i]->rank != lead + own[i] || lead < 0) return -1;
    for (int d = 0; d < lead; d++)
      if (x[i]->dims[d] != x[0]->dims[d]) return -1;
  }
  return batch;
}

/* Elements of a buffer. */
static size_t elements(const XLA_FFI_Buffer *x) {
  size_t k = 1;
  for (int64_t d = 0; d < x->rank; d++) k *= (size_t)x->dims[d];
  return k;
}

/* A result the operand `arg` is aliased to (A's, X's) holds the operand's value when the call
 * starts. XLA may give the result a buffer of its own (inside a loop's body, say): the operand
 * is then copied into it, on the call's queue, before anything reads it. */
static int aliased_in(tessera_context_t *ctx, int node, void *queue, const XLA_FFI_Buffer *arg,
                      const XLA_FFI_Buffer *ret, size_t es) {
  if (!arg || arg->data == ret->data) return 0;
  return tessera_queue_copy(ctx, node, ret->data, 0, node, arg->data, 0, elements(ret) * es, 1,
                            queue);
}

/* One device's call: decode, join, lead or follow, write this device's status and log det. */
static XLA_FFI_Error *call(XLA_FFI_CallFrame *cf, op_t op, int platform, tsr_jax_state_t *s);

static XLA_FFI_Error *handle(XLA_FFI_CallFrame *cf, op_t op, int platform) {
  if (tsr_xla_metadata(cf)) return NULL;
  if (cf->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
  int64_t state = 0;
  if (tsr_xla_attr_int(cf, "state", &state) || !state)
    return tsr_xla_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, "tessera: no binding state");
  tsr_jax_state_t *s = (tsr_jax_state_t *)(intptr_t)state;
  if (tsr_jax_enter(s))
    return tsr_xla_error(cf, XLA_FFI_Error_Code_CANCELLED,
                         "tessera: the JAX binding was closed (interpreter exit)");
  XLA_FFI_Error *e = call(cf, op, platform, s);
  tsr_jax_leave(s);
  return e;
}

/* The mesh of a call from its attributes: its devices, their processes, this process's share,
 * and the communicator when they span several. A message in `why` when they do not hold. */
static int mesh_of(tsr_jax_state_t *s, XLA_FFI_CallFrame *cf, call_t *c, char *why, size_t len) {
  int64_t ndev = 0, gcols = 0;
  if (tsr_xla_attr_int(cf, "ndev", &ndev) || tsr_xla_attr_int(cf, "gcols", &gcols) || ndev < 1 ||
      ndev > MAX_DEVICES || gcols < 1 || ndev % gcols ||
      tsr_xla_attr_ints(cf, "owners", c->owners, MAX_DEVICES) != ndev)
    return snprintf(why, len, "missing or malformed mesh attributes"), -1;
  c->ndev = (int)ndev;
  c->gcols = (int)gcols;
  c->process = tsr_jax_process(s, c->platform, &c->comm, &c->rank_of);
  int spans = 0;
  c->mine = 0;
  for (int r = 0; r < c->ndev; r++) {
    c->mine += c->owners[r] == c->process;
    spans |= c->owners[r] != c->process;
  }
  if (!spans)
    c->comm = NULL;
  else if (!c->comm)
    return snprintf(why, len,
                    "the mesh spans processes but the binding has no communicator over them"),
           -1;
  if (!c->mine) return snprintf(why, len, "the mesh holds none of this process's devices"), -1;
  return 0;
}

static XLA_FFI_Error *call(XLA_FFI_CallFrame *cf, op_t op, int platform, tsr_jax_state_t *s) {
  const char *name = OPS[op].name;
  const int flags = OPS[op].flags, has_b = (flags & RHS) != 0,
            has_ld = (flags & TESSERA_JAX_LOGDET) != 0, has_w = (flags & TESSERA_JAX_EIGEN) != 0,
            piv_in = (flags & TESSERA_JAX_PIVOTS_IN) != 0,
            piv_out = (flags & TESSERA_JAX_PIVOTS_OUT) != 0;
  int64_t site = 0;
  part_t me = {.dtype = -1, .mixed = -1};
  call_t c = {.op = op, .platform = platform};
  char why[160] = "";
  if (tsr_xla_attr_int(cf, "site", &site) || tsr_xla_attr_int(cf, "n", &me.n) ||
      tsr_xla_attr_int(cf, "tile", &me.tile) ||
      ((flags & TESSERA_JAX_LOWER) && tsr_xla_attr_int(cf, "lower", &me.lower)) ||
      (has_ld && tsr_xla_attr_int(cf, "logdet", &me.logdet)) ||
      ((flags & TESSERA_JAX_TRANSPOSED) && tsr_xla_attr_int(cf, "m", &me.m)) ||
      ((has_w || (flags & TESSERA_JAX_SQUARE)) && tsr_xla_attr_int(cf, "vectors", &me.vectors)) ||
      ((flags & TESSERA_JAX_MIXED) && tsr_xla_attr_int(cf, "mixed", &me.mixed)) ||
      (piv_in && (tsr_xla_attr_int(cf, "trans", &me.trans) || me.trans < 0 || me.trans > 1)))
    return tsr_xla_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "tessera %s: missing or malformed attributes", name);
  if (!(flags & TESSERA_JAX_TRANSPOSED)) me.m = me.n;
  if (mesh_of(s, cf, &c, why, sizeof why))
    return tsr_xla_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, "tessera %s: %s", name, why);
  /* Operands (A, [pivots], [B], rank); results (A, [pivots], [X], [log det], [W], status), A
   * and X aliased to A and B (_native.py's OPS). */
  XLA_FFI_Buffer *rk = tsr_xla_arg(cf, 1 + piv_in + has_b);
  XLA_FFI_Buffer *pv = piv_in ? tsr_xla_arg(cf, 1) : piv_out ? tsr_xla_ret(cf, 1) : NULL;
  XLA_FFI_Buffer *a = tsr_xla_ret(cf, 0), *b = has_b ? tsr_xla_ret(cf, 1 + piv_out) : NULL;
  const int before = 1 + piv_out + has_b; /* results before log det */
  XLA_FFI_Buffer *ld = has_ld ? tsr_xla_ret(cf, before) : NULL;
  XLA_FFI_Buffer *ev = has_w ? tsr_xla_ret(cf, before + has_ld) : NULL;
  XLA_FFI_Buffer *st = tsr_xla_ret(cf, before + has_ld + has_w);
  /* Under jax.vmap every operand and result has the batch's axes first (vmap_method
   * "broadcast_all"): the dims below are a member's, the last of each buffer's. */
  const XLA_FFI_Buffer *const bufs[] = {a, b, ld, ev, st, rk, pv};
  static const int own[] = {2, 2, 1, 1, 1, 0, 1};
  const int64_t batch = a ? batch_of(bufs, own, sizeof own / sizeof *own) : -1;
  if (cf->args.size != 2 + piv_in + has_b || cf->rets.size != before + has_ld + has_w + 1 ||
      batch < 0 || (has_b && !b) || (has_ld && !ld) ||
      (has_w && (!ev || ev->dims[ev->rank - 1] != me.n)) || !st || !rk ||
      rk->dtype != XLA_FFI_DataType_S32 || st->dtype != XLA_FFI_DataType_S32 ||
      (ld && ld->dtype != XLA_FFI_DataType_F64) ||
      ((piv_in || piv_out) &&
       (!pv || pv->dims[pv->rank - 1] != me.n || pv->dtype != XLA_FFI_DataType_S32)))
    return tsr_xla_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "tessera %s: unexpected operands or results", name);
  if (batch == 0) return NULL;
  const int64_t *ad = a->dims + a->rank - 2, *bd = b ? b->dims + b->rank - 2 : NULL;
  me.dtype = dtype_of(a->dtype);
  if (me.dtype < 0 || (b && b->dtype != a->dtype))
    return tsr_xla_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "tessera %s: the matrix must be f32, f64, c64 or c128", name);
  if (ev &&
      ev->dtype != (me.dtype == TESSERA_F32 || me.dtype == TESSERA_C64 ? XLA_FFI_DataType_F32
                                                                       : XLA_FFI_DataType_F64))
    return tsr_xla_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "tessera %s: the eigenvalues must be of the matrix's real type", name);
  me.w = ev ? ev->data : NULL;
  me.piv = pv ? pv->data : NULL;
  me.a = a->data;
  me.rows = ad[0];
  me.cols = ad[1];
  if (flags & TESSERA_JAX_SQUARE) { /* its block of the n x n matrix, transposed as A's */
    me.b = b->data;
    me.nrhs = bd[0];
    me.hrows = bd[1];
    if (me.nrhs != me.rows)
      return tsr_xla_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                           "tessera %s: the n x n matrix has %lld columns per device, A %lld", name,
                           (long long)me.nrhs, (long long)me.rows);
  } else if ((flags & TESSERA_JAX_RHS_ROWS) && (flags & TESSERA_JAX_TRANSPOSED)) {
    me.b = b->data; /* this device's rows of B transposed: nrhs x (A's block rows, cols) */
    me.nrhs = bd[0];
    if (bd[1] != me.cols)
      return tsr_xla_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                           "tessera %s: B has %lld rows per device, A %lld", name, (long long)bd[1],
                           (long long)me.cols);
  } else if (flags & TESSERA_JAX_RHS_ROWS) { /* this device's rows of B: rows x nrhs */
    me.b = b->data;
    me.nrhs = bd[1];
    if (bd[0] != me.rows)
      return tsr_xla_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                           "tessera %s: B has %lld rows per device, A %lld", name, (long long)bd[0],
                           (long long)me.rows);
  } else if (flags & TESSERA_JAX_RHS_WHOLE_T) { /* the whole Bᵀ, padded as A's columns */
    me.b = b->data;
    me.nrhs = bd[0];
    if (bd[1] != me.cols * c.gcols)
      return tsr_xla_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                           "tessera %s: Bᵀ has %lld columns, A %lld", name, (long long)bd[1],
                           (long long)(me.cols * c.gcols));
  }
  int ordinal = 0;
  int64_t run = 0;
  if (tsr_xla_device_ordinal(cf, &ordinal) || tsr_xla_run_id(cf, &run))
    return tsr_xla_error(cf, XLA_FFI_Error_Code_INTERNAL,
                         "tessera %s: XLA gave no device ordinal or run id", name);
  tessera_context_t *ctx;
  int rc = tsr_jax_context(s, platform, &ctx);
  if (rc)
    return tsr_xla_error(cf, XLA_FFI_Error_Code_UNAVAILABLE, "tessera %s: %s", name,
                         tessera_jax_error(s, platform));
  /* On a GPU, the shard is read once XLA's work queued before the call on this device's stream
   * is done (a wait on that stream alone); the rank comes from the same stream. */
  me.node = TESSERA_HOST_NODE;
  void *queue = NULL;
  if (platform == TESSERA_JAX_CUDA) {
    tessera_device_info_t info;
    if (tessera_device_info(ctx, TESSERA_DEVICE_CUDA, ordinal, &info) || tsr_xla_stream(cf, &queue))
      return tsr_xla_error(cf, XLA_FFI_Error_Code_INTERNAL,
                           "tessera %s: GPU %d is not one of tessera's, or has no stream", name,
                           ordinal);
    me.node = info.memory_node;
  }
  me.queue = queue;
  const size_t es = tessera_dtype_size((tessera_dtype_t)me.dtype);
  me.batch = batch;
  me.a_step = (size_t)(me.rows * me.cols) * es;
  me.b_step = b ? (size_t)(bd[0] * bd[1]) * es : 0;
  me.w_step = (size_t)me.n * (es / (me.dtype == TESSERA_C64 || me.dtype == TESSERA_C128 ? 2 : 1));
  me.st = st->data;
  me.ld = ld ? ld->data : NULL;
  if (aliased_in(ctx, me.node, queue, tsr_xla_arg(cf, 0), a, es) ||
      (b && aliased_in(ctx, me.node, queue, tsr_xla_arg(cf, 1 + piv_in), b, es)))
    return tsr_xla_error(cf, XLA_FFI_Error_Code_INTERNAL, "tessera %s: device %d: %s", name,
                         ordinal, tessera_last_error(ctx));
  if (is_queued(&c, &me)) {
    const int32_t status = queued(ctx, &c, &me);
    if (status < 0) fprintf(stderr, "tessera.jax: %s\n", tessera_last_error(ctx));
    /* a failed call writes its status itself (every member's), once what it may have enqueued
     * is done */
    int w = status ? tessera_queue_sync(ctx, me.node, queue) : 0;
    for (int64_t i = 0; i < batch && status && !w; i++)
      w = tsr_jax_write_members(ctx, &me, i, 1, &status, NULL);
    if (w)
      return tsr_xla_error(cf, XLA_FFI_Error_Code_INTERNAL,
                           "tessera %s: cannot write the status on device %d", name, ordinal);
    return NULL;
  }
  int32_t rank = -1;
  if (tessera_queue_sync(ctx, me.node, queue) ||
      tessera_memory_copy(ctx, TESSERA_HOST_NODE, &rank, me.node, rk->data, sizeof rank))
    return tsr_xla_error(cf, XLA_FFI_Error_Code_INTERNAL, "tessera %s: device %d: %s", name,
                         ordinal, tessera_last_error(ctx));
  if (rank < 0 || rank >= c.ndev || c.owners[rank] != c.process)
    return tsr_xla_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "tessera %s: rank %d of %d devices is not this process's", name, (int)rank,
                         c.ndev);
  me.rank = rank;
  int local = 0; /* this device among the process's, in mesh order */
  for (int r = 0; r < rank; r++) local += c.owners[r] == c.process;
  tsr_rdv_t *r = NULL;
  led_t led = {0};
  rc = tsr_rdv_join(&s->rdv, run, site, local, c.mine, &me, sizeof me, &r);
  if (rc == TESSERA_ERR_TIMEOUT)
    fprintf(stderr, "tessera.jax: %s on device %d: the other devices' calls did not arrive\n", name,
            ordinal);
  if (rc == 1) { /* the leader: every shard of this process has arrived */
    part_t parts[MAX_DEVICES];
    for (int i = 0; i < c.mine; i++) memcpy(&parts[i], tsr_rdv_slot(r, i), sizeof parts[i]);
    const int status = lead(s, ctx, &c, parts, c.mine, &led);
    tsr_rdv_finish(&s->rdv, r, status, &led, sizeof led);
    rc = 0;
  }
  if (!rc) {
    rc = tsr_rdv_status(r);
    memcpy(&led, tsr_rdv_result(r), sizeof led);
  }
  tsr_rdv_leave(&s->rdv, r);
  int w = 0; /* the members the leader did not write: the call's status */
  for (int64_t i = led.written; i < batch && !w; i++) {
    const int32_t status = rc;
    w = tsr_jax_write_members(ctx, &me, i, 1, &status, &led.logdet);
  }
  if (w)
    return tsr_xla_error(cf, XLA_FFI_Error_Code_INTERNAL,
                         "tessera %s: cannot write the status on device %d", name, ordinal);
  return NULL;
}

/* The handlers of each operation and platform, and the table that names them. */
#define HANDLERS(op, OP)                                                                           \
  static XLA_FFI_Error *op##_cpu(XLA_FFI_CallFrame *cf) {                                          \
    return handle(cf, OP, TESSERA_JAX_CPU);                                                        \
  }                                                                                                \
  static XLA_FFI_Error *op##_cuda(XLA_FFI_CallFrame *cf) {                                         \
    return handle(cf, OP, TESSERA_JAX_CUDA);                                                       \
  }

HANDLERS(potrs, OP_POTRS)
HANDLERS(cho_solve, OP_CHO_SOLVE)
HANDLERS(cho_inverse, OP_CHO_INVERSE)
HANDLERS(cho_first, OP_CHO_FIRST)
HANDLERS(cho_second, OP_CHO_SECOND)
HANDLERS(potri, OP_POTRI)
HANDLERS(cholesky, OP_CHOLESKY)
HANDLERS(lu_solve, OP_LU_SOLVE)
HANDLERS(qr, OP_QR)
HANDLERS(least_squares, OP_LEAST_SQUARES)
HANDLERS(syevd, OP_SYEVD)
HANDLERS(polar, OP_POLAR)
HANDLERS(gesvd, OP_GESVD)
HANDLERS(lu_factor, OP_LU_FACTOR)
HANDLERS(lu_factored, OP_LU_FACTORED)

static const op_spec_t OPS[OP_COUNT] = {
    [OP_POTRS] = {"potrs",
                  TESSERA_JAX_RHS_ROWS | TESSERA_JAX_LOWER | TESSERA_JAX_LOGDET | TESSERA_JAX_MIXED,
                  {potrs_cpu, potrs_cuda}},
    [OP_POTRI] = {"potri", TESSERA_JAX_LOWER, {potri_cpu, potri_cuda}},
    [OP_CHOLESKY] = {"cholesky", TESSERA_JAX_LOWER, {cholesky_cpu, cholesky_cuda}},
    [OP_LU_SOLVE] = {"lu_solve",
                     TESSERA_JAX_RHS_WHOLE_T | TESSERA_JAX_MIXED,
                     {lu_solve_cpu, lu_solve_cuda}},
    [OP_QR] = {"qr", TESSERA_JAX_RHS_ROWS | TESSERA_JAX_TRANSPOSED, {qr_cpu, qr_cuda}},
    [OP_LEAST_SQUARES] = {"least_squares",
                          TESSERA_JAX_RHS_ROWS | TESSERA_JAX_TRANSPOSED,
                          {least_squares_cpu, least_squares_cuda}},
    [OP_SYEVD] = {"syevd", TESSERA_JAX_EIGEN, {syevd_cpu, syevd_cuda}},
    [OP_POLAR] = {"polar", TESSERA_JAX_TRANSPOSED | TESSERA_JAX_SQUARE, {polar_cpu, polar_cuda}},
    [OP_CHO_SOLVE] = {"cho_solve",
                      TESSERA_JAX_RHS_ROWS | TESSERA_JAX_LOWER,
                      {cho_solve_cpu, cho_solve_cuda}},
    [OP_CHO_INVERSE] = {"cho_inverse", TESSERA_JAX_LOWER, {cho_inverse_cpu, cho_inverse_cuda}},
    [OP_CHO_FIRST] = {"cho_first",
                      TESSERA_JAX_RHS_ROWS | TESSERA_JAX_LOWER,
                      {cho_first_cpu, cho_first_cuda}},
    [OP_CHO_SECOND] = {"cho_second",
                       TESSERA_JAX_RHS_ROWS | TESSERA_JAX_LOWER,
                       {cho_second_cpu, cho_second_cuda}},
    [OP_GESVD] = {"gesvd",
                  TESSERA_JAX_TRANSPOSED | TESSERA_JAX_SQUARE | TESSERA_JAX_EIGEN,
                  {gesvd_cpu, gesvd_cuda}},
    [OP_LU_FACTOR] = {"lu_factor", TESSERA_JAX_PIVOTS_OUT, {lu_factor_cpu, lu_factor_cuda}},
    [OP_LU_FACTORED] = {"lu_factored",
                        TESSERA_JAX_RHS_WHOLE_T | TESSERA_JAX_PIVOTS_IN,
                        {lu_factored_cpu, lu_factored_cuda}},
};

int tessera_jax_op(int op, int platform, const char **name, int *flags, XLA_FFI_Handler **handler) {
  if (op < 0 || op >= OP_COUNT || platform < 0 || platform >= TESSERA_JAX_PLATFORMS) return -1;
  *name = OPS[op].name;
  *flags = OPS[op].flags;
  *handler = OPS[op].handler[platform];
  return 0;
}
