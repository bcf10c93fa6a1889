/* tessera_potrs / tessera_posv and their tile-level forms: every dtype and triangle, several
 * right-hand-side counts, sizes around tile boundaries, ldb > n; backward error, untouched
 * factor and padding, posv on a matrix that is not positive definite, invalid arguments.
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

static int g_tiles[3] = {4, 16, 33};

/* A problem: HPD matrix `a` (uplo triangle, NaN elsewhere, lda = n + 3), its full promoted
 * form, and right-hand sides b (n x nrhs, NaN padding, ldb = n + 2) with their promoted copy. */
typedef struct {
  tessera_dtype_t dt;
  tessera_uplo_t uplo;
  int64_t n, nrhs, lda, ldb;
  void *a, *b;
  zc_t *full, *bz;
} problem_t;

static problem_t problem(tessera_dtype_t dt, tessera_uplo_t uplo, int64_t n, int64_t nrhs,
                         uint64_t seed) {
  problem_t p = {dt, uplo, n, nrhs, n + 3, n + 2, NULL, NULL, NULL, NULL};
  tt_rng_t r = tt_rng(seed);
  p.a = lc_alloc(dt, (size_t)(p.lda * n));
  p.full = lc_gen_hpd(dt, uplo, n, p.a, p.lda, &r);
  p.b = lc_alloc(dt, (size_t)(p.ldb * nrhs));
  lc_fill_nan(dt, p.b, (size_t)(p.ldb * nrhs));
  lc_fill_random(dt, p.b, n, nrhs, p.ldb, &r);
  p.bz = lc_promote(dt, n, nrhs, p.b, p.ldb);
  return p;
}

static void problem_free(problem_t *p) {
  free(p->a);
  free(p->b);
  free(p->full);
  free(p->bz);
}

static const char *descr(const problem_t *p, const char *what) {
  static char buf[160];
  snprintf(buf, sizeof buf, "%s %s uplo %c n %lld nrhs %lld:", what, lc_name(p->dt), (char)p->uplo,
           (long long)p->n, (long long)p->nrhs);
  return buf;
}

/* Checks the solution in x (ldb) and that its padding is unchanged. */
static void check_solution(const problem_t *p, const void *x, const char *what) {
  double res = lc_solve_resid(p->dt, p->n, p->nrhs, p->full, x, p->ldb, p->bz);
  if (!(res < 10)) fail_msg("%s backward error %g", descr(p, what), res);
  size_t bad = lc_diff_outside(p->dt, 0, p->n, p->nrhs, x, p->b, p->ldb);
  if (bad) fail_msg("%s %zu padding elements of B changed", descr(p, what), bad);
}

static void check_potrs_posv(tessera_context_t *ctx, tessera_dtype_t dt, tessera_uplo_t uplo,
                             int64_t n, int64_t nrhs, uint64_t seed) {
  problem_t p = problem(dt, uplo, n, nrhs, seed);
  size_t asz = (size_t)(p.lda * n), bsz = (size_t)(p.ldb * nrhs);
  /* potrs with LAPACK's factor */
  void *f = lc_dup(dt, p.a, asz), *x = lc_dup(dt, p.b, bsz);
  assert_int_equal(lc_lapack_potrf(dt, uplo, n, f, p.lda), 0);
  void *f0 = lc_dup(dt, f, asz);
  int rc = tessera_potrs(ctx, uplo, dt, n, nrhs, f, p.lda, x, p.ldb);
  if (rc != 0) fail_msg("%s returned %d (%s)", descr(&p, "potrs"), rc, tessera_last_error(ctx));
  if (memcmp(f, f0, asz * lc_esize(dt)) != 0) fail_msg("%s changed A", descr(&p, "potrs"));
  check_solution(&p, x, "potrs");
  /* posv */
  void *a = lc_dup(dt, p.a, asz), *y = lc_dup(dt, p.b, bsz);
  rc = tessera_posv(ctx, uplo, dt, n, nrhs, a, p.lda, y, p.ldb);
  if (rc != 0) fail_msg("%s returned %d (%s)", descr(&p, "posv"), rc, tessera_last_error(ctx));
  check_solution(&p, y, "posv");
  double res = lc_potrf_resid(dt, uplo, n, p.full, a, p.lda);
  if (!(res < 10)) fail_msg("%s factor residual %g", descr(&p, "posv"), res);
  if (lc_diff_outside(dt, uplo, n, n, a, p.a, p.lda))
    fail_msg("%s changed A outside its triangle", descr(&p, "posv"));
  free(f);
  free(f0);
  free(x);
  free(a);
  free(y);
  problem_free(&p);
}

/* One case of the sweep with 1, 3 and nb + 2 right-hand sides. */
static void check_nrhs(tessera_context_t *ctx, tessera_dtype_t dt, tessera_uplo_t uplo, int64_t n,
                       uint64_t seed, void *tile) {
  const int nb = *(const int *)tile;
  const int64_t nrhs[3] = {1, 3, nb + 2};
  for (int k = 0; k < 3; k++) check_potrs_posv(ctx, dt, uplo, n, nrhs[k], seed * 10 + (uint64_t)k);
}

