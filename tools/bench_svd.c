/* tessera CLI — the GPU baseline of `tessera bench gepolar|gesvd`: cuSOLVER's SVD through its polar
 * decomposition (cusolverDnXgesvdp, economy vectors, none with --values-only) on GPU 0. Timed as
 * the other GPU baselines: A copied onto the GPU before each run (untimed), the GPU synchronized
 * around the call, one warm-up run, the best of o->reps. It takes m >= n: a wide A is timed as
 * its transpose (the same singular values). */
#include "bench_gpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TESSERA_HAVE_CUDA

#include <cuda_runtime.h>
#include <cusolverDn.h>

#include "cuda_libs.h"

static int failed(int status, const char *what, char *err, size_t len) {
  if (status && !err[0]) snprintf(err, len, "%s failed (status %d)", what, status);
  return status != 0;
}

double bench_gpu_gesvdp(const cli_opts_t *o, int64_t m, int64_t n, const void *a, int64_t lda,
                        cli_progress_t *prog) {
  static const cudaDataType types[TESSERA_NUM_DTYPES] = {[TESSERA_F32] = CUDA_R_32F,
                                                         [TESSERA_F64] = CUDA_R_64F,
                                                         [TESSERA_C64] = CUDA_C_32F,
                                                         [TESSERA_C128] = CUDA_C_64F};
  if (m < 1 || n < 1 || bench_gpu_libraries()) return INFINITY;
  const int wide = m < n;
  const int64_t r = wide ? n : m, c = wide ? m : n; /* the tall shape timed */
  const size_t es = tessera_dtype_size(o->dtype), bytes = (size_t)(r * c) * es;
  const cudaDataType t = types[o->dtype];
  const cudaDataType rt =
      tessera_dtype_is_complex(o->dtype) ? (o->dtype == TESSERA_C64 ? CUDA_R_32F : CUDA_R_64F) : t;
  const cusolverEigMode_t jobz =
      o->values_only ? CUSOLVER_EIG_MODE_NOVECTOR : CUSOLVER_EIG_MODE_VECTOR;
  char err[160] = "";
  char *host = malloc(bytes); /* the tall copy: A, or Aᵀ (the same values either way) */
  if (!host) return INFINITY;
  for (int64_t j = 0; j < c; j++)
    for (int64_t i = 0; i < r; i++)
      memcpy(host + (size_t)(i + j * r) * es,
             (const char *)a + (size_t)(wide ? j + i * lda : i + j * lda) * es, es);
  cusolverDnHandle_t h = NULL;
  cusolverDnParams_t prm = NULL;
  void *A = NULL, *S = NULL, *U = NULL, *V = NULL, *work = NULL, *hwork = NULL;
  int *info = NULL;
  size_t wd = 0, wh = 0;
  double best = INFINITY, hres = 0;
  if (!failed(cudaSetDevice(0), "cudaSetDevice", err, sizeof err) &&
      !failed(cusolverDnCreate(&h), "cusolverDnCreate", err, sizeof err) &&
      !failed(cusolverDnCreateParams(&prm), "cusolverDnCreateParams", err, sizeof err) &&
      !failed(cudaMalloc(&A, bytes), "cudaMalloc", err, sizeof err) &&
      !failed(cudaMalloc(&U, bytes), "cudaMalloc", err, sizeof err) &&
      !failed(cudaMalloc(&V, (size_t)(c * c) * es), "cudaMalloc", err, sizeof err) &&
      !failed(cudaMalloc(&S, (size_t)c * sizeof(double)), "cudaMalloc", err, sizeof err) &&
      !failed(cudaMalloc((void **)&info, sizeof *info), "cudaMalloc", err, sizeof err) &&
      !failed(cusolverDnXgesvdp_bufferSize(h, prm, jobz, 1, r, c, t, A, r, rt, S, t, U, r, t, V, c,
                                           t, &wd, &wh),
              "cusolverDnXgesvdp_bufferSize", err, sizeof err) &&
      !failed(cudaMalloc(&work, wd > 0 ? wd : 1), "cudaMalloc", err, sizeof err) &&
      (hwork = malloc(wh + 1)) != NULL) {
    progress_phase(prog, "cusolverDnXgesvdp %lld x %lld", (long long)m, (long long)n);
    for (int rep = -1; rep < o->reps && !err[0]; rep++) {
      if (failed(cudaMemcpy(A, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy", err,
                 sizeof err) ||
          failed(cudaDeviceSynchronize(), "cudaDeviceSynchronize", err, sizeof err))
        break;
      const double t0 = progress_now();
      if (failed(cusolverDnXgesvdp(h, prm, jobz, 1, r, c, t, A, r, rt, S, t, U, r, t, V, c, t, work,
                                   wd, hwork, wh, info, &hres),
                 "cusolverDnXgesvdp", err, sizeof err) ||
          failed(cudaDeviceSynchronize(), "cudaDeviceSynchronize", err, sizeof err))
        break;
      const double s = progress_now() - t0;
      if (rep >= 0 && s < best) best = s;
    }
    progress_phase(prog, NULL);
  }
  if (err[0]) {
    fprintf(stderr, "tessera: the cusolverDnXgesvdp baseline did not run: %s\n", err);
    best = INFINITY;
  }
  cudaFree(A), cudaFree(U), cudaFree(V), cudaFree(S), cudaFree(info), cudaFree(work);
  free(hwork), free(host);
  if (prm) cusolverDnDestroyParams(prm);
  if (h) cusolverDnDestroy(h);
  (void)cudaGetLastError();
  return best;
}

#else /* no CUDA backend: no GPU baseline */

double bench_gpu_gesvdp(const cli_opts_t *o, int64_t m, int64_t n, const void *a, int64_t lda,
                        cli_progress_t *prog) {
  (void)o, (void)m, (void)n, (void)a, (void)lda, (void)prog;
  return INFINITY;
}

#endif
