/* The Cholesky family on distributed matrices: every process runs tile potrf, potrs, potri and
 * logdet alike on a matrix dealt over every grid the process count allows, each running the
 * tasks that write its tiles; the factor, the solution and the inverse (put together from every
 * process's tiles) have the residuals of the one-process routines, the log-determinant that of
 * the factor's diagonal, for every dtype, both triangles, sizes that are not tile
 * multiples, panels solved with the diagonal tile or multiplied by its inverse; a matrix that is
 * not positive definite gives LAPACK's info on every process; sizes that differ across processes
 * fail on all of them. */
/* ctest-label: mpi */
/* ctest-mpi-procs: 1 2 3 4 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../linalg/linalg_common.h"
#include "mpi_common.h"
#include <tessera/distribution.h>

/* Every process's tiles of the n x cols matrix X exported into `a` (leading dimension n, zero
 * where this process has no tile), then summed over the processes: the whole matrix everywhere
 * (each element comes from its one owner). */
static void assemble(tessera_dtype_t dt, tessera_matrix_t *X, void *a, int64_t n, int64_t cols) {
  memset(a, 0, (size_t)(n * cols) * lc_esize(dt));
  assert_int_equal(tessera_matrix_export(X, a, n), 0);
  const size_t count = (size_t)(n * cols);
  int rc = tessera_comm_allreduce(g_comm, a, a, count, (tessera_comm_type_t)dt, TESSERA_SUM, NULL);
  if (rc) fail_msg("allreduce: %d (%s)", rc, tessera_comm_last_error(g_comm));
}

/* potrf (the panel method `inverse`, as tessera_potrf_options_t.trsm_inverse) then potrs (3
 * right-hand sides) of a random HPD matrix of order n in tiles of nb on the grid; the residuals
 * of the assembled factor and solution. */
static void factor_and_solve(tessera_grid_t g, tessera_dtype_t dt, tessera_uplo_t uplo, int64_t n,
                             int64_t nb, int inverse, unsigned seed) {
  const int64_t nrhs = 3, lda = n > 0 ? n : 1;
  const size_t es = lc_esize(dt);
  tt_rng_t r = tt_rng(seed); /* the same matrix on every process */
  void *a = malloc((size_t)(lda * (n ? n : 1)) * es), *b = malloc((size_t)(lda * nrhs) * es);
  zc_t *full = lc_gen_hpd(dt, uplo, n, a, lda, &r);
  lc_fill_random(dt, b, n, nrhs, lda, &r);
  zc_t *bz = lc_promote(dt, n, nrhs, b, lda);
  tessera_matrix_t *A = NULL, *B = NULL;
  int rc = tessera_matrix_create_distributed(g_ctx, g_comm, g, dt, n, n, nb, nb, &A);
  if (rc == 0) rc = tessera_matrix_create_distributed(g_ctx, g_comm, g, dt, n, nrhs, nb, nb, &B);
  if (rc) fail_msg("create: %d (%s)", rc, tessera_last_error(g_ctx));
  assert_int_equal(tessera_matrix_import(A, a, lda), 0);
  assert_int_equal(tessera_matrix_import(B, b, lda), 0);
  tessera_potrf_options_t opts;
  tessera_potrf_options_init(&opts);
  opts.trsm_inverse = inverse;
  rc = tessera_tile_potrf_opts(uplo, A, &opts);
  if (rc)
    fail_msg("potrf %s %c n=%lld inverse %d: %d (%s)", lc_name(dt), (char)uplo, (long long)n,
             inverse, rc, tessera_last_error(g_ctx));
  rc = tessera_tile_potrs(uplo, A, B);
  if (rc) fail_msg("potrs: %d (%s)", rc, tessera_last_error(g_ctx));
  assemble(dt, A, a, lda, n);
  assemble(dt, B, b, lda, nrhs);
  const double rf = lc_potrf_resid(dt, uplo, n, full, a, lda);
  const double rs = lc_solve_resid(dt, n, nrhs, full, b, lda, bz);
  if (!(rf < 10) || !(rs < 10))
    fail_msg("%dx%d grid, %s %c, n=%lld nb=%lld inverse %d: residuals %g (factor) %g (solve)", g.p,
             g.q, lc_name(dt), (char)uplo, (long long)n, (long long)nb, inverse, rf, rs);
  tessera_matrix_destroy(A);
  tessera_matrix_destroy(B);
  free(full);
  free(bz);
  free(a);
  free(b);
}

