/* The cuBLAS and cuSOLVER functions tessera's CUDA kernels call, each declared weak (library.h):
 * libtessera does not link the two libraries; a GPU worker loads them when it makes its handles
 * (tsr_cuda_libraries_load, handles.c), before any kernel runs. Every file calling them includes
 * this (through cuda_common.h); a function missing from the lists is a strong reference, which
 * the programs linking libtessera then fail to link against: add it here. */
#ifndef TSR_KERNELS_CUDA_LIBS_H
#define TSR_KERNELS_CUDA_LIBS_H

#include <stddef.h>

#include "device/library.h"

// clang-format off
#define TSR_CUBLAS_FUNCTIONS(X) \
  X(cublasCgeam) X(cublasChemm_v2) X(cublasCtrsmBatched) X(cublasDtrsmBatched) \
  X(cublasStrsmBatched) X(cublasZtrsmBatched) X(cublasChemv_v2) X(cublasCherk_v2) X(cublasCreate_v2) \
  X(cublasCsyrk_v2) X(cublasCtrmm_v2) X(cublasCtrsm_v2) X(cublasCtrsv_v2) \
  X(cublasDestroy_v2) X(cublasDgeam) X(cublasDgemm_v2) X(cublasDnrm2_v2) X(cublasDsymm_v2) \
  X(cublasDsymv_v2) X(cublasDsyrk_v2) X(cublasDtrmm_v2) X(cublasDtrsm_v2) X(cublasDtrsv_v2) \
  X(cublasGemmEx) X(cublasGemmStridedBatchedEx) X(cublasGetStream_v2) X(cublasSetMathMode) \
  X(cublasSetPointerMode_v2) X(cublasSetStream_v2) X(cublasSgeam) X(cublasSnrm2_v2) \
  X(cublasSsymm_v2) X(cublasSsymv_v2) X(cublasSsyrk_v2) X(cublasStrmm_v2) X(cublasStrsm_v2) \
  X(cublasStrsv_v2) X(cublasZgeam) X(cublasZhemm_v2) X(cublasZhemv_v2) X(cublasZherk_v2) \
  X(cublasZsyrk_v2) X(cublasZtrmm_v2) X(cublasZtrsm_v2) X(cublasZtrsv_v2)
// clang-format on

// clang-format off
#define TSR_CUSOLVER_FUNCTIONS(X) \
  X(cusolverDnCgeqrf) X(cusolverDnCgeqrf_bufferSize) X(cusolverDnCgetrf) \
  X(cusolverDnCgetrf_bufferSize) X(cusolverDnClaswp) X(cusolverDnClauum) \
  X(cusolverDnClauum_bufferSize) X(cusolverDnCpotrf) X(cusolverDnCpotrf_bufferSize) \
  X(cusolverDnCpotrfBatched) X(cusolverDnDpotrfBatched) X(cusolverDnSpotrfBatched) \
  X(cusolverDnZpotrfBatched) \
  X(cusolverDnCreate) X(cusolverDnCreateParams) X(cusolverDnDestroy) \
  X(cusolverDnDestroyParams) X(cusolverDnDgeqrf) X(cusolverDnDgeqrf_bufferSize) \
  X(cusolverDnDgetrf) X(cusolverDnDgetrf_bufferSize) X(cusolverDnDlaswp) \
  X(cusolverDnDlauum) X(cusolverDnDlauum_bufferSize) X(cusolverDnDpotrf) \
  X(cusolverDnDpotrf_bufferSize) X(cusolverDnGetStream) X(cusolverDnSetStream) \
  X(cusolverDnSgeqrf) X(cusolverDnSgeqrf_bufferSize) X(cusolverDnSgetrf) \
  X(cusolverDnSgetrf_bufferSize) X(cusolverDnSlaswp) X(cusolverDnSlauum) \
  X(cusolverDnSlauum_bufferSize) X(cusolverDnSpotrf) X(cusolverDnSpotrf_bufferSize) \
  X(cusolverDnXsyevd) X(cusolverDnXsyevd_bufferSize) X(cusolverDnXsyevdx) \
  X(cusolverDnXsyevdx_bufferSize) X(cusolverDnXtrtri) \
  X(cusolverDnXtrtri_bufferSize) X(cusolverDnZgeqrf) X(cusolverDnZgeqrf_bufferSize) \
  X(cusolverDnZgetrf) X(cusolverDnZgetrf_bufferSize) X(cusolverDnZlaswp) \
  X(cusolverDnZlauum) X(cusolverDnZlauum_bufferSize) X(cusolverDnZpotrf) \
  X(cusolverDnZpotrf_bufferSize)
// clang-format on

TSR_CUBLAS_FUNCTIONS(TSR_WEAK)
TSR_CUSOLVER_FUNCTIONS(TSR_WEAK)

/** Loads cuBLAS, then cuSOLVER (which needs it), for good. Returns 0, or TESSERA_ERR_BACKEND
 *  with the loader's reason in why. */
int tsr_cuda_libraries_load(char *why, size_t len);

#endif
