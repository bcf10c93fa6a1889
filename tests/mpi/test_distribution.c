/* 2D block-cyclic distribution (tessera/distribution.h): NUMROC against a count by hand, scatter
 * from a root's LAPACK-style array into every process's local array and gather back, on every
 * grid the process count allows (1 x s, s x 1, and 2 x 2 with 4), every dtype, sizes that are
 * not block multiples and empty ones, every root; arguments that differ across processes, or are
 * bad on one process, fail on all of them with the same status; tessera_agree and
 * tessera_agree_values, the agreement a caller's own collective calls use. */
/* ctest-label: mpi */
/* ctest-mpi-procs: 1 2 3 4 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "mpi_common.h"
#include <tessera/distribution.h>

/* Element (i, j) of the test matrix as real slots: re = i + 1000 j (+ `bump`), im = -(i + j). */
static double entry(int64_t i, int64_t j, int imag, double bump) {
  return imag ? -(double)(i + j) : (double)(i + 1000 * j) + bump;
}

static void fill_global(tessera_dtype_t dt, void *a, int64_t m, int64_t n, int64_t lda) {
  const int cplx = tessera_dtype_is_complex(dt);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++)
      for (int s = 0; s <= cplx; s++)
        put_scalar((tessera_comm_type_t)dt, a, (size_t)((i + j * lda) * (1 + cplx) + s),
                   entry(i, j, s, 0));
}

/* Checks (or, with `scale`, doubles) every local element against the entry it stands for. */
static void walk_local(tessera_dtype_t dt, void *loc, int64_t lld, tessera_grid_t g, int64_t m,
                       int64_t n, int64_t mb, int64_t nb, int scale) {
  int row, col;
  tessera_grid_coords(g, g_rank, &row, &col);
  const int64_t lr = tessera_numroc(m, mb, row, g.p), lc = tessera_numroc(n, nb, col, g.q);
  const int cplx = tessera_dtype_is_complex(dt);
  const tessera_comm_type_t t = (tessera_comm_type_t)dt;
  for (int64_t jl = 0; jl < lc; jl++)
    for (int64_t il = 0; il < lr; il++) {
      const int64_t i = (il / mb * g.p + row) * mb + il % mb;
      const int64_t j = (jl / nb * g.q + col) * nb + jl % nb;
      for (int s = 0; s <= cplx; s++) {
        const size_t k = (size_t)((il + jl * lld) * (1 + cplx) + s);
        if (scale) {
          put_scalar(t, loc, k, 2 * get_scalar(t, loc, k));
        } else if (get_scalar(t, loc, k) != entry(i, j, s, 0)) {
          fail_msg("rank %d, %s: local (%lld, %lld) = global (%lld, %lld) holds %g", g_rank,
                   tessera_dtype_name(dt), (long long)il, (long long)jl, (long long)i, (long long)j,
                   get_scalar(t, loc, k));
        }
      }
    }
}

/* NUMROC: the blocks of every coordinate add up to n, and each holds what a count by hand gives. */
static void test_numroc(void **state) {
  (void)state;
  for (int64_t n = 0; n < 40; n++)
    for (int64_t nb = 1; nb < 7; nb++)
      for (int procs = 1; procs < 5; procs++) {
        int64_t total = 0;
        for (int c = 0; c < procs; c++) {
          int64_t mine = 0;
          for (int64_t i = 0; i < n; i++) mine += (i / nb) % procs == c;
          assert_int_equal(tessera_numroc(n, nb, c, procs), mine);
          total += mine;
        }
        assert_int_equal(total, n);
      }
  assert_int_equal(tessera_numroc(-1, 2, 0, 1), 0);
  assert_int_equal(tessera_numroc(5, 0, 0, 1), 0);
  assert_int_equal(tessera_numroc(5, 2, 3, 2), 0);
}

