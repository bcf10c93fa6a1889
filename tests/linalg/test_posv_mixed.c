/* tessera_posv_mixed (and tessera_gesv_mixed, tessera_tile_posv_mixed and tessera_tile_gesv_mixed,
 * last): every dtype, both triangles, orders that are not tile multiples, n 0 and 1; matrices of
 * prescribed condition from 10 to 10¹² (eigenvalues spaced geometrically, random eigenvectors); the
 * classical refinement, the GMRES-IR path, and each fallback (the factor's breakdown, overflow of
 * the factor's precision, no convergence within max_iter) with its code; non-definite and NaN
 * input, bad arguments. Every solution meets dsposv's criterion (backward error measured in double
 * complex against the full matrix). */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "linalg_common.h"

enum { nb = 16 };

/* The default options with factor precision f. */
static tessera_mixed_options_t with_factor(tessera_factor_t f) {
  tessera_mixed_options_t o;
  tessera_mixed_options_init(&o);
  o.factor = f;
  return o;
}

/* A random unitary n x n (double complex, ld n; real orthogonal with `real`): Q of a random
 * matrix's QR. */
static zc_t *unitary(int64_t n, bool real, tt_rng_t *r) {
  zc_t *q = lc_zalloc((size_t)(n * n)), *tau = lc_zalloc((size_t)n + 1);
  for (int64_t i = 0; i < n * n; i++) q[i] = lc_rand(real ? TESSERA_F64 : TESSERA_C128, r);
  assert_int_equal(LAPACKE_zgeqrf(LAPACK_COL_MAJOR, (int)n, (int)n, q, (int)n, tau), 0);
  assert_int_equal(LAPACKE_zungqr(LAPACK_COL_MAJOR, (int)n, (int)n, (int)n, q, (int)n, tau), 0);
  free(tau);
  return q;
}

/* A = Q diag(λ) Qᴴ (Q real for real dtypes) with λ from 1 down to 1 / cond, geometrically, in
 * the uplo triangle of a (ld n, the rest NaN); returns the full matrix as rounded. */
static zc_t *conditioned(tessera_dtype_t dt, tessera_uplo_t uplo, int64_t n, double cond,
                         double scale, void *a, tt_rng_t *r) {
  zc_t *q = unitary(n, !lc_is_complex(dt), r), *w = lc_zalloc((size_t)(n * n)),
       *full = lc_zalloc((size_t)(n * n));
  for (int64_t j = 0; j < n; j++) {
    const double l = scale * pow(cond, n > 1 ? -(double)j / (double)(n - 1) : 0);
    for (int64_t i = 0; i < n; i++) w[i + j * n] = q[i + j * n] * l;
  }
  const zc_t one = 1, zero = 0;
  cblas_zgemm(CblasColMajor, CblasNoTrans, CblasConjTrans, (int)n, (int)n, (int)n, &one, w, (int)n,
              q, (int)n, &zero, full, (int)n);
  lc_fill_nan(dt, a, (size_t)(n * n));
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) {
      if (!lc_in_tri(uplo, i, j)) continue;
      zc_t v = i == j ? creal(full[i + j * n]) : full[i + j * n];
      lc_set(dt, a, (size_t)(i + j * n), v);
    }
  for (int64_t j = 0; j < n; j++) /* the matrix as rounded, both triangles */
    for (int64_t i = 0; i < n; i++) {
      const int64_t s = lc_in_tri(uplo, i, j) ? i + j * n : j + i * n;
      const zc_t v = lc_get(dt, a, (size_t)s);
      full[i + j * n] = lc_in_tri(uplo, i, j) ? v : conj(v);
    }
  free(q), free(w);
  return full;
}

/* Solves with opts and checks the solution (backward error below 10 n ε-units), B as it was
 * and A too unless the working-precision solve ran; returns the result. */
