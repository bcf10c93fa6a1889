/* The Hermitian eigensolver over processes: tessera_syevd on a context over processes (A on
 * process 0 only, w given on some of the others and NULL on the rest) and tessera_tile_syevd on
 * a distributed descriptor, every dtype, both triangles, with vectors and values only, orders
 * 0, 1 and not tile multiples, a repeated eigenvalue with tiny and huge norms: the residual ‖A V −
 * V Λ‖ / (‖A‖ n ε), the orthogonality ‖I − Vᴴ V‖ / (n ε) and the eigenvalues against LAPACK's on
 * process 0, the same eigenvalues on every process that asked for them (the two stages forced
 * too: with vectors the back-transformations on E's column panels over the processes); on the
 * processes' devices where they have some, also in one stage on process 0's device from the tiles
 * where they are; a NaN gives the same info and message on every process, and a bad or differing
 * argument fails on all of them. tessera_syevdx's range over processes: the eigenvalues il .. iu
 * where asked, their vectors on process 0. */
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

enum { TILE = 8 };

static double eigval(tessera_dtype_t dt, const void *w, int64_t i) {
  return dt == TESSERA_F32 || dt == TESSERA_C64 ? ((const float *)w)[i] : ((const double *)w)[i];
}

/* A random Hermitian n x n (full, double complex; the same on every process for one seed). */
static zc_t *hermitian(tessera_dtype_t dt, int64_t n, uint64_t seed) {
  tt_rng_t r = tt_rng(seed);
  zc_t *h = lc_zalloc((size_t)(n * n) + 1);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = j; i < n; i++) {
      const zc_t v = lc_rand(dt, &r);
      h[i + j * n] = i == j ? creal(v) : v;
      h[j + i * n] = conj(h[i + j * n]);
    }
  return h;
}

/* The eigenvalues w (and with vectors v, n x n, ld) of the Hermitian `full` as the file's header
 * says; `what` names the call. */
static void check(tessera_dtype_t dt, tessera_job_t job, int64_t n, const zc_t *full, const void *v,
                  int64_t ld, const void *w, const char *what) {
  const double an = lc_norm_fro(full, (size_t)(n * n)), eps = lc_eps(dt);
  const double denom = (an > 0 ? an : 1) * (double)(n > 0 ? n : 1) * eps;
  double *lambda = calloc((size_t)n + 1, sizeof *lambda);
  for (int64_t i = 0; i < n; i++) lambda[i] = eigval(dt, w, i);
  const double worst = lc_eig_value_error(n, full, lambda);
  if (!(worst / denom < 10)) fail_msg("%s: eigenvalues off by %g", what, worst / denom);
  if (job == TESSERA_VECTORS && v) {
    zc_t *z = lc_promote(dt, n, n, v, ld);
    double res, orth;
    lc_eig_vector_norms(n, full, z, lambda, &res, &orth);
    res /= denom, orth /= (double)(n > 0 ? n : 1) * eps;
    if (!(res < 10) || !(orth < 10)) fail_msg("%s: residual %g, orthogonality %g", what, res, orth);
    free(z);
  }
  free(lambda);
}

/* The LAPACK-style call: A's `uplo` triangle on process 0 (the other NaN, never read), w on
 * process 0 and the odd-numbered processes. */
static void lapack_case(tessera_context_t *ctx, tessera_dtype_t dt, tessera_uplo_t uplo,
                        tessera_job_t job, int64_t n, uint64_t seed) {
  char what[128];
  snprintf(what, sizeof what, "process %d: syevd %s %c %c n %lld", g_rank, lc_name(dt), (char)uplo,
           (char)job, (long long)n);
  zc_t *full = hermitian(dt, n, seed);
  const int64_t lda = n + 3;
  void *a = NULL, *w = NULL;
  if (g_rank == 0) {
    a = lc_alloc(dt, (size_t)(lda * (n > 0 ? n : 1)));
    lc_fill_nan(dt, a, (size_t)(lda * (n > 0 ? n : 1)));
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < n; i++)
        if (lc_in_tri(uplo, i, j)) lc_set(dt, a, (size_t)(i + j * lda), full[i + j * n]);
  }
  if (g_rank == 0 || g_rank % 2) w = calloc((size_t)n + 1, sizeof(double));
  dist_expect(ctx, what, tessera_syevd(ctx, job, uplo, dt, n, a, lda, w), 0);
  if (w) check(dt, job, n, full, g_rank == 0 ? a : NULL, lda, w, what);
  free(a), free(w), free(full);
}

