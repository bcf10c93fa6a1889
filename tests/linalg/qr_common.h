/* Checks of a Householder QR shared by the QR tests (test_geqrf.c, test_qr_apply.c,
 * tests/mpi/test_dist_qr.c): LAPACK's orgqr / ungqr by dtype, and the residual and orthogonality
 * of a factorization with Q formed by it. Header only; the including file includes cmocka
 * first. */
#ifndef TESSERA_QR_COMMON_H
#define TESSERA_QR_COMMON_H

#include "linalg_common.h"

/** LAPACK's orgqr / ungqr of the dtype: the first n columns of Q from the k reflectors in a. */
static inline int qr_lapack_ungqr(tessera_dtype_t dt, int64_t m, int64_t n, int64_t k, void *a,
                                  int64_t lda, const void *tau) {
  const lapack_int M = (lapack_int)m, N = (lapack_int)n, K = (lapack_int)k, ld = (lapack_int)lda;
  switch (dt) {
  case TESSERA_F32:
    return (int)LAPACKE_sorgqr(LAPACK_COL_MAJOR, M, N, K, a, ld, tau);
  case TESSERA_F64:
    return (int)LAPACKE_dorgqr(LAPACK_COL_MAJOR, M, N, K, a, ld, tau);
  case TESSERA_C64:
    return (int)LAPACKE_cungqr(LAPACK_COL_MAJOR, M, N, K, a, ld, tau);
  default:
    return (int)LAPACKE_zungqr(LAPACK_COL_MAJOR, M, N, K, a, ld, tau);
  }
}

/** The residual and orthogonality of the factorization f (lda) with tau of the m x n matrix
 * whose promoted form is `full`. */
static inline void qr_check(tessera_dtype_t dt, int64_t m, int64_t n, const zc_t *full,
                            const void *f, int64_t lda, const void *tau, const char *what) {
  const int64_t k = m < n ? m : n;
  if (k == 0) return;
  void *q = lc_dup(dt, f, (size_t)(lda * n));
  assert_int_equal(qr_lapack_ungqr(dt, m, k, k, q, lda, tau), 0);
  zc_t *Q = lc_promote(dt, m, k, q, lda), *R = lc_zalloc((size_t)(k * n));
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i <= j && i < k; i++) R[i + j * k] = lc_get(dt, f, (size_t)(i + j * lda));
  zc_t *D = lc_zalloc((size_t)(m * n)), *E = lc_zalloc((size_t)(k * k));
  memcpy(D, full, (size_t)(m * n) * sizeof *D);
  const zc_t one = 1.0, mone = -1.0;
  cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, &mone, Q, (int)m,
              R, (int)k, &one, D, (int)m);
  for (int64_t i = 0; i < k; i++) E[i + i * k] = 1.0;
  cblas_zgemm(CblasColMajor, CblasConjTrans, CblasNoTrans, (int)k, (int)k, (int)m, &mone, Q, (int)m,
              Q, (int)m, &one, E, (int)k);
  const double an = lc_norm_fro(full, (size_t)(m * n)), mx = (double)(m > n ? m : n);
  const double res = an > 0 ? lc_norm_fro(D, (size_t)(m * n)) / (an * mx * lc_eps(dt)) : 0;
  const double orth = lc_norm_fro(E, (size_t)(k * k)) / ((double)m * lc_eps(dt));
  if (!(res < 10) || !(orth < 10))
    fail_msg("%s %s m %lld n %lld: residual %g, orthogonality %g", what, lc_name(dt), (long long)m,
             (long long)n, res, orth);
  free(q), free(Q), free(R), free(D), free(E);
}

#endif
