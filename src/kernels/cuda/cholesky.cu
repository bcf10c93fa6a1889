/* Device kernels of the Cholesky family (cholesky.h), behind the C launchers of cuda_kernels.h:
 * the scans of a factor's diagonal for a NaN (potrf) or an exact zero (trtri), a failed pivot
 * made NaN, and the diagonal's log-sum (logdiag, posv). */
#include <climits>

#include <cuda_runtime.h>
#include <math_constants.h>

#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/device.cuh"

namespace {

/* What a diagonal scan looks for: a NaN real part (potrf), or an exactly zero entry (trtri). */
enum class Scan { NaN, Zero };

/* One block per matrix of a batch (block b: the matrix `stride` reals after the first, its info
 * info[b]): `a` points at the real part of a(0, 0), a(j, j) is `step` reals further per j and
 * its imaginary part (when `cplx`) follows it. Every thread reads *info before the barrier;
 * thread 0 alone writes it after. */
template <typename Real, Scan what, bool cplx>
__global__ void diag_scan(const Real *a, long long step, long long stride, int n, int *info) {
  __shared__ int first;
  a += blockIdx.x * stride;
  info += blockIdx.x;
  const int given = *info;
  const int limit = given == 0 ? n : given > 0 ? min(given - 1, n) : 0;
  if (threadIdx.x == 0) first = INT_MAX;
  __syncthreads();
  for (int j = threadIdx.x; j < limit; j += blockDim.x) {
    const Real *x = a + j * step;
    const bool hit =
        what == Scan::NaN ? isnan(x[0]) : x[0] == Real(0) && (!cplx || x[1] == Real(0));
    if (hit) {
      atomicMin(&first, j);
      break;
    }
  }
  __syncthreads();
  if (threadIdx.x == 0 && first != INT_MAX) *info = first + 1;
}

template <typename Real, Scan what, bool cplx>
void launch_diag_scan(const void *a, size_t ld, long long stride, int n, int batch, int *dev_info,
                      cudaStream_t stream) {
  const long long step = (cplx ? 2 : 1) * (static_cast<long long>(ld) + 1); /* in reals */
  diag_scan<Real, what, cplx><<<batch, kScanThreads, 0, stream>>>(
      static_cast<const Real *>(a), step, (cplx ? 2 : 1) * stride, n, dev_info);
}

using scan_fn = void (*)(const void *, size_t, long long, int, int, int *, cudaStream_t);

/* The scan for `what` of each dtype, indexed by it. */
template <Scan what>
constexpr scan_fn scan_of[TESSERA_NUM_DTYPES] = {
    launch_diag_scan<float, what, false>, launch_diag_scan<double, what, false>,
    launch_diag_scan<float, what, true>, launch_diag_scan<double, what, true>};

/* Scans the diagonal of the n x n `a` of `dtype` for `what`; see cuda_kernels.h. */
template <Scan what>
int diag_scan_dtype(tessera_dtype_t dtype, const void *a, size_t ld, long long stride, int n,
                    int batch, int *dev_info, void *stream) {
  if (n <= 0 || batch <= 0) return 0;
  if (static_cast<int>(dtype) < 0 || static_cast<int>(dtype) >= TESSERA_NUM_DTYPES) return -1;
  scan_of<what>[dtype](a, ld, stride, n, batch, dev_info, static_cast<cudaStream_t>(stream));
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

/* One block per matrix of a batch (as diag_scan's, its sum sum[b]): each thread sums the logs of
 * a strided part of the diagonal (real parts `step` reals apart), then a tree in shared memory
 * adds the parts in a fixed order. */
template <typename Real>
__global__ void diag_logsum(const Real *a, long long step, long long stride, int n, double scale,
                            double *sum) {
  __shared__ double part[kScanThreads];
  a += blockIdx.x * stride;
  sum += blockIdx.x;
  double s = 0;
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    s += log(fabs(static_cast<double>(a[j * step])));
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) *sum = scale * part[0];
}

template <typename Real, bool cplx>
void launch_diag_logsum(const void *a, size_t ld, long long stride, int n, int batch, double scale,
                        double *sum, cudaStream_t stream) {
  const long long step = (cplx ? 2 : 1) * (static_cast<long long>(ld) + 1); /* in reals */
  diag_logsum<Real><<<batch, kScanThreads, 0, stream>>>(static_cast<const Real *>(a), step,
                                                        (cplx ? 2 : 1) * stride, n, scale, sum);
}

using logsum_fn = void (*)(const void *, size_t, long long, int, int, double, double *,
                           cudaStream_t);
constexpr logsum_fn logsum_of[TESSERA_NUM_DTYPES] = {
    launch_diag_logsum<float, false>, launch_diag_logsum<double, false>,
    launch_diag_logsum<float, true>, launch_diag_logsum<double, true>};

/* A failed pivot made NaN: when *info = k > 0, the real part of a(k - 1, k - 1). */
template <typename Real> __global__ void diag_poison(Real *a, long long step, const int *info) {
  const int k = *info;
  if (k > 0) a[(k - 1) * step] = CUDART_NAN_F;
}

template <typename Real, bool cplx>
void launch_diag_poison(void *a, size_t ld, const int *dev_info, cudaStream_t stream) {
  const long long step = (cplx ? 2 : 1) * (static_cast<long long>(ld) + 1); /* in reals */
  diag_poison<Real><<<1, 1, 0, stream>>>(static_cast<Real *>(a), step, dev_info);
}

using poison_fn = void (*)(void *, size_t, const int *, cudaStream_t);
constexpr poison_fn poison_of[TESSERA_NUM_DTYPES] = {
    launch_diag_poison<float, false>, launch_diag_poison<double, false>,
    launch_diag_poison<float, true>, launch_diag_poison<double, true>};

/* out[i] = base + i * step bytes, for the batched library calls' arrays of matrices. */
__global__ void pointers(void **out, char *base, long long step, int count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[i] = base + i * step;
}

} // namespace

