/* Helpers shared by the CUDA tile kernels written in C (blas3.c and copy.c through cuBLAS,
 * cholesky.c and lu.c through cuSOLVER, qr.c, qr_tall.c, eig.c): library flags and data types
 * from tessera's letters and dtypes, scalars as host pointers, the worker's library handles bound
 * to the task's stream, and the per-worker hooks that make them (handles.c).
 *
 * A handle is re-bound only when it is on another stream: cublasSetStream resets the handle's
 * cuBLAS workspace, which a worker may have set once for all its tasks.
 */
#ifndef TSR_KERNELS_CUDA_COMMON_H
#define TSR_KERNELS_CUDA_COMMON_H

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include "kernels/cuda/cuda_libs.h"
#include "kernels/kernel_args.h"
#include "tessera/device.h"

/** A scalar of a dtype as cuBLAS reads it through a host pointer to its first member: (re, im)
 *  in the dtype's precision; the real part alone serves real dtypes and herk's real scalars. */
typedef union {
  float s[2];
  double d[2];
  cuDoubleComplex z; /* alignment of the widest type read */
} tsr_cuda_scalar_t;

static inline tsr_cuda_scalar_t tsr_cuda_scalar(tessera_dtype_t dt, tsr_scalar_t v) {
  tsr_cuda_scalar_t s;
  if (tsr_dtype_single(dt)) {
    s.s[0] = (float)v.re;
    s.s[1] = (float)v.im;
  } else {
    s.d[0] = v.re;
    s.d[1] = v.im;
  }
  return s;
}

/** The CUDA data type of a valid dtype. */
static inline cudaDataType tsr_cuda_type(tessera_dtype_t dt) {
  static const cudaDataType type[] = {CUDA_R_32F, CUDA_R_64F, CUDA_C_32F, CUDA_C_64F};
  return type[dt];
}

/** Flags from the index of a tessera letter (see tsr_letter): uplo in "UL", diag in "NU",
 *  op in "NTC", side in "LR". */
static inline cublasFillMode_t tsr_cuda_fill(int u) {
  return u ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
}
static inline cublasDiagType_t tsr_cuda_diag(int d) {
  return d ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
}
static inline cublasOperation_t tsr_cuda_op(int t) {
  return t == 0 ? CUBLAS_OP_N : t == 1 ? CUBLAS_OP_T : CUBLAS_OP_C;
}
static inline cublasSideMode_t tsr_cuda_side(int s) {
  return s ? CUBLAS_SIDE_RIGHT : CUBLAS_SIDE_LEFT;
}

/** 0 for a CUDA call that succeeded, else TESSERA_ERR_KERNEL with the error cleared (it is
 *  reported here, not to the next CUDA call). */
static inline int tsr_cuda_enqueued(cudaError_t e) {
  if (e == cudaSuccess) return 0;
  (void)cudaGetLastError();
  return TESSERA_ERR_KERNEL;
}

/** 0 for a cuBLAS call that succeeded, else TESSERA_ERR_KERNEL. */
static inline int tsr_cuda_blas_status(cublasStatus_t st) {
  return st == CUBLAS_STATUS_SUCCESS ? 0 : TESSERA_ERR_KERNEL;
}

/** Enqueues the copy of the m x n block src (leading dimension lds) into dst (ldd), elements of
 *  es bytes, on ex->stream. */
static inline int tsr_cuda_copy_2d(const tessera_exec_t *ex, void *dst, int ldd, const void *src,
                                   int lds, int m, int n, size_t es) {
  return tsr_cuda_enqueued(cudaMemcpy2DAsync(dst, (size_t)ldd * es, src, (size_t)lds * es,
                                             (size_t)m * es, (size_t)n, cudaMemcpyDefault,
                                             (cudaStream_t)ex->stream));
}

/** The scratch of the worker running `ex`, or NULL when it lacks the CUDA handles. */
static inline const tessera_cuda_scratch_t *tsr_cuda_scratch(const tessera_exec_t *ex) {
  const tessera_cuda_scratch_t *s = ex->scratch;
  return s && s->cublas && s->cusolver ? s : NULL;
}

/** The worker's cuBLAS handle on ex->stream with host scalars, or NULL. */
static inline cublasHandle_t tsr_cuda_blas(const tessera_exec_t *ex) {
  const tessera_cuda_scratch_t *s = tsr_cuda_scratch(ex);
  if (!s) return NULL;
  cublasHandle_t h = s->cublas;
  cudaStream_t stream = ex->stream, bound = NULL;
  if (cublasGetStream(h, &bound) != CUBLAS_STATUS_SUCCESS ||
      (bound != stream && cublasSetStream(h, stream) != CUBLAS_STATUS_SUCCESS) ||
      cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST) != CUBLAS_STATUS_SUCCESS)
    return NULL;
  return h;
}

/** The worker's cuSOLVER handle on ex->stream, or NULL. */
static inline cusolverDnHandle_t tsr_cuda_solver(const tessera_exec_t *ex) {
  const tessera_cuda_scratch_t *s = tsr_cuda_scratch(ex);
  if (!s) return NULL;
  cusolverDnHandle_t h = s->cusolver;
  cudaStream_t stream = ex->stream, bound = NULL;
  if (cusolverDnGetStream(h, &bound) != CUSOLVER_STATUS_SUCCESS ||
      (bound != stream && cusolverDnSetStream(h, stream) != CUSOLVER_STATUS_SUCCESS))
    return NULL;
  return h;
}

/** The scratch of `ex` with its cuSOLVER handle bound to ex->stream in *h, or NULL when the
 *  worker's scratch lacks what the solver kernels (cholesky.c, lu.c) use. */
static inline const tessera_cuda_scratch_t *tsr_cuda_solver_scratch(const tessera_exec_t *ex,
                                                                    cusolverDnHandle_t *h) {
  const tessera_cuda_scratch_t *s = tsr_cuda_scratch(ex);
  if (!s || !s->dev_info || (!s->workspace && s->workspace_bytes > 0)) return NULL;
  *h = tsr_cuda_solver(ex);
  return *h ? s : NULL;
}

/* The per-worker hooks of the CUDA kernels (handles.c), listed in the backend registry: make and
 * free a tessera_cuda_scratch_t on a thread bound to device `dev`. */
int tsr_cuda_scratch_create(int dev, void **scratch);
void tsr_cuda_scratch_destroy(int dev, void *scratch);

#endif
