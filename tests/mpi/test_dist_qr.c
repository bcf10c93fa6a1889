/* Householder QR over processes. Tile level: every process runs tile geqrf (then tile gels on
 * tall matrices) alike on column
 * panels dealt over every grid the process count allows (by the grid's first row), each running
 * the tasks that write its panels; the factors put together from every process's panels and the
 * tau every process gets have the residual and orthogonality of the one-process routine, tau
 * is the same on every process, for every dtype, square, tall and wide matrices and sizes that
 * are not tile multiples; square tiles go through a distributed copy in panels; Q from the right,
 * ungqr and the minimum norm gels of a wide matrix, on every grid. LAPACK-style,
 * the arrays on process 0 only: geqrf, ungqr, unmqr from both sides and gels (tall and wide)
 * against LAPACK. The tile cases on simulated devices or a GPU per process too. */
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
#include "dist_common.h"
#include <tessera/distribution.h>

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

/* The whole of the distributed M (rows x cols) on every process: each one's tiles, summed. */
static void gather(tessera_context_t *ctx, tessera_matrix_t *M, tessera_dtype_t dt, void *x,
                   int64_t rows, int64_t cols) {
  const size_t count = (size_t)(rows * cols);
  memset(x, 0, count * lc_esize(dt));
  fail_rc(ctx, "export", tessera_matrix_export(M, x, rows));
  fail_rc(ctx, "allreduce",
          tessera_comm_allreduce(g_comm, x, x, count, (tessera_comm_type_t)dt, TESSERA_SUM, NULL));
}

/* A matrix rows x cols on grid g in nb x nb tiles, x (rows x cols, ld rows) imported. */
static tessera_matrix_t *distributed(tessera_grid_t g, tessera_dtype_t dt, int64_t rows,
                                     int64_t cols, int64_t nb, const void *x) {
  tessera_matrix_t *M = NULL;
  fail_rc(g_ctx, "create",
          tessera_matrix_create_distributed(g_ctx, g_comm, g, dt, rows, cols, nb, nb, &M));
  fail_rc(g_ctx, "import", tessera_matrix_import(M, x, rows));
  return M;
}

/* ‖X‖_F / ‖Y‖_F relative: ‖X - Y‖_F / ‖Y‖_F for the count elements (promoted). */
static double fro_diff(const zc_t *x, const zc_t *y, size_t count) {
  double d = 0, s = 0;
  for (size_t i = 0; i < count; i++) d += pow(cabs(x[i] - y[i]), 2), s += pow(cabs(y[i]), 2);
  return s > 0 ? sqrt(d / s) : sqrt(d);
}

/* Tile level over processes on every grid, square tiles: C Q then C Q Qᴴ back (Q from the right
 * through a distributed copy of Cᴴ); ungqr's Q orthonormal with Q R = A; the minimum norm gels
 * of a wide matrix solving A x = b. */