extern "C" int tsr_cuda_diag_nan_check(tessera_dtype_t dtype, const void *a, size_t ld, int n,
                                       int *dev_info, void *stream) {
  return diag_scan_dtype<Scan::NaN>(dtype, a, ld, 0, n, 1, dev_info, stream);
}

extern "C" int tsr_cuda_diag_nan_check_batch(tessera_dtype_t dtype, const void *a, size_t ld,
                                             long long stride, int n, int batch, int *dev_info,
                                             void *stream) {
  return diag_scan_dtype<Scan::NaN>(dtype, a, ld, stride, n, batch, dev_info, stream);
}

extern "C" int tsr_cuda_diag_zero_check(tessera_dtype_t dtype, const void *a, size_t ld, int n,
                                        int *dev_info, void *stream) {
  return diag_scan_dtype<Scan::Zero>(dtype, a, ld, 0, n, 1, dev_info, stream);
}

extern "C" int tsr_cuda_pointers(void **out, void *base, long long step, int count, void *stream) {
  if (count <= 0) return 0;
  pointers<<<(count + 255) / 256, 256, 0, static_cast<cudaStream_t>(stream)>>>(
      out, static_cast<char *>(base), step, count);
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int tsr_cuda_diag_poison(tessera_dtype_t dtype, void *a, size_t ld, const int *dev_info,
                                    void *stream) {
  if (static_cast<int>(dtype) < 0 || static_cast<int>(dtype) >= TESSERA_NUM_DTYPES) return -1;
  poison_of[dtype](a, ld, dev_info, static_cast<cudaStream_t>(stream));
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int tsr_cuda_diag_logsum(tessera_dtype_t dtype, const void *a, size_t ld, int n,
                                    double scale, double *dev_sum, void *stream) {
  return tsr_cuda_diag_logsum_batch(dtype, a, ld, 0, n, 1, scale, dev_sum, stream);
}

extern "C" int tsr_cuda_diag_logsum_batch(tessera_dtype_t dtype, const void *a, size_t ld,
                                          long long stride, int n, int batch, double scale,
                                          double *dev_sum, void *stream) {
  if (static_cast<int>(dtype) < 0 || static_cast<int>(dtype) >= TESSERA_NUM_DTYPES) return -1;
  if (batch <= 0) return 0;
  logsum_of[dtype](a, ld, stride, n, batch, scale, dev_sum, static_cast<cudaStream_t>(stream));
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
