/* Triangle-only descriptors (tessera_matrix_create_triangle): tile potrf, potrs, posv, logdet
 * and potri on them against the same calls on full descriptors of the same matrix, every dtype
 * and triangle, sizes around tile boundaries (0 and 1 included); trsm (as A) and syrk / herk (as
 * C) on them against full ones; import and export of the stored tiles only, the rest of the
 * array untouched; which tiles exist; refusal, with a negative status and a message and no
 * task run, of every routine that would touch an absent tile; argument errors.
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

static int g_tiles[2] = {5, 16};

/* Whether tile (i, j) of a triangle-only matrix of `uplo` exists. */
static int tile_in(tessera_uplo_t uplo, int64_t i, int64_t j) {
  return uplo == TESSERA_LOWER ? i >= j : i <= j;
}

/* max |x - y| over the rows x cols block (its uplo triangle when uplo != 0), divided by
 * max(1, max |y|) there. */
static double rel_diff(tessera_dtype_t dt, int uplo, int64_t rows, int64_t cols, const void *x,
                       const void *y, int64_t ld) {
  double d = 0, s = 1;
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++) {
      if (uplo && !lc_in_tri((tessera_uplo_t)uplo, i, j)) continue;
      size_t k = (size_t)(i + j * ld);
      double e = cabs(lc_get(dt, x, k) - lc_get(dt, y, k)), m = cabs(lc_get(dt, y, k));
      if (!(e <= d)) d = e;
      if (m > s) s = m;
    }
  return d / s;
}

/* A triangle-only and a full n x n descriptor, both imported from `a`. */
static void make_pair(tessera_context_t *ctx, tessera_dtype_t dt, tessera_uplo_t uplo, int64_t n,
                      int64_t nb, const void *a, int64_t lda, tessera_matrix_t **T,
                      tessera_matrix_t **F) {
  assert_int_equal(tessera_matrix_create_triangle(ctx, dt, uplo, n, nb, T), 0);
  assert_int_equal(tessera_matrix_create(ctx, dt, n, n, nb, nb, F), 0);
  assert_int_equal(tessera_matrix_import(*T, a, lda), 0);
  assert_int_equal(tessera_matrix_import(*F, a, lda), 0);
}

/* Exports T and F into copies of `a`; the triangle of T's must match F's within tol, and T's
 * must leave the rest of the copy as it was. Returns T's export (caller frees). */
static void *export_compare(tessera_dtype_t dt, tessera_uplo_t uplo, int64_t n, const void *a,
                            int64_t lda, tessera_matrix_t *T, tessera_matrix_t *F, double tol,
                            const char *what) {
  void *xt = lc_dup(dt, a, (size_t)(lda * n)), *xf = lc_dup(dt, a, (size_t)(lda * n));
  assert_int_equal(tessera_matrix_export(T, xt, lda), 0);
  assert_int_equal(tessera_matrix_export(F, xf, lda), 0);
  double d = rel_diff(dt, uplo, n, n, xt, xf, lda);
  if (!(d <= tol))
    fail_msg("%s %s uplo %c n %lld: triangle-only differs from full by %g (tolerance %g)", what,
             lc_name(dt), (char)uplo, (long long)n, d, tol);
  size_t bad = lc_diff_outside(dt, uplo, n, n, xt, a, lda);
  if (bad)
    fail_msg("%s %s uplo %c n %lld: %zu elements outside the triangle changed", what, lc_name(dt),
             (char)uplo, (long long)n, bad);
  free(xf);
  return xt;
}

