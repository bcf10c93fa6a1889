/* Device kernels of the copies (copy.h), behind the C launchers of cuda_kernels.h: a block of an
 * identity, the Hermitian fill of a triangle and a triangle with zeros in the other. */
#include <cuda_runtime.h>

#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/device.cuh"

namespace {

/* a = I (n x n, leading dimension ld): one block per column. */
template <typename T> __device__ T unit(bool one);
template <> __device__ float unit<float>(bool one) {
  return one ? 1.0f : 0.0f;
}
template <> __device__ double unit<double>(bool one) {
  return one ? 1.0 : 0.0;
}
template <> __device__ c64_t unit<c64_t>(bool one) {
  return {one ? 1.0f : 0.0f, 0.0f};
}
template <> __device__ c128_t unit<c128_t>(bool one) {
  return {one ? 1.0 : 0.0, 0.0};
}

/* The m x n block a: ones where column - row == d, zeros elsewhere (one thread block a column). */
template <typename T> __global__ void identity(T *a, long long ld, int m, int d) {
  T *col = a + static_cast<long long>(blockIdx.x) * ld;
  for (int i = threadIdx.x; i < m; i += blockDim.x)
    col[i] = unit<T>(static_cast<int>(blockIdx.x) - i == d);
}

template <typename T>
void launch_identity(void *a, size_t ld, int m, int n, int d, cudaStream_t stream) {
  identity<T><<<n, 256, 0, stream>>>(static_cast<T *>(a), static_cast<long long>(ld), m, d);
}

using identity_fn = void (*)(void *, size_t, int, int, int, cudaStream_t);
constexpr identity_fn identity_of[TESSERA_NUM_DTYPES] = {
    launch_identity<float>, launch_identity<double>, launch_identity<c64_t>,
    launch_identity<c128_t>};

/* The conjugate of an element (the element itself for real types). */
__device__ float conj_of(float x) {
  return x;
}
__device__ double conj_of(double x) {
  return x;
}
__device__ c64_t conj_of(c64_t x) {
  return {x.re, -x.im};
}
__device__ c128_t conj_of(c128_t x) {
  return {x.re, -x.im};
}

/* a's strictly upper triangle (n x n) from its lower, conjugated: one thread block a column. */
template <typename T> __global__ void hermitian_fill(T *a, long long ld) {
  const long long c = blockIdx.x;
  for (long long r = threadIdx.x; r < c; r += blockDim.x) a[c * ld + r] = conj_of(a[r * ld + c]);
}

template <typename T> void launch_hermitian_fill(void *a, size_t ld, int n, cudaStream_t stream) {
  hermitian_fill<T><<<n, 256, 0, stream>>>(static_cast<T *>(a), static_cast<long long>(ld));
}

using hermitian_fill_fn = void (*)(void *, size_t, int, cudaStream_t);
constexpr hermitian_fill_fn hermitian_fill_of[TESSERA_NUM_DTYPES] = {
    launch_hermitian_fill<float>, launch_hermitian_fill<double>, launch_hermitian_fill<c64_t>,
    launch_hermitian_fill<c128_t>};

/* The k x k triangle of `src` with zeros in the other (lower: the strictly lower part and ones
 * on the diagonal, a unit lower triangular matrix; else the upper part with its diagonal) into
 * `dst`: w reals per element, one thread block per column. */
template <typename Real, int w>
__global__ void triangle(const Real *src, long long lds, int k, bool lower, Real *dst,
                         long long ldd) {
  const int j = blockIdx.x;
  for (int i = threadIdx.x; i < k; i += blockDim.x)
    for (int c = 0; c < w; c++) {
      const bool kept = lower ? i > j : i <= j;
      dst[(j * ldd + i) * w + c] =
          kept ? src[(j * lds + i) * w + c] : Real(lower && i == j && c == 0 ? 1 : 0);
    }
}

template <typename Real, int w>
void launch_triangle(const void *src, size_t lds, int k, bool lower, void *dst, size_t ldd,
                     cudaStream_t stream) {
  triangle<Real, w><<<k, kScanThreads, 0, stream>>>(
      static_cast<const Real *>(src), static_cast<long long>(lds), k, lower,
      static_cast<Real *>(dst), static_cast<long long>(ldd));
}

using triangle_fn = void (*)(const void *, size_t, int, bool, void *, size_t, cudaStream_t);
constexpr triangle_fn triangle_of[TESSERA_NUM_DTYPES] = {
    launch_triangle<float, 1>, launch_triangle<double, 1>, launch_triangle<float, 2>,
    launch_triangle<double, 2>};

} // namespace

extern "C" int tsr_cuda_identity_block(tessera_dtype_t dtype, void *a, size_t ld, int m, int n,
                                       int d, void *stream) {
  if (m <= 0 || n <= 0) return 0;
  if (static_cast<int>(dtype) < 0 || static_cast<int>(dtype) >= TESSERA_NUM_DTYPES) return -1;
  identity_of[dtype](a, ld, m, n, d, static_cast<cudaStream_t>(stream));
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int tsr_cuda_hermitian_fill(tessera_dtype_t dtype, void *a, size_t ld, int n,
                                       void *stream) {
  if (n <= 1) return 0;
  if (static_cast<int>(dtype) < 0 || static_cast<int>(dtype) >= TESSERA_NUM_DTYPES) return -1;
  hermitian_fill_of[dtype](a, ld, n, static_cast<cudaStream_t>(stream));
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int tsr_cuda_triangle(tessera_dtype_t dtype, const void *src, size_t lds, int k,
                                 char uplo, void *dst, size_t ldd, void *stream) {
  if (static_cast<int>(dtype) < 0 || static_cast<int>(dtype) >= TESSERA_NUM_DTYPES ||
      (uplo != 'L' && uplo != 'U'))
    return -1;
  if (k > 0)
    triangle_of[dtype](src, lds, k, uplo == 'L', dst, ldd, static_cast<cudaStream_t>(stream));
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
