/* The polar decomposition A = U_p H (tessera_gepolar, QDWH) on the context's devices: the
 * LAPACK-style call on host arrays and tessera_tile_gepolar on a square descriptor whose tiles
 * are on the GPUs before each timed run (brought there by an untimed product after the import),
 * best of --reps after an untimed first run each; with its steps, the rate of QDWH's usual
 * count and the checks ‖A − U_p H‖_F / (‖A‖_F n ε) and ‖U_pᴴU_p − I‖_F / (n ε) (tessera_gemm).
 * A: tools/gen.c's gen_dense (m x n, f64 unless --dtype). jax's own QDWH polar runs in
 * bench/jax_polar.py on the same orders (the baseline of docs/benchmarks.md's rows).
 *
 * --svd: tessera_gesvd with vectors (polar, then the eigensolver on -H) from host arrays instead,
 * best of --reps after a first run, against cusolverDnXgesvdp (the SVD through cuSOLVER's polar
 * decomposition, economy vectors) on GPU 0 with A already there, best of --reps after a first
 * run, before tessera's context takes the GPU; without a GPU against LAPACKE_dgesdd (economy
 * vectors) with as many BLAS threads as the context has CPU workers; f64, m = n.
 *
 *   ./build/bench/bench_polar [--n 8192,16384] [--m-extra 0] [--reps 2] [--dtype s|d|c|z] [--svd]
 */
#define _POSIX_C_SOURCE 200809L
#include <lapacke.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef TESSERA_HAVE_CUDA
#include <cuda_runtime.h>
#include <cusolverDn.h>
#endif

#include "gen.h"
#include "resident.h"
#include "residual.h"
#include "tessera/linalg.h"
#include "tessera/tessera.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* QDWH's operations: a QR step (geqrf of (m + n) x n and Q's n columns, 4 (m + n) n² − 4/3 n³,
 * then the product 2 m n²), a Cholesky step (herk n² m, potrf n³ / 3, two trsm 2 m n², the
 * product) by the steps taken, two QR steps counted as such; then Newton-Schulz and H (6 m n²).
 * Complex: four times. */
static double flops(tessera_dtype_t dt, double m, double n, int steps) {
  const double qr = 4 * (m + n) * n * n - 4.0 / 3 * n * n * n + 2 * m * n * n;
  const double ch = m * n * n + n * n * n / 3 + 2 * m * n * n;
  const int q = steps < 2 ? steps : 2;
  const double f = q * qr + (steps - q) * ch + 6 * m * n * n;
  return tessera_dtype_is_complex(dt) ? 4 * f : f;
}

/* The checks of U (m x n, ld m) and H (n x n) against A0. */
static void check(tessera_context_t *ctx, tessera_dtype_t dt, int64_t m, int64_t n, const void *a0,
                  const void *u, const void *h, double *res, double *orth) {
  const size_t es = tessera_dtype_size(dt);
  char *r = malloc((size_t)(m * n) * es);
  double one[2], mone[2];
  residual_scalars(dt, mone, one);
  memcpy(r, a0, (size_t)(m * n) * es);
  int s =
      tessera_gemm(ctx, TESSERA_NOTRANS, TESSERA_NOTRANS, dt, m, n, n, mone, u, m, h, n, one, r, m);
  *res = s ? NAN
           : residual_fro(dt, m, n, r, m) /
                 (residual_fro(dt, m, n, a0, m) * (double)m * residual_eps(dt));
  memset(r, 0, (size_t)(n * n) * es);
  for (int64_t i = 0; i < n; i++) elem_set(dt, r, (size_t)(i + i * n), 1, 0);
  s = tessera_gemm(ctx, TESSERA_CONJTRANS, TESSERA_NOTRANS, dt, n, n, m, mone, u, m, u, m, one, r,
                   n);
  *orth = s ? NAN : residual_fro(dt, n, n, r, n) / ((double)n * residual_eps(dt));
  free(r);
}

/* cusolverDnXgesvdp's best seconds of reps (after a first run) on the n x n f64 a0 copied to
 * GPU 0, economy vectors; NAN without CUDA or on a failure. */