/* tessera_syevdx over processes: eigenvalues il .. iu on process 0 and the odd-numbered
 * processes against LAPACK's, their vectors (a's first k columns on process 0) by their residual
 * and orthogonality. */
static void range_case(tessera_context_t *ctx, tessera_dtype_t dt, tessera_job_t job, int64_t n,
                       int64_t il, int64_t iu, uint64_t seed) {
  char what[128];
  snprintf(what, sizeof what, "process %d: syevdx %s %c n %lld [%lld, %lld]", g_rank, lc_name(dt),
           (char)job, (long long)n, (long long)il, (long long)iu);
  zc_t *full = hermitian(dt, n, seed);
  const int64_t k = iu - il + 1;
  void *a = NULL, *w = NULL;
  if (g_rank == 0) {
    a = lc_alloc(dt, (size_t)(n * n));
    for (int64_t i = 0; i < n * n; i++) lc_set(dt, a, (size_t)i, full[i]);
  }
  if (g_rank == 0 || g_rank % 2) w = calloc((size_t)k + 1, sizeof(double));
  dist_expect(ctx, what, tessera_syevdx(ctx, job, TESSERA_LOWER, dt, n, a, n, il, iu, w), 0);
  const double an = lc_norm_fro(full, (size_t)(n * n)), eps = lc_eps(dt);
  double *ref = calloc((size_t)n + 1, sizeof *ref), *lambda = calloc((size_t)k + 1, sizeof *lambda);
  lc_eig_lapack_values(n, full, ref);
  for (int64_t i = 0; i < k && w; i++) {
    lambda[i] = eigval(dt, w, i);
    if (!(fabs(lambda[i] - ref[il - 1 + i]) / (an * (double)n * eps) < 10))
      fail_msg("%s: w[%lld] = %g, LAPACK's %g", what, (long long)i, lambda[i], ref[il - 1 + i]);
  }
  if (a && job == TESSERA_VECTORS) {
    zc_t *v = lc_promote(dt, n, k, a, n);
    double res, orth;
    lc_eig_pairs_norms(n, k, full, v, lambda, &res, &orth);
    res /= an * (double)n * eps, orth /= (double)n * eps;
    if (!(res < 10) || !(orth < 10)) fail_msg("%s: residual %g, orthogonality %g", what, res, orth);
    free(v);
  }
  free(ref), free(lambda), free(a), free(w), free(full);
}

/* A repeated eigenvalue and a tiny or huge norm over processes: A = scale (I + u uᴴ + v vᴴ) (the
 * eigenvalue 1 n - 2 times, which divide and conquer deflates) on process 0, the eigenvalues on
 * every process divided by `scale` before the checks. */
static void spectrum_case(tessera_context_t *ctx, tessera_dtype_t dt, int64_t n, double scale,
                          uint64_t seed) {
  char what[128];
  snprintf(what, sizeof what, "process %d: syevd %s n %lld, I + u uᴴ + v vᴴ times %g", g_rank,
           lc_name(dt), (long long)n, scale);
  tt_rng_t r = tt_rng(seed);
  zc_t *u = lc_zalloc((size_t)n), *v = lc_zalloc((size_t)n), *full = lc_zalloc((size_t)(n * n));
  for (int64_t i = 0; i < n; i++) u[i] = lc_rand(dt, &r), v[i] = lc_rand(dt, &r);
  void *a = g_rank == 0 ? lc_alloc(dt, (size_t)(n * n)) : NULL;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) {
      zc_t x = (i == j) + u[i] * conj(u[j]) + v[i] * conj(v[j]);
      if (i == j) x = creal(x);
      if (a) lc_set(dt, a, (size_t)(i + j * n), scale * x);
      full[i + j * n] = x;
    }
  if (a) /* A as the dtype holds it, unscaled */
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = j; i < n; i++) {
        full[i + j * n] = lc_get(dt, a, (size_t)(i + j * n)) / scale;
        if (i == j) full[i + j * n] = creal(full[i + j * n]);
        full[j + i * n] = conj(full[i + j * n]);
      }
  dist_expect(ctx, "broadcast",
              tessera_comm_broadcast(g_comm, full, (size_t)(n * n), TESSERA_COMM_C128, 0, NULL), 0);
  double *w = calloc((size_t)n, sizeof *w);
  dist_expect(ctx, what, tessera_syevd(ctx, TESSERA_VECTORS, TESSERA_LOWER, dt, n, a, n, w), 0);
  const bool single = dt == TESSERA_F32 || dt == TESSERA_C64;
  for (int64_t i = 0; i < n; i++) /* in place, in the dtype's real type */
    if (single)
      ((float *)w)[i] = (float)(((float *)w)[i] / scale);
    else
      w[i] /= scale;
  check(dt, TESSERA_VECTORS, n, full, a, n, w, what);
  free(a), free(w), free(full), free(u), free(v);
}

