/* tessera_potrf and tessera_tile_potrf: every dtype and triangle, sizes around tile
 * boundaries for several tile sizes, lda > n; residual, untouched opposite triangle and
 * padding, LAPACK's info on matrices that are not positive definite, NaN input, invalid
 * arguments; tile-level descriptors (owned tiles and views).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "linalg_common.h"

static int g_tiles[3] = {4, 16, 33};

/* Factors a random HPD matrix with tessera_potrf and checks it. */
static void check_potrf(tessera_context_t *ctx, tessera_dtype_t dt, tessera_uplo_t uplo, int64_t n,
                        uint64_t seed, void *unused) {
  (void)unused;
  int64_t lda = n + 3;
  tt_rng_t r = tt_rng(seed);
  void *a = lc_alloc(dt, (size_t)(lda * n));
  zc_t *full = lc_gen_hpd(dt, uplo, n, a, lda, &r);
  void *a0 = lc_dup(dt, a, (size_t)(lda * n));
  int rc = tessera_potrf(ctx, uplo, dt, n, a, lda);
  if (rc != 0)
    fail_msg("potrf %s uplo %c n %lld tile %d: returned %d (%s)", lc_name(dt), (char)uplo,
             (long long)n, tessera_default_tile(ctx), rc, tessera_last_error(ctx));
  double res = lc_potrf_resid(dt, uplo, n, full, a, lda);
  if (!(res < 10))
    fail_msg("potrf %s uplo %c n %lld tile %d: residual %g", lc_name(dt), (char)uplo, (long long)n,
             tessera_default_tile(ctx), res);
  size_t bad = lc_diff_outside(dt, uplo, n, n, a, a0, lda);
  if (bad)
    fail_msg("potrf %s uplo %c n %lld tile %d: %zu elements outside the triangle changed",
             lc_name(dt), (char)uplo, (long long)n, tessera_default_tile(ctx), bad);
  free(a);
  free(a0);
  free(full);
}

static void test_potrf_sizes(void **state) {
  int nb = *(int *)*state;
  tessera_context_t *ctx = lc_context(nb);
  lc_sweep(ctx, nb, check_potrf, NULL);
  /* n = 0 with no array at all */
  assert_int_equal(tessera_potrf(ctx, TESSERA_LOWER, TESSERA_F64, 0, NULL, 1), 0);
  lc_finalize(ctx);
}

/* Makes the leading minors of order k+1 (k in ks) non-positive; expects info = ks[0] + 1
 * from tessera (LAPACK-style, or tile-level on a view when `tile` is set) and LAPACKE. */
static void check_not_spd(tessera_context_t *ctx, tessera_dtype_t dt, tessera_uplo_t uplo,
                          int64_t n, const int64_t *ks, int nk, int tile) {
  int64_t lda = n + 3, nb = tessera_default_tile(ctx);
  tt_rng_t r = tt_rng((uint64_t)(n * 31 + ks[0]));
  void *a = lc_alloc(dt, (size_t)(lda * n));
  zc_t *full = lc_gen_hpd(dt, uplo, n, a, lda, &r);
  for (int i = 0; i < nk; i++) lc_set(dt, a, (size_t)(ks[i] + ks[i] * lda), -1.0);
  void *a0 = lc_dup(dt, a, (size_t)(lda * n)), *ref = lc_dup(dt, a, (size_t)(lda * n));
  int want = (int)ks[0] + 1, info = lc_lapack_potrf(dt, uplo, n, ref, lda), rc;
  assert_int_equal(info, want);
  if (tile) {
    tessera_matrix_t *A = NULL;
    assert_int_equal(tessera_matrix_view(ctx, dt, n, n, nb, nb, a, lda, &A), 0);
    rc = tessera_tile_potrf(uplo, A);
    assert_int_equal(tessera_matrix_destroy(A), 0);
  } else {
    rc = tessera_potrf(ctx, uplo, dt, n, a, lda);
  }
  if (rc != want)
    fail_msg("%spotrf %s uplo %c n %lld tile %lld, a[%lld][%lld] = -1: returned %d, LAPACK info %d",
             tile ? "tile_" : "", lc_name(dt), (char)uplo, (long long)n, (long long)nb,
             (long long)ks[0], (long long)ks[0], rc, want);
  assert_int_equal(lc_diff_outside(dt, uplo, n, n, a, a0, lda), 0);
  free(a);
  free(a0);
  free(ref);
  free(full);
}