static double gesvdp(int64_t n, const double *a0, int reps) {
#ifdef TESSERA_HAVE_CUDA
  cusolverDnHandle_t h = NULL;
  cusolverDnParams_t prm = NULL;
  double *a = NULL, *d = NULL, *u = NULL, *v = NULL, best = INFINITY, hres = 0;
  void *work = NULL, *hwork = NULL;
  int *info = NULL;
  size_t wd = 0, wh = 0;
  const size_t nn = (size_t)(n * n) * sizeof *a;
  bool ok = cusolverDnCreate(&h) == CUSOLVER_STATUS_SUCCESS &&
            cusolverDnCreateParams(&prm) == CUSOLVER_STATUS_SUCCESS &&
            cudaMalloc((void **)&a, nn) == cudaSuccess &&
            cudaMalloc((void **)&u, nn) == cudaSuccess &&
            cudaMalloc((void **)&v, nn) == cudaSuccess &&
            cudaMalloc((void **)&d, (size_t)n * sizeof *d) == cudaSuccess &&
            cudaMalloc((void **)&info, sizeof *info) == cudaSuccess;
  ok = ok && cusolverDnXgesvdp_bufferSize(h, prm, CUSOLVER_EIG_MODE_VECTOR, 1, n, n, CUDA_R_64F, a,
                                          n, CUDA_R_64F, d, CUDA_R_64F, u, n, CUDA_R_64F, v, n,
                                          CUDA_R_64F, &wd, &wh) == CUSOLVER_STATUS_SUCCESS;
  ok = ok && cudaMalloc(&work, wd > 0 ? wd : 1) == cudaSuccess && (hwork = malloc(wh + 1));
  for (int r = 0; r <= reps && ok; r++) {
    ok = cudaMemcpy(a, a0, nn, cudaMemcpyHostToDevice) == cudaSuccess &&
         cudaDeviceSynchronize() == cudaSuccess;
    const double t0 = now();
    ok = ok &&
         cusolverDnXgesvdp(h, prm, CUSOLVER_EIG_MODE_VECTOR, 1, n, n, CUDA_R_64F, a, n, CUDA_R_64F,
                           d, CUDA_R_64F, u, n, CUDA_R_64F, v, n, CUDA_R_64F, work, wd, hwork, wh,
                           info, &hres) == CUSOLVER_STATUS_SUCCESS &&
         cudaDeviceSynchronize() == cudaSuccess;
    if (ok && r > 0) best = fmin(best, now() - t0);
  }
  cudaFree(a), cudaFree(u), cudaFree(v), cudaFree(d), cudaFree(info), cudaFree(work);
  free(hwork);
  if (prm) cusolverDnDestroyParams(prm);
  if (h) cusolverDnDestroy(h);
  return ok ? best : NAN;
#else
  (void)n, (void)a0, (void)reps;
  return NAN;
#endif
}

/* LAPACKE_dgesdd's best seconds of reps (after a first run) on copies of the n x n a0, economy
 * vectors, with `threads` BLAS threads (restored to 1 after, tessera's workers' setting). */
static double gesdd(int64_t n, const double *a0, int reps, int threads) {
  double *a = malloc((size_t)(n * n) * sizeof *a), *u = malloc((size_t)(n * n) * sizeof *u);
  double *vt = malloc((size_t)(n * n) * sizeof *vt), *s = malloc((size_t)n * sizeof *s);
  double best = INFINITY;
  cli_blas_threads(threads);
  for (int r = 0; r <= reps && a && u && vt && s; r++) {
    memcpy(a, a0, (size_t)(n * n) * sizeof *a);
    const double t0 = now();
    const int info =
        LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'S', (int)n, (int)n, a, (int)n, s, u, (int)n, vt, (int)n);
    if (info) best = NAN;
    if (r > 0) best = fmin(best, now() - t0);
  }
  cli_blas_threads(1);
  free(a), free(u), free(vt), free(s);
  return best;
}

/* --svd: tessera_gesvd against cusolverDnXgesvdp (or, without CUDA devices, LAPACKE_dgesdd) at
 * each order. */