/* The tile-level call on a descriptor dealt over the context's grid in TILE x 5 tiles: A
 * imported on every process, the eigenvectors exported and summed (each tile has one owner). */
static void tile_case(tessera_context_t *ctx, tessera_comm_t *comm, tessera_grid_t grid,
                      tessera_dtype_t dt, tessera_uplo_t uplo, tessera_job_t job, int64_t n,
                      uint64_t seed) {
  char what[128];
  snprintf(what, sizeof what, "process %d: tile_syevd %s %c %c n %lld", g_rank, lc_name(dt),
           (char)uplo, (char)job, (long long)n);
  zc_t *full = hermitian(dt, n, seed);
  const int64_t ld = n > 0 ? n : 1;
  const size_t count = (size_t)(ld * (n > 0 ? n : 1));
  void *a = lc_alloc(dt, count), *w = calloc((size_t)n + 1, sizeof(double));
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) lc_set(dt, a, (size_t)(i + j * ld), full[i + j * n]);
  tessera_matrix_t *A = NULL;
  dist_expect(ctx, "create",
              tessera_matrix_create_distributed(ctx, comm, grid, dt, n, n, TILE, 5, &A), 0);
  dist_expect(ctx, "import", tessera_matrix_import(A, a, ld), 0);
  dist_expect(ctx, what, tessera_tile_syevd(job, uplo, A, w), 0);
  if (job == TESSERA_VECTORS) {
    memset(a, 0, count * lc_esize(dt));
    dist_expect(ctx, "export", tessera_matrix_export(A, a, ld), 0);
    dist_expect(
        ctx, "allreduce",
        tessera_comm_allreduce(comm, a, a, count, (tessera_comm_type_t)dt, TESSERA_SUM, NULL), 0);
  }
  check(dt, job, n, full, a, ld, w, what);
  dist_expect(ctx, "destroy", tessera_matrix_destroy(A), 0);
  free(a), free(w), free(full);
}

static void test_syevd_processes(void **state) {
  (void)state;
  tessera_context_t *ctx = dist_context(0, 0, TILE);
  const int64_t sizes[] = {0, 1, 5, 37};
  uint64_t seed = 700;
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int u = 0; u < 2; u++)
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++, seed++) {
        lapack_case(ctx, lc_dtypes[d], lc_uplos[u], TESSERA_VECTORS, sizes[s], seed);
        lapack_case(ctx, lc_dtypes[d], lc_uplos[u], TESSERA_VALUES, sizes[s], seed);
      }
  range_case(ctx, TESSERA_F64, TESSERA_VECTORS, 37, 30, 37, seed);
  range_case(ctx, TESSERA_F32, TESSERA_VALUES, 37, 1, 4, seed + 1);
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++) {
    const bool single = lc_dtypes[d] == TESSERA_F32 || lc_dtypes[d] == TESSERA_C64;
    spectrum_case(ctx, lc_dtypes[d], 37, single ? 1e-30 : 1e-150, 800 + (uint64_t)d);
    spectrum_case(ctx, lc_dtypes[d], 37, single ? 1e30 : 1e150, 810 + (uint64_t)d);
  }
  assert_int_equal(tessera_finalize(ctx), 0);
}

