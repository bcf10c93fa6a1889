/* tessera CLI — relative residuals of Cholesky, LU and QR factorizations and of solves, by
 * probe vectors. */
#include "residual.h"

#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

double residual_eps(tessera_dtype_t dtype) {
  return dtype == TESSERA_F32 || dtype == TESSERA_C64 ? FLT_EPSILON : DBL_EPSILON;
}

double residual_relative(double num, double den) {
  return num == 0 ? 0 : den > 0 ? num / den : INFINITY;
}

int64_t residual_nonfinite_column(tessera_dtype_t dtype, int64_t m, int64_t n, const void *a,
                                  int64_t lda) {
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++) {
      double re, im;
      elem_get(dtype, a, (size_t)(i + j * lda), &re, &im);
      if (!isfinite(re) || !isfinite(im)) return j + 1;
    }
  return 0;
}

/** x = op(T) x, T the `uplo` triangle of the n x n `a` (diagonal `diag`). */
static void trmv(tessera_dtype_t dtype, enum CBLAS_UPLO uplo, enum CBLAS_TRANSPOSE trans,
                 enum CBLAS_DIAG diag, int n, const void *a, int lda, void *x) {
  /* clang-format off */
  switch (dtype) {
  case TESSERA_F32: cblas_strmv(CblasColMajor, uplo, trans, diag, n, a, lda, x, 1); break;
  case TESSERA_F64: cblas_dtrmv(CblasColMajor, uplo, trans, diag, n, a, lda, x, 1); break;
  case TESSERA_C64: cblas_ctrmv(CblasColMajor, uplo, trans, diag, n, a, lda, x, 1); break;
  case TESSERA_C128: cblas_ztrmv(CblasColMajor, uplo, trans, diag, n, a, lda, x, 1); break;
  }
  /* clang-format on */
}

/** c = a b + beta c (beta 1 or −1), with a m x k, b k x n, c m x n. */
static void gemm_acc(tessera_dtype_t dtype, int m, int n, int k, const void *a, int lda,
                     const void *b, int ldb, double beta, void *c, int ldc) {
  const float one_s[2] = {1, 0}, beta_s[2] = {(float)beta, 0};
  const double one_d[2] = {1, 0}, beta_d[2] = {beta, 0};
  enum CBLAS_TRANSPOSE nt = CblasNoTrans;
  switch (dtype) {
  case TESSERA_F32:
    cblas_sgemm(CblasColMajor, nt, nt, m, n, k, one_s[0], a, lda, b, ldb, beta_s[0], c, ldc);
    break;
  case TESSERA_F64:
    cblas_dgemm(CblasColMajor, nt, nt, m, n, k, one_d[0], a, lda, b, ldb, beta_d[0], c, ldc);
    break;
  case TESSERA_C64:
    cblas_cgemm(CblasColMajor, nt, nt, m, n, k, one_s, a, lda, b, ldb, beta_s, c, ldc);
    break;
  case TESSERA_C128:
    cblas_zgemm(CblasColMajor, nt, nt, m, n, k, one_d, a, lda, b, ldb, beta_d, c, ldc);
    break;
  }
}

/** Norm `which` ('1': largest column sum of moduli; 'F': Frobenius) of the m x n `a`, by
 *  LAPACK's lange (its _work form: no scan for NaN first, which the plain form answers with an
 *  error code); NaN propagates. */
static double lange(tessera_dtype_t dtype, char which, int64_t m, int64_t n, const void *a,
                    int64_t lda) {
  if (m == 0 || n == 0) return 0;
  const lapack_int r = (lapack_int)m, c = (lapack_int)n, ld = (lapack_int)lda;
  switch (dtype) {
  case TESSERA_F32:
    return LAPACKE_slange_work(LAPACK_COL_MAJOR, which, r, c, a, ld, NULL);
  case TESSERA_F64:
    return LAPACKE_dlange_work(LAPACK_COL_MAJOR, which, r, c, a, ld, NULL);
  case TESSERA_C64:
    return LAPACKE_clange_work(LAPACK_COL_MAJOR, which, r, c, a, ld, NULL);
  case TESSERA_C128:
    return LAPACKE_zlange_work(LAPACK_COL_MAJOR, which, r, c, a, ld, NULL);
  }
  return NAN;
}

static double norm1(tessera_dtype_t dtype, int64_t m, int64_t n, const void *a, int64_t lda) {
  return lange(dtype, '1', m, n, a, lda);
}

double residual_fro(tessera_dtype_t dtype, int64_t m, int64_t n, const void *a, int64_t lda) {
  return lange(dtype, 'F', m, n, a, lda);
}

void residual_scalars(tessera_dtype_t dtype, double mone[2], double one[2]) {
  memset(mone, 0, 2 * sizeof *mone), memset(one, 0, 2 * sizeof *one);
  elem_set(dtype, mone, 0, -1, 0);
  elem_set(dtype, one, 0, 1, 0);
}

/** Sum of the moduli of the m elements of column j of `a`. */
static double col_norm1(tessera_dtype_t dtype, int64_t m, const void *a, int64_t lda, int64_t j) {
  return norm1(dtype, m, 1, (const char *)a + (size_t)(j * lda) * tessera_dtype_size(dtype), lda);
}

