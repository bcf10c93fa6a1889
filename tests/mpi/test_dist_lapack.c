/* LAPACK-style calls on a context over processes (tessera_config_t.distributed): the arrays on
 * process 0 only (NULL on the others), every call made alike on every process, for every grid
 * the process count allows, every dtype and both triangles, sizes 0, 1 and not tile multiples:
 * posv, potrf, potrs, potri and logdet have the residuals of the one-process routines and leave
 * the other triangle alone; gemm, trsm, syrk and herk equal the same calls on a context of
 * process 0 alone; a matrix that is not positive definite (or holds NaN) gives LAPACK's info
 * and the same message on every process; a bad argument on one process, or one that differs
 * across them, fails on all of them; the context's grid comes from the configuration or
 * TESSERA_GRID, and a grid that does not fit the processes is refused at tessera_init. */
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
#include "dist_common.h"
#include <tessera/distribution.h>

static tessera_context_t *g_local; /* process 0's reference: a context of its own */

/* A distributed context on the grid p x q (p = 0: from the environment, else automatic). */
static void close_ctx(tessera_context_t *ctx) {
  assert_int_equal(tessera_finalize(ctx), 0);
}

/* The status of a call on every process is `want`. */
/* posv, then potrf + logdet + potri, then potrs with that factor, of one random HPD matrix of
 * order n on process 0 (the other triangle NaN: never read, never written). */
static void cholesky_family(tessera_context_t *ctx, tessera_dtype_t dt, tessera_uplo_t uplo,
                            int64_t n, unsigned seed) {
  const bool root = g_rank == 0;
  if (n < 0 || n > 4096) return; /* (sizes of this file only) */
  const int64_t nrhs = 3, lda = n + 2;
  const size_t es = lc_esize(dt), asz = (size_t)(lda * (n ? n : 1)), bsz = (size_t)(lda * nrhs);
  void *a = NULL, *b = NULL, *a0 = NULL, *b0 = NULL;
  zc_t *full = NULL, *bz = NULL;
  if (root) {
    tt_rng_t r = tt_rng(seed);
    a = lc_alloc(dt, asz);
    b = lc_alloc(dt, bsz);
    full = lc_gen_hpd(dt, uplo, n, a, lda, &r);
    lc_fill_random(dt, b, n, nrhs, lda, &r);
    bz = lc_promote(dt, n, nrhs, b, lda);
    a0 = lc_dup(dt, a, asz);
    b0 = lc_dup(dt, b, bsz);
  }
  dist_expect(ctx, "posv", tessera_posv(ctx, uplo, dt, n, nrhs, a, lda, b, lda), 0);
  if (root) {
    const double rf = lc_potrf_resid(dt, uplo, n, full, a, lda);
    const double rs = lc_solve_resid(dt, n, nrhs, full, b, lda, bz);
    if (!(rf < 10) || !(rs < 10))
      fail_msg("posv %s %c n=%lld: residuals %g (factor) %g (solve)", lc_name(dt), (char)uplo,
               (long long)n, rf, rs);
    assert_int_equal(lc_diff_outside(dt, uplo, n, n, a, a0, lda), 0);
    memcpy(a, a0, asz * es);
    memcpy(b, b0, bsz * es);
  }
  dist_expect(ctx, "potrf", tessera_potrf(ctx, uplo, dt, n, a, lda), 0);
  double logdet = NAN;
  dist_expect(ctx, "logdet", tessera_logdet(ctx, uplo, dt, n, a, lda, &logdet), 0);
  dist_expect(ctx, "potrs", tessera_potrs(ctx, uplo, dt, n, nrhs, a, lda, b, lda), 0);
  double ref = 0;
  if (root) {
    for (int64_t i = 0; i < n; i++) ref += 2 * log(creal(lc_get(dt, a, (size_t)(i + i * lda))));
    if (!(lc_solve_resid(dt, n, nrhs, full, b, lda, bz) < 10))
      fail_msg("potrs %s %c n=%lld: residual", lc_name(dt), (char)uplo, (long long)n);
  }
  assert_int_equal(tessera_comm_broadcast(g_comm, &ref, 1, TESSERA_COMM_F64, 0, NULL), 0);
  if (!(fabs(logdet - ref) <= 1e-10 * (1 + fabs(ref))))
    fail_msg("process %d: logdet %.17g, the factor's diagonal gives %.17g", g_rank, logdet, ref);
  dist_expect(ctx, "potri", tessera_potri(ctx, uplo, dt, n, a, lda), 0);
  if (root && n > 0) {
    zc_t *x = lc_full_from_triangle(dt, uplo, n, a, lda);
    const double res = lc_inverse_resid(dt, n, full, x);
    if (!(res < 10))
      fail_msg("potri %s %c n=%lld: residual %g", lc_name(dt), (char)uplo, (long long)n, res);
    assert_int_equal(lc_diff_outside(dt, uplo, n, n, a, a0, lda), 0);
    free(x);
  }
  free(a), free(b), free(a0), free(b0), free(full), free(bz);
}

