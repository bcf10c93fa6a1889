/* The polar decomposition and the SVD over processes: tessera_gepolar on a context over
 * processes (a and h on process 0 only; h not asked for) and tessera_tile_gepolar on
 * descriptors dealt over the
 * context's grid, every dtype, square and tall, orders 0, 1 and not tile multiples, graded
 * singular values: the residual, U_p's orthogonality, H's definiteness and U_p against LAPACK's
 * SVD (polar_common.h) on process 0 for the LAPACK-style call and on every process for the tile
 * level; on the processes' devices where they have some; a NaN gives the same info and message
 * on every process, and a bad argument fails on all of them. tessera_gesvd from process 0 (tall
 * and wide, with vectors and values only): the same singular values on every process, LAPACK's,
 * and A = U Σ Vᴴ on process 0. */
/* ctest-label: mpi */
/* ctest-mpi-procs: 1 2 4 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../linalg/linalg_common.h"
#include "../linalg/polar_common.h"
#include "mpi_common.h"
#include "dist_common.h"
#include <tessera/distribution.h>

enum { TILE = 8 };

/* The LAPACK-style call: A the same on every process (one seed), passed by process 0 alone. */
static void lapack_case(tessera_context_t *ctx, tessera_dtype_t dt, int64_t m, int64_t n,
                        double cond, bool want_h, uint64_t seed) {
  tt_rng_t r = tt_rng(seed);
  void *a = lc_alloc(dt, (size_t)(m * n) + 1), *h = lc_alloc(dt, (size_t)(n * n) + 1);
  zc_t *A = pc_prescribed(dt, m, n, cond, n, false, a, &r);
  const bool root = g_rank == 0;
  int steps = -1;
  dist_expect(ctx, "gepolar",
              tessera_gepolar(ctx, dt, m, n, root ? a : NULL, m > 0 ? m : 1,
                              root && want_h ? h : NULL, n > 0 ? n : 1, &steps),
              0);
  assert_true(n == 0 ? steps == 0 : steps > 0);
  if (root) pc_check(dt, m, n, A, a, want_h ? h : NULL, true, cond <= 100);
  free(a), free(h), free(A);
}

/* The tile-level call on descriptors dealt over `grid` in TILE x TILE tiles: A imported on every
 * process, U_p and H exported and summed (each tile has one owner), checked everywhere. */
static void tile_case(tessera_context_t *ctx, tessera_comm_t *comm, tessera_grid_t grid,
                      tessera_dtype_t dt, int64_t m, int64_t n, uint64_t seed) {
  tt_rng_t r = tt_rng(seed);
  const int64_t ldm = m > 0 ? m : 1, ldn = n > 0 ? n : 1;
  void *a = lc_alloc(dt, (size_t)(ldm * ldn)), *h = lc_alloc(dt, (size_t)(ldn * ldn));
  zc_t *A = pc_prescribed(dt, m, n, 1e3, n, false, a, &r);
  tessera_matrix_t *Am = NULL, *Hm = NULL;
  dist_expect(ctx, "create A",
              tessera_matrix_create_distributed(ctx, comm, grid, dt, m, n, TILE, TILE, &Am), 0);
  dist_expect(ctx, "create H",
              tessera_matrix_create_distributed(ctx, comm, grid, dt, n, n, TILE, TILE, &Hm), 0);
  dist_expect(ctx, "import", tessera_matrix_import(Am, a, ldm), 0);
  int steps = 0;
  dist_expect(ctx, "tile_gepolar", tessera_tile_gepolar(Am, Hm, &steps), 0);
  memset(a, 0, (size_t)(ldm * ldn) * lc_esize(dt));
  memset(h, 0, (size_t)(ldn * ldn) * lc_esize(dt));
  dist_expect(ctx, "export U", tessera_matrix_export(Am, a, ldm), 0);
  dist_expect(ctx, "export H", tessera_matrix_export(Hm, h, ldn), 0);
  const tessera_comm_type_t t = (tessera_comm_type_t)dt;
  dist_expect(ctx, "allreduce U",
              tessera_comm_allreduce(comm, a, a, (size_t)(ldm * ldn), t, TESSERA_SUM, NULL), 0);
  dist_expect(ctx, "allreduce H",
              tessera_comm_allreduce(comm, h, h, (size_t)(ldn * ldn), t, TESSERA_SUM, NULL), 0);
  pc_check(dt, m, n, A, a, h, true, true);
  dist_expect(ctx, "destroy", tessera_matrix_destroy(Am) | tessera_matrix_destroy(Hm), 0);
  free(a), free(h), free(A);
}

