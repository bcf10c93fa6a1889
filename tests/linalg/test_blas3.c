/* tessera_trsm, tessera_syrk, tessera_herk, tessera_gemm and their tile-level forms, every
 * dtype and flag combination, sizes that are not tile multiples (zero included), non-trivial
 * (complex) scalars; compared element-wise with CBLAS (double complex, on the same inputs)
 * within 10 (k + 2) ε times each element's scale. Parts that must not be touched (padding,
 * the other triangle, A) are checked byte for byte.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "linalg_common.h"

/* 100: tiles above the CPU trsm kernel's recursion leaf, so its halving is exercised. */
static int g_tiles[3] = {8, 3, 100};
static const tessera_op_t ops[3] = {TESSERA_NOTRANS, TESSERA_TRANS, TESSERA_CONJTRANS};

static int64_t imax(int64_t a, int64_t b) {
  return a > b ? a : b;
}

/* The scalar v as the dtype holds it. */
static zc_t as_dtype(tessera_dtype_t dt, zc_t v) {
  zc_t buf;
  lc_set(dt, &buf, 0, v);
  return lc_get(dt, &buf, 0);
}

/* op(X) as an explicit r x c matrix (ld r); X is r x c (NOTRANS) or c x r, leading dim ldx. */
static zc_t *op_explicit(const zc_t *x, int64_t ldx, tessera_op_t t, int64_t r, int64_t c) {
  zc_t *o = lc_zalloc((size_t)(r * c));
  for (int64_t j = 0; j < c; j++)
    for (int64_t i = 0; i < r; i++) {
      zc_t v = (t == TESSERA_NOTRANS) ? x[i + j * ldx] : x[j + i * ldx];
      o[i + j * r] = (t == TESSERA_CONJTRANS) ? conj(v) : v;
    }
  return o;
}

/* scale = |alpha| |X| |Y|ᵀ-or-not + |beta| |C|: X r x k, Y k x c (ld k) or, with yt, c x k. */
static double *abs_scale(const zc_t *X, const zc_t *Y, int yt, const zc_t *C, int64_t r, int64_t c,
                         int64_t k, double alpha, double beta) {
  double *s = calloc((size_t)(r * c) + 1, sizeof *s);
  for (int64_t j = 0; j < c; j++)
    for (int64_t i = 0; i < r; i++) {
      double acc = 0;
      for (int64_t l = 0; l < k; l++)
        acc += cabs(X[i + l * r]) * cabs(yt ? Y[j + l * c] : Y[l + j * k]);
      s[i + j * r] = alpha * acc + beta * cabs(C[i + j * r]);
    }
  return s;
}

/* Element-wise check of got (ldg) against ref (ld m) on the m x n block (or its uplo triangle
 * when uplo != 0): |got - ref| <= 10 (k + 2) ε scale + tiny. */
static void compare(tessera_dtype_t dt, int uplo, int64_t m, int64_t n, const void *got,
                    int64_t ldg, const zc_t *ref, const double *scale, int64_t k,
                    const char *what) {
  double tol = 10.0 * (double)(k + 2) * lc_eps(dt), worst = 0;
  int64_t wi = -1, wj = -1;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++) {
      if (uplo && !lc_in_tri((tessera_uplo_t)uplo, i, j)) continue;
      zc_t g = lc_get(dt, got, (size_t)(i + j * ldg)), r = ref[i + j * m];
      double err = cabs(g - r) / (tol * scale[i + j * m] + 1e-300);
      if (!(err <= worst)) {
        worst = err;
        wi = i;
        wj = j;
      }
    }
  if (!(worst <= 1.0)) {
    zc_t g = lc_get(dt, got, (size_t)(wi + wj * ldg)), r = ref[wi + wj * m];
    fail_msg("%s: element (%lld, %lld) = %g%+gi, reference %g%+gi (error %.3g x tolerance)", what,
             (long long)wi, (long long)wj, creal(g), cimag(g), creal(r), cimag(r), worst);
  }
}

/* Random rows x cols operand in an ld x cols array whose padding is NaN. */
static void *operand(tessera_dtype_t dt, int64_t rows, int64_t cols, int64_t ld, tt_rng_t *r) {
  void *a = lc_alloc(dt, (size_t)(ld * cols));
  lc_fill_nan(dt, a, (size_t)(ld * cols));
  lc_fill_random(dt, a, rows, cols, ld, r);
  return a;
}

