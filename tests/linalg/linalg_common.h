/* Helpers of the linear-algebra tests, for all four dtypes through one code path: element
 * access by dtype, random Hermitian positive definite matrices, norms, and residuals computed
 * in double (complex) precision with CBLAS on promoted copies. Header only.
 *
 * The including file defines _POSIX_C_SOURCE before its first system include and includes
 * cmocka first.
 */
#ifndef TESSERA_LINALG_COMMON_H
#define TESSERA_LINALG_COMMON_H

#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include <tessera/tessera.h>

#include "../test_common.h"

typedef double complex zc_t;

static const tessera_dtype_t lc_dtypes[TESSERA_NUM_DTYPES] = {TESSERA_F32, TESSERA_F64, TESSERA_C64,
                                                              TESSERA_C128};
static const tessera_uplo_t lc_uplos[2] = {TESSERA_LOWER, TESSERA_UPPER};

static inline size_t lc_esize(tessera_dtype_t dt) {
  static const size_t s[4] = {sizeof(float), sizeof(double), sizeof(float complex),
                              sizeof(double complex)};
  return s[dt];
}
static inline int lc_is_complex(tessera_dtype_t dt) {
  return dt == TESSERA_C64 || dt == TESSERA_C128;
}
/** Machine epsilon of the dtype's precision. */
static inline double lc_eps(tessera_dtype_t dt) {
  return (dt == TESSERA_F32 || dt == TESSERA_C64) ? (double)FLT_EPSILON : DBL_EPSILON;
}
static inline const char *lc_name(tessera_dtype_t dt) {
  static const char *n[4] = {"f32", "f64", "c64", "c128"};
  return n[dt];
}

static inline zc_t lc_get(tessera_dtype_t dt, const void *a, size_t i) {
  switch (dt) {
  case TESSERA_F32:
    return ((const float *)a)[i];
  case TESSERA_F64:
    return ((const double *)a)[i];
  case TESSERA_C64:
    return ((const float complex *)a)[i];
  default:
    return ((const double complex *)a)[i];
  }
}

/** Stores v (its real part for real dtypes), rounded to the dtype. */
static inline void lc_set(tessera_dtype_t dt, void *a, size_t i, zc_t v) {
  switch (dt) {
  case TESSERA_F32:
    ((float *)a)[i] = (float)creal(v);
    break;
  case TESSERA_F64:
    ((double *)a)[i] = creal(v);
    break;
  case TESSERA_C64:
    ((float complex *)a)[i] = CMPLXF((float)creal(v), (float)cimag(v));
    break;
  default:
    ((double complex *)a)[i] = v;
    break;
  }
}

/** A zeroed array of `count` elements (never NULL, also for count 0). */
static inline void *lc_alloc(tessera_dtype_t dt, size_t count) {
  void *p = calloc(count + 1, lc_esize(dt));
  if (!p) abort();
  return p;
}
static inline void *lc_dup(tessera_dtype_t dt, const void *a, size_t count) {
  void *p = lc_alloc(dt, count);
  memcpy(p, a, count * lc_esize(dt));
  return p;
}
static inline zc_t *lc_zalloc(size_t count) {
  zc_t *p = calloc(count + 1, sizeof(zc_t));
  if (!p) abort();
  return p;
}

/** Fills `count` elements with quiet NaN (both parts for complex dtypes). */
static inline void lc_fill_nan(tessera_dtype_t dt, void *a, size_t count) {
  for (size_t i = 0; i < count; i++) lc_set(dt, a, i, CMPLX(NAN, NAN));
}

/** A random scalar: uniform in [-1, 1) (both parts for complex dtypes). */
static inline zc_t lc_rand(tessera_dtype_t dt, tt_rng_t *r) {
  double re = tt_uniform(r);
  return lc_is_complex(dt) ? CMPLX(re, tt_uniform(r)) : CMPLX(re, 0.0);
}

/** Random entries in the rows x cols block of `a` (leading dimension ld). */
static inline void lc_fill_random(tessera_dtype_t dt, void *a, int64_t rows, int64_t cols,
                                  int64_t ld, tt_rng_t *r) {
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++) lc_set(dt, a, (size_t)(i + j * ld), lc_rand(dt, r));
}

/** The rows x cols block of `a` as double complex, leading dimension rows. */
static inline zc_t *lc_promote(tessera_dtype_t dt, int64_t rows, int64_t cols, const void *a,
                               int64_t ld) {
  zc_t *z = lc_zalloc((size_t)(rows * cols));
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++) z[i + j * rows] = lc_get(dt, a, (size_t)(i + j * ld));
  return z;
}