static void test_cholesky_family(void **state) {
  (void)state;
  const int64_t nb = 8, sizes[] = {0, 1, nb - 1, 3 * nb + 5};
  unsigned seed = 1;
  for (int p = 1; p <= g_size; p++) {
    if (g_size % p) continue;
    tessera_context_t *ctx = dist_context(p, g_size / p, nb);
    const tessera_grid_t g = tessera_context_grid(ctx);
    assert_int_equal(g.p, p);
    assert_int_equal(g.q, g_size / p);
    assert_non_null(tessera_context_comm(ctx));
    for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
      for (int u = 0; u < 2; u++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
          cholesky_family(ctx, lc_dtypes[d], lc_uplos[u], sizes[k], seed++);
    close_ctx(ctx);
  }
}

/* max |x - y| / max(1, max |y|) over the rows x cols block (leading dimension ld). */
static double rel_diff(tessera_dtype_t dt, const void *x, const void *y, int64_t rows, int64_t cols,
                       int64_t ld) {
  double num = 0, den = 1;
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++) {
      const size_t at = (size_t)(i + j * ld);
      const double e = cabs(lc_get(dt, x, at) - lc_get(dt, y, at)), v = cabs(lc_get(dt, y, at));
      num = e > num ? e : num;
      den = v > den ? v : den;
    }
  return num / den;
}

/* gemm, trsm, syrk, herk distributed from process 0's arrays equal the same calls on process 0's
 * own context. */
static void blas3(tessera_context_t *ctx, tessera_dtype_t dt, int64_t m, int64_t n, int64_t k,
                  unsigned seed) {
  const bool root = g_rank == 0;
  const int64_t ld = (m > n ? (m > k ? m : k) : (n > k ? n : k)) + 1;
  const size_t sz = (size_t)(ld * ld), es = lc_esize(dt);
  void *a = NULL, *b = NULL, *c = NULL, *c0 = NULL;
  if (root) {
    tt_rng_t r = tt_rng(seed);
    a = lc_alloc(dt, sz), b = lc_alloc(dt, sz), c = lc_alloc(dt, sz);
    lc_fill_random(dt, a, ld, ld, ld, &r);
    lc_fill_random(dt, b, ld, ld, ld, &r);
    lc_fill_random(dt, c, ld, ld, ld, &r);
    for (int64_t i = 0; i < ld; i++) /* a well-conditioned triangle for trsm */
      lc_set(dt, a, (size_t)(i + i * ld), CMPLX(4.0 + (double)ld, 0));
    c0 = lc_dup(dt, c, sz);
  }
  /* alpha and beta differ off the root: the root's are the call's */
  const double al[2] = {root ? 1.5 : 99, root ? -0.5 : 99}, be[2] = {root ? 0.5 : 99, 0};
  const double tol = 100 * lc_eps(dt) * (double)(ld + 1);
  for (int op = 0; op < 4; op++) {
    int rc, want = 0;
    const char *name = op == 0 ? "gemm" : op == 1 ? "trsm" : op == 2 ? "syrk" : "herk";
    if (op == 3 && !lc_is_complex(dt)) continue;
    void *ref = root ? lc_dup(dt, c0, sz) : NULL;
    if (root) memcpy(c, c0, sz * es);
    for (int pass = 0; pass < 2; pass++) { /* the distributed call, then the reference */
      tessera_context_t *x = pass ? g_local : ctx;
      void *out = pass ? ref : c;
      if (pass && !root) break;
      void *pa = root ? a : NULL, *pb = root ? b : NULL;
      float alf[2] = {(float)al[0], (float)al[1]}, bef[2] = {(float)be[0], (float)be[1]};
      const void *pal = lc_eps(dt) > 1e-10 ? (const void *)alf : (const void *)al;
      const void *pbe = lc_eps(dt) > 1e-10 ? (const void *)bef : (const void *)be;
      if (op == 0)
        rc = tessera_gemm(x, TESSERA_NOTRANS, TESSERA_CONJTRANS, dt, m, n, k, pal, pa, ld, pb, ld,
                          pbe, out, ld);
      else if (op == 1)
        rc = tessera_trsm(x, TESSERA_LEFT, TESSERA_UPPER, TESSERA_TRANS, TESSERA_NONUNIT, dt, m, n,
                          pal, pa, ld, out, ld);
      else if (op == 2)
        rc = tessera_syrk(x, TESSERA_LOWER, TESSERA_NOTRANS, dt, n, k, pal, pa, ld, pbe, out, ld);
      else
        rc = tessera_herk(x, TESSERA_UPPER, TESSERA_CONJTRANS, dt, n, k, root ? 2.0 : 7.0, pa, ld,
                          root ? 0.5 : 3.0, out, ld);
      dist_expect(x, name, rc, want);
    }
    if (root) {
      const double d = rel_diff(dt, c, ref, ld, ld, ld);
      if (!(d <= tol))
        fail_msg("%s %s m=%lld n=%lld k=%lld: distributed and local differ by %g (bound %g)", name,
                 lc_name(dt), (long long)m, (long long)n, (long long)k, d, tol);
    }
    free(ref);
  }
  free(a), free(b), free(c), free(c0);
}

