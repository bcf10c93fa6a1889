/* Mixed-precision solves over processes: tessera_tile_posv_mixed and tessera_tile_gesv_mixed on
 * matrices dealt over every grid the process count allows (posv on square tiles, gesv on column
 * panels and on square tiles, gesv also with A transposed), f64 and c128, an order that is not
 * a tile multiple: the single-precision factor refined to the working precision's criterion
 * (classically, and by GMRES-IR for c128's posv), the same steps and the same answer on every
 * process, A left as it was. A singular A falls back to the working
 * precision's LU and gives its info on every process. The LAPACK-style calls on a context over
 * the processes, the arrays on process 0. The same tile-level cases on simulated devices or a GPU
 * per process. */
/* ctest-label: mpi */
/* ctest-mpi-procs: 2 4 */
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

/* The same int on every process (process 0's). */
static void same_everywhere(int v, const char *what) {
  int root = v;
  assert_int_equal(tessera_comm_broadcast(g_comm, &root, 1, TESSERA_COMM_I32, 0, NULL), 0);
  if (root != v) fail_msg("process %d: %s %d, process 0's %d", g_rank, what, v, root);
}

/* A distributed n x cols matrix on grid g in tiles mb x nb, imported from a (ld). */
static tessera_matrix_t *dealt(tessera_context_t *ctx, tessera_grid_t g, tessera_dtype_t dt,
                               int64_t n, int64_t cols, int64_t mb, int64_t nb, const void *a,
                               int64_t ld) {
  tessera_matrix_t *A = NULL;
  fail_rc(ctx, "create",
          tessera_matrix_create_distributed(ctx, g_comm, g, dt, n, cols, mb, nb, &A));
  fail_rc(ctx, "import", tessera_matrix_import(A, a, ld));
  return A;
}

/* One solve of A X = B (posv: Hermitian A in its lower triangle; else gesv with op `trans`,
 * A in panels when `panels`) on grid g: the answer to the working precision's criterion, the
 * single-precision factor used, its steps the same everywhere, A unchanged. */
static void one_solve(tessera_context_t *ctx, tessera_grid_t g, tessera_dtype_t dt, bool lu,
                      bool panels, tessera_op_t trans, int64_t n, int64_t nb, uint64_t seed) {
  const int64_t nrhs = 2;
  tt_rng_t r = tt_rng(seed);
  void *a = lc_alloc(dt, (size_t)(n * n)), *b = lc_alloc(dt, (size_t)(n * nrhs));
  zc_t *full = NULL;
  if (lu) { /* diagonally weighted: a condition number single precision can refine */
    mat_t x = lu_gen(dt, n, n, 1, seed);
    full = lc_zalloc((size_t)(n * n));
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < n; i++) {
        const zc_t v = lc_get(dt, x.a, (size_t)(i + j * x.lda));
        lc_set(dt, a, (size_t)(i + j * n), v);
        full[trans == TESSERA_NOTRANS ? i + j * n : j + i * n] =
            trans == TESSERA_CONJTRANS ? conj(v) : v;
      }
    free(x.a), free(x.full);
  } else {
    full = lc_gen_hpd(dt, TESSERA_LOWER, n, a, n, &r);
  }
  lc_fill_random(dt, b, n, nrhs, n, &r);
  const int64_t mb = lu && panels ? n : nb;
  tessera_matrix_t *A = dealt(ctx, g, dt, n, n, mb, nb, a, n);
  tessera_matrix_t *B = dealt(ctx, g, dt, n, nrhs, nb, nb, b, n);
  tessera_mixed_options_t o;
  tessera_mixed_options_init(&o);
  o.factor = TESSERA_FACTOR_SINGLE;
  o.trans = trans;
  o.gmres = !lu && dt == TESSERA_C128; /* GMRES-IR from the start: its vectors everywhere */
  tessera_mixed_result_t res;
  int *ipiv = calloc((size_t)n, sizeof *ipiv);
  snprintf(g_what, sizeof g_what, "%dx%d grid, %s %s n %lld%s trans %c", g.p, g.q, lc_name(dt),
           lu ? "tile_gesv_mixed" : "tile_posv_mixed", (long long)n,
           lu && panels ? " in panels" : "", (char)trans);
  fail_rc(ctx, g_what,
          lu ? tessera_tile_gesv_mixed(A, ipiv, B, &o, &res)
             : tessera_tile_posv_mixed(TESSERA_LOWER, A, B, &o, &res));
  void *x = assemble(ctx, dt, B, n, nrhs), *a1 = assemble(ctx, dt, A, n, n);
  zc_t *bz = lc_promote(dt, n, nrhs, b, n);
  const double err = lc_solve_resid(dt, n, nrhs, full, x, n, bz);
  if (!(err < 10))
    fail_msg("process %d: %s: backward error %g (iter %d)", g_rank, g_what, err, res.iter);
  assert_true(res.factor == TESSERA_FACTOR_SINGLE && res.iter >= 1);
  same_everywhere(res.iter, "steps");
  same_everywhere(res.gmres_steps, "GMRES iterations");
  assert_true((res.gmres_steps > 0) == (o.gmres == 1));
  for (int64_t j = 0; j < n; j++) /* A as it was (posv: its lower triangle) */
    for (int64_t i = lu ? 0 : j; i < n; i++)
      assert_true(lc_get(dt, a1, (size_t)(i + j * n)) == lc_get(dt, a, (size_t)(i + j * n)));
  tessera_matrix_destroy(A);
  tessera_matrix_destroy(B);
  free(a), free(b), free(x), free(a1), free(bz), free(full), free(ipiv);
}