static inline int lc_in_tri(tessera_uplo_t uplo, int64_t i, int64_t j) {
  return uplo == TESSERA_LOWER ? i >= j : i <= j;
}

/** Writes a random Hermitian positive definite n x n matrix into the `uplo` triangle of `a`
 *  (leading dimension lda); every other element of the lda x n array is NaN. Returns the
 *  full matrix (both triangles) as double complex, leading dimension n. */
static inline zc_t *lc_gen_hpd(tessera_dtype_t dt, tessera_uplo_t uplo, int64_t n, void *a,
                               int64_t lda, tt_rng_t *r) {
  lc_fill_nan(dt, a, (size_t)(lda * n));
  zc_t *full = lc_zalloc((size_t)(n * n));
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) {
      if (!lc_in_tri(uplo, i, j)) continue;
      zc_t v = (i == j) ? CMPLX(2.0 * (double)n + 1.0 + tt_uniform(r), 0.0) : lc_rand(dt, r);
      lc_set(dt, a, (size_t)(i + j * lda), v);
      v = lc_get(dt, a, (size_t)(i + j * lda)); /* as rounded to the dtype */
      full[i + j * n] = v;
      full[j + i * n] = conj(v);
    }
  return full;
}

/** Number of elements of the ld x cols arrays a and b that differ bytewise outside the
 *  referenced part: the rows x cols block when uplo is 0, else its `uplo` triangle. */
static inline size_t lc_diff_outside(tessera_dtype_t dt, int uplo, int64_t rows, int64_t cols,
                                     const void *a, const void *b, int64_t ld) {
  size_t es = lc_esize(dt), bad = 0;
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < ld; i++) {
      int inside = i < rows && (uplo == 0 || lc_in_tri((tessera_uplo_t)uplo, i, j));
      size_t off = (size_t)(i + j * ld) * es;
      if (!inside && memcmp((const char *)a + off, (const char *)b + off, es) != 0) bad++;
    }
  return bad;
}

static inline double lc_norm_fro(const zc_t *z, size_t count) {
  double s = 0;
  for (size_t i = 0; i < count; i++) s += creal(z[i]) * creal(z[i]) + cimag(z[i]) * cimag(z[i]);
  return sqrt(s);
}

/** An eigensolver's k pairs for the Hermitian `full` (n x n): the vectors v (n x k) and their
 *  eigenvalues lambda; the residual ‖full v − v diag(lambda)‖_F into *res and the orthogonality
 *  ‖I − vᴴ v‖_F into *orth, both unscaled. */
static inline void lc_eig_pairs_norms(int64_t n, int64_t k, const zc_t *full, const zc_t *v,
                                      const double *lambda, double *res, double *orth) {
  zc_t *av = lc_zalloc((size_t)(n * k) + 1), *vv = lc_zalloc((size_t)(k * k) + 1);
  const zc_t one = 1, zero = 0;
  if (n > 0 && k > 0) {
    cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)k, (int)n, &one, full,
                (int)n, v, (int)n, &zero, av, (int)n);
    cblas_zgemm(CblasColMajor, CblasConjTrans, CblasNoTrans, (int)k, (int)k, (int)n, &one, v,
                (int)n, v, (int)n, &zero, vv, (int)k);
  }
  for (int64_t j = 0; j < k; j++) {
    for (int64_t i = 0; i < n; i++) av[i + j * n] -= v[i + j * n] * lambda[j];
    vv[j + j * k] -= 1;
  }
  *res = lc_norm_fro(av, (size_t)(n * k));
  *orth = lc_norm_fro(vv, (size_t)(k * k));
  free(av), free(vv);
}

/** lc_eig_pairs_norms of all n pairs (v n x n). */
static inline void lc_eig_vector_norms(int64_t n, const zc_t *full, const zc_t *v,
                                       const double *lambda, double *res, double *orth) {
  lc_eig_pairs_norms(n, n, full, v, lambda, res, orth);
}

/** LAPACK's eigenvalues (zheev, which must succeed, on a copy of the Hermitian `full`, n x n)
 *  into ref (n). */
static inline void lc_eig_lapack_values(int64_t n, const zc_t *full, double *ref) {
  zc_t *copy = lc_zalloc((size_t)(n * n) + 1);
  memcpy(copy, full, (size_t)(n * n) * sizeof *copy);
  if (n > 0)
    assert_int_equal(LAPACKE_zheev(LAPACK_COL_MAJOR, 'N', 'L', (lapack_int)n,
                                   (lapack_complex_double *)copy, (lapack_int)n, ref),
                     0);
  free(copy);
}

