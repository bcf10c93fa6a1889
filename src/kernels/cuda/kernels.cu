/* Custom device kernels of the CUDA tile kernels, behind the C launchers of cuda_kernels.h. */
#include <climits>

#include <cuda_runtime.h>

#include "kernels/cuda/cuda_kernels.h"

namespace {

constexpr int kScanThreads = 256;

/* One block: `a` points at the real part of a(0, 0) and a(j, j) is `step` reals further per j.
 * Every thread reads *info before the barrier; thread 0 alone writes it after. */
template <typename Real>
__global__ void diag_nan_check(const Real *a, long long step, int n, int *info) {
  __shared__ int first;
  const int given = *info;
  const int limit = given == 0 ? n : given > 0 ? min(given - 1, n) : 0;
  if (threadIdx.x == 0) first = INT_MAX;
  __syncthreads();
  for (int j = threadIdx.x; j < limit; j += blockDim.x) {
    if (isnan(a[j * step])) {
      atomicMin(&first, j);
      break;
    }
  }
  __syncthreads();
  if (threadIdx.x == 0 && first != INT_MAX) *info = first + 1;
}

template <typename Real>
void launch_diag_nan_check(const void *a, long long step, int n, int *dev_info,
                           cudaStream_t stream) {
  diag_nan_check<Real>
      <<<1, kScanThreads, 0, stream>>>(static_cast<const Real *>(a), step, n, dev_info);
}

} // namespace

extern "C" int tsr_cuda_diag_nan_check(tessera_dtype_t dtype, const void *a, size_t ld, int n,
                                       int *dev_info, void *stream) {
  if (n <= 0) return 0;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  const long long step = static_cast<long long>(ld) + 1;
  switch (dtype) {
  case TESSERA_F32:
    launch_diag_nan_check<float>(a, step, n, dev_info, s);
    break;
  case TESSERA_F64:
    launch_diag_nan_check<double>(a, step, n, dev_info, s);
    break;
  case TESSERA_C64: /* the real part of each complex entry: twice the step in reals */
    launch_diag_nan_check<float>(a, 2 * step, n, dev_info, s);
    break;
  case TESSERA_C128:
    launch_diag_nan_check<double>(a, 2 * step, n, dev_info, s);
    break;
  default:
    return -1;
  }
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
