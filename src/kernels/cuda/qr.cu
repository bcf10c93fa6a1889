/* Device kernels of the QR of a tall panel (qr_tall.c), behind the C launchers of
 * cuda_kernels.h: the LU with signs of Householder reconstruction, the assembly of its R, V and
 * T, and the spread of a Gram matrix that says whether CholeskyQR is accurate. */
#include <cuda_runtime.h>
#include <math_constants.h>

#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/device.cuh"

namespace {

/* One panel (columns k0 .. k0 + b - 1, rows k0 .. n - 1) of the LU factorization without
 * pivoting of Q's top n x n block less a diagonal of signs (Householder reconstruction, Ballard
 * et al.): at column k the sign s_k is the opposite of the pivot's, the pivot becomes q_kk - s_k
 * (at least 1 in magnitude), the column below is divided by it and the panel's later columns
 * updated. In place: L strictly below the diagonal (unit), U on and above; the signs to sgn. One
 * thread block, real dtypes; the caller updates the columns right of the panel. */
template <typename Real>
__global__ void lu_signs(Real *w, long long ldw, int n, int k0, int b, Real *sgn) {
  for (int k = k0; k < k0 + b; k++) {
    const Real p = w[k * ldw + k], s = p < Real(0) ? Real(1) : Real(-1);
    __syncthreads();
    const Real d = p - s;
    if (threadIdx.x == 0) sgn[k] = s, w[k * ldw + k] = d;
    for (int i = k + 1 + threadIdx.x; i < n; i += blockDim.x) w[k * ldw + i] /= d;
    __syncthreads();
    const int rows = n - k - 1, cols = k0 + b - k - 1;
    for (int idx = threadIdx.x; idx < rows * cols; idx += blockDim.x) {
      const int i = k + 1 + idx % rows, j = k + 1 + idx / rows;
      w[j * ldw + i] -= w[k * ldw + i] * w[j * ldw + k];
    }
    __syncthreads();
  }
}

/* The tall path's results from R = R2 R1 (y, upper), L \ U (w) and the signs: A's top block
 * gets S R on and above the diagonal and L's vectors below it; t gets -U S above and on the
 * diagonal and zeros below (the caller then divides by L1ᴴ from the right). One thread block per
 * column. */
template <typename Real>
__global__ void tall_finish(const Real *y, long long ldy, const Real *w, long long ldw,
                            const Real *sgn, int n, Real *a, long long lda, Real *t,
                            long long ldt) {
  const int j = blockIdx.x;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    a[j * lda + i] = i <= j ? sgn[i] * y[j * ldy + i] : w[j * ldw + i];
    t[j * ldt + i] = i <= j ? -w[j * ldw + i] * sgn[j] : Real(0);
  }
}

/* The largest off-diagonal row sum of the Gram matrix G (n x n, ldg, symmetric) scaled to a
 * unit diagonal, max_i sum_{j != i} |g_ij| / sqrt(g_ii g_jj), into *out: by Gershgorin's theorem
 * the scaled matrix's eigenvalues lie within that distance of 1. Infinity where a diagonal entry
 * is not positive or an entry is NaN. One thread block. */
template <typename Real>
__global__ void gram_spread(const Real *g, long long ldg, int n, double *out) {
  __shared__ unsigned long long best;
  if (threadIdx.x == 0) best = 0;
  __syncthreads();
  double mine = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const double gii = static_cast<double>(g[i * ldg + i]);
    double s = 0;
    for (int j = 0; j < n; j++)
      if (j != i)
        s += fabs(static_cast<double>(g[j * ldg + i])) /
             sqrt(gii * static_cast<double>(g[j * ldg + j]));
    mine = fmax(mine, gii > 0 && s == s ? s : CUDART_INF);
  }
  /* non-negative doubles order as their bit patterns do */
  atomicMax(&best, static_cast<unsigned long long>(__double_as_longlong(mine)));
  __syncthreads();
  if (threadIdx.x == 0) *out = __longlong_as_double(static_cast<long long>(best));
}

} // namespace

extern "C" int tsr_cuda_lu_signs(tessera_dtype_t dtype, void *w, size_t ldw, int n, int k0, int b,
                                 void *sgn, void *stream) {
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  const long long ld = static_cast<long long>(ldw);
  if (n < 1 || b < 1) return 0;
  if (dtype == TESSERA_F32)
    lu_signs<float>
        <<<1, 1024, 0, st>>>(static_cast<float *>(w), ld, n, k0, b, static_cast<float *>(sgn));
  else if (dtype == TESSERA_F64)
    lu_signs<double>
        <<<1, 1024, 0, st>>>(static_cast<double *>(w), ld, n, k0, b, static_cast<double *>(sgn));
  else
    return -1;
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int tsr_cuda_tall_finish(tessera_dtype_t dtype, const void *y, size_t ldy, const void *w,
                                    size_t ldw, const void *sgn, int n, void *a, size_t lda,
                                    void *t, size_t ldt, void *stream) {
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  const long long ly = static_cast<long long>(ldy), lw = static_cast<long long>(ldw);
  const long long la = static_cast<long long>(lda), lt = static_cast<long long>(ldt);
  if (n < 1) return 0;
  if (dtype == TESSERA_F32)
    tall_finish<float><<<n, kScanThreads, 0, st>>>(
        static_cast<const float *>(y), ly, static_cast<const float *>(w), lw,
        static_cast<const float *>(sgn), n, static_cast<float *>(a), la, static_cast<float *>(t),
        lt);
  else if (dtype == TESSERA_F64)
    tall_finish<double><<<n, kScanThreads, 0, st>>>(
        static_cast<const double *>(y), ly, static_cast<const double *>(w), lw,
        static_cast<const double *>(sgn), n, static_cast<double *>(a), la, static_cast<double *>(t),
        lt);
  else
    return -1;
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int tsr_cuda_gram_spread(tessera_dtype_t dtype, const void *g, size_t ldg, int n,
                                    double *out, void *stream) {
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  const long long ld = static_cast<long long>(ldg);
  if (n < 1) return cudaMemsetAsync(out, 0, sizeof *out, st) == cudaSuccess ? 0 : -1;
  if (dtype == TESSERA_F32)
    gram_spread<float><<<1, 1024, 0, st>>>(static_cast<const float *>(g), ld, n, out);
  else if (dtype == TESSERA_F64)
    gram_spread<double><<<1, 1024, 0, st>>>(static_cast<const double *>(g), ld, n, out);
  else
    return -1;
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