static tessera_mixed_result_t solve(tessera_context_t *ctx, tessera_dtype_t dt, tessera_uplo_t uplo,
                                    int64_t n, int64_t nrhs, void *a, const zc_t *full,
                                    const tessera_mixed_options_t *o, tt_rng_t *r) {
  void *b = lc_alloc(dt, (size_t)(n * nrhs) + 1), *x = lc_alloc(dt, (size_t)(n * nrhs) + 1);
  lc_fill_random(dt, b, n, nrhs, n, r);
  void *a0 = lc_dup(dt, a, (size_t)(n * n) + 1), *b0 = lc_dup(dt, b, (size_t)(n * nrhs) + 1);
  tessera_mixed_result_t res;
  const int64_t ld = n > 1 ? n : 1;
  const int rc = tessera_posv_mixed(ctx, uplo, dt, n, nrhs, a, ld, b, ld, x, ld, o, &res);
  if (rc) fail_msg("posv_mixed = %d: %s", rc, tessera_last_error(ctx));
  zc_t *B = lc_promote(dt, n, nrhs, b, n);
  const double err = lc_solve_resid(dt, n, nrhs, full, x, n, B);
  if (!(err < 10))
    fail_msg("%s %c n %lld: backward error %g (iter %d, gmres %d)", lc_name(dt), (char)uplo,
             (long long)n, err, res.iter, res.gmres_steps);
  assert_int_equal(memcmp(b, b0, (size_t)(n * nrhs) * lc_esize(dt)), 0);
  if (res.factor != TESSERA_FACTOR_WORKING)
    assert_int_equal(memcmp(a, a0, (size_t)(n * n) * lc_esize(dt)), 0);
  free(b), free(x), free(a0), free(b0), free(B);
  return res;
}

static void one_case(tessera_context_t *ctx, tessera_dtype_t dt, tessera_uplo_t uplo, int64_t n,
                     uint64_t seed, void *arg) {
  (void)arg;
  tt_rng_t r = tt_rng(seed);
  void *a = lc_alloc(dt, (size_t)(n * n) + 1);
  zc_t *full = lc_gen_hpd(dt, uplo, n, a, n, &r);
  const tessera_mixed_result_t res = solve(ctx, dt, uplo, n, 3, a, full, NULL, &r);
  /* the defaults factor f64 and c128 in single precision on CPUs alone */
  const bool low = (dt == TESSERA_F64 || dt == TESSERA_C128) && tessera_accelerator_count(ctx) == 0;
  /* at n = 1 the residual's own rounding may stay above dsposv's bound: the fallback's answer */
  if (n != 1 && res.factor != (low && n > 0 ? TESSERA_FACTOR_SINGLE : TESSERA_FACTOR_WORKING))
    fail_msg("%s n %lld: factor %d, iter %d", lc_name(dt), (long long)n, (int)res.factor, res.iter);
  assert_true(n == 1 || res.iter >= 0);
  free(a), free(full);
}

static void test_posv_mixed_sweep(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(nb);
  lc_sweep(ctx, nb, one_case, NULL);
  lc_finalize(ctx);
}

/* Condition 10 .. 10¹² for f64 and c128 at an order of several tiles: up to 10⁶ the classical
 * refinement converges alone; beyond the single-precision factor breaks down or the refinement
 * gives way to GMRES-IR or to the working-precision solve, and every answer still meets the
 * criterion. */
static void test_posv_mixed_conditions(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(nb);
  const int64_t n = 3 * nb + 5;
  const double conds[5] = {10, 1e4, 1e6, 1e8, 1e12};
  const tessera_dtype_t dts[2] = {TESSERA_F64, TESSERA_C128};
  const tessera_mixed_options_t single = with_factor(TESSERA_FACTOR_SINGLE);
  tessera_mixed_options_t classical = single;
  classical.gmres = -1;
  for (int d = 0; d < 2; d++)
    for (int c = 0; c < 5; c++)
      for (int u = 0; u < 2; u++) {
        tt_rng_t r = tt_rng((uint64_t)(700 + 10 * d + c + 100 * u));
        void *a = lc_alloc(dts[d], (size_t)(n * n));
        zc_t *full = conditioned(dts[d], lc_uplos[u], n, conds[c], 1, a, &r);
        const tessera_mixed_result_t res = solve(ctx, dts[d], lc_uplos[u], n, 2, a, full,
                                                 conds[c] <= 1e6 ? &classical : &single, &r);
        if (conds[c] <= 1e6) assert_true(res.iter > 0 && res.gmres_steps == 0);
        if (conds[c] >= 1e12) assert_true(res.iter < 0 && res.factor == TESSERA_FACTOR_WORKING);
        free(a), free(full);
      }
  lc_finalize(ctx);
}

