/* tessera_unmqr, tessera_ungqr and tessera_gels, every dtype, against LAPACK: op(Q) C and C op(Q)
 * for each op (Q formed by LAPACK's ungqr from tessera's reflectors), Q's columns against
 * LAPACK's ungqr, least squares (tall) and minimum norm (wide) solutions against LAPACK's gels;
 * sizes that are not panel multiples, k < order, empty operands; gels' info for a matrix not of
 * full rank; invalid arguments.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "qr_common.h"

/* LAPACK's gels (trans N). */
static int lapack_gels(tessera_dtype_t dt, int64_t m, int64_t n, int64_t nrhs, void *a, int64_t lda,
                       void *b, int64_t ldb) {
  const lapack_int M = (lapack_int)m, N = (lapack_int)n, R = (lapack_int)nrhs;
  switch (dt) {
  case TESSERA_F32:
    return (int)LAPACKE_sgels(LAPACK_COL_MAJOR, 'N', M, N, R, a, (int)lda, b, (int)ldb);
  case TESSERA_F64:
    return (int)LAPACKE_dgels(LAPACK_COL_MAJOR, 'N', M, N, R, a, (int)lda, b, (int)ldb);
  case TESSERA_C64:
    return (int)LAPACKE_cgels(LAPACK_COL_MAJOR, 'N', M, N, R, a, (int)lda, b, (int)ldb);
  default:
    return (int)LAPACKE_zgels(LAPACK_COL_MAJOR, 'N', M, N, R, a, (int)lda, b, (int)ldb);
  }
}

static double tol(tessera_dtype_t dt) {
  return dt == TESSERA_F32 || dt == TESSERA_C64 ? 2e-3 : 1e-10;
}

/* max |x - y| / max |y| over the m x n blocks x (ldx) and y (ldy). */
static double rel_diff(tessera_dtype_t dt, int64_t m, int64_t n, const void *x, int64_t ldx,
                       const void *y, int64_t ldy) {
  double d = 0, s = 0;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++) {
      const zc_t a = lc_get(dt, x, (size_t)(i + j * ldx)), b = lc_get(dt, y, (size_t)(i + j * ldy));
      d = fmax(d, cabs(a - b));
      s = fmax(s, cabs(b));
    }
  return s > 0 ? d / s : d;
}

/* A random m x k matrix factored by tessera_geqrf on ctx: its reflectors in `a` (lda m) and
 * tau. */
static void reflectors(tessera_context_t *ctx, tessera_dtype_t dt, int64_t m, int64_t k,
                       uint64_t seed, void **a, void **tau) {
  tt_rng_t r = tt_rng(seed);
  *a = lc_alloc(dt, (size_t)(m * (k + 1)));
  lc_fill_random(dt, *a, m, k, m, &r);
  *tau = lc_alloc(dt, (size_t)(k + 1));
  assert_int_equal(tessera_geqrf(ctx, dt, m, k, *a, m, *tau), 0);
}

