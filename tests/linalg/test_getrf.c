/* tessera_getrf / getrs / gesv and their tile-level forms, tile_laswp: every dtype, square and
 * rectangular sizes around tile boundaries, lda > m; the residual ‖P A − L U‖, pivots equal to
 * LAPACK's where pivoting is unambiguous, solves with op(A) for every op, singular matrices
 * (LAPACK's info, the factorization completed), NaN, invalid arguments.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "lu_common.h"

static int g_tiles[3] = {4, 16, 33};

static const char *descr(const mat_t *x, const char *what, int nb) {
  static char buf[160];
  snprintf(buf, sizeof buf, "%s %s %lld x %lld tile %d:", what, lc_name(x->dt), (long long)x->m,
           (long long)x->n, nb);
  return buf;
}

/* Factors x with tessera_getrf and checks residual, pivot range, padding; with `same_pivots`,
 * the pivots must be LAPACK's. Returns the factors (caller frees) and the pivots in ipiv. */
static void *check_getrf(tessera_context_t *ctx, const mat_t *x, int nb, int same_pivots,
                         int *ipiv) {
  const size_t sz = (size_t)(x->lda * x->n);
  const int64_t k = x->m < x->n ? x->m : x->n;
  void *f = lc_dup(x->dt, x->a, sz);
  int rc = tessera_getrf(ctx, x->dt, x->m, x->n, f, x->lda, ipiv);
  if (rc != 0) fail_msg("%s returned %d (%s)", descr(x, "getrf", nb), rc, tessera_last_error(ctx));
  for (int64_t i = 0; i < k; i++)
    if (ipiv[i] < i + 1 || ipiv[i] > x->m)
      fail_msg("%s ipiv[%lld] = %d", descr(x, "getrf", nb), (long long)i, ipiv[i]);
  double res = lu_resid(x, f, ipiv);
  if (!(res < 10)) fail_msg("%s residual %g", descr(x, "getrf", nb), res);
  if (lc_diff_outside(x->dt, 0, x->m, x->n, f, x->a, x->lda))
    fail_msg("%s changed the padding", descr(x, "getrf", nb));
  if (same_pivots) {
    void *g = lc_dup(x->dt, x->a, sz);
    int *jpiv = calloc((size_t)k + 1, sizeof *jpiv);
    assert_int_equal(lapack_getrf(x->dt, x->m, x->n, g, x->lda, jpiv), 0);
    for (int64_t i = 0; i < k; i++)
      if (ipiv[i] != jpiv[i])
        fail_msg("%s ipiv[%lld] = %d, LAPACK's %d", descr(x, "getrf", nb), (long long)i, ipiv[i],
                 jpiv[i]);
    free(g);
    free(jpiv);
  }
  return f;
}

static void check_case(tessera_context_t *ctx, tessera_dtype_t dt, int64_t m, int64_t n, int nb,
                       uint64_t seed) {
  const int64_t k = m < n ? m : n;
  int *ipiv = calloc((size_t)k + 1, sizeof *ipiv);
  for (int dom = 0; dom < 2; dom++) {
    mat_t x = lu_gen(dt, m, n, dom, seed * 2 + (uint64_t)dom);
    void *f = check_getrf(ctx, &x, nb, dom, ipiv);
    if (m == n) { /* the solves, with the factors of getrf */
      const int64_t nrhs = dom ? 3 : 1, ldb = n + 2;
      tt_rng_t r = tt_rng(seed + 7);
      void *b = lc_alloc(dt, (size_t)(ldb * nrhs));
      lc_fill_nan(dt, b, (size_t)(ldb * nrhs));
      lc_fill_random(dt, b, n, nrhs, ldb, &r);
      zc_t *bz = lc_promote(dt, n, nrhs, b, ldb);
      const tessera_op_t ops[3] = {TESSERA_NOTRANS, TESSERA_TRANS, TESSERA_CONJTRANS};
      for (int t = 0; t < 3; t++) {
        void *y = lc_dup(dt, b, (size_t)(ldb * nrhs));
        int rc = tessera_getrs(ctx, ops[t], dt, n, nrhs, f, x.lda, ipiv, y, ldb);
        if (rc)
          fail_msg("%s getrs '%c' = %d (%s)", descr(&x, "getrs", nb), ops[t], rc,
                   tessera_last_error(ctx));
        double res = op_resid(dt, ops[t], n, nrhs, x.full, y, ldb, bz);
        if (!(res < 20))
          fail_msg("%s trans '%c' backward error %g", descr(&x, "getrs", nb), ops[t], res);
        if (lc_diff_outside(dt, 0, n, nrhs, y, b, ldb))
          fail_msg("%s changed B's padding", descr(&x, "getrs", nb));
        free(y);
      }
      void *a = lc_dup(dt, x.a, (size_t)(x.lda * n)), *y = lc_dup(dt, b, (size_t)(ldb * nrhs));
      int rc = tessera_gesv(ctx, dt, n, nrhs, a, x.lda, ipiv, y, ldb);
      if (rc) fail_msg("%s = %d (%s)", descr(&x, "gesv", nb), rc, tessera_last_error(ctx));
      double res = lc_solve_resid(dt, n, nrhs, x.full, y, ldb, bz);
      if (!(res < 20)) fail_msg("%s backward error %g", descr(&x, "gesv", nb), res);
      free(a);
      free(y);
      free(b);
      free(bz);
    }
    free(f);
    lu_mat_free(&x);
  }
  free(ipiv);
}

