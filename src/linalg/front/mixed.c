/* Mixed-precision solves (tessera/linalg.h: tessera_posv_mixed, tessera_gesv_mixed), as LAPACK's
 * dsposv / zcposv and dsgesv / zcgesv (LU with partial pivoting on column panels, residuals by a
 * general product):
 * A converted tile by tile into the lower precision (f32, or c64 for c128) and factored there by
 * tile tasks on every device, then X refined in A's precision: the residuals by a Hermitian
 * product of A's own tiles (loops/hemm.c), the corrections by the low-precision factor's
 * solves. Classical refinement first; where a step does not halve the residual, GMRES
 * preconditioned by the low-precision factors (GMRES-IR, Carson and Higham), whose operator
 * M⁻¹ A is applied in A's precision but for the factor's solves; the working-precision posv
 * where the factor breaks down or the refinement does not converge, with dsposv's codes. The
 * refinement's vectors (n x nrhs) live on the host; the products and solves are tile tasks. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linalg/front/front.h"
#include "linalg/loops/loops.h"
#include "runtime/context.h"
#include "tessera/linalg.h"

typedef double complex cplx;

/* Refinement steps by default (dsposv's ITERMAX), GMRES's largest basis per step, the relative
 * decrease of the preconditioned residual a GMRES step aims at, the decrease below which
 * GMRES-IR has stalled, and the fallback's codes. */
enum { MAX_ITER = 30, BASIS = 50 };
enum { OVERFLOW = -2, BROKE_DOWN = -3, NO_CONVERGENCE = -31 };
static const double GMRES_TOL = 1e-8, STALL = 0.9;

typedef struct {
  tessera_context_t *ctx;
  tessera_dtype_t dt, lo; /* A's dtype and the factor's */
  char uplo;
  char trans; /* LU: op(A) X = B, 'N', 'T' or 'C' */
  int64_t n, nb;
  size_t es, les;
  tessera_matrix_t *A, *L; /* a view of A, and its low-precision copy factored */
  void *low;               /* n x nrhs of the factor's dtype: the solves' right-hand sides */
  int *ipiv;               /* LU (gesv): the factor's pivots; NULL: Cholesky (posv), A Hermitian */
  double mu;               /* the factor is that of mu A (a power of two) */
} mixed_t;

static size_t at(int64_t i, int64_t j, int64_t ld) {
  return (size_t)i + (size_t)j * (size_t)ld;
}

/* dst (n x cols, ldd) = src (lds), elements of es bytes. */
static void copy_columns(size_t es, int64_t n, int64_t cols, const void *src, int64_t lds,
                         void *dst, int64_t ldd) {
  for (int64_t j = 0; j < cols; j++)
    memcpy((char *)dst + at(0, j, ldd) * es, (const char *)src + at(0, j, lds) * es,
           (size_t)n * es);
}

static cplx load(tessera_dtype_t dt, const void *p, size_t k) {
  const tsr_scalar_t s = tsr_scalar_load(dt, (const char *)p + k * tessera_dtype_size(dt), 0);
  return s.re + I * s.im;
}

static void store(tessera_dtype_t dt, void *p, size_t k, cplx v) {
  tsr_scalar_store(dt, (char *)p + k * tessera_dtype_size(dt), (tsr_scalar_t){creal(v), cimag(v)});
}

/* Handles norm_begin takes: A's row tiles, and its column tiles for a transposed op(A). */
static int64_t norm_handles(const mixed_t *m) {
  return m->A->mt + m->A->nt;
}

/* ‖op(A)‖∞ of m->A (Hermitian in its uplo triangle, or general: uplo 0, with op m->trans):
 * absum tasks where A's tiles are, the row sums of op(A) into handles over sums[0, n) (zeroed;
 * for a transposed op(A) A's column sums, A's row sums going to sums[n, 2n)); norm_end waits for
 * them. R: norm_handles(m) entries, NULL. */
