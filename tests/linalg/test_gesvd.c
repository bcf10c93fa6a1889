/* tessera_gesvd and tessera_tile_gesvd: every dtype; tall, square and wide, orders that are not
 * tile multiples, n 0 and 1; random matrices, singular values graded from 1 to 10⁻¹² (10⁻⁵ in
 * single precision), repeated ones, rank-deficient ones; with vectors and values only; NaN and
 * bad arguments. Each result: the singular values against LAPACK's gesvd (relative to σ_max),
 * with vectors ‖A − U Σ Vᴴ‖_F / (‖A‖_F max(m, n) ε) and U's and V's orthogonality where A has
 * full rank; with every vector (ALL_VECTORS) the whole U and V orthogonal, and where A's rank is
 * lower the completion's vectors orthonormal and orthogonal to the economy ones. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "linalg_common.h"
#include "polar_common.h"

enum { nb = 8 };

/* ‖Xᴴ Y − I‖_F / (max(a, 1) ε) of the r x a X and r x b Y (ld r; `eye`: a == b), else
 * ‖Xᴴ Y‖_F likewise. */
static double inner(const zc_t *X, int64_t a, const zc_t *Y, int64_t b, int64_t r, bool eye,
                    double eps) {
  zc_t *G = lc_zalloc((size_t)(a * b) + 1);
  const zc_t one = 1, zero = 0;
  if (a > 0 && b > 0)
    cblas_zgemm(CblasColMajor, CblasConjTrans, CblasNoTrans, (int)a, (int)b, (int)r, &one, X,
                (int)(r > 0 ? r : 1), Y, (int)(r > 0 ? r : 1), &zero, G, (int)a);
  for (int64_t i = 0; eye && i < a; i++) G[i + i * a] -= 1;
  const double o = lc_norm_fro(G, (size_t)(a * b)) / ((double)(a > 0 ? a : 1) * eps);
  free(G);
  return o;
}
static double orthogonality(const zc_t *X, int64_t r, int64_t k, double eps) {
  return inner(X, k, X, k, r, true, eps);
}

/* The r x r X (ld r) of every vector, its first k columns the economy ones: all orthonormal
 * where A has full rank, else the last r - k orthonormal and orthogonal to the first k. */
static void check_all(const char *what, tessera_dtype_t dt, const zc_t *X, int64_t r, int64_t k,
                      bool full_rank) {
  const double eps = lc_eps(dt);
  const zc_t *C = X + r * k; /* the completion's columns */
  const double o = orthogonality(full_rank ? X : C, r, full_rank ? r : r - k, eps),
               x = full_rank ? 0 : inner(X, k, C, r - k, r, false, eps);
  if (!(o < 30 && x < 30))
    fail_msg("%s %s of order %lld: orthogonality %g, against the economy vectors %g", lc_name(dt),
             what, (long long)r, o, x);
}

