/* LAPACK-style QR: geqrf, unmqr (ormqr), ungqr (orgqr) and gels on column-major host arrays,
 * each viewed in place as column panels (tessera_tile_for_lu's width) for the tile loops of
 * geqrf.c. Reflectors given as LAPACK leaves them (vectors below the diagonal, tau) get their
 * block reflectors' T from larft tasks. Q from the right, and Qᴴ's solves of a wide system, go
 * through conjugate-transposed copies made here. Not yet over processes. */
#include <stdlib.h>
#include <string.h>

#include "linalg/front/front.h"
#include "linalg/loops/loops.h"
#include "tessera/linalg.h"

/* A refusal of a context over processes (QR runs within one process for now). */
static int one_process(tessera_context_t *ctx, const char *f) {
  return tessera_context_comm(ctx)
             ? tsr_error(ctx, TESSERA_ERR_UNSUPPORTED,
                         "%s: QR over processes is not built yet; call it on a context of one "
                         "process",
                         f)
             : 0;
}

/* The m x n array a (lda) viewed in column panels of nb columns. */
static int panels(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n,
                  const void *a, int64_t lda, int64_t nb, tessera_matrix_t **out) {
  int rc = tessera_matrix_view(ctx, dtype, m, n, m > 0 ? m : 1, nb, (void *)(uintptr_t)a, lda, out);
  return rc ? tsr_error(ctx, rc, "cannot view a %lld x %lld array", (long long)m, (long long)n) : 0;
}

/* C (m x n, ldc) = op(Q) C, Q of order m from the k reflectors in a (m x k, lda) and tau. */
static int apply_q(tessera_context_t *ctx, char trans, tessera_dtype_t dtype, int64_t m, int64_t n,
                   int64_t k, const void *a, int64_t lda, const void *tau, void *c, int64_t ldc) {
  if (m == 0 || n == 0 || k == 0) return 0;
  tessera_matrix_t *A = NULL, *C = NULL;
  tsr_qr_t Q = {0};
  tsr_qr_work_t w = {0};
  const int64_t nb = tessera_tile_for_lu(ctx, m, k);
  int rc = panels(ctx, dtype, m, k, a, lda, nb, &A);
  if (!rc) rc = panels(ctx, dtype, m, n, c, ldc, tessera_tile_for_lu(ctx, m, n), &C);
  if (!rc) rc = tsr_qr_create(A, k, nb, &Q);
  if (!rc) rc = tsr_qr_work_create(C, nb, &w);
  if (!rc) rc = tsr_pxlarft(A, tau, &Q);
  if (!rc) rc = tsr_pxunmqr(trans, A, &Q, C, &w);
  if (C) rc = tsr_tile_finish(C, rc);
  tsr_qr_work_destroy(&w);
  tsr_qr_destroy(&Q);
  const int d1 = tessera_matrix_destroy(C), d2 = tessera_matrix_destroy(A);
  return rc ? rc : d1 ? d1 : d2;
}

/* The conjugate transpose of the m x n array x (ldx) into y (ldy). */
static void conj_transpose(tessera_dtype_t dtype, int64_t m, int64_t n, const void *x, int64_t ldx,
                           void *y, int64_t ldy) {
  const size_t es = tessera_dtype_size(dtype);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++) {
      tsr_scalar_t v = tsr_scalar_load(dtype, (const char *)x + (size_t)(i + j * ldx) * es, 0);
      v.im = -v.im;
      tsr_scalar_store(dtype, (char *)y + (size_t)(j + i * ldy) * es, v);
    }
}

/* The first i (1-based) with R(i, i) exactly zero among the first k, else 0: LAPACK's gels info. */
static int zero_diagonal(tessera_dtype_t dtype, int64_t k, const void *a, int64_t lda) {
  const size_t es = tessera_dtype_size(dtype);
  for (int64_t i = 0; i < k; i++) {
    const tsr_scalar_t v = tsr_scalar_load(dtype, (const char *)a + (size_t)(i + i * lda) * es, 0);
    if (v.re == 0 && v.im == 0) return (int)(i + 1);
  }
  return 0;
}