static int norm_begin(mixed_t *m, double *sums, tessera_data_t **R) {
  const tessera_matrix_t *A = m->A;
  const bool t = m->ipiv && m->trans != 'N';
  tessera_data_t **rows = t ? R + A->nt : R, **cols = t ? R : NULL;
  int rc = 0;
  for (int64_t i = 0; i < A->mt && !rc; i++)
    rc = tessera_data_register(m->ctx, TESSERA_HOST_NODE, sums + (t ? m->n : 0) + i * A->mb,
                               (size_t)tsr_tile_m(A, i), 1, (size_t)tsr_tile_m(A, i), sizeof *sums,
                               &rows[i]);
  for (int64_t j = 0; t && j < A->nt && !rc; j++)
    rc =
        tessera_data_register(m->ctx, TESSERA_HOST_NODE, sums + j * A->nb, (size_t)tsr_tile_n(A, j),
                              1, (size_t)tsr_tile_n(A, j), sizeof *sums, &cols[j]);
  return rc ? rc : tsr_pxabsum(m->uplo, A, rows, cols);
}

/* The largest row sum of op(A) (NaN kept) once the handles are released (their sums home). */
static int norm_end(mixed_t *m, double *sums, tessera_data_t **R, int rc, double *anrm) {
  for (int64_t i = 0; i < norm_handles(m); i++)
    if (R[i]) {
      const int r = tessera_data_release(m->ctx, R[i]);
      if (!rc) rc = r;
      R[i] = NULL;
    }
  double most = 0;
  for (int64_t i = 0; i < m->n; i++)
    if (!(sums[i] <= most)) most = sums[i];
  *anrm = most;
  return rc;
}

/* y (n x c, ldy) = alpha op(A) x (ldx) + beta y, by the tile product (Hermitian, or general
 * with op m->trans), x tiled as op(A)'s columns and y as its rows; x and y host arrays. */
static int product(mixed_t *m, cplx alpha, const void *x, int64_t ldx, cplx beta, void *y,
                   int64_t ldy, int64_t c) {
  tessera_matrix_t *X = NULL, *Y = NULL;
  const tsr_scalar_t al = {creal(alpha), cimag(alpha)}, be = {creal(beta), cimag(beta)};
  const bool t = m->trans != 'N';
  const int64_t xb = t ? m->A->mb : m->A->nb, yb = t ? m->A->nb : m->A->mb;
  int rc = tessera_matrix_view(m->ctx, m->dt, m->n, c, xb, m->nb, (void *)x, ldx, &X);
  if (!rc) rc = tessera_matrix_view(m->ctx, m->dt, m->n, c, yb, m->nb, y, ldy, &Y);
  if (!rc)
    rc = m->ipiv ? tsr_pxgemm(m->trans, 'N', al, m->A, X, be, Y)
                 : tsr_pxhemm(m->uplo, m->A, al, X, be, Y);
  const int waited = tessera_wait_all(m->ctx);
  if (!rc) rc = waited;
  const int d = (X ? tessera_matrix_destroy(X) : 0) | (Y ? tessera_matrix_destroy(Y) : 0);
  return rc ? rc : d;
}

/* y (n x c, ldy, A's dtype) = M⁻¹ y with M = the low-precision factor's product: y rounded to
 * the factor's dtype (OVERFLOW where it does not fit), solved there, widened back. */
static int solve_low(mixed_t *m, void *y, int64_t ldy, int64_t c) {
  const double most = FLT_MAX;
  for (int64_t j = 0; j < c; j++)
    for (int64_t i = 0; i < m->n; i++) {
      const cplx v = load(m->dt, y, at(i, j, ldy));
      if (fabs(creal(v)) > most || fabs(cimag(v)) > most) return OVERFLOW;
      store(m->lo, m->low, at(i, j, m->n), v);
    }
  tessera_matrix_t *W = NULL;
  /* tiled as the factor's solves take it: square tiles of L's for potrs, any width for getrs */
  const int64_t mb = m->L->mb, nb = m->ipiv ? m->nb : mb;
  int rc = tessera_matrix_view(m->ctx, m->lo, m->n, c, mb, nb, m->low, m->n, &W);
  if (!rc)
    rc = m->ipiv ? tessera_tile_getrs((tessera_op_t)m->trans, m->L, m->ipiv, W)
                 : tessera_tile_potrs((tessera_uplo_t)m->uplo, m->L, W);
  const int d = W ? tessera_matrix_destroy(W) : 0;
  if (rc || d) return rc ? rc : d;
  for (int64_t j = 0; j < c; j++)
    for (int64_t i = 0; i < m->n; i++)
      store(m->dt, y, at(i, j, ldy), m->mu * load(m->lo, m->low, at(i, j, m->n)));
  return 0;
}