/* One LAPACK-style call on A (m x n) of prescribed singular values, checked. */
static void one_case(tessera_context_t *ctx, tessera_dtype_t dt, tessera_job_t job, int64_t m,
                     int64_t n, double cond, int64_t rank, bool repeat, uint64_t seed) {
  const bool all = job == TESSERA_ALL_VECTORS;
  const int64_t k = m < n ? m : n, lda = m > 0 ? m : 1, ucols = all ? m : k, vrows = all ? n : k,
                ldvt = vrows > 0 ? vrows : 1;
  const double eps = lc_eps(dt), big = (double)(m > n ? m : n);
  tt_rng_t r = tt_rng(seed);
  /* A of k singular values: built tall (max x min) and transposed when wide */
  const int64_t tm = m > n ? m : n, tn = k;
  void *t = lc_alloc(dt, (size_t)(tm * tn) + 1);
  zc_t *T = pc_prescribed(dt, tm, tn, cond, rank < tn ? rank : tn, repeat, t, &r);
  zc_t *A = lc_zalloc((size_t)(m * n) + 1);
  void *a = lc_alloc(dt, (size_t)(lda * n) + 1);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++) {
      A[i + j * m] = m >= n ? T[i + j * m] : conj(T[j + i * n]);
      lc_set(dt, a, (size_t)(i + j * lda), A[i + j * m]);
    }
  void *s = calloc((size_t)k + 1, sizeof(double)), *u = lc_alloc(dt, (size_t)(m * ucols) + 1),
       *vt = lc_alloc(dt, (size_t)(vrows * n) + 1);
  const int rc = tessera_gesvd(ctx, job, dt, m, n, a, lda, s, u, lda, vt, ldvt);
  if (rc)
    fail_msg("%s %lld x %lld: gesvd %d (%s)", lc_name(dt), (long long)m, (long long)n, rc,
             tessera_last_error(ctx));
  if (k > 0) {                                /* LAPACK's singular values of the same (rounded) A */
    zc_t *c = lc_zalloc((size_t)(m * n + m)); /* slack: OpenBLAS's zgemv reads past the end */
    double *ref = malloc((size_t)k * sizeof *ref), *sup = malloc((size_t)k * sizeof *sup);
    for (int64_t i = 0; i < m * n; i++) c[i] = A[i];
    assert_int_equal(LAPACKE_zgesvd(LAPACK_COL_MAJOR, 'N', 'N', (int)m, (int)n, c, (int)m, ref,
                                    NULL, 1, NULL, 1, sup),
                     0);
    const bool single = dt == TESSERA_F32 || dt == TESSERA_C64;
    for (int64_t i = 0; i < k; i++) {
      const double got = single ? ((float *)s)[i] : ((double *)s)[i];
      if (i > 0) assert_true(got <= (single ? ((float *)s)[i - 1] : ((double *)s)[i - 1]));
      const double err = fabs(got - ref[i]) / ((ref[0] > 0 ? ref[0] : 1) * big * eps);
      if (!(err < 10))
        fail_msg("%s %lld x %lld: σ_%lld %g against LAPACK's %g", lc_name(dt), (long long)m,
                 (long long)n, (long long)i, got, ref[i]);
    }
    if (job != TESSERA_VALUES) { /* A − U Σ Vᴴ, and U's and V's orthogonality */
      zc_t *U = lc_promote(dt, m, k, u, lda), *Vt = lc_promote(dt, k, n, vt, ldvt);
      for (int64_t j = 0; j < k; j++)
        for (int64_t i = 0; i < m; i++) U[i + j * m] *= single ? ((float *)s)[j] : ((double *)s)[j];
      const zc_t one = 1, mone = -1;
      for (int64_t i = 0; i < m * n; i++) c[i] = A[i];
      cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, &mone, U,
                  (int)m, Vt, (int)k, &one, c, (int)m);
      const double an = lc_norm_fro(A, (size_t)(m * n));
      const double resid = lc_norm_fro(c, (size_t)(m * n)) / ((an > 0 ? an : 1) * big * eps);
      if (!(resid < 10))
        fail_msg("%s %lld x %lld: residual %g", lc_name(dt), (long long)m, (long long)n, resid);
      if (rank >= k) {
        free(U);
        U = lc_promote(dt, m, k, u, lda);
        zc_t *V = lc_zalloc((size_t)(n * k));
        for (int64_t j = 0; j < n; j++)
          for (int64_t i = 0; i < k; i++) V[j + i * n] = conj(Vt[i + j * k]);
        const double ou = orthogonality(U, m, k, eps), ov = orthogonality(V, n, k, eps);
        if (!(ou < 30 && ov < 30))
          fail_msg("%s %lld x %lld: orthogonality U %g V %g", lc_name(dt), (long long)m,
                   (long long)n, ou, ov);
        free(V);
      }
      free(U), free(Vt);
    }
    free(c), free(ref), free(sup);
  }
  if (all) { /* every vector, k = 0 included (then the identity) */
    zc_t *U = lc_promote(dt, m, m, u, lda), *Vt = lc_promote(dt, n, n, vt, ldvt);
    zc_t *V = lc_zalloc((size_t)(n * n) + 1);
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < n; i++) V[j + i * n] = conj(Vt[i + j * n]);
    check_all("U", dt, U, m, k, rank >= k);
    check_all("V", dt, V, n, k, rank >= k);
    free(U), free(Vt), free(V);
  }
  free(t), free(T), free(A), free(a), free(s), free(u), free(vt);
}

static const tessera_svd_method_t methods[2] = {TESSERA_SVD_QDWH, TESSERA_SVD_LAPACK};
static const tessera_job_t jobs[3] = {TESSERA_VECTORS, TESSERA_ALL_VECTORS, TESSERA_VALUES};

static void test_gesvd_shapes(void **state) {
  (void)state;
  const int64_t shapes[][2] = {{0, 0}, {0, 5}, {5, 0},   {1, 1},   {1, 6},
                               {6, 1}, {9, 9}, {29, 17}, {17, 29}, {33, 24}};
  for (int mi = 0; mi < 2; mi++) {
    tessera_context_t *ctx = pc_context(nb, methods[mi]);
    /* QDWH, quick (the sanitizer builds): one real and one complex dtype, with vectors */
    const bool quick = tt_quick() && methods[mi] == TESSERA_SVD_QDWH;
    for (int d = quick ? 1 : 0; d < TESSERA_NUM_DTYPES; d += quick ? 2 : 1)
      for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        for (int j = 0; j < (quick ? 2 : 3); j++)
          one_case(ctx, lc_dtypes[d], jobs[j], shapes[i][0], shapes[i][1], 10, INT64_MAX, false,
                   (uint64_t)(100 * d + 10 * i + j));
    lc_finalize(ctx);
  }
}