/* Scatter then gather, the local parts doubled in between, on every grid, dtype, shape and root. */
static void test_scatter_gather(void **state) {
  (void)state;
  const int64_t shapes[][4] = {{37, 29, 4, 5}, {8, 8, 4, 4},  {1, 1, 3, 2},
                               {0, 5, 2, 2},   {13, 0, 2, 2}, {5, 40, 7, 3}};
  for (int p = 1; p <= g_size; p++) {
    if (g_size % p) continue;
    const tessera_grid_t g = {p, g_size / p};
    int row, col;
    tessera_grid_coords(g, g_rank, &row, &col);
    for (int dt = 0; dt < TESSERA_NUM_DTYPES; dt++)
      for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int root = 0; root<g_size; root += g_size> 1 ? g_size - 1 : 1) {
          const int64_t m = shapes[s][0], n = shapes[s][1], mb = shapes[s][2], nb = shapes[s][3];
          const size_t es = tessera_dtype_size((tessera_dtype_t)dt);
          const int64_t lda = m + 2, lr = tessera_numroc(m, mb, row, g.p);
          const int64_t lc = tessera_numroc(n, nb, col, g.q), lld = lr + 1;
          char *a = g_rank == root ? calloc((size_t)(lda * (n ? n : 1)), es) : NULL;
          char *loc = calloc((size_t)(lld * (lc ? lc : 1)), es);
          if (a) fill_global((tessera_dtype_t)dt, a, m, n, lda);
          int rc = tessera_scatter_2d(g_comm, g, (tessera_dtype_t)dt, m, n, mb, nb, root, a, lda,
                                      loc, lld);
          if (rc) fail_msg("scatter: %d (%s)", rc, tessera_comm_last_error(g_comm));
          walk_local((tessera_dtype_t)dt, loc, lld, g, m, n, mb, nb, 0);
          walk_local((tessera_dtype_t)dt, loc, lld, g, m, n, mb, nb, 1);
          rc = tessera_gather_2d(g_comm, g, (tessera_dtype_t)dt, m, n, mb, nb, root, a, lda, loc,
                                 lld);
          if (rc) fail_msg("gather: %d (%s)", rc, tessera_comm_last_error(g_comm));
          const int cplx = tessera_dtype_is_complex((tessera_dtype_t)dt);
          for (int64_t j = 0; a && j < n; j++)
            for (int64_t i = 0; i < m; i++)
              for (int c = 0; c <= cplx; c++) {
                double got = get_scalar((tessera_comm_type_t)dt, a,
                                        (size_t)((i + j * lda) * (1 + cplx) + c));
                if (got != 2 * entry(i, j, c, 0))
                  fail_msg("gather %s %dx%d: (%lld, %lld) holds %g", tessera_dtype_name(dt), g.p,
                           g.q, (long long)i, (long long)j, got);
              }
          free(a);
          free(loc);
        }
  }
}

/* ScaLAPACK's entry: the local arrays tessera_scatter_2d leaves, imported into a distributed
 * matrix, hold what importing the whole array gives (this process's tiles, exported whole), and
 * export_local gives them back; every grid, a real and a complex dtype, empty and ragged
 * shapes; argument errors are the same on every process. */
