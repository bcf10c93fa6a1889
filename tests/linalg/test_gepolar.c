/* tessera_gepolar and tessera_tile_gepolar: every dtype; square and tall, orders that are not
 * tile multiples, n 0 and 1; random matrices, singular values graded from 1 to 10⁻¹² (10⁻⁵ in
 * single precision), repeated singular values, rank-deficient ones; H asked for or not; NaN and
 * infinity; bad arguments. Each result: ‖A - U_p H‖_F against ‖A‖_F max(m, n) ε, U_p's
 * orthogonality where A has full rank, H Hermitian and positive semidefinite, and U_p against
 * LAPACK's SVD (W Σ Vᴴ: U_p = W Vᴴ) where A is well conditioned. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "linalg/loops/loops.h"
#include "linalg_common.h"
#include "polar_common.h"

enum { nb = 8 };

/* Contexts of each method: QDWH, and through LAPACK's SVD (no QDWH step: steps 0). */
static const tessera_svd_method_t methods[2] = {TESSERA_SVD_QDWH, TESSERA_SVD_LAPACK};

/* The steps a call on ctx reports: QDWH's 1 to 10, none through LAPACK's SVD or for n = 0. */
static bool steps_expected(tessera_context_t *ctx, int64_t n, int steps) {
  if (n == 0 || tessera_config(ctx)->svd_method == TESSERA_SVD_LAPACK) return steps == 0;
  return steps > 0 && steps <= 10;
}

/* One LAPACK-style call on A of prescribed singular values, checked. */
static void one_case(tessera_context_t *ctx, tessera_dtype_t dt, int64_t m, int64_t n, double cond,
                     int64_t rank, bool repeat, bool want_h, uint64_t seed) {
  tt_rng_t r = tt_rng(seed);
  void *a = lc_alloc(dt, (size_t)(m * n) + 1), *h = lc_alloc(dt, (size_t)(n * n) + 1);
  zc_t *A = pc_prescribed(dt, m, n, cond, rank, repeat, a, &r);
  int steps = -1;
  const int rc =
      tessera_gepolar(ctx, dt, m, n, a, m > 0 ? m : 1, want_h ? h : NULL, n > 0 ? n : 1, &steps);
  if (rc)
    fail_msg("%s %lld x %lld cond %g: gepolar %d (%s)", lc_name(dt), (long long)m, (long long)n,
             cond, rc, tessera_last_error(ctx));
  if (!steps_expected(ctx, n, steps))
    fail_msg("%s %lld x %lld cond %g rank %lld: %d steps", lc_name(dt), (long long)m, (long long)n,
             cond, (long long)rank, steps);
  pc_check(dt, m, n, A, a, want_h ? h : NULL, rank == n, rank == n && !repeat && cond <= 100);
  free(a), free(h), free(A);
}

static void test_gepolar_shapes(void **state) {
  (void)state;
  const int64_t shapes[][2] = {{0, 0}, {5, 0},   {1, 1},   {3, 1},   {7, 7}, {8, 8},
                               {9, 9}, {29, 29}, {29, 17}, {41, 20}, {33, 8}};
  const int count = (int)(sizeof shapes / sizeof *shapes);
  for (int mi = 0; mi < 2; mi++) {
    tessera_context_t *ctx = pc_context(nb, methods[mi]);
    /* QDWH in the sanitizer builds: one real and one complex dtype */
    const bool quick = tt_quick() && methods[mi] == TESSERA_SVD_QDWH;
    for (int d = quick ? 1 : 0; d < TESSERA_NUM_DTYPES; d += quick ? 2 : 1)
      for (int s = 0; s < count; s++) {
        const int64_t m = shapes[s][0], n = shapes[s][1];
        one_case(ctx, lc_dtypes[d], m, n, 10, n, false, true, (uint64_t)(100 * d + s));
      }
    /* H not asked for */
    one_case(ctx, TESSERA_F64, 29, 17, 10, 17, false, false, 7);
    lc_finalize(ctx);
  }
}

