/* A GPU pool capped far below the matrix (TESSERA_GPU_MEM_LIMIT) gives the same residual as an
 * uncapped one: tiles are evicted and written back (out of core); so does the capped pool with
 * every task of a GPU on one queue (TESSERA_GPU_QUEUES=1). Skips without a GPU. */
/* ctest-label: devices */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "linalg_common.h"

static double factor_residual(int64_t n, const double *a0, const zc_t *full) {
  tessera_context_t *ctx = lc_context(64);
  if (tessera_accelerator_count(ctx) == 0) {
    lc_finalize(ctx);
    return -1;
  }
  assert_int_equal(tessera_set_scope(ctx, tessera_scope_gpus()), 0);
  double *a = lc_dup(TESSERA_F64, a0, (size_t)(n * n));
  tessera_matrix_t *A;
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, n, n, 64, 64, &A), 0);
  assert_int_equal(tessera_matrix_import(A, a, n), 0);
  assert_int_equal(tessera_tile_potrf(TESSERA_LOWER, A), 0);
  assert_int_equal(tessera_matrix_export(A, a, n), 0);
  assert_int_equal(tessera_matrix_destroy(A), 0);
  double res = lc_potrf_resid(TESSERA_F64, TESSERA_LOWER, n, full, a, n);
  free(a);
  lc_finalize(ctx);
  return res;
}

static void gpu_pool_far_below_matrix(void **state) {
  (void)state;
  const int64_t n = 1000; /* 8 MB, 16 x 16 tiles of 32 KiB */
  tt_rng_t r = tt_rng(9);
  double *a0 = lc_alloc(TESSERA_F64, (size_t)(n * n));
  zc_t *full = lc_gen_hpd(TESSERA_F64, TESSERA_LOWER, n, a0, n, &r);
  unsetenv("TESSERA_GPU_MEM_LIMIT");
  double in_core = factor_residual(n, a0, full);
  if (in_core < 0) {
    free(a0);
    free(full);
    skip();
  }
  setenv("TESSERA_GPU_MEM_LIMIT", "2M", 1); /* a quarter of the matrix */
  double out_of_core = factor_residual(n, a0, full);
  setenv("TESSERA_GPU_QUEUES", "1", 1); /* every task of a GPU on one queue */
  double one_queue = factor_residual(n, a0, full);
  unsetenv("TESSERA_GPU_QUEUES");
  unsetenv("TESSERA_GPU_MEM_LIMIT");
  assert_true(in_core < 10);
  assert_true(out_of_core < 10);
  assert_true(out_of_core < 2 * in_core + 1);
  assert_true(one_queue < 2 * in_core + 1);
  free(a0);
  free(full);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gpu_pool_far_below_matrix),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
