/* The XLA FFI handlers: each device's call decodes its shard, joins the rendezvous of its
 * execution, and the last to arrive runs the multi-device routine on every shard in place. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "xla.h"

enum { MAX_DEVICES = 64 };

typedef enum { OP_POTRS, OP_POTRI, OP_CHOLESKY, OP_LU_SOLVE, OP_COUNT } op_t;

enum { RHS = TESSERA_JAX_RHS_ROWS | TESSERA_JAX_RHS_WHOLE_T };

/* The handler table, indexed as python/tessera/_native.py's OPS (defined at the end, after
 * the handlers): each operation's name, flags (its operands, attributes and results) and
 * handlers per platform. */
typedef struct {
  const char *name;
  int flags;
  XLA_FFI_Handler *handler[TESSERA_JAX_PLATFORMS];
} op_spec_t;
static const op_spec_t OPS[OP_COUNT];

/* What one device's call deposits at the rendezvous. */
typedef struct {
  int node;                 /* tessera memory node of its device */
  void *a, *b;              /* its rows of A (in place); potrs: its rows of B; lu_solve: Bᵀ */
  int64_t rows, cols, nrhs; /* its shard of A: rows x cols; B: rows x nrhs (lu_solve: Bᵀ, the
                               whole nrhs x cols, on every device) */
  int64_t n, tile, lower, logdet;
  int dtype;
} part_t;

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

/* Checks that every participant describes the same call (the leader prints why not). */
static int same_call(const part_t *p, int count) {
  for (int i = 1; i < count; i++)
    if (p[i].rows != p[0].rows || p[i].cols != p[0].cols || p[i].nrhs != p[0].nrhs ||
        p[i].n != p[0].n || p[i].tile != p[0].tile || p[i].lower != p[0].lower ||
        p[i].dtype != p[0].dtype || p[i].logdet != p[0].logdet)
      return fprintf(stderr, "tessera.jax: the devices' calls disagree (device %d)\n", i),
             TESSERA_ERR_STATE;
  if (p[0].n > p[0].cols || (double)p[0].rows * count < (double)p[0].n) {
    fprintf(stderr, "tessera.jax: %d shards of %lld x %lld do not hold a matrix of order %lld\n",
            count, (long long)p[0].rows, (long long)p[0].cols, (long long)p[0].n);
    return TESSERA_ERR_STATE;
  }
  return 0;
}

/* Cholesky family on the shards (leader, scope set): potrf, then the log det and the solve
 * (potrs) or the inverse (potri). A is the column panels of Aᵀ, BT those of Bᵀ (potrs). */