/* Descriptor with the context's tile size holding a copy of the array. */
static tessera_matrix_t *mat_in(tessera_context_t *ctx, tessera_dtype_t dt, int64_t rows,
                                int64_t cols, const void *a, int64_t ld) {
  int64_t nb = tessera_default_tile(ctx);
  tessera_matrix_t *A = NULL;
  assert_int_equal(tessera_matrix_create(ctx, dt, rows, cols, nb, nb, &A), 0);
  assert_int_equal(tessera_matrix_import(A, a, ld), 0);
  return A;
}

static void mat_out(tessera_matrix_t *A, void *a, int64_t ld) {
  assert_int_equal(tessera_matrix_export(A, a, ld), 0);
  assert_int_equal(tessera_matrix_destroy(A), 0);
}

static const zc_t ALPHA = CMPLX(0.7, -0.4), BETA = CMPLX(-0.3, 0.6);

/* ---------------------------------------------------------------- gemm */

static void check_gemm(tessera_context_t *ctx, tessera_dtype_t dt, tessera_op_t ta, tessera_op_t tb,
                       int64_t m, int64_t n, int64_t k, int beta_zero, int tile) {
  char what[160];
  snprintf(what, sizeof what, "%sgemm %s %c%c m %lld n %lld k %lld%s tile %d", tile ? "tile_" : "",
           lc_name(dt), (char)ta, (char)tb, (long long)m, (long long)n, (long long)k,
           beta_zero ? " beta 0" : "", tessera_default_tile(ctx));
  tt_rng_t r = tt_rng((uint64_t)(m * 1000000 + n * 1000 + k + ta * 7 + tb * 11 + dt));
  int64_t ra = ta == TESSERA_NOTRANS ? m : k, ca = ta == TESSERA_NOTRANS ? k : m;
  int64_t rb = tb == TESSERA_NOTRANS ? k : n, cb = tb == TESSERA_NOTRANS ? n : k;
  int64_t lda = imax(ra, 1) + 2, ldb = imax(rb, 1) + 1, ldc = m + 3;
  void *a = operand(dt, ra, ca, lda, &r), *b = operand(dt, rb, cb, ldb, &r);
  void *c = operand(dt, beta_zero ? 0 : m, n, ldc, &r); /* beta 0: C is all NaN */
  void *a0 = lc_dup(dt, a, (size_t)(lda * ca)), *b0 = lc_dup(dt, b, (size_t)(ldb * cb));
  void *c0 = lc_dup(dt, c, (size_t)(ldc * n));
  zc_t alpha = as_dtype(dt, ALPHA), beta = beta_zero ? 0 : as_dtype(dt, BETA), sa, sb;
  lc_set(dt, &sa, 0, alpha);
  lc_set(dt, &sb, 0, beta);
  zc_t *Az = lc_promote(dt, ra, ca, a, lda), *Bz = lc_promote(dt, rb, cb, b, ldb);
  zc_t *ref = beta_zero ? lc_zalloc((size_t)(m * n)) : lc_promote(dt, m, n, c, ldc);
  zc_t *opA = op_explicit(Az, ra, ta, m, k), *opB = op_explicit(Bz, rb, tb, k, n);
  double *scale = abs_scale(opA, opB, 0, ref, m, n, k, cabs(alpha), cabs(beta));
  if (m > 0 && n > 0)
    cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, &alpha, opA,
                (int)imax(m, 1), opB, (int)imax(k, 1), &beta, ref, (int)imax(m, 1));
  int rc;
  if (tile) {
    tessera_matrix_t *A = mat_in(ctx, dt, ra, ca, a, lda), *B = mat_in(ctx, dt, rb, cb, b, ldb);
    tessera_matrix_t *C = mat_in(ctx, dt, m, n, c, ldc);
    rc = tessera_tile_gemm(ta, tb, &sa, A, B, &sb, C);
    mat_out(C, c, ldc);
    assert_int_equal(tessera_matrix_destroy(A), 0);
    assert_int_equal(tessera_matrix_destroy(B), 0);
  } else {
    rc = tessera_gemm(ctx, ta, tb, dt, m, n, k, &sa, a, lda, b, ldb, &sb, c, ldc);
  }
  if (rc != 0) fail_msg("%s: returned %d (%s)", what, rc, tessera_last_error(ctx));
  compare(dt, 0, m, n, c, ldc, ref, scale, k, what);
  if (lc_diff_outside(dt, 0, m, n, c, c0, ldc)) fail_msg("%s: padding of C changed", what);
  if (memcmp(a, a0, (size_t)(lda * ca) * lc_esize(dt)) ||
      memcmp(b, b0, (size_t)(ldb * cb) * lc_esize(dt)))
    fail_msg("%s: A or B changed", what);
  void *bufs[] = {a, b, c, a0, b0, c0, Az, Bz, ref, opA, opB, scale};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
}