static void test_blas3(void **state) {
  (void)state;
  tessera_context_t *ctx = dist_context(0, 0, 8); /* the squarest grid */
  unsigned seed = 300;
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++) {
    blas3(ctx, lc_dtypes[d], 21, 13, 17, seed++);
    blas3(ctx, lc_dtypes[d], 1, 9, 0, seed++);
  }
  close_ctx(ctx);
}

/* Not positive definite at order 20, then NaN at order 11: LAPACK's info and the same message on
 * every process, the partial factor on process 0 as LAPACK leaves it. */
static void test_info(void **state) {
  (void)state;
  tessera_context_t *ctx = dist_context(0, 0, 8);
  const int64_t n = 32;
  double *a = NULL, *a0 = NULL, *b = NULL;
  if (g_rank == 0) {
    tt_rng_t r = tt_rng(9);
    a = malloc((size_t)(n * n) * sizeof *a), b = calloc((size_t)n, sizeof *b);
    free(lc_gen_hpd(TESSERA_F64, TESSERA_LOWER, n, a, n, &r));
    a0 = lc_dup(TESSERA_F64, a, (size_t)(n * n));
    a[19 + 19 * n] = -1;
  }
  dist_expect(ctx, "potrf", tessera_potrf(ctx, TESSERA_LOWER, TESSERA_F64, n, a, n), 20);
  assert_non_null(strstr(tessera_last_error(ctx), "not positive definite"));
  if (g_rank == 0) { /* the columns before 20 hold the partial factor, as LAPACK leaves it */
    assert_true(a[1] != a0[1]);
    memcpy(a, a0, (size_t)(n * n) * sizeof *a);
    a[10 + 10 * n] = NAN;
  }
  dist_expect(ctx, "posv", tessera_posv(ctx, TESSERA_LOWER, TESSERA_F64, n, 1, a, n, b, n), 11);
  assert_non_null(strstr(tessera_last_error(ctx), "NaN"));
  free(a), free(a0), free(b);
  close_ctx(ctx);
}

/* A bad leading dimension on process 0 alone, and an order that differs across the processes:
 * the same status on every process, and the process at fault says what it is. */
static void test_bad_arguments(void **state) {
  (void)state;
  tessera_context_t *ctx = dist_context(0, 0, 8);
  double a[16] = {4, 0, 0, 0, 0, 4, 0, 0, 0, 0, 4, 0, 0, 0, 0, 4};
  double *mine = g_rank == 0 ? a : NULL;
  dist_expect(ctx, "potrf lda 3", tessera_potrf(ctx, TESSERA_LOWER, TESSERA_F64, 4, mine, 3), -6);
  if (g_rank == 0) assert_non_null(strstr(tessera_last_error(ctx), "leading dimension"));
  const int64_t n = g_rank == g_size - 1 && g_size > 1 ? 3 : 4;
  dist_expect(ctx, "potrf n", tessera_potrf(ctx, TESSERA_LOWER, TESSERA_F64, n, mine, 4),
              g_size > 1 ? -4 : 0);
  if (g_size > 1) assert_non_null(strstr(tessera_last_error(ctx), "differs"));
  const tessera_uplo_t uplo = g_rank == 0 ? (tessera_uplo_t)'X' : TESSERA_LOWER;
  dist_expect(ctx, "potri uplo", tessera_potri(ctx, uplo, TESSERA_F64, 4, mine, 4), -2);
  close_ctx(ctx);
}

