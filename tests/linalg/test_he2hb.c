/* The first stage of the eigensolver (loops/he2hb.c): a Hermitian matrix reduced to a band of kd
 * subdiagonals on square tiles of kd or a multiple of it has the matrix's eigenvalues, for every
 * dtype, orders that are not tile multiples, one tile, and a context of CPU workers. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <setjmp.h>
#include <cmocka.h>

#include "linalg_common.h"
#include "he2hb_common.h"
#include "linalg/loops/loops.h"

static void one_case(tessera_context_t *ctx, tessera_dtype_t dt, int64_t n, int kd, int tile,
                     uint64_t seed) {
  void *a = lc_alloc(dt, (size_t)(n * n) + 1);
  zc_t *full = hb_hermitian(dt, n, seed, a);
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
  tsr_he2hb_destroy(&H);
  assert_int_equal(tessera_matrix_destroy(A), 0);
  char what[96];
  snprintf(what, sizeof what, "he2hb %s n %lld kd %d tile %d", lc_name(dt), (long long)n, kd, tile);
  hb_check(dt, n, kd, a, v, lv, full, what);
  free(a), free(full), free(v);
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