static void test_gemm(void **state) {
  int nb = *(int *)*state;
  tessera_context_t *ctx = lc_context(nb);
  int64_t mnk[7][3] = {{0, 3, 5},
                       {4, 0, 5},
                       {6, 5, 0},
                       {1, 1, 1},
                       {nb + 1, 2 * nb + 3, nb - 1},
                       {3 * nb + 5, nb + 2, 2 * nb + 3},
                       {2 * nb + 1, 3 * nb + 2, 3 * nb + 5}};
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++) {
    for (int x = 0; x < 3; x++)
      for (int y = 0; y < 3; y++)
        for (int s = 0; s < 7; s++)
          check_gemm(ctx, lc_dtypes[d], ops[x], ops[y], mnk[s][0], mnk[s][1], mnk[s][2], 0, 0);
    check_gemm(ctx, lc_dtypes[d], TESSERA_NOTRANS, TESSERA_CONJTRANS, mnk[5][0], mnk[5][1],
               mnk[5][2], 1, 0);
    check_gemm(ctx, lc_dtypes[d], TESSERA_CONJTRANS, TESSERA_NOTRANS, mnk[6][0], mnk[6][1],
               mnk[6][2], 0, 1);
  }
  lc_finalize(ctx);
}

/* ---------------------------------------------------------------- trsm */

static void check_trsm(tessera_context_t *ctx, tessera_dtype_t dt, tessera_side_t side,
                       tessera_uplo_t uplo, tessera_op_t ta, tessera_diag_t diag, int64_t m,
                       int64_t n, int tile) {
  char what[160];
  snprintf(what, sizeof what, "%strsm %s %c%c%c%c m %lld n %lld tile %d", tile ? "tile_" : "",
           lc_name(dt), (char)side, (char)uplo, (char)ta, (char)diag, (long long)m, (long long)n,
           tessera_default_tile(ctx));
  tt_rng_t r = tt_rng((uint64_t)(m * 1000 + n + side * 3 + uplo * 5 + ta * 7 + diag * 11 + dt));
  int64_t na = side == TESSERA_LEFT ? m : n, lda = na + 2, ldb = m + 3;
  /* a well-conditioned triangle; everything it must not read is NaN (the diagonal too when
   * it is implicit) */
  void *a = lc_alloc(dt, (size_t)(lda * na));
  lc_fill_nan(dt, a, (size_t)(lda * na));
  zc_t *Az = lc_zalloc((size_t)(na * na));
  for (int64_t j = 0; j < na; j++)
    for (int64_t i = 0; i < na; i++) {
      if (!lc_in_tri(uplo, i, j)) continue;
      if (i == j && diag == TESSERA_UNIT) {
        Az[i + j * na] = 1;
        continue;
      }
      zc_t v = (i == j)
                   ? 1.5 + 0.5 * tt_uniform(&r) + (lc_is_complex(dt) ? 0.3 * I * tt_uniform(&r) : 0)
                   : lc_rand(dt, &r) / (double)na;
      lc_set(dt, a, (size_t)(i + j * lda), v);
      Az[i + j * na] = lc_get(dt, a, (size_t)(i + j * lda));
    }
  void *b = operand(dt, m, n, ldb, &r);
  void *a0 = lc_dup(dt, a, (size_t)(lda * na)), *b0 = lc_dup(dt, b, (size_t)(ldb * n));
  zc_t alpha = as_dtype(dt, CMPLX(0.8, 0.3)), sa;
  lc_set(dt, &sa, 0, alpha);
  zc_t *ref = lc_promote(dt, m, n, b, ldb);
  if (m > 0 && n > 0)
    cblas_ztrsm(CblasColMajor, side == TESSERA_LEFT ? CblasLeft : CblasRight,
                uplo == TESSERA_LOWER ? CblasLower : CblasUpper,
                ta == TESSERA_NOTRANS ? CblasNoTrans
                : ta == TESSERA_TRANS ? CblasTrans
                                      : CblasConjTrans,
                diag == TESSERA_UNIT ? CblasUnit : CblasNonUnit, (int)m, (int)n, &alpha, Az,
                (int)imax(na, 1), ref, (int)imax(m, 1));
  double xmax = 0;
  for (int64_t i = 0; i < m * n; i++) xmax = cabs(ref[i]) > xmax ? cabs(ref[i]) : xmax;
  double *scale = calloc((size_t)(m * n) + 1, sizeof *scale);
  for (int64_t i = 0; i < m * n; i++) scale[i] = 2.0 * xmax;
  int rc;
  if (tile) {
    tessera_matrix_t *A = mat_in(ctx, dt, na, na, a, lda), *B = mat_in(ctx, dt, m, n, b, ldb);
    rc = tessera_tile_trsm(side, uplo, ta, diag, &sa, A, B);
    mat_out(B, b, ldb);
    assert_int_equal(tessera_matrix_destroy(A), 0);
  } else {
    rc = tessera_trsm(ctx, side, uplo, ta, diag, dt, m, n, &sa, a, lda, b, ldb);
  }
  if (rc != 0) fail_msg("%s: returned %d (%s)", what, rc, tessera_last_error(ctx));
  compare(dt, 0, m, n, b, ldb, ref, scale, na, what);
  if (lc_diff_outside(dt, 0, m, n, b, b0, ldb)) fail_msg("%s: padding of B changed", what);
  if (memcmp(a, a0, (size_t)(lda * na) * lc_esize(dt))) fail_msg("%s: A changed", what);
  void *bufs[] = {a, a0, b, b0, Az, ref, scale};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
}

