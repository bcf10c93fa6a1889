/* The kernels of a Hermitian product on the CPU against products computed in double complex:
 * hemm_pair (an off-diagonal tile's two products) on a tile wider than one block of columns and
 * not a multiple of it, and hemm (a diagonal tile's product from its stored triangle, NaN in the
 * other); every dtype, leading dimensions beyond the rows, one and several columns; and the
 * refusal of a buffer whose leading dimension is short. With them, absum (the sums of moduli
 * behind ‖A‖∞ of the mixed solves) against sums taken element by element, every part. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../linalg/linalg_common.h"
#include "kernels/kernels.h"

/* A random rows x cols array of dt, leading dimension ld. */
static void *random_array(tessera_dtype_t dt, int rows, int cols, int ld, tt_rng_t *r) {
  void *a = lc_alloc(dt, (size_t)ld * (size_t)(cols > 0 ? cols : 1));
  lc_fill_random(dt, a, rows, cols, ld, r);
  return a;
}

/* The largest |got - want| over a rows x cols array (ld), relative to the largest |want|. */
static double rel_diff(tessera_dtype_t dt, const void *got, const zc_t *want, int rows, int cols,
                       int ld) {
  double err = 0, big = 0;
  for (int j = 0; j < cols; j++)
    for (int i = 0; i < rows; i++) {
      const zc_t w = want[i + j * rows];
      err = fmax(err, cabs(lc_get(dt, got, (size_t)(i + j * ld)) - w));
      big = fmax(big, cabs(w));
    }
  return err / (big > 0 ? big : 1);
}

static void matches_two_products(void **state) {
  (void)state;
  const int shapes[3][3] = {{37, 150, 1}, {130, 70, 3}, {5, 1, 2}}; /* r, c, k */
  for (int d = 0; d < 4; d++)
    for (int s = 0; s < 3; s++) {
      const tessera_dtype_t dt = lc_dtypes[d];
      const int r = shapes[s][0], c = shapes[s][1], k = shapes[s][2];
      tt_rng_t g = tt_rng((uint64_t)(300 + 10 * d + s));
      void *S = random_array(dt, r, c, r + 3, &g), *Xc = random_array(dt, c, k, c + 1, &g);
      void *Xr = random_array(dt, r, k, r, &g), *Yr = random_array(dt, r, k, r + 2, &g);
      void *Yc = random_array(dt, c, k, c, &g);
      const zc_t alpha = CMPLX(0.75, lc_is_complex(dt) ? -0.5 : 0);
      zc_t *wr = lc_zalloc((size_t)(r * k)), *wc = lc_zalloc((size_t)(c * k));
      for (int j = 0; j < k; j++) {
        for (int i = 0; i < r; i++) {
          zc_t v = lc_get(dt, Yr, (size_t)(i + j * (r + 2)));
          for (int l = 0; l < c; l++)
            v += alpha * lc_get(dt, S, (size_t)(i + l * (r + 3))) *
                 lc_get(dt, Xc, (size_t)(l + j * (c + 1)));
          wr[i + j * r] = v;
        }
        for (int l = 0; l < c; l++) {
          zc_t v = lc_get(dt, Yc, (size_t)(l + j * c));
          for (int i = 0; i < r; i++)
            v += alpha * conj(lc_get(dt, S, (size_t)(i + l * (r + 3)))) *
                 lc_get(dt, Xr, (size_t)(i + j * r));
          wc[l + j * c] = v;
        }
      }
      tessera_exec_t ex = {.ndata = 5, .kind = TESSERA_DEVICE_CPU};
      void *ptr[5] = {S, Xc, Xr, Yr, Yc};
      const size_t ld[5] = {(size_t)r + 3, (size_t)c + 1, (size_t)r, (size_t)r + 2, (size_t)c};
      for (int b = 0; b < 5; b++) ex.ptr[b] = ptr[b], ex.ld[b] = ld[b];
      tsr_hemm_pair_args_t a = {dt, r, c, k, {creal(alpha), cimag(alpha)}};
      assert_int_equal(tsr_cpu_hemm_pair(&ex, &a), 0);
      const double tol = dt == TESSERA_F32 || dt == TESSERA_C64 ? 1e-5 : 1e-13;
      const double er = rel_diff(dt, Yr, wr, r, k, r + 2), ec = rel_diff(dt, Yc, wc, c, k, c);
      if (!(er <= tol && ec <= tol))
        fail_msg("%s r %d c %d k %d: differences %g and %g", tessera_dtype_name(dt), r, c, k, er,
                 ec);
      ex.ld[4] = (size_t)c - 1; /* Yc's leading dimension below its rows */
      assert_int_equal(tsr_cpu_hemm_pair(&ex, &a), TESSERA_ERR_KERNEL);
      free(S), free(Xc), free(Xr), free(Yr), free(Yc), free(wr), free(wc);
    }
}

