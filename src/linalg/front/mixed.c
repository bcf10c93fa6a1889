/* Mixed-precision solves (tessera/linalg.h: tessera_posv_mixed, tessera_gesv_mixed), as LAPACK's
 * dsposv / zcposv and dsgesv / zcgesv (LU with partial pivoting on column panels, residuals by a
 * general product): the front doors and the stages they drive.
 * A converted tile by tile into the lower precision (f32, or c64 for c128) and factored there by
 * tile tasks on every device, then X refined in A's precision (loops/refine.c): the residuals by
 * a Hermitian product of A's own tiles (loops/hemm.c), the corrections by the low-precision
 * factor's solves. Classical refinement first; where a step does not halve the residual, GMRES
 * preconditioned by the low-precision factors (GMRES-IR, Carson and Higham); the
 * working-precision posv where the factor breaks down or the refinement does not converge, with
 * dsposv's codes. The factor's precision, its devices and its tiling are loops/policy.c's; the
 * form over processes is mixed_dist.c's. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linalg/front/front.h"
#include "linalg/front/mixed.h"
#include "linalg/loops/loops.h"
#include "linalg/loops/refine.h"
#include "runtime/context.h"
#include "tessera/linalg.h"

typedef tsr_mixed_t mixed_t;

/* Refinement steps by default (dsposv's ITERMAX), and the fallback's codes. */
enum { MAX_ITER = 30 };
enum {
  OVERFLOW = TSR_MIXED_OVERFLOW,
  BROKE_DOWN = TSR_MIXED_BROKE_DOWN,
  NO_CONVERGENCE = TSR_MIXED_NO_CONVERGENCE
};

void tessera_mixed_options_init(tessera_mixed_options_t *opts) {
  if (opts)
    *opts = (tessera_mixed_options_t){
        .factor = TESSERA_FACTOR_AUTO, .max_iter = MAX_ITER, .trans = TESSERA_NOTRANS};
}

/* The options (argument `argno` of routine f, an LU solve's with `lu`) for a matrix of dtype dt
 * on ctx's devices. */
static int check_options(tessera_context_t *ctx, const char *f, int argno, bool lu,
                         tessera_dtype_t dt, const tessera_mixed_options_t *o) {
  int rc = 0;
  const char t = (char)o->trans;
  if (t != 'N' && (!lu || (t != 'T' && t != 'C')))
    rc = tsr_error(ctx, -argno, "%s: argument %d's trans = '%c' is not %s", f, argno, t,
                   lu ? "'N', 'T' or 'C'" : "'N' (a Cholesky solve takes A as it is)");
  if (!rc && (o->factor < TESSERA_FACTOR_AUTO || o->factor > TESSERA_FACTOR_HALF))
    rc = tsr_error(ctx, -argno, "%s: argument %d's factor = %d is not a factor precision", f, argno,
                   (int)o->factor);
  if (!rc && (o->max_iter < 1 || o->gmres < -1 || o->gmres > 1))
    rc = tsr_error(ctx, -argno,
                   "%s: argument %d asks max_iter = %d (at least 1) and gmres = %d (-1, 0 or 1)", f,
                   argno, o->max_iter, o->gmres);
  if (!rc && o->factor == TESSERA_FACTOR_SINGLE && tsr_dtype_single(dt))
    rc = tsr_error(ctx, -argno,
                   "%s: argument %d asks a single-precision factor of a %s matrix, "
                   "which is single precision already",
                   f, argno, tessera_dtype_name(dt));
  if (!rc && o->factor > TESSERA_FACTOR_SINGLE && tessera_accelerator_count(ctx) == 0)
    rc = tsr_error(ctx, -argno,
                   "%s: argument %d (the options) asks a factor on GPU tensor cores (TF32, "
                   "BF16 or FP16 inputs), which needs a context with GPUs; without them, "
                   "TESSERA_FACTOR_SINGLE factors in single precision on the CPUs",
                   f, argno);
  return rc;
}

/* The arguments as posv_mixed numbers them (uplo 2, then dtype .. lda), or gesv_mixed (`lu`: no
 * uplo, each of dtype .. lda one place earlier, ipiv 7); b .. opts are 8 .. 12 in both. */