static void test_local_entry(void **state) {
  (void)state;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 1;
  cfg.gpus = 0;
  tessera_context_t *ctx = NULL;
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  const int64_t shapes[][4] = {
      {37, 29, 4, 5}, {8, 8, 4, 4}, {1, 1, 3, 2}, {0, 5, 2, 2}, {5, 40, 7, 3}};
  const tessera_dtype_t dts[] = {TESSERA_F64, TESSERA_C64};
  for (int p = 1; p <= g_size; p++) {
    if (g_size % p) continue;
    const tessera_grid_t g = {p, g_size / p};
    int row, col;
    tessera_grid_coords(g, g_rank, &row, &col);
    for (int d = 0; d < 2; d++)
      for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int64_t m = shapes[s][0], n = shapes[s][1], mb = shapes[s][2], nb = shapes[s][3];
        const tessera_dtype_t dt = dts[d];
        const size_t es = tessera_dtype_size(dt);
        const int64_t lda = m + 2, lr = tessera_numroc(m, mb, row, g.p);
        const int64_t lc = tessera_numroc(n, nb, col, g.q), lld = lr + 1;
        char *a = calloc((size_t)(lda * (n ? n : 1)), es),
             *b = calloc((size_t)(lda * (n ? n : 1)), es);
        char *loc = calloc((size_t)(lld * (lc ? lc : 1)), es);
        char *back = calloc((size_t)(lld * (lc ? lc : 1)), es);
        fill_global(dt, a, m, n, lda);
        assert_int_equal(tessera_scatter_2d(g_comm, g, dt, m, n, mb, nb, 0, a, lda, loc, lld), 0);
        tessera_matrix_t *A = NULL;
        assert_int_equal(tessera_matrix_create_distributed(ctx, g_comm, g, dt, m, n, mb, nb, &A),
                         0);
        int rc = tessera_matrix_import_local(A, loc, lld);
        if (rc) fail_msg("import_local: %d (%s)", rc, tessera_last_error(ctx));
        assert_int_equal(tessera_matrix_export(A, b, lda), 0);
        for (int64_t j = 0; j < n; j++)
          for (int64_t i = 0; i < m; i++)
            if (tessera_grid_owner(g, i / mb, j / nb) == g_rank &&
                memcmp(a + (size_t)(i + j * lda) * es, b + (size_t)(i + j * lda) * es, es))
              fail_msg("%dx%d grid, %lld x %lld: (%lld, %lld) differs after import_local", g.p, g.q,
                       (long long)m, (long long)n, (long long)i, (long long)j);
        assert_int_equal(tessera_matrix_export_local(A, back, lld), 0);
        for (int64_t j = 0; j < lc; j++)
          if (memcmp(loc + (size_t)(j * lld) * es, back + (size_t)(j * lld) * es, (size_t)lr * es))
            fail_msg("%dx%d grid: local column %lld differs after export_local", g.p, g.q,
                     (long long)j);
        tessera_matrix_destroy(A);
        free(a), free(b), free(loc), free(back);
      }
  }
  /* errors: no matrix, one of this process alone, one process's lld too small */
  assert_int_equal(tessera_matrix_import_local(NULL, NULL, 1), -1);
  tessera_matrix_t *L = NULL, *A = NULL;
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, 4, 4, 2, 2, &L), 0);
  double x[64] = {0};
  assert_int_equal(tessera_matrix_export_local(L, x, 4), -1);
  assert_int_equal(tessera_matrix_create_distributed(ctx, g_comm, (tessera_grid_t){1, g_size},
                                                     TESSERA_F64, 8, 8, 4, 4, &A),
                   0);
  assert_int_equal(tessera_matrix_import_local(A, x, g_rank == 0 ? 0 : 8), -3);
  assert_int_equal(tessera_matrix_import_local(A, g_rank == 0 ? NULL : x, 8), -2);
  tessera_matrix_destroy(A);
  /* a matrix no host holds its part of (each process's some 180 TiB): refused at once on every
   * process, with a message, before any tile is made; and tiles of one element whose list
   * alone the host cannot hold */
  A = NULL;
  assert_int_equal(tessera_matrix_create_distributed(ctx, g_comm, (tessera_grid_t){1, g_size},
                                                     TESSERA_F64, 5000000, 5000000, 4096, 4096, &A),
                   TESSERA_ERR_NOMEM);
  assert_null(A);
  assert_non_null(strstr(tessera_last_error(ctx), "host memory"));
  assert_int_equal(tessera_matrix_create_distributed(ctx, g_comm, (tessera_grid_t){1, g_size},
                                                     TESSERA_F64, INT64_MAX / 2, 3, 1, 1, &A),
                   TESSERA_ERR_NOMEM);
  assert_null(A);
  tessera_matrix_destroy(L);
  assert_int_equal(tessera_finalize(ctx), 0);
}