static void test_getrf_sizes(void **state) {
  int nb = *(int *)*state;
  tessera_context_t *ctx = lc_context(nb);
  int64_t sizes[8];
  const int ns = lc_sizes(nb, sizes);
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int s = 0; s < ns; s++) {
      const uint64_t seed = (uint64_t)(nb * 1000 + d * 100 + s * 3);
      check_case(ctx, lc_dtypes[d], sizes[s], sizes[s], nb, seed);
      /* rectangular: taller and wider than square */
      check_case(ctx, lc_dtypes[d], sizes[s] + nb + 3, sizes[s], nb, seed + 1);
      check_case(ctx, lc_dtypes[d], sizes[s], 2 * sizes[s] + 1, nb, seed + 2);
    }
  lc_finalize(ctx);
}

/* A matrix with column c zero below row c after elimination: U(c, c) is exactly zero. LAPACK's
 * info, the factorization completed as LAPACK completes it; gesv leaves B alone. */
static void singular_cases(tessera_context_t *ctx, int nb) {
  const int64_t n = 3 * nb + 5, cols[3] = {0, nb, 2 * nb + 3};
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int c = 0; c < 3; c++) {
      mat_t x = lu_gen(lc_dtypes[d], n, n, 1, (uint64_t)(500 + d * 7 + c));
      for (int64_t i = 0; i < n; i++) lc_set(x.dt, x.a, (size_t)(i + cols[c] * x.lda), 0.0);
      free(x.full);
      x.full = lc_promote(x.dt, n, n, x.a, x.lda);
      int *ipiv = calloc((size_t)n, sizeof *ipiv), *jpiv = calloc((size_t)n, sizeof *jpiv);
      void *f = lc_dup(x.dt, x.a, (size_t)(x.lda * n)), *g = lc_dup(x.dt, x.a, (size_t)(x.lda * n));
      int rc = tessera_getrf(ctx, x.dt, n, n, f, x.lda, ipiv);
      int info = lapack_getrf(x.dt, n, n, g, x.lda, jpiv);
      assert_int_equal(info, cols[c] + 1);
      if (rc != info) fail_msg("%s returned %d, LAPACK %d", descr(&x, "getrf", nb), rc, info);
      lc_assert_error(ctx);
      double res = lu_resid(&x, f, ipiv);
      if (!(res < 10)) fail_msg("%s singular: residual %g", descr(&x, "getrf", nb), res);
      /* gesv: the same info, B untouched */
      tt_rng_t r = tt_rng(3);
      void *bb = lc_alloc(x.dt, (size_t)n);
      lc_fill_random(x.dt, bb, n, 1, n, &r);
      void *b0 = lc_dup(x.dt, bb, (size_t)n);
      memcpy(f, x.a, (size_t)(x.lda * n) * lc_esize(x.dt));
      assert_int_equal(tessera_gesv(ctx, x.dt, n, 1, f, x.lda, ipiv, bb, n), info);
      assert_memory_equal(bb, b0, (size_t)n * lc_esize(x.dt));
      free(bb);
      free(b0);
      free(f);
      free(g);
      free(ipiv);
      free(jpiv);
      lu_mat_free(&x);
    }
}