static int check(tessera_context_t *ctx, const char *f, bool lu, tessera_uplo_t uplo,
                 tessera_dtype_t dt, int64_t n, int64_t nrhs, const void *a, int64_t lda,
                 const int *ipiv, const void *b, int64_t ldb, const void *x, int64_t ldx,
                 const tessera_mixed_options_t *o) {
  const int k = lu ? 1 : 0;
  int rc = lu ? 0 : tsr_arg_flag(ctx, f, 2, uplo, "LU");
  if (!rc) rc = tsr_arg_dtype(ctx, f, 3 - k, dt);
  if (!rc) rc = tsr_arg_dim(ctx, f, 4 - k, n);
  if (!rc) rc = tsr_arg_dim(ctx, f, 5 - k, nrhs);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 6 - k, a, n, n);
  if (!rc) rc = tsr_arg_ld(ctx, f, 7 - k, lda, n);
  if (!rc && lu) rc = tsr_arg_ptr(ctx, f, 7, ipiv, n, 1);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 8, b, n, nrhs);
  if (!rc) rc = tsr_arg_ld(ctx, f, 9, ldb, n);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 10, x, n, nrhs);
  if (!rc) rc = tsr_arg_ld(ctx, f, 11, ldx, n);
  return rc ? rc : check_options(ctx, f, 12, lu, dt, o);
}

/* The working-precision solve instead: X = B, then posv, or gesv of op(A) (getrf and getrs
 * where op transposes), on A (left holding its factor). */
static int fallback(tessera_context_t *ctx, tessera_uplo_t uplo, tessera_op_t trans,
                    tessera_dtype_t dt, int64_t n, int64_t nrhs, void *a, int64_t lda, int *ipiv,
                    const void *b, int64_t ldb, void *x, int64_t ldx) {
  tsr_mixed_copy_columns(tessera_dtype_size(dt), n, nrhs, b, ldb, x, ldx);
  if (!ipiv) return tessera_posv(ctx, uplo, dt, n, nrhs, a, lda, x, ldx);
  if (trans == TESSERA_NOTRANS) return tessera_gesv(ctx, dt, n, nrhs, a, lda, ipiv, x, ldx);
  const int rc = tessera_getrf(ctx, dt, n, n, a, lda, ipiv);
  return rc ? rc : tessera_getrs(ctx, trans, dt, n, nrhs, a, lda, ipiv, x, ldx);
}

/* Factors m->A (LU when m->ipiv is set, else Cholesky) in precision f and refines x (n x nrhs,
 * ldx) from b (ldb): 0 or a negative status, with *code the fallback's reason (BROKE_DOWN,
 * OVERFLOW, NO_CONVERGENCE) or 0. The conversion, the factor and ‖A‖∞ run as tasks (an overflow
 * of the factor's precision found there discards the factor: the fallback). */