static int cholesky_ops(tessera_context_t *ctx, op_t op, const part_t *p, int count, void *const *a,
                        void *const *b, const int *nodes, double *logdet) {
  const int64_t n = p[0].n, nb = p[0].tile, w = p[0].rows;
  /* Read column-major, the shards are the column panels of Aᵀ: the caller's lower triangle is
   * this matrix's upper one. */
  tessera_uplo_t uplo = p[0].lower ? TESSERA_UPPER : TESSERA_LOWER;
  tessera_matrix_t *A = NULL, *BT = NULL;
  int rc =
      tessera_matrix_view_panels(ctx, p[0].dtype, n, n, nb, nb, w, count, a, nodes, p[0].cols, &A);
  if (!rc && op == OP_POTRS && p[0].nrhs > 0)
    rc = tessera_matrix_view_panels(ctx, p[0].dtype, p[0].nrhs, n, nb, nb, w, count, b, nodes,
                                    p[0].nrhs, &BT);
  if (!rc) rc = tessera_tile_potrf(uplo, A);
  if (!rc && op == OP_POTRS && p[0].logdet) rc = tessera_tile_logdet(uplo, A, logdet);
  if (!rc && op == OP_POTRI) rc = tessera_tile_potri(uplo, A);
  if (!rc && BT) {
    /* A X = B as Xᵀ Aᵀ = Bᵀ: two triangular solves from the right with Aᵀ's factor,
     * LOWER (Aᵀ = L Lᴴ): Xᵀ = Bᵀ L⁻ᴴ L⁻¹; UPPER (Aᵀ = Uᴴ U): Xᵀ = Bᵀ U⁻¹ U⁻ᴴ. */
    static const double one[2] = {1, 0};
    static const float onef[2] = {1, 0};
    const void *alpha = p[0].dtype == TESSERA_F32 || p[0].dtype == TESSERA_C64 ? (const void *)onef
                                                                               : (const void *)one;
    tessera_op_t first = uplo == TESSERA_LOWER ? TESSERA_CONJTRANS : TESSERA_NOTRANS;
    tessera_op_t second = uplo == TESSERA_LOWER ? TESSERA_NOTRANS : TESSERA_CONJTRANS;
    rc = tessera_tile_trsm(TESSERA_RIGHT, uplo, first, TESSERA_NONUNIT, alpha, A, BT);
    if (!rc) rc = tessera_tile_trsm(TESSERA_RIGHT, uplo, second, TESSERA_NONUNIT, alpha, A, BT);
  }
  if (rc < 0) fprintf(stderr, "tessera.jax: %s\n", tessera_last_error(ctx));
  int d1 = tessera_matrix_destroy(BT), d2 = tessera_matrix_destroy(A);
  return rc ? rc : d1 ? d1 : d2;
}

/* LU solve on the shards (leader, scope set). The shards are the column panels of Aᵀ, which
 * LU factors in place as they are (tiles spanning all n rows): P Aᵀ = L U. A x = b is then
 * (Aᵀ)ᵀ x = b, getrs with TRANS (not CONJTRANS: (Aᵀ)ᵀ = A for complex A too). Every device
 * holds the whole Bᵀ (nrhs x cols row-major: B, n x nrhs column-major with leading dimension
 * cols); rank 0's copy is solved in place and the solution copied into the others'. Returns 0,
 * getrf's info > 0 (B untouched, as LAPACK's gesv), or a negative status. */
static int lu_solve(tessera_context_t *ctx, const part_t *p, int count, void *const *a,
                    const int *nodes) {
  const int64_t n = p[0].n, nb = p[0].tile, w = p[0].rows, k = p[0].nrhs, ld = p[0].cols;
  int *ipiv = malloc((size_t)n * sizeof *ipiv);
  if (!ipiv) {
    fprintf(stderr, "tessera.jax: out of memory for %lld pivots\n", (long long)n);
    return TESSERA_ERR_NOMEM;
  }
  tessera_matrix_t *A = NULL, *B = NULL;
  int rc = tessera_matrix_view_panels(ctx, p[0].dtype, n, n, n, nb, w, count, a, nodes, ld, &A);
  if (!rc && k > 0)
    rc = tessera_matrix_view_on(ctx, p[0].node, p[0].dtype, n, k, n, nb, p[0].b, ld, &B);
  if (!rc) rc = tessera_tile_getrf(A, ipiv);
  if (!rc && B) rc = tessera_tile_getrs(TESSERA_TRANS, A, ipiv, B);
  if (rc < 0) fprintf(stderr, "tessera.jax: %s\n", tessera_last_error(ctx));
  int d1 = tessera_matrix_destroy(B), d2 = tessera_matrix_destroy(A);
  if (!rc) rc = d1 ? d1 : d2;
  free(ipiv);
  /* The solution, home in rank 0's buffer (the routines bring a view's tiles home), into every
   * other device's: padding rows included, one contiguous copy each. */
  const size_t bytes = (size_t)k * (size_t)ld * tessera_dtype_size(p[0].dtype);
  for (int i = 1; i < count && !rc && bytes; i++)
    if (tessera_memory_copy(ctx, p[i].node, p[i].b, p[0].node, p[0].b, bytes)) {
      fprintf(stderr, "tessera.jax: %s\n", tessera_last_error(ctx));
      rc = TESSERA_ERR_BACKEND;
    }
  return rc;
}

