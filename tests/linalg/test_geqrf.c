/* tessera_geqrf and tessera_tile_geqrf: every dtype, square, tall and wide matrices, sizes that
 * are not panel multiples, empty ones and vectors, lda > m, rank-deficient matrices (zero
 * columns); Q formed from the result by LAPACK's orgqr / ungqr: ‖A - Q R‖ / (‖A‖ max(m, n) ε) and
 * ‖I - Qᴴ Q‖ / (m ε) below 10, the padding rows untouched; a tiling that is not in column
 * panels (QR through a copy); NaN carried through without a failure; invalid arguments.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "qr_common.h"

static int g_tiles[2] = {8, 24};

/* One matrix through tessera_geqrf: a random m x n (lda m + 3, NaN padding), with the columns
 * of `zero_every` (when > 0) zero, and with `near` (when not 0) column 1 made column 0 plus
 * `near` times itself (a condition number about 1 / near). */
static void one_case(tessera_context_t *ctx, tessera_dtype_t dt, int64_t m, int64_t n,
                     int zero_every, double near, uint64_t seed) {
  const int64_t lda = m + 3, k = m < n ? m : n;
  tt_rng_t r = tt_rng(seed);
  void *a = lc_alloc(dt, (size_t)(lda * (n + 1)));
  lc_fill_nan(dt, a, (size_t)(lda * (n + 1)));
  lc_fill_random(dt, a, m, n, lda, &r);
  for (int64_t j = 0; zero_every > 0 && j < n; j += zero_every)
    for (int64_t i = 0; i < m; i++) lc_set(dt, a, (size_t)(i + j * lda), 0.0);
  for (int64_t i = 0; near != 0 && n > 1 && i < m; i++)
    lc_set(dt, a, (size_t)(i + lda),
           lc_get(dt, a, (size_t)i) + near * lc_get(dt, a, (size_t)(i + lda)));
  zc_t *full = lc_promote(dt, m, n, a, lda);
  void *f = lc_dup(dt, a, (size_t)(lda * (n + 1)));
  void *tau = lc_alloc(dt, (size_t)(k + 1));
  int rc = tessera_geqrf(ctx, dt, m, n, f, lda, tau);
  if (rc)
    fail_msg("geqrf %s m %lld n %lld: %d (%s)", lc_name(dt), (long long)m, (long long)n, rc,
             tessera_last_error(ctx));
  qr_check(dt, m, n, full, f, lda, tau, zero_every ? "geqrf (zero columns)" : "geqrf");
  const size_t bad = lc_diff_outside(dt, 0, m, n, f, a, lda);
  if (bad)
    fail_msg("geqrf %s m %lld n %lld: %zu padding elements changed", lc_name(dt), (long long)m,
             (long long)n, bad);
  free(a), free(full), free(f), free(tau);
}

static void test_geqrf_shapes(void **state) {
  const int tile = *(int *)*state;
  tessera_context_t *ctx = lc_context(tile);
  const int64_t t = tile;
  const int64_t shapes[][2] = {{0, 0},
                               {0, 5},
                               {5, 0},
                               {1, 1},
                               {1, 7},
                               {7, 1},
                               {t, t},
                               {t + 1, t - 1},
                               {3 * t + 5, t},
                               {t, 3 * t + 5},
                               {4 * t + 3, 2 * t + 1}};
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      one_case(ctx, lc_dtypes[d], shapes[s][0], shapes[s][1], 0, 0,
               (uint64_t)(tile * 1000 + d * 100 + (int)s));
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    one_case(ctx, lc_dtypes[d], 3 * t + 1, 2 * t + 3, 3, 0, (uint64_t)(77 + d));
  lc_finalize(ctx);
}

/* The library's own panel width (no tile configured): a tall matrix in several narrow panels
 * on a context of CPUs. */
static void test_geqrf_default_panels(void **state) {
  (void)state;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 2, cfg.gpus = 0;
  tessera_context_t *ctx = NULL;
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    one_case(ctx, lc_dtypes[d], 1500, 150, 0, 0, (uint64_t)(5000 + d));
  lc_finalize(ctx);
}