/* In quick mode tiles of 100 leave out the largest shape (3 x 3 tiles), most of a sanitizer run:
 * the smaller tiles cover the same loops, the other shapes the kernel's halving. */
static void test_trsm(void **state) {
  int nb = *(int *)*state;
  tessera_context_t *ctx = lc_context(nb);
  int64_t mn[6][2] = {
      {0, 5}, {5, 0}, {1, 1}, {nb - 1, 2 * nb + 3}, {2 * nb + 5, nb + 1}, {3 * nb + 2, 3 * nb + 5}};
  const int shapes = tt_quick() && nb == g_tiles[2] ? 5 : 6;
  static const tessera_side_t sides[2] = {TESSERA_LEFT, TESSERA_RIGHT};
  static const tessera_diag_t diags[2] = {TESSERA_NONUNIT, TESSERA_UNIT};
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++) {
    for (int si = 0; si < 2; si++)
      for (int u = 0; u < 2; u++)
        for (int t = 0; t < 3; t++)
          for (int g = 0; g < 2; g++)
            for (int s = 0; s < shapes; s++)
              check_trsm(ctx, lc_dtypes[d], sides[si], lc_uplos[u], ops[t], diags[g], mn[s][0],
                         mn[s][1], 0);
    check_trsm(ctx, lc_dtypes[d], sides[d % 2], lc_uplos[d / 2], ops[d % 3], diags[d % 2],
               mn[shapes - 1][0], mn[shapes - 1][1], 1);
  }
  lc_finalize(ctx);
}

/* ---------------------------------------------------------------- syrk / herk */