/* The two stages forced (TESSERA_EIG_METHOD=two): the band reduction dealt, and with vectors
 * the back-transformations on E's column panels over the processes (Q1 on the band reduction's
 * reflectors where it left them). */
static void test_two_stages_processes(void **state) {
  (void)state;
  setenv("TESSERA_EIG_METHOD", "two", 1);
  tessera_context_t *ctx = dist_context(0, 0, TILE);
  uint64_t seed = 1000;
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int u = 0; u < 2; u++, seed++) {
      lapack_case(ctx, lc_dtypes[d], lc_uplos[u], TESSERA_VECTORS, 43, seed);
      lapack_case(ctx, lc_dtypes[d], lc_uplos[u], TESSERA_VECTORS, 9, seed);
    }
  lapack_case(ctx, TESSERA_F64, TESSERA_LOWER, TESSERA_VALUES, 43, seed);
  range_case(ctx, TESSERA_C128, TESSERA_VECTORS, 43, 5, 20, seed + 2);
  tile_case(ctx, tessera_context_comm(ctx), tessera_context_grid(ctx), TESSERA_C128, TESSERA_UPPER,
            TESSERA_VECTORS, 31, seed + 1);
  assert_int_equal(tessera_finalize(ctx), 0);
  unsetenv("TESSERA_EIG_METHOD");
}

static void test_tile_syevd_processes(void **state) {
  (void)state;
  tessera_context_t *ctx = dist_context(0, 0, TILE);
  const int64_t sizes[] = {0, 1, 29};
  uint64_t seed = 900;
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++, seed++)
      for (int j = 0; j < 2; j++)
        tile_case(ctx, tessera_context_comm(ctx), tessera_context_grid(ctx), lc_dtypes[d],
                  lc_uplos[(d + s) % 2], j ? TESSERA_VALUES : TESSERA_VECTORS, sizes[s], seed);
  assert_int_equal(tessera_finalize(ctx), 0);
}

/* The tile-level call on the processes' devices (devices_open: each process a context of its
 * own, A distributed over the suite's processes by columns), the two stages forced
 * (TESSERA_EIG_METHOD=two): the band reduction on process 0's device, its bulge chasing there
 * (the reflectors left there, read by the others from there), E kept there after the merges
 * for f64 and dealt from there, each process's columns of the back-transformations on its own.
 * Skipped where the processes have no devices. */
static void test_on_devices(void **state) {
  (void)state;
  setenv("TESSERA_EIG_METHOD", "two", 1);
  setenv("TESSERA_SIM_DEVICES", "1", 1); /* simulated devices: one a process, as GPUs here */
  tessera_context_t *ctx = NULL;
  tessera_comm_t *comm = NULL;
  const bool any = devices_open(2, &ctx, &comm);
  unsetenv("TESSERA_EIG_METHOD");
  unsetenv("TESSERA_SIM_DEVICES");
  if (!any) skip();
  const tessera_grid_t grid = {1, g_size};
  tile_case(ctx, comm, grid, TESSERA_F64, TESSERA_LOWER, TESSERA_VECTORS, 70, 41);
  tile_case(ctx, comm, grid, TESSERA_F64, TESSERA_UPPER, TESSERA_VECTORS, 600, 46); /* merges */
  tile_case(ctx, comm, grid, TESSERA_C64, TESSERA_UPPER, TESSERA_VECTORS, 45, 42);
  devices_close(ctx, comm);
}

/* The tile-level call in one stage on process 0's device (TESSERA_EIG_METHOD=one): A's tiles
 * gathered into one array in its memory and the eigenvectors dealt back from it; a NaN in A
 * seen in the eigenvalues there and named by the host path, the same info on every process.
 * Skipped where the processes have no devices. */