static void test_singular(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(8);
  singular_cases(ctx, 8);
  lc_finalize(ctx);
}

/* NaN anywhere in the factored columns: info > 0 with a message, never a hang. */
static void nan_cases(tessera_context_t *ctx, int nb) {
  const int64_t n = 2 * nb + 3;
  const int64_t at[3][2] = {{0, 0}, {n - 1, 2}, {5, n - 1}};
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int c = 0; c < 3; c++) {
      mat_t x = lu_gen(lc_dtypes[d], n, n, 0, (uint64_t)(900 + d * 5 + c));
      lc_set(x.dt, x.a, (size_t)(at[c][0] + at[c][1] * x.lda), NAN);
      int *ipiv = calloc((size_t)n, sizeof *ipiv);
      int rc = tessera_getrf(ctx, x.dt, n, n, x.a, x.lda, ipiv);
      if (rc <= 0 || rc > n)
        fail_msg("%s NaN at (%lld, %lld): returned %d", descr(&x, "getrf", nb), (long long)at[c][0],
                 (long long)at[c][1], rc);
      if (!strstr(tessera_last_error(ctx), "NaN"))
        fail_msg("%s message: %s", descr(&x, "getrf", nb), tessera_last_error(ctx));
      free(ipiv);
      lu_mat_free(&x);
    }
}

static void test_nan(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(8);
  nan_cases(ctx, 8);
  lc_finalize(ctx);
}

/* tile_getrf of x on a new descriptor of mb x nb tiles: its factors exported into f (x's layout)
 * and checked (residual; LAPACK's pivots jpiv, its factors into g, a copy of x). Returns the
 * descriptor. */
static tessera_matrix_t *tile_getrf_checked(tessera_context_t *ctx, const mat_t *x, int64_t mb,
                                            int64_t nb, int *ipiv, int *jpiv, void *f, void *g,
                                            const char *what) {
  tessera_matrix_t *A = NULL;
  assert_int_equal(tessera_matrix_create(ctx, x->dt, x->m, x->n, mb, nb, &A), 0);
  assert_int_equal(tessera_matrix_import(A, x->a, x->lda), 0);
  assert_int_equal(tessera_tile_getrf(A, ipiv), 0);
  assert_int_equal(tessera_matrix_export(A, f, x->lda), 0);
  const double res = lu_resid(x, f, ipiv);
  if (!(res < 10)) fail_msg("%s residual %g", descr(x, what, (int)nb), res);
  assert_int_equal(lapack_getrf(x->dt, x->m, x->n, g, x->lda, jpiv), 0);
  assert_memory_equal(ipiv, jpiv, (size_t)(x->m < x->n ? x->m : x->n) * sizeof *ipiv);
  return A;
}

/* tile_getrf of an n x n matrix on square nb x nb tiles (copied into panels and back). */
static void square_case(tessera_context_t *ctx, tessera_dtype_t dt, int64_t n, int64_t nb,
                        uint64_t seed) {
  mat_t x = lu_gen(dt, n, n, 1, seed);
  int *ipiv = calloc((size_t)n, sizeof *ipiv), *jpiv = calloc((size_t)n, sizeof *jpiv);
  void *f = lc_dup(dt, x.a, (size_t)(x.lda * n)), *g = lc_dup(dt, x.a, (size_t)(x.lda * n));
  tessera_matrix_t *A = tile_getrf_checked(ctx, &x, nb, nb, ipiv, jpiv, f, g, "square tile_getrf");
  assert_int_equal(tessera_matrix_destroy(A), 0);
  free(f), free(g), free(ipiv), free(jpiv);
  lu_mat_free(&x);
}

/* The same on the context's accelerators alone (GPUs, or simulated devices), every task there:
 * the devices' getrf with its NaN scan and permutation, their swaps and updates. Skipped
 * without accelerators; the wide panel only on CUDA GPUs. */