/* potrf, logdet, potrs, potri and posv on a triangle-only descriptor and on a full one. */
static void check_routines(tessera_context_t *ctx, tessera_dtype_t dt, tessera_uplo_t uplo,
                           int64_t n, uint64_t seed, void *tile) {
  const int64_t nb = *(const int *)tile;
  const int64_t lda = n + 2, nrhs = 3, ldb = n + 1;
  const double tol = 100.0 * (double)(n + 1) * lc_eps(dt);
  tt_rng_t r = tt_rng(seed);
  void *a = lc_alloc(dt, (size_t)(lda * n)), *b = lc_alloc(dt, (size_t)(ldb * nrhs));
  zc_t *full = lc_gen_hpd(dt, uplo, n, a, lda, &r);
  lc_fill_random(dt, b, n, nrhs, ldb, &r);
  zc_t *bz = lc_promote(dt, n, nrhs, b, ldb);
  tessera_matrix_t *T, *F, *BT, *BF;
  make_pair(ctx, dt, uplo, n, nb, a, lda, &T, &F);
  const int64_t nt = (n + nb - 1) / nb;
  for (int64_t j = 0; j < nt; j++)
    for (int64_t i = 0; i < nt; i++)
      if ((tessera_matrix_tile(T, i, j) != NULL) != tile_in(uplo, i, j))
        fail_msg("tile (%lld, %lld) of a %c triangle: wrong presence", (long long)i, (long long)j,
                 (char)uplo);
  /* potrf */
  assert_int_equal(tessera_tile_potrf(uplo, T), 0);
  assert_int_equal(tessera_tile_potrf(uplo, F), 0);
  void *f = export_compare(dt, uplo, n, a, lda, T, F, tol, "potrf");
  double res = lc_potrf_resid(dt, uplo, n, full, f, lda);
  if (!(res < 10))
    fail_msg("potrf %s uplo %c n %lld nb %lld: residual %g", lc_name(dt), (char)uplo, (long long)n,
             (long long)nb, res);
  /* logdet */
  double lt = NAN, lf = NAN;
  assert_int_equal(tessera_tile_logdet(uplo, T, &lt), 0);
  assert_int_equal(tessera_tile_logdet(uplo, F, &lf), 0);
  if (!(fabs(lt - lf) <= tol * (1 + fabs(lf))))
    fail_msg("logdet %s uplo %c n %lld: %.17g (triangle) vs %.17g (full)", lc_name(dt), (char)uplo,
             (long long)n, lt, lf);
  /* potrs: right-hand sides in full descriptors */
  void *xt = lc_dup(dt, b, (size_t)(ldb * nrhs)), *xf = lc_dup(dt, b, (size_t)(ldb * nrhs));
  assert_int_equal(tessera_matrix_create(ctx, dt, n, nrhs, nb, nb, &BT), 0);
  assert_int_equal(tessera_matrix_create(ctx, dt, n, nrhs, nb, nb, &BF), 0);
  assert_int_equal(tessera_matrix_import(BT, b, ldb), 0);
  assert_int_equal(tessera_matrix_import(BF, b, ldb), 0);
  assert_int_equal(tessera_tile_potrs(uplo, T, BT), 0);
  assert_int_equal(tessera_tile_potrs(uplo, F, BF), 0);
  assert_int_equal(tessera_matrix_export(BT, xt, ldb), 0);
  assert_int_equal(tessera_matrix_export(BF, xf, ldb), 0);
  res = lc_solve_resid(dt, n, nrhs, full, xt, ldb, bz);
  if (!(res < 10) || !(rel_diff(dt, 0, n, nrhs, xt, xf, ldb) <= tol))
    fail_msg("potrs %s uplo %c n %lld: residual %g, differs from full by %g", lc_name(dt),
             (char)uplo, (long long)n, res, rel_diff(dt, 0, n, nrhs, xt, xf, ldb));
  /* potri from the factors */
  assert_int_equal(tessera_tile_potri(uplo, T), 0);
  assert_int_equal(tessera_tile_potri(uplo, F), 0);
  free(export_compare(dt, uplo, n, a, lda, T, F, tol, "potri"));
  /* posv on a fresh triangle */
  assert_int_equal(tessera_matrix_destroy(T), 0);
  assert_int_equal(tessera_matrix_create_triangle(ctx, dt, uplo, n, nb, &T), 0);
  assert_int_equal(tessera_matrix_import(T, a, lda), 0);
  assert_int_equal(tessera_matrix_import(BT, b, ldb), 0);
  assert_int_equal(tessera_tile_posv(uplo, T, BT), 0);
  assert_int_equal(tessera_matrix_export(BT, xt, ldb), 0);
  res = lc_solve_resid(dt, n, nrhs, full, xt, ldb, bz);
  if (!(res < 10))
    fail_msg("posv %s uplo %c n %lld: residual %g", lc_name(dt), (char)uplo, (long long)n, res);
  tessera_matrix_t *M[4] = {T, F, BT, BF};
  for (int i = 0; i < 4; i++) assert_int_equal(tessera_matrix_destroy(M[i]), 0);
  free(a);
  free(b);
  free(bz);
  free(f);
  free(xt);
  free(xf);
  free(full);
}

static void test_triangle_routines(void **state) {
  int nb = *(int *)*state;
  tessera_context_t *ctx = lc_context(nb);
  lc_sweep(ctx, nb, check_routines, &nb);
  lc_finalize(ctx);
}