static void hemm_reads_the_stored_triangle(void **state) {
  (void)state;
  const int m = 45;
  for (int d = 0; d < 4; d++)
    for (int u = 0; u < 2; u++)
      for (int k = 1; k <= 3; k += 2) {
        const tessera_dtype_t dt = lc_dtypes[d];
        const char uplo = "LU"[u];
        tt_rng_t g = tt_rng((uint64_t)(500 + 10 * d + u + 100 * k));
        void *A = lc_alloc(dt, (size_t)(m + 2) * m);
        zc_t *full = lc_gen_hpd(dt, u ? TESSERA_UPPER : TESSERA_LOWER, m, A, m + 2, &g);
        void *B = random_array(dt, m, k, m, &g), *C = random_array(dt, m, k, m + 1, &g);
        const zc_t alpha = CMPLX(0.5, lc_is_complex(dt) ? 0.25 : 0), beta = -1.5;
        zc_t *want = lc_zalloc((size_t)(m * k));
        for (int j = 0; j < k; j++)
          for (int i = 0; i < m; i++) {
            zc_t v = beta * lc_get(dt, C, (size_t)(i + j * (m + 1)));
            for (int l = 0; l < m; l++)
              v += alpha * full[i + l * m] * lc_get(dt, B, (size_t)(l + j * m));
            want[i + j * m] = v;
          }
        tessera_exec_t ex = {.ndata = 3, .kind = TESSERA_DEVICE_CPU};
        ex.ptr[0] = A, ex.ld[0] = (size_t)m + 2, ex.ptr[1] = B, ex.ld[1] = (size_t)m;
        ex.ptr[2] = C, ex.ld[2] = (size_t)m + 1;
        tsr_hemm_args_t a = {dt, uplo, m, k, {creal(alpha), cimag(alpha)}, {creal(beta), 0}};
        assert_int_equal(tsr_cpu_hemm(&ex, &a), 0);
        const double tol = dt == TESSERA_F32 || dt == TESSERA_C64 ? 1e-5 : 1e-13;
        const double e = rel_diff(dt, C, want, m, k, m + 1);
        if (!(e <= tol))
          fail_msg("hemm %s %c k %d: difference %g", tessera_dtype_name(dt), uplo, k, e);
        a.uplo = 'X';
        assert_int_equal(tsr_cpu_hemm(&ex, &a), TESSERA_ERR_KERNEL);
        free(A), free(full), free(B), free(C), free(want);
      }
}

/* absum's row and column sums (part 0), row sums alone ('G'), and a Hermitian tile's row sums
 * from its stored triangle ('L', 'U'; NaN in the other), added to what rows and cols held. */
static void absum_matches_elementwise_sums(void **state) {
  (void)state;
  const char parts[4] = {0, 'G', 'L', 'U'};
  for (int d = 0; d < 4; d++)
    for (int p = 0; p < 4; p++) {
      const tessera_dtype_t dt = lc_dtypes[d];
      const char part = parts[p];
      const int m = 37, n = part == 'L' || part == 'U' ? 37 : 23, ld = m + 3;
      tt_rng_t g = tt_rng((uint64_t)(700 + 10 * d + p));
      void *A = random_array(dt, m, n, ld, &g);
      double rows[37], cols[37], want_r[37], want_c[37];
      for (int i = 0; i < 37; i++) rows[i] = want_r[i] = cols[i] = want_c[i] = 0.5 * i;
      for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
          const bool stored = !part || part == 'G' || (part == 'L' ? i >= j : i <= j);
          if (!stored) {
            lc_set(dt, A, (size_t)(i + j * ld), NAN);
            continue;
          }
          const double v = cabs(lc_get(dt, A, (size_t)(i + j * ld)));
          want_r[i] += v;
          if (!part) want_c[j] += v;
          if (part && part != 'G' && i != j) want_r[j] += v; /* the unstored mirror image */
        }
      tessera_exec_t ex = {.ndata = part ? 2 : 3, .kind = TESSERA_DEVICE_CPU};
      ex.ptr[0] = A, ex.ld[0] = (size_t)ld, ex.ptr[1] = rows, ex.ld[1] = (size_t)m;
      ex.ptr[2] = cols, ex.ld[2] = (size_t)n;
      tsr_absum_args_t a = {.dtype = dt, .m = m, .n = n, .part = part};
      assert_int_equal(tsr_cpu_absum(&ex, &a), 0);
      for (int i = 0; i < 37; i++) {
        assert_true(fabs(rows[i] - want_r[i]) <= 1e-12 * want_r[i]);
        assert_true(fabs(cols[i] - want_c[i]) <= 1e-12 * want_c[i]);
      }
      free(A);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(matches_two_products),
                                     cmocka_unit_test(hemm_reads_the_stored_triangle),
                                     cmocka_unit_test(absum_matches_elementwise_sums)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