static void test_on_accelerators(void **state) {
  (void)state;
  const int tiles[2] = {2, 8};
  for (int t = 0; t < 2; t++) {
    tessera_context_t *ctx = lc_context(tiles[t]);
    if (tessera_set_scope(ctx, tessera_scope_gpus()) != 0) {
      lc_finalize(ctx);
      skip();
    }
    singular_cases(ctx, tiles[t]);
    nan_cases(ctx, tiles[t]);
    for (int d = 0; d < TESSERA_NUM_DTYPES; d++) {
      check_case(ctx, lc_dtypes[d], 4 * tiles[t] + 1, 4 * tiles[t] + 1, tiles[t],
                 70u + (unsigned)d);
      check_case(ctx, lc_dtypes[d], 3 * tiles[t] + 2, tiles[t] + 1, tiles[t], 80u + (unsigned)d);
      square_case(ctx, lc_dtypes[d], 3 * tiles[t] + 3, tiles[t], 90u + (unsigned)d);
    }
    lc_finalize(ctx);
  }
  /* CUDA GPUs: a panel wider than the permutation kernel's 2048 rows (TSR_CUDA_SWAPS_MAX),
   * whose interchanges cuSOLVER's laswp applies instead, in the update and in the solves. */
  enum { WIDE = 2100 };
  tessera_context_t *ctx = lc_context(WIDE);
  if (tessera_device_count(ctx, TESSERA_DEVICE_CUDA) > 0 &&
      tessera_set_scope(ctx, tessera_scope_gpus()) == 0) {
    check_case(ctx, TESSERA_F64, WIDE + 37, WIDE + 37, WIDE, 95u);
    check_case(ctx, TESSERA_C64, WIDE + 37, WIDE + 37, WIDE, 96u);
  }
  lc_finalize(ctx);
}