/* Import copies the stored tiles, export writes them and nothing else. */
static void test_triangle_import_export(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(8);
  const int64_t nb = 8, n = 2 * nb + 3, lda = n + 2, nt = 3;
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int u = 0; u < 2; u++) {
      tessera_dtype_t dt = lc_dtypes[d];
      tessera_uplo_t uplo = lc_uplos[u];
      tt_rng_t r = tt_rng((uint64_t)(d * 2 + u + 7));
      void *a = lc_alloc(dt, (size_t)(lda * n)), *out = lc_alloc(dt, (size_t)(lda * n));
      lc_fill_random(dt, a, lda, n, lda, &r);
      for (size_t k = 0; k < (size_t)(lda * n); k++) lc_set(dt, out, k, CMPLX(7.0, -7.0));
      void *out0 = lc_dup(dt, out, (size_t)(lda * n));
      tessera_matrix_t *T = NULL;
      assert_int_equal(tessera_matrix_create_triangle(ctx, dt, uplo, n, nb, &T), 0);
      assert_int_equal(tessera_matrix_rows(T), n);
      assert_int_equal(tessera_matrix_cols(T), n);
      assert_int_equal(tessera_matrix_tile_rows(T), nb);
      assert_int_equal(tessera_matrix_dtype(T), dt);
      assert_null(tessera_matrix_tile(T, nt, 0));
      assert_null(tessera_matrix_tile(T, 0, -1));
      assert_int_equal(tessera_matrix_import(T, a, lda), 0);
      assert_int_equal(tessera_matrix_export(T, out, lda), 0);
      size_t es = lc_esize(dt), bad = 0;
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < lda; i++) {
          size_t off = (size_t)(i + j * lda) * es;
          int stored = i < n && tile_in(uplo, i / nb, j / nb);
          const void *want = (const char *)(stored ? a : out0) + off;
          if (memcmp((const char *)out + off, want, es) != 0) bad++;
        }
      if (bad)
        fail_msg("%s uplo %c: %zu elements exported wrong (stored tiles copied, the rest kept)",
                 lc_name(dt), (char)uplo, bad);
      assert_int_equal(tessera_matrix_destroy(T), 0);
      free(a);
      free(out);
      free(out0);
    }
  /* order 0: nothing stored, every routine a no-op */
  tessera_matrix_t *T = NULL;
  double ld = NAN;
  assert_int_equal(tessera_matrix_create_triangle(ctx, TESSERA_F64, TESSERA_UPPER, 0, 4, &T), 0);
  assert_null(tessera_matrix_tile(T, 0, 0));
  assert_int_equal(tessera_matrix_import(T, NULL, 1), 0);
  assert_int_equal(tessera_tile_potrf(TESSERA_UPPER, T), 0);
  assert_int_equal(tessera_tile_logdet(TESSERA_UPPER, T, &ld), 0);
  assert_true(ld == 0);
  assert_int_equal(tessera_matrix_destroy(T), 0);
  lc_finalize(ctx);
}