/* Graded singular values down to 10⁻¹² (10⁻⁵ in single precision: beyond, A is singular to
 * working precision), half of them repeated, and rank deficient (U_p then not orthonormal, A =
 * U_p H and H's definiteness still hold). */
static void test_gepolar_spectra(void **state) {
  (void)state;
  for (int mi = 0; mi < 2; mi++) {
    tessera_context_t *ctx = pc_context(nb, methods[mi]);
    const bool quick = tt_quick() && methods[mi] == TESSERA_SVD_QDWH;
    for (int d = quick ? 1 : 0; d < TESSERA_NUM_DTYPES; d += quick ? 2 : 1) {
      const tessera_dtype_t dt = lc_dtypes[d];
      const double graded = lc_eps(dt) < 1e-10 ? 1e12 : 1e5;
      one_case(ctx, dt, 37, 37, graded, 37, false, true, (uint64_t)(200 + d));
      one_case(ctx, dt, 45, 21, graded, 21, false, true, (uint64_t)(210 + d));
      one_case(ctx, dt, 30, 30, 10, 30, true, true, (uint64_t)(220 + d));
      one_case(ctx, dt, 30, 30, 10, 19, false, true, (uint64_t)(230 + d));
      one_case(ctx, dt, 24, 12, 1, 0, false, true, (uint64_t)(240 + d)); /* A = 0 */
    }
    lc_finalize(ctx);
  }
}

/* The tile-level form on descriptors, H of the same tiles, by each method. */
static void test_tile_gepolar(void **state) {
  (void)state;
  for (int i = 0; i < 2 * TESSERA_NUM_DTYPES; i++) {
    const int d = i % TESSERA_NUM_DTYPES;
    tessera_context_t *ctx = pc_context(nb, methods[i / TESSERA_NUM_DTYPES]);
    const tessera_dtype_t dt = lc_dtypes[d];
    const int64_t m = 27, n = 19;
    tt_rng_t r = tt_rng((uint64_t)(300 + d));
    void *a = lc_alloc(dt, (size_t)(m * n)), *h = lc_alloc(dt, (size_t)(n * n));
    zc_t *A = pc_prescribed(dt, m, n, 30, n, false, a, &r);
    tessera_matrix_t *Am = NULL, *Hm = NULL;
    assert_int_equal(tessera_matrix_create(ctx, dt, m, n, nb, nb, &Am), 0);
    assert_int_equal(tessera_matrix_create(ctx, dt, n, n, nb, nb, &Hm), 0);
    assert_int_equal(tessera_matrix_import(Am, a, m), 0);
    int steps = -1;
    assert_int_equal(tessera_tile_gepolar(Am, Hm, &steps), 0);
    assert_true(steps_expected(ctx, n, steps));
    assert_int_equal(tessera_matrix_export(Am, a, m), 0);
    assert_int_equal(tessera_matrix_export(Hm, h, n), 0);
    pc_check(dt, m, n, A, a, h, true, true);
    assert_int_equal(tessera_matrix_destroy(Am), 0);
    assert_int_equal(tessera_matrix_destroy(Hm), 0);
    free(a), free(h), free(A);
    lc_finalize(ctx);
  }
}