/** The largest |lambda_i − LAPACK's eigenvalue i| of the Hermitian `full` (n x n). */
static inline double lc_eig_value_error(int64_t n, const zc_t *full, const double *lambda) {
  double *ref = (double *)calloc((size_t)n + 1, sizeof *ref), worst = 0;
  lc_eig_lapack_values(n, full, ref);
  for (int64_t i = 0; i < n; i++) worst = fmax(worst, fabs(lambda[i] - ref[i]));
  free(ref);
  return worst;
}

/** ‖A − L Lᴴ‖_F / (n ‖A‖_F ε) (lower) or ‖A − Uᴴ U‖_F / (n ‖A‖_F ε) (upper), where the
 *  factor is the `uplo` triangle of `f`; INFINITY when its diagonal is not real positive. */
static inline double lc_potrf_resid(tessera_dtype_t dt, tessera_uplo_t uplo, int64_t n,
                                    const zc_t *full, const void *f, int64_t lda) {
  if (n == 0) return 0;
  zc_t *L = lc_zalloc((size_t)(n * n)), *C = lc_zalloc((size_t)(n * n));
  memcpy(C, full, (size_t)(n * n) * sizeof *C);
  double res = 0;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++)
      if (lc_in_tri(uplo, i, j)) L[i + j * n] = lc_get(dt, f, (size_t)(i + j * lda));
  for (int64_t i = 0; i < n; i++)
    if (!(creal(L[i + i * n]) > 0) || cimag(L[i + i * n]) != 0) res = INFINITY;
  cblas_zherk(CblasColMajor, uplo == TESSERA_LOWER ? CblasLower : CblasUpper,
              uplo == TESSERA_LOWER ? CblasNoTrans : CblasConjTrans, (int)n, (int)n, -1.0, L,
              (int)n, 1.0, C, (int)n);
  double s = 0;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++)
      if (lc_in_tri(uplo, i, j)) {
        double e = cabs(C[i + j * n]);
        s += (i == j ? 1.0 : 2.0) * e * e;
      }
  if (res == 0) res = sqrt(s) / ((double)n * lc_norm_fro(full, (size_t)(n * n)) * lc_eps(dt));
  free(L);
  free(C);
  return res;
}

/** The full Hermitian matrix whose `uplo` triangle `a` holds (double complex, ld n). */
static inline zc_t *lc_full_from_triangle(tessera_dtype_t dt, tessera_uplo_t uplo, int64_t n,
                                          const void *a, int64_t lda) {
  zc_t *x = lc_zalloc((size_t)(n * n));
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++)
      if (lc_in_tri(uplo, i, j)) {
        zc_t v = lc_get(dt, a, (size_t)(i + j * lda));
        x[i + j * n] = v;
        x[j + i * n] = conj(v);
      }
  return x;
}

/** ‖A X − I‖_F / (n ‖A‖_F ‖X‖_F ε): X the inverse of the full matrix A. */
static inline double lc_inverse_resid(tessera_dtype_t dt, int64_t n, const zc_t *full,
                                      const zc_t *x) {
  zc_t *r = lc_zalloc((size_t)(n * n)), one = 1.0, zero = 0.0;
  cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, &one, full, (int)n,
              x, (int)n, &zero, r, (int)n);
  for (int64_t i = 0; i < n; i++) r[i + i * n] -= 1.0;
  double res = lc_norm_fro(r, (size_t)(n * n)) / ((double)n * lc_norm_fro(full, (size_t)(n * n)) *
                                                  lc_norm_fro(x, (size_t)(n * n)) * lc_eps(dt));
  free(r);
  return res;
}

/** Backward error ‖A X − B‖_F / (‖A‖_F ‖X‖_F max(n,1) ε) of the n x nrhs solution x (leading
 *  dimension ldx) for the full matrix `full` and right-hand sides `b` (double complex, ld n). */