static void test_potrs_sizes(void **state) {
  int nb = *(int *)*state;
  tessera_context_t *ctx = lc_context(nb);
  lc_sweep(ctx, nb, check_nrhs, &nb);
  lc_finalize(ctx);
}

/* posv on a matrix whose leading minor of order k + 1 is not positive: info k + 1, B intact. */
static void test_posv_not_spd(void **state) {
  (void)state;
  int nb = 16;
  tessera_context_t *ctx = lc_context(nb);
  int64_t n = 3 * nb + 5, ks[3] = {0, nb, nb + 2};
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int u = 0; u < 2; u++)
      for (int c = 0; c < 3; c++) {
        problem_t p = problem(lc_dtypes[d], lc_uplos[u], n, 3, (uint64_t)(d * 10 + u * 3 + c));
        lc_set(p.dt, p.a, (size_t)(ks[c] + ks[c] * p.lda), -1.0);
        void *b0 = lc_dup(p.dt, p.b, (size_t)(p.ldb * p.nrhs));
        int rc = tessera_posv(ctx, p.uplo, p.dt, n, p.nrhs, p.a, p.lda, p.b, p.ldb);
        if (rc != ks[c] + 1)
          fail_msg("%s a[%lld][%lld] = -1: returned %d", descr(&p, "posv"), (long long)ks[c],
                   (long long)ks[c], rc);
        if (memcmp(p.b, b0, (size_t)(p.ldb * p.nrhs) * lc_esize(p.dt)) != 0)
          fail_msg("%s failed factorization but B was modified", descr(&p, "posv"));
        free(b0);
        problem_free(&p);
      }
  lc_finalize(ctx);
}

typedef int (*solve_fn)(tessera_context_t *, tessera_uplo_t, tessera_dtype_t, int64_t, int64_t,
                        void *, int64_t, void *, int64_t);

static int potrs_nc(tessera_context_t *ctx, tessera_uplo_t uplo, tessera_dtype_t dt, int64_t n,
                    int64_t nrhs, void *a, int64_t lda, void *b, int64_t ldb) {
  return tessera_potrs(ctx, uplo, dt, n, nrhs, a, lda, b, ldb);
}

static void test_solve_args(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(4);
  solve_fn fns[2] = {potrs_nc, tessera_posv};
  for (int f = 0; f < 2; f++) {
    double a[25], b[12], a0[25], b0[12];
    for (int i = 0; i < 25; i++) a[i] = (i % 6 == 0) ? 4.0 : 0.25;
    for (int i = 0; i < 12; i++) b[i] = i;
    memcpy(a0, a, sizeof a);
    memcpy(b0, b, sizeof b);
    solve_fn fn = fns[f];
    assert_int_equal(fn(ctx, (tessera_uplo_t)'X', TESSERA_F64, 5, 2, a, 5, b, 6), -2);
    lc_assert_error(ctx);
    assert_int_equal(fn(ctx, TESSERA_LOWER, (tessera_dtype_t)9, 5, 2, a, 5, b, 6), -3);
    assert_int_equal(fn(ctx, TESSERA_LOWER, TESSERA_F64, -1, 2, a, 5, b, 6), -4);
    assert_int_equal(fn(ctx, TESSERA_LOWER, TESSERA_F64, 5, -1, a, 5, b, 6), -5);
    lc_assert_error(ctx);
    assert_int_equal(fn(ctx, TESSERA_LOWER, TESSERA_F64, 5, 2, NULL, 5, b, 6), -6);
    assert_int_equal(fn(ctx, TESSERA_LOWER, TESSERA_F64, 5, 2, a, 4, b, 6), -7);
    assert_int_equal(fn(ctx, TESSERA_LOWER, TESSERA_F64, 5, 2, a, 5, NULL, 6), -8);
    assert_int_equal(fn(ctx, TESSERA_UPPER, TESSERA_F64, 5, 2, a, 5, b, 4), -9);
    lc_assert_error(ctx);
    assert_int_equal(fn(NULL, TESSERA_UPPER, TESSERA_F64, 5, 2, a, 5, b, 6), -1);
    assert_memory_equal(a, a0, sizeof a);
    assert_memory_equal(b, b0, sizeof b);
    /* no right-hand side: B untouched */
    assert_int_equal(fn(ctx, TESSERA_LOWER, TESSERA_F64, 5, 0, a, 5, b, 6), 0);
    assert_memory_equal(b, b0, sizeof b);
  }
  lc_finalize(ctx);
}