/* Runs the routine on the participants' shards (leader only): `*logdet` for potrs. */
static int solve(tsr_jax_state_t *s, tessera_context_t *ctx, int platform, op_t op, const part_t *p,
                 int count, double *logdet) {
  int rc = same_call(p, count);
  if (rc) return rc;
  void *a[MAX_DEVICES], *b[MAX_DEVICES];
  int nodes[MAX_DEVICES];
  uint64_t gpus = 0;
  for (int i = 0; i < count; i++) {
    a[i] = p[i].a;
    b[i] = p[i].b;
    nodes[i] = p[i].node;
    if (p[i].node != TESSERA_HOST_NODE) gpus |= 1ull << (p[i].node - 1); /* node 1 + g: GPU g */
  }
  rc = tsr_jax_hold(s, ctx, platform, gpus);
  if (rc < 0) {
    fprintf(stderr, "tessera.jax: %s\n", tessera_last_error(ctx));
    return rc;
  }
  rc = op == OP_LU_SOLVE ? lu_solve(ctx, p, count, a, nodes)
                         : cholesky_ops(ctx, op, p, count, a, b, nodes, logdet);
  tsr_jax_unhold(s, ctx, platform);
  return rc;
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

static XLA_FFI_Error *call(XLA_FFI_CallFrame *cf, op_t op, int platform, tsr_jax_state_t *s) {
  const char *name = OPS[op].name;
  const int flags = OPS[op].flags, has_b = (flags & RHS) != 0,
            has_ld = (flags & TESSERA_JAX_LOGDET) != 0;
  int64_t site = 0, ndev = 0;
  part_t me = {.dtype = -1};
  if (tsr_xla_attr_int(cf, "site", &site) || tsr_xla_attr_int(cf, "ndev", &ndev) || ndev < 1 ||
      ndev > MAX_DEVICES || tsr_xla_attr_int(cf, "n", &me.n) ||
      tsr_xla_attr_int(cf, "tile", &me.tile) ||
      ((flags & TESSERA_JAX_LOWER) && tsr_xla_attr_int(cf, "lower", &me.lower)) ||
      (has_ld && tsr_xla_attr_int(cf, "logdet", &me.logdet)))
    return tsr_xla_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "tessera %s: missing or malformed attributes", name);
  /* Operands (A, [B], rank); results (A, [X], [log det], status), A and X aliased to A and B
   * (_native.py's OPS). */
  XLA_FFI_Buffer *rk = tsr_xla_arg(cf, 1 + has_b);
  XLA_FFI_Buffer *a = tsr_xla_ret(cf, 0), *b = has_b ? tsr_xla_ret(cf, 1) : NULL;
  XLA_FFI_Buffer *ld = has_ld ? tsr_xla_ret(cf, 1 + has_b) : NULL;
  XLA_FFI_Buffer *st = tsr_xla_ret(cf, 1 + has_b + has_ld);
  if (cf->args.size != 2 + has_b || cf->rets.size != 2 + has_b + has_ld || !a || a->rank != 2 ||
      (has_b && (!b || b->rank != 2)) || (has_ld && !ld) || !st || !rk ||
      rk->dtype != XLA_FFI_DataType_S32 || st->dtype != XLA_FFI_DataType_S32 ||
      (ld && ld->dtype != XLA_FFI_DataType_F64))
    return tsr_xla_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "tessera %s: unexpected operands or results", name);
  me.dtype = dtype_of(a->dtype);
  if (me.dtype < 0 || (b && b->dtype != a->dtype))
    return tsr_xla_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "tessera %s: the matrix must be f32, f64, c64 or c128", name);
  me.a = a->data;
  me.rows = a->dims[0];
  me.cols = a->dims[1];
  if (flags & TESSERA_JAX_RHS_ROWS) { /* this device's rows of B: rows x nrhs */
    me.b = b->data;
    me.nrhs = b->dims[1];
    if (b->dims[0] != me.rows)
      return tsr_xla_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                           "tessera %s: B has %lld rows per device, A %lld", name,
                           (long long)b->dims[0], (long long)me.rows);
  } else if (flags & TESSERA_JAX_RHS_WHOLE_T) { /* the whole Bᵀ, padded as A's columns */
    me.b = b->data;
    me.nrhs = b->dims[0];
    if (b->dims[1] != me.cols)
      return tsr_xla_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                           "tessera %s: Bᵀ has %lld columns, A's shard %lld", name,
                           (long long)b->dims[1], (long long)me.cols);
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
  int32_t rank = -1;
  if (tessera_queue_sync(ctx, me.node, queue) ||
      tessera_memory_copy(ctx, TESSERA_HOST_NODE, &rank, me.node, rk->data, sizeof rank))
    return tsr_xla_error(cf, XLA_FFI_Error_Code_INTERNAL, "tessera %s: device %d: %s", name,
                         ordinal, tessera_last_error(ctx));
  if (rank < 0 || rank >= ndev)
    return tsr_xla_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "tessera %s: rank %d of %lld devices", name, (int)rank, (long long)ndev);
  tsr_rdv_t *r = NULL;
  double logdet = 0;
  rc = tsr_rdv_join(&s->rdv, run, site, rank, (int)ndev, &me, sizeof me, &r);
  if (rc == 1) { /* the leader: every shard has arrived */
    part_t parts[MAX_DEVICES];
    for (int i = 0; i < ndev; i++) memcpy(&parts[i], tsr_rdv_slot(r, i), sizeof parts[i]);
    int status = solve(s, ctx, platform, op, parts, (int)ndev, &logdet);
    tsr_rdv_finish(&s->rdv, r, status, &logdet, sizeof logdet);
    rc = 0;
  }
  if (!rc) {
    rc = tsr_rdv_status(r);
    memcpy(&logdet, tsr_rdv_result(r), sizeof logdet);
  }
  tsr_rdv_leave(&s->rdv, r);
  if (rc == TESSERA_ERR_TIMEOUT)
    fprintf(stderr, "tessera.jax: %s on device %d: the other devices' calls did not arrive\n", name,
            ordinal);
  int32_t status = rc;
  int w = tessera_memory_copy(ctx, me.node, st->data, TESSERA_HOST_NODE, &status, sizeof status);
  if (!w && ld && me.logdet)
    w = tessera_memory_copy(ctx, me.node, ld->data, TESSERA_HOST_NODE, &logdet, sizeof logdet);
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
HANDLERS(potri, OP_POTRI)
HANDLERS(cholesky, OP_CHOLESKY)
HANDLERS(lu_solve, OP_LU_SOLVE)

static const op_spec_t OPS[OP_COUNT] = {
    [OP_POTRS] = {"potrs",
                  TESSERA_JAX_RHS_ROWS | TESSERA_JAX_LOWER | TESSERA_JAX_LOGDET,
                  {potrs_cpu, potrs_cuda}},
    [OP_POTRI] = {"potri", TESSERA_JAX_LOWER, {potri_cpu, potri_cuda}},
    [OP_CHOLESKY] = {"cholesky", TESSERA_JAX_LOWER, {cholesky_cpu, cholesky_cuda}},
    [OP_LU_SOLVE] = {"lu_solve", TESSERA_JAX_RHS_WHOLE_T, {lu_solve_cpu, lu_solve_cuda}},
};

int tessera_jax_op(int op, int platform, const char **name, int *flags, XLA_FFI_Handler **handler) {
  if (op < 0 || op >= OP_COUNT || platform < 0 || platform >= TESSERA_JAX_PLATFORMS) return -1;
  *name = OPS[op].name;
  *flags = OPS[op].flags;
  *handler = OPS[op].handler[platform];
  return 0;
}