static void test_unmqr(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(8);
  const int64_t shapes[][3] = {{29, 11, 29}, {29, 7, 5}, {17, 30, 17}, {1, 4, 1}, {9, 0, 9}};
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      for (int side = 0; side < 2; side++)
        for (int t = 0; t < 3; t++) {
          const tessera_dtype_t dt = lc_dtypes[d];
          if (t == 1 && (dt == TESSERA_C64 || dt == TESSERA_C128)) continue;
          const tessera_op_t op = t == 0   ? TESSERA_NOTRANS
                                  : t == 1 ? TESSERA_TRANS
                                           : TESSERA_CONJTRANS;
          /* C is m x n; Q of order nq = m (left) or n (right), from k = min(nq, shapes[2]) */
          const int64_t m = side ? shapes[s][1] : shapes[s][0],
                        n = side ? shapes[s][0] : shapes[s][1];
          const int64_t nq = side ? n : m, k = shapes[s][2] < nq ? shapes[s][2] : nq;
          void *a, *tau;
          reflectors(ctx, dt, nq, k, (uint64_t)(100 * d + 10 * s + side), &a, &tau);
          /* Q whole (nq x nq) by LAPACK */
          void *q = lc_alloc(dt, (size_t)(nq * nq + 1));
          memcpy(q, a, (size_t)(nq * k) * lc_esize(dt));
          assert_int_equal(qr_lapack_ungqr(dt, nq, nq, k, q, nq, tau), 0);
          tt_rng_t r = tt_rng((uint64_t)(7 + s));
          const int64_t ldc = m + 2;
          void *c = lc_alloc(dt, (size_t)(ldc * (n + 1)));
          lc_fill_random(dt, c, m, n, ldc, &r);
          zc_t *cz = lc_promote(dt, m, n, c, ldc), *qz = lc_promote(dt, nq, nq, q, nq);
          zc_t *want = lc_zalloc((size_t)(m * n + 1));
          const zc_t one = 1.0, zero = 0.0;
          const enum CBLAS_TRANSPOSE ct = t == 0   ? CblasNoTrans
                                          : t == 1 ? CblasTrans
                                                   : CblasConjTrans;
          if (m > 0 && n > 0) {
            if (!side)
              cblas_zgemm(CblasColMajor, ct, CblasNoTrans, (int)m, (int)n, (int)m, &one, qz, (int)m,
                          cz, (int)m, &zero, want, (int)m);
            else
              cblas_zgemm(CblasColMajor, CblasNoTrans, ct, (int)m, (int)n, (int)n, &one, cz, (int)m,
                          qz, (int)n, &zero, want, (int)m);
          }
          int rc = tessera_unmqr(ctx, side ? TESSERA_RIGHT : TESSERA_LEFT, op, dt, m, n, k, a, nq,
                                 tau, c, ldc);
          if (rc) fail_msg("unmqr %s: %d (%s)", lc_name(dt), rc, tessera_last_error(ctx));
          zc_t *got = lc_promote(dt, m, n, c, ldc);
          double diff = 0, scale = 0;
          for (int64_t i = 0; i < m * n; i++)
            diff = fmax(diff, cabs(got[i] - want[i])), scale = fmax(scale, cabs(want[i]));
          if (!(diff <= tol(dt) * (scale > 0 ? scale : 1)))
            fail_msg("unmqr %s side %c op %c m %lld n %lld k %lld: max difference %g of %g",
                     lc_name(dt), side ? 'R' : 'L', (char)op, (long long)m, (long long)n,
                     (long long)k, diff, scale);
          free(a), free(tau), free(q), free(c), free(cz), free(qz), free(want), free(got);
        }
  lc_finalize(ctx);
}

static void test_ungqr(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(8);
  const int64_t shapes[][3] = {{30, 30, 30}, {41, 17, 17}, {41, 17, 9}, {5, 1, 1}, {6, 3, 0}};
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
      const tessera_dtype_t dt = lc_dtypes[d];
      const int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
      void *a, *tau;
      reflectors(ctx, dt, m, n, (uint64_t)(300 + 10 * d + s), &a, &tau);
      void *want = lc_dup(dt, a, (size_t)(m * n));
      assert_int_equal(qr_lapack_ungqr(dt, m, n, k, want, m, tau), 0);
      int rc = tessera_ungqr(ctx, dt, m, n, k, a, m, tau);
      if (rc) fail_msg("ungqr %s: %d (%s)", lc_name(dt), rc, tessera_last_error(ctx));
      const double e = rel_diff(dt, m, n, a, m, want, m);
      if (!(e <= tol(dt)))
        fail_msg("ungqr %s m %lld n %lld k %lld: relative difference %g", lc_name(dt), (long long)m,
                 (long long)n, (long long)k, e);
      free(a), free(tau), free(want);
    }
  lc_finalize(ctx);
}

