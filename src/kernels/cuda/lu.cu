/* Device kernels of the LU family (lu.h), behind the C launchers of cuda_kernels.h: the scans of
 * a panel's columns for NaN and the info they lower, the permutation of a step's interchanges
 * and the row gather that applies it. */
#include <cuda_runtime.h>

#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/device.cuh"

namespace {

/* No column found: every byte 0x7f (set by a memset), above any column index. */
constexpr int kNoColumn = 0x7f7f7f7f;

/* Column j of the m x n block is scanned by blocks of threads along its rows (the grid's x
 * covers columns, its y row chunks); a NaN lowers *first (kNoColumn before) to j. */
template <typename Real, bool cplx>
__global__ void nan_columns(const Real *a, long long ld, int m, int n, int *first) {
  const int j = blockIdx.x;
  const int w = cplx ? 2 : 1;
  const Real *col = a + static_cast<long long>(j) * ld * w;
  for (long long i = blockIdx.y * static_cast<long long>(blockDim.x) + threadIdx.x;
       i < static_cast<long long>(m) * w; i += static_cast<long long>(gridDim.y) * blockDim.x)
    if (isnan(col[i])) {
      atomicMin(first, j);
      return;
    }
}

/* Column *info - 1 (when in [1, n]) of the m x n block, NaN: w reals per element. */
template <typename Real, int w>
__global__ void nan_column(Real *a, long long ld, int m, int n, const int *info) {
  const int j = *info - 1;
  if (j < 0 || j >= n) return;
  Real *col = a + static_cast<long long>(j) * ld * w;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
       i < static_cast<long long>(m) * w; i += static_cast<long long>(gridDim.x) * blockDim.x)
    col[i] = static_cast<Real>(NAN);
}

/* *into = the lower nonzero of *from and *into. */
__global__ void merge_info(const int *from, int *into) {
  const int f = *from;
  if (f > 0 && (*into <= 0 || f < *into)) *into = f;
}

/* info = min(info, first + 1) over the nonzero ones. */
__global__ void merge_first(const int *first, int *info) {
  const int f = *first;
  if (f != kNoColumn && (*info == 0 || f + 1 < *info)) *info = f + 1;
}

template <typename Real, bool cplx>
void launch_nan_columns(const void *a, size_t ld, int m, int n, int *first, cudaStream_t stream) {
  const int chunks = m / (8 * kScanThreads) + 1;
  const dim3 grid(static_cast<unsigned>(n), static_cast<unsigned>(chunks < 64 ? chunks : 64));
  nan_columns<Real, cplx><<<grid, kScanThreads, 0, stream>>>(
      static_cast<const Real *>(a), static_cast<long long>(ld), m, n, first);
}

using nan_columns_fn = void (*)(const void *, size_t, int, int, int *, cudaStream_t);
constexpr nan_columns_fn nan_columns_of[TESSERA_NUM_DTYPES] = {
    launch_nan_columns<float, false>, launch_nan_columns<double, false>,
    launch_nan_columns<float, true>, launch_nan_columns<double, true>};

template <typename Real, int w>
void launch_nan_column(void *a, size_t ld, int m, int n, const int *info, cudaStream_t stream) {
  const int blocks = m / kScanThreads + 1 < 64 ? m / kScanThreads + 1 : 64;
  nan_column<Real, w><<<blocks, kScanThreads, 0, stream>>>(static_cast<Real *>(a),
                                                           static_cast<long long>(ld), m, n, info);
}

using nan_column_fn = void (*)(void *, size_t, int, int, const int *, cudaStream_t);
constexpr nan_column_fn nan_column_of[TESSERA_NUM_DTYPES] = {
    launch_nan_column<float, 1>, launch_nan_column<double, 1>, launch_nan_column<float, 2>,
    launch_nan_column<double, 2>};

/* The permutation of a step's k interchanges (TSR_PIV_INTS layout), one block: prev[i], the
 * last earlier interchange naming the same row below the first k, is found in parallel; then one
 * thread follows the interchanges in shared memory, tracking which original row each of the
 * first k rows holds (c) and what each interchange left in the row below it names (out). */