/* The largest modulus of column j of y (NaN kept). */
static double col_max(tessera_dtype_t dt, const void *y, int64_t ld, int64_t n, int64_t j) {
  double most = 0;
  for (int64_t i = 0; i < n; i++) {
    const double v = cabs(load(dt, y, at(i, j, ld)));
    if (!(v <= most)) most = v;
  }
  return most;
}

/* w = M⁻¹ A v for the GMRES basis (n complex doubles each); y: n of A's dtype, scratch. */
static int apply(mixed_t *m, const cplx *v, cplx *w, void *y, void *q) {
  for (int64_t i = 0; i < m->n; i++) store(m->dt, y, (size_t)i, v[i]);
  int rc = product(m, 1, y, m->n, 0, q, m->n, 1);
  if (!rc) rc = solve_low(m, q, m->n, 1);
  for (int64_t i = 0; i < m->n && !rc; i++) w[i] = load(m->dt, q, (size_t)i);
  return rc;
}

static cplx dot(int64_t n, const cplx *u, const cplx *v) {
  cplx s = 0;
  for (int64_t i = 0; i < n; i++) s += conj(u[i]) * v[i];
  return s;
}

/* One GMRES-IR step on column r (A's dtype, n): d (n complex) approximately solves A d = r by
 * GMRES on M⁻¹ A d = M⁻¹ r from d = 0, until the preconditioned residual falls by GMRES_TOL or
 * the basis holds BASIS vectors. *steps += the iterations. */
static int gmres(mixed_t *m, const void *r, cplx *d, int *steps) {
  const int64_t n = m->n, k1 = BASIS + 1;
  cplx *V = malloc(sizeof *V * (size_t)(n * k1)), *Hm = calloc((size_t)(k1 * BASIS), sizeof *Hm);
  cplx *g = calloc((size_t)k1, sizeof *g), *s = calloc((size_t)BASIS, sizeof *s);
  double *c = calloc((size_t)BASIS, sizeof *c);
  void *y = malloc((size_t)n * m->es), *q = malloc((size_t)n * m->es);
  int rc = V && Hm && g && s && c && y && q ? 0 : TESSERA_ERR_NOMEM;
  if (!rc) { /* V_0 = M⁻¹ r / β */
    memcpy(q, r, (size_t)n * m->es);
    rc = solve_low(m, q, n, 1);
    for (int64_t i = 0; i < n && !rc; i++) V[i] = load(m->dt, q, (size_t)i);
  }
  const double beta = rc ? 0 : sqrt(creal(dot(n, V, V)));
  int k = 0;
  memset(d, 0, sizeof *d * (size_t)n);
  if (!rc && beta > 0) {
    for (int64_t i = 0; i < n; i++) V[i] /= beta;
    g[0] = beta;
    while (k < BASIS && !rc) {
      cplx *w = V + (k + 1) * n, *h = Hm + k * k1;
      if ((rc = apply(m, V + k * n, w, y, q))) break;
      for (int i = 0; i <= k; i++) { /* modified Gram-Schmidt */
        h[i] = dot(n, V + i * n, w);
        for (int64_t l = 0; l < n; l++) w[l] -= h[i] * V[i * n + l];
      }
      h[k + 1] = sqrt(creal(dot(n, w, w)));
      for (int i = 0; i < k; i++) { /* the earlier rotations on the new column */
        const cplx t = c[i] * h[i] + s[i] * h[i + 1];
        h[i + 1] = -conj(s[i]) * h[i] + c[i] * h[i + 1];
        h[i] = t;
      }
      const double a = cabs(h[k]), t = hypot(a, cabs(h[k + 1]));
      c[k] = t > 0 ? a / t : 1;
      s[k] = t == 0 ? 0 : a == 0 ? 1 : (h[k] / a) * conj(h[k + 1]) / t;
      const cplx hk = c[k] * h[k] + s[k] * h[k + 1];
      if (creal(h[k + 1]) > 0)
        for (int64_t l = 0; l < n; l++) w[l] /= creal(h[k + 1]);
      h[k] = hk, h[k + 1] = 0;
      g[k + 1] = -conj(s[k]) * g[k];
      g[k] = c[k] * g[k];
      k++;
      if (!(cabs(g[k]) > GMRES_TOL * beta) || hk == 0) break;
    }
    for (int i = k - 1; i >= 0 && !rc; i--) { /* H y = g, y into g */
      for (int j = i + 1; j < k; j++) g[i] -= Hm[j * k1 + i] * g[j];
      g[i] = Hm[i * k1 + i] != 0 ? g[i] / Hm[i * k1 + i] : 0;
    }
    for (int i = 0; i < k && !rc; i++)
      for (int64_t l = 0; l < n; l++) d[l] += g[i] * V[i * n + l];
  }
  *steps += k;
  free(V), free(Hm), free(g), free(s), free(c), free(y), free(q);
  return rc;
}

