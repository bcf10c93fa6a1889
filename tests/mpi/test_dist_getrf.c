/* LU over processes. Tile level: every process runs tile getrf, getrs ('N', 'T', 'C'), gesv and
 * laswp alike on column panels dealt over every grid the process count allows (by the grid's
 * first row), each running the tasks that write its panels; the factors put together from every
 * process's panels have the residual of the one-process routine, the pivots are the same on
 * every process (LAPACK's where pivoting is unambiguous), for every dtype, sizes that are not
 * tile multiples, tall and wide matrices. LAPACK-style: the arrays on process 0 only, the same
 * residuals, a singular matrix and NaN give LAPACK's info and the same message on every process.
 * Pivots that differ across the processes, or a NULL ipiv on one of them, fail on all of them.
 * The same on simulated devices or a GPU per process. */
/* ctest-label: mpi */
/* ctest-mpi-procs: 1 2 3 4 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../linalg/lu_common.h"
#include "mpi_common.h"
#include "dist_common.h"
#include <tessera/distribution.h>

/* The pivots are the same on every process. */
static void same_everywhere(const int *ipiv, int64_t k) {
  int *root = malloc((size_t)(k + 1) * sizeof *root);
  memcpy(root, ipiv, (size_t)k * sizeof *root);
  assert_int_equal(tessera_comm_broadcast(g_comm, root, (size_t)k, TESSERA_COMM_I32, 0, NULL), 0);
  for (int64_t i = 0; i < k; i++)
    if (root[i] != ipiv[i])
      fail_msg("process %d: ipiv[%lld] = %d, process 0's %d", g_rank, (long long)i, ipiv[i],
               root[i]);
  free(root);
}

/* Whether the tile cases make square tiles (LU copies them into panels and back) instead of
 * panels. */
static bool g_square;

static tessera_matrix_t *panels(tessera_context_t *ctx, tessera_grid_t g, const mat_t *x,
                                int64_t nb, const void *a) {
  tessera_matrix_t *A = NULL;
  const int64_t mb = g_square ? nb : x->m > 1 ? x->m : 1;
  fail_rc(ctx, "create",
          tessera_matrix_create_distributed(ctx, g_comm, g, x->dt, x->m, x->n, mb, nb, &A));
  fail_rc(ctx, "import", tessera_matrix_import(A, a, x->lda));
  return A;
}

/* tile getrf of an m x n matrix in panels of nb on grid g; when square, getrs for every op
 * with its factors, then gesv. */
static void tile_case(tessera_context_t *ctx, tessera_grid_t g, tessera_dtype_t dt, int64_t m,
                      int64_t n, int64_t nb, int dominant, uint64_t seed) {
  mat_t x = lu_gen(dt, m, n, dominant, seed); /* the same matrix on every process */
  const int64_t k = m < n ? m : n;
  int *ipiv = calloc((size_t)k + 1, sizeof *ipiv);
  tessera_matrix_t *A = panels(ctx, g, &x, nb, x.a);
  char what[160];
  snprintf(what, sizeof what, "%dx%d grid, %s %lld x %lld, panels of %lld: tile_getrf", g.p, g.q,
           lc_name(dt), (long long)m, (long long)n, (long long)nb);
  fail_rc(ctx, what, tessera_tile_getrf(A, ipiv));
  void *f = assemble(ctx, dt, A, x.lda, n);
  same_everywhere(ipiv, k);
  const double res = lu_resid(&x, f, ipiv);
  if (!(res < 10)) fail_msg("%s residual %g", what, res);
  if (dominant) {
    void *h = lc_dup(dt, x.a, (size_t)(x.lda * n));
    int *jpiv = calloc((size_t)k + 1, sizeof *jpiv);
    assert_int_equal(lapack_getrf(dt, m, n, h, x.lda, jpiv), 0);
    for (int64_t i = 0; i < k; i++)
      if (ipiv[i] != jpiv[i])
        fail_msg("%s ipiv[%lld] = %d, LAPACK's %d", what, (long long)i, ipiv[i], jpiv[i]);
    free(h);
    free(jpiv);
  }
  if (m == n && n > 0) {
    const int64_t nrhs = 3;
    mat_t b = lu_gen(dt, n, nrhs, 0, seed + 1);
    const tessera_op_t ops[3] = {TESSERA_NOTRANS, TESSERA_TRANS, TESSERA_CONJTRANS};
    for (int t = 0; t <= 3; t++) {
      tessera_matrix_t *B = panels(ctx, g, &b, 2, b.a), *F = A;
      if (t == 3) { /* gesv on the matrix itself */
        F = panels(ctx, g, &x, nb, x.a);
        fail_rc(ctx, "tile_gesv", tessera_tile_gesv(F, ipiv, B));
        same_everywhere(ipiv, n);
      } else {
        fail_rc(ctx, "tile_getrs", tessera_tile_getrs(ops[t], A, ipiv, B));
      }
      void *y = assemble(ctx, dt, B, b.lda, nrhs);
      const double r =
          op_resid(dt, t == 3 ? TESSERA_NOTRANS : ops[t], n, nrhs, x.full, y, b.lda, b.full);
      if (!(r < 20)) fail_msg("%s then %s: backward error %g", what, t == 3 ? "gesv" : "getrs", r);
      free(y);
      if (F != A) tessera_matrix_destroy(F);
      tessera_matrix_destroy(B);
    }
    /* laswp with the factorization's pivots, forward then back: the matrix again */
    tessera_matrix_t *X = panels(ctx, g, &b, 2, b.a);
    fail_rc(ctx, "tile_laswp", tessera_tile_laswp(X, 1, n, ipiv, 1));
    void *y = assemble(ctx, dt, X, b.lda, nrhs), *z = lc_dup(dt, b.a, (size_t)(b.lda * nrhs));
    lapack_laswp(dt, nrhs, z, b.lda, 1, (int)n, ipiv, 1);
    for (int64_t j = 0; j < nrhs; j++)
      for (int64_t i = 0; i < n; i++)
        if (lc_get(dt, y, (size_t)(i + j * b.lda)) != lc_get(dt, z, (size_t)(i + j * b.lda)))
          fail_msg("%s laswp differs from LAPACK's at (%lld, %lld)", what, (long long)i,
                   (long long)j);
    free(y), free(z);
    tessera_matrix_destroy(X);
    lu_mat_free(&b);
  }
  tessera_matrix_destroy(A);
  free(f);
  free(ipiv);
  lu_mat_free(&x);
}

