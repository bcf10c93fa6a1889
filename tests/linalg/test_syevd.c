/* tessera_syevd / heevd on a context of CPU workers: random Hermitian matrices of every dtype,
 * both triangles, orders that are not tile multiples, 0 and 1; with vectors the residual
 * ‖A V − V Λ‖ / (‖A‖ n ε) and the orthogonality ‖I − Vᴴ V‖ / (n ε), without them the eigenvalues
 * against LAPACK's (zheev on the matrix promoted to double complex); clustered and repeated
 * eigenvalues; tiny and huge norms (the scaling); orders above the divide and conquer's leaves;
 * NaN; the tile-level form (tessera_tile_syevd on a descriptor); and the argument checks. The
 * random, spectra and NaN cases run with each method (tessera_eig_method_t: one stage on one
 * device, two stages, and by cost, which tries each and then takes the faster); with cost the
 * context's history, written at finalize, holds both methods' measurements. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "linalg_common.h"

static const int nb = 8;

/* w[i] of the dtype's real type. */
static double value(tessera_dtype_t dt, const void *w, int64_t i) {
  return dt == TESSERA_F32 || dt == TESSERA_C64 ? ((const float *)w)[i] : ((const double *)w)[i];
}

/* The scale every eigenvalue of a call is divided by before the checks. */
static double g_scale = 1;

static double eig(tessera_dtype_t dt, const void *w, int64_t i) {
  return value(dt, w, i) / g_scale;
}

/* A Hermitian n x n (full, double complex): random, or with `spectrum` (n values) Q diag Qᴴ
 * for a random unitary Q. */
static zc_t *hermitian(tessera_dtype_t dt, int64_t n, const double *spectrum, tt_rng_t *r) {
  zc_t *h = lc_zalloc((size_t)(n * n) + 1);
  zc_t *g = lc_zalloc((size_t)(n * n) + 1);
  for (int64_t i = 0; i < n * n; i++) g[i] = lc_rand(dt, r);
  if (!spectrum) {
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = j; i < n; i++) {
        const zc_t v = i == j ? creal(g[i + j * n]) : g[i + j * n];
        h[i + j * n] = v;
        h[j + i * n] = conj(v);
      }
  } else if (n > 0) {
    zc_t *tau = lc_zalloc((size_t)n);
    assert_int_equal(LAPACKE_zgeqrf(LAPACK_COL_MAJOR, (lapack_int)n, (lapack_int)n,
                                    (lapack_complex_double *)g, (lapack_int)n,
                                    (lapack_complex_double *)tau),
                     0);
    assert_int_equal(LAPACKE_zungqr(LAPACK_COL_MAJOR, (lapack_int)n, (lapack_int)n, (lapack_int)n,
                                    (lapack_complex_double *)g, (lapack_int)n,
                                    (lapack_complex_double *)tau),
                     0);
    /* h = Q diag(spectrum) Qᴴ, Q the unitary factor now in g */
    zc_t *qs = lc_zalloc((size_t)(n * n));
    for (int64_t k = 0; k < n; k++)
      for (int64_t i = 0; i < n; i++) qs[i + k * n] = g[i + k * n] * spectrum[k];
    const zc_t one = 1, zero = 0;
    cblas_zgemm(CblasColMajor, CblasNoTrans, CblasConjTrans, (int)n, (int)n, (int)n, &one, qs,
                (int)n, g, (int)n, &zero, h, (int)n);
    for (int64_t j = 0; j < n; j++) /* Hermitian to the last bit */
      for (int64_t i = j; i < n; i++)
        h[i + j * n] = i == j ? creal(h[i + j * n]) : conj(h[j + i * n]);
    free(qs);
    free(tau);
  }
  free(g);
  return h;
}

/* One call: A (full h, scaled by `scale`) given by its `uplo` triangle in the dtype (the other
 * triangle NaN, lda n + 2), checked as the file's header says. */