__global__ void lu_swaps(int *piv, int k) {
  extern __shared__ int sh[];
  int *p = sh, *prev = sh + k, *c = sh + 2 * k, *out = sh + 3 * k, *last = sh + 4 * k;
  for (int i = threadIdx.x; i < k; i += blockDim.x) {
    p[i] = piv[1 + i] - 1;
    c[i] = i;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < k; i += blockDim.x) {
    int before = -1;
    if (p[i] >= k)
      for (int j = i - 1; j >= 0; j--)
        if (p[j] == p[i]) {
          before = j;
          break;
        }
    prev[i] = before;
    bool later = false; /* a later interchange names the same row below: it decides its row */
    if (p[i] >= k)
      for (int j = i + 1; j < k && !later; j++) later = p[j] == p[i];
    last[i] = !later;
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (int i = 0; i < k; i++) {
      const int q = p[i];
      if (q < k) {
        const int t = c[i];
        c[i] = c[q];
        c[q] = t;
      } else {
        const int held = prev[i] >= 0 ? out[prev[i]] : q; /* what row q holds now */
        out[i] = c[i];
        c[i] = held;
      }
    }
  __syncthreads();
  /* rows of the first k that changed, then each row below (its last interchange), in order */
  if (threadIdx.x == 0) {
    int *count = piv + 1 + k, *dst = count + 1, *src = dst + 2 * k, n = 0;
    for (int r = 0; r < k; r++)
      if (c[r] != r) dst[n] = r, src[n++] = c[r];
    for (int i = 0; i < k; i++)
      if (p[i] >= k && last[i] && out[i] != p[i]) dst[n] = p[i], src[n++] = out[i];
    *count = n;
  }
}

/* Column blockIdx.x of the block: every thread reads its pairs' sources, then writes them. */
template <typename T, int kPer>
__global__ void row_gather(T *a, long long ld, const int *piv, int k, bool inverse) {
  const int count = piv[1 + k];
  const int *dst = piv + 2 + k, *src = dst + 2 * k;
  T *col = a + static_cast<long long>(blockIdx.x) * ld;
  T v[kPer];
#pragma unroll
  for (int j = 0; j < kPer; j++) {
    const int t = threadIdx.x + j * blockDim.x;
    if (t < count) v[j] = col[inverse ? dst[t] : src[t]];
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < kPer; j++) {
    const int t = threadIdx.x + j * blockDim.x;
    if (t < count) col[inverse ? src[t] : dst[t]] = v[j];
  }
}

constexpr int kGatherThreads = 512;
constexpr int kGatherPer = 2 * TSR_CUDA_SWAPS_MAX / kGatherThreads;

template <typename T>
void launch_row_gather(void *a, size_t ld, int n, const int *piv, int k, bool inverse,
                       cudaStream_t stream) {
  row_gather<T, kGatherPer><<<n, kGatherThreads, 0, stream>>>(
      static_cast<T *>(a), static_cast<long long>(ld), piv, k, inverse);
}

using gather_fn = void (*)(void *, size_t, int, const int *, int, bool, cudaStream_t);
constexpr gather_fn gather_of[TESSERA_NUM_DTYPES] = {
    launch_row_gather<float>, launch_row_gather<double>, launch_row_gather<c64_t>,
    launch_row_gather<c128_t>};

} // namespace

extern "C" int tsr_cuda_lu_swaps(int *piv, int k, void *stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (k <= 0 || k > TSR_CUDA_SWAPS_MAX) {
    const int none = k <= 0 ? 0 : -1;
    if (cudaMemsetAsync(piv + 1 + (k > 0 ? k : 0), none ? 0xff : 0, sizeof(int), s) != cudaSuccess)
      return -1;
    return 0;
  }
  lu_swaps<<<1, 1024, 5 * static_cast<size_t>(k) * sizeof(int), s>>>(piv, k);
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int tsr_cuda_row_gather(tessera_dtype_t dtype, void *a, size_t ld, int n, const int *piv,
                                   int k, int incx, void *stream) {
  if (n <= 0 || k <= 0) return 0;
  if (static_cast<int>(dtype) < 0 || static_cast<int>(dtype) >= TESSERA_NUM_DTYPES ||
      k > TSR_CUDA_SWAPS_MAX)
    return -1;
  gather_of[dtype](a, ld, n, piv, k, incx < 0, static_cast<cudaStream_t>(stream));
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int tsr_cuda_nan_columns(tessera_dtype_t dtype, const void *a, size_t ld, int m, int n,
                                    int *dev_info, void *scratch, void *stream) {
  if (m <= 0 || n <= 0) return 0;
  if (static_cast<int>(dtype) < 0 || static_cast<int>(dtype) >= TESSERA_NUM_DTYPES) return -1;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  int *first = static_cast<int *>(scratch);
  if (cudaMemsetAsync(first, kNoColumn & 0xff, sizeof *first, s) != cudaSuccess) return -1;
  nan_columns_of[dtype](a, ld, m, n, first, s);
  merge_first<<<1, 1, 0, s>>>(first, dev_info);
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int tsr_cuda_nan_column(tessera_dtype_t dtype, void *a, size_t ld, int m, int n,
                                   const int *info, void *stream) {
  if (m <= 0 || n <= 0) return 0;
  if (static_cast<int>(dtype) < 0 || static_cast<int>(dtype) >= TESSERA_NUM_DTYPES) return -1;
  nan_column_of[dtype](a, ld, m, n, info, static_cast<cudaStream_t>(stream));
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int tsr_cuda_merge_info(const int *from, int *into, void *stream) {
  merge_info<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(from, into);
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