/* Every grid, dtype and shape on context ctx. */
static void tile_cases(tessera_context_t *ctx, int64_t nb, bool quick) {
  const int64_t sizes[][2] = {{0, 0},
                              {1, 1},
                              {nb - 1, nb - 1},
                              {3 * nb + 5, 3 * nb + 5},
                              {4 * nb + 3, 2 * nb + 1},
                              {2 * nb + 1, 4 * nb + 3}};
  const size_t ns = sizeof sizes / sizeof sizes[0];
  uint64_t seed = 1;
  for (int p = 1; p <= g_size; p++) {
    if (g_size % p) continue;
    for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
      for (size_t s = quick ? 3 : 0; s < ns; s++)
        for (int dom = 0; dom < 2; dom++)
          tile_case(ctx, (tessera_grid_t){p, g_size / p}, lc_dtypes[d], sizes[s][0], sizes[s][1],
                    nb, dom, seed++);
  }
  /* square tiles on the squarest grid */
  int p = 1;
  for (int q = 1; q * q <= g_size; q++)
    if (g_size % q == 0) p = q;
  g_square = true;
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (size_t s = 3; s < ns; s++)
      tile_case(ctx, (tessera_grid_t){p, g_size / p}, lc_dtypes[d], sizes[s][0], sizes[s][1], nb, 1,
                seed++);
  g_square = false;
}

static void test_tile_lu(void **state) {
  (void)state;
  tile_cases(g_ctx, 8, false);
}