/* The refinement of x (n x nrhs) from X = M⁻¹ B: 0 when every column converged within
 * max_iter steps (*iter the steps), NO_CONVERGENCE, OVERFLOW, or a negative status. */
static int refine(mixed_t *m, const tessera_mixed_options_t *o, double cte, const void *b,
                  int64_t ldb, void *x, int64_t ldx, int64_t nrhs, tessera_mixed_result_t *res) {
  const int64_t n = m->n;
  void *r = malloc((size_t)(n * nrhs) * m->es);
  cplx *d = malloc(sizeof *d * (size_t)n);
  int rc = r && d ? 0 : TESSERA_ERR_NOMEM;
  if (!rc) copy_columns(m->es, n, nrhs, b, ldb, x, ldx);
  if (!rc) rc = solve_low(m, x, ldx, nrhs);
  bool gm = o->gmres == 1;
  double last = INFINITY;
  for (int it = 0; !rc; it++) {
    copy_columns(m->es, n, nrhs, b, ldb, r, n);
    if ((rc = product(m, -1, x, ldx, 1, r, n, nrhs))) break;
    double worst = 0; /* the largest ‖r‖ / (‖x‖ cte) over the columns: converged at <= 1 */
    for (int64_t j = 0; j < nrhs; j++) {
      const double q = col_max(m->dt, r, n, n, j) / (col_max(m->dt, x, ldx, n, j) * cte);
      if (!(q <= worst)) worst = q;
    }
    res->iter = it;
    if (worst <= 1) break;
    /* no convergence: the steps spent, a NaN, or GMRES-IR itself no longer reducing the
     * residual (it stays at the level of its own rounding) */
    if (it == o->max_iter || isnan(worst) || (gm && it > 0 && worst > STALL * last)) {
      rc = NO_CONVERGENCE;
      break;
    }
    if (!gm && o->gmres == 0 && it > 0 && worst > 0.5 * last) gm = true; /* classical stalls */
    last = worst;
    if (!gm) {
      if ((rc = solve_low(m, r, n, nrhs))) break;
      for (int64_t j = 0; j < nrhs; j++)
        for (int64_t i = 0; i < n; i++)
          store(m->dt, x, at(i, j, ldx),
                load(m->dt, x, at(i, j, ldx)) + load(m->dt, r, at(i, j, n)));
      continue;
    }
    for (int64_t j = 0; j < nrhs && !rc; j++) {
      rc = gmres(m, (char *)r + at(0, j, n) * m->es, d, &res->gmres_steps);
      for (int64_t i = 0; i < n && !rc; i++)
        store(m->dt, x, at(i, j, ldx), load(m->dt, x, at(i, j, ldx)) + d[i]);
    }
  }
  free(r), free(d);
  return rc;
}

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
                   "%s: argument %d asks a factor on tensor cores (TF32, BF16 or FP16 "
                   "inputs), which needs a context with GPUs",
                   f, argno);
  if (!rc && tessera_context_comm(ctx))
    rc = tsr_error(ctx, TESSERA_ERR_STATE, "%s: runs on one process; this context spans %d", f,
                   tessera_comm_size(tessera_context_comm(ctx)));
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
  copy_columns(tessera_dtype_size(dt), n, nrhs, b, ldb, x, ldx);
  if (!ipiv) return tessera_posv(ctx, uplo, dt, n, nrhs, a, lda, x, ldx);
  if (trans == TESSERA_NOTRANS) return tessera_gesv(ctx, dt, n, nrhs, a, lda, ipiv, x, ldx);
  const int rc = tessera_getrf(ctx, dt, n, n, a, lda, ipiv);
  return rc ? rc : tessera_getrs(ctx, trans, dt, n, nrhs, a, lda, ipiv, x, ldx);
}