static void check_rk(tessera_context_t *ctx, tessera_dtype_t dt, int herk, tessera_uplo_t uplo,
                     tessera_op_t trans, int64_t n, int64_t k, int tile) {
  char what[160];
  snprintf(what, sizeof what, "%s%s %s %c%c n %lld k %lld tile %d", tile ? "tile_" : "",
           herk ? "herk" : "syrk", lc_name(dt), (char)uplo, (char)trans, (long long)n, (long long)k,
           tessera_default_tile(ctx));
  tt_rng_t r = tt_rng((uint64_t)(n * 1000 + k + herk * 3 + uplo * 5 + trans * 7 + dt));
  int64_t ra = trans == TESSERA_NOTRANS ? n : k, ca = trans == TESSERA_NOTRANS ? k : n;
  int64_t lda = imax(ra, 1) + 2, ldc = n + 1;
  void *a = operand(dt, ra, ca, lda, &r), *c = lc_alloc(dt, (size_t)(ldc * n));
  lc_fill_nan(dt, c, (size_t)(ldc * n));
  zc_t *Cz = lc_zalloc((size_t)(n * n));
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++)
      if (lc_in_tri(uplo, i, j)) {
        zc_t v = lc_rand(dt, &r);
        lc_set(dt, c, (size_t)(i + j * ldc), (herk && i == j) ? creal(v) : v);
        Cz[i + j * n] = lc_get(dt, c, (size_t)(i + j * ldc));
      }
  void *a0 = lc_dup(dt, a, (size_t)(lda * ca)), *c0 = lc_dup(dt, c, (size_t)(ldc * n));
  zc_t alpha = herk ? 0.7 : as_dtype(dt, ALPHA), beta = herk ? -0.4 : as_dtype(dt, BETA), sa, sb;
  lc_set(dt, &sa, 0, alpha);
  lc_set(dt, &sb, 0, beta);
  zc_t *Az = lc_promote(dt, ra, ca, a, lda), *opA = op_explicit(Az, ra, trans, n, k);
  double *scale = abs_scale(opA, opA, 1, Cz, n, n, k, cabs(alpha), cabs(beta));
  if (n > 0)
    cblas_zgemm(CblasColMajor, CblasNoTrans, herk ? CblasConjTrans : CblasTrans, (int)n, (int)n,
                (int)k, &alpha, opA, (int)n, opA, (int)n, &beta, Cz, (int)n);
  int rc;
  if (tile) {
    tessera_matrix_t *A = mat_in(ctx, dt, ra, ca, a, lda), *C = mat_in(ctx, dt, n, n, c, ldc);
    rc = herk ? tessera_tile_herk(uplo, trans, creal(alpha), A, creal(beta), C)
              : tessera_tile_syrk(uplo, trans, &sa, A, &sb, C);
    mat_out(C, c, ldc);
    assert_int_equal(tessera_matrix_destroy(A), 0);
  } else {
    rc = herk ? tessera_herk(ctx, uplo, trans, dt, n, k, creal(alpha), a, lda, creal(beta), c, ldc)
              : tessera_syrk(ctx, uplo, trans, dt, n, k, &sa, a, lda, &sb, c, ldc);
  }
  if (rc != 0) fail_msg("%s: returned %d (%s)", what, rc, tessera_last_error(ctx));
  compare(dt, uplo, n, n, c, ldc, Cz, scale, k, what);
  size_t bad = lc_diff_outside(dt, uplo, n, n, c, c0, ldc);
  if (bad) fail_msg("%s: %zu elements outside the %c triangle changed", what, bad, (char)uplo);
  if (memcmp(a, a0, (size_t)(lda * ca) * lc_esize(dt))) fail_msg("%s: A changed", what);
  void *bufs[] = {a, a0, c, c0, Cz, Az, opA, scale};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
}

static void test_syrk_herk(void **state) {
  int nb = *(int *)*state;
  tessera_context_t *ctx = lc_context(nb);
  int64_t nk[6][2] = {
      {0, 5}, {5, 0}, {1, 1}, {nb + 1, 2 * nb - 1}, {2 * nb + 3, nb + 2}, {3 * nb + 5, 3 * nb + 2}};
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++) {
    for (int herk = 0; herk < 2; herk++)
      for (int u = 0; u < 2; u++)
        for (int t = 0; t < 2; t++)
          for (int s = 0; s < 6; s++)
            check_rk(ctx, lc_dtypes[d], herk, lc_uplos[u],
                     t ? (herk ? TESSERA_CONJTRANS : TESSERA_TRANS) : TESSERA_NOTRANS, nk[s][0],
                     nk[s][1], 0);
    check_rk(ctx, lc_dtypes[d], 0, lc_uplos[d % 2], d < 2 ? TESSERA_NOTRANS : TESSERA_TRANS,
             nk[5][0], nk[5][1], 1);
    check_rk(ctx, lc_dtypes[d], 1, lc_uplos[(d + 1) % 2],
             d < 2 ? TESSERA_CONJTRANS : TESSERA_NOTRANS, nk[4][0], nk[4][1], 1);
  }
  lc_finalize(ctx);
}