/* The LAPACK-style calls on a context over the processes, arrays on process 0. */
static void test_lapack_lu(void **state) {
  (void)state;
  const bool root = g_rank == 0;
  tessera_context_t *ctx = lapack_context(8);
  const int64_t n = 37, nrhs = 2;
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++) {
    const tessera_dtype_t dt = lc_dtypes[d];
    mat_t x = lu_gen(dt, n, n, d % 2, (uint64_t)(40 + d)),
          b = lu_gen(dt, n, nrhs, 0, (uint64_t)(50 + d));
    void *f = root ? lc_dup(dt, x.a, (size_t)(x.lda * n)) : NULL;
    void *y = root ? lc_dup(dt, b.a, (size_t)(b.lda * nrhs)) : NULL;
    int *ipiv = root ? calloc((size_t)n, sizeof *ipiv) : NULL;
    fail_rc(ctx, "getrf", tessera_getrf(ctx, dt, n, n, f, x.lda, ipiv));
    fail_rc(ctx, "getrs", tessera_getrs(ctx, TESSERA_TRANS, dt, n, nrhs, f, x.lda, ipiv, y, b.lda));
    if (root) {
      const double rf = lu_resid(&x, f, ipiv);
      const double rs = op_resid(dt, TESSERA_TRANS, n, nrhs, x.full, y, b.lda, b.full);
      if (!(rf < 10) || !(rs < 20))
        fail_msg("%s getrf, getrs 'T': residuals %g, %g", lc_name(dt), rf, rs);
      assert_int_equal(lc_diff_outside(dt, 0, n, n, f, x.a, x.lda), 0);
      memcpy(f, x.a, (size_t)(x.lda * n) * lc_esize(dt));
      memcpy(y, b.a, (size_t)(b.lda * nrhs) * lc_esize(dt));
    }
    fail_rc(ctx, "gesv", tessera_gesv(ctx, dt, n, nrhs, f, x.lda, ipiv, y, b.lda));
    if (root && !(lc_solve_resid(dt, n, nrhs, x.full, y, b.lda, b.full) < 20))
      fail_msg("%s gesv: backward error", lc_name(dt));
    /* column 9 zero: U(10, 10) is exactly zero, LAPACK's info and message everywhere; then NaN */
    for (int bad = 0; bad < 2; bad++) {
      if (root) {
        memcpy(f, x.a, (size_t)(x.lda * n) * lc_esize(dt));
        for (int64_t i = 0; i < n; i++)
          if (!bad || i == 20) lc_set(dt, f, (size_t)(i + 9 * x.lda), bad ? NAN : 0.0);
      }
      const int rc = tessera_getrf(ctx, dt, n, n, f, x.lda, ipiv);
      if (bad ? rc < 1 || rc > 10 : rc != 10)
        fail_msg("process %d: %s getrf of a %s: %d", g_rank, lc_name(dt),
                 bad ? "matrix with NaN" : "singular matrix", rc);
      if (!strstr(tessera_last_error(ctx), bad ? "NaN" : "singular"))
        fail_msg("process %d: message %s", g_rank, tessera_last_error(ctx));
    }
    free(f), free(y), free(ipiv);
    lu_mat_free(&x);
    lu_mat_free(&b);
  }
  assert_int_equal(tessera_finalize(ctx), 0);
}

/* Pivots that differ on one process, a NULL ipiv on one process: the same status everywhere. */
static void test_mismatch(void **state) {
  (void)state;
  const int64_t n = 20;
  mat_t x = lu_gen(TESSERA_F64, n, n, 0, 9);
  tessera_matrix_t *A = panels(g_ctx, (tessera_grid_t){1, g_size}, &x, 4, x.a);
  tessera_matrix_t *B = panels(g_ctx, (tessera_grid_t){1, g_size}, &x, 4, x.a);
  int *ipiv = calloc((size_t)n, sizeof *ipiv);
  fail_rc(g_ctx, "tile_getrf", tessera_tile_getrf(A, ipiv));
  if (g_size > 1 && g_rank == g_size - 1) ipiv[3] = ipiv[3] == n ? 4 : n; /* still valid here */
  assert_int_equal(tessera_tile_getrs(TESSERA_NOTRANS, A, ipiv, B), g_size > 1 ? -3 : 0);
  if (g_size > 1) lc_assert_error(g_ctx);
  if (g_size > 1 && g_rank == g_size - 1) ipiv[3] = 0; /* invalid on one process */
  assert_int_equal(tessera_tile_laswp(B, 1, n, ipiv, 1), g_size > 1 ? -4 : 0);
  const int rc = tessera_tile_getrf(B, g_rank == g_size - 1 ? NULL : ipiv);
  assert_int_equal(rc, -2);
  lc_assert_error(g_ctx);
  tessera_matrix_destroy(A);
  tessera_matrix_destroy(B);
  free(ipiv);
  lu_mat_free(&x);
}

/* The same tile-level cases on the processes' devices (devices_open: simulated ones, a GPU of
 * each process's own, or GPUs every process sees). Skipped where a process has no device. */
static void test_on_devices(void **state) {
  (void)state;
  on_devices(1, tile_cases, 16);
}

int main(int argc, char **argv) {
  own_gpu();
  if (mpi_start(&argc, &argv)) return 2;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tile_lu), cmocka_unit_test(test_lapack_lu),
      cmocka_unit_test(test_mismatch), cmocka_unit_test(test_on_devices)};
  return mpi_finish(cmocka_run_group_tests(tests, cpu_group_setup, cpu_group_teardown));
}