static void test_gels(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(8);
  const int64_t shapes[][3] = {{40, 19, 3}, {19, 19, 1}, {13, 33, 2}, {25, 9, 0},
                               {1, 1, 1},   {0, 5, 2},   {5, 0, 2}};
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
      const tessera_dtype_t dt = lc_dtypes[d];
      const int64_t m = shapes[s][0], n = shapes[s][1], nrhs = shapes[s][2];
      const int64_t lda = m + 1, ldb = (m > n ? m : n) + 2;
      tt_rng_t r = tt_rng((uint64_t)(500 + 10 * d + s));
      void *a = lc_alloc(dt, (size_t)(lda * (n + 1))),
           *b = lc_alloc(dt, (size_t)(ldb * (nrhs + 1)));
      lc_fill_random(dt, a, m, n, lda, &r);
      lc_fill_random(dt, b, m, nrhs, ldb, &r);
      void *a2 = lc_dup(dt, a, (size_t)(lda * (n + 1))),
           *b2 = lc_dup(dt, b, (size_t)(ldb * (nrhs + 1)));
      if (m > 0 && n > 0)
        assert_int_equal(lapack_gels(dt, m, n, nrhs, a2, lda, b2, ldb), 0);
      else
        for (int64_t j = 0; j < nrhs; j++)
          for (int64_t i = 0; i < n; i++) lc_set(dt, b2, (size_t)(i + j * ldb), 0.0);
      int rc = tessera_gels(ctx, dt, m, n, nrhs, a, lda, b, ldb);
      if (rc) fail_msg("gels %s: %d (%s)", lc_name(dt), rc, tessera_last_error(ctx));
      const double e = rel_diff(dt, n, nrhs, b, ldb, b2, ldb);
      if (!(e <= 50 * tol(dt)))
        fail_msg("gels %s m %lld n %lld nrhs %lld: relative difference to LAPACK's %g", lc_name(dt),
                 (long long)m, (long long)n, (long long)nrhs, e);
      free(a), free(b), free(a2), free(b2);
    }
  /* a zero column: R(3, 3) is exactly zero */
  double a[6 * 4], b[6];
  tt_rng_t r = tt_rng(1);
  lc_fill_random(TESSERA_F64, a, 6, 4, 6, &r);
  for (int i = 0; i < 6; i++) a[i + 2 * 6] = 0, b[i] = 1;
  assert_int_equal(tessera_gels(ctx, TESSERA_F64, 6, 4, 1, a, 6, b, 6), 3);
  lc_assert_error(ctx);
  assert_true(b[0] == 1);
  lc_finalize(ctx);
}

/* The tile-level forms on descriptors of square tiles (QR through copies in panels): Qᴴ C then
 * Q C gives C back, and gels against LAPACK's. */
static void test_tile_forms(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(8);
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++) {
    const tessera_dtype_t dt = lc_dtypes[d];
    const int64_t m = 37, n = 21, nrhs = 3;
    tt_rng_t r = tt_rng((uint64_t)(900 + d));
    void *a = lc_alloc(dt, (size_t)(m * n)), *b = lc_alloc(dt, (size_t)(m * nrhs));
    lc_fill_random(dt, a, m, n, m, &r);
    lc_fill_random(dt, b, m, nrhs, m, &r);
    void *a2 = lc_dup(dt, a, (size_t)(m * n)), *b2 = lc_dup(dt, b, (size_t)(m * nrhs));
    void *c = lc_dup(dt, b, (size_t)(m * nrhs)), *tau = lc_alloc(dt, (size_t)n);
    tessera_matrix_t *A = NULL, *B = NULL, *C = NULL;
    assert_int_equal(tessera_matrix_view(ctx, dt, m, n, 8, 8, a, m, &A), 0);
    assert_int_equal(tessera_matrix_view(ctx, dt, m, nrhs, 8, 8, c, m, &C), 0);
    assert_int_equal(tessera_tile_geqrf(A, tau), 0);
    assert_int_equal(tessera_tile_unmqr(TESSERA_LEFT, TESSERA_CONJTRANS, A, tau, C), 0);
    assert_int_equal(tessera_tile_unmqr(TESSERA_LEFT, TESSERA_NOTRANS, A, tau, C), 0);
    tessera_matrix_destroy(C);
    tessera_matrix_destroy(A);
    if (!(rel_diff(dt, m, nrhs, c, m, b, m) <= tol(dt)))
      fail_msg("tile_unmqr %s: Q Qᴴ C differs from C by %g", lc_name(dt),
               rel_diff(dt, m, nrhs, c, m, b, m));
    memcpy(a, a2, (size_t)(m * n) * lc_esize(dt));
    assert_int_equal(tessera_matrix_view(ctx, dt, m, n, 8, 8, a, m, &A), 0);
    assert_int_equal(tessera_matrix_view(ctx, dt, m, nrhs, 8, 8, b, m, &B), 0);
    assert_int_equal(tessera_tile_gels(A, B), 0);
    tessera_matrix_destroy(B);
    tessera_matrix_destroy(A);
    assert_int_equal(lapack_gels(dt, m, n, nrhs, a2, m, b2, m), 0);
    if (!(rel_diff(dt, n, nrhs, b, m, b2, m) <= 50 * tol(dt)))
      fail_msg("tile_gels %s: relative difference to LAPACK's %g", lc_name(dt),
               rel_diff(dt, n, nrhs, b, m, b2, m));
    free(a), free(b), free(a2), free(b2), free(c), free(tau);
  }
  lc_finalize(ctx);
}