static void test_potrf_not_spd(void **state) {
  int nb = *(int *)*state;
  tessera_context_t *ctx = lc_context(nb);
  int64_t n = 3 * nb + 5;
  int64_t ks[6][2] = {{0, 0}, {nb - 1, 0}, {nb, 0}, {nb + 2, 0}, {n - 1, 0}, {nb + 2, 2 * nb + 1}};
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int u = 0; u < 2; u++)
      for (int c = 0; c < 6; c++)
        check_not_spd(ctx, lc_dtypes[d], lc_uplos[u], n, ks[c], c == 5 ? 2 : 1, 0);
  /* two failing minors in different tile columns: the first one is reported */
  int64_t late_first[2] = {nb + 1, 3 * nb};
  check_not_spd(ctx, TESSERA_F64, TESSERA_LOWER, n, late_first, 2, 0);
  /* the same through the tile-level call on a view */
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    check_not_spd(ctx, lc_dtypes[d], lc_uplos[d % 2], n, ks[3], 1, 1);
  lc_finalize(ctx);
}

/* Both panel methods, forced whatever the devices through TESSERA_TRSM_INVERSE (the context's
 * default for every call): triangular solves, and products with the inverted diagonal tiles
 * (the default with GPUs); residuals and LAPACK info. */
static void test_potrf_panel_methods(void **state) {
  (void)state;
  const int nb = 16;
  for (int inverse = 0; inverse < 2; inverse++) {
    assert_int_equal(setenv("TESSERA_TRSM_INVERSE", inverse ? "1" : "0", 1), 0);
    tessera_context_t *ctx = lc_context(nb);
    lc_sweep(ctx, nb, check_potrf, NULL);
    for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
      for (int u = 0; u < 2; u++) {
        int64_t ks[2] = {3 * nb + 2, 0};
        check_not_spd(ctx, lc_dtypes[d], lc_uplos[u], 5 * nb + 3, ks, 1, u);
      }
    lc_finalize(ctx);
  }
  assert_int_equal(unsetenv("TESSERA_TRSM_INVERSE"), 0);
}

/* The panel method as a per-call option: it wins over the context's (TESSERA_TRSM_INVERSE,
 * read by tessera_init, which refuses a malformed value); both methods factor alike. */
static void test_potrf_panel_option(void **state) {
  (void)state;
  const int nb = 16;
  const int64_t n = 4 * nb + 3;
  tessera_context_t *ctx = NULL;
  assert_int_equal(setenv("TESSERA_TRSM_INVERSE", "yes", 1), 0);
  assert_int_equal(tessera_init(&ctx, NULL), TESSERA_ERR_ENV);
  assert_null(ctx);
  assert_int_equal(setenv("TESSERA_TRSM_INVERSE", "1", 1), 0);
  ctx = lc_context(nb);
  assert_int_equal(tessera_config(ctx)->trsm_inverse, 1);
  tt_rng_t r = tt_rng(3);
  double *a = lc_alloc(TESSERA_F64, (size_t)(n * n));
  double *f[2];
  zc_t *full = lc_gen_hpd(TESSERA_F64, TESSERA_UPPER, n, a, n, &r);
  for (int inverse = 0; inverse < 2; inverse++) {
    f[inverse] = lc_dup(TESSERA_F64, a, (size_t)(n * n));
    tessera_matrix_t *A = NULL;
    assert_int_equal(tessera_matrix_view(ctx, TESSERA_F64, n, n, nb, nb, f[inverse], n, &A), 0);
    tessera_potrf_options_t opts;
    tessera_potrf_options_init(&opts);
    assert_int_equal(opts.trsm_inverse, -1);
    opts.trsm_inverse = inverse;
    assert_int_equal(tessera_tile_potrf_opts(TESSERA_UPPER, A, &opts), 0);
    assert_int_equal(tessera_matrix_destroy(A), 0);
  }
  assert_int_equal(unsetenv("TESSERA_TRSM_INVERSE"), 0);
  double res = lc_potrf_resid(TESSERA_F64, TESSERA_UPPER, n, full, f[1], n);
  if (!(res < 10)) fail_msg("potrf with inverted diagonal tiles: residual %g", res);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i <= j; i++)
      assert_true(fabs(f[0][i + j * n] - f[1][i + j * n]) <= 1e-10 * (1 + fabs(f[0][i + j * n])));
  free(f[0]), free(f[1]), free(a), free(full);
  lc_finalize(ctx);
}