/* The product arithmetic of each factor precision on tensor cores (0: none); a single-precision
 * LU's products on GPUs in three TF32 products of split operands (the Cholesky factor's stay in
 * f32: docs/decisions.md). */
static const int math_of[6] = {[TESSERA_FACTOR_TF32] = TSR_MATH_TF32,
                               [TESSERA_FACTOR_BF16] = TSR_MATH_BF16,
                               [TESSERA_FACTOR_HALF] = TSR_MATH_F16};
static int math_for(tessera_factor_t f, bool lu) {
  return f == TESSERA_FACTOR_SINGLE && lu ? TSR_MATH_TF32X3 : math_of[f];
}

/* Orders from which AUTO factors a Cholesky and an LU solve on the GPUs of a context that has
 * them: below, the refinement's fixed costs outweigh what the factor saves
 * (docs/benchmarks.md). */
enum { AUTO_GPU_CHOLESKY = 16384, AUTO_GPU_LU = 32768 };

/* The precision o asks, AUTO resolved by device and matrix (docs/decisions.md): on CPUs alone,
 * single precision for f64 and c128 (twice f64's rate); with GPUs, from the orders above, a
 * Cholesky factor on BF16 tensor cores and an LU factor in single precision on TF32X3 products
 * (an LU on 16-bit inputs leaves the refinement too much to do on general matrices), else the
 * working precision. */
static tessera_factor_t precision_of(tessera_context_t *ctx, tessera_dtype_t dt, bool lu, int64_t n,
                                     const tessera_mixed_options_t *o) {
  if (o->factor != TESSERA_FACTOR_AUTO) return o->factor;
  const bool single = tsr_dtype_single(dt);
  if (tessera_accelerator_count(ctx) == 0)
    return single ? TESSERA_FACTOR_WORKING : TESSERA_FACTOR_SINGLE;
  if (n < (lu ? AUTO_GPU_LU : AUTO_GPU_CHOLESKY) || (lu && single)) return TESSERA_FACTOR_WORKING;
  return lu ? TESSERA_FACTOR_SINGLE : TESSERA_FACTOR_BF16;
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
  /* on a context with accelerators every task of the solve runs on them: the conversion where
   * A's tiles would otherwise stay (the host), A's copies there for the residuals */
  const tessera_scope_t outer = tessera_get_scope(ctx);
  int rc = tessera_accelerator_count(ctx) > 0 ? tessera_set_scope(ctx, tessera_scope_gpus()) : 0;
  m->low = malloc((size_t)(n * nrhs) * m->les);
  /* LU in A's tiling, Cholesky on square tiles; a Cholesky factor on tensor cores of one
   * accelerator as one tile there, which its kernel factors by recursive halving on the tensor
   * cores without the tile loop's task per block */
  tessera_scope_t fit;
  const bool one_tile = !lu && math_of[f] && tessera_accelerator_count(ctx) == 1 &&
                        tsr_fitting_accelerators(ctx, 2 * (size_t)n * (size_t)n * m->les, &fit);
  const int64_t lb = one_tile ? n : m->nb;
  if (!rc)
    rc = tsr_matrix_create_workspace(ctx, m->lo, n, n, lu ? m->A->mb : lb, lu ? m->A->nb : lb,
                                     &m->L);
  /* FP16 inputs: A scaled first by the power of two bringing ‖A‖∞ near a tenth of FP16's
   * largest value, which no entry of A or of its Cholesky factor then exceeds; else ‖A‖∞'s tasks
   * after the factor's */
  const bool half = f == TESSERA_FACTOR_HALF;
  double anrm = 0, *rows = calloc(2 * (size_t)n, sizeof *rows);
  tessera_data_t **R = calloc((size_t)norm_handles(m), sizeof *R);
  if (!rc && (!rows || !R || !m->low))
    rc = tsr_error(ctx, TESSERA_ERR_NOMEM, "mixed-precision solve: out of memory");
  if (!rc && half) {
    rc = norm_begin(m, rows, R);
    const int w = tessera_wait_all(ctx);
    rc = norm_end(m, rows, R, rc ? rc : w, &anrm);
    if (!rc && anrm > 0 && isfinite(anrm)) m->mu = exp2(floor(log2(6550.0 / anrm)));
  }
  if (m->L) m->L->math = math_for(f, lu);
  if (!rc) rc = tsr_pxconvert(m->uplo, m->A, m->mu, m->L);
  if (!rc && !lu) rc = tsr_pxpotrf(m->uplo, m->L, NULL);
  if (!rc && !half) rc = norm_begin(m, rows, R);
  if (m->L) {
    const int info = lu && !rc ? tessera_tile_getrf(m->L, m->ipiv) : tsr_tile_finish(m->L, rc);
    if (info > 0)
      *code = BROKE_DOWN;
    else
      rc = info;
  }
  if (!half && R) rc = norm_end(m, rows, R, rc, &anrm);
  if (!rc && *code == BROKE_DOWN && !half) { /* the failed flow may have skipped the sums: again */
    memset(rows, 0, 2 * (size_t)n * sizeof *rows);
    rc = norm_begin(m, rows, R);
    const int w = tessera_wait_all(ctx);
    rc = norm_end(m, rows, R, rc ? rc : w, &anrm);
  }
  free(rows), free(R);
  const double eps = tsr_dtype_single(m->dt) ? FLT_EPSILON / 2 : DBL_EPSILON / 2;
  const double cte = anrm * eps * sqrt((double)n);
  if (!rc && !(anrm <= FLT_MAX)) *code = OVERFLOW; /* and NaN: the working-precision call says */
  if (!*code && !rc) {
    res->factor = f;
    const int r = refine(m, o, cte, b, ldb, x, ldx, nrhs, res);
    if (r == OVERFLOW || r == NO_CONVERGENCE)
      *code = r;
    else
      rc = r;
  }
  const int d = m->L ? tessera_matrix_destroy(m->L) : 0;
  free(m->low);
  (void)tessera_set_scope(ctx, outer);
  return rc ? rc : d;
}