static void test_tile_right_ungqr_wide(void **state) {
  (void)state;
  const int64_t m = 37, n = 21, rows = 5, nrhs = 2, nb = 8;
  const tessera_dtype_t dts[2] = {TESSERA_F64, TESSERA_C128};
  for (int p = 1; p <= g_size; p++) {
    if (g_size % p) continue;
    const tessera_grid_t g = {p, g_size / p};
    for (int d = 0; d < 2; d++) {
      const tessera_dtype_t dt = dts[d];
      tt_rng_t r = tt_rng((uint64_t)(300 + 10 * p + d));
      void *a = lc_alloc(dt, (size_t)(m * n)), *c = lc_alloc(dt, (size_t)(rows * m));
      void *tau = lc_alloc(dt, (size_t)n), *q = lc_alloc(dt, (size_t)(m * n));
      lc_fill_random(dt, a, m, n, m, &r);
      lc_fill_random(dt, c, rows, m, rows, &r);
      zc_t *az = lc_promote(dt, m, n, a, m), *cz = lc_promote(dt, rows, m, c, rows);
      tessera_matrix_t *A = distributed(g, dt, m, n, nb, a);
      fail_rc(g_ctx, "tile_geqrf", tessera_tile_geqrf(A, tau));
      tessera_matrix_t *C = distributed(g, dt, rows, m, nb, c);
      fail_rc(g_ctx, "tile_unmqr right",
              tessera_tile_unmqr(TESSERA_RIGHT, TESSERA_NOTRANS, A, tau, C));
      fail_rc(g_ctx, "tile_unmqr right",
              tessera_tile_unmqr(TESSERA_RIGHT, TESSERA_CONJTRANS, A, tau, C));
      gather(g_ctx, C, dt, c, rows, m);
      zc_t *back = lc_promote(dt, rows, m, c, rows);
      if (!(fro_diff(back, cz, (size_t)(rows * m)) < 1e3 * lc_eps(dt)))
        fail_msg("process %d: %dx%d %s: C Q Qᴴ differs from C by %g", g_rank, g.p, g.q, lc_name(dt),
                 fro_diff(back, cz, (size_t)(rows * m)));
      /* ungqr on a copy of the factors: Q R = A, Qᴴ Q = I */
      gather(g_ctx, A, dt, q, m, n);
      zc_t *rz = lc_zalloc((size_t)(n * n));
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i <= j; i++) rz[i + j * n] = lc_get(dt, q, (size_t)(i + j * m));
      fail_rc(g_ctx, "tile_ungqr", tessera_tile_ungqr(A, n, tau));
      gather(g_ctx, A, dt, q, m, n);
      zc_t *qz = lc_promote(dt, m, n, q, m), *qr = lc_zalloc((size_t)(m * n));
      const zc_t one = 1.0, zero = 0.0;
      cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)n, &one, qz,
                  (int)m, rz, (int)n, &zero, qr, (int)m);
      if (!(fro_diff(qr, az, (size_t)(m * n)) < 1e3 * lc_eps(dt)))
        fail_msg("process %d: %dx%d %s: tile_ungqr's Q R differs from A by %g", g_rank, g.p, g.q,
                 lc_name(dt), fro_diff(qr, az, (size_t)(m * n)));
      tessera_matrix_destroy(C);
      tessera_matrix_destroy(A);
      /* a wide W (n x m): W x = b(1 .. n) */
      void *w = lc_alloc(dt, (size_t)(n * m)), *b = lc_alloc(dt, (size_t)(m * nrhs));
      lc_fill_random(dt, w, n, m, n, &r);
      lc_fill_random(dt, b, m, nrhs, m, &r);
      zc_t *wz = lc_promote(dt, n, m, w, n), *bz = lc_promote(dt, n, nrhs, b, m);
      tessera_matrix_t *W = distributed(g, dt, n, m, nb, w),
                       *B = distributed(g, dt, m, nrhs, nb, b);
      fail_rc(g_ctx, "tile_gels wide", tessera_tile_gels(W, B));
      gather(g_ctx, B, dt, b, m, nrhs);
      zc_t *xz = lc_promote(dt, m, nrhs, b, m), *wx = lc_zalloc((size_t)(n * nrhs));
      cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)nrhs, (int)m, &one, wz,
                  (int)n, xz, (int)m, &zero, wx, (int)n);
      if (!(fro_diff(wx, bz, (size_t)(n * nrhs)) < 1e4 * lc_eps(dt)))
        fail_msg("process %d: %dx%d %s: tile_gels wide: W x differs from b by %g", g_rank, g.p, g.q,
                 lc_name(dt), fro_diff(wx, bz, (size_t)(n * nrhs)));
      tessera_matrix_destroy(B);
      tessera_matrix_destroy(W);
      free(a), free(c), free(tau), free(q), free(az), free(cz), free(back), free(rz), free(qz);
      free(qr), free(w), free(b), free(wz), free(bz), free(xz), free(wx);
    }
  }
}