static void one_case(tessera_context_t *ctx, tessera_dtype_t dt, tessera_uplo_t uplo,
                     tessera_job_t job, int64_t n, const zc_t *h, double scale, bool tile) {
  const int64_t lda = n + 2;
  void *a = lc_alloc(dt, (size_t)(lda * (n > 0 ? n : 1)));
  lc_fill_nan(dt, a, (size_t)(lda * (n > 0 ? n : 1)));
  zc_t *full = lc_zalloc((size_t)(n * n) + 1);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++)
      if (lc_in_tri(uplo, i, j)) lc_set(dt, a, (size_t)(i + j * lda), scale * h[i + j * n]);
  for (int64_t j = 0; j < n; j++) /* A as the dtype holds it, divided by scale (no overflow) */
    for (int64_t i = 0; i < n; i++) {
      const zc_t v =
          lc_get(dt, a, (size_t)(lc_in_tri(uplo, i, j) ? i + j * lda : j + i * lda)) / scale;
      full[i + j * n] = lc_in_tri(uplo, i, j) ? v : conj(v);
      if (i == j) full[i + j * n] = creal(v);
    }
  void *w = calloc((size_t)n + 1, sizeof(double));
  int rc = 0;
  if (tile) { /* the descriptor's tiles (nb x 5, not square) hold A; the result comes back */
    tessera_matrix_t *A = NULL;
    assert_int_equal(tessera_matrix_create(ctx, dt, n, n, nb, 5, &A), 0);
    assert_int_equal(tessera_matrix_import(A, a, lda), 0);
    rc = tessera_tile_syevd(job, uplo, A, w);
    assert_int_equal(tessera_matrix_export(A, a, lda), 0);
    assert_int_equal(tessera_matrix_destroy(A), 0);
  } else {
    rc = tessera_syevd(ctx, job, uplo, dt, n, a, lda, w);
  }
  if (rc)
    fail_msg("syevd %s %c %c n %lld: %d (%s)", lc_name(dt), (char)uplo, (char)job, (long long)n, rc,
             tessera_last_error(ctx));
  /* the rows past n never written; with values alone, nor the other triangle (LAPACK's) */
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < lda; i++)
      if ((i >= n || (job == TESSERA_VALUES && !lc_in_tri(uplo, i, j))) &&
          !isnan(creal(lc_get(dt, a, (size_t)(i + j * lda)))))
        fail_msg("syevd %s %c %c n %lld: A(%lld, %lld) written", lc_name(dt), (char)uplo, (char)job,
                 (long long)n, (long long)i, (long long)j);
  g_scale = scale;
  const double an = lc_norm_fro(full, (size_t)(n * n)), eps = lc_eps(dt);
  const double denom = (an > 0 ? an : 1) * (double)(n > 0 ? n : 1) * eps;
  for (int64_t i = 1; i < n; i++)
    if (!(eig(dt, w, i - 1) <= eig(dt, w, i)))
      fail_msg("syevd %s n %lld: eigenvalues not ascending at %lld", lc_name(dt), (long long)n,
               (long long)i);
  double *lambda = calloc((size_t)n + 1, sizeof *lambda);
  for (int64_t i = 0; i < n; i++) lambda[i] = eig(dt, w, i);
  if (job == TESSERA_VECTORS) {
    zc_t *v = lc_promote(dt, n, n, a, lda);
    double res, orth;
    lc_eig_vector_norms(n, full, v, lambda, &res, &orth);
    res /= denom, orth /= (double)(n > 0 ? n : 1) * eps;
    if (!(res < 10) || !(orth < 10))
      fail_msg("syevd %s %c n %lld: residual %g, orthogonality %g", lc_name(dt), (char)uplo,
               (long long)n, res, orth);
    free(v);
  } else {
    const double worst = lc_eig_value_error(n, full, lambda);
    if (!(worst / denom < 10))
      fail_msg("syevd %s %c n %lld: eigenvalues off by %g (ratio %g)", lc_name(dt), (char)uplo,
               (long long)n, worst, worst / denom);
  }
  free(lambda);
  free(a), free(full), free(w);
}