/* At tile level, against the LAPACK-style calls (each tested against LAPACK above): Q from the
 * right (C op(Q), C in square tiles: through a copy of Cᴴ), then back with Qᴴ; ungqr with all
 * the reflectors and with fewer; the minimum norm gels of a wide A. */
static void test_tile_right_ungqr_wide(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(8);
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++) {
    const tessera_dtype_t dt = lc_dtypes[d];
    const int64_t m = 37, n = 21, rows = 5, nrhs = 3;
    tt_rng_t r = tt_rng((uint64_t)(1900 + d));
    void *a = lc_alloc(dt, (size_t)(m * n)), *tau = lc_alloc(dt, (size_t)n);
    void *c = lc_alloc(dt, (size_t)(rows * m));
    lc_fill_random(dt, a, m, n, m, &r);
    lc_fill_random(dt, c, rows, m, rows, &r);
    void *c0 = lc_dup(dt, c, (size_t)(rows * m)), *c2 = lc_dup(dt, c, (size_t)(rows * m));
    tessera_matrix_t *A = NULL, *C = NULL;
    assert_int_equal(tessera_matrix_view(ctx, dt, m, n, 8, 8, a, m, &A), 0);
    assert_int_equal(tessera_tile_geqrf(A, tau), 0);
    assert_int_equal(tessera_matrix_view(ctx, dt, rows, m, 8, 8, c, rows, &C), 0);
    assert_int_equal(tessera_tile_unmqr(TESSERA_RIGHT, TESSERA_NOTRANS, A, tau, C), 0);
    assert_int_equal(tessera_matrix_export(C, c, rows), 0);
    assert_int_equal(
        tessera_unmqr(ctx, TESSERA_RIGHT, TESSERA_NOTRANS, dt, rows, m, n, a, m, tau, c2, rows), 0);
    if (!(rel_diff(dt, rows, m, c, rows, c2, rows) <= tol(dt)))
      fail_msg("tile_unmqr right %s: %g from unmqr's", lc_name(dt),
               rel_diff(dt, rows, m, c, rows, c2, rows));
    assert_int_equal(tessera_tile_unmqr(TESSERA_RIGHT, TESSERA_CONJTRANS, A, tau, C), 0);
    assert_int_equal(tessera_matrix_destroy(C), 0);
    if (!(rel_diff(dt, rows, m, c, rows, c0, rows) <= tol(dt)))
      fail_msg("tile_unmqr right %s: C Q Qᴴ differs from C by %g", lc_name(dt),
               rel_diff(dt, rows, m, c, rows, c0, rows));
    /* ungqr: Q's first n columns from all n reflectors, then from n - 3 of them */
    for (int64_t k = n; k >= n - 3; k -= 3) {
      void *q = lc_dup(dt, a, (size_t)(m * n)), *q2 = lc_dup(dt, a, (size_t)(m * n));
      tessera_matrix_t *Q = NULL;
      assert_int_equal(tessera_matrix_view(ctx, dt, m, n, 8, 8, q, m, &Q), 0);
      assert_int_equal(tessera_tile_ungqr(Q, k, tau), 0);
      assert_int_equal(tessera_matrix_destroy(Q), 0);
      assert_int_equal(tessera_ungqr(ctx, dt, m, n, k, q2, m, tau), 0);
      if (!(rel_diff(dt, m, n, q, m, q2, m) <= tol(dt)))
        fail_msg("tile_ungqr %s k %lld: %g from ungqr's", lc_name(dt), (long long)k,
                 rel_diff(dt, m, n, q, m, q2, m));
      free(q), free(q2);
    }
    assert_int_equal(tessera_matrix_destroy(A), 0);
    /* a wide A (n x m): the minimum norm solution, B of m rows (its first n the right side) */
    void *w = lc_alloc(dt, (size_t)(n * m)), *b = lc_alloc(dt, (size_t)(m * nrhs));
    lc_fill_random(dt, w, n, m, n, &r);
    lc_fill_random(dt, b, m, nrhs, m, &r);
    void *w2 = lc_dup(dt, w, (size_t)(n * m)), *b2 = lc_dup(dt, b, (size_t)(m * nrhs));
    tessera_matrix_t *W = NULL, *B = NULL;
    assert_int_equal(tessera_matrix_view(ctx, dt, n, m, 8, 8, w, n, &W), 0);
    assert_int_equal(tessera_matrix_view(ctx, dt, m, nrhs, 8, 8, b, m, &B), 0);
    assert_int_equal(tessera_tile_gels(W, B), 0);
    assert_int_equal(tessera_matrix_destroy(B), 0);
    assert_int_equal(tessera_matrix_destroy(W), 0);
    assert_int_equal(lapack_gels(dt, n, m, nrhs, w2, n, b2, m), 0);
    if (!(rel_diff(dt, m, nrhs, b, m, b2, m) <= 50 * tol(dt)))
      fail_msg("tile_gels wide %s: relative difference to LAPACK's %g", lc_name(dt),
               rel_diff(dt, m, nrhs, b, m, b2, m));
    free(a), free(tau), free(c), free(c0), free(c2), free(w), free(b), free(w2), free(b2);
  }
  lc_finalize(ctx);
}