/* potrf, logdet and potri of a random HPD matrix of order n in tiles of nb on the grid: the
 * log-determinant against the assembled factor's diagonal, the assembled inverse's residual. */
static void factor_and_invert(tessera_grid_t g, tessera_dtype_t dt, tessera_uplo_t uplo, int64_t n,
                              int64_t nb, unsigned seed) {
  const int64_t lda = n > 0 ? n : 1;
  tt_rng_t r = tt_rng(seed);
  void *a = malloc((size_t)(lda * (n ? n : 1)) * lc_esize(dt));
  zc_t *full = lc_gen_hpd(dt, uplo, n, a, lda, &r);
  tessera_matrix_t *A = NULL;
  assert_int_equal(tessera_matrix_create_distributed(g_ctx, g_comm, g, dt, n, n, nb, nb, &A), 0);
  assert_int_equal(tessera_matrix_import(A, a, lda), 0);
  assert_int_equal(tessera_tile_potrf(uplo, A), 0);
  double logdet = NAN, ref = 0;
  int rc = tessera_tile_logdet(uplo, A, &logdet);
  if (rc) fail_msg("logdet: %d (%s)", rc, tessera_last_error(g_ctx));
  assemble(dt, A, a, lda, n);
  for (int64_t i = 0; i < n; i++) ref += 2 * log(creal(lc_get(dt, a, (size_t)(i + i * lda))));
  if (!(fabs(logdet - ref) <= 1e-10 * (1 + fabs(ref))))
    fail_msg("%dx%d grid, %s %c, n=%lld: logdet %.17g, the factor's diagonal gives %.17g", g.p, g.q,
             lc_name(dt), (char)uplo, (long long)n, logdet, ref);
  rc = tessera_tile_potri(uplo, A);
  if (rc) fail_msg("potri: %d (%s)", rc, tessera_last_error(g_ctx));
  assemble(dt, A, a, lda, n);
  zc_t *x = lc_full_from_triangle(dt, uplo, n, a, lda);
  const double res = n ? lc_inverse_resid(dt, n, full, x) : 0;
  if (!(res < 10))
    fail_msg("%dx%d grid, %s %c, n=%lld nb=%lld: potri residual %g", g.p, g.q, lc_name(dt),
             (char)uplo, (long long)n, (long long)nb, res);
  tessera_matrix_destroy(A);
  free(x);
  free(full);
  free(a);
}

