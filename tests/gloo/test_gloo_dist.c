/* Distributed routines on a context over a key-value store (tessera_config_t.comm_store: Gloo,
 * no MPI launcher): a tile Cholesky of a matrix dealt over the processes' grid, put together
 * again for its residual, and the LAPACK-style LU solve (getrf then getrs, arrays on process 0),
 * for every dtype. */
/* ctest-label: gloo */
/* ctest-gloo-procs: 2 4 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../linalg/linalg_common.h"
#include "gloo_common.h"
#include <tessera/distribution.h>

static tessera_context_t *g_ctx;
static tessera_comm_store_t g_kv; /* outlives the context */

static void ok(int rc, const char *what) {
  if (rc) fail_msg("process %d: %s = %d (%s)", g_rank, what, rc, tessera_last_error(g_ctx));
}

static void test_tile_potrf(void **state) {
  (void)state;
  tessera_comm_t *comm = tessera_context_comm(g_ctx);
  const tessera_grid_t grid = tessera_context_grid(g_ctx);
  assert_non_null(comm);
  assert_int_equal(grid.p * grid.q, g_size);
  const int64_t n = 45, nb = 8;
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++) {
    const tessera_dtype_t dt = lc_dtypes[d];
    tt_rng_t r = tt_rng((unsigned)(7 + d)); /* the same matrix on every process */
    void *a = lc_alloc(dt, (size_t)(n * n));
    zc_t *full = lc_gen_hpd(dt, TESSERA_LOWER, n, a, n, &r);
    tessera_matrix_t *A = NULL;
    ok(tessera_matrix_create_distributed(g_ctx, comm, grid, dt, n, n, nb, nb, &A), "create");
    ok(tessera_matrix_import(A, a, n), "import");
    ok(tessera_tile_potrf(TESSERA_LOWER, A), "tile_potrf");
    /* every process's tiles, summed: the whole factor everywhere */
    memset(a, 0, (size_t)(n * n) * lc_esize(dt));
    ok(tessera_matrix_export(A, a, n), "export");
    const int rc = tessera_comm_allreduce(comm, a, a, (size_t)(n * n), (tessera_comm_type_t)dt,
                                          TESSERA_SUM, NULL);
    if (rc) fail_msg("allreduce: %d (%s)", rc, tessera_comm_last_error(comm));
    const double resid = lc_potrf_resid(dt, TESSERA_LOWER, n, full, a, n);
    if (!(resid < 10)) fail_msg("%s tile potrf: residual %g", lc_name(dt), resid);
    tessera_matrix_destroy(A);
    free(full);
    free(a);
  }
}

static void test_lu_solve(void **state) {
  (void)state;
  const bool root = g_rank == 0;
  const int64_t n = 37, nrhs = 2;
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++) {
    const tessera_dtype_t dt = lc_dtypes[d];
    tt_rng_t r = tt_rng((unsigned)(40 + d));
    void *a = lc_alloc(dt, (size_t)(n * n)), *b = lc_alloc(dt, (size_t)(n * nrhs));
    lc_fill_random(dt, a, n, n, n, &r);
    lc_fill_random(dt, b, n, nrhs, n, &r);
    zc_t *full = lc_promote(dt, n, n, a, n), *bz = lc_promote(dt, n, nrhs, b, n);
    int *ipiv = calloc((size_t)n, sizeof *ipiv);
    ok(tessera_getrf(g_ctx, dt, n, n, root ? a : NULL, n, root ? ipiv : NULL), "getrf");
    ok(tessera_getrs(g_ctx, TESSERA_NOTRANS, dt, n, nrhs, root ? a : NULL, n, root ? ipiv : NULL,
                     root ? b : NULL, n),
       "getrs");
    if (root && !(lc_solve_resid(dt, n, nrhs, full, b, n, bz) < 20))
      fail_msg("%s getrf, getrs: backward error too large", lc_name(dt));
    free(a), free(b), free(full), free(bz), free(ipiv);
  }
}

static int setup(void **state) {
  (void)state;
  g_kv = gloo_store();
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 1, cfg.gpus = 0, cfg.tile_size = 8, cfg.comm_timeout_s = 15;
  cfg.comm_store = &g_kv; /* distributed: implied */
  return tessera_init(&g_ctx, &cfg);
}

static int teardown(void **state) {
  (void)state;
  return tessera_finalize(g_ctx);
}

static int run(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_tile_potrf),
                                     cmocka_unit_test(test_lu_solve)};
  return cmocka_run_group_tests(tests, setup, teardown);
}

int main(int argc, char **argv) {
  return gloo_main(argc, argv, run, 120);
}
