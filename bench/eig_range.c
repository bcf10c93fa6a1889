/* Eigenvalues il .. iu and their vectors of a random real symmetric matrix of order --n (f64,
 * lower triangle): tessera_syevdx against NVIDIA's or LAPACK's range solver in the same run, and
 * tessera_syevd (all of them) beside, best of --reps each on fresh copies. Without --gpus, on
 * the CPU cores: LAPACKE_dsyevr (range 'I') with as many BLAS threads as tessera's workers, in
 * turns with tessera's calls after an untimed round. With --gpus G: cusolverDnXsyevdx (range I) on
 * GPU 0 with A already there (copied before each run, untimed; a warm-up first), run before
 * tessera's context takes the GPUs' memory, and tessera on G GPUs from the host array. The method
 * is the context's (TESSERA_EIG_METHOD: cost, one or two). Prints the times, syevdx's speed over
 * the baseline's, and the largest difference of their eigenvalues over ‖A‖_F n ε.
 *
 *   ./build/bench/bench_eig_range [--n 3000] [--range 1:300] [--reps 3] [--workers 2] [--gpus G]
 */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tessera/tessera.h>

#ifdef TESSERA_HAVE_OPENBLAS_THREADS
#include <cblas.h>
#endif
#ifdef TESSERA_HAVE_CUDA
#include <cuda_runtime.h>
#include <cusolverDn.h>
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#ifdef TESSERA_HAVE_CUDA
/* cusolverDnXsyevdx's best of `reps` seconds (after a warm-up) for eigenvalues il .. iu of a0 on
 * GPU 0, A copied there before each run; its values into wr. -1 where a call failed. */
static double cusolver_range(int n, int il, int iu, const double *a0, double *wr, int reps) {
  const size_t bytes = (size_t)n * (size_t)n * sizeof(double);
  const int k = iu - il + 1;
  cusolverDnHandle_t h = NULL;
  cusolverDnParams_t prm = NULL;
  double *A = NULL, *W = NULL, vl = 0, vu = 0, best = -1;
  void *dwork = NULL, *hwork = NULL;
  int *dinfo = NULL, info = 0;
  size_t dbytes = 0, hbytes = 0;
  int64_t m = 0;
  const cusolverEigMode_t jobz = CUSOLVER_EIG_MODE_VECTOR;
  const cusolverEigRange_t by_index = CUSOLVER_EIG_RANGE_I;
  const cublasFillMode_t lower = CUBLAS_FILL_MODE_LOWER;
  bool ok = cusolverDnCreate(&h) == CUSOLVER_STATUS_SUCCESS &&
            cusolverDnCreateParams(&prm) == CUSOLVER_STATUS_SUCCESS &&
            cudaMalloc((void **)&A, bytes) == cudaSuccess &&
            cudaMalloc((void **)&W, (size_t)n * sizeof *W) == cudaSuccess &&
            cudaMalloc((void **)&dinfo, sizeof *dinfo) == cudaSuccess &&
            cusolverDnXsyevdx_bufferSize(h, prm, jobz, by_index, lower, n, CUDA_R_64F, A, n, &vl,
                                         &vu, il, iu, &m, CUDA_R_64F, W, CUDA_R_64F, &dbytes,
                                         &hbytes) == CUSOLVER_STATUS_SUCCESS &&
            cudaMalloc(&dwork, dbytes ? dbytes : 1) == cudaSuccess &&
            (hwork = malloc(hbytes ? hbytes : 1)) != NULL;
  for (int r = 0; ok && r <= reps; r++) {
    ok = cudaMemcpy(A, a0, bytes, cudaMemcpyHostToDevice) == cudaSuccess &&
         cudaDeviceSynchronize() == cudaSuccess;
    const double t0 = now();
    ok = ok &&
         cusolverDnXsyevdx(h, prm, jobz, by_index, lower, n, CUDA_R_64F, A, n, &vl, &vu, il, iu, &m,
                           CUDA_R_64F, W, CUDA_R_64F, dwork, dbytes, hwork, hbytes,
                           dinfo) == CUSOLVER_STATUS_SUCCESS &&
         cudaDeviceSynchronize() == cudaSuccess;
    if (ok && r > 0 && (best < 0 || now() - t0 < best)) best = now() - t0;
  }
  ok = ok && cudaMemcpy(&info, dinfo, sizeof info, cudaMemcpyDeviceToHost) == cudaSuccess &&
       info == 0 && m == k &&
       cudaMemcpy(wr, W, (size_t)k * sizeof *wr, cudaMemcpyDeviceToHost) == cudaSuccess;
  cudaFree(A), cudaFree(W), cudaFree(dinfo), cudaFree(dwork), free(hwork);
  if (prm) cusolverDnDestroyParams(prm);
  if (h) cusolverDnDestroy(h);
  return ok ? best : -1;
}
#endif