/* A context of the file's tile whose eigensolver takes method m, its history kept in `history`
 * (NULL: none). */
static tessera_context_t *context_of(tessera_eig_method_t m, const char *history) {
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.tile_size = nb;
  cfg.cpu_workers = tt_quick() ? 2 : 3;
  cfg.eig_method = m;
  cfg.perfmodel_file = history ? history : "none";
  return lc_init(&cfg);
}

static const tessera_eig_method_t one = TESSERA_EIG_ONE, two = TESSERA_EIG_TWO,
                                  cost = TESSERA_EIG_COST;

static void test_syevd_random(void **state) {
  const tessera_eig_method_t m = *(const tessera_eig_method_t *)*state;
  tessera_context_t *ctx = context_of(m, NULL);
  int64_t sizes[8];
  const int ns = lc_sizes(nb, sizes);
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int u = 0; u < 2; u++)
      for (int s = 0; s < ns; s++) {
        tt_rng_t r = tt_rng((uint64_t)(3000 + 100 * d + 10 * u + s));
        zc_t *h = hermitian(lc_dtypes[d], sizes[s], NULL, &r);
        one_case(ctx, lc_dtypes[d], lc_uplos[u], TESSERA_VECTORS, sizes[s], h, 1, false);
        one_case(ctx, lc_dtypes[d], lc_uplos[u], TESSERA_VALUES, sizes[s], h, 1, false);
        if (s == ns - 2) /* the tile-level form on one order */
          one_case(ctx, lc_dtypes[d], lc_uplos[u], TESSERA_VECTORS, sizes[s], h, 1, true);
        free(h);
      }
  lc_finalize(ctx);
}

/* Repeated and clustered eigenvalues (which divide and conquer deflates), and norms near the
 * dtype's underflow and overflow (LAPACK's scaling). */
static void test_syevd_spectra_and_norms(void **state) {
  const tessera_eig_method_t m = *(const tessera_eig_method_t *)*state;
  tessera_context_t *ctx = context_of(m, NULL);
  const int64_t n = 37;
  double spectrum[37];
  for (int i = 0; i < n; i++) spectrum[i] = i < 12 ? 1.0 : i < 20 ? 2.0 + 1e-9 * i : (double)i;
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++) {
    const tessera_dtype_t dt = lc_dtypes[d];
    const bool single = dt == TESSERA_F32 || dt == TESSERA_C64;
    tt_rng_t r = tt_rng((uint64_t)(4000 + d));
    zc_t *h = hermitian(dt, n, spectrum, &r);
    one_case(ctx, dt, TESSERA_LOWER, TESSERA_VECTORS, n, h, 1, false);
    one_case(ctx, dt, TESSERA_UPPER, TESSERA_VALUES, n, h, 1, true);
    free(h);
    h = hermitian(dt, n, NULL, &r);
    const double tiny = single ? 1e-30 : 1e-290, huge = single ? 1e30 : 1e290;
    one_case(ctx, dt, TESSERA_LOWER, TESSERA_VECTORS, n, h, tiny, false);
    one_case(ctx, dt, TESSERA_LOWER, TESSERA_VECTORS, n, h, huge, false);
    free(h);
  }
  lc_finalize(ctx);
}

/* Orders above the divide and conquer's leaves (where the context has accelerators: simulated
 * devices or GPUs, the merges run there), random and with a third of the spectrum repeated;
 * under the sanitizers f64 alone, random; with accelerators, f64 also within a scope of the
 * accelerators alone. On tiles of 40 (15 x 15 of them): the merges need an order above the
 * leaves, not small tiles, and the reduction's tasks grow as the cube of the tiles a side. The
 * two stages forced: the merges are theirs (and within one accelerator's scope E stays one tile
 * there from the merges through Q2 and Q1). */