static void test_lu_args(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(4);
  double a[30], b[12];
  int ipiv[6] = {1, 2, 3, 4, 5, 5};
  for (int i = 0; i < 30; i++) a[i] = i % 7 == 0 ? 4.0 : 0.5;
  for (int i = 0; i < 12; i++) b[i] = i;
  assert_int_equal(tessera_getrf(NULL, TESSERA_F64, 5, 5, a, 5, ipiv), -1);
  assert_int_equal(tessera_getrf(ctx, (tessera_dtype_t)9, 5, 5, a, 5, ipiv), -2);
  lc_assert_error(ctx);
  assert_int_equal(tessera_getrf(ctx, TESSERA_F64, -1, 5, a, 5, ipiv), -3);
  assert_int_equal(tessera_getrf(ctx, TESSERA_F64, 5, -1, a, 5, ipiv), -4);
  assert_int_equal(tessera_getrf(ctx, TESSERA_F64, 5, 5, NULL, 5, ipiv), -5);
  assert_int_equal(tessera_getrf(ctx, TESSERA_F64, 5, 5, a, 4, ipiv), -6);
  assert_int_equal(tessera_getrf(ctx, TESSERA_F64, 5, 5, a, 5, NULL), -7);
  lc_assert_error(ctx);
  assert_int_equal(tessera_getrf(ctx, TESSERA_F64, 0, 5, a, 1, NULL), 0);
  assert_int_equal(tessera_getrs(ctx, (tessera_op_t)'X', TESSERA_F64, 5, 2, a, 5, ipiv, b, 6), -2);
  assert_int_equal(tessera_getrs(ctx, TESSERA_NOTRANS, (tessera_dtype_t)9, 5, 2, a, 5, ipiv, b, 6),
                   -3);
  assert_int_equal(tessera_getrs(ctx, TESSERA_NOTRANS, TESSERA_F64, -5, 2, a, 5, ipiv, b, 6), -4);
  assert_int_equal(tessera_getrs(ctx, TESSERA_NOTRANS, TESSERA_F64, 5, -2, a, 5, ipiv, b, 6), -5);
  assert_int_equal(tessera_getrs(ctx, TESSERA_NOTRANS, TESSERA_F64, 5, 2, NULL, 5, ipiv, b, 6), -6);
  assert_int_equal(tessera_getrs(ctx, TESSERA_NOTRANS, TESSERA_F64, 5, 2, a, 3, ipiv, b, 6), -7);
  assert_int_equal(tessera_getrs(ctx, TESSERA_NOTRANS, TESSERA_F64, 5, 2, a, 5, NULL, b, 6), -8);
  int bad[5] = {1, 2, 1, 4, 5}; /* row 3 with row 1: not as getrf leaves pivots */
  assert_int_equal(tessera_getrs(ctx, TESSERA_NOTRANS, TESSERA_F64, 5, 2, a, 5, bad, b, 6), -8);
  lc_assert_error(ctx);
  bad[2] = 6;
  assert_int_equal(tessera_getrs(ctx, TESSERA_NOTRANS, TESSERA_F64, 5, 2, a, 5, bad, b, 6), -8);
  assert_int_equal(tessera_getrs(ctx, TESSERA_NOTRANS, TESSERA_F64, 5, 2, a, 5, ipiv, NULL, 6), -9);
  assert_int_equal(tessera_getrs(ctx, TESSERA_NOTRANS, TESSERA_F64, 5, 2, a, 5, ipiv, b, 4), -10);
  assert_int_equal(tessera_gesv(ctx, TESSERA_F64, 5, 2, a, 5, NULL, b, 6), -7);
  assert_int_equal(tessera_gesv(ctx, TESSERA_F64, 5, 2, a, 5, ipiv, b, 2), -9);
  lc_assert_error(ctx);
  assert_int_equal(tessera_tile_for_lu(ctx, 5000, 300), 4); /* the configured size */
  assert_int_equal(tessera_tile_for_lu(NULL, 5, 5), 0);
  assert_int_equal(tessera_tile_for_qr(ctx, 5000, 300), 4);
  assert_int_equal(tessera_tile_for_qr(NULL, 5, 5), 0);
  lc_finalize(ctx);
  /* automatic panel widths on CPUs: min(m, n) / (8 workers) within [128, 512] */
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 2;
  cfg.gpus = 0;
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  assert_int_equal(tessera_tile_for_lu(ctx, 8192, 8192), 512);
  assert_int_equal(tessera_tile_for_lu(ctx, 100000, 5000), 256);
  assert_int_equal(tessera_tile_for_lu(ctx, 1000, 1000), 128);
  /* QR's panels on CPUs: LU's width up to n / 8, at least 32 */
  assert_int_equal(tessera_tile_for_qr(ctx, 8192, 8192), 512);
  assert_int_equal(tessera_tile_for_qr(ctx, 40000, 8192), 512);
  assert_int_equal(tessera_tile_for_qr(ctx, 40000, 2048), 128);
  assert_int_equal(tessera_tile_for_qr(ctx, 200000, 256), 32);
  /* a matrix already on the devices: without accelerators, the LAPACK-style choice */
  assert_int_equal(tessera_tile_for_devices(ctx, 8192, 1, 0), tessera_tile_for(ctx, 8192));
  assert_int_equal(tessera_tile_for_devices(ctx, 0, 1, 0), 1);
  assert_int_equal(tessera_tile_for_devices(NULL, 5, 1, 0), 0);
  lc_finalize(ctx);
  /* with accelerators (GPUs, or simulated devices): one tile on one device up to the bound, else
   * one per device's share within [256, 2048] */
  cfg.gpus = -1;
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  if (tessera_accelerator_count(ctx) > 0) {
    assert_int_equal(tessera_tile_for_devices(ctx, 4096, 1, 1), 4096);
    assert_int_equal(tessera_tile_for_devices(ctx, TESSERA_ONE_TILE_MAX, 1, 0),
                     TESSERA_ONE_TILE_MAX);
    assert_int_equal(tessera_tile_for_devices(ctx, 8192, 1, 1), 2048);
    assert_int_equal(tessera_tile_for_devices(ctx, 65536, 4, 0), 2048);
    assert_int_equal(tessera_tile_for_devices(ctx, 4096, 8, 0), 512);
    assert_int_equal(tessera_tile_for_devices(ctx, 1000, 8, 0), 256);
    /* QR's panels: LU's width up to 1024 */
    assert_int_equal(tessera_tile_for_qr(ctx, 1000, 1000), tessera_tile_for_lu(ctx, 1000, 1000));
    assert_true(tessera_tile_for_qr(ctx, 65536, 65536) <= 1024);
  }
  lc_finalize(ctx);
}

