/* Conjugate-transpose views of descriptors (tsr_matrix_ct): geometry and tile addressing, and
 * the inserters' rewriting of a task on a view into the task on the stored tiles, checked
 * against the same operation written out with CBLAS on the conjugate transposes. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "linalg_common.h"

#include "linalg/loops/tasks.h"

static const tessera_dtype_t Z = TESSERA_C128;

/* A one-tile matrix of m x n random elements (m + n on the diagonal: well conditioned). */
static tessera_matrix_t *one_tile(tessera_context_t *ctx, int m, int n, zc_t *a, tt_rng_t *r) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) a[i + j * m] = lc_rand(Z, r) + (i == j ? m + n : 0);
  tessera_matrix_t *A = NULL;
  assert_int_equal(tessera_matrix_create(ctx, Z, m, n, m, n, &A), 0);
  assert_int_equal(tessera_matrix_import(A, a, m), 0);
  return A;
}

static void assert_close(const zc_t *got, const zc_t *want, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (cabs(got[i] - want[i]) > 1e-10 * (1 + cabs(want[i])))
      fail_msg("element %zu: %g%+gi, want %g%+gi", i, creal(got[i]), cimag(got[i]), creal(want[i]),
               cimag(want[i]));
}

static void geometry(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(8);
  tessera_matrix_t *A = NULL;
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, 10, 23, 4, 5, &A), 0);
  const tessera_matrix_t V = tsr_matrix_ct(A), W = tsr_matrix_ct(&V);
  assert_true(V.m == 23 && V.n == 10 && V.mb == 5 && V.nb == 4 && V.mt == 5 && V.nt == 3);
  assert_true(W.m == 10 && W.n == 23 && W.mt == 3 && W.nt == 5 && W.op != 'C');
  for (int64_t i = 0; i < V.mt; i++)
    for (int64_t j = 0; j < V.nt; j++) {
      assert_ptr_equal(tsr_tile(&V, i, j), tessera_matrix_tile(A, j, i));
      assert_ptr_equal(tsr_tile(&W, j, i), tessera_matrix_tile(A, j, i));
      assert_int_equal(tsr_tile_op(&V, i, j).op, 'C');
      assert_int_equal(tsr_tile_op(&W, j, i).op, 'N');
    }
  assert_int_equal(tsr_tile_m(&V, 4), 3); /* 23 = 4 * 5 + 3 */
  assert_int_equal(tsr_tile_n(&V, 2), 2); /* 10 = 2 * 4 + 2 */
  /* tile (i, l) of Vᴴ is A's tile (i, l) itself */
  assert_int_equal(tsr_op_tile(&V, 'C', 1, 2).op, 'N');
  assert_ptr_equal(tsr_op_tile(&V, 'C', 1, 2).h, tessera_matrix_tile(A, 1, 2));
  assert_int_equal(tsr_op_compose(Z, 'T', 'C'), 0);
  assert_int_equal(tsr_op_compose(TESSERA_F64, 'T', 'C'), 'N');
  assert_int_equal(tessera_matrix_destroy(A), 0);
  tessera_matrix_t *T = NULL;
  assert_int_equal(tessera_matrix_create_triangle(ctx, Z, TESSERA_UPPER, 12, 4, &T), 0);
  const tessera_matrix_t TV = tsr_matrix_ct(T);
  assert_int_equal(TV.stored, 'L');
  assert_null(tsr_tile(&TV, 0, 2));
  assert_non_null(tsr_tile(&TV, 2, 0));
  assert_int_equal(tessera_matrix_destroy(T), 0);
  lc_finalize(ctx);
}

/* gemm into a view: Cᴴ = alpha A B + beta Cᴴ, so C = conj(alpha) Bᴴ Aᴴ + conj(beta) C. */
static void gemm_into_view(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(8);
  tt_rng_t r = tt_rng(11);
  const int m = 7, n = 5, k = 6;
  zc_t a[7 * 6], b[6 * 5], c[5 * 7], got[5 * 7], want[5 * 7];
  tessera_matrix_t *A = one_tile(ctx, m, k, a, &r), *B = one_tile(ctx, k, n, b, &r);
  tessera_matrix_t *C = one_tile(ctx, n, m, c, &r);
  const tessera_matrix_t V = tsr_matrix_ct(C);
  const tsr_scalar_t alpha = {0.5, -1.25}, beta = {2, 0.75};
  int tag[3] = {0, 0, 0};
  assert_int_equal(tsr_task_gemm(&V, tsr_tile_op(A, 0, 0), tsr_tile_op(B, 0, 0), m, n, k, alpha,
                                 beta, tsr_tile_op(&V, 0, 0), tag, 0),
                   0);
  assert_int_equal(tessera_matrix_export(C, got, n), 0);
  zc_t al = conj(CMPLX(alpha.re, alpha.im)), be = conj(CMPLX(beta.re, beta.im));
  memcpy(want, c, sizeof want);
  cblas_zgemm(CblasColMajor, CblasConjTrans, CblasConjTrans, n, m, k, &al, b, k, a, m, &be, want,
              n);
  assert_close(got, want, (size_t)(n * m));
  tessera_matrix_destroy(A), tessera_matrix_destroy(B), tessera_matrix_destroy(C);
  lc_finalize(ctx);
}

