/* The first stage of the eigensolver (loops/he2hb.c): a Hermitian matrix reduced to a band of kd
 * subdiagonals on square tiles of kd or a multiple of it has the matrix's eigenvalues, for every
 * dtype, orders that are not tile multiples, one tile, and a context of CPU workers. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "linalg_common.h"
#include "linalg/loops/loops.h"

/* Eigenvalues (ascending) of the n x n Hermitian z (column-major, destroyed). */
static void eigenvalues(int64_t n, zc_t *z, double *w) {
  if (n == 0) return;
  const int rc = (int)LAPACKE_zheev(LAPACK_COL_MAJOR, 'N', 'L', (lapack_int)n,
                                    (lapack_complex_double *)z, (lapack_int)n, w);
  assert_int_equal(rc, 0);
}

static void one_case(tessera_context_t *ctx, tessera_dtype_t dt, int64_t n, int kd, int tile,
                     uint64_t seed) {
  tt_rng_t r = tt_rng(seed);
  const size_t nn = (size_t)(n * n);
  void *a = lc_alloc(dt, nn + 1);
  lc_fill_random(dt, a, n, n, n, &r);
  zc_t *full = lc_zalloc(nn + 1);
  for (int64_t j = 0; j < n; j++) /* Hermitian from the lower triangle, real diagonal */
    for (int64_t i = j; i < n; i++) {
      zc_t v = lc_get(dt, a, (size_t)(i + j * n));
      if (i == j) v = creal(v);
      full[i + j * n] = v;
      full[j + i * n] = conj(v);
      lc_set(dt, a, (size_t)(i + j * n), v);
    }
  double norm = lc_norm_fro(full, nn);
  tessera_matrix_t *A = NULL;
  assert_int_equal(tessera_matrix_create(ctx, dt, n, n, tile, tile, &A), 0);
  assert_int_equal(tessera_matrix_import(A, a, n > 0 ? n : 1), 0);
  tsr_he2hb_t H;
  assert_int_equal(tsr_he2hb_create(A, kd, &H), 0);
  assert_int_equal(tsr_pxhe2hb(A, &H), 0);
  assert_int_equal(tessera_wait_all(ctx), 0);
  assert_int_equal(tessera_matrix_export(A, a, n > 0 ? n : 1), 0);
  const int64_t lv = n - kd > 1 ? n - kd : 1;
  void *v = H.V ? lc_alloc(dt, (size_t)(lv * H.V->n)) : NULL;
  if (H.V) assert_int_equal(tessera_matrix_export(H.V, v, lv), 0);
  zc_t *band = lc_zalloc(nn + 1);
  for (int64_t j = 0; j < n; j++) { /* diagonal blocks from A, the blocks below them from V */
    const int64_t k = j / kd, below = (k + 1) * kd;
    for (int64_t i = j; i < n && i <= j + kd; i++) {
      const zc_t x = i < below ? lc_get(dt, a, (size_t)(i + j * n))
                               : lc_get(dt, v, (size_t)(k * kd + i - below + j * lv));
      band[i + j * n] = x;
      band[j + i * n] = conj(x);
    }
  }
  tsr_he2hb_destroy(&H);
  assert_int_equal(tessera_matrix_destroy(A), 0);
  double *w0 = calloc((size_t)n + 1, sizeof *w0), *w1 = calloc((size_t)n + 1, sizeof *w1);
  eigenvalues(n, full, w0);
  eigenvalues(n, band, w1);
  double worst = 0;
  for (int64_t i = 0; i < n; i++) worst = fmax(worst, fabs(w0[i] - w1[i]));
  const double ratio = norm > 0 ? worst / (norm * (double)n * lc_eps(dt)) : 0;
  if (!(ratio < 10))
    fail_msg("he2hb %s n %lld kd %d tile %d: eigenvalues off by %g (ratio %g)", lc_name(dt),
             (long long)n, kd, tile, worst, ratio);
  free(a), free(full), free(band), free(v), free(w0), free(w1);
}

/* Bands as wide as the tiles, and narrower (a third, a quarter): panels inside tile columns,
 * starting mid-tile. */
static void test_he2hb_eigenvalues(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(8);
  const int64_t sizes[] = {0, 1, 2, 7, 8, 9, 17, 29, 45};
  const int shapes[][2] = {{8, 8}, {4, 12}, {3, 12}};
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
      for (int h = 0; h < 3; h++)
        one_case(ctx, lc_dtypes[d], sizes[s], shapes[h][0], shapes[h][1],
                 (uint64_t)(900 + 100 * h + 10 * d + (int)s));
  tsr_he2hb_t H;
  tessera_matrix_t *A = NULL;
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, 20, 20, 8, 8, &A), 0);
  assert_int_equal(tsr_he2hb_create(A, 3, &H), TESSERA_ERR_STATE); /* 3 does not divide 8 */
  assert_int_equal(tessera_matrix_destroy(A), 0);
  lc_finalize(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_he2hb_eigenvalues)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