static int factor_refine(mixed_t *m, tessera_factor_t f, const tessera_mixed_options_t *o,
                         const void *b, int64_t ldb, void *x, int64_t ldx, int64_t nrhs,
                         tessera_mixed_result_t *res, int *code) {
  tessera_context_t *ctx = m->ctx;
  const bool lu = m->ipiv != NULL;
  const int64_t n = m->n;
  /* the solve's tasks on the accelerators where the policy puts them */
  const tessera_scope_t outer = tessera_get_scope(ctx);
  int rc = tsr_mixed_on_accelerators(ctx) ? tessera_set_scope(ctx, tessera_scope_gpus()) : 0;
  m->low = malloc((size_t)(n * nrhs) * m->les);
  /* LU in A's tiling, Cholesky on square tiles, or as one tile where the policy says */
  const bool one_tile = tsr_mixed_one_tile(ctx, f, lu, m->flow->distributed, n, m->les);
  const int64_t lb = one_tile ? n : m->nb, mb = lu ? m->A->mb : lb, nb = lu ? m->A->nb : lb;
  void *store = NULL; /* over processes: this one's tiles of L */
  if (!rc)
    rc = m->flow->distributed ? tsr_mixed_low_copy(m, mb, nb, &store)
                              : tsr_matrix_create_workspace(ctx, m->lo, n, n, mb, nb, &m->L);
  /* FP16 inputs: A scaled first by the power of two bringing ‖A‖∞ near a tenth of FP16's
   * largest value, which no entry of A or of its Cholesky factor then exceeds; else ‖A‖∞'s tasks
   * after the factor's */
  const bool half = f == TESSERA_FACTOR_HALF;
  double anrm = 0, *rows = calloc(2 * (size_t)n, sizeof *rows);
  tessera_data_t **R = calloc((size_t)tsr_mixed_norm_handles(m), sizeof *R);
  if (!rc && (!rows || !R || !m->low))
    rc = tsr_error(ctx, TESSERA_ERR_NOMEM, "mixed-precision solve: out of memory");
  if (!rc && half) {
    rc = tsr_mixed_norm_now(m, rows, R, &anrm);
    if (!rc && anrm > 0 && isfinite(anrm)) m->mu = exp2(floor(log2(6550.0 / anrm)));
  }
  if (m->L) m->L->math = tsr_mixed_math(f, lu);
  if (!rc) rc = tsr_pxconvert(m->uplo, m->A, m->mu, m->L);
  if (!rc && !lu) rc = tsr_pxpotrf(m->uplo, m->L, NULL);
  if (!rc && !half) rc = tsr_mixed_norm_begin(m, rows, R);
  if (m->L) {
    const int info = lu && !rc ? tessera_tile_getrf(m->L, m->ipiv) : tsr_tile_finish(m->L, rc);
    if (info > 0)
      *code = BROKE_DOWN;
    else
      rc = info;
  }
  if (!half && R) rc = tsr_mixed_norm_end(m, rows, R, rc, &anrm);
  if (!rc && *code == BROKE_DOWN && !half) { /* the failed flow may have skipped the sums: again */
    memset(rows, 0, 2 * (size_t)n * sizeof *rows);
    rc = tsr_mixed_norm_now(m, rows, R, &anrm);
  }
  free(rows), free(R);
  const double eps = tsr_dtype_single(m->dt) ? FLT_EPSILON / 2 : DBL_EPSILON / 2;
  const double cte = anrm * eps * sqrt((double)n);
  if (!rc && !(anrm <= FLT_MAX)) *code = OVERFLOW; /* and NaN: the working-precision call says */
  if (!*code && !rc) {
    res->factor = f;
    const int r = tsr_mixed_refine(m, o, cte, b, ldb, x, ldx, nrhs, res);
    if (r == OVERFLOW || r == NO_CONVERGENCE)
      *code = r;
    else
      rc = r;
  }
  const int d = m->L ? tessera_matrix_destroy(m->L) : 0;
  free(store);
  free(m->low);
  (void)tessera_set_scope(ctx, outer);
  return rc ? rc : d;
}

/* What a solve that fell back to working precision (reason `code`) reports. */
static tessera_mixed_result_t fell_back(const tessera_mixed_result_t *res, int code) {
  return (tessera_mixed_result_t){
      .factor = TESSERA_FACTOR_WORKING, .iter = code, .gmres_steps = res->gmres_steps};
}

static int tile_mixed(const char *f, bool lu, tessera_uplo_t uplo, tessera_matrix_t *A, int *ipiv,
                      tessera_matrix_t *B, const tessera_mixed_options_t *opts,
                      tessera_mixed_result_t *res);

/* posv_mixed or gesv_mixed on a context over processes (the arrays the root's; `rc` this
 * process's checks): the arguments and options compared across the processes, X = B on the
 * root, then A and X dealt over the grid and the tile-level solve run distributed; X, and A
 * (its factor after a fallback), back on the root. */
static int over_processes(tessera_context_t *ctx, const char *f, bool lu, tessera_uplo_t uplo,
                          tessera_dtype_t dtype, int64_t n, int64_t nrhs, void *a, int64_t lda,
                          int *ipiv, const void *b, int64_t ldb, void *x, int64_t ldx,
                          const tessera_mixed_options_t *o, tessera_mixed_result_t *res, int rc) {
  const int64_t values[7] = {lu ? o->trans : uplo, dtype,   n, nrhs, o->factor,
                             o->max_iter,          o->gmres};
  const int argno[7] = {lu ? 12 : 2, lu ? 2 : 3, lu ? 3 : 4, lu ? 4 : 5, 12, 12, 12};
  tsr_views_t vs;
  int *piv = ipiv;
  rc = lu ? tsr_lu_views_begin(&vs, ctx, f, rc, 7, values, argno, n, n, ipiv, &piv, false)
          : tsr_views_begin(&vs, ctx, f, rc, 7, values, argno, tessera_tile_for(ctx, n));
  if (rc || n == 0 || nrhs == 0) return lu ? tsr_lu_views_end(&vs, rc, ipiv, piv) : rc;
  if (tsr_lapack_holds_arrays(ctx))
    tsr_mixed_copy_columns(tessera_dtype_size(dtype), n, nrhs, b, ldb, x, ldx);
  rc = tsr_views_add(&vs, dtype, n, n, a, lda, lu ? 0 : (char)uplo, TSR_IN | TSR_OUT);
  if (!rc) rc = tsr_views_add(&vs, dtype, n, nrhs, x, ldx, 0, TSR_IN | TSR_OUT);
  if (!rc)
    rc = tile_mixed(lu ? "gesv_mixed" : "posv_mixed", lu, uplo, vs.v[0], piv, vs.v[1], o, res);
  return lu ? tsr_lu_views_end(&vs, rc, ipiv, piv) : tsr_views_release(&vs, rc);
}