static void test_syevd_merges(void **state) {
  (void)state;
  enum { N = 600, TILE = 40 };
  tessera_config_t cfg;
  lc_config(TILE, &cfg);
  cfg.eig_method = TESSERA_EIG_TWO;
  tessera_context_t *ctx = lc_init(&cfg);
  static double spectrum[N];
  for (int i = 0; i < N; i++) spectrum[i] = i < N / 3 ? 1.0 : (double)i / N;
  const bool quick = tt_quick();
  for (int d = quick ? 1 : 0; d < (quick ? 2 : TESSERA_NUM_DTYPES); d++) {
    tt_rng_t r = tt_rng((uint64_t)(5000 + d));
    zc_t *h = hermitian(lc_dtypes[d], N, NULL, &r);
    one_case(ctx, lc_dtypes[d], TESSERA_LOWER, TESSERA_VECTORS, N, h, 1, false);
    free(h);
    if (quick) continue;
    h = hermitian(lc_dtypes[d], N, spectrum, &r);
    one_case(ctx, lc_dtypes[d], TESSERA_UPPER, TESSERA_VECTORS, N, h, 1, false);
    free(h);
  }
  lc_finalize(ctx);
  /* a scope of the accelerators alone (as the JAX binding's GPU calls hold it), pools large
   * enough for the tiles: the host stages' tasks still run on the CPU workers */
  cfg.cpu_workers = 2;
  cfg.gpu_mem_limit = (int64_t)256 << 20;
  ctx = lc_init(&cfg);
  if (tessera_accelerator_count(ctx) > 0) {
    /* every accelerator (Q2's panels spread), then the first alone (E one tile from the merges
     * to Q2) */
    tessera_scope_t one = tessera_scope_gpus();
    one.gpu_mask = 1;
    const tessera_scope_t scopes[2] = {tessera_scope_gpus(), one};
    for (int k = 0; k < 2; k++) {
      assert_int_equal(tessera_set_scope(ctx, scopes[k]), 0);
      tt_rng_t r = tt_rng((uint64_t)(5100 + k));
      zc_t *h = hermitian(TESSERA_F64, N, NULL, &r);
      one_case(ctx, TESSERA_F64, TESSERA_LOWER, TESSERA_VECTORS, N, h, 1, false);
      free(h);
    }
  }
  lc_finalize(ctx);
}