/** rnorm / (anorm xnorm n eps), 0 for an exact zero, infinite for a zero denominator. */
static double ratio(double rnorm, double anorm, double xnorm, int64_t n, double eps) {
  double den = anorm * xnorm * (double)n * eps;
  if (rnorm == 0) return 0;
  return den > 0 ? rnorm / den : INFINITY;
}

double residual_mv(tessera_dtype_t dtype, int64_t m, int64_t n, const void *a, int64_t lda,
                   const void *v, void *w, int64_t scale) {
  if (m == 0 || n == 0) return 0;
  gemm_acc(dtype, (int)m, 1, (int)n, a, (int)lda, v, (int)n, -1, w, (int)m);
  return ratio(norm1(dtype, m, 1, w, m), norm1(dtype, m, n, a, lda), norm1(dtype, n, 1, v, n),
               scale, residual_eps(dtype));
}

void residual_upper_mv(tessera_dtype_t dtype, int64_t m, int64_t n, const void *f, int64_t ldf,
                       const void *v, void *y) {
  const int64_t k = m < n ? m : n;
  const size_t es = tessera_dtype_size(dtype);
  memset((char *)y + (size_t)k * es, 0, (size_t)(m - k) * es);
  if (k == 0) return;
  memcpy(y, v, (size_t)k * es);
  trmv(dtype, CblasUpper, CblasNoTrans, CblasNonUnit, (int)k, f, (int)ldf, y);
  if (n > k) /* R's columns right of its triangle: y += F(0 : k, k : n) v(k : n) */
    gemm_acc(dtype, (int)k, 1, (int)(n - k), (const char *)f + (size_t)(k * ldf) * es, (int)ldf,
             (const char *)v + (size_t)k * es, (int)(n - k), 1, y, (int)k);
}

double residual_potrf(tessera_dtype_t dtype, tessera_uplo_t uplo, int64_t n, const void *a,
                      int64_t lda, const void *f, int64_t ldf) {
  if (n == 0) return 0;
  size_t bytes = (size_t)n * tessera_dtype_size(dtype);
  void *v = malloc(bytes), *w = malloc(bytes);
  if (!v || !w) {
    free(v);
    free(w);
    return -1;
  }
  gen_dense(dtype, n, 1, v, n, GEN_SEED_V);
  memcpy(w, v, bytes);
  int lower = uplo == TESSERA_LOWER;
  enum CBLAS_UPLO cu = lower ? CblasLower : CblasUpper;
  trmv(dtype, cu, lower ? CblasConjTrans : CblasNoTrans, CblasNonUnit, (int)n, f, (int)ldf, w);
  trmv(dtype, cu, lower ? CblasNoTrans : CblasConjTrans, CblasNonUnit, (int)n, f, (int)ldf, w);
  double res = residual_mv(dtype, n, n, a, lda, v, w, n);
  free(v);
  free(w);
  return res;
}

double residual_solve(tessera_dtype_t dtype, int64_t n, int64_t nrhs, const void *a, int64_t lda,
                      const void *x, int64_t ldx, const void *b, int64_t ldb) {
  if (n == 0 || nrhs == 0) return 0;
  size_t es = tessera_dtype_size(dtype), col = (size_t)n * es;
  char *r = malloc(col * (size_t)nrhs);
  if (!r) return -1;
  for (int64_t j = 0; j < nrhs; j++)
    memcpy(r + (size_t)j * col, (const char *)b + (size_t)(j * ldb) * es, col);
  gemm_acc(dtype, (int)n, (int)nrhs, (int)n, a, (int)lda, x, (int)ldx, -1, r, (int)n);
  double anorm = norm1(dtype, n, n, a, lda), res = 0;
  for (int64_t j = 0; j < nrhs; j++) {
    double q = ratio(col_norm1(dtype, n, r, n, j), anorm, col_norm1(dtype, n, x, ldx, j), n,
                     residual_eps(dtype));
    if (!(q <= res)) res = q;
  }
  free(r);
  return res;
}

double residual_getrf(tessera_dtype_t dtype, int64_t n, const void *a, int64_t lda, const void *f,
                      int64_t ldf, const int *ipiv) {
  if (n == 0) return 0;
  const size_t es = tessera_dtype_size(dtype), bytes = (size_t)n * es;
  char *v = malloc(bytes), *w = malloc(bytes), *t = malloc(es);
  if (!v || !w || !t) {
    free(v);
    free(w);
    free(t);
    return -1;
  }
  gen_dense(dtype, n, 1, v, n, GEN_SEED_V);
  memcpy(w, v, bytes);
  /* w = Pᵀ L U v, then A v − w */
  trmv(dtype, CblasUpper, CblasNoTrans, CblasNonUnit, (int)n, f, (int)ldf, w);
  trmv(dtype, CblasLower, CblasNoTrans, CblasUnit, (int)n, f, (int)ldf, w);
  for (int64_t i = n - 1; i >= 0; i--) {
    const size_t p = (size_t)(ipiv[i] - 1) * es, q = (size_t)i * es;
    memcpy(t, w + q, es);
    memcpy(w + q, w + p, es);
    memcpy(w + p, t, es);
  }
  double res = residual_mv(dtype, n, n, a, lda, v, w, n);
  free(v);
  free(w);
  free(t);
  return res;
}
