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
#include <stdio.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../linalg/linalg_common.h"
#include "../linalg/he2hb_common.h"
#include "linalg/loops/loops.h"
#include "mpi_common.h"
#include <tessera/distribution.h>

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
  void *a = lc_alloc(dt, (size_t)(n * n) + 1);
  zc_t *full = hb_hermitian(dt, n, seed, a);
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
  tsr_he2hb_destroy(&H);
  assert_int_equal(tessera_matrix_destroy(A), 0);
  char what[128];
  snprintf(what, sizeof what, "process %d: he2hb %s n %lld kd %d tile %d", g_rank, lc_name(dt),
           (long long)n, kd, tile);
  hb_check(dt, n, kd, a, v, lv, full, what);
  free(a), free(full), free(v);
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
