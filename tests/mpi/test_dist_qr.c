/* Householder QR over processes, tile level: every process runs tile geqrf (then tile gels on
 * tall matrices) alike on column
 * panels dealt over every grid the process count allows (by the grid's first row), each running
 * the tasks that write its panels; the factors put together from every process's panels and the
 * tau every process gets have the residual and orthogonality of the one-process routine, tau
 * is the same on every process, for every dtype, square, tall and wide matrices and sizes that
 * are not tile multiples; square tiles go through a distributed copy in panels. The same on
 * simulated devices or a GPU per process. */
/* ctest-label: mpi */
/* ctest-mpi-procs: 1 2 3 4 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../linalg/qr_common.h"
#include "mpi_common.h"
#include <tessera/distribution.h>

static void fail_rc(tessera_context_t *ctx, const char *what, int rc) {
  if (rc) fail_msg("process %d: %s = %d (%s)", g_rank, what, rc, tessera_last_error(ctx));
}

/* tile geqrf of a random m x n matrix (the same on every process) on grid g, tiles mb x nb. */
static void tile_case(tessera_context_t *ctx, tessera_grid_t g, tessera_dtype_t dt, int64_t m,
                      int64_t n, int64_t mb, int64_t nb, uint64_t seed) {
  const int64_t k = m < n ? m : n, lda = m > 0 ? m : 1;
  tt_rng_t r = tt_rng(seed);
  void *a = lc_alloc(dt, (size_t)(lda * (n + 1)));
  lc_fill_random(dt, a, m, n, lda, &r);
  zc_t *full = lc_promote(dt, m, n, a, lda);
  void *tau = lc_alloc(dt, (size_t)(k + 1));
  char what[160];
  snprintf(what, sizeof what, "%dx%d grid, %s %lld x %lld, tiles %lld x %lld: tile_geqrf", g.p, g.q,
           lc_name(dt), (long long)m, (long long)n, (long long)mb, (long long)nb);
  tessera_matrix_t *A = NULL;
  fail_rc(ctx, "create",
          tessera_matrix_create_distributed(ctx, g_comm, g, dt, m, n, mb > 0 ? mb : 1, nb, &A));
  fail_rc(ctx, "import", tessera_matrix_import(A, a, lda));
  fail_rc(ctx, what, tessera_tile_geqrf(A, tau));
  /* every process's tiles summed: the whole factored matrix */
  const size_t count = (size_t)(lda * n), es = lc_esize(dt);
  void *f = lc_alloc(dt, count ? count : 1);
  memset(f, 0, count * es);
  fail_rc(ctx, "export", tessera_matrix_export(A, f, lda));
  fail_rc(ctx, "allreduce",
          tessera_comm_allreduce(g_comm, f, f, count, (tessera_comm_type_t)dt, TESSERA_SUM, NULL));
  /* tau: process 0's everywhere */
  void *root = lc_dup(dt, tau, (size_t)(k + 1));
  fail_rc(ctx, "broadcast",
          tessera_comm_broadcast(g_comm, root, (size_t)k, (tessera_comm_type_t)dt, 0, NULL));
  if (k > 0 && memcmp(root, tau, (size_t)k * es))
    fail_msg("process %d: %s: tau differs from process 0's", g_rank, what);
  qr_check(dt, m, n, full, f, lda, tau, what);
  tessera_matrix_destroy(A);
  if (m >= n && n > 0) { /* tile gels on the same matrix: the normal equations hold */
    const int64_t nrhs = 2;
    void *b = lc_alloc(dt, (size_t)(lda * nrhs));
    lc_fill_random(dt, b, m, nrhs, lda, &r);
    zc_t *bz = lc_promote(dt, m, nrhs, b, lda);
    tessera_matrix_t *G = NULL, *B = NULL;
    fail_rc(ctx, "create", tessera_matrix_create_distributed(ctx, g_comm, g, dt, m, n, mb, nb, &G));
    fail_rc(ctx, "import", tessera_matrix_import(G, a, lda));
    fail_rc(ctx, "create",
            tessera_matrix_create_distributed(ctx, g_comm, g, dt, m, nrhs, mb, nb, &B));
    fail_rc(ctx, "import", tessera_matrix_import(B, b, lda));
    fail_rc(ctx, "tile_gels", tessera_tile_gels(G, B));
    memset(b, 0, (size_t)(lda * nrhs) * es);
    fail_rc(ctx, "export", tessera_matrix_export(B, b, lda));
    fail_rc(ctx, "allreduce",
            tessera_comm_allreduce(g_comm, b, b, (size_t)(lda * nrhs), (tessera_comm_type_t)dt,
                                   TESSERA_SUM, NULL));
    /* Aᴴ (A x - b) = 0 */
    zc_t *x = lc_promote(dt, n, nrhs, b, lda), *rz = lc_zalloc((size_t)(m * nrhs)),
         *gz = lc_zalloc((size_t)(n * nrhs));
    memcpy(rz, bz, (size_t)(m * nrhs) * sizeof *rz);
    const zc_t one = 1.0, mone = -1.0, zero = 0.0;
    cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)nrhs, (int)n, &mone, full,
                (int)m, x, (int)n, &one, rz, (int)m);
    cblas_zgemm(CblasColMajor, CblasConjTrans, CblasNoTrans, (int)n, (int)nrhs, (int)m, &one, full,
                (int)m, rz, (int)m, &zero, gz, (int)n);
    const double an = lc_norm_fro(full, (size_t)(m * n));
    const double ratio = lc_norm_fro(gz, (size_t)(n * nrhs)) /
                         ((double)m * an * lc_norm_fro(bz, (size_t)(m * nrhs)) * lc_eps(dt));
    if (!(ratio < 10))
      fail_msg("process %d: %s then tile_gels: test ratio %g", g_rank, what, ratio);
    tessera_matrix_destroy(B);
    tessera_matrix_destroy(G);
    free(b), free(bz), free(x), free(rz), free(gz);
  }
  free(a), free(full), free(tau), free(f), free(root);
}

/* Every grid, dtype and shape on context ctx; then square tiles. */
static void tile_cases(tessera_context_t *ctx, int64_t nb, bool quick) {
  const int64_t sizes[][2] = {
      {0, 0}, {1, 1}, {3 * nb + 5, 3 * nb + 5}, {4 * nb + 3, 2 * nb + 1}, {2 * nb + 1, 4 * nb + 3}};
  const size_t ns = sizeof sizes / sizeof sizes[0];
  uint64_t seed = 1;
  for (int p = 1; p <= g_size; p++) {
    if (g_size % p) continue;
    for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
      for (size_t s = quick ? 2 : 0; s < ns; s++)
        tile_case(ctx, (tessera_grid_t){p, g_size / p}, lc_dtypes[d], sizes[s][0], sizes[s][1],
                  sizes[s][0], nb, seed++);
  }
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (size_t s = 2; s < ns; s++)
      tile_case(ctx, (tessera_grid_t){1, g_size}, lc_dtypes[d], sizes[s][0], sizes[s][1], nb, nb,
                seed++);
}

static void test_tile_qr(void **state) {
  (void)state;
  tile_cases(g_ctx, 8, false);
}

static void test_on_devices(void **state) {
  (void)state;
  on_devices(1, tile_cases, 16);
}

int main(int argc, char **argv) {
  own_gpu();
  if (mpi_start(&argc, &argv)) return 2;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_tile_qr),
                                     cmocka_unit_test(test_on_devices)};
  return mpi_finish(cmocka_run_group_tests(tests, cpu_group_setup, cpu_group_teardown));
}