/* The grid from TESSERA_GRID, the squarest by default; a grid that is not the process count,
 * and a malformed TESSERA_GRID, refused by tessera_init on every process. */
static void test_grid_config(void **state) {
  (void)state;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 1;
  cfg.gpus = 0;
  tessera_context_t *ctx = NULL;
  setenv("TESSERA_GRID", "auto", 1); /* distributed = auto: the variable asks for it */
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  tessera_grid_t g = tessera_context_grid(ctx);
  const int want_p = g_size == 4 ? 2 : 1;
  assert_int_equal(g.p, want_p);
  assert_int_equal(g.q, g_size / want_p);
  assert_int_equal(tessera_config(ctx)->distributed, 1);
  close_ctx(ctx);
  char grid[32];
  snprintf(grid, sizeof grid, "%dx1", g_size);
  setenv("TESSERA_GRID", grid, 1);
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  g = tessera_context_grid(ctx);
  assert_int_equal(g.p, g_size);
  assert_int_equal(g.q, 1);
  close_ctx(ctx);
  setenv("TESSERA_GRID", "2y2", 1);
  assert_int_equal(tessera_init(&ctx, &cfg), TESSERA_ERR_ENV);
  assert_null(ctx);
  cfg.distributed = 0; /* malformed, refused even where it would not apply */
  assert_int_equal(tessera_init(&ctx, &cfg), TESSERA_ERR_ENV);
  setenv("TESSERA_GRID", grid, 1); /* a context of this process alone, whatever the grid */
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  assert_null(tessera_context_comm(ctx));
  close_ctx(ctx);
  unsetenv("TESSERA_GRID");
  cfg.distributed = 1;
  cfg.grid_p = g_size + 1, cfg.grid_q = 1;
  assert_int_equal(tessera_init(&ctx, &cfg), -2);
  assert_null(ctx);
}

/* The Cholesky family on the contexts' devices: simulated ones (their copies over MPI), or with
 * TESSERA_TEST_GPUS=<GPUs of the machine> a GPU of its own per local process (NCCL between
 * them). Skipped where a process has no device. */
static void test_on_devices(void **state) {
  (void)state;
  const char *env = getenv("TESSERA_TEST_GPUS");
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 1;
  cfg.tile_size = 16;
  cfg.gpu_mem_limit = 256 << 20;
  cfg.distributed = 1;
  tessera_context_t *ctx = NULL;
  if (env && atoi(env) >= g_size) {
    cfg.gpus = 1;
  } else { /* GPUs every process sees: not the processes' own, so none (simulated ones serve) */
    tessera_config_t probe = cfg;
    probe.distributed = 0;
    assert_int_equal(tessera_init(&ctx, &probe), 0);
    if (tessera_device_count(ctx, TESSERA_DEVICE_CUDA) > 0) cfg.gpus = 0;
    close_ctx(ctx);
  }
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  long mine = tessera_accelerator_count(ctx), lo = 0;
  assert_int_equal(
      tessera_comm_allreduce(g_comm, &mine, &lo, 1, TESSERA_COMM_I64, TESSERA_MIN, NULL), 0);
  if (lo == 0) {
    close_ctx(ctx);
    skip();
  }
  unsigned seed = 700;
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    cholesky_family(ctx, lc_dtypes[d], lc_uplos[d % 2], d % 2 ? 45 : 64, seed++);
  close_ctx(ctx);
}

static int setup(void **state) {
  if (group_setup(state)) return -1;
  if (g_rank != 0) return 0;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 1;
  cfg.gpus = 0;
  cfg.tile_size = 8;
  cfg.distributed = 0;
  return tessera_init(&g_local, &cfg);
}

static int teardown(void **state) {
  tessera_finalize(g_local);
  return group_teardown(state);
}

int main(int argc, char **argv) {
  own_gpu();
  if (mpi_start(&argc, &argv)) return 2;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cholesky_family), cmocka_unit_test(test_blas3),
      cmocka_unit_test(test_on_devices),      cmocka_unit_test(test_info),
      cmocka_unit_test(test_bad_arguments),   cmocka_unit_test(test_grid_config)};
  return mpi_finish(cmocka_run_group_tests(tests, setup, teardown));
}