int main(int argc, char **argv) {
  int n = 3000, il = 1, iu = 300, reps = 3, workers = 2, gpus = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--n"))
      n = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--range") && sscanf(argv[i + 1], "%d:%d", &il, &iu) == 2)
      continue;
    else if (!strcmp(argv[i], "--reps"))
      reps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--workers"))
      workers = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--gpus"))
      gpus = atoi(argv[i + 1]);
    else
      return fprintf(stderr, "bench_eig_range: unknown option %s\n", argv[i]), 2;
  }
  if (n < 1 || il < 1 || iu < il || iu > n || reps < 1 || workers < 1 || gpus < 0)
    return fprintf(stderr,
                   "bench_eig_range: needs n >= 1, 1 <= il <= iu <= n, reps, workers >= 1\n"),
           2;
  const size_t nn = (size_t)n * (size_t)n;
  const int k = iu - il + 1;
  double *a0 = malloc(nn * sizeof *a0), *a = malloc(nn * sizeof *a), *z = malloc(nn * sizeof *z);
  double *w = malloc((size_t)n * sizeof *w), *wr = malloc((size_t)n * sizeof *wr);
  double *wall = malloc((size_t)n * sizeof *wall); /* syevd's */
  lapack_int *isuppz = malloc(2 * (size_t)n * sizeof *isuppz);
  if (!a0 || !a || !z || !w || !wr || !wall || !isuppz)
    return fprintf(stderr, "out of memory\n"), 1;
  unsigned long long s = 88172645463325252ull;
  double fro = 0;
  for (int j = 0; j < n; j++)
    for (int i = j; i < n; i++) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      const double v = (double)(s >> 11) / 9007199254740992.0 - 0.5;
      a0[i + (size_t)j * n] = a0[j + (size_t)i * n] = v;
      fro += (i == j ? 1 : 2) * v * v;
    }
  double tr = INFINITY; /* the baseline's best */
#ifdef TESSERA_HAVE_CUDA
  if (gpus > 0 && (tr = cusolver_range(n, il, iu, a0, wr, reps)) < 0)
    return fprintf(stderr, "cusolverDnXsyevdx failed\n"), 1;
#else
  if (gpus > 0) return fprintf(stderr, "bench_eig_range: built without CUDA\n"), 2;
#endif
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = workers;
  cfg.gpus = gpus;
  tessera_context_t *ctx = NULL;
  if (tessera_init(&ctx, &cfg)) return fprintf(stderr, "tessera_init failed\n"), 1;
  double tx = INFINITY, tall = INFINITY;
  for (int r = -1; r < reps; r++) { /* r = -1: a warm-up round, untimed */
    memcpy(a, a0, nn * sizeof *a);
    double t0 = now();
    int rc = tessera_syevdx(ctx, TESSERA_VECTORS, TESSERA_LOWER, TESSERA_F64, n, a, n, il, iu, w);
    if (r >= 0) tx = fmin(tx, now() - t0);
    memcpy(a, a0, nn * sizeof *a);
    t0 = now();
    rc = rc ? rc : tessera_syevd(ctx, TESSERA_VECTORS, TESSERA_LOWER, TESSERA_F64, n, a, n, wall);
    if (r >= 0) tall = fmin(tall, now() - t0);
    if (rc) return fprintf(stderr, "tessera: %s\n", tessera_last_error(ctx)), 1;
    if (gpus > 0) continue; /* cuSOLVER's values in wr already */
    memcpy(a, a0, nn * sizeof *a);
    lapack_int m = 0;
#ifdef TESSERA_HAVE_OPENBLAS_THREADS
    openblas_set_num_threads(workers); /* LAPACK's BLAS on as many cores as tessera's workers */
#endif
    t0 = now();
    const lapack_int info = LAPACKE_dsyevr(LAPACK_COL_MAJOR, 'V', 'I', 'L', n, a, n, 0, 0, il, iu,
                                           0, &m, wr, z, n, isuppz);
    if (r >= 0) tr = fmin(tr, now() - t0);
    if (info || m != k) return fprintf(stderr, "LAPACKE_dsyevr: info %d, %d values\n", info, m), 1;
  }
  /* the last dsyevr's values are in wr, the last syevdx's in w */
  double d = 0;
  for (int i = 0; i < k; i++) d = fmax(d, fabs(w[i] - wr[i]));
  printf("n %d, eigenvalues %d .. %d (%d), %d workers / BLAS threads, %d GPUs, best of %d\n", n, il,
         iu, k, workers, gpus, reps);
  printf("%-28s %10s\n", "call", "seconds");
  printf("%-28s %10.4f\n", "tessera_syevdx", tx);
  printf("%-28s %10.4f\n", gpus > 0 ? "cusolverDnXsyevdx (GPU 0)" : "LAPACKE_dsyevr (range I)", tr);
  printf("%-28s %10.4f\n", "tessera_syevd (all)", tall);
  printf("ratio baseline / syevdx %.2f; eigenvalues' difference %.3g (over ||A||_F n eps)\n",
         tr / tx, d / (sqrt(fro) * n * DBL_EPSILON));
  tessera_finalize(ctx);
  free(a0), free(a), free(z), free(w), free(wr), free(wall), free(isuppz);
  return 0;
}