/* ---------------------------------------------------------------- invalid arguments */

static void test_blas3_args(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(4);
  double a[64] = {0}, b[64] = {0}, c[64] = {0}, one = 1.0;
  for (int i = 0; i < 64; i += 9) a[i] = 2.0;
  const tessera_op_t N = TESSERA_NOTRANS, T = TESSERA_TRANS;
  const tessera_dtype_t D = TESSERA_F64, BAD = (tessera_dtype_t)9;
  /* gemm(ctx1, transa2, transb3, dtype4, m5, n6, k7, alpha8, a9, lda10, b11, ldb12, beta13, c14,
   * ldc15) */
  assert_int_equal(
      tessera_gemm(ctx, (tessera_op_t)'X', N, D, 4, 4, 4, &one, a, 4, b, 4, &one, c, 4), -2);
  lc_assert_error(ctx);
  assert_int_equal(
      tessera_gemm(ctx, N, (tessera_op_t)'X', D, 4, 4, 4, &one, a, 4, b, 4, &one, c, 4), -3);
  assert_int_equal(tessera_gemm(ctx, N, N, BAD, 4, 4, 4, &one, a, 4, b, 4, &one, c, 4), -4);
  assert_int_equal(tessera_gemm(ctx, N, N, D, -1, 4, 4, &one, a, 4, b, 4, &one, c, 4), -5);
  assert_int_equal(tessera_gemm(ctx, N, N, D, 4, -1, 4, &one, a, 4, b, 4, &one, c, 4), -6);
  assert_int_equal(tessera_gemm(ctx, N, N, D, 4, 4, -1, &one, a, 4, b, 4, &one, c, 4), -7);
  assert_int_equal(tessera_gemm(ctx, N, N, D, 4, 4, 4, &one, a, 3, b, 4, &one, c, 4), -10);
  assert_int_equal(tessera_gemm(ctx, T, N, D, 6, 4, 4, &one, a, 3, b, 4, &one, c, 6), -10);
  assert_int_equal(tessera_gemm(ctx, N, T, D, 4, 6, 4, &one, a, 4, b, 5, &one, c, 4), -12);
  assert_int_equal(tessera_gemm(ctx, N, N, D, 4, 4, 4, &one, a, 4, b, 4, &one, c, 3), -15);
  lc_assert_error(ctx);
  assert_int_equal(tessera_gemm(NULL, N, N, D, 4, 4, 4, &one, a, 4, b, 4, &one, c, 4), -1);
  /* trsm(ctx1, side2, uplo3, transa4, diag5, dtype6, m7, n8, alpha9, a10, lda11, b12, ldb13) */
  const tessera_side_t L = TESSERA_LEFT, R = TESSERA_RIGHT;
  const tessera_uplo_t LO = TESSERA_LOWER, UP = TESSERA_UPPER;
  const tessera_diag_t NU = TESSERA_NONUNIT;
  assert_int_equal(tessera_trsm(ctx, (tessera_side_t)'X', LO, N, NU, D, 4, 4, &one, a, 4, b, 4),
                   -2);
  lc_assert_error(ctx);
  assert_int_equal(tessera_trsm(ctx, L, (tessera_uplo_t)'X', N, NU, D, 4, 4, &one, a, 4, b, 4), -3);
  assert_int_equal(tessera_trsm(ctx, L, LO, (tessera_op_t)'X', NU, D, 4, 4, &one, a, 4, b, 4), -4);
  assert_int_equal(tessera_trsm(ctx, L, LO, N, (tessera_diag_t)'X', D, 4, 4, &one, a, 4, b, 4), -5);
  assert_int_equal(tessera_trsm(ctx, L, LO, N, NU, BAD, 4, 4, &one, a, 4, b, 4), -6);
  assert_int_equal(tessera_trsm(ctx, L, LO, N, NU, D, -1, 4, &one, a, 4, b, 4), -7);
  assert_int_equal(tessera_trsm(ctx, L, LO, N, NU, D, 4, -1, &one, a, 4, b, 4), -8);
  assert_int_equal(tessera_trsm(ctx, R, UP, N, NU, D, 4, 6, &one, a, 5, b, 4), -11);
  assert_int_equal(tessera_trsm(ctx, L, UP, N, NU, D, 4, 6, &one, a, 4, b, 3), -13);
  /* syrk(ctx1, uplo2, trans3, dtype4, n5, k6, alpha7, a8, lda9, beta10, c11, ldc12) */
  assert_int_equal(tessera_syrk(ctx, (tessera_uplo_t)'X', N, D, 4, 4, &one, a, 4, &one, c, 4), -2);
  lc_assert_error(ctx);
  assert_int_equal(tessera_syrk(ctx, LO, (tessera_op_t)'X', D, 4, 4, &one, a, 4, &one, c, 4), -3);
  assert_int_equal(tessera_syrk(ctx, LO, N, BAD, 4, 4, &one, a, 4, &one, c, 4), -4);
  assert_int_equal(tessera_syrk(ctx, LO, N, D, -1, 4, &one, a, 4, &one, c, 4), -5);
  assert_int_equal(tessera_syrk(ctx, LO, N, D, 4, -1, &one, a, 4, &one, c, 4), -6);
  assert_int_equal(tessera_syrk(ctx, LO, N, D, 4, 4, &one, a, 3, &one, c, 4), -9);
  assert_int_equal(tessera_syrk(ctx, LO, T, D, 6, 5, &one, a, 4, &one, c, 6), -9);
  assert_int_equal(tessera_syrk(ctx, UP, N, D, 4, 4, &one, a, 4, &one, c, 3), -12);
  /* herk(ctx1, uplo2, trans3, dtype4, n5, k6, alpha7, a8, lda9, beta10, c11, ldc12) */
  assert_int_equal(tessera_herk(ctx, (tessera_uplo_t)'X', N, D, 4, 4, 1.0, a, 4, 1.0, c, 4), -2);
  assert_int_equal(tessera_herk(ctx, LO, (tessera_op_t)'X', D, 4, 4, 1.0, a, 4, 1.0, c, 4), -3);
  assert_int_equal(tessera_herk(ctx, LO, N, BAD, 4, 4, 1.0, a, 4, 1.0, c, 4), -4);
  assert_int_equal(tessera_herk(ctx, LO, N, D, 4, 4, 1.0, a, 3, 1.0, c, 4), -9);
  assert_int_equal(tessera_herk(ctx, LO, N, D, 4, 4, 1.0, a, 4, 1.0, c, 3), -12);
  for (int i = 0; i < 64; i++) assert_true(b[i] == 0 && c[i] == 0);
  /* tile level: inconsistent shapes */
  tessera_matrix_t *A = NULL, *B = NULL, *C = NULL;
  assert_int_equal(tessera_matrix_create(ctx, D, 5, 3, 4, 4, &A), 0);
  assert_int_equal(tessera_matrix_create(ctx, D, 4, 2, 4, 4, &B), 0);
  assert_int_equal(tessera_matrix_create(ctx, D, 5, 2, 4, 4, &C), 0);
  assert_true(tessera_tile_gemm(N, N, &one, A, B, &one, C) < 0); /* k: 3 vs 4 */
  assert_true(tessera_tile_trsm(L, LO, N, NU, &one, A, C) < 0);  /* A not square */
  assert_true(tessera_tile_syrk(LO, N, &one, A, &one, C) < 0);   /* C not square */
  assert_true(tessera_tile_herk(LO, N, 1.0, A, 1.0, C) < 0);
  assert_true(tessera_tile_gemm(N, N, &one, A, NULL, &one, C) < 0);
  assert_int_equal(tessera_matrix_destroy(A), 0);
  assert_int_equal(tessera_matrix_destroy(B), 0);
  assert_int_equal(tessera_matrix_destroy(C), 0);
  lc_finalize(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_prestate(test_gemm, &g_tiles[0]),
      cmocka_unit_test_prestate(test_gemm, &g_tiles[1]),
      cmocka_unit_test_prestate(test_trsm, &g_tiles[0]),
      cmocka_unit_test_prestate(test_trsm, &g_tiles[1]),
      cmocka_unit_test_prestate(test_trsm, &g_tiles[2]),
      cmocka_unit_test_prestate(test_syrk_herk, &g_tiles[0]),
      cmocka_unit_test_prestate(test_syrk_herk, &g_tiles[1]),
      cmocka_unit_test(test_blas3_args),
  };
  tt_watchdog(600);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