/* Tall matrices (m >= 16 n) with the library's own panels: on GPUs one panel, factored by
 * CholeskyQR on real dtypes where accurate and by Householder otherwise: columns close to
 * orthogonal (one pass), well conditioned (two), with a condition number about 1e9 (1e3 for
 * single precision), and rank-deficient. */
static void test_geqrf_tall(void **state) {
  (void)state;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  tessera_context_t *ctx = NULL;
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++) {
    const tessera_dtype_t dt = lc_dtypes[d];
    const bool single = dt == TESSERA_F32 || dt == TESSERA_C64;
    one_case(ctx, dt, 4000, 8, 0, 0, (uint64_t)(5900 + d));
    one_case(ctx, dt, 1000, 40, 0, 0, (uint64_t)(6000 + d));
    one_case(ctx, dt, 1000, 40, 0, single ? 1e-3 : 1e-9, (uint64_t)(6100 + d));
    one_case(ctx, dt, 1000, 40, 7, 0, (uint64_t)(6200 + d));
  }
  lc_finalize(ctx);
}

/* A matrix tiled in square tiles (not column panels): QR through a copy in panels. */
static void test_tile_geqrf(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(8);
  const tessera_dtype_t dt = TESSERA_F64;
  const int64_t m = 45, n = 29, lda = m;
  tt_rng_t r = tt_rng(5);
  void *a = lc_alloc(dt, (size_t)(lda * n));
  lc_fill_random(dt, a, m, n, lda, &r);
  zc_t *full = lc_promote(dt, m, n, a, lda);
  double tau[29];
  tessera_matrix_t *A = NULL;
  assert_int_equal(tessera_matrix_view(ctx, dt, m, n, 8, 8, a, lda, &A), 0);
  assert_int_equal(tessera_tile_geqrf(A, tau), 0);
  assert_int_equal(tessera_matrix_destroy(A), 0);
  qr_check(dt, m, n, full, a, lda, tau, "tile_geqrf");
  free(a), free(full);
  lc_finalize(ctx);
}

/* NaN goes through as LAPACK carries it: no failure, NaN in the result. */
static void test_geqrf_nan(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(8);
  double a[20 * 12], tau[12];
  tt_rng_t r = tt_rng(9);
  lc_fill_random(TESSERA_F64, a, 20, 12, 20, &r);
  a[3 + 5 * 20] = NAN;
  assert_int_equal(tessera_geqrf(ctx, TESSERA_F64, 20, 12, a, 20, tau), 0);
  int nans = 0;
  for (int i = 0; i < 20 * 12; i++) nans += isnan(a[i]);
  assert_true(nans > 0);
  lc_finalize(ctx);
}

static void test_geqrf_args(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(8);
  double a[16] = {0}, tau[4];
  assert_int_equal(tessera_geqrf(NULL, TESSERA_F64, 4, 4, a, 4, tau), -1);
  const struct {
    int expect;
    tessera_dtype_t dt;
    int64_t m, n;
    void *a;
    int64_t lda;
    void *tau;
  } bad[] = {{-2, (tessera_dtype_t)7, 4, 4, a, 4, tau}, {-3, TESSERA_F64, -1, 4, a, 4, tau},
             {-4, TESSERA_F64, 4, -1, a, 4, tau},       {-5, TESSERA_F64, 4, 4, NULL, 4, tau},
             {-6, TESSERA_F64, 4, 4, a, 3, tau},        {-7, TESSERA_F64, 4, 4, a, 4, NULL}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(
        tessera_geqrf(ctx, bad[i].dt, bad[i].m, bad[i].n, bad[i].a, bad[i].lda, bad[i].tau),
        bad[i].expect);
    lc_assert_error(ctx);
  }
  assert_int_equal(tessera_tile_geqrf(NULL, tau), -1);
  lc_finalize(ctx);
}

int main(void) {
  tt_watchdog(600);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_prestate(test_geqrf_shapes, &g_tiles[0]),
      cmocka_unit_test_prestate(test_geqrf_shapes, &g_tiles[1]),
      cmocka_unit_test(test_geqrf_default_panels),
      cmocka_unit_test(test_geqrf_tall),
      cmocka_unit_test(test_tile_geqrf),
      cmocka_unit_test(test_geqrf_nan),
      cmocka_unit_test(test_geqrf_args),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