static void test_potrf_potrs(void **state) {
  (void)state;
  const int64_t sizes[][2] = {{1, 4}, {37, 8}, {64, 16}, {45, 45}};
  unsigned seed = 1;
  for (int p = 1; p <= g_size; p++) {
    if (g_size % p) continue;
    const tessera_grid_t g = {p, g_size / p};
    for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
      for (int u = 0; u < 2; u++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
          for (int inverse = 0; inverse <= 1; inverse++) /* panels solved, or multiplied */
            factor_and_solve(g, lc_dtypes[d], lc_uplos[u], sizes[s][0], sizes[s][1], inverse,
                             seed++);
  }
}

/* potri and logdet, distributed: every grid, dtype and triangle, sizes 0, 1, not tile
 * multiples. */
static void test_potri_logdet(void **state) {
  (void)state;
  const int64_t sizes[][2] = {{0, 4}, {1, 4}, {37, 8}, {50, 16}};
  unsigned seed = 500;
  for (int p = 1; p <= g_size; p++) {
    if (g_size % p) continue;
    for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
      for (int u = 0; u < 2; u++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
          factor_and_invert((tessera_grid_t){p, g_size / p}, lc_dtypes[d], lc_uplos[u], sizes[s][0],
                            sizes[s][1], seed++);
  }
}

/* The same on the processes' devices (devices_open): tiles travel between the devices
 * (TESSERA_DIST_TRANSFERS=device: the matrices are refused otherwise) over MPI between
 * simulated devices, and over NCCL between GPUs when TESSERA_TEST_GPUS=<GPUs of the machine>
 * gives each local process a GPU of its own (at least as many GPUs as processes); through the
 * host otherwise. Skipped where the processes have no devices. */
static void test_on_devices(void **state) {
  (void)state;
  tessera_context_t *ctx = NULL, *host_ctx = g_ctx;
  tessera_comm_t *comm = NULL, *host_comm = g_comm;
  if (!devices_open(2, &ctx, &comm)) skip();
  g_ctx = ctx, g_comm = comm;
  const int64_t sizes[][2] = {{37, 8}, {64, 16}, {100, 24}};
  unsigned seed = 100;
  for (int p = 1; p <= g_size; p++) {
    if (g_size % p) continue;
    for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
      for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        factor_and_solve((tessera_grid_t){p, g_size / p}, lc_dtypes[d], lc_uplos[(d + k) % 2],
                         sizes[k][0], sizes[k][1], -1, seed++); /* auto: multiplied on GPUs */
  }
  g_ctx = host_ctx, g_comm = host_comm;
  devices_close(ctx, comm);
}

/* A negative pivot in tile row 2 of a 4 x 4 tile matrix: LAPACK's info everywhere. */
static void test_not_positive_definite(void **state) {
  (void)state;
  const int64_t n = 32, nb = 8, bad = 19;
  const tessera_grid_t g = {1, g_size};
  tt_rng_t r = tt_rng(7);
  double *a = malloc((size_t)(n * n) * sizeof *a);
  free(lc_gen_hpd(TESSERA_F64, TESSERA_LOWER, n, a, n, &r));
  a[bad + bad * n] = -1;
  tessera_matrix_t *A = NULL;
  assert_int_equal(
      tessera_matrix_create_distributed(g_ctx, g_comm, g, TESSERA_F64, n, n, nb, nb, &A), 0);
  assert_int_equal(tessera_matrix_import(A, a, n), 0);
  assert_int_equal(tessera_tile_potrf(TESSERA_LOWER, A), bad + 1);
  tessera_matrix_destroy(A);
  free(a);
}

/* Sizes that differ across the processes: the same argument status everywhere, nothing made. */
static void test_mismatch(void **state) {
  (void)state;
  tessera_matrix_t *A = NULL;
  const int64_t n = g_rank == 0 && g_size > 1 ? 17 : 16;
  const int rc = tessera_matrix_create_distributed(g_ctx, g_comm, (tessera_grid_t){1, g_size},
                                                   TESSERA_F64, n, n, 4, 4, &A);
  if (g_size > 1) {
    assert_int_equal(rc, -5);
    assert_null(A);
    lc_assert_error(g_ctx);
  } else {
    assert_int_equal(rc, 0);
    tessera_matrix_destroy(A);
  }
  assert_int_equal(tessera_matrix_create_distributed(g_ctx, g_comm, (tessera_grid_t){2, g_size},
                                                     TESSERA_F64, 8, 8, 4, 4, &A),
                   -3);
  /* a distributed operand beside one of this process alone is refused */
  tessera_matrix_t *D = NULL, *L = NULL;
  assert_int_equal(tessera_matrix_create_distributed(g_ctx, g_comm, (tessera_grid_t){1, g_size},
                                                     TESSERA_F64, 8, 8, 4, 4, &D),
                   0);
  assert_int_equal(tessera_matrix_create(g_ctx, TESSERA_F64, 8, 2, 4, 4, &L), 0);
  assert_int_equal(tessera_tile_potrs(TESSERA_LOWER, D, L), -3);
  tessera_matrix_destroy(L);
  tessera_matrix_destroy(D);
}

int main(int argc, char **argv) {
  own_gpu();
  if (mpi_start(&argc, &argv)) return 2;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_potrf_potrs), cmocka_unit_test(test_potri_logdet),
      cmocka_unit_test(test_on_devices), cmocka_unit_test(test_not_positive_definite),
      cmocka_unit_test(test_mismatch)};
  return mpi_finish(cmocka_run_group_tests(tests, cpu_group_setup, cpu_group_teardown));
}
