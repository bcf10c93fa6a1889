/* The per-worker state of the CUDA kernels (tessera_cuda_scratch_t): cuBLAS and cuSOLVER
 * handles, a device and a pinned host workspace, a device int for library info outputs. The
 * runtime calls these hooks (through the backend registry) on each GPU worker's thread, once
 * per queue, after the CUDA backend has bound the thread to its device; the first loads cuBLAS
 * and cuSOLVER, which libtessera does not link (cuda_libs.h). */
#include <stdio.h>
#include <stdlib.h>

#include "kernels/cuda/cuda_common.h"

/* Per-worker library workspaces. */
enum { WORKSPACE_BYTES = 256 << 20, HOST_WORKSPACE_BYTES = 16 << 20 };

void tsr_cuda_scratch_destroy(int dev, void *scratch) {
  (void)dev;
  tessera_cuda_scratch_t *x = scratch;
  if (!x) return;
  if (x->cusolver) (void)cusolverDnDestroy((cusolverDnHandle_t)x->cusolver);
  if (x->cublas) (void)cublasDestroy((cublasHandle_t)x->cublas);
  if (x->dev_info) (void)cudaFree(x->dev_info);
  if (x->workspace) (void)cudaFree(x->workspace);
  if (x->host_workspace) (void)cudaFreeHost(x->host_workspace);
  (void)cudaGetLastError();
  free(x);
}

int tsr_cuda_libraries_load(char *why, size_t len) {
  int rc = tsr_library_load(TSR_CUBLAS_PATH, TSR_CUBLAS_SONAME, why, len);
  return rc ? rc : tsr_library_load(TSR_CUSOLVER_PATH, TSR_CUSOLVER_SONAME, why, len);
}

int tsr_cuda_scratch_create(int dev, void **scratch) {
  (void)dev; /* the calling thread's current device */
  *scratch = NULL;
  char why[256];
  if (tsr_cuda_libraries_load(why, sizeof why)) {
    fprintf(stderr, "tessera: the GPU kernels need cuBLAS and cuSOLVER, which did not load: %s\n",
            why);
    return TESSERA_ERR_BACKEND;
  }
  tessera_cuda_scratch_t *x = calloc(1, sizeof *x);
  if (!x) return TESSERA_ERR_NOMEM;
  cublasHandle_t blas = NULL;
  cusolverDnHandle_t solver = NULL;
  int ok = cublasCreate(&blas) == CUBLAS_STATUS_SUCCESS;
  x->cublas = ok ? blas : NULL;
  /* Full f64/f32 precision: no TF32 or other reduced-precision tensor-core paths. */
  ok = ok && cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH) == CUBLAS_STATUS_SUCCESS;
  ok = ok && cusolverDnCreate(&solver) == CUSOLVER_STATUS_SUCCESS;
  x->cusolver = ok ? solver : NULL;
  ok = ok && cudaMalloc(&x->workspace, WORKSPACE_BYTES) == cudaSuccess;
  if (ok) x->workspace_bytes = WORKSPACE_BYTES;
  ok = ok && cudaHostAlloc(&x->host_workspace, HOST_WORKSPACE_BYTES, cudaHostAllocPortable) ==
                 cudaSuccess;
  if (ok) x->host_workspace_bytes = HOST_WORKSPACE_BYTES;
  ok = ok && cudaMalloc((void **)&x->dev_info, sizeof *x->dev_info) == cudaSuccess;
  ok = ok && cudaMemset(x->dev_info, 0, sizeof *x->dev_info) == cudaSuccess;
  if (!ok) {
    tsr_cuda_scratch_destroy(dev, x);
    return TESSERA_ERR_BACKEND;
  }
  *scratch = x;
  return 0;
}