static void test_syevd_nan_and_args(void **state) {
  const tessera_eig_method_t method = *(const tessera_eig_method_t *)*state;
  tessera_context_t *ctx = context_of(method, NULL);
  const int64_t n = 20;
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++) {
    const tessera_dtype_t dt = lc_dtypes[d];
    tt_rng_t r = tt_rng((uint64_t)(5000 + d));
    void *a = lc_alloc(dt, (size_t)(n * n));
    lc_fill_random(dt, a, n, n, n, &r);
    lc_set(dt, a, (size_t)(13 + 5 * n), NAN);
    double w[20];
    assert_int_equal(tessera_syevd(ctx, TESSERA_VECTORS, TESSERA_LOWER, dt, n, a, n, w), 6);
    lc_assert_error(ctx);
    assert_true(isnan(value(dt, w, 0)) && isnan(creal(lc_get(dt, a, 0))));
    /* the tile-level form: a solve in one stage on a device's copy of the tiles sees the NaN in
     * its eigenvalues and leaves A to the host path, which names the column */
    lc_fill_random(dt, a, n, n, n, &r);
    lc_set(dt, a, (size_t)(13 + 5 * n), NAN);
    tessera_matrix_t *A = NULL;
    assert_int_equal(tessera_matrix_create(ctx, dt, n, n, nb, 5, &A), 0);
    assert_int_equal(tessera_matrix_import(A, a, n), 0);
    assert_int_equal(tessera_tile_syevd(TESSERA_VECTORS, TESSERA_LOWER, A, w), 6);
    lc_assert_error(ctx);
    assert_int_equal(tessera_matrix_export(A, a, n), 0);
    assert_int_equal(tessera_matrix_destroy(A), 0);
    assert_true(isnan(value(dt, w, 0)) && isnan(creal(lc_get(dt, a, 0))));
    free(a);
  }
  double a[4] = {1, 0, 0, 1}, w[2];
  assert_int_equal(tessera_syevd(ctx, (tessera_job_t)'X', TESSERA_LOWER, TESSERA_F64, 2, a, 2, w),
                   -2);
  assert_int_equal(tessera_syevd(ctx, TESSERA_VALUES, (tessera_uplo_t)'Q', TESSERA_F64, 2, a, 2, w),
                   -3);
  assert_int_equal(
      tessera_syevd(ctx, TESSERA_VALUES, TESSERA_LOWER, (tessera_dtype_t)9, 2, a, 2, w), -4);
  assert_int_equal(tessera_syevd(ctx, TESSERA_VALUES, TESSERA_LOWER, TESSERA_F64, -1, a, 2, w), -5);
  assert_int_equal(tessera_syevd(ctx, TESSERA_VALUES, TESSERA_LOWER, TESSERA_F64, 2, NULL, 2, w),
                   -6);
  assert_int_equal(tessera_syevd(ctx, TESSERA_VALUES, TESSERA_LOWER, TESSERA_F64, 2, a, 1, w), -7);
  assert_int_equal(tessera_heevd(ctx, TESSERA_VALUES, TESSERA_LOWER, TESSERA_F64, 2, a, 2, NULL),
                   -8);
  lc_assert_error(ctx);
  assert_int_equal(tessera_heevd(ctx, TESSERA_VALUES, TESSERA_LOWER, TESSERA_F64, 0, NULL, 1, NULL),
                   0);
  /* the host bytes: n = 0 none; at least stage 1's reflectors (and with values alone a working
   * copy), more for c128 (twice the bytes, T's eigenvectors in f64 beside them); bad arguments
   * refused */
  const int64_t m = 300;
  const double mm = (double)m * (double)m;
  assert_true(tessera_syevd_host_bytes(ctx, TESSERA_VECTORS, TESSERA_F64, 0) == 0);
  const double f64 = tessera_syevd_host_bytes(ctx, TESSERA_VECTORS, TESSERA_F64, m);
  const double c128 = tessera_syevd_host_bytes(ctx, TESSERA_VECTORS, TESSERA_C128, m);
  assert_true(f64 >= mm * 8 && c128 > f64 + mm * 8);
  assert_true(tessera_syevd_host_bytes(ctx, TESSERA_VALUES, TESSERA_F32, m) >= 2 * mm * 4);
  assert_true(tessera_syevd_host_bytes(ctx, (tessera_job_t)'X', TESSERA_F64, m) == -2);
  assert_true(tessera_syevd_host_bytes(ctx, TESSERA_VALUES, (tessera_dtype_t)9, m) == -3);
  assert_true(tessera_syevd_host_bytes(ctx, TESSERA_VALUES, TESSERA_F64, -1) == -4);
  assert_true(tessera_syevd_host_bytes(NULL, TESSERA_VALUES, TESSERA_F64, m) == -1);
  lc_assert_error(ctx);
  tessera_matrix_t *R = NULL;
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, 3, 2, 2, 2, &R), 0);
  assert_int_equal(tessera_tile_syevd(TESSERA_VALUES, TESSERA_LOWER, R, w), -3);
  assert_int_equal(tessera_tile_syevd(TESSERA_VALUES, TESSERA_LOWER, NULL, w), -3);
  assert_int_equal(tessera_tile_syevd((tessera_job_t)'X', TESSERA_LOWER, R, w), -1);
  lc_assert_error(ctx);
  assert_int_equal(tessera_matrix_destroy(R), 0);
  lc_finalize(ctx);
}