/* tile_gesv on A and B, given x's matrix and b afresh: its backward error below 20 (y: room for
 * the solution). */
static void tile_gesv_case(tessera_matrix_t *A, tessera_matrix_t *B, const mat_t *x, const void *b,
                           const zc_t *bz, int64_t nrhs, void *y, int *ipiv, const char *what,
                           int nb) {
  const int64_t n = x->n;
  assert_int_equal(tessera_matrix_import(A, x->a, x->lda), 0);
  assert_int_equal(tessera_matrix_import(B, b, n), 0);
  assert_int_equal(tessera_tile_gesv(A, ipiv, B), 0);
  assert_int_equal(tessera_matrix_export(B, y, n), 0);
  const double res = lc_solve_resid(x->dt, n, nrhs, x->full, y, n, bz);
  if (!(res < 20)) fail_msg("%s backward error %g", descr(x, what, nb), res);
}

/* Tile level: owned descriptors of column panels (getrf, getrs, gesv, laswp), the same on square
 * tiles, and refusals. */
static void test_tile_lu(void **state) {
  (void)state;
  const int64_t nb = 8, n = 3 * nb + 5, nrhs = 4;
  tessera_context_t *ctx = lc_context(5);
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++) {
    const tessera_dtype_t dt = lc_dtypes[d];
    mat_t x = lu_gen(dt, n, n, 1, (uint64_t)(40 + d));
    tessera_matrix_t *B = NULL;
    int *ipiv = calloc((size_t)n, sizeof *ipiv), *jpiv = calloc((size_t)n, sizeof *jpiv);
    void *f = lc_dup(dt, x.a, (size_t)(x.lda * n)), *g = lc_dup(dt, x.a, (size_t)(x.lda * n));
    tessera_matrix_t *A = tile_getrf_checked(ctx, &x, n, nb, ipiv, jpiv, f, g, "tile_getrf");
    double res;
    /* getrs on the resident factors */
    tt_rng_t r = tt_rng(11);
    void *b = lc_alloc(dt, (size_t)(n * nrhs)), *y = lc_alloc(dt, (size_t)(n * nrhs));
    lc_fill_random(dt, b, n, nrhs, n, &r);
    zc_t *bz = lc_promote(dt, n, nrhs, b, n);
    assert_int_equal(tessera_matrix_create(ctx, dt, n, nrhs, n, 3, &B), 0);
    assert_int_equal(tessera_matrix_import(B, b, n), 0);
    assert_int_equal(tessera_tile_getrs(TESSERA_TRANS, A, ipiv, B), 0);
    assert_int_equal(tessera_matrix_export(B, y, n), 0);
    res = op_resid(dt, TESSERA_TRANS, n, nrhs, x.full, y, n, bz);
    if (!(res < 20)) fail_msg("%s backward error %g", descr(&x, "tile_getrs", (int)nb), res);
    /* laswp against LAPACK's, forward and backward, from row 3 */
    for (int incx = -1; incx <= 1; incx += 2) {
      assert_int_equal(tessera_matrix_import(B, b, n), 0);
      assert_int_equal(tessera_tile_laswp(B, 3, n - 2, ipiv, incx), 0);
      assert_int_equal(tessera_matrix_export(B, y, n), 0);
      void *z = lc_dup(dt, b, (size_t)(n * nrhs));
      lapack_laswp(dt, nrhs, z, n, 3, (int)n - 2, ipiv, incx);
      assert_memory_equal(y, z, (size_t)(n * nrhs) * lc_esize(dt));
      free(z);
    }
    assert_int_equal(tessera_tile_gesv(NULL, ipiv, B), -1);
    assert_int_equal(tessera_tile_gesv(A, ipiv, NULL), -3);
    assert_int_equal(tessera_tile_gesv(A, NULL, B), -2);
    assert_int_equal(tessera_tile_getrs(TESSERA_NOTRANS, NULL, ipiv, B), -2);
    assert_int_equal(tessera_tile_getrs(TESSERA_NOTRANS, A, NULL, B), -3);
    assert_int_equal(tessera_tile_getrs(TESSERA_NOTRANS, A, ipiv, NULL), -4);
    assert_true(tessera_tile_laswp(B, 0, 2, ipiv, 1) < 0);
    assert_true(tessera_tile_laswp(B, 1, 2, ipiv, 2) < 0);
    lc_assert_error(ctx);
    tile_gesv_case(A, B, &x, b, bz, nrhs, y, ipiv, "tile_gesv", (int)nb);
    assert_int_equal(tessera_matrix_destroy(B), 0);
    /* tiles that do not span the rows: copied into panels of their width and back, the same
     * pivots as the panels' (LAPACK's) and factors as accurate (bitwise equal only where every
     * task lands where it did for the panels, so not required with GPUs beside the CPUs) */
    tessera_matrix_t *As = NULL;
    assert_int_equal(tessera_matrix_create(ctx, dt, n, n, nb, nb, &As), 0);
    assert_int_equal(tessera_matrix_import(As, x.a, x.lda), 0);
    memset(jpiv, 0, (size_t)n * sizeof *jpiv);
    assert_int_equal(tessera_tile_getrf(As, jpiv), 0);
    assert_memory_equal(ipiv, jpiv, (size_t)n * sizeof *ipiv);
    assert_int_equal(tessera_matrix_export(As, g, x.lda), 0);
    res = lu_resid(&x, g, jpiv);
    if (!(res < 10)) fail_msg("%s residual %g", descr(&x, "square tile_getrf", (int)nb), res);
    assert_int_equal(tessera_matrix_create(ctx, dt, n, nrhs, 5, 3, &B), 0);
    assert_int_equal(tessera_matrix_import(B, b, n), 0);
    assert_int_equal(tessera_tile_getrs(TESSERA_CONJTRANS, As, ipiv, B), 0);
    assert_int_equal(tessera_matrix_export(B, y, n), 0);
    res = op_resid(dt, TESSERA_CONJTRANS, n, nrhs, x.full, y, n, bz);
    if (!(res < 20)) fail_msg("%s backward error %g", descr(&x, "square getrs", (int)nb), res);
    assert_int_equal(tessera_matrix_import(B, b, n), 0);
    assert_int_equal(tessera_tile_laswp(B, 2, n, ipiv, -1), 0);
    assert_int_equal(tessera_matrix_export(B, y, n), 0);
    void *z = lc_dup(dt, b, (size_t)(n * nrhs));
    lapack_laswp(dt, nrhs, z, n, 2, (int)n, ipiv, -1);
    assert_memory_equal(y, z, (size_t)(n * nrhs) * lc_esize(dt));
    free(z);
    tile_gesv_case(As, B, &x, b, bz, nrhs, y, jpiv, "square gesv", (int)nb);
    assert_int_equal(tessera_matrix_destroy(As), 0);
    assert_int_equal(tessera_matrix_destroy(B), 0);
    /* refused: B of another size */
    assert_int_equal(tessera_matrix_create(ctx, dt, n + 1, nrhs, n + 1, 3, &B), 0);
    assert_true(tessera_tile_getrs(TESSERA_NOTRANS, A, ipiv, B) < 0);
    assert_int_equal(tessera_matrix_destroy(B), 0);
    assert_int_equal(tessera_matrix_destroy(A), 0);
    free(b);
    free(y);
    free(bz);
    free(f);
    free(g);
    free(ipiv);
    free(jpiv);
    lu_mat_free(&x);
  }
  lc_finalize(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_prestate(test_getrf_sizes, &g_tiles[0]),
      cmocka_unit_test_prestate(test_getrf_sizes, &g_tiles[1]),
      cmocka_unit_test_prestate(test_getrf_sizes, &g_tiles[2]),
      cmocka_unit_test(test_singular),
      cmocka_unit_test(test_nan),
      cmocka_unit_test(test_on_accelerators),
      cmocka_unit_test(test_lu_args),
      cmocka_unit_test(test_tile_lu),
  };
  tt_watchdog(600);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