int tessera_geqrf(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n, void *a,
                  int64_t lda, void *tau) {
  if (!ctx) return -1;
  const char *f = "geqrf";
  int rc = one_process(ctx, f);
  if (!rc) rc = tsr_arg_dtype(ctx, f, 2, dtype);
  if (!rc) rc = tsr_arg_dim(ctx, f, 3, m);
  if (!rc) rc = tsr_arg_dim(ctx, f, 4, n);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 5, a, m, n);
  if (!rc) rc = tsr_arg_ld(ctx, f, 6, lda, m);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 7, tau, m, n);
  if (!rc && (m > INT32_MAX || n > INT32_MAX))
    rc = tsr_error(ctx, -3, "%s: A is %lld x %lld, beyond QR's 2^31 - 1", f, (long long)m,
                   (long long)n);
  if (rc || m == 0 || n == 0) return rc;
  tessera_matrix_t *A = NULL;
  rc = panels(ctx, dtype, m, n, a, lda, tessera_tile_for_lu(ctx, m, n), &A);
  if (!rc) rc = tessera_tile_geqrf(A, tau);
  const int d = tessera_matrix_destroy(A);
  return rc ? rc : d;
}

int tessera_unmqr(tessera_context_t *ctx, tessera_side_t side, tessera_op_t trans,
                  tessera_dtype_t dtype, int64_t m, int64_t n, int64_t k, const void *a,
                  int64_t lda, const void *tau, void *c, int64_t ldc) {
  if (!ctx) return -1;
  const char *f = "unmqr";
  const int64_t nq = side == TESSERA_RIGHT ? n : m; /* the order of Q */
  int rc = one_process(ctx, f);
  if (!rc) rc = tsr_arg_flag(ctx, f, 2, side, "LR");
  if (!rc) rc = tsr_arg_flag(ctx, f, 3, trans, "NTC");
  if (!rc) rc = tsr_arg_dtype(ctx, f, 4, dtype);
  if (!rc && trans == TESSERA_TRANS && (dtype == TESSERA_C64 || dtype == TESSERA_C128))
    rc = tsr_error(ctx, -3, "%s: trans 'T' on a complex dtype: Q's conjugate transpose is 'C'", f);
  if (!rc) rc = tsr_arg_dim(ctx, f, 5, m);
  if (!rc) rc = tsr_arg_dim(ctx, f, 6, n);
  if (!rc) rc = tsr_arg_dim(ctx, f, 7, k);
  if (!rc && k > nq)
    rc = tsr_error(ctx, -7, "%s: k = %lld reflectors exceed Q's order %lld", f, (long long)k,
                   (long long)nq);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 8, a, nq, k);
  if (!rc) rc = tsr_arg_ld(ctx, f, 9, lda, nq);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 10, tau, k, 1);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 11, c, m, n);
  if (!rc) rc = tsr_arg_ld(ctx, f, 12, ldc, m);
  if (rc || m == 0 || n == 0 || k == 0) return rc;
  const char t = trans == TESSERA_NOTRANS ? 'N' : 'C';
  if (side == TESSERA_LEFT) return apply_q(ctx, t, dtype, m, n, k, a, lda, tau, c, ldc);
  /* C op(Q) = (op(Q)ᴴ Cᴴ)ᴴ: from the left on Cᴴ */
  void *ch = malloc((size_t)(m * n) * tessera_dtype_size(dtype));
  if (!ch) return tsr_error(ctx, TESSERA_ERR_NOMEM, "%s: out of memory for Cᴴ", f);
  conj_transpose(dtype, m, n, c, ldc, ch, n);
  rc = apply_q(ctx, t == 'N' ? 'C' : 'N', dtype, n, m, k, a, lda, tau, ch, n);
  if (!rc) conj_transpose(dtype, n, m, ch, n, c, ldc);
  free(ch);
  return rc;
}

int tessera_ungqr(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n, int64_t k,
                  void *a, int64_t lda, const void *tau) {
  if (!ctx) return -1;
  const char *f = "ungqr";
  int rc = one_process(ctx, f);
  if (!rc) rc = tsr_arg_dtype(ctx, f, 2, dtype);
  if (!rc) rc = tsr_arg_dim(ctx, f, 3, m);
  if (!rc && (n < 0 || n > m))
    rc = tsr_error(ctx, -4, "%s: n = %lld is not in [0, m = %lld]", f, (long long)n, (long long)m);
  if (!rc && (k < 0 || k > n))
    rc = tsr_error(ctx, -5, "%s: k = %lld is not in [0, n = %lld]", f, (long long)k, (long long)n);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 6, a, m, n);
  if (!rc) rc = tsr_arg_ld(ctx, f, 7, lda, m);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 8, tau, k, 1);
  if (rc || m == 0 || n == 0) return rc;
  /* Q's first n columns: Q applied to the first n columns of the identity */
  const size_t es = tessera_dtype_size(dtype);
  char *q = calloc((size_t)(m * n), es);
  if (!q) return tsr_error(ctx, TESSERA_ERR_NOMEM, "%s: out of memory for Q", f);
  for (int64_t i = 0; i < n; i++)
    tsr_scalar_store(dtype, q + (size_t)(i + i * m) * es, (tsr_scalar_t){1, 0});
  rc = apply_q(ctx, 'N', dtype, m, n, k, a, lda, tau, q, m);
  for (int64_t j = 0; !rc && j < n; j++)
    memcpy((char *)a + (size_t)(j * lda) * es, q + (size_t)(j * m) * es, (size_t)m * es);
  free(q);
  return rc;
}

