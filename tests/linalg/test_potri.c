/* potri (inverse from the Cholesky factor) and logdet: every dtype x uplo, sizes around the tile,
 * residual ‖A X − I‖_F / (n ‖A‖_F ‖X‖_F ε), the other triangle untouched, argument errors. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "linalg_common.h"

#define TILE 16

/* potrf, logdet and potri of one generated matrix: the inverse's residual, the log-determinant
 * against the factor's diagonal, the other triangle untouched. */
static void check_potri(tessera_context_t *ctx, tessera_dtype_t dt, tessera_uplo_t uplo, int64_t n,
                        uint64_t seed, void *unused) {
  (void)unused;
  tt_rng_t rng = tt_rng(seed);
  int64_t lda = n + 3;
  void *a = lc_alloc(dt, (size_t)(lda * (n ? n : 1)));
  zc_t *full = lc_gen_hpd(dt, uplo, n, a, lda, &rng);
  void *before = lc_dup(dt, a, (size_t)(lda * n));
  assert_int_equal(tessera_potrf(ctx, uplo, dt, n, a, lda), 0);
  double logdet = -1, ref = 0;
  assert_int_equal(tessera_logdet(ctx, uplo, dt, n, a, lda, &logdet), 0);
  for (int64_t i = 0; i < n; i++) ref += 2 * log(creal(lc_get(dt, a, (size_t)(i + i * lda))));
  assert_true(fabs(logdet - ref) <= 1e-10 * (1 + fabs(ref)));
  assert_int_equal(tessera_potri(ctx, uplo, dt, n, a, lda), 0);
  zc_t *x = lc_full_from_triangle(dt, uplo, n, a, lda);
  double res = n ? lc_inverse_resid(dt, n, full, x) : 0;
  if (!(res < 10))
    fail_msg("potri %s %c n=%lld: residual %g", lc_name(dt), (char)uplo, (long long)n, res);
  assert_int_equal(lc_diff_outside(dt, uplo, n, n, a, before, lda), 0);
  free(x);
  free(full);
  free(before);
  free(a);
}

static void potri_all(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(TILE);
  lc_sweep(ctx, TILE, check_potri, NULL);
  lc_finalize(ctx);
}

/* A zero on the factor's diagonal is reported like LAPACK's trtri: info = its index. */
static void singular_factor_gives_info(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(TILE);
  const int64_t n = 3 * TILE + 5;
  double *a = calloc((size_t)(n * n), sizeof *a);
  for (int64_t i = 0; i < n; i++) a[i + i * n] = 2;
  a[20 + 20 * n] = 0;
  assert_int_equal(tessera_potri(ctx, TESSERA_LOWER, TESSERA_F64, n, a, n), 21);
  free(a);
  lc_finalize(ctx);
}

/* potrf, logdet and potri with GPU workers only (every kernel, logdiag included, has a GPU
 * implementation): tiles of 16, and f32 tiles of 272, above the order where the GPU's lauum and
 * trtri halve their tiles. Skipped without GPUs. */
static void gpus_only(void **state) {
  (void)state;
  const int tiles[2] = {TILE, 272};
  for (int t = 0; t < 2; t++) {
    tessera_context_t *ctx = lc_context(tiles[t]);
    if (tessera_accelerator_count(ctx) == 0) {
      lc_finalize(ctx);
      skip();
    }
    assert_int_equal(tessera_set_scope(ctx, tessera_scope_gpus()), 0);
    for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
      for (int u = 0; u < 2; u++)
        if (t == 0 || d == TESSERA_F32)
          check_potri(ctx, (tessera_dtype_t)d, u ? TESSERA_UPPER : TESSERA_LOWER,
                      2 * tiles[t] + 5 + d, 7 + (uint64_t)d, NULL);
    lc_finalize(ctx);
  }
}

static void bad_arguments(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(TILE);
  double a[4] = {1, 0, 0, 1}, ld;
  assert_int_equal(tessera_potri(ctx, (tessera_uplo_t)'X', TESSERA_F64, 2, a, 2), -2);
  lc_assert_error(ctx);
  assert_int_equal(tessera_potri(ctx, TESSERA_LOWER, (tessera_dtype_t)9, 2, a, 2), -3);
  assert_int_equal(tessera_potri(ctx, TESSERA_LOWER, TESSERA_F64, -1, a, 2), -4);
  assert_int_equal(tessera_potri(ctx, TESSERA_LOWER, TESSERA_F64, 2, NULL, 2), -5);
  assert_int_equal(tessera_potri(ctx, TESSERA_LOWER, TESSERA_F64, 2, a, 1), -6);
  assert_int_equal(tessera_logdet(ctx, TESSERA_LOWER, TESSERA_F64, 2, a, 2, NULL), -7);
  assert_int_equal(tessera_logdet(ctx, TESSERA_LOWER, TESSERA_F64, 0, a, 1, &ld), 0);
  assert_true(ld == 0);
  assert_int_equal(tessera_potri(NULL, TESSERA_LOWER, TESSERA_F64, 2, a, 2), -1);
  lc_finalize(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(potri_all),
      cmocka_unit_test(singular_factor_gives_info),
      cmocka_unit_test(gpus_only),
      cmocka_unit_test(bad_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