/* GMRES-IR from the start converges with GMRES steps; each fallback says its code. */
static void test_posv_mixed_paths(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(nb);
  const int64_t n = 2 * nb + 3;
  for (int d = 0; d < 2; d++) {
    const tessera_dtype_t dt = d ? TESSERA_C128 : TESSERA_F64;
    tt_rng_t r = tt_rng((uint64_t)(900 + d));
    void *a = lc_alloc(dt, (size_t)(n * n));
    const tessera_mixed_options_t single = with_factor(TESSERA_FACTOR_SINGLE);
    tessera_mixed_options_t o = single;
    o.gmres = 1;
    zc_t *full = conditioned(dt, TESSERA_LOWER, n, 1e5, 1, a, &r);
    tessera_mixed_result_t res = solve(ctx, dt, TESSERA_LOWER, n, 2, a, full, &o, &r);
    assert_true(res.iter >= 1 && res.gmres_steps > 0 && res.factor == TESSERA_FACTOR_SINGLE);
    o.gmres = -1, o.max_iter = 1; /* classical refinement needs more than one step at 10⁶ */
    free(full);
    full = conditioned(dt, TESSERA_LOWER, n, 1e6, 1, a, &r);
    res = solve(ctx, dt, TESSERA_LOWER, n, 1, a, full, &o, &r);
    assert_int_equal(res.iter, -31);
    free(full);
    full = conditioned(dt, TESSERA_UPPER, n, 100, 1e39, a, &r); /* beyond f32's range */
    res = solve(ctx, dt, TESSERA_UPPER, n, 1, a, full, &single, &r);
    assert_int_equal(res.iter, -2);
    free(full);
    full = conditioned(dt, TESSERA_LOWER, n, 1e12, 1, a, &r); /* f32's Cholesky breaks down */
    res = solve(ctx, dt, TESSERA_LOWER, n, 1, a, full, &single, &r);
    assert_int_equal(res.iter, -3);
    free(a), free(full);
  }
  lc_finalize(ctx);
}

/* Factors on tensor cores: on a context with accelerators (GPUs, or simulated devices, which
 * compute in f32) each solves to the criterion, FP16's with A scaled into its range first (a
 * matrix of norm 10⁶ here); on CPUs alone they are refused with a message. */
static void test_posv_mixed_tensor_factors(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(nb);
  const int64_t n = 2 * nb + 7;
  const tessera_factor_t fs[3] = {TESSERA_FACTOR_TF32, TESSERA_FACTOR_BF16, TESSERA_FACTOR_HALF};
  const tessera_dtype_t dts[3] = {TESSERA_F64, TESSERA_C128, TESSERA_F32};
  for (int k = 0; k < 3; k++) {
    tt_rng_t r = tt_rng((uint64_t)(1200 + k));
    void *a = lc_alloc(dts[k], (size_t)(n * n));
    zc_t *full = conditioned(dts[k], TESSERA_LOWER, n, 100, 1e6, a, &r);
    const tessera_mixed_options_t o = with_factor(fs[k]);
    if (tessera_accelerator_count(ctx) > 0) {
      const tessera_mixed_result_t res = solve(ctx, dts[k], TESSERA_LOWER, n, 2, a, full, &o, &r);
      assert_true(res.factor == fs[k] && res.iter >= 0);
    } else {
      double x[1];
      assert_int_equal(
          tessera_posv_mixed(ctx, TESSERA_LOWER, dts[k], n, 1, a, n, a, n, x, n, &o, NULL), -12);
      lc_assert_error(ctx);
    }
    free(a), free(full);
  }
  lc_finalize(ctx);
}

/* A = U Σ Vᴴ into a (n x n, ld n) with singular values from 1 down to 1 / cond, geometrically
 * (random unitary U and V, real for real dtypes); returns the full matrix as rounded. */
static zc_t *general(tessera_dtype_t dt, int64_t n, double cond, void *a, tt_rng_t *r) {
  const bool real = !lc_is_complex(dt);
  zc_t *u = unitary(n, real, r), *v = unitary(n, real, r), *full = lc_zalloc((size_t)(n * n));
  for (int64_t j = 0; j < n; j++) /* u Σ, then (u Σ) vᴴ */
    for (int64_t i = 0; i < n; i++)
      u[i + j * n] *= pow(cond, n > 1 ? -(double)j / (double)(n - 1) : 0);
  const zc_t one = 1, zero = 0;
  cblas_zgemm(CblasColMajor, CblasNoTrans, CblasConjTrans, (int)n, (int)n, (int)n, &one, u, (int)n,
              v, (int)n, &zero, full, (int)n);
  for (int64_t i = 0; i < n * n; i++) {
    lc_set(dt, a, (size_t)i, full[i]);
    full[i] = lc_get(dt, a, (size_t)i);
  }
  free(u), free(v);
  return full;
}

/* gesv_mixed: general matrices of singular values from 1 down to 1 / cond (U Σ Vᴴ, random
 * unitary U and V; real for real dtypes), every dtype, orders not tile multiples: the criterion
 * met, the single-precision factor used up to 10⁶, the fallback beyond; a zero column gives
 * LAPACK's info; bad arguments. */