/* NaN and infinity name their column, a and h untouched; bad arguments. */
static void test_gepolar_nan_and_args(void **state) {
  (void)state;
  const int64_t m = 21, n = 13;
  /* One context at a time: a context's pool takes nearly all of a GPU's free memory. */
  for (int i = 0; i < 2 * TESSERA_NUM_DTYPES; i++) {
    const int d = i % TESSERA_NUM_DTYPES;
    tessera_context_t *mctx = pc_context(nb, methods[i / TESSERA_NUM_DTYPES]);
    const tessera_dtype_t dt = lc_dtypes[d];
    tt_rng_t r = tt_rng((uint64_t)(400 + d));
    void *a = lc_alloc(dt, (size_t)(m * n)), *h = lc_alloc(dt, (size_t)(n * n));
    lc_fill_random(dt, a, m, n, m, &r);
    lc_fill_random(dt, h, n, n, n, &r);
    lc_set(dt, a, (size_t)(4 + 9 * m), d % 2 ? INFINITY : NAN);
    void *a0 = lc_dup(dt, a, (size_t)(m * n)), *h0 = lc_dup(dt, h, (size_t)(n * n));
    assert_int_equal(tessera_gepolar(mctx, dt, m, n, a, m, h, n, NULL), 10);
    lc_assert_error(mctx);
    lc_finalize(mctx);
    assert_memory_equal(h, h0, (size_t)(n * n) * lc_esize(dt));
    for (int64_t i = 0; i < m * n; i++)
      if (i != 4 + 9 * m) assert_true(lc_get(dt, a, (size_t)i) == lc_get(dt, a0, (size_t)i));
    free(a), free(h), free(a0), free(h0);
  }
  tessera_context_t *ctx = lc_context(nb);
  double a[12] = {0}, h[9] = {0};
  assert_int_equal(tessera_gepolar(ctx, TESSERA_F64, 2, 3, a, 2, h, 3, NULL), -4); /* m < n */
  lc_assert_error(ctx);
  assert_int_equal(tessera_gepolar(ctx, TESSERA_F64, 4, 3, NULL, 4, h, 3, NULL), -5);
  assert_int_equal(tessera_gepolar(ctx, TESSERA_F64, 4, 3, a, 3, h, 3, NULL), -6);
  assert_int_equal(tessera_gepolar(ctx, TESSERA_F64, 4, 3, a, 4, h, 2, NULL), -8);
  assert_int_equal(tessera_gepolar(ctx, TESSERA_F64, -1, 3, a, 4, h, 3, NULL), -3);
  assert_int_equal(tessera_gepolar(ctx, (tessera_dtype_t)9, 4, 3, a, 4, h, 3, NULL), -2);
  assert_int_equal(tessera_gepolar(NULL, TESSERA_F64, 4, 3, a, 4, h, 3, NULL), -1);
  tessera_matrix_t *A = NULL, *H = NULL;
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, 4, 3, 2, 2, &A), 0);
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, 2, 2, 2, 2, &H), 0);
  assert_true(tessera_tile_gepolar(A, H, NULL) < 0); /* H not n x n */
  lc_assert_error(ctx);
  assert_true(tessera_tile_gepolar(NULL, NULL, NULL) < 0);
  assert_int_equal(tessera_matrix_destroy(A), 0);
  assert_int_equal(tessera_matrix_destroy(H), 0);
  lc_finalize(ctx);
}

/* The weights' schedule from l_0 = eps: QR steps while c > 100, then Cholesky's, l rising to 1;
 * f64 from eps needs 6 steps, f32 4 (Nakatsukasa and Higham's bound). */
static void test_qdwh_weights(void **state) {
  (void)state;
  const double eps[2] = {DBL_EPSILON, FLT_EPSILON};
  const int want[2] = {6, 4};
  for (int p = 0; p < 2; p++) {
    double l = eps[p], a, b, c, prev = 0;
    int k = 0, qr = 0;
    while (l + 5 * eps[p] < 1 && k < 20) {
      tsr_qdwh_weights(&l, &a, &b, &c);
      assert_true(l > prev && l <= 1 + 1e-15);
      qr += c > 100;
      prev = l, k++;
    }
    assert_int_equal(k, want[p]);
    assert_int_equal(qr, 2);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_qdwh_weights),         cmocka_unit_test(test_gepolar_shapes),
      cmocka_unit_test(test_gepolar_spectra),      cmocka_unit_test(test_tile_gepolar),
      cmocka_unit_test(test_gepolar_nan_and_args),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