static void test_one_stage_on_devices(void **state) {
  (void)state;
  setenv("TESSERA_EIG_METHOD", "one", 1);
  tessera_context_t *ctx = NULL;
  tessera_comm_t *comm = NULL;
  const bool any = devices_open(2, &ctx, &comm);
  unsetenv("TESSERA_EIG_METHOD");
  if (!any) skip();
  const tessera_grid_t grid = {1, g_size};
  tile_case(ctx, comm, grid, TESSERA_F64, TESSERA_LOWER, TESSERA_VECTORS, 70, 43);
  tile_case(ctx, comm, grid, TESSERA_C128, TESSERA_UPPER, TESSERA_VECTORS, 29, 44);
  tile_case(ctx, comm, grid, TESSERA_F32, TESSERA_LOWER, TESSERA_VALUES, 37, 45);
  const int64_t n = 20;
  zc_t *full = hermitian(TESSERA_F64, n, 6);
  double *a = malloc((size_t)(n * n) * sizeof *a), w[20];
  for (int64_t i = 0; i < n * n; i++) a[i] = creal(full[i]);
  a[11 + 6 * n] = NAN;
  tessera_matrix_t *A = NULL;
  dist_expect(ctx, "create",
              tessera_matrix_create_distributed(ctx, comm, grid, TESSERA_F64, n, n, TILE, 5, &A),
              0);
  dist_expect(ctx, "import", tessera_matrix_import(A, a, n), 0);
  dist_expect(ctx, "tile_syevd NaN", tessera_tile_syevd(TESSERA_VECTORS, TESSERA_LOWER, A, w), 7);
  assert_non_null(strstr(tessera_last_error(ctx), "NaN"));
  assert_true(isnan(w[0]) && isnan(w[n - 1]));
  dist_expect(ctx, "destroy", tessera_matrix_destroy(A), 0);
  free(a), free(full);
  devices_close(ctx, comm);
}

/* A NaN in process 0's A: the same info and message everywhere, NaN eigenvalues on the
 * processes that asked for them; a bad uplo on process 0 alone and an order that differs
 * across the processes fail on every process. */
static void test_errors(void **state) {
  (void)state;
  tessera_context_t *ctx = dist_context(0, 0, TILE);
  const int64_t n = 20;
  double *a = NULL, *w = calloc((size_t)n, sizeof *w);
  zc_t *full = hermitian(TESSERA_F64, n, 5);
  if (g_rank == 0) {
    a = malloc((size_t)(n * n) * sizeof *a);
    for (int64_t i = 0; i < n * n; i++) a[i] = creal(full[i]);
    a[7 + 3 * n] = NAN;
  }
  dist_expect(ctx, "syevd NaN",
              tessera_syevd(ctx, TESSERA_VECTORS, TESSERA_LOWER, TESSERA_F64, n, a, n, w), 4);
  assert_non_null(strstr(tessera_last_error(ctx), "NaN"));
  assert_true(isnan(w[0]) && isnan(w[n - 1]));
  for (int64_t i = 0; i < n * n && a; i++) a[i] = creal(full[i]); /* NaN-filled by the call */
  const tessera_uplo_t uplo = g_rank == 0 ? (tessera_uplo_t)'X' : TESSERA_LOWER;
  dist_expect(ctx, "syevd uplo", tessera_syevd(ctx, TESSERA_VALUES, uplo, TESSERA_F64, n, a, n, w),
              -3);
  const int64_t m = g_rank == g_size - 1 && g_size > 1 ? n - 1 : n;
  dist_expect(ctx, "syevd n",
              tessera_syevd(ctx, TESSERA_VALUES, TESSERA_LOWER, TESSERA_F64, m, a, n, w),
              g_size > 1 ? -5 : 0);
  if (g_size > 1) assert_non_null(strstr(tessera_last_error(ctx), "differs"));
  const int64_t il = g_rank == g_size - 1 && g_size > 1 ? 2 : 1;
  dist_expect(ctx, "syevdx il",
              tessera_syevdx(ctx, TESSERA_VALUES, TESSERA_LOWER, TESSERA_F64, n, a, n, il, 3, w),
              g_size > 1 ? -8 : 0);
  free(a), free(w), free(full);
  assert_int_equal(tessera_finalize(ctx), 0);
}

int main(int argc, char **argv) {
  own_gpu();
  if (mpi_start(&argc, &argv)) return 2;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_syevd_processes),      cmocka_unit_test(test_two_stages_processes),
      cmocka_unit_test(test_tile_syevd_processes), cmocka_unit_test(test_on_devices),
      cmocka_unit_test(test_one_stage_on_devices), cmocka_unit_test(test_errors)};
  return mpi_finish(cmocka_run_group_tests(tests, group_setup, group_teardown));
}