/* The solve's state for an n x n A of `dtype` (uplo 0: general, LU), tiles nb wide. */
static mixed_t mixed_of(tessera_context_t *ctx, tessera_dtype_t dtype, char uplo, int64_t n,
                        int64_t nb) {
  const tessera_dtype_t lo = tsr_dtype_complex(dtype) ? TESSERA_C64 : TESSERA_F32;
  return (mixed_t){.ctx = ctx,
                   .dt = dtype,
                   .lo = lo,
                   .uplo = uplo,
                   .n = n,
                   .nb = nb,
                   .es = tessera_dtype_size(dtype),
                   .les = tessera_dtype_size(lo),
                   .trans = 'N',
                   .mu = 1};
}

/* What a solve that fell back to working precision (reason `code`) reports. */
static tessera_mixed_result_t fell_back(const tessera_mixed_result_t *res, int code) {
  return (tessera_mixed_result_t){
      .factor = TESSERA_FACTOR_WORKING, .iter = code, .gmres_steps = res->gmres_steps};
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
  if (rc || n == 0 || nrhs == 0) return rc;
  const tessera_factor_t f = precision_of(ctx, dtype, lu, n, &o);
  if (f == TESSERA_FACTOR_WORKING)
    return fallback(ctx, uplo, o.trans, dtype, n, nrhs, a, lda, lu ? ipiv : NULL, b, ldb, x, ldx);
  mixed_t m = mixed_of(ctx, dtype, lu ? 0 : (char)uplo, n,
                       lu ? tessera_tile_for_lu(ctx, n, n) : tessera_tile_for(ctx, n));
  m.ipiv = lu ? ipiv : NULL;
  m.trans = (char)o.trans;
  /* A's tiles reach the accelerators at the link's speed only from pinned memory */
  const bool pinned = tessera_accelerator_count(ctx) > 0 &&
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
  const tessera_factor_t fp = precision_of(ctx, A->dtype, lu, A->m, &o);
  const int64_t n = A->m, nrhs = B->n;
  mixed_t m = mixed_of(ctx, A->dtype, lu ? 0 : (char)uplo, n, A->nb);
  m.A = A;
  m.ipiv = lu ? ipiv : NULL;
  m.trans = (char)o.trans;
  int code = 0;
  if (fp != TESSERA_FACTOR_WORKING) {
    /* the refinement's vectors on the host, B's columns fetched once and X's stored once */
    void *b = malloc((size_t)(n * nrhs) * m.es), *x = malloc((size_t)(n * nrhs) * m.es);
    if (!b || !x) rc = tsr_error(ctx, TESSERA_ERR_NOMEM, "%s: out of memory", f);
    if (!rc) rc = tessera_matrix_export(B, b, n);
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