static void test_gesv_mixed(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(nb);
  const double conds[3] = {10, 1e5, 1e12};
  tessera_mixed_options_t o;
  tessera_mixed_options_init(&o);
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int c = 0; c < 3; c++) {
      const tessera_dtype_t dt = lc_dtypes[d];
      const bool low = dt == TESSERA_F64 || dt == TESSERA_C128;
      const int64_t n = c == 1 ? 2 * nb + 3 : nb + 5, nrhs = 2;
      tt_rng_t r = tt_rng((uint64_t)(1500 + 10 * d + c));
      void *a = lc_alloc(dt, (size_t)(n * n)), *b = lc_alloc(dt, (size_t)(n * nrhs)),
           *x = lc_alloc(dt, (size_t)(n * nrhs));
      zc_t *full = general(dt, n, conds[c], a, &r);
      lc_fill_random(dt, b, n, nrhs, n, &r);
      int *ipiv = malloc((size_t)n * sizeof *ipiv);
      o.factor = low ? TESSERA_FACTOR_SINGLE : TESSERA_FACTOR_AUTO;
      tessera_mixed_result_t res;
      const int rc = tessera_gesv_mixed(ctx, dt, n, nrhs, a, n, ipiv, b, n, x, n, &o, &res);
      if (rc) fail_msg("gesv_mixed = %d: %s", rc, tessera_last_error(ctx));
      zc_t *B = lc_promote(dt, n, nrhs, b, n);
      const double err = lc_solve_resid(dt, n, nrhs, full, x, n, B);
      if (!(err < 10))
        fail_msg("gesv_mixed %s cond %g: backward error %g (iter %d)", lc_name(dt), conds[c], err,
                 res.iter);
      if (low && c < 2) assert_true(res.factor == TESSERA_FACTOR_SINGLE && res.iter >= 0);
      if (low && c == 2) assert_true(res.iter < 0);
      free(full), free(a), free(b), free(x), free(ipiv), free(B);
    }
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++) /* op(A) X = B: transposed, conjugated */
    for (int t = 0; t < 2; t++) {
      const tessera_dtype_t dt = lc_dtypes[d];
      const int64_t n = 2 * nb + 3, nrhs = 2;
      tt_rng_t r = tt_rng((uint64_t)(1600 + 10 * d + t));
      void *a = lc_alloc(dt, (size_t)(n * n)), *b = lc_alloc(dt, (size_t)(n * nrhs)),
           *x = lc_alloc(dt, (size_t)(n * nrhs));
      zc_t *full = general(dt, n, 1e3, a, &r), *op = lc_zalloc((size_t)(n * n));
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) op[i + j * n] = t ? conj(full[j + i * n]) : full[j + i * n];
      lc_fill_random(dt, b, n, nrhs, n, &r);
      int *ipiv = malloc((size_t)n * sizeof *ipiv);
      /* single dtypes: the working-precision getrf and getrs of op(A) */
      const bool low = dt == TESSERA_F64 || dt == TESSERA_C128;
      o.factor = low ? TESSERA_FACTOR_SINGLE : TESSERA_FACTOR_WORKING;
      o.trans = t ? TESSERA_CONJTRANS : TESSERA_TRANS;
      tessera_mixed_result_t res;
      const int rc = tessera_gesv_mixed(ctx, dt, n, nrhs, a, n, ipiv, b, n, x, n, &o, &res);
      if (rc) fail_msg("gesv_mixed trans %c = %d: %s", (char)o.trans, rc, tessera_last_error(ctx));
      zc_t *B = lc_promote(dt, n, nrhs, b, n);
      const double err = lc_solve_resid(dt, n, nrhs, op, x, n, B);
      if (!(err < 10))
        fail_msg("gesv_mixed %s trans %c: backward error %g (iter %d)", lc_name(dt), (char)o.trans,
                 err, res.iter);
      assert_true(res.factor == o.factor && res.iter >= 0);
      free(full), free(op), free(a), free(b), free(x), free(ipiv), free(B);
    }
  o.trans = TESSERA_NOTRANS;
  const int64_t n = nb + 3;
  double *a = calloc((size_t)(n * n), sizeof *a), b[64], x[64];
  int ipiv[64];
  for (int64_t i = 0; i < n; i++) a[i + i * n] = i == 4 ? 0 : 2, b[i] = 1;
  o.factor = TESSERA_FACTOR_SINGLE;
  tessera_mixed_result_t res;
  assert_int_equal(tessera_gesv_mixed(ctx, TESSERA_F64, n, 1, a, n, ipiv, b, n, x, n, &o, &res), 5);
  lc_assert_error(ctx);
  assert_int_equal(res.iter, -3);
  assert_int_equal(
      tessera_gesv_mixed(ctx, (tessera_dtype_t)9, 1, 1, a, 1, ipiv, b, 1, x, 1, NULL, NULL), -2);
  assert_int_equal(tessera_gesv_mixed(ctx, TESSERA_F64, -1, 1, a, 1, ipiv, b, 1, x, 1, NULL, NULL),
                   -3);
  assert_int_equal(tessera_gesv_mixed(ctx, TESSERA_F64, 1, 1, a, 1, NULL, b, 1, x, 1, NULL, NULL),
                   -7);
  o.trans = (tessera_op_t)'X';
  assert_int_equal(tessera_gesv_mixed(ctx, TESSERA_F64, n, 1, a, n, ipiv, b, n, x, n, &o, NULL),
                   -12);
  lc_assert_error(ctx);
  lc_assert_error(ctx);
  free(a);
  lc_finalize(ctx);
}

