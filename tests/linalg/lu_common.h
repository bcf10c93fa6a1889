/* Helpers of the LU tests (test_getrf.c, tests/mpi/test_dist_getrf.c): LAPACKE's getrf and
 * laswp by dtype, generated general matrices (random, or with pivots that no order of the
 * updates can change), the residual of P A = L U and the backward error of op(A) X = B. Header
 * only, over linalg_common.h.
 *
 * The including file defines _POSIX_C_SOURCE before its first system include and includes
 * cmocka first.
 */
#ifndef TESSERA_LU_COMMON_H
#define TESSERA_LU_COMMON_H

#include "linalg_common.h"

/* LAPACKE_?getrf / ?laswp of the dtype. */
static inline int lapack_getrf(tessera_dtype_t dt, int64_t m, int64_t n, void *a, int64_t lda,
                               int *ipiv) {
  lapack_int mm = (lapack_int)m, nn = (lapack_int)n, ld = (lapack_int)lda;
  switch (dt) {
  case TESSERA_F32:
    return (int)LAPACKE_sgetrf(LAPACK_COL_MAJOR, mm, nn, a, ld, ipiv);
  case TESSERA_F64:
    return (int)LAPACKE_dgetrf(LAPACK_COL_MAJOR, mm, nn, a, ld, ipiv);
  case TESSERA_C64:
    return (int)LAPACKE_cgetrf(LAPACK_COL_MAJOR, mm, nn, a, ld, ipiv);
  default:
    return (int)LAPACKE_zgetrf(LAPACK_COL_MAJOR, mm, nn, a, ld, ipiv);
  }
}

static inline void lapack_laswp(tessera_dtype_t dt, int64_t n, void *a, int64_t lda, int k1, int k2,
                                const int *ipiv, int incx) {
  lapack_int nn = (lapack_int)n, ld = (lapack_int)lda;
  switch (dt) {
  case TESSERA_F32:
    LAPACKE_slaswp(LAPACK_COL_MAJOR, nn, a, ld, k1, k2, ipiv, incx);
    break;
  case TESSERA_F64:
    LAPACKE_dlaswp(LAPACK_COL_MAJOR, nn, a, ld, k1, k2, ipiv, incx);
    break;
  case TESSERA_C64:
    LAPACKE_claswp(LAPACK_COL_MAJOR, nn, a, ld, k1, k2, ipiv, incx);
    break;
  default:
    LAPACKE_zlaswp(LAPACK_COL_MAJOR, nn, a, ld, k1, k2, ipiv, incx);
    break;
  }
}

/* An m x n matrix (lda = m + 3, NaN padding). `dominant`: a permuted matrix whose pivots are
 * unambiguous (row p[j] carries 4 (m + n) + j in column j, every other entry in [-1, 1)), so
 * partial pivoting picks p[j] at step j whatever the order of the updates. */
typedef struct {
  tessera_dtype_t dt;
  int64_t m, n, lda;
  void *a;
  zc_t *full; /* promoted, ld m */
} mat_t;

static inline mat_t lu_gen(tessera_dtype_t dt, int64_t m, int64_t n, int dominant, uint64_t seed) {
  mat_t x = {dt, m, n, m + 3, NULL, NULL};
  tt_rng_t r = tt_rng(seed);
  x.a = lc_alloc(dt, (size_t)(x.lda * n));
  lc_fill_nan(dt, x.a, (size_t)(x.lda * n));
  lc_fill_random(dt, x.a, m, n, x.lda, &r);
  if (dominant) {
    int64_t *p = malloc((size_t)(m + 1) * sizeof *p);
    for (int64_t i = 0; i < m; i++) p[i] = i;
    for (int64_t i = m - 1; i > 0; i--) { /* a random permutation */
      int64_t j = (int64_t)((tt_uniform(&r) + 1) / 2 * (double)(i + 1));
      if (j > i) j = i;
      int64_t t = p[i];
      p[i] = p[j], p[j] = t;
    }
    for (int64_t j = 0; j < n && j < m; j++)
      lc_set(dt, x.a, (size_t)(p[j] + j * x.lda), (double)(4 * (m + n) + j));
    free(p);
  }
  x.full = lc_promote(dt, m, n, x.a, x.lda);
  return x;
}

static inline void lu_mat_free(mat_t *x) {
  free(x->a);
  free(x->full);
}

/* ‖P A − L U‖_F / (max(m, n) ‖A‖_F ε) for the factors f (lda) and pivots ipiv. */
static inline double lu_resid(const mat_t *x, const void *f, const int *ipiv) {
  const int64_t m = x->m, n = x->n, k = m < n ? m : n;
  if (k == 0) return 0;
  zc_t *PA = lc_zalloc((size_t)(m * n)), *L = lc_zalloc((size_t)(m * k)),
       *U = lc_zalloc((size_t)(k * n));
  memcpy(PA, x->full, (size_t)(m * n) * sizeof *PA);
  for (int64_t i = 0; i < k; i++) {
    const int64_t p = ipiv[i] - 1;
    for (int64_t j = 0; j < n; j++) {
      zc_t t = PA[i + j * m];
      PA[i + j * m] = PA[p + j * m];
      PA[p + j * m] = t;
    }
  }
  for (int64_t j = 0; j < k; j++)
    for (int64_t i = 0; i < m; i++)
      L[i + j * m] = i == j ? 1.0 : i > j ? lc_get(x->dt, f, (size_t)(i + j * x->lda)) : 0.0;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < k && i <= j; i++)
      U[i + j * k] = lc_get(x->dt, f, (size_t)(i + j * x->lda));
  zc_t one = 1.0, mone = -1.0;
  cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, &mone, L, (int)m,
              U, (int)k, &one, PA, (int)m);
  const int64_t mx = m > n ? m : n;
  double res = lc_norm_fro(PA, (size_t)(m * n)) /
               ((double)mx * lc_norm_fro(x->full, (size_t)(m * n)) * lc_eps(x->dt));
  free(PA);
  free(L);
  free(U);
  return res;
}

/* Backward error of op(A) X = B (A n x n promoted in `full`). */
static inline double op_resid(tessera_dtype_t dt, tessera_op_t trans, int64_t n, int64_t nrhs,
                              const zc_t *full, const void *x, int64_t ldx, const zc_t *b) {
  zc_t *A = lc_zalloc((size_t)(n * n));
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) {
      zc_t v = trans == TESSERA_NOTRANS ? full[i + j * n] : full[j + i * n];
      A[i + j * n] = trans == TESSERA_CONJTRANS ? conj(v) : v;
    }
  double r = lc_solve_resid(dt, n, nrhs, A, x, ldx, b);
  free(A);
  return r;
}

#endif