/* trsm with a triangle-only A and syrk / herk with a triangle-only C, against full ones. */
static void test_triangle_blas3(void **state) {
  (void)state;
  const int64_t nb = 4, n = 11, k = 6;
  tessera_context_t *ctx = lc_context((int)nb);
  const tessera_dtype_t dts[2] = {TESSERA_F64, TESSERA_C64};
  for (int d = 0; d < 2; d++)
    for (int u = 0; u < 2; u++) {
      tessera_dtype_t dt = dts[d];
      tessera_uplo_t uplo = lc_uplos[u];
      const double tol = 100.0 * (double)n * lc_eps(dt);
      tt_rng_t r = tt_rng((uint64_t)(d * 2 + u + 31));
      zc_t one = 1.0, zero = 0.0;
      void *a = lc_alloc(dt, (size_t)(n * n)), *g = lc_alloc(dt, (size_t)(n * k));
      free(lc_gen_hpd(dt, uplo, n, a, n, &r));
      lc_fill_random(dt, g, n, k, n, &r);
      tessera_matrix_t *T, *F, *G;
      make_pair(ctx, dt, uplo, n, nb, a, n, &T, &F);
      assert_int_equal(tessera_matrix_create(ctx, dt, n, k, nb, nb, &G), 0);
      for (int side = 0; side < 2; side++)
        for (int t = 0; t < 2; t++) {
          tessera_side_t sd = side ? TESSERA_RIGHT : TESSERA_LEFT;
          tessera_op_t op = t ? TESSERA_CONJTRANS : TESSERA_NOTRANS;
          int64_t bm = side ? k : n, bn = side ? n : k;
          void *b = lc_alloc(dt, (size_t)(bm * bn)), *xt = lc_alloc(dt, (size_t)(bm * bn));
          void *xf = lc_alloc(dt, (size_t)(bm * bn));
          lc_fill_random(dt, b, bm, bn, bm, &r);
          tessera_matrix_t *B[2];
          for (int v = 0; v < 2; v++) {
            assert_int_equal(tessera_matrix_create(ctx, dt, bm, bn, nb, nb, &B[v]), 0);
            assert_int_equal(tessera_matrix_import(B[v], b, bm), 0);
            assert_int_equal(
                tessera_tile_trsm(sd, uplo, op, TESSERA_NONUNIT, &one, v ? F : T, B[v]), 0);
            assert_int_equal(tessera_matrix_export(B[v], v ? xf : xt, bm), 0);
            assert_int_equal(tessera_matrix_destroy(B[v]), 0);
          }
          double diff = rel_diff(dt, 0, bm, bn, xt, xf, bm);
          if (!(diff <= tol))
            fail_msg("trsm %s side %d uplo %c op %c: triangle-only differs by %g", lc_name(dt),
                     side, (char)uplo, (char)op, diff);
          free(b);
          free(xt);
          free(xf);
        }
      assert_int_equal(tessera_matrix_destroy(T), 0);
      assert_int_equal(tessera_matrix_destroy(F), 0);
      /* C = G Gᴴ (herk) and G Gᵀ (syrk) into the triangle */
      for (int herk = 0; herk < 2; herk++) {
        make_pair(ctx, dt, uplo, n, nb, a, n, &T, &F);
        assert_int_equal(tessera_matrix_import(G, g, n), 0);
        for (int v = 0; v < 2; v++) {
          tessera_matrix_t *C = v ? F : T;
          int rc = herk ? tessera_tile_herk(uplo, TESSERA_NOTRANS, 1.0, G, 0.5, C)
                        : tessera_tile_syrk(uplo, TESSERA_NOTRANS, &one, G, &zero, C);
          assert_int_equal(rc, 0);
        }
        free(export_compare(dt, uplo, n, a, n, T, F, tol, herk ? "herk" : "syrk"));
        assert_int_equal(tessera_matrix_destroy(T), 0);
        assert_int_equal(tessera_matrix_destroy(F), 0);
      }
      assert_int_equal(tessera_matrix_destroy(G), 0);
      free(a);
      free(g);
    }
  lc_finalize(ctx);
}

/* Every call that would touch an absent tile: a negative status naming the argument, a
 * message, and the matrices untouched. */
