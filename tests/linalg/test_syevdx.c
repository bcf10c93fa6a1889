/* tessera_syevdx / heevdx, the eigenvalues il .. iu and their eigenvectors: every dtype, both
 * triangles, orders that are not tile multiples, 0 and 1, ranges at either end, in the middle,
 * one value, all and none, each method (one stage: the range taken from the whole result; two
 * stages: the range's vectors alone carried back); the values against LAPACK's (zheev of the
 * matrix promoted to double complex), the vectors by ‖A V − V Λ‖ / (‖A‖ n ε) and
 * ‖I − Vᴴ V‖ / (n ε) on the k columns; the columns of `a` past the range and its rows past n
 * left as they are for the caller; an order above the divide and conquer's leaves; NaN; the
 * argument checks; by cost, the ranges' own history. */
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

static double value(tessera_dtype_t dt, const void *w, int64_t i) {
  return dt == TESSERA_F32 || dt == TESSERA_C64 ? ((const float *)w)[i] : ((const double *)w)[i];
}

/* A random Hermitian n x n (double complex, full). */
static zc_t *hermitian(tessera_dtype_t dt, int64_t n, tt_rng_t *r) {
  zc_t *h = lc_zalloc((size_t)(n * n) + 1);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = j; i < n; i++) {
      const zc_t g = lc_rand(dt, r), v = i == j ? creal(g) : g;
      h[i + j * n] = v;
      h[j + i * n] = conj(v);
    }
  return h;
}

/* One call for eigenvalues il .. iu of h given by its `uplo` triangle in the dtype (lda n + 2,
 * the other triangle and the rows past n NaN), checked as the file's header says. */
static void range_case(tessera_context_t *ctx, tessera_dtype_t dt, tessera_uplo_t uplo,
                       tessera_job_t job, int64_t n, const zc_t *h, int64_t il, int64_t iu) {
  const int64_t lda = n + 2, k = iu - il + 1;
  void *a = lc_alloc(dt, (size_t)(lda * (n > 0 ? n : 1)));
  lc_fill_nan(dt, a, (size_t)(lda * (n > 0 ? n : 1)));
  zc_t *full = lc_zalloc((size_t)(n * n) + 1);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++)
      if (lc_in_tri(uplo, i, j)) lc_set(dt, a, (size_t)(i + j * lda), h[i + j * n]);
  for (int64_t j = 0; j < n; j++) /* A as the dtype holds it */
    for (int64_t i = 0; i < n; i++) {
      const zc_t v = lc_get(dt, a, (size_t)(lc_in_tri(uplo, i, j) ? i + j * lda : j + i * lda));
      full[i + j * n] = i == j ? creal(v) : lc_in_tri(uplo, i, j) ? v : conj(v);
    }
  double *w = calloc((size_t)n + 2, sizeof(double)); /* room past k: must stay 0 */
  const int rc = tessera_syevdx(ctx, job, uplo, dt, n, a, lda, il, iu, w);
  if (rc)
    fail_msg("syevdx %s %c %c n %lld [%lld, %lld]: %d (%s)", lc_name(dt), (char)uplo, (char)job,
             (long long)n, (long long)il, (long long)iu, rc, tessera_last_error(ctx));
  for (int64_t i = k; i < n + 1; i++)
    if (value(dt, w, i) != 0)
      fail_msg("syevdx %s n %lld: w[%lld] written past the range", lc_name(dt), (long long)n,
               (long long)i);
  for (int64_t j = 0; j < n; j++) /* the rows past n never written */
    for (int64_t i = n; i < lda; i++)
      if (!isnan(creal(lc_get(dt, a, (size_t)(i + j * lda)))))
        fail_msg("syevdx %s n %lld: A(%lld, %lld) written", lc_name(dt), (long long)n, (long long)i,
                 (long long)j);
  double *ref = calloc((size_t)n + 1, sizeof *ref); /* LAPACK's eigenvalues of the same A */
  lc_eig_lapack_values(n, full, ref);
  const double an = lc_norm_fro(full, (size_t)(n * n)), eps = lc_eps(dt);
  const double denom = (an > 0 ? an : 1) * (double)(n > 0 ? n : 1) * eps;
  double *lambda = calloc((size_t)k + 1, sizeof *lambda);
  for (int64_t i = 0; i < k; i++) {
    lambda[i] = value(dt, w, i);
    if (!(fabs(lambda[i] - ref[il - 1 + i]) / denom < 10))
      fail_msg("syevdx %s %c n %lld [%lld, %lld]: w[%lld] = %g, LAPACK's %g", lc_name(dt),
               (char)uplo, (long long)n, (long long)il, (long long)iu, (long long)i, lambda[i],
               ref[il - 1 + i]);
  }
  if (job == TESSERA_VECTORS && k > 0) { /* A V − V Λ and I − Vᴴ V on the k columns */
    zc_t *v = lc_promote(dt, n, k, a, lda);
    double res, orth;
    lc_eig_pairs_norms(n, k, full, v, lambda, &res, &orth);
    res /= denom, orth /= (double)n * eps;
    if (!(res < 10) || !(orth < 10))
      fail_msg("syevdx %s %c n %lld [%lld, %lld]: residual %g, orthogonality %g", lc_name(dt),
               (char)uplo, (long long)n, (long long)il, (long long)iu, res, orth);
    free(v);
  }
  free(lambda), free(ref);
  free(a), free(full), free(w);
}