/* posv_mixed (ipiv NULL, lu false) or gesv_mixed (lu). */
static int mixed(tessera_context_t *ctx, const char *fname, bool lu, tessera_uplo_t uplo,
                 tessera_dtype_t dtype, int64_t n, int64_t nrhs, void *a, int64_t lda, int *ipiv,
                 const void *b, int64_t ldb, void *x, int64_t ldx,
                 const tessera_mixed_options_t *opts, tessera_mixed_result_t *res) {
  if (!ctx) return -1;
  tessera_mixed_options_t o;
  tessera_mixed_options_init(&o);
  if (opts) o = *opts;
  tessera_mixed_result_t own;
  if (!res) res = &own;
  *res = (tessera_mixed_result_t){.factor = TESSERA_FACTOR_WORKING};
  int rc = check(ctx, fname, lu, uplo, dtype, n, nrhs, a, lda, ipiv, b, ldb, x, ldx, &o);
  if (tsr_context_flow(ctx)->distributed)
    return over_processes(ctx, fname, lu, uplo, dtype, n, nrhs, a, lda, ipiv, b, ldb, x, ldx, &o,
                          res, rc);
  if (rc || n == 0 || nrhs == 0) return rc;
  const tessera_factor_t f = tsr_mixed_precision(ctx, dtype, lu, n, &o);
  if (f == TESSERA_FACTOR_WORKING)
    return fallback(ctx, uplo, o.trans, dtype, n, nrhs, a, lda, lu ? ipiv : NULL, b, ldb, x, ldx);
  mixed_t m = tsr_mixed_state(ctx, dtype, uplo, lu ? ipiv : NULL, o.trans, n,
                              lu ? tessera_tile_for_lu(ctx, n, n) : tessera_tile_for(ctx, n));
  /* A's tiles reach the accelerators at the link's speed only from pinned memory */
  const bool pinned = tsr_mixed_on_accelerators(ctx) &&
                      tsr_host_pin(ctx, a, (size_t)(lda * (n - 1) + n) * tessera_dtype_size(dtype));
  int code = 0; /* the fallback's reason, else 0 */
  rc = tessera_matrix_view(ctx, dtype, n, n, lu ? n : m.nb, m.nb, a, lda, &m.A);
  if (!rc) rc = factor_refine(&m, f, &o, b, ldb, x, ldx, nrhs, res, &code);
  const int d = m.A ? tessera_matrix_destroy(m.A) : 0;
  if (pinned) tsr_host_unpin(ctx, a); /* after A's view, whose tiles it backs */
  if (!rc) rc = d;
  if (rc || !code) return rc;
  *res = fell_back(res, code);
  return fallback(ctx, uplo, o.trans, dtype, n, nrhs, a, lda, lu ? ipiv : NULL, b, ldb, x, ldx);
}

int tessera_posv_mixed(tessera_context_t *ctx, tessera_uplo_t uplo, tessera_dtype_t dtype,
                       int64_t n, int64_t nrhs, void *a, int64_t lda, const void *b, int64_t ldb,
                       void *x, int64_t ldx, const tessera_mixed_options_t *opts,
                       tessera_mixed_result_t *res) {
  return mixed(ctx, "posv_mixed", false, uplo, dtype, n, nrhs, a, lda, NULL, b, ldb, x, ldx, opts,
               res);
}