/* Not positive definite, NaN: LAPACK's info with a message; bad arguments. */
static void test_posv_mixed_errors(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(nb);
  const int64_t n = nb + 3;
  double *a = calloc((size_t)(n * n), sizeof *a), b[64] = {0}, x[64];
  for (int64_t i = 0; i < n; i++) a[i + i * n] = i == 5 ? -1 : 2, b[i] = 1;
  tessera_mixed_result_t res;
  const tessera_mixed_options_t single = with_factor(TESSERA_FACTOR_SINGLE);
  assert_int_equal(
      tessera_posv_mixed(ctx, TESSERA_LOWER, TESSERA_F64, n, 1, a, n, b, n, x, n, &single, &res),
      6);
  lc_assert_error(ctx);
  assert_true(res.iter == -3 && res.factor == TESSERA_FACTOR_WORKING);
  for (int64_t i = 0; i < n * n; i++) a[i] = 0;
  for (int64_t i = 0; i < n; i++) a[i + i * n] = 2;
  a[3 + 2 * n] = NAN;
  assert_true(
      tessera_posv_mixed(ctx, TESSERA_LOWER, TESSERA_F64, n, 1, a, n, b, n, x, n, NULL, &res) > 0);
  lc_assert_error(ctx);
  tessera_mixed_options_t o;
  tessera_mixed_options_init(&o);
  const double one[1] = {1};
  double y[1];
  assert_int_equal(tessera_posv_mixed(NULL, TESSERA_LOWER, TESSERA_F64, 1, 1, (void *)one, 1, one,
                                      1, y, 1, NULL, NULL),
                   -1);
  assert_int_equal(tessera_posv_mixed(ctx, (tessera_uplo_t)'X', TESSERA_F64, 1, 1, (void *)one, 1,
                                      one, 1, y, 1, NULL, NULL),
                   -2);
  assert_int_equal(tessera_posv_mixed(ctx, TESSERA_LOWER, (tessera_dtype_t)9, 1, 1, (void *)one, 1,
                                      one, 1, y, 1, NULL, NULL),
                   -3);
  assert_int_equal(tessera_posv_mixed(ctx, TESSERA_LOWER, TESSERA_F64, -1, 1, (void *)one, 1, one,
                                      1, y, 1, NULL, NULL),
                   -4);
  assert_int_equal(tessera_posv_mixed(ctx, TESSERA_LOWER, TESSERA_F64, 1, 1, (void *)one, 1, one, 1,
                                      NULL, 1, NULL, NULL),
                   -10);
  assert_int_equal(
      tessera_posv_mixed(ctx, TESSERA_LOWER, TESSERA_F64, 2, 1, a, 2, b, 1, y, 2, NULL, NULL), -9);
  o.factor = (tessera_factor_t)7;
  assert_int_equal(tessera_posv_mixed(ctx, TESSERA_LOWER, TESSERA_F64, 1, 1, (void *)one, 1, one, 1,
                                      y, 1, &o, NULL),
                   -12);
  tessera_mixed_options_init(&o);
  o.max_iter = 0;
  assert_int_equal(tessera_posv_mixed(ctx, TESSERA_LOWER, TESSERA_F64, 1, 1, (void *)one, 1, one, 1,
                                      y, 1, &o, NULL),
                   -12);
  o = with_factor(TESSERA_FACTOR_SINGLE);
  const float onef[1] = {1};
  float yf[1];
  assert_int_equal(tessera_posv_mixed(ctx, TESSERA_LOWER, TESSERA_F32, 1, 1, (void *)onef, 1, onef,
                                      1, yf, 1, &o, NULL),
                   -12);
  lc_assert_error(ctx);
  free(a);
  lc_finalize(ctx);
}

