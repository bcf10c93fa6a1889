/* The recursive Cholesky factorization (tsr_potrf_blocked) on the CPU kernels against the CPU's
 * potrf of the whole tile: every dtype, both triangles, orders that halve unevenly below and
 * above the leaf; and the info of a non-positive or NaN pivot in a later leaf, returned at once
 * (the recursion stops there), offset by the tile's first row. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../linalg/linalg_common.h"
#include "kernels/kernels.h"

/* A random Hermitian positive definite n x n of dt in the `uplo` triangle of a new ld x n array
 * (NaN elsewhere, which the factorization must not read). */
static void *hpd(tessera_dtype_t dt, char uplo, int n, size_t ld, uint64_t seed) {
  void *a = malloc(ld * (size_t)n * lc_esize(dt));
  assert_non_null(a);
  tt_rng_t r = tt_rng(seed);
  free(lc_gen_hpd(dt, uplo == 'L' ? TESSERA_LOWER : TESSERA_UPPER, n, a, (int64_t)ld, &r));
  return a;
}

/* potrf of a (n x n, ld) by the recursion (leaf 16) or the CPU kernel; returns its info. */
static int factor(bool recursive, tessera_dtype_t dt, char uplo, int n, void *a, size_t ld) {
  tessera_exec_t ex = {.ndata = 1, .kind = TESSERA_DEVICE_CPU};
  ex.ptr[0] = a, ex.ld[0] = ld;
  tsr_potrf_args_t p = {.dtype = dt, .uplo = uplo, .n = n, .offset = 1000};
  return recursive ? tsr_potrf_blocked(&ex, &p, tsr_cpu_potrf, tsr_cpu_trsm_blocked, tsr_cpu_syrk,
                                       tsr_cpu_gemm, 16)
                   : tsr_cpu_potrf(&ex, &p);
}

static void matches_whole_potrf(void **state) {
  (void)state;
  const int orders[] = {1, 16, 17, 45, 100};
  for (int d = 0; d < 4; d++)
    for (int u = 0; u < 2; u++)
      for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
        const tessera_dtype_t dt = lc_dtypes[d];
        const char uplo = "LU"[u];
        const int n = orders[o];
        const size_t ld = (size_t)n + 3, count = ld * (size_t)n;
        void *a = hpd(dt, uplo, n, ld, (uint64_t)(10 * d + u + 100 * o)),
             *b = malloc(count * lc_esize(dt));
        assert_non_null(b);
        memcpy(b, a, count * lc_esize(dt));
        assert_int_equal(factor(true, dt, uplo, n, a, ld), 0);
        assert_int_equal(factor(false, dt, uplo, n, b, ld), 0);
        const double tol = dt == TESSERA_F32 || dt == TESSERA_C64 ? 1e-4 : 1e-12;
        double most = 0;
        for (int j = 0; j < n; j++)
          for (int i = uplo == 'L' ? j : 0; i < (uplo == 'L' ? n : j + 1); i++) {
            const size_t k = (size_t)i + (size_t)j * ld;
            const double e = cabs(lc_get(dt, a, k) - lc_get(dt, b, k));
            if (e > most) most = e;
          }
        if (!(most <= tol * sqrt((double)n + 1)))
          fail_msg("%s uplo %c n %d: the recursion differs by %g", tessera_dtype_name(dt), uplo, n,
                   most);
        free(a), free(b);
      }
}

static void reports_first_failed_pivot(void **state) {
  (void)state;
  const int n = 70;
  const size_t ld = 72;
  const struct {
    int at;
    double v;
  } cases[] = {{50, -1e4}, {20, NAN}, {0, -1}, {69, NAN}};
  for (int d = 0; d < 4; d++)
    for (int u = 0; u < 2; u++)
      for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const tessera_dtype_t dt = lc_dtypes[d];
        void *a = hpd(dt, "LU"[u], n, ld, (uint64_t)(7 + d));
        lc_set(dt, a, (size_t)cases[c].at * (ld + 1), cases[c].v);
        assert_int_equal(factor(true, dt, "LU"[u], n, a, ld), 1000 + cases[c].at + 1);
        free(a);
      }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(matches_whole_potrf),
      cmocka_unit_test(reports_first_failed_pivot),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