/* max |x - y| / max |y| over the m x n blocks of ld rows. */
static double rel_diff(tessera_dtype_t dt, int64_t m, int64_t n, const void *x, const void *y,
                       int64_t ld) {
  double d = 0, s = 0;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++) {
      const zc_t a = lc_get(dt, x, (size_t)(i + j * ld)), b = lc_get(dt, y, (size_t)(i + j * ld));
      d = fmax(d, cabs(a - b)), s = fmax(s, cabs(b));
    }
  return s > 0 ? d / s : d;
}

/* The LAPACK-style calls on a context over the processes, arrays on process 0 only: geqrf's
 * residual and orthogonality, ungqr and unmqr (both sides) against LAPACK's ungqr and products
 * with its Q, gels (tall and wide) against LAPACK's gels. */
static void test_lapack_qr(void **state) {
  (void)state;
  const bool root = g_rank == 0;
  tessera_context_t *ctx = lapack_context(8);
  const int64_t m = 45, n = 29;
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++) {
    const tessera_dtype_t dt = lc_dtypes[d];
    const double tol = dt == TESSERA_F32 || dt == TESSERA_C64 ? 5e-3 : 1e-9;
    const size_t es = lc_esize(dt);
    tt_rng_t r = tt_rng((uint64_t)(70 + d));
    void *a = lc_alloc(dt, (size_t)(m * n)), *c = lc_alloc(dt, (size_t)(m * 3));
    lc_fill_random(dt, a, m, n, m, &r);
    lc_fill_random(dt, c, m, 3, m, &r);
    zc_t *full = lc_promote(dt, m, n, a, m);
    void *f = root ? lc_dup(dt, a, (size_t)(m * n)) : NULL,
         *tau = root ? lc_alloc(dt, (size_t)n) : NULL;
    fail_rc(ctx, "geqrf", tessera_geqrf(ctx, dt, m, n, f, m, tau));
    void *q = root ? lc_dup(dt, f, (size_t)(m * n)) : NULL;
    fail_rc(ctx, "ungqr", tessera_ungqr(ctx, dt, m, n, n, q, m, tau));
    void *y = root ? lc_dup(dt, c, (size_t)(m * 3)) : NULL;
    fail_rc(ctx, "unmqr",
            tessera_unmqr(ctx, TESSERA_LEFT, TESSERA_CONJTRANS, dt, m, 3, n, f, m, tau, y, m));
    void *z = root ? lc_dup(dt, c, (size_t)(3 * m)) : NULL; /* 3 x m: C op(Q) from the right */
    fail_rc(ctx, "unmqr",
            tessera_unmqr(ctx, TESSERA_RIGHT, TESSERA_NOTRANS, dt, 3, m, n, f, m, tau, z, 3));
    if (root) {
      qr_check(dt, m, n, full, f, m, tau, "geqrf over processes");
      void *want = lc_dup(dt, f, (size_t)(m * n));
      assert_int_equal(qr_lapack_ungqr(dt, m, n, n, want, m, tau), 0);
      if (!(rel_diff(dt, m, n, q, want, m) <= tol)) fail_msg("%s ungqr differs", lc_name(dt));
      /* Qᴴ C and C Q with LAPACK's whole Q */
      void *qq = lc_alloc(dt, (size_t)(m * m));
      memcpy(qq, f, (size_t)(m * n) * es);
      assert_int_equal(qr_lapack_ungqr(dt, m, m, n, qq, m, tau), 0);
      zc_t *Q = lc_promote(dt, m, m, qq, m), *C = lc_promote(dt, m, 3, c, m);
      zc_t *C3 = lc_promote(dt, 3, m, c, 3), *w1 = lc_zalloc((size_t)(m * 3)),
           *w2 = lc_zalloc((size_t)(3 * m));
      const zc_t one = 1.0, zero = 0.0;
      cblas_zgemm(CblasColMajor, CblasConjTrans, CblasNoTrans, (int)m, 3, (int)m, &one, Q, (int)m,
                  C, (int)m, &zero, w1, (int)m);
      cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 3, (int)m, (int)m, &one, C3, 3, Q,
                  (int)m, &zero, w2, 3);
      zc_t *g1 = lc_promote(dt, m, 3, y, m), *g2 = lc_promote(dt, 3, m, z, 3);
      double e1 = 0, e2 = 0, s1 = 0, s2 = 0;
      for (int64_t i = 0; i < m * 3; i++)
        e1 = fmax(e1, cabs(g1[i] - w1[i])), s1 = fmax(s1, cabs(w1[i])),
        e2 = fmax(e2, cabs(g2[i] - w2[i])), s2 = fmax(s2, cabs(w2[i]));
      if (!(e1 <= tol * s1) || !(e2 <= tol * s2))
        fail_msg("%s unmqr over processes: differences %g, %g", lc_name(dt), e1 / s1, e2 / s2);
      free(want), free(qq), free(Q), free(C), free(C3), free(w1), free(w2), free(g1), free(g2);
    }
    /* gels, tall then wide, against LAPACK's */
    for (int wide = 0; wide < 2; wide++) {
      const int64_t rows = wide ? n : m, cols = wide ? m : n, ldb = m;
      void *g = root ? lc_dup(dt, a, (size_t)(m * n)) : NULL; /* rows x cols, ld rows */
      void *b = root ? lc_dup(dt, c, (size_t)(m * 3)) : NULL;
      fail_rc(ctx, "gels", tessera_gels(ctx, dt, rows, cols, 3, g, rows, b, ldb));
      if (root) {
        void *g2 = lc_dup(dt, a, (size_t)(m * n)), *b2 = lc_dup(dt, c, (size_t)(m * 3));
        int info = 0;
        switch (dt) {
        case TESSERA_F32:
          info = LAPACKE_sgels(LAPACK_COL_MAJOR, 'N', (int)rows, (int)cols, 3, g2, (int)rows, b2,
                               (int)ldb);
          break;
        case TESSERA_F64:
          info = LAPACKE_dgels(LAPACK_COL_MAJOR, 'N', (int)rows, (int)cols, 3, g2, (int)rows, b2,
                               (int)ldb);
          break;
        case TESSERA_C64:
          info = LAPACKE_cgels(LAPACK_COL_MAJOR, 'N', (int)rows, (int)cols, 3, g2, (int)rows, b2,
                               (int)ldb);
          break;
        default:
          info = LAPACKE_zgels(LAPACK_COL_MAJOR, 'N', (int)rows, (int)cols, 3, g2, (int)rows, b2,
                               (int)ldb);
          break;
        }
        assert_int_equal(info, 0);
        const double e = rel_diff(dt, cols, 3, b, b2, ldb);
        if (!(e <= 50 * tol))
          fail_msg("%s gels (%s) over processes: difference %g", lc_name(dt),
                   wide ? "wide" : "tall", e);
        free(g2), free(b2);
      }
      free(g), free(b);
    }
    free(a), free(c), free(full), free(f), free(tau), free(q), free(y), free(z);
  }
  assert_int_equal(tessera_finalize(ctx), 0);
}

static void test_on_devices(void **state) {
  (void)state;
  on_devices(1, tile_cases, 16);
}

int main(int argc, char **argv) {
  own_gpu();
  if (mpi_start(&argc, &argv)) return 2;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tile_qr), cmocka_unit_test(test_tile_right_ungqr_wide),
      cmocka_unit_test(test_lapack_qr), cmocka_unit_test(test_on_devices)};
  return mpi_finish(cmocka_run_group_tests(tests, cpu_group_setup, cpu_group_teardown));
}
