/* The cuSOLVER functions of the CLI's GPU baselines (bench_gpu.c, bench_svd.c, bench_irs.c),
 * each declared weak: the CLI does not link cuSOLVER or cuSolverMg, it loads them when a
 * baseline first runs (bench_gpu_libraries), so that every other command starts without them.
 * A function missing from the list is a strong reference, which fails the CLI's link: add it
 * here. */
#ifndef TESSERA_TOOLS_CUDA_LIBS_H
#define TESSERA_TOOLS_CUDA_LIBS_H

#define CLI_WEAK(f) CLI_WEAK_PRAGMA(weak f)
#define CLI_WEAK_PRAGMA(x) _Pragma(#x)

// clang-format off
#define CLI_CUSOLVER_FUNCTIONS(X) \
  X(cusolverDnCCgels) X(cusolverDnCCgels_bufferSize) X(cusolverDnCEgesv) \
  X(cusolverDnCEgesv_bufferSize) X(cusolverDnCKgesv) X(cusolverDnCKgesv_bufferSize) \
  X(cusolverDnCYgesv) X(cusolverDnCYgesv_bufferSize) X(cusolverDnCreate) \
  X(cusolverDnCreateParams) X(cusolverDnDBgesv) X(cusolverDnDBgesv_bufferSize) \
  X(cusolverDnDDgels) X(cusolverDnDDgels_bufferSize) X(cusolverDnDHgesv) \
  X(cusolverDnDHgesv_bufferSize) X(cusolverDnDSgesv) X(cusolverDnDSgesv_bufferSize) \
  X(cusolverDnDXgesv) X(cusolverDnDXgesv_bufferSize) X(cusolverDnDestroy) \
  X(cusolverDnDestroyParams) X(cusolverDnSBgesv) X(cusolverDnSBgesv_bufferSize) \
  X(cusolverDnSHgesv) X(cusolverDnSHgesv_bufferSize) X(cusolverDnSSgels) \
  X(cusolverDnSSgels_bufferSize) X(cusolverDnSXgesv) X(cusolverDnSXgesv_bufferSize) \
  X(cusolverDnXgeqrf) X(cusolverDnXgeqrf_bufferSize) X(cusolverDnXgesvdp) \
  X(cusolverDnXgesvdp_bufferSize) X(cusolverDnXgetrf) X(cusolverDnXgetrf_bufferSize) \
  X(cusolverDnXpotrf) X(cusolverDnXpotrf_bufferSize) X(cusolverDnXsyevd) \
  X(cusolverDnXsyevd_bufferSize) X(cusolverDnZCgesv) X(cusolverDnZCgesv_bufferSize) \
  X(cusolverDnZEgesv) X(cusolverDnZEgesv_bufferSize) X(cusolverDnZKgesv) \
  X(cusolverDnZKgesv_bufferSize) X(cusolverDnZYgesv) X(cusolverDnZYgesv_bufferSize) \
  X(cusolverDnZZgels) X(cusolverDnZZgels_bufferSize) X(cusolverMgCreate) \
  X(cusolverMgCreateDeviceGrid) X(cusolverMgCreateMatrixDesc) X(cusolverMgDestroy) \
  X(cusolverMgDestroyGrid) X(cusolverMgDestroyMatrixDesc) X(cusolverMgDeviceSelect) \
  X(cusolverMgGetrf) X(cusolverMgGetrf_bufferSize) X(cusolverMgPotrf) \
  X(cusolverMgPotrf_bufferSize) X(cusolverMgSyevd) X(cusolverMgSyevd_bufferSize)
// clang-format on

CLI_CUSOLVER_FUNCTIONS(CLI_WEAK)

#endif