static void test_triangle_refusals(void **state) {
  (void)state;
  const int64_t nb = 4, n = 10;
  tessera_context_t *ctx = lc_context((int)nb);
  const tessera_dtype_t dts[2] = {TESSERA_F64, TESSERA_C128};
  for (int d = 0; d < 2; d++)
    for (int u = 0; u < 2; u++) {
      tessera_dtype_t dt = dts[d];
      tessera_uplo_t uplo = lc_uplos[u], other = lc_uplos[1 - u];
      tt_rng_t r = tt_rng((uint64_t)(d * 2 + u + 51));
      zc_t one = 1.0, zero = 0.0;
      void *a = lc_alloc(dt, (size_t)(n * n));
      zc_t *full = lc_gen_hpd(dt, uplo, n, a, n, &r);
      tessera_matrix_t *T, *F, *B, *T2, *C;
      make_pair(ctx, dt, uplo, n, nb, a, n, &T, &F);
      assert_int_equal(tessera_matrix_create(ctx, dt, n, 2, nb, nb, &B), 0);
      assert_int_equal(tessera_matrix_create(ctx, dt, n, n, nb, nb, &C), 0);
      assert_int_equal(tessera_matrix_create_triangle(ctx, dt, uplo, n, nb, &T2), 0);
      double ld;
/* The call returns `want` and says why (a NULL descriptor first leaves another message). */
#define REFUSED(call, want)                                                                        \
  do {                                                                                             \
    assert_true(tessera_tile_potrf(uplo, NULL) < 0);                                               \
    int rc_ = (call);                                                                              \
    if (rc_ != (want) || !strstr(tessera_last_error(ctx), "triangle"))                             \
      fail_msg("%s %s uplo %c: returned %d (%s), expected %d", #call, lc_name(dt), (char)uplo,     \
               rc_, tessera_last_error(ctx), (want));                                              \
  } while (0)
      REFUSED(tessera_tile_potrf(other, T), -2);
      REFUSED(tessera_tile_potri(other, T), -2);
      REFUSED(tessera_tile_logdet(other, T, &ld), -2);
      REFUSED(tessera_tile_potrs(other, T, B), -2);
      REFUSED(tessera_tile_posv(other, T, B), -2);
      REFUSED(tessera_tile_potrs(uplo, F, T2), -3); /* B must be full */
      REFUSED(tessera_tile_posv(uplo, T, T2), -3);
      REFUSED(tessera_tile_trsm(TESSERA_LEFT, other, TESSERA_NOTRANS, TESSERA_NONUNIT, &one, T, B),
              -6);
      REFUSED(tessera_tile_trsm(TESSERA_LEFT, uplo, TESSERA_NOTRANS, TESSERA_NONUNIT, &one, F, T2),
              -7);
      REFUSED(tessera_tile_syrk(uplo, TESSERA_NOTRANS, &one, T, &zero, C), -4); /* A full */
      REFUSED(tessera_tile_syrk(other, TESSERA_NOTRANS, &one, F, &zero, T2), -6);
      REFUSED(tessera_tile_herk(uplo, TESSERA_NOTRANS, 1.0, T, 0.0, C), -4);
      REFUSED(tessera_tile_herk(other, TESSERA_NOTRANS, 1.0, F, 0.0, T2), -6);
      REFUSED(tessera_tile_gemm(TESSERA_NOTRANS, TESSERA_NOTRANS, &one, T, F, &zero, C), -4);
      REFUSED(tessera_tile_gemm(TESSERA_NOTRANS, TESSERA_NOTRANS, &one, F, T, &zero, C), -5);
      REFUSED(tessera_tile_gemm(TESSERA_NOTRANS, TESSERA_NOTRANS, &one, F, F, &zero, T2), -7);
#undef REFUSED
      /* nothing ran: T still holds A, and factors afterwards */
      void *out = lc_dup(dt, a, (size_t)(n * n));
      assert_int_equal(tessera_matrix_export(T, out, n), 0);
      assert_int_equal(lc_diff_outside(dt, 0, 0, n, out, a, n), 0);
      assert_int_equal(tessera_tile_potrf(uplo, T), 0);
      assert_int_equal(tessera_matrix_export(T, out, n), 0);
      double res = lc_potrf_resid(dt, uplo, n, full, out, n);
      if (!(res < 10)) fail_msg("potrf after refusals: residual %g", res);
      tessera_matrix_t *M[5] = {T, F, B, T2, C};
      for (int i = 0; i < 5; i++) assert_int_equal(tessera_matrix_destroy(M[i]), 0);
      free(a);
      free(out);
      free(full);
    }
  /* the constructor's arguments */
  tessera_matrix_t *T = NULL;
  const tessera_uplo_t L = TESSERA_LOWER;
  assert_int_equal(tessera_matrix_create_triangle(NULL, TESSERA_F64, L, 4, 2, &T), -1);
  assert_int_equal(tessera_matrix_create_triangle(ctx, (tessera_dtype_t)9, L, 4, 2, &T), -2);
  lc_assert_error(ctx);
  assert_int_equal(tessera_matrix_create_triangle(ctx, TESSERA_F64, (tessera_uplo_t)'X', 4, 2, &T),
                   -3);
  lc_assert_error(ctx);
  assert_int_equal(tessera_matrix_create_triangle(ctx, TESSERA_F64, L, -1, 2, &T), -4);
  assert_int_equal(tessera_matrix_create_triangle(ctx, TESSERA_F64, L, 4, 0, &T), -5);
  assert_int_equal(tessera_matrix_create_triangle(ctx, TESSERA_F64, L, 4, 2, NULL), -6);
  assert_null(T);
  lc_finalize(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_prestate(test_triangle_routines, &g_tiles[0]),
      cmocka_unit_test_prestate(test_triangle_routines, &g_tiles[1]),
      cmocka_unit_test(test_triangle_import_export),
      cmocka_unit_test(test_triangle_blas3),
      cmocka_unit_test(test_triangle_refusals),
  };
  tt_watchdog(600);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