/* Graded, repeated and rank-deficient spectra (the rank-deficient ones' U not orthonormal). */
static void test_gesvd_spectra(void **state) {
  (void)state;
  for (int mi = 0; mi < 2; mi++) {
    tessera_context_t *ctx = pc_context(nb, methods[mi]);
    const bool quick = tt_quick() && methods[mi] == TESSERA_SVD_QDWH;
    for (int d = quick ? 1 : 0; d < TESSERA_NUM_DTYPES; d += quick ? 2 : 1) {
      const tessera_dtype_t dt = lc_dtypes[d];
      const double graded = lc_eps(dt) < 1e-10 ? 1e12 : 1e5;
      one_case(ctx, dt, TESSERA_VECTORS, 37, 30, graded, INT64_MAX, false, (uint64_t)(500 + d));
      one_case(ctx, dt, TESSERA_VECTORS, 26, 26, 10, INT64_MAX, true, (uint64_t)(510 + d));
      one_case(ctx, dt, TESSERA_VECTORS, 30, 22, 10, 13, false, (uint64_t)(520 + d));
      one_case(ctx, dt, TESSERA_ALL_VECTORS, 30, 22, 10, 13, false, (uint64_t)(540 + d));
      one_case(ctx, dt, TESSERA_ALL_VECTORS, 19, 27, 10, 11, false, (uint64_t)(550 + d));
      one_case(ctx, dt, TESSERA_VALUES, 22, 30, 10, 13, false, (uint64_t)(530 + d));
    }
    lc_finalize(ctx);
  }
}

/* The f64 tile-level results against LAPACK's values of a0 (m x n) and U Σ Vᴴ against a. */
static void check_tile_f64(int64_t m, int64_t n, int64_t k, const double *a, double *a0,
                           const double *s, const double *u, const double *vt) {
  double ref[32], sup[32];
  assert_true(k <= 32);
  assert_int_equal(LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', (int)m, (int)n, a0, (int)m, ref, NULL,
                                  1, NULL, 1, sup),
                   0);
  const double big = (double)(m > n ? m : n);
  for (int64_t i = 0; i < k; i++) assert_true(fabs(s[i] - ref[i]) < 1e-12 * ref[0] * big);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++) {
      double v = 0;
      for (int64_t l = 0; l < k; l++) v += u[i + l * m] * s[l] * vt[l + j * k];
      assert_true(fabs(v - a[i + j * m]) < 1e-12 * ref[0] * big);
    }
}

/* The tile-level call on descriptors (wide: through Aᴴ). */
static void test_tile_gesvd(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(nb);
  const int64_t m = 13, n = 21, k = 13;
  tt_rng_t r = tt_rng(9);
  double *a = malloc((size_t)(m * n) * sizeof *a), *a0 = malloc((size_t)(m * n) * sizeof *a0);
  lc_fill_random(TESSERA_F64, a, m, n, m, &r);
  for (int64_t i = 0; i < m * n; i++) a0[i] = a[i];
  tessera_matrix_t *A = NULL, *U = NULL, *VT = NULL;
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, m, n, nb, nb, &A), 0);
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, m, k, nb, nb, &U), 0);
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, k, n, nb, nb, &VT), 0);
  assert_int_equal(tessera_matrix_import(A, a, m), 0);
  double s[13], u[13 * 13], vt[13 * 21];
  assert_int_equal(tessera_tile_gesvd(TESSERA_VECTORS, A, s, U, VT), 0);
  assert_int_equal(tessera_matrix_export(U, u, m), 0);
  assert_int_equal(tessera_matrix_export(VT, vt, k), 0);
  check_tile_f64(m, n, k, a, a0, s, u, vt);
  assert_int_equal(tessera_matrix_destroy(A), 0);
  assert_int_equal(tessera_matrix_destroy(U), 0);
  assert_int_equal(tessera_matrix_destroy(VT), 0);
  free(a), free(a0);
  lc_finalize(ctx);
}

