/* The permutation of an LU step's row interchanges (tsr_lu_swaps, the form device kernels apply
 * all at once) against the interchanges applied one after the other, as LAPACK's laswp does:
 * random pivots (each row with itself or a row below, rows below the step named several times),
 * forward and inverse, every count up to 64 pivots over up to 200 rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>

#include "../test_common.h"
#include "kernels/kernels.h"

/* Applies the permutation of piv (forward, or its inverse) to the vector x of `rows`. */
static void apply(const int *piv, int k, int *x, int rows, int inverse) {
  const int count = piv[1 + k], *dst = piv + 2 + k, *src = dst + 2 * k;
  int *old = malloc((size_t)rows * sizeof *old);
  for (int r = 0; r < rows; r++) old[r] = x[r];
  for (int t = 0; t < count; t++) {
    if (inverse)
      x[src[t]] = old[dst[t]];
    else
      x[dst[t]] = old[src[t]];
  }
  free(old);
}

static void swaps_match_sequential(void **state) {
  (void)state;
  tt_rng_t r = tt_rng(7);
  for (int trial = 0; trial < 400; trial++) {
    const int k = 1 + trial % 64, rows = k + (trial * 7) % 137;
    int *piv = calloc((size_t)TSR_PIV_INTS(k), sizeof *piv);
    int *seq = malloc((size_t)rows * sizeof *seq), *perm = malloc((size_t)rows * sizeof *perm);
    for (int i = 0; i < k; i++) {
      /* half the time among a few rows below the step, so rows repeat */
      double u = (tt_uniform(&r) + 1) / 2;
      int below = rows - i;
      int p = trial % 2 ? i + (int)(u * below) : (rows > k ? k + (int)(u * 3) % (rows - k) : i);
      if (p >= rows) p = rows - 1;
      piv[1 + i] = p + 1;
    }
    assert_int_equal(tsr_lu_swaps(piv, k, rows), 0);
    assert_true(piv[1 + k] >= 0 && piv[1 + k] <= 2 * k);
    for (int x = 0; x < rows; x++) seq[x] = perm[x] = x;
    for (int i = 0; i < k; i++) {
      const int p = piv[1 + i] - 1, t = seq[i];
      seq[i] = seq[p];
      seq[p] = t;
    }
    apply(piv, k, perm, rows, 0);
    assert_memory_equal(seq, perm, (size_t)rows * sizeof *seq);
    apply(piv, k, perm, rows, 1); /* the inverse undoes it */
    for (int x = 0; x < rows; x++) assert_int_equal(perm[x], x);
    free(piv);
    free(seq);
    free(perm);
  }
}

static void no_pivots(void **state) {
  (void)state;
  int piv[TSR_PIV_INTS(1)] = {0};
  assert_int_equal(tsr_lu_swaps(piv, 0, 5), 0);
  assert_int_equal(piv[1], 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(swaps_match_sequential),
      cmocka_unit_test(no_pivots),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