static void mixed_cases(tessera_context_t *ctx, int64_t nb, bool quick) {
  const int64_t n = 3 * nb + 5;
  uint64_t seed = 11;
  for (int p = 1; p <= g_size; p++) {
    if (g_size % p) continue;
    const tessera_grid_t g = {p, g_size / p};
    for (int d = 0; d < 2; d++) {
      const tessera_dtype_t dt = d ? TESSERA_C128 : TESSERA_F64;
      one_solve(ctx, g, dt, false, false, TESSERA_NOTRANS, n, nb, seed++);
      if (g.p == 1) /* panels: LU deals them by the grid's first row */
        one_solve(ctx, g, dt, true, true, TESSERA_NOTRANS, n, nb, seed++);
      if (!quick)
        one_solve(ctx, g, dt, true, false, d ? TESSERA_CONJTRANS : TESSERA_TRANS, n, nb, seed++);
    }
  }
}

static void test_tile_mixed(void **state) {
  (void)state;
  mixed_cases(g_ctx, 8, false);
}

/* A singular A: the single-precision LU breaks down, the working precision's gesv runs and gives
 * LAPACK's info on every process. */
static void test_singular(void **state) {
  (void)state;
  const int64_t n = 21, nb = 8;
  double *a = calloc((size_t)(n * n), sizeof *a), b[21];
  for (int64_t i = 0; i < n; i++) a[i + i * n] = i == 9 ? 0 : 2, b[i] = 1;
  tessera_matrix_t *A = dealt(g_ctx, (tessera_grid_t){1, g_size}, TESSERA_F64, n, n, n, nb, a, n);
  tessera_matrix_t *B = dealt(g_ctx, (tessera_grid_t){1, g_size}, TESSERA_F64, n, 1, nb, nb, b, n);
  tessera_mixed_options_t o;
  tessera_mixed_options_init(&o);
  o.factor = TESSERA_FACTOR_SINGLE;
  tessera_mixed_result_t res;
  int ipiv[21];
  assert_int_equal(tessera_tile_gesv_mixed(A, ipiv, B, &o, &res), 10);
  assert_true(res.iter == -3 && res.factor == TESSERA_FACTOR_WORKING);
  lc_assert_error(g_ctx);
  tessera_matrix_destroy(A);
  tessera_matrix_destroy(B);
  free(a);
}

/* The LAPACK-style calls on a context over the processes, arrays on process 0 alone: posv_mixed
 * (f64, lower) and gesv_mixed (c128, with A transposed), the answers on the root to the
 * criterion, the same result everywhere. */
static void test_lapack_style(void **state) {
  (void)state;
  const bool root = g_rank == 0;
  tessera_context_t *ctx = lapack_context(8);
  const int64_t n = 37, nrhs = 2;
  tessera_mixed_options_t o;
  tessera_mixed_options_init(&o);
  o.factor = TESSERA_FACTOR_SINGLE;
  for (int lu = 0; lu < 2; lu++) {
    const tessera_dtype_t dt = lu ? TESSERA_C128 : TESSERA_F64;
    tt_rng_t r = tt_rng((uint64_t)(60 + lu));
    mat_t g = lu_gen(dt, n, n, 1, (uint64_t)(70 + lu));
    void *a = lc_alloc(dt, (size_t)(n * n)), *b = lc_alloc(dt, (size_t)(n * nrhs));
    void *x = lc_alloc(dt, (size_t)(n * nrhs));
    zc_t *full = lu ? lc_zalloc((size_t)(n * n)) : lc_gen_hpd(dt, TESSERA_LOWER, n, a, n, &r);
    for (int64_t j = 0; j < n && lu; j++)
      for (int64_t i = 0; i < n; i++) {
        lc_set(dt, a, (size_t)(i + j * n), lc_get(dt, g.a, (size_t)(i + j * g.lda)));
        full[j + i * n] = lc_get(dt, a, (size_t)(i + j * n)); /* Aᵀ */
      }
    lc_fill_random(dt, b, n, nrhs, n, &r);
    int *ipiv = calloc((size_t)n, sizeof *ipiv);
    o.trans = lu ? TESSERA_TRANS : TESSERA_NOTRANS;
    tessera_mixed_result_t res;
    const int rc = lu ? tessera_gesv_mixed(ctx, dt, n, nrhs, root ? a : NULL, n, root ? ipiv : NULL,
                                           root ? b : NULL, n, root ? x : NULL, n, &o, &res)
                      : tessera_posv_mixed(ctx, TESSERA_LOWER, dt, n, nrhs, root ? a : NULL, n,
                                           root ? b : NULL, n, root ? x : NULL, n, &o, &res);
    fail_rc(ctx, lu ? "gesv_mixed" : "posv_mixed", rc);
    assert_true(res.factor == TESSERA_FACTOR_SINGLE && res.iter >= 1);
    same_everywhere(res.iter, "steps");
    if (root) {
      zc_t *bz = lc_promote(dt, n, nrhs, b, n);
      const double err = lc_solve_resid(dt, n, nrhs, full, x, n, bz);
      if (!(err < 10)) fail_msg("%s: backward error %g", lu ? "gesv_mixed" : "posv_mixed", err);
      free(bz);
    }
    free(a), free(b), free(x), free(full), free(ipiv), free(g.a), free(g.full);
  }
  tessera_finalize(ctx);
}

static void test_on_devices(void **state) {
  (void)state;
  on_devices(1, mixed_cases, 16);
}

int main(int argc, char **argv) {
  own_gpu();
  if (mpi_start(&argc, &argv)) return 2;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tile_mixed), cmocka_unit_test(test_singular),
      cmocka_unit_test(test_lapack_style), cmocka_unit_test(test_on_devices)};
  return mpi_finish(cmocka_run_group_tests(tests, cpu_group_setup, cpu_group_teardown));
}
