/* The recursive Cholesky factorization (tsr_potrf_blocked) on the CPU kernels against the CPU's
 * potrf of the whole tile: every dtype, both triangles, orders that halve unevenly below and
 * above the leaf; and the info of a non-positive or NaN pivot in a later leaf, returned at once
 * (the recursion stops there), offset by the tile's first row. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../test_common.h"
#include "kernels/kernels.h"

static const tessera_dtype_t dtypes[4] = {TESSERA_F32, TESSERA_F64, TESSERA_C64, TESSERA_C128};

/* Element k of a (dtype dt) as a complex double, and set. */
static double complex get(tessera_dtype_t dt, const void *a, size_t k) {
  switch (dt) {
  case TESSERA_F32:
    return ((const float *)a)[k];
  case TESSERA_F64:
    return ((const double *)a)[k];
  case TESSERA_C64:
    return ((const float complex *)a)[k];
  default:
    return ((const double complex *)a)[k];
  }
}

static void set(tessera_dtype_t dt, void *a, size_t k, double complex v) {
  switch (dt) {
  case TESSERA_F32:
    ((float *)a)[k] = (float)creal(v);
    break;
  case TESSERA_F64:
    ((double *)a)[k] = creal(v);
    break;
  case TESSERA_C64:
    ((float complex *)a)[k] = (float complex)v;
    break;
  default:
    ((double complex *)a)[k] = v;
  }
}

/* A Hermitian positive definite n x n (leading dimension ld) of dt: entries in (-1, 1), the
 * diagonal n + 1. */
static void *hpd(tessera_dtype_t dt, int n, size_t ld, uint64_t seed) {
  void *a = calloc(ld * (size_t)n, tessera_dtype_size(dt));
  assert_non_null(a);
  const bool cplx = dt == TESSERA_C64 || dt == TESSERA_C128;
  tt_rng_t r = tt_rng(seed);
  for (int j = 0; j < n; j++)
    for (int i = j; i < n; i++) {
      const double complex v = i == j ? n + 1 : tt_uniform(&r) + (cplx ? I * tt_uniform(&r) : 0);
      set(dt, a, (size_t)i + (size_t)j * ld, v);
      set(dt, a, (size_t)j + (size_t)i * ld, conj(v));
    }
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
        const tessera_dtype_t dt = dtypes[d];
        const char uplo = "LU"[u];
        const int n = orders[o];
        const size_t ld = (size_t)n + 3, count = ld * (size_t)n;
        void *a = hpd(dt, n, ld, (uint64_t)(10 * d + u + 100 * o)), *b = hpd(dt, n, ld, 0);
        memcpy(b, a, count * tessera_dtype_size(dt));
        assert_int_equal(factor(true, dt, uplo, n, a, ld), 0);
        assert_int_equal(factor(false, dt, uplo, n, b, ld), 0);
        const double tol = dt == TESSERA_F32 || dt == TESSERA_C64 ? 1e-4 : 1e-12;
        double most = 0;
        for (int j = 0; j < n; j++)
          for (int i = uplo == 'L' ? j : 0; i < (uplo == 'L' ? n : j + 1); i++) {
            const size_t k = (size_t)i + (size_t)j * ld;
            const double e = cabs(get(dt, a, k) - get(dt, b, k));
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
        const tessera_dtype_t dt = dtypes[d];
        void *a = hpd(dt, n, ld, (uint64_t)(7 + d));
        set(dt, a, (size_t)cases[c].at * (ld + 1), cases[c].v);
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