/* By cost, calls at an order take the methods in turn, the one stage first, until each has been
 * measured beyond its first (trial) call, and the faster after: after five calls the history
 * (written at finalize) holds both methods' seconds at that order's octave. */
static void test_cost_measures_both(void **state) {
  (void)state;
  char path[] = "/tmp/tessera_eig_historyXXXXXX";
  const int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  tessera_context_t *ctx = context_of(TESSERA_EIG_COST, path);
  tt_rng_t r = tt_rng(6000);
  zc_t *h = hermitian(TESSERA_F64, 50, NULL, &r);
  for (int call = 0; call < 5; call++)
    one_case(ctx, TESSERA_F64, TESSERA_LOWER, TESSERA_VECTORS, 50, h, 1, false);
  free(h);
  lc_finalize(ctx);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char line[512];
  int seen = 0;
  while (fgets(line, sizeof line, f))
    seen |= (strncmp(line, "syevd:one_stage ", 16) ? 0 : 1) |
            (strncmp(line, "syevd:two_stage ", 16) ? 0 : 2) |
            (strncmp(line, "syevd:one_stage_trial ", 22) ? 0 : 4) |
            (strncmp(line, "syevd:two_stage_trial ", 22) ? 0 : 8);
  fclose(f);
  remove(path);
  if (seen != 15) fail_msg("the history lacks a method's measurement or trial (seen %d)", seen);
}

/* The band width the policy gives a call (tessera_tile_for_eig): 128 with vectors, for values
 * alone 64 (96 from n = 24576) where the GPU forms solve it, else 128; a configured tile always;
 * at most n. */
static void test_band_width(void **state) {
  (void)state;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 2;
  cfg.perfmodel_file = "none";
  tessera_context_t *ctx = lc_init(&cfg);
  const bool gpus = tessera_accelerator_count(ctx) > 0;
  assert_int_equal(tessera_tile_for_eig(ctx, TESSERA_VECTORS, TESSERA_F64, 1000), 128);
  assert_int_equal(tessera_tile_for_eig(ctx, TESSERA_VECTORS, TESSERA_C64, 50), 50);
  assert_int_equal(tessera_tile_for_eig(ctx, TESSERA_VALUES, TESSERA_F64, 0), 1);
  const int small = tessera_tile_for_eig(ctx, TESSERA_VALUES, TESSERA_F64, 1000);
  const int large = tessera_tile_for_eig(ctx, TESSERA_VALUES, TESSERA_C128, 30000);
  assert_true(small == 128 || (gpus && small == 64));
  assert_true(large == 128 || (gpus && large == 96));
  assert_int_equal(tessera_tile_for_eig(NULL, TESSERA_VALUES, TESSERA_F64, 1000), 0);
  lc_finalize(ctx);
  cfg.tile_size = 40;
  ctx = lc_init(&cfg);
  assert_int_equal(tessera_tile_for_eig(ctx, TESSERA_VALUES, TESSERA_F32, 1000), 40);
  assert_int_equal(tessera_tile_for_eig(ctx, TESSERA_VECTORS, TESSERA_F64, 1000), 40);
  assert_int_equal(tessera_tile_for_eig(ctx, TESSERA_VALUES, TESSERA_F64, 10), 10);
  lc_finalize(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_prestate(test_syevd_random, (void *)&one),
      cmocka_unit_test_prestate(test_syevd_random, (void *)&two),
      cmocka_unit_test_prestate(test_syevd_random, (void *)&cost),
      cmocka_unit_test_prestate(test_syevd_spectra_and_norms, (void *)&one),
      cmocka_unit_test_prestate(test_syevd_spectra_and_norms, (void *)&two),
      cmocka_unit_test(test_syevd_merges),
      cmocka_unit_test_prestate(test_syevd_nan_and_args, (void *)&one),
      cmocka_unit_test_prestate(test_syevd_nan_and_args, (void *)&two),
      cmocka_unit_test(test_cost_measures_both),
      cmocka_unit_test(test_band_width),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
