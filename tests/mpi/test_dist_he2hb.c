/* The eigensolver's first stage over processes (loops/he2hb.c on a distributed A): a Hermitian
 * matrix dealt over the context's grid in square tiles reduced to a band of kd subdiagonals,
 * each task on the process of the tile it writes (V's panels dealt over the processes, each W
 * tile the sum of the processes' parts), has the matrix's eigenvalues: every dtype, orders that
 * are not tile multiples, one tile, bands as wide as the tiles and narrower (orders 9 and 45
 * left out in quick mode). */
/* ctest-label: mpi */
/* ctest-mpi-procs: 2 4 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../linalg/linalg_common.h"
#include "linalg/loops/loops.h"
#include "mpi_common.h"
#include <tessera/distribution.h>

/* Eigenvalues (ascending) of the n x n Hermitian z (column-major, destroyed). */
static void eigenvalues(int64_t n, zc_t *z, double *w) {
  if (n == 0) return;
  assert_int_equal(LAPACKE_zheev(LAPACK_COL_MAJOR, 'N', 'L', (lapack_int)n,
                                 (lapack_complex_double *)z, (lapack_int)n, w),
                   0);
}

/* The distributed X into the whole array x (ld) on every process: each process exports the tiles
 * it owns into zeros, the sum over the processes. */
static void whole(tessera_matrix_t *X, void *x, int64_t ld) {
  const size_t count = (size_t)(ld * X->n);
  memset(x, 0, count * lc_esize(X->dtype));
  assert_int_equal(tessera_matrix_export(X, x, ld), 0);
  assert_int_equal(
      tessera_comm_allreduce(g_comm, x, x, count, (tessera_comm_type_t)X->dtype, TESSERA_SUM, NULL),
      0);
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
  const double norm = lc_norm_fro(full, nn);
  const int64_t ld = n > 0 ? n : 1;
  tessera_matrix_t *A = NULL;
  assert_int_equal(tessera_matrix_create_distributed(ctx, g_comm, tessera_context_grid(ctx), dt, n,
                                                     n, tile, tile, &A),
                   0);
  assert_int_equal(tessera_matrix_import(A, a, ld), 0);
  tsr_he2hb_t H;
  assert_int_equal(tsr_he2hb_create(A, kd, &H), 0);
  assert_int_equal(tsr_pxhe2hb(A, &H), 0);
  assert_int_equal(tessera_wait_all(ctx), 0);
  whole(A, a, ld);
  const int64_t lv = n - kd > 1 ? n - kd : 1;
  void *v = H.V ? lc_alloc(dt, (size_t)(lv * H.V->n)) : NULL;
  if (H.V) whole(H.V, v, lv);
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
    fail_msg("process %d: he2hb %s n %lld kd %d tile %d: eigenvalues off by %g (ratio %g)", g_rank,
             lc_name(dt), (long long)n, kd, tile, worst, ratio);
  free(a), free(full), free(band), free(v), free(w0), free(w1);
}

static void test_dist_he2hb(void **state) {
  (void)state;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 2;
  cfg.gpus = 0;
  cfg.distributed = 1;
  tessera_context_t *ctx = NULL;
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  const int64_t sizes[] = {0, 1, 29, 9, 45};
  const int shapes[][2] = {{8, 8}, {4, 12}};
  const size_t count = tt_quick() ? 3 : sizeof sizes / sizeof *sizes; /* sanitizers: fewer */
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (size_t s = 0; s < count; s++)
      for (int h = 0; h < 2; h++)
        one_case(ctx, lc_dtypes[d], sizes[s], shapes[h][0], shapes[h][1],
                 (uint64_t)(600 + 100 * h + 10 * d + (int)s));
  assert_int_equal(tessera_finalize(ctx), 0);
}

int main(int argc, char **argv) {
  if (mpi_start(&argc, &argv)) return 2;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_dist_he2hb)};
  return mpi_finish(cmocka_run_group_tests(tests, group_setup, group_teardown));
}