/* trsm and trmm on views: op(T) X = alpha Bv with Bv = Cᴴ, T lower (a tile of L, or of the view
 * of an upper triangle U: T = Uᴴ), against CBLAS on C from the right: C = conj(alpha) C op(T)⁻ᴴ. */
static void triangular_on_view(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(8);
  const int m = 6, n = 4;
  for (int solve = 0; solve < 2; solve++)
    for (int upper = 0; upper < 2; upper++)
      for (int t = 0; t < 2; t++) {
        tt_rng_t r = tt_rng(100 + (uint64_t)(solve * 4 + upper * 2 + t));
        const char trans = t ? 'C' : 'N';
        zc_t tri[6 * 6], c[4 * 6], got[4 * 6], want[4 * 6], lower[6 * 6];
        tessera_matrix_t *T = one_tile(ctx, m, m, tri, &r), *C = one_tile(ctx, n, m, c, &r);
        const tessera_matrix_t TV = tsr_matrix_ct(T), V = tsr_matrix_ct(C);
        /* the lower triangle T presents: tri itself, or triᴴ */
        for (int j = 0; j < m; j++)
          for (int i = 0; i < m; i++)
            lower[i + j * m] = upper ? conj(tri[j + i * m]) : tri[i + j * m];
        const tsr_scalar_t alpha = {1.5, 0.5};
        int tag[3] = {0, 0, 0};
        tsr_operand_t a = upper ? tsr_tile_op(&TV, 0, 0) : tsr_tile_op(T, 0, 0);
        int rc = (solve ? tsr_task_trsm : tsr_task_trmm)(&V, 'L', 'L', trans, 'N', alpha, a,
                                                         tsr_tile_op(&V, 0, 0), m, n, tag, 0);
        assert_int_equal(rc, 0);
        assert_int_equal(tessera_matrix_export(C, got, n), 0);
        zc_t al = conj(CMPLX(alpha.re, alpha.im));
        memcpy(want, c, sizeof want);
        (solve ? cblas_ztrsm : cblas_ztrmm)(CblasColMajor, CblasRight, CblasLower,
                                            t ? CblasNoTrans : CblasConjTrans, CblasNonUnit, n, m,
                                            &al, lower, m, want, n);
        assert_close(got, want, (size_t)(n * m));
        tessera_matrix_destroy(T), tessera_matrix_destroy(C);
      }
  lc_finalize(ctx);
}

/* herk into a view: the lower triangle of Cᴴ is the upper one of C: Cᴴ = -A Aᴴ + Cᴴ. */
static void herk_into_view(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(8);
  tt_rng_t r = tt_rng(5);
  const int n = 5, k = 3;
  zc_t a[5 * 3], c[5 * 5], got[5 * 5], want[5 * 5];
  tessera_matrix_t *A = one_tile(ctx, n, k, a, &r), *C = one_tile(ctx, n, n, c, &r);
  const tessera_matrix_t V = tsr_matrix_ct(C);
  int tag[3] = {0, 0, 0};
  assert_int_equal(tsr_task_syrk(&V, 1, 'L', 'N', n, k, (tsr_scalar_t){-1, 0}, tsr_tile_op(A, 0, 0),
                                 (tsr_scalar_t){1, 0}, tsr_tile_op(&V, 0, 0), tag, 0),
                   0);
  assert_int_equal(tessera_matrix_export(C, got, n), 0);
  memcpy(want, c, sizeof want);
  cblas_zherk(CblasColMajor, CblasUpper, CblasNoTrans, n, k, -1.0, a, n, 1.0, want, n);
  assert_close(got, want, sizeof want / sizeof *want);
  tessera_matrix_destroy(A), tessera_matrix_destroy(C);
  lc_finalize(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(geometry),
      cmocka_unit_test(gemm_into_view),
      cmocka_unit_test(triangular_on_view),
      cmocka_unit_test(herk_into_view),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