/* The ranges of an order n: all, the first, the last, the middle third, none. */
static int ranges(int64_t n, int64_t r[5][2]) {
  if (n == 0) {
    r[0][0] = 1, r[0][1] = 0;
    return 1;
  }
  const int64_t lo = n / 3 + 1, hi = 2 * n / 3 + 1 < n ? 2 * n / 3 + 1 : n;
  const int64_t v[5][2] = {{1, n}, {1, 1}, {n, n}, {lo, hi}, {1, 0}};
  memcpy(r, v, sizeof v);
  return 5;
}

static tessera_context_t *context_of(tessera_eig_method_t m) {
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.tile_size = nb;
  cfg.cpu_workers = tt_quick() ? 2 : 3;
  cfg.eig_method = m;
  cfg.perfmodel_file = "none";
  return lc_init(&cfg);
}

static const tessera_eig_method_t one = TESSERA_EIG_ONE, two = TESSERA_EIG_TWO;

static void test_syevdx_ranges(void **state) {
  tessera_context_t *ctx = context_of(*(const tessera_eig_method_t *)*state);
  int64_t sizes[8];
  const int ns = lc_sizes(nb, sizes);
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int u = 0; u < 2; u++)
      for (int s = 0; s < ns; s++) {
        tt_rng_t r = tt_rng((uint64_t)(7000 + 100 * d + 10 * u + s));
        zc_t *h = hermitian(lc_dtypes[d], sizes[s], &r);
        int64_t rg[5][2];
        const int nr = ranges(sizes[s], rg);
        for (int q = 0; q < nr; q++) {
          range_case(ctx, lc_dtypes[d], lc_uplos[u], TESSERA_VECTORS, sizes[s], h, rg[q][0],
                     rg[q][1]);
          if (q == 3 || nr == 1)
            range_case(ctx, lc_dtypes[d], lc_uplos[u], TESSERA_VALUES, sizes[s], h, rg[q][0],
                       rg[q][1]);
        }
        free(h);
      }
  lc_finalize(ctx);
}

/* Above the divide and conquer's leaves, in two stages: the merges' Q whole on the host, the
 * range's columns carried back (with accelerators, those of the GPU forms). */
static void test_syevdx_merges(void **state) {
  (void)state;
  enum { N = 400, TILE = 40 };
  tessera_config_t cfg;
  lc_config(TILE, &cfg);
  cfg.eig_method = TESSERA_EIG_TWO;
  tessera_context_t *ctx = lc_init(&cfg);
  for (int d = 1; d < (tt_quick() ? 2 : 4); d += 2) { /* f64 and c128 */
    tt_rng_t r = tt_rng((uint64_t)(7500 + d));
    zc_t *h = hermitian(lc_dtypes[d], N, &r);
    range_case(ctx, lc_dtypes[d], TESSERA_LOWER, TESSERA_VECTORS, N, h, 101, 140);
    range_case(ctx, lc_dtypes[d], TESSERA_UPPER, TESSERA_VECTORS, N, h, 1, 3);
    free(h);
  }
  lc_finalize(ctx);
}