int tessera_gels(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n, int64_t nrhs,
                 void *a, int64_t lda, void *b, int64_t ldb) {
  if (!ctx) return -1;
  const char *f = "gels";
  int rc = one_process(ctx, f);
  if (!rc) rc = tsr_arg_dtype(ctx, f, 2, dtype);
  if (!rc) rc = tsr_arg_dim(ctx, f, 3, m);
  if (!rc) rc = tsr_arg_dim(ctx, f, 4, n);
  if (!rc) rc = tsr_arg_dim(ctx, f, 5, nrhs);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 6, a, m, n);
  if (!rc) rc = tsr_arg_ld(ctx, f, 7, lda, m);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 8, b, m > n ? m : n, nrhs);
  if (!rc) rc = tsr_arg_ld(ctx, f, 9, ldb, m > n ? m : n);
  if (rc || nrhs == 0) return rc;
  const size_t es = tessera_dtype_size(dtype);
  const int64_t k = m < n ? m : n;
  if (k == 0) { /* no equation or no unknown: x = 0 */
    for (int64_t j = 0; j < nrhs; j++)
      memset((char *)b + (size_t)(j * ldb) * es, 0, (size_t)n * es);
    return 0;
  }
  static const double one[2] = {1, 0};
  static const float onef[2] = {1, 0};
  const void *alpha =
      dtype == TESSERA_F32 || dtype == TESSERA_C64 ? (const void *)onef : (const void *)one;
  void *tau = malloc((size_t)k * es);
  if (!tau) return tsr_error(ctx, TESSERA_ERR_NOMEM, "%s: out of memory for tau", f);
  if (m >= n) { /* A = Q R: R x = (Qᴴ b)(1 .. n) */
    rc = tessera_geqrf(ctx, dtype, m, n, a, lda, tau);
    const int info = rc ? 0 : zero_diagonal(dtype, n, a, lda);
    if (info)
      rc = tsr_error(ctx, info,
                     "%s: R(%d, %d) is exactly zero: A does not have full rank, and the least "
                     "squares solution is not unique",
                     f, info, info);
    if (!rc) rc = apply_q(ctx, 'C', dtype, m, nrhs, n, a, lda, tau, b, ldb);
    if (!rc)
      rc = tessera_trsm(ctx, TESSERA_LEFT, TESSERA_UPPER, TESSERA_NOTRANS, TESSERA_NONUNIT, dtype,
                        n, nrhs, alpha, a, lda, b, ldb);
    free(tau);
    return rc;
  }
  /* m < n, the minimum norm solution: Aᴴ = Q R, so A x = b is Rᴴ (Qᴴ x) = b: Rᴴ y = b, then
   * x = Q [y; 0] */
  void *ah = malloc((size_t)(m * n) * es);
  if (!ah) {
    free(tau);
    return tsr_error(ctx, TESSERA_ERR_NOMEM, "%s: out of memory for Aᴴ", f);
  }
  conj_transpose(dtype, m, n, a, lda, ah, n);
  rc = tessera_geqrf(ctx, dtype, n, m, ah, n, tau);
  const int info = rc ? 0 : zero_diagonal(dtype, m, ah, n);
  if (info)
    rc = tsr_error(ctx, info,
                   "%s: R(%d, %d) is exactly zero: A does not have full rank, and the minimum "
                   "norm solution is not defined by it",
                   f, info, info);
  if (!rc)
    rc = tessera_trsm(ctx, TESSERA_LEFT, TESSERA_UPPER, TESSERA_CONJTRANS, TESSERA_NONUNIT, dtype,
                      m, nrhs, alpha, ah, n, b, ldb);
  for (int64_t j = 0; !rc && j < nrhs; j++)
    memset((char *)b + (size_t)(m + j * ldb) * es, 0, (size_t)(n - m) * es);
  if (!rc) rc = apply_q(ctx, 'N', dtype, n, nrhs, m, ah, n, tau, b, ldb);
  free(ah);
  free(tau);
  return rc;
}