static void test_gepolar_processes(void **state) {
  (void)state;
  tessera_context_t *ctx = dist_context(0, 0, TILE);
  const int64_t shapes[][2] = {{0, 0}, {1, 1}, {13, 13}, {29, 17}};
  uint64_t seed = 500;
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++, seed++)
      lapack_case(ctx, lc_dtypes[d], shapes[s][0], shapes[s][1], 10, s % 2 == 0, seed);
  lapack_case(ctx, TESSERA_F64, 30, 30, 1e12, true, 590); /* graded */
  assert_int_equal(tessera_finalize(ctx), 0);
}

static void test_tile_gepolar_processes(void **state) {
  (void)state;
  tessera_context_t *ctx = dist_context(0, 0, TILE);
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++) {
    tile_case(ctx, tessera_context_comm(ctx), tessera_context_grid(ctx), lc_dtypes[d], 27, 19,
              600 + (uint64_t)d);
    tile_case(ctx, tessera_context_comm(ctx), tessera_context_grid(ctx), lc_dtypes[d], 1, 1,
              610 + (uint64_t)d);
  }
  assert_int_equal(tessera_finalize(ctx), 0);
}

/* On the processes' devices (devices_open), A distributed by columns. Skipped where the
 * processes have no devices. */
static void test_on_devices(void **state) {
  (void)state;
  tessera_context_t *ctx = NULL;
  tessera_comm_t *comm = NULL;
  if (!devices_open(2, &ctx, &comm)) skip();
  const tessera_grid_t grid = {1, g_size};
  tile_case(ctx, comm, grid, TESSERA_F64, 45, 33, 41);
  tile_case(ctx, comm, grid, TESSERA_C64, 20, 20, 42);
  devices_close(ctx, comm);
}

/* gesvd from process 0: s on every process (compared with process 0's through a sum), against
 * LAPACK's; with vectors A = U Σ Vᴴ on process 0, with every vector U (m x m) and V (n x n)
 * orthogonal there too. */