/* Tiles larger than the accelerators' pools (1 MiB, 512 x 512 doubles take 2): the tasks go to
 * the CPU workers, whose host memory holds them, instead of failing for memory on a device. */
static void test_potrf_tiles_beyond_pools(void **state) {
  (void)state;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.tile_size = 512;
  cfg.cpu_workers = 2;
  cfg.gpu_mem_limit = 1 << 20;
  cfg.perfmodel_file = "none"; /* nominal rates: the accelerators look fastest */
  tessera_context_t *ctx = NULL;
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  check_potrf(ctx, TESSERA_F64, TESSERA_LOWER, 1100, 7, NULL);
  lc_finalize(ctx);
}

/* NaN in the referenced triangle: a positive info naming the first minor that holds the NaN
 * (or a runtime status), and never a hang. */
static void test_potrf_nan(void **state) {
  (void)state;
  int nb = 16;
  tessera_context_t *ctx = lc_context(nb);
  int64_t n = 2 * nb + 5, lda = n + 3;
  int64_t where[4][2] = {{nb + 1, nb + 1}, {2 * nb + 2, 3}, {n - 1, 0}, {nb + 3, nb + 1}};
  tt_watchdog(120);
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int u = 0; u < 2; u++)
      for (int c = 0; c < 4; c++) {
        tessera_dtype_t dt = lc_dtypes[d];
        tessera_uplo_t uplo = lc_uplos[u];
        tt_rng_t r = tt_rng((uint64_t)(d * 10 + u * 100 + c));
        void *a = lc_alloc(dt, (size_t)(lda * n));
        free(lc_gen_hpd(dt, uplo, n, a, lda, &r));
        int64_t i = where[c][0], j = where[c][1]; /* i >= j */
        if (uplo == TESSERA_LOWER)
          lc_set(dt, a, (size_t)(i + j * lda), CMPLX(NAN, NAN));
        else
          lc_set(dt, a, (size_t)(j + i * lda), CMPLX(NAN, NAN));
        int rc = tessera_potrf(ctx, uplo, dt, n, a, lda);
        if (!(rc == i + 1 || rc <= TESSERA_ERR_BASE))
          fail_msg("potrf %s uplo %c, NaN at (%lld, %lld): returned %d, expected %lld or a "
                   "runtime status",
                   lc_name(dt), (char)uplo, (long long)i, (long long)j, rc, (long long)(i + 1));
        free(a);
      }
  tt_watchdog(600);
  /* the context still works */
  check_potrf(ctx, TESSERA_F64, TESSERA_LOWER, n, 5, NULL);
  lc_finalize(ctx);
}

static void test_potrf_args(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(4);
  double a[25], a0[25];
  for (int i = 0; i < 25; i++) a[i] = a0[i] = (i % 6 == 0) ? 10.0 : 0.5;
  assert_int_equal(tessera_potrf(ctx, (tessera_uplo_t)'X', TESSERA_F64, 5, a, 5), -2);
  lc_assert_error(ctx);
  assert_int_equal(tessera_potrf(ctx, TESSERA_LOWER, (tessera_dtype_t)9, 5, a, 5), -3);
  lc_assert_error(ctx);
  assert_int_equal(tessera_potrf(ctx, TESSERA_LOWER, TESSERA_F64, -1, a, 5), -4);
  lc_assert_error(ctx);
  assert_int_equal(tessera_potrf(ctx, TESSERA_LOWER, TESSERA_F64, 5, NULL, 5), -5);
  lc_assert_error(ctx);
  assert_int_equal(tessera_potrf(ctx, TESSERA_UPPER, TESSERA_F64, 5, a, 4), -6);
  lc_assert_error(ctx);
  assert_int_equal(tessera_potrf(NULL, TESSERA_UPPER, TESSERA_F64, 5, a, 5), -1);
  assert_memory_equal(a, a0, sizeof a);
  /* a valid call afterwards */
  assert_int_equal(tessera_potrf(ctx, TESSERA_LOWER, TESSERA_F64, 5, a, 5), 0);
  /* descriptors */
  tessera_matrix_t *A = NULL;
  assert_true(tessera_matrix_create(ctx, TESSERA_F64, 5, 5, 0, 4, &A) < 0);
  assert_true(tessera_matrix_create(ctx, TESSERA_F64, -1, 5, 4, 4, &A) < 0);
  assert_true(tessera_matrix_create(ctx, (tessera_dtype_t)9, 5, 5, 4, 4, &A) < 0);
  assert_true(tessera_matrix_view(ctx, TESSERA_F64, 5, 5, 4, 4, a, 4, &A) < 0);
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, 5, 7, 4, 4, &A), 0);
  assert_true(tessera_tile_potrf(TESSERA_LOWER, A) < 0); /* not square */
  assert_true(tessera_tile_potrf((tessera_uplo_t)'X', A) < 0);
  assert_true(tessera_tile_potrf(TESSERA_LOWER, NULL) < 0);
  assert_int_equal(tessera_matrix_destroy(A), 0);
  assert_int_equal(tessera_matrix_destroy(NULL), 0);
  lc_finalize(ctx);
}