static void test_syevdx_nan_and_args(void **state) {
  tessera_context_t *ctx = context_of(*(const tessera_eig_method_t *)*state);
  const int64_t n = 20;
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++) {
    const tessera_dtype_t dt = lc_dtypes[d];
    tt_rng_t r = tt_rng((uint64_t)(7900 + d));
    void *a = lc_alloc(dt, (size_t)(n * n));
    lc_fill_random(dt, a, n, n, n, &r);
    lc_set(dt, a, (size_t)(13 + 5 * n), NAN);
    double w[20];
    assert_int_equal(tessera_heevdx(ctx, TESSERA_VECTORS, TESSERA_LOWER, dt, n, a, n, 3, 7, w), 6);
    lc_assert_error(ctx);
    assert_true(isnan(value(dt, w, 0)) && isnan(value(dt, w, 4)) && isnan(creal(lc_get(dt, a, 0))));
    free(a);
  }
  double a[4] = {2, 0, 0, 1}, w[2] = {0, 0};
  const tessera_job_t V = TESSERA_VALUES;
  const tessera_uplo_t L = TESSERA_LOWER;
  const tessera_dtype_t F = TESSERA_F64;
  assert_int_equal(tessera_syevdx(ctx, (tessera_job_t)'X', L, F, 2, a, 2, 1, 2, w), -2);
  assert_int_equal(tessera_syevdx(ctx, V, (tessera_uplo_t)'Q', F, 2, a, 2, 1, 2, w), -3);
  assert_int_equal(tessera_syevdx(ctx, V, L, (tessera_dtype_t)9, 2, a, 2, 1, 2, w), -4);
  assert_int_equal(tessera_syevdx(ctx, V, L, F, -1, a, 2, 1, 2, w), -5);
  assert_int_equal(tessera_syevdx(ctx, V, L, F, 2, NULL, 2, 1, 2, w), -6);
  assert_int_equal(tessera_syevdx(ctx, V, L, F, 2, a, 1, 1, 2, w), -7);
  assert_int_equal(tessera_syevdx(ctx, V, L, F, 2, a, 2, 0, 2, w), -8);
  assert_int_equal(tessera_syevdx(ctx, V, L, F, 2, a, 2, 3, 3, w), -8);
  assert_int_equal(tessera_syevdx(ctx, V, L, F, 2, a, 2, 2, 1, w), -9);
  assert_int_equal(tessera_syevdx(ctx, V, L, F, 2, a, 2, 1, 3, w), -9);
  assert_int_equal(tessera_syevdx(ctx, V, L, F, 2, a, 2, 1, 2, NULL), -10);
  assert_int_equal(tessera_syevdx(NULL, V, L, F, 2, a, 2, 1, 2, w), -1);
  lc_assert_error(ctx);
  /* no eigenvalue asked: nothing read or written, whatever the order */
  assert_int_equal(tessera_syevdx(ctx, V, L, F, 2, a, 2, 1, 0, NULL), 0);
  assert_int_equal(tessera_syevdx(ctx, V, L, F, 0, NULL, 1, 1, 0, NULL), 0);
  assert_true(a[0] == 2 && a[3] == 1);
  /* the larger of diag(2, 1) alone */
  assert_int_equal(tessera_syevdx(ctx, TESSERA_VECTORS, L, F, 2, a, 2, 2, 2, w), 0);
  assert_true(w[0] == 2 && w[1] == 0 && fabs(a[0]) == 1 && a[1] == 0);
  lc_finalize(ctx);
}

/* By cost, ranges have a history of their own: after five range calls and five whole solves at
 * one order, each method has a measurement under two keys (the range's and the whole's). */
static void test_syevdx_cost_history(void **state) {
  (void)state;
  char path[] = "/tmp/tessera_eigx_historyXXXXXX";
  const int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.tile_size = nb;
  cfg.cpu_workers = 2;
  cfg.eig_method = TESSERA_EIG_COST;
  cfg.perfmodel_file = path;
  tessera_context_t *ctx = lc_init(&cfg);
  tt_rng_t r = tt_rng(7700);
  zc_t *h = hermitian(TESSERA_F64, 50, &r);
  for (int call = 0; call < 5; call++) {
    range_case(ctx, TESSERA_F64, TESSERA_LOWER, TESSERA_VECTORS, 50, h, 1, 5);
    range_case(ctx, TESSERA_F64, TESSERA_LOWER, TESSERA_VECTORS, 50, h, 1, 50);
  }
  free(h);
  lc_finalize(ctx);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char line[512];
  int one = 0, two = 0;
  while (fgets(line, sizeof line, f))
    one += !strncmp(line, "syevd:one_stage ", 16), two += !strncmp(line, "syevd:two_stage ", 16);
  fclose(f);
  remove(path);
  if (one != 2 || two != 2)
    fail_msg("the history holds %d one-stage and %d two-stage keys, not 2 and 2", one, two);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_prestate(test_syevdx_ranges, (void *)&one),
      cmocka_unit_test_prestate(test_syevdx_ranges, (void *)&two),
      cmocka_unit_test(test_syevdx_merges),
      cmocka_unit_test(test_syevdx_cost_history),
      cmocka_unit_test_prestate(test_syevdx_nan_and_args, (void *)&one),
      cmocka_unit_test_prestate(test_syevdx_nan_and_args, (void *)&two),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