/* Tall, U written over A (U = A); VT may not be A. */
static void tile_u_in_a(tessera_context_t *ctx) {
  const int64_t m = 21, n = 13;
  tt_rng_t r = tt_rng(12);
  double a[21 * 13], u[21 * 13], vt[13 * 13], s[13], a0[21 * 13];
  lc_fill_random(TESSERA_F64, a, m, n, m, &r);
  memcpy(a0, a, sizeof a);
  tessera_matrix_t *A = NULL, *VT = NULL;
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, m, n, nb, nb, &A), 0);
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, n, n, nb, nb, &VT), 0);
  assert_int_equal(tessera_matrix_import(A, a, m), 0);
  assert_true(tessera_tile_gesvd(TESSERA_VECTORS, A, s, A, A) == -5);
  lc_assert_error(ctx);
  assert_int_equal(tessera_tile_gesvd(TESSERA_VECTORS, A, s, A, VT), 0);
  assert_int_equal(tessera_matrix_export(A, u, m), 0);
  assert_int_equal(tessera_matrix_export(VT, vt, n), 0);
  check_tile_f64(m, n, n, a, a0, s, u, vt);
  assert_int_equal(tessera_matrix_destroy(A), 0);
  assert_int_equal(tessera_matrix_destroy(VT), 0);
}

static void test_tile_gesvd_u_in_a(void **state) {
  (void)state;
  for (int mi = 0; mi < 2; mi++) {
    tessera_context_t *ctx = pc_context(nb, methods[mi]);
    tile_u_in_a(ctx);
    lc_finalize(ctx);
  }
}

/* NaN names its column; bad arguments; by each method. */
static void test_gesvd_nan_and_args(void **state) {
  (void)state;
  for (int mi = 0; mi < 2; mi++) {
    tessera_context_t *ctx = pc_context(nb, methods[mi]);
    const int64_t m = 17, n = 11;
    double a[17 * 11], s[11], u[17 * 11], vt[11 * 11];
    tt_rng_t r = tt_rng(3);
    lc_fill_random(TESSERA_F64, a, m, n, m, &r);
    a[2 + 5 * m] = NAN;
    assert_int_equal(tessera_gesvd(ctx, TESSERA_VECTORS, TESSERA_F64, m, n, a, m, s, u, m, vt, n),
                     6);
    lc_assert_error(ctx);
    a[2 + 5 * m] = 0;
    a[16 + 9 * m] = INFINITY;
    assert_int_equal(tessera_gesvd(ctx, TESSERA_VALUES, TESSERA_F64, m, n, a, m, s, u, m, vt, n),
                     10);
    assert_int_equal(
        tessera_gesvd(ctx, (tessera_job_t)'X', TESSERA_F64, m, n, a, m, s, u, m, vt, n), -2);
    assert_int_equal(
        tessera_gesvd(ctx, TESSERA_VECTORS, TESSERA_F64, m, n, a, m - 1, s, u, m, vt, n), -7);
    assert_int_equal(
        tessera_gesvd(ctx, TESSERA_VECTORS, TESSERA_F64, m, n, a, m, NULL, u, m, vt, n), -8);
    assert_int_equal(
        tessera_gesvd(ctx, TESSERA_VECTORS, TESSERA_F64, m, n, a, m, s, NULL, m, vt, n), -9);
    assert_int_equal(
        tessera_gesvd(ctx, TESSERA_VECTORS, TESSERA_F64, m, n, a, m, s, u, m, vt, n - 1), -12);
    lc_assert_error(ctx);
    assert_true(tessera_tile_gesvd(TESSERA_VALUES, NULL, s, NULL, NULL) < 0);
    tessera_matrix_t *A = NULL;
    assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, m, n, nb, nb, &A), 0);
    assert_int_equal(tessera_tile_gesvd(TESSERA_ALL_VECTORS, A, s, A, A), -1);
    lc_assert_error(ctx);
    assert_int_equal(tessera_matrix_destroy(A), 0);
    /* every vector: U m x m (ldu >= m), Vᴴ n x n (ldvt >= n) */
    double uf[17 * 17];
    assert_int_equal(
        tessera_gesvd(ctx, TESSERA_ALL_VECTORS, TESSERA_F64, m, n, a, m, s, uf, m, vt, n - 1), -12);
    assert_int_equal(
        tessera_gesvd(ctx, TESSERA_ALL_VECTORS, TESSERA_F64, m, n, a, m, s, uf, m - 1, vt, n), -10);
    assert_int_equal(
        tessera_gesvd(ctx, TESSERA_ALL_VECTORS, TESSERA_F64, n, m, a, n, s, uf, n, vt, n), -12);
    lc_assert_error(ctx);
    lc_finalize(ctx);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gesvd_shapes),       cmocka_unit_test(test_gesvd_spectra),
      cmocka_unit_test(test_tile_gesvd),         cmocka_unit_test(test_tile_gesvd_u_in_a),
      cmocka_unit_test(test_gesvd_nan_and_args),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