/* Tile level: owned tiles (create, import, potrf, export) and a view of the array. */
static void test_tile_potrf(void **state) {
  (void)state;
  int nb = 16;
  tessera_context_t *ctx = lc_context(7); /* the descriptors' tiling is what counts */
  int64_t n = (5 * nb) / 2 + 3, lda = n + 3;
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int u = 0; u < 2; u++) {
      tessera_dtype_t dt = lc_dtypes[d];
      tessera_uplo_t uplo = lc_uplos[u];
      tt_rng_t r = tt_rng((uint64_t)(d * 2 + u + 1));
      void *a = lc_alloc(dt, (size_t)(lda * n));
      zc_t *full = lc_gen_hpd(dt, uplo, n, a, lda, &r);
      void *a0 = lc_dup(dt, a, (size_t)(lda * n)), *out = lc_dup(dt, a, (size_t)(lda * n));
      tessera_matrix_t *A = NULL;
      assert_int_equal(tessera_matrix_create(ctx, dt, n, n, nb, nb, &A), 0);
      assert_int_equal(tessera_matrix_rows(A), n);
      assert_int_equal(tessera_matrix_cols(A), n);
      assert_int_equal(tessera_matrix_tile_rows(A), nb);
      assert_int_equal(tessera_matrix_tile_cols(A), nb);
      assert_int_equal(tessera_matrix_dtype(A), dt);
      int64_t nt = (n + nb - 1) / nb;
      assert_non_null(tessera_matrix_tile(A, nt - 1, nt - 1));
      assert_null(tessera_matrix_tile(A, nt, 0));
      assert_null(tessera_matrix_tile(A, 0, -1));
      assert_int_equal(tessera_matrix_import(A, a, lda), 0);
      assert_int_equal(tessera_tile_potrf(uplo, A), 0);
      assert_int_equal(tessera_matrix_export(A, out, lda), 0);
      double res = lc_potrf_resid(dt, uplo, n, full, out, lda);
      if (!(res < 10)) fail_msg("tile_potrf %s %c: residual %g", lc_name(dt), (char)uplo, res);
      assert_int_equal(tessera_matrix_destroy(A), 0);
      /* a view: the array holds the factor once the call returns */
      assert_int_equal(tessera_matrix_view(ctx, dt, n, n, nb, nb, a, lda, &A), 0);
      assert_int_equal(tessera_tile_potrf(uplo, A), 0);
      res = lc_potrf_resid(dt, uplo, n, full, a, lda);
      if (!(res < 10)) fail_msg("view potrf %s %c: residual %g", lc_name(dt), (char)uplo, res);
      assert_int_equal(lc_diff_outside(dt, uplo, n, n, a, a0, lda), 0);
      assert_int_equal(tessera_matrix_destroy(A), 0);
      free(a);
      free(a0);
      free(out);
      free(full);
    }
  lc_finalize(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_prestate(test_potrf_sizes, &g_tiles[0]),
      cmocka_unit_test_prestate(test_potrf_sizes, &g_tiles[1]),
      cmocka_unit_test_prestate(test_potrf_sizes, &g_tiles[2]),
      cmocka_unit_test_prestate(test_potrf_not_spd, &g_tiles[0]),
      cmocka_unit_test_prestate(test_potrf_not_spd, &g_tiles[1]),
      cmocka_unit_test_prestate(test_potrf_not_spd, &g_tiles[2]),
      cmocka_unit_test(test_potrf_panel_methods),
      cmocka_unit_test(test_potrf_panel_option),
      cmocka_unit_test(test_potrf_nan),
      cmocka_unit_test(test_potrf_tiles_beyond_pools),
      cmocka_unit_test(test_potrf_args),
      cmocka_unit_test(test_tile_potrf),
  };
  tt_watchdog(600);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
