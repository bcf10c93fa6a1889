/* Custom device kernels of the CUDA tile kernels, behind the C launchers of cuda_kernels.h. */
#include <climits>

#include <cuda_runtime.h>
#include <math_constants.h>

#include "kernels/cuda/cuda_kernels.h"

namespace {

constexpr int kScanThreads = 256;

/* What a diagonal scan looks for: a NaN real part (potrf), or an exactly zero entry (trtri). */
enum class Scan { NaN, Zero };

/* One block: `a` points at the real part of a(0, 0), a(j, j) is `step` reals further per j and
 * its imaginary part (when `cplx`) follows it. Every thread reads *info before the barrier;
 * thread 0 alone writes it after. */
template <typename Real, Scan what, bool cplx>
__global__ void diag_scan(const Real *a, long long step, int n, int *info) {
  __shared__ int first;
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
void launch_diag_scan(const void *a, size_t ld, int n, int *dev_info, cudaStream_t stream) {
  const long long step = (cplx ? 2 : 1) * (static_cast<long long>(ld) + 1); /* in reals */
  diag_scan<Real, what, cplx>
      <<<1, kScanThreads, 0, stream>>>(static_cast<const Real *>(a), step, n, dev_info);
}

using scan_fn = void (*)(const void *, size_t, int, int *, cudaStream_t);

/* The scan for `what` of each dtype, indexed by it. */
template <Scan what>
constexpr scan_fn scan_of[TESSERA_NUM_DTYPES] = {
    launch_diag_scan<float, what, false>, launch_diag_scan<double, what, false>,
    launch_diag_scan<float, what, true>, launch_diag_scan<double, what, true>};

/* Scans the diagonal of the n x n `a` of `dtype` for `what`; see cuda_kernels.h. */
template <Scan what>
int diag_scan_dtype(tessera_dtype_t dtype, const void *a, size_t ld, int n, int *dev_info,
                    void *stream) {
  if (n <= 0) return 0;
  if (static_cast<int>(dtype) < 0 || static_cast<int>(dtype) >= TESSERA_NUM_DTYPES) return -1;
  scan_of<what>[dtype](a, ld, n, dev_info, static_cast<cudaStream_t>(stream));
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

/* One block: each thread sums the logs of a strided part of the diagonal (real parts `step`
 * reals apart), then a tree in shared memory adds the parts in a fixed order. */
template <typename Real>
__global__ void diag_logsum(const Real *a, long long step, int n, double scale, double *sum) {
  __shared__ double part[kScanThreads];
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
void launch_diag_logsum(const void *a, size_t ld, int n, double scale, double *sum,
                        cudaStream_t stream) {
  const long long step = (cplx ? 2 : 1) * (static_cast<long long>(ld) + 1); /* in reals */
  diag_logsum<Real>
      <<<1, kScanThreads, 0, stream>>>(static_cast<const Real *>(a), step, n, scale, sum);
}

using logsum_fn = void (*)(const void *, size_t, int, double, double *, cudaStream_t);
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

struct c64_t {
  float re, im;
};
struct c128_t {
  double re, im;
};
using gather_fn = void (*)(void *, size_t, int, const int *, int, bool, cudaStream_t);
constexpr gather_fn gather_of[TESSERA_NUM_DTYPES] = {
    launch_row_gather<float>, launch_row_gather<double>, launch_row_gather<c64_t>,
    launch_row_gather<c128_t>};

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

extern "C" int tsr_cuda_diag_nan_check(tessera_dtype_t dtype, const void *a, size_t ld, int n,
                                       int *dev_info, void *stream) {
  return diag_scan_dtype<Scan::NaN>(dtype, a, ld, n, dev_info, stream);
}

extern "C" int tsr_cuda_diag_zero_check(tessera_dtype_t dtype, const void *a, size_t ld, int n,
                                        int *dev_info, void *stream) {
  return diag_scan_dtype<Scan::Zero>(dtype, a, ld, n, dev_info, stream);
}

extern "C" int tsr_cuda_diag_poison(tessera_dtype_t dtype, void *a, size_t ld, const int *dev_info,
                                    void *stream) {
  if (static_cast<int>(dtype) < 0 || static_cast<int>(dtype) >= TESSERA_NUM_DTYPES) return -1;
  poison_of[dtype](a, ld, dev_info, static_cast<cudaStream_t>(stream));
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int tsr_cuda_diag_logsum(tessera_dtype_t dtype, const void *a, size_t ld, int n,
                                    double scale, double *dev_sum, void *stream) {
  if (static_cast<int>(dtype) < 0 || static_cast<int>(dtype) >= TESSERA_NUM_DTYPES) return -1;
  logsum_of[dtype](a, ld, n, scale, dev_sum, static_cast<cudaStream_t>(stream));
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