/* B's columns of A X = B with opts through tessera_tile_posv_mixed on descriptors of nb x nb tiles
 * (A's `uplo` triangle from a, B from b), the answer into x; A's contents after it into a_out
 * when not NULL. Returns the call's status. */
static int tile_solve(tessera_context_t *ctx, tessera_dtype_t dt, tessera_uplo_t uplo, int64_t n,
                      int64_t nrhs, const void *a, const void *b, void *x, void *a_out,
                      const tessera_mixed_options_t *o, tessera_mixed_result_t *res) {
  tessera_matrix_t *A = NULL, *B = NULL;
  const int64_t ld = n > 1 ? n : 1;
  assert_int_equal(tessera_matrix_create(ctx, dt, n, n, nb, nb, &A), 0);
  assert_int_equal(tessera_matrix_create(ctx, dt, n, nrhs, nb, nb, &B), 0);
  assert_int_equal(tessera_matrix_import(A, a, ld), 0);
  assert_int_equal(tessera_matrix_import(B, b, ld), 0);
  const int rc = tessera_tile_posv_mixed(uplo, A, B, o, res);
  assert_int_equal(tessera_matrix_export(B, x, ld), 0);
  if (a_out) assert_int_equal(tessera_matrix_export(A, a_out, ld), 0);
  assert_int_equal(tessera_matrix_destroy(A), 0);
  assert_int_equal(tessera_matrix_destroy(B), 0);
  return rc;
}

/* tessera_tile_posv_mixed: f64 and c128, both triangles, an order that is not a tile multiple;
 * condition 10⁴ (the single-precision factor refined, A unchanged) and 10¹² (the fallback, A
 * then holding its factor), every answer to the criterion; orders 1 and 0; a non-definite A's
 * info; bad arguments. */
static void test_tile_posv_mixed(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(nb);
  const int64_t n = 3 * nb + 5, nrhs = 2;
  const tessera_mixed_options_t single = with_factor(TESSERA_FACTOR_SINGLE);
  for (int d = 0; d < 2; d++)
    for (int k = 0; k < 4; k++) {
      const tessera_dtype_t dt = d ? TESSERA_C128 : TESSERA_F64;
      const tessera_uplo_t uplo = lc_uplos[k % 2];
      const double cond = k < 2 ? 1e4 : 1e12;
      tt_rng_t r = tt_rng((uint64_t)(1700 + 10 * d + k));
      void *a = lc_alloc(dt, (size_t)(n * n)), *a1 = lc_alloc(dt, (size_t)(n * n));
      void *b = lc_alloc(dt, (size_t)(n * nrhs)), *x = lc_alloc(dt, (size_t)(n * nrhs));
      zc_t *full = conditioned(dt, uplo, n, cond, 1, a, &r);
      lc_fill_random(dt, b, n, nrhs, n, &r);
      tessera_mixed_result_t res;
      const int rc = tile_solve(ctx, dt, uplo, n, nrhs, a, b, x, a1, &single, &res);
      if (rc) fail_msg("tile_posv_mixed = %d: %s", rc, tessera_last_error(ctx));
      zc_t *B = lc_promote(dt, n, nrhs, b, n);
      const double err = lc_solve_resid(dt, n, nrhs, full, x, n, B);
      if (!(err < 10))
        fail_msg("tile_posv_mixed %s %c cond %g: backward error %g (iter %d)", lc_name(dt),
                 (char)uplo, cond, err, res.iter);
      if (cond < 1e6) {
        assert_true(res.factor == TESSERA_FACTOR_SINGLE && res.iter > 0);
        for (int64_t j = 0; j < n; j++)
          for (int64_t i = 0; i < n; i++)
            if (lc_in_tri(uplo, i, j))
              assert_true(lc_get(dt, a, (size_t)(i + j * n)) ==
                          lc_get(dt, a1, (size_t)(i + j * n)));
      } else {
        assert_true(res.factor == TESSERA_FACTOR_WORKING && res.iter < 0);
      }
      free(a), free(a1), free(b), free(x), free(full), free(B);
    }
  double one[1] = {4}, rhs[1] = {8}, x1[1] = {0};
  tessera_mixed_result_t res;
  assert_int_equal(
      tile_solve(ctx, TESSERA_F64, TESSERA_LOWER, 1, 1, one, rhs, x1, NULL, &single, &res), 0);
  assert_true(x1[0] == 2);
  tessera_matrix_t *A = NULL, *B = NULL;
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, 0, 0, nb, nb, &A), 0);
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, 0, 1, nb, nb, &B), 0);
  assert_int_equal(tessera_tile_posv_mixed(TESSERA_LOWER, A, B, &single, NULL), 0);
  assert_int_equal(tessera_matrix_destroy(A), 0);
  assert_int_equal(tessera_matrix_destroy(B), 0);
  const int64_t m = nb + 3;
  double *a = calloc((size_t)(m * m), sizeof *a), b[64] = {0}, x[64];
  for (int64_t i = 0; i < m; i++) a[i + i * m] = i == 5 ? -1 : 2, b[i] = 1;
  assert_int_equal(tile_solve(ctx, TESSERA_F64, TESSERA_LOWER, m, 1, a, b, x, NULL, &single, &res),
                   6);
  lc_assert_error(ctx);
  assert_true(res.iter == -3 && res.factor == TESSERA_FACTOR_WORKING);
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, m, m, nb, nb + 2, &A), 0);
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, m, 1, nb, nb, &B), 0);
  assert_int_equal(tessera_tile_posv_mixed(TESSERA_LOWER, A, B, &single, NULL), -2);
  lc_assert_error(ctx);
  tessera_mixed_options_t o = with_factor((tessera_factor_t)7);
  assert_int_equal(tessera_matrix_destroy(A), 0);
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, m, m, nb, nb, &A), 0);
  assert_int_equal(tessera_tile_posv_mixed((tessera_uplo_t)'X', A, B, &single, NULL), -1);
  assert_int_equal(tessera_tile_posv_mixed(TESSERA_LOWER, A, B, &o, NULL), -4);
  lc_assert_error(ctx);
  o = with_factor(TESSERA_FACTOR_SINGLE);
  o.trans = TESSERA_TRANS;
  assert_int_equal(tessera_tile_posv_mixed(TESSERA_LOWER, A, B, &o, NULL), -4);
  lc_assert_error(ctx);
  assert_int_equal(tessera_tile_posv_mixed(TESSERA_LOWER, A, NULL, &single, NULL) < 0, 1);
  assert_int_equal(tessera_matrix_destroy(A), 0);
  assert_int_equal(tessera_matrix_destroy(B), 0);
  free(a);
  lc_finalize(ctx);
}