/* Tile level: owned descriptors (posv, then potrs on the factored A) and views. */
static void test_tile_solve(void **state) {
  (void)state;
  int64_t nb = 16, n = 3 * nb + 5, nrhs = nb + 3;
  tessera_context_t *ctx = lc_context(5);
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int u = 0; u < 2; u++) {
      problem_t p = problem(lc_dtypes[d], lc_uplos[u], n, nrhs, (uint64_t)(77 + d * 2 + u));
      tessera_dtype_t dt = p.dt;
      size_t asz = (size_t)(p.lda * n), bsz = (size_t)(p.ldb * nrhs);
      void *x = lc_dup(dt, p.b, bsz), *f = lc_dup(dt, p.a, asz);
      tessera_matrix_t *A = NULL, *B = NULL, *B2 = NULL;
      assert_int_equal(tessera_matrix_create(ctx, dt, n, n, nb, nb, &A), 0);
      assert_int_equal(tessera_matrix_create(ctx, dt, n, nrhs, nb, nb, &B), 0);
      assert_int_equal(tessera_matrix_import(A, p.a, p.lda), 0);
      assert_int_equal(tessera_matrix_import(B, p.b, p.ldb), 0);
      assert_int_equal(tessera_tile_posv(p.uplo, A, B), 0);
      assert_int_equal(tessera_matrix_export(B, x, p.ldb), 0);
      check_solution(&p, x, "tile_posv");
      assert_int_equal(tessera_matrix_export(A, f, p.lda), 0);
      double res = lc_potrf_resid(dt, p.uplo, n, p.full, f, p.lda);
      if (!(res < 10)) fail_msg("%s factor residual %g", descr(&p, "tile_posv"), res);
      /* potrs with the resident factor on fresh right-hand sides */
      assert_int_equal(tessera_matrix_create(ctx, dt, n, nrhs, nb, nb, &B2), 0);
      assert_int_equal(tessera_matrix_import(B2, p.b, p.ldb), 0);
      assert_int_equal(tessera_tile_potrs(p.uplo, A, B2), 0);
      memcpy(x, p.b, bsz * lc_esize(dt));
      assert_int_equal(tessera_matrix_export(B2, x, p.ldb), 0);
      check_solution(&p, x, "tile_potrs");
      assert_int_equal(tessera_matrix_destroy(B2), 0);
      /* B whose tiling or size does not match A */
      assert_int_equal(tessera_matrix_create(ctx, dt, n, nrhs, nb + 1, nb, &B2), 0);
      assert_true(tessera_tile_potrs(p.uplo, A, B2) < 0);
      assert_int_equal(tessera_matrix_destroy(B2), 0);
      assert_int_equal(tessera_matrix_create(ctx, dt, n + 1, nrhs, nb, nb, &B2), 0);
      assert_true(tessera_tile_potrs(p.uplo, A, B2) < 0);
      assert_int_equal(tessera_matrix_destroy(B2), 0);
      assert_int_equal(tessera_matrix_destroy(A), 0);
      assert_int_equal(tessera_matrix_destroy(B), 0);
      /* views: results land in the arrays */
      memcpy(f, p.a, asz * lc_esize(dt));
      memcpy(x, p.b, bsz * lc_esize(dt));
      assert_int_equal(tessera_matrix_view(ctx, dt, n, n, nb, nb, f, p.lda, &A), 0);
      assert_int_equal(tessera_matrix_view(ctx, dt, n, nrhs, nb, nb, x, p.ldb, &B), 0);
      assert_int_equal(tessera_tile_posv(p.uplo, A, B), 0);
      check_solution(&p, x, "view posv");
      assert_int_equal(tessera_matrix_destroy(A), 0);
      assert_int_equal(tessera_matrix_destroy(B), 0);
      /* tile_posv on a matrix that is not positive definite */
      memcpy(f, p.a, asz * lc_esize(dt));
      memcpy(x, p.b, bsz * lc_esize(dt));
      lc_set(dt, f, (size_t)((nb + 2) * (p.lda + 1)), -1.0);
      assert_int_equal(tessera_matrix_view(ctx, dt, n, n, nb, nb, f, p.lda, &A), 0);
      assert_int_equal(tessera_matrix_view(ctx, dt, n, nrhs, nb, nb, x, p.ldb, &B), 0);
      assert_int_equal(tessera_tile_posv(p.uplo, A, B), nb + 3);
      assert_int_equal(tessera_matrix_destroy(A), 0);
      assert_int_equal(tessera_matrix_destroy(B), 0);
      assert_memory_equal(x, p.b, bsz * lc_esize(dt));
      free(x);
      free(f);
      problem_free(&p);
    }
  lc_finalize(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_prestate(test_potrs_sizes, &g_tiles[0]),
      cmocka_unit_test_prestate(test_potrs_sizes, &g_tiles[1]),
      cmocka_unit_test_prestate(test_potrs_sizes, &g_tiles[2]),
      cmocka_unit_test(test_posv_not_spd),
      cmocka_unit_test(test_solve_args),
      cmocka_unit_test(test_tile_solve),
  };
  tt_watchdog(600);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
