/* The band reduction's check (test_he2hb.c on one process, test_dist_he2hb.c over processes): a
 * random Hermitian matrix given by its lower triangle, and the band read back from A's diagonal
 * blocks and V's panels having the matrix's eigenvalues.
 * Header only; the including file includes cmocka and linalg_common.h first. */
#ifndef TESSERA_HE2HB_COMMON_H
#define TESSERA_HE2HB_COMMON_H

/* Eigenvalues (ascending) of the n x n Hermitian z (column-major, destroyed). */
static inline void hb_eigenvalues(int64_t n, zc_t *z, double *w) {
  if (n == 0) return;
  assert_int_equal(LAPACKE_zheev(LAPACK_COL_MAJOR, 'N', 'L', (lapack_int)n,
                                 (lapack_complex_double *)z, (lapack_int)n, w),
                   0);
}

/* A random n x n Hermitian matrix: into a (dtype dt, leading dimension n) by its lower triangle
 * with a real diagonal, returned whole (double complex, n x n). */
static inline zc_t *hb_hermitian(tessera_dtype_t dt, int64_t n, uint64_t seed, void *a) {
  tt_rng_t r = tt_rng(seed);
  const size_t nn = (size_t)(n * n);
  lc_fill_random(dt, a, n, n, n, &r);
  zc_t *full = lc_zalloc(nn + 1);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = j; i < n; i++) {
      zc_t v = lc_get(dt, a, (size_t)(i + j * n));
      if (i == j) v = creal(v);
      full[i + j * n] = v;
      full[j + i * n] = conj(v);
      lc_set(dt, a, (size_t)(i + j * n), v);
    }
  return full;
}

/* The band of kd subdiagonals (its diagonal blocks from A, a (n), the blocks below them from V,
 * v (lv)) against the eigenvalues of `full`; `what` names the case in the failure. */
static inline void hb_check(tessera_dtype_t dt, int64_t n, int kd, const void *a, const void *v,
                            int64_t lv, zc_t *full, const char *what) {
  const size_t nn = (size_t)(n * n);
  const double norm = lc_norm_fro(full, nn);
  zc_t *band = lc_zalloc(nn + 1);
  for (int64_t j = 0; j < n; j++) {
    const int64_t k = j / kd, below = (k + 1) * kd;
    for (int64_t i = j; i < n && i <= j + kd; i++) {
      const zc_t x = i < below ? lc_get(dt, a, (size_t)(i + j * n))
                               : lc_get(dt, v, (size_t)(k * kd + i - below + j * lv));
      band[i + j * n] = x;
      band[j + i * n] = conj(x);
    }
  }
  double *w0 = calloc((size_t)n + 1, sizeof *w0), *w1 = calloc((size_t)n + 1, sizeof *w1);
  hb_eigenvalues(n, full, w0);
  hb_eigenvalues(n, band, w1);
  double worst = 0;
  for (int64_t i = 0; i < n; i++) worst = fmax(worst, fabs(w0[i] - w1[i]));
  const double ratio = norm > 0 ? worst / (norm * (double)n * lc_eps(dt)) : 0;
  if (!(ratio < 10)) fail_msg("%s: eigenvalues off by %g (ratio %g)", what, worst, ratio);
  free(band), free(w0), free(w1);
}

#endif