static void gesvd_case(tessera_context_t *ctx, tessera_job_t job, int64_t m, int64_t n,
                       uint64_t seed) {
  const bool all = job == TESSERA_ALL_VECTORS;
  const int64_t k = m < n ? m : n, uc = all ? m : k, vr = all ? n : k;
  tt_rng_t r = tt_rng(seed);
  double *a = malloc((size_t)(m * n) * sizeof *a), *a0 = malloc((size_t)(m * n) * sizeof *a0);
  double *s = calloc((size_t)k, sizeof *s), *sum = calloc((size_t)k, sizeof *sum);
  double *u = calloc((size_t)(m * uc), sizeof *u), *vt = calloc((size_t)(vr * n), sizeof *vt);
  lc_fill_random(TESSERA_F64, a, m, n, m, &r);
  memcpy(a0, a, (size_t)(m * n) * sizeof *a);
  const bool root = g_rank == 0;
  dist_expect(ctx, "gesvd",
              tessera_gesvd(ctx, job, TESSERA_F64, m, n, root ? a : NULL, m, s, root ? u : NULL, m,
                            root ? vt : NULL, vr),
              0);
  dist_expect(ctx, "allreduce",
              tessera_comm_allreduce(tessera_context_comm(ctx), s, sum, (size_t)k, TESSERA_COMM_F64,
                                     TESSERA_SUM, NULL),
              0);
  for (int64_t i = 0; i < k; i++) assert_true(fabs(sum[i] - g_size * s[i]) <= 1e-13 * sum[0]);
  if (root) {
    double *ref = malloc((size_t)k * sizeof *ref), *sup = malloc((size_t)k * sizeof *sup);
    double *c = malloc((size_t)(m * n + m) * sizeof *c); /* slack, as polar_common.h says */
    memcpy(c, a0, (size_t)(m * n) * sizeof *c);
    assert_int_equal(LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', (int)m, (int)n, c, (int)m, ref,
                                    NULL, 1, NULL, 1, sup),
                     0);
    for (int64_t i = 0; i < k; i++) assert_true(fabs(s[i] - ref[i]) < 1e-12 * ref[0] * (double)m);
    for (int64_t j = 0; j < n && job != TESSERA_VALUES; j++)
      for (int64_t i = 0; i < m; i++) {
        double v = 0;
        for (int64_t l = 0; l < k; l++) v += u[i + l * m] * s[l] * vt[l + j * vr];
        assert_true(fabs(v - a0[i + j * m]) < 1e-12 * ref[0] * (double)m);
      }
    for (int64_t i = 0; i < m && all; i++) /* UᵀU = I, V Vᵀ = I */
      for (int64_t j = 0; j < m; j++) {
        double v = 0;
        for (int64_t l = 0; l < m; l++) v += u[l + i * m] * u[l + j * m];
        assert_true(fabs(v - (i == j)) < 1e-13 * (double)m);
      }
    for (int64_t i = 0; i < n && all; i++)
      for (int64_t j = 0; j < n; j++) {
        double v = 0;
        for (int64_t l = 0; l < n; l++) v += vt[i + l * n] * vt[j + l * n];
        assert_true(fabs(v - (i == j)) < 1e-13 * (double)n);
      }
    free(ref), free(sup), free(c);
  }
  free(a), free(a0), free(s), free(sum), free(u), free(vt);
}

static void test_gesvd_processes(void **state) {
  (void)state;
  tessera_context_t *ctx = dist_context(0, 0, TILE);
  gesvd_case(ctx, TESSERA_VECTORS, 29, 19, 31);
  gesvd_case(ctx, TESSERA_VECTORS, 14, 23, 32);
  gesvd_case(ctx, TESSERA_VALUES, 25, 25, 33);
  gesvd_case(ctx, TESSERA_ALL_VECTORS, 27, 18, 34);
  gesvd_case(ctx, TESSERA_ALL_VECTORS, 15, 22, 35);
  assert_int_equal(tessera_finalize(ctx), 0);
}

/* A NaN on process 0's array: the same info (its column) and message on every process; a wide A
 * fails on every process. */
static void test_nan_and_args(void **state) {
  (void)state;
  tessera_context_t *ctx = dist_context(0, 0, TILE);
  const int64_t m = 19, n = 11;
  double *a = calloc((size_t)(m * n), sizeof *a), h[121];
  tt_rng_t r = tt_rng(77);
  lc_fill_random(TESSERA_F64, a, m, n, m, &r);
  a[3 + 6 * m] = NAN;
  dist_expect(ctx, "gepolar NaN",
              tessera_gepolar(ctx, TESSERA_F64, m, n, g_rank == 0 ? a : NULL, m,
                              g_rank == 0 ? h : NULL, n, NULL),
              7);
  lc_assert_error(ctx);
  dist_expect(ctx, "gepolar wide",
              tessera_gepolar(ctx, TESSERA_F64, 5, 9, g_rank == 0 ? a : NULL, 5, NULL, 9, NULL),
              -4);
  free(a);
  assert_int_equal(tessera_finalize(ctx), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gepolar_processes), cmocka_unit_test(test_tile_gepolar_processes),
      cmocka_unit_test(test_on_devices),        cmocka_unit_test(test_nan_and_args),
      cmocka_unit_test(test_gesvd_processes),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