int tessera_gesv_mixed(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t n, int64_t nrhs,
                       void *a, int64_t lda, int *ipiv, const void *b, int64_t ldb, void *x,
                       int64_t ldx, const tessera_mixed_options_t *opts,
                       tessera_mixed_result_t *res) {
  return mixed(ctx, "gesv_mixed", true, TESSERA_LOWER, dtype, n, nrhs, a, lda, ipiv, b, ldb, x, ldx,
               opts, res);
}

/* tile_posv_mixed (lu false) or tile_gesv_mixed (lu): arguments as they number them, opts 4 in
 * both. */
static int tile_mixed(const char *f, bool lu, tessera_uplo_t uplo, tessera_matrix_t *A, int *ipiv,
                      tessera_matrix_t *B, const tessera_mixed_options_t *opts,
                      tessera_mixed_result_t *res) {
  int rc = lu ? tsr_check_gesv(A, ipiv, B, f) : tsr_check_potrs(uplo, A, B, f);
  if (rc) return rc;
  tessera_context_t *ctx = A->ctx;
  tessera_mixed_options_t o;
  tessera_mixed_options_init(&o);
  if (opts) o = *opts;
  tessera_mixed_result_t own;
  if (!res) res = &own;
  *res = (tessera_mixed_result_t){.factor = TESSERA_FACTOR_WORKING};
  rc = check_options(ctx, f, 4, lu, A->dtype, &o);
  if (!rc && !lu && A->mb != A->nb)
    rc = tsr_error(ctx, -2, "%s: A's tiles are %lld x %lld; its products take square tiles", f,
                   (long long)A->mb, (long long)A->nb);
  if (rc || A->m == 0 || B->n == 0) return rc;
  const tessera_factor_t fp = tsr_mixed_precision(ctx, A->dtype, lu, A->m, &o);
  const int64_t n = A->m, nrhs = B->n;
  mixed_t m = tsr_mixed_state(ctx, A->dtype, uplo, lu ? ipiv : NULL, o.trans, n, A->nb);
  m.A = A;
  m.comm = A->comm;
  m.flow = A->flow;
  int code = 0;
  if (fp != TESSERA_FACTOR_WORKING) {
    /* the refinement's vectors on the host, B's columns fetched once and X's stored once */
    void *b = malloc((size_t)(n * nrhs) * m.es), *x = malloc((size_t)(n * nrhs) * m.es);
    if (!b || !x) rc = tsr_error(ctx, TESSERA_ERR_NOMEM, "%s: out of memory", f);
    if (b) memset(b, 0, (size_t)(n * nrhs) * m.es); /* over processes: each its own tiles */
    if (!rc) rc = tessera_matrix_export(B, b, n);
    if (!rc) rc = tsr_mixed_sum(&m, b, (size_t)(n * nrhs), m.dt);
    if (!rc) rc = factor_refine(&m, fp, &o, b, n, x, n, nrhs, res, &code);
    if (!rc && !code) rc = tessera_matrix_import(B, x, n);
    free(b), free(x);
    if (rc || !code) return rc;
    *res = fell_back(res, code);
  }
  if (!lu)
    rc = tessera_tile_posv(uplo, A, B);
  else if (o.trans == TESSERA_NOTRANS)
    rc = tessera_tile_gesv(A, ipiv, B);
  else if (!(rc = tessera_tile_getrf(A, ipiv)))
    rc = tessera_tile_getrs(o.trans, A, ipiv, B);
  if (rc > 0 && code)
    rc = lu ? tsr_error(ctx, rc,
                        "%s: A is singular in its own precision too: U(%d, %d) of its LU factors "
                        "is exactly zero",
                        f, rc, rc)
            : tsr_error(ctx, rc,
                        "%s: A is not positive definite in its own precision either: its leading "
                        "minor of order %d is not",
                        f, rc);
  return rc;
}

int tessera_tile_posv_mixed(tessera_uplo_t uplo, tessera_matrix_t *A, tessera_matrix_t *B,
                            const tessera_mixed_options_t *opts, tessera_mixed_result_t *res) {
  return tile_mixed("tile_posv_mixed", false, uplo, A, NULL, B, opts, res);
}

int tessera_tile_gesv_mixed(tessera_matrix_t *A, int *ipiv, tessera_matrix_t *B,
                            const tessera_mixed_options_t *opts, tessera_mixed_result_t *res) {
  return tile_mixed("tile_gesv_mixed", true, TESSERA_LOWER, A, ipiv, B, opts, res);
}