static int svd_runs(const char *sizes, int reps) {
  printf("%8s %10s %12s %7s %9s\n", "n", "tessera_s", "baseline_s", "ratio", "residual");
  for (const char *p = sizes; *p;) {
    const int64_t n = atoll(p);
    double *a0 = malloc((size_t)(n * n) * sizeof *a0), *a = malloc((size_t)(n * n) * sizeof *a);
    double *u = malloc((size_t)(n * n) * sizeof *u), *vt = malloc((size_t)(n * n) * sizeof *vt);
    double *s = malloc((size_t)n * sizeof *s);
    gen_dense(TESSERA_F64, n, n, a0, n, GEN_SEED_A);
    double base = gesvdp(n, a0, reps);
    tessera_context_t *ctx = NULL;
    if (tessera_init(&ctx, NULL)) return 1;
    if (isnan(base) && tessera_accelerator_count(ctx) == 0) {
      const int workers = tessera_worker_count(ctx);
      base = gesdd(n, a0, reps, workers > 0 ? workers : 1);
    }
    double best = INFINITY, res = NAN;
    int rc = 0;
    for (int r = 0; r <= reps && !rc; r++) {
      memcpy(a, a0, (size_t)(n * n) * sizeof *a);
      const double t0 = now();
      rc = tessera_gesvd(ctx, TESSERA_VECTORS, TESSERA_F64, n, n, a, n, s, u, n, vt, n);
      if (r > 0) best = fmin(best, now() - t0);
    }
    if (!rc) { /* ‖A − U Σ Vᴴ‖_F / (‖A‖_F n ε) */
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) u[i + j * n] *= s[j];
      double one[2], mone[2];
      residual_scalars(TESSERA_F64, mone, one);
      memcpy(a, a0, (size_t)(n * n) * sizeof *a);
      if (!tessera_gemm(ctx, TESSERA_NOTRANS, TESSERA_NOTRANS, TESSERA_F64, n, n, n, mone, u, n, vt,
                        n, one, a, n))
        res = residual_fro(TESSERA_F64, n, n, a, n) /
              (residual_fro(TESSERA_F64, n, n, a0, n) * (double)n * residual_eps(TESSERA_F64));
    } else {
      fprintf(stderr, "n = %lld: gesvd %d (%s)\n", (long long)n, rc, tessera_last_error(ctx));
    }
    printf("%8lld %10.4f %12.4f %7.2f %9.3g\n", (long long)n, best, base, base / best, res);
    fflush(stdout);
    tessera_finalize(ctx);
    free(a0), free(a), free(u), free(vt), free(s);
    p = strchr(p, ',');
    p = p ? p + 1 : "";
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *sizes = "8192,16384";
  int reps = 2;
  int64_t extra = 0;
  tessera_dtype_t dt = TESSERA_F64;
  bool svd = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--svd")) {
      svd = true;
      continue;
    }
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (v && !strcmp(argv[i], "--n"))
      sizes = v;
    else if (v && !strcmp(argv[i], "--reps"))
      reps = atoi(v);
    else if (v && !strcmp(argv[i], "--m-extra"))
      extra = atoll(v);
    else if (v && !strcmp(argv[i], "--dtype"))
      dt = strchr("sdcz", v[0]) ? (tessera_dtype_t)(strchr("sdcz", v[0]) - "sdcz") : TESSERA_F64;
    else {
      fprintf(stderr,
              "usage: %s [--n 8192,16384] [--m-extra 0] [--reps 2] [--dtype s|d|c|z] [--svd]\n",
              argv[0]);
      return 2;
    }
    i++;
  }
  if (svd) return svd_runs(sizes, reps);
  tessera_context_t *ctx = NULL;
  if (tessera_init(&ctx, NULL)) return 1;
  printf("%8s %8s %10s %10s %6s %9s %9s %9s\n", "m", "n", "lapack_s", "tile_s", "steps", "TFLOP/s",
         "residual", "orth");
  for (const char *p = sizes; *p;) {
    const int64_t n = atoll(p), m = n + extra;
    const size_t es = tessera_dtype_size(dt);
    void *a0 = malloc((size_t)(m * n) * es), *a = malloc((size_t)(m * n) * es),
         *h = malloc((size_t)(n * n) * es);
    gen_dense(dt, m, n, a0, m, GEN_SEED_A);
    double best = INFINITY, tile = NAN;
    int steps = 0, rc = 0;
    for (int r = 0; r <= reps && !rc; r++) { /* run 0 untimed */
      memcpy(a, a0, (size_t)(m * n) * es);
      const double t0 = now();
      rc = tessera_gepolar(ctx, dt, m, n, a, m, h, n, &steps);
      if (r > 0) best = fmin(best, now() - t0);
    }
    if (!rc && m == n) {
      const int t = tessera_tile_for_polar(ctx, n, n);
      tessera_matrix_t *A = NULL, *H = NULL, *B = NULL, *Y = NULL;
      rc = tessera_matrix_create(ctx, dt, n, n, t, t, &A);
      if (!rc) rc = tessera_matrix_create(ctx, dt, n, n, t, t, &H);
      if (!rc) rc = tessera_matrix_create(ctx, dt, n, t, t, t, &B);
      if (!rc) rc = tessera_matrix_create(ctx, dt, n, t, t, t, &Y);
      for (int r = 0; r <= reps && !rc; r++) {
        rc = tessera_matrix_import(A, a0, n);
        if (!rc) rc = resident_on_gpus(ctx, A, B, Y);
        const double t0 = now();
        if (!rc) rc = tessera_tile_gepolar(A, H, &steps);
        if (!rc && r > 0) tile = fmin(r > 1 ? tile : INFINITY, now() - t0);
      }
      tessera_matrix_t *made[4] = {A, H, B, Y};
      for (int k = 0; k < 4; k++)
        if (made[k]) (void)tessera_matrix_destroy(made[k]);
    }
    double res = NAN, orth = NAN;
    if (!rc)
      check(ctx, dt, m, n, a0, a, h, &res, &orth);
    else
      fprintf(stderr, "n = %lld: status %d (%s)\n", (long long)n, rc, tessera_last_error(ctx));
    const double t = isnan(tile) ? best : fmin(best, tile);
    printf("%8lld %8lld %10.4f %10.4f %6d %9.2f %9.3g %9.3g\n", (long long)m, (long long)n, best,
           tile, steps, flops(dt, (double)m, (double)n, steps) / t * 1e-12, res, orth);
    fflush(stdout);
    free(a0), free(a), free(h);
    p = strchr(p, ',');
    p = p ? p + 1 : "";
  }
  return tessera_finalize(ctx) ? 1 : 0;
}