/* tessera_tile_gesv_mixed on A tiled in column panels (mb = n) and in square tiles: f64 and
 * c128 (once with Aᴴ), an order that is not a tile multiple; condition 10⁴ (the single-precision
 * factor refined, A unchanged, ipiv its pivots) and 10¹² (the fallback, A then holding its LU
 * factors), every answer to the criterion; orders 1 and 0; a singular A's info; bad arguments. */
static void test_tile_gesv_mixed(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(nb);
  const int64_t n = 3 * nb + 5, nrhs = 2;
  const tessera_mixed_options_t single = with_factor(TESSERA_FACTOR_SINGLE);
  for (int k = 0; k < 8; k++) {
    const tessera_dtype_t dt = k & 1 ? TESSERA_C128 : TESSERA_F64;
    const int64_t mb = k & 2 ? n : nb;
    const double cond = k & 4 ? 1e12 : 1e4;
    tt_rng_t r = tt_rng((uint64_t)(1900 + k));
    void *a = lc_alloc(dt, (size_t)(n * n)), *a1 = lc_alloc(dt, (size_t)(n * n));
    void *b = lc_alloc(dt, (size_t)(n * nrhs)), *x = lc_alloc(dt, (size_t)(n * nrhs));
    zc_t *full = general(dt, n, cond, a, &r);
    lc_fill_random(dt, b, n, nrhs, n, &r);
    int *ipiv = malloc((size_t)n * sizeof *ipiv);
    tessera_matrix_t *A = NULL, *B = NULL;
    assert_int_equal(tessera_matrix_create(ctx, dt, n, n, mb, nb, &A), 0);
    assert_int_equal(tessera_matrix_create(ctx, dt, n, nrhs, nb, nb, &B), 0);
    assert_int_equal(tessera_matrix_import(A, a, n), 0);
    assert_int_equal(tessera_matrix_import(B, b, n), 0);
    tessera_mixed_result_t res;
    tessera_mixed_options_t o = single;
    if (k == 3) { /* c128 in panels: Aᴴ X = B */
      o.trans = TESSERA_CONJTRANS;
      zc_t *h = lc_zalloc((size_t)(n * n));
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) h[i + j * n] = conj(full[j + i * n]);
      free(full);
      full = h;
    }
    const int rc = tessera_tile_gesv_mixed(A, ipiv, B, &o, &res);
    if (rc) fail_msg("tile_gesv_mixed = %d: %s", rc, tessera_last_error(ctx));
    assert_int_equal(tessera_matrix_export(B, x, n), 0);
    assert_int_equal(tessera_matrix_export(A, a1, n), 0);
    zc_t *Bz = lc_promote(dt, n, nrhs, b, n);
    const double err = lc_solve_resid(dt, n, nrhs, full, x, n, Bz);
    if (!(err < 10))
      fail_msg("tile_gesv_mixed %s mb %lld cond %g: backward error %g (iter %d)", lc_name(dt),
               (long long)mb, cond, err, res.iter);
    for (int64_t i = 0; i < n; i++) assert_true(ipiv[i] > i && ipiv[i] <= n);
    const bool same = memcmp(a, a1, (size_t)(n * n) * lc_esize(dt)) == 0;
    if (cond < 1e6)
      assert_true(res.factor == TESSERA_FACTOR_SINGLE && res.iter > 0 && same);
    else
      assert_true(res.factor == TESSERA_FACTOR_WORKING && res.iter < 0 && !same);
    assert_int_equal(tessera_matrix_destroy(A), 0);
    assert_int_equal(tessera_matrix_destroy(B), 0);
    free(a), free(a1), free(b), free(x), free(full), free(Bz), free(ipiv);
  }
  tessera_matrix_t *A = NULL, *B = NULL;
  int ipiv[64];
  double v = 4;
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, 1, 1, nb, nb, &A), 0);
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, 1, 1, nb, nb, &B), 0);
  assert_int_equal(tessera_matrix_import(A, &v, 1), 0);
  v = 8;
  assert_int_equal(tessera_matrix_import(B, &v, 1), 0);
  assert_int_equal(tessera_tile_gesv_mixed(A, ipiv, B, &single, NULL), 0);
  assert_int_equal(tessera_matrix_export(B, &v, 1), 0);
  assert_true(v == 2 && ipiv[0] == 1);
  assert_int_equal(tessera_matrix_destroy(A), 0);
  assert_int_equal(tessera_matrix_destroy(B), 0);
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, 0, 0, nb, nb, &A), 0);
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, 0, 1, nb, nb, &B), 0);
  assert_int_equal(tessera_tile_gesv_mixed(A, NULL, B, &single, NULL), 0);
  assert_int_equal(tessera_matrix_destroy(A), 0);
  assert_int_equal(tessera_matrix_destroy(B), 0);
  const int64_t m = nb + 3;
  double *a = calloc((size_t)(m * m), sizeof *a), b[64];
  for (int64_t i = 0; i < m; i++) a[i + i * m] = i == 5 ? 0 : 2, b[i] = 1;
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, m, m, m, nb, &A), 0);
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, m, 1, nb, nb, &B), 0);
  assert_int_equal(tessera_matrix_import(A, a, m), 0);
  assert_int_equal(tessera_matrix_import(B, b, m), 0);
  tessera_mixed_result_t res;
  assert_int_equal(tessera_tile_gesv_mixed(A, ipiv, B, &single, &res), 6);
  lc_assert_error(ctx);
  assert_true(res.iter == -3 && res.factor == TESSERA_FACTOR_WORKING);
  assert_int_equal(tessera_tile_gesv_mixed(A, NULL, B, &single, NULL), -2);
  lc_assert_error(ctx);
  tessera_mixed_options_t o = with_factor((tessera_factor_t)7);
  assert_int_equal(tessera_tile_gesv_mixed(A, ipiv, B, &o, NULL), -4);
  lc_assert_error(ctx);
  assert_int_equal(tessera_matrix_destroy(B), 0);
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, m + 1, 1, nb, nb, &B), 0);
  assert_int_equal(tessera_tile_gesv_mixed(A, ipiv, B, &single, NULL), -3);
  lc_assert_error(ctx);
  assert_int_equal(tessera_matrix_destroy(A), 0);
  assert_int_equal(tessera_matrix_destroy(B), 0);
  free(a);
  lc_finalize(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_posv_mixed_sweep),  cmocka_unit_test(test_posv_mixed_conditions),
      cmocka_unit_test(test_posv_mixed_paths),  cmocka_unit_test(test_posv_mixed_tensor_factors),
      cmocka_unit_test(test_posv_mixed_errors), cmocka_unit_test(test_gesv_mixed),
      cmocka_unit_test(test_tile_posv_mixed),   cmocka_unit_test(test_tile_gesv_mixed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