/* Arguments that differ across processes, or one process's bad argument: the same status on all,
 * with a message, and nobody left waiting. */
static void test_mismatch(void **state) {
  (void)state;
  const tessera_grid_t g = {1, g_size};
  double a[64] = {0}, loc[64] = {0};
  const int64_t n = g_rank == 0 && g_size > 1 ? 9 : 8;
  int rc = tessera_scatter_2d(g_comm, g, TESSERA_F64, 8, n, 2, 2, 0, a, 8, loc, 8);
  assert_int_equal(rc, g_size > 1 ? -5 : 0);
  if (g_size > 1) assert_true(strlen(tessera_comm_last_error(g_comm)) > 0);
  /* the last process's lld is too small (it holds 8 rows) */
  const int64_t lld = g_rank == g_size - 1 ? 4 : 8;
  rc = tessera_scatter_2d(g_comm, g, TESSERA_F64, 8, 8, 2, 2, 0, a, 8, loc, lld);
  assert_int_equal(rc, -12);
  rc = tessera_gather_2d(g_comm, (tessera_grid_t){g_size + 1, 1}, TESSERA_F64, 8, 8, 2, 2, 0, a, 8,
                         loc, 8);
  assert_int_equal(rc, -2);
  assert_int_equal(tessera_scatter_2d(NULL, g, TESSERA_F64, 8, 8, 2, 2, 0, a, 8, loc, 8), -1);
  /* and the communicator still works */
  assert_int_equal(tessera_scatter_2d(g_comm, g, TESSERA_F64, 8, 8, 2, 2, 0, a, 8, loc, 8), 0);
}

/* The same status on every process: the lowest negative, else the lowest positive, else 0; the
 * first value that differs across the processes, with the lowest negative status folded in. */
static void test_agree(void **state) {
  (void)state;
  const int last = g_size - 1;
  int st = g_rank == last ? 3 : 0; /* a positive status on one process: every one takes it */
  assert_int_equal(tessera_agree(g_comm, &st), 0);
  assert_int_equal(st, 3);
  st = g_rank == 0 ? 5 : g_rank == last ? -7 : 2; /* a negative one wins */
  assert_int_equal(tessera_agree(g_comm, &st), 0);
  assert_int_equal(st, g_size > 1 ? -7 : 5);
  st = 0;
  assert_int_equal(tessera_agree(g_comm, &st), 0);
  assert_int_equal(st, 0);
  assert_int_equal(tessera_agree(NULL, &st), -1);
  assert_int_equal(tessera_agree(g_comm, NULL), -2);

  const int64_t same[3] = {4, -9, 1LL << 40};
  int differs = 99;
  st = g_rank == last ? -4 : 0;
  assert_int_equal(tessera_agree_values(g_comm, 3, same, &differs, &st), 0);
  assert_int_equal(differs, -1);
  assert_int_equal(st, -4);
  const int64_t other[3] = {4, g_rank == last ? -8 : -9, g_rank == 0 ? 0 : 1};
  st = 0;
  assert_int_equal(tessera_agree_values(g_comm, 3, other, &differs, &st), 0);
  assert_int_equal(differs, g_size > 1 ? 1 : -1);
  assert_int_equal(st, 0);
  assert_int_equal(tessera_agree_values(g_comm, 0, NULL, &differs, &st), 0);
  assert_int_equal(differs, -1);
  assert_int_equal(tessera_agree_values(g_comm, 17, same, &differs, &st), -2);
}

int main(int argc, char **argv) {
  if (mpi_start(&argc, &argv)) return 2;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_numroc),
                                     cmocka_unit_test(test_scatter_gather),
                                     cmocka_unit_test(test_local_entry),
                                     cmocka_unit_test(test_mismatch), cmocka_unit_test(test_agree)};
  return mpi_finish(cmocka_run_group_tests(tests, group_setup, group_teardown));
}