static void test_arguments(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(8);
  double a[16] = {0}, tau[4] = {0}, c[16] = {0};
  assert_int_equal(tessera_unmqr(ctx, (tessera_side_t)'X', TESSERA_NOTRANS, TESSERA_F64, 4, 4, 4, a,
                                 4, tau, c, 4),
                   -2);
  assert_int_equal(
      tessera_unmqr(ctx, TESSERA_LEFT, TESSERA_TRANS, TESSERA_C128, 4, 4, 4, a, 4, tau, c, 4), -3);
  assert_int_equal(
      tessera_unmqr(ctx, TESSERA_LEFT, TESSERA_NOTRANS, TESSERA_F64, 4, 4, 5, a, 4, tau, c, 4), -7);
  assert_int_equal(
      tessera_unmqr(ctx, TESSERA_LEFT, TESSERA_NOTRANS, TESSERA_F64, 4, 4, 4, a, 3, tau, c, 4), -9);
  assert_int_equal(
      tessera_unmqr(ctx, TESSERA_LEFT, TESSERA_NOTRANS, TESSERA_F64, 4, 4, 4, a, 4, tau, c, 3),
      -12);
  assert_int_equal(tessera_ungqr(ctx, TESSERA_F64, 4, 5, 4, a, 4, tau), -4);
  assert_int_equal(tessera_ungqr(ctx, TESSERA_F64, 4, 4, 5, a, 4, tau), -5);
  assert_int_equal(tessera_gels(ctx, TESSERA_F64, 4, 4, 1, a, 4, c, 3), -9);
  assert_int_equal(tessera_gels(ctx, TESSERA_F64, 4, 4, 1, NULL, 4, c, 4), -6);
  lc_assert_error(ctx);
  assert_int_equal(tessera_gels(NULL, TESSERA_F64, 4, 4, 1, a, 4, c, 4), -1);
  lc_finalize(ctx);
}

int main(void) {
  tt_watchdog(600);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_unmqr),
      cmocka_unit_test(test_ungqr),
      cmocka_unit_test(test_gels),
      cmocka_unit_test(test_tile_forms),
      cmocka_unit_test(test_tile_right_ungqr_wide),
      cmocka_unit_test(test_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