static inline double lc_solve_resid(tessera_dtype_t dt, int64_t n, int64_t nrhs, const zc_t *full,
                                    const void *x, int64_t ldx, const zc_t *b) {
  if (n == 0 || nrhs == 0) return 0;
  zc_t *X = lc_promote(dt, n, nrhs, x, ldx), *R = lc_zalloc((size_t)(n * nrhs));
  memcpy(R, b, (size_t)(n * nrhs) * sizeof *R);
  zc_t one = 1.0, mone = -1.0;
  cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)nrhs, (int)n, &mone, full,
              (int)n, X, (int)n, &one, R, (int)n);
  double xn = lc_norm_fro(X, (size_t)(n * nrhs)), an = lc_norm_fro(full, (size_t)(n * n));
  double res = lc_norm_fro(R, (size_t)(n * nrhs)) / (an * xn * (double)n * lc_eps(dt));
  free(X);
  free(R);
  return res;
}

/** LAPACKE_?potrf of the dtype. */
static inline int lc_lapack_potrf(tessera_dtype_t dt, tessera_uplo_t uplo, int64_t n, void *a,
                                  int64_t lda) {
  char u = (char)uplo;
  lapack_int nn = (lapack_int)n, ld = (lapack_int)lda;
  switch (dt) {
  case TESSERA_F32:
    return (int)LAPACKE_spotrf(LAPACK_COL_MAJOR, u, nn, a, ld);
  case TESSERA_F64:
    return (int)LAPACKE_dpotrf(LAPACK_COL_MAJOR, u, nn, a, ld);
  case TESSERA_C64:
    return (int)LAPACKE_cpotrf(LAPACK_COL_MAJOR, u, nn, a, ld);
  default:
    return (int)LAPACKE_zpotrf(LAPACK_COL_MAJOR, u, nn, a, ld);
  }
}

/** A context whose LAPACK-style calls use tiles of `tile` (GPUs as available). */
/* The tests' configuration: tiles of `tile`, 2 CPU workers in quick mode (the sanitizer builds),
 * else 3; a test may change more before lc_init. */
static inline void lc_config(int tile, tessera_config_t *cfg) {
  tessera_config_init(cfg);
  cfg->tile_size = tile;
  cfg->cpu_workers = tt_quick() ? 2 : 3;
}

/* The running test's context. A test that fails leaves it alive (cmocka leaves the test where
 * it failed); the next context made finalizes it first, so that its device pools do not fail
 * every later test of the file. */
static tessera_context_t *lc_live;

static inline tessera_context_t *lc_init(const tessera_config_t *cfg) {
  if (lc_live) (void)tessera_finalize(lc_live);
  lc_live = NULL;
  tessera_context_t *ctx = NULL;
  int rc = tessera_init(&ctx, cfg);
  if (rc != 0 || !ctx) fail_msg("tessera_init(tile %d) = %d", cfg->tile_size, rc);
  return lc_live = ctx;
}

static inline tessera_context_t *lc_context(int tile) {
  tessera_config_t cfg;
  lc_config(tile, &cfg);
  tessera_context_t *ctx = lc_init(&cfg);
  if (tessera_default_tile(ctx) != tile)
    fail_msg("default tile %d, asked %d", tessera_default_tile(ctx), tile);
  return ctx;
}

static inline void lc_finalize(tessera_context_t *ctx) {
  if (ctx == lc_live) lc_live = NULL;
  assert_int_equal(tessera_finalize(ctx), 0);
}

/** The last error of ctx must say something. */
static inline void lc_assert_error(const tessera_context_t *ctx) {
  const char *e = tessera_last_error(ctx);
  assert_non_null(e);
  assert_true(strlen(e) > 0);
}

/** The sizes every routine is tried on for tile size nb. */
static inline int lc_sizes(int nb, int64_t *s) {
  int64_t v[8] = {0, 1, 2, nb - 1, nb, nb + 1, 3 * nb + 5, (5 * nb) / 2 + 1};
  memcpy(s, v, sizeof v);
  return 8;
}

/** One case of a sweep: a dtype, a triangle, an order and the seed of its random data. */
typedef void (*lc_case_fn)(tessera_context_t *ctx, tessera_dtype_t dt, tessera_uplo_t uplo,
                           int64_t n, uint64_t seed, void *arg);

/** Runs `fn` on every dtype, both triangles and every order lc_sizes(nb) gives, each case with
 *  its own seed; `arg` is passed through. */
static inline void lc_sweep(tessera_context_t *ctx, int nb, lc_case_fn fn, void *arg) {
  int64_t sizes[8];
  int ns = lc_sizes(nb, sizes);
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int u = 0; u < 2; u++)
      for (int s = 0; s < ns; s++)
        fn(ctx, lc_dtypes[d], lc_uplos[u], sizes[s], (uint64_t)(nb * 1000 + d * 100 + u * 10 + s),
           arg);
}

#endif
