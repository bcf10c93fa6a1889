/* The precision conversion of a tile on a GPU (kernels.h's convert): the real loop of the pair
 * over twice the rows for complex dtypes, as the CPU's (cpu/copy.c); the rounding of
 * single-precision blocks to 16-bit floats, the operands of tensor-core products; and the sums
 * of a tile's moduli by rows and columns (absum). */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels/cuda/cuda_kernels.h"

namespace {

/* One thread block a column: dst[i, j] = scale src[i, j] in D's precision. */
template <typename S, typename D>
__global__ void convert(const S *src, long long lds, D *dst, long long ldd, long long rows,
                        double scale) {
  const S *s = src + static_cast<long long>(blockIdx.x) * lds;
  D *d = dst + static_cast<long long>(blockIdx.x) * ldd;
  for (long long i = threadIdx.x; i < rows; i += blockDim.x)
    d[i] = static_cast<D>(scale * static_cast<double>(s[i]));
}

template <typename S, typename D>
void launch(const void *src, size_t lds, void *dst, size_t ldd, long long rows, int cols,
            double scale, cudaStream_t st) {
  convert<S, D><<<cols, 256, 0, st>>>(static_cast<const S *>(src), static_cast<long long>(lds),
                                      static_cast<D *>(dst), static_cast<long long>(ldd), rows,
                                      scale);
}

using convert_fn = void (*)(const void *, size_t, void *, size_t, long long, int, double,
                            cudaStream_t);
/* [source single][destination single] */
constexpr convert_fn by_width[2][2] = {{launch<double, double>, launch<double, float>},
                                       {launch<float, double>, launch<float, float>}};

/* dst[i, j] = src[i, j] rounded to nearest: blockIdx.x a stretch of rows, blockIdx.y the first of
 * the columns it takes (every gridDim.y-th). */
template <typename D>
__global__ void round16(const float *src, long long lds, D *dst, long long ldd, long long rows,
                        int cols) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  for (long long j = blockIdx.y; j < cols; j += gridDim.y) dst[i + j * ldd] = D(src[i + j * lds]);
}

/* x = hi + lo split into TF32 values held in floats (rounded to nearest, away from zero at the
 * half: the 13 low bits of mantissa cleared): hi[i, j] = hi2[i, j] = tf32(x), lo[i, j] =
 * tf32(x - hi), src's layout as round16's. */
__device__ float tf32(float x) {
  return __uint_as_float((__float_as_uint(x) + 0x1000u) & 0xffffe000u);
}

__global__ void split3(const float *src, long long lds, float *hi, float *lo, float *hi2,
                       long long ldd, long long rows, int cols) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  for (long long j = blockIdx.y; j < cols; j += gridDim.y) {
    const float x = src[i + j * lds], h = tf32(x);
    hi[i + j * ldd] = h;
    hi2[i + j * ldd] = h;
    lo[i + j * ldd] = tf32(x - h);
  }
}

/* The modulus of element i of a column of T's (K reals an element). */
template <typename T, int K> __device__ double modulus(const T *c, long long i) {
  if (K == 1) return fabs(static_cast<double>(c[i]));
  return hypot(static_cast<double>(c[2 * i]), static_cast<double>(c[2 * i + 1]));
}

/* Columns of the tile that one thread block of row_sums takes. */
constexpr int kRowSumCols = 32;

/* rows[i] += the sum of row i's moduli: a thread a row over kRowSumCols columns
 * (blockIdx.y the stretch; coalesced reads), its partial sum added atomically; with `part`
 * ('L' or 'U') of the Hermitian tile stored in that triangle. */
template <typename T, int K>
__global__ void row_sums(const T *a, long long ld, int m, int n, char part, double *rows) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j0 = blockIdx.y * kRowSumCols;
  if (i >= m) return;
  const int j1 = j0 + kRowSumCols < n ? j0 + kRowSumCols : n;
  double s = 0;
  for (int j = j0; j < j1; j++) {
    const bool stored = (part != 'L' && part != 'U') || (part == 'L' ? i >= j : i <= j);
    s += stored ? modulus<T, K>(a + j * ld * K, i) : modulus<T, K>(a + i * ld * K, j);
  }
  atomicAdd(rows + i, s);
}

/* cols[j] += the sum of column j's moduli: a block a column. */
template <typename T, int K>
__global__ void col_sums(const T *a, long long ld, int m, double *cols) {
  __shared__ double part[256];
  const T *c = a + static_cast<long long>(blockIdx.x) * ld * K;
  double s = 0;
  for (int i = threadIdx.x; i < m; i += blockDim.x) s += modulus<T, K>(c, i);
  part[threadIdx.x] = s;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) part[threadIdx.x] += part[threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x == 0) cols[blockIdx.x] += part[0];
}

template <typename T, int K>
void launch_absum(const void *a, size_t ld, int m, int n, char part, double *rows, double *cols,
                  cudaStream_t st) {
  const T *p = static_cast<const T *>(a);
  const long long l = static_cast<long long>(ld);
  const dim3 grid((m + 255) / 256, (n + kRowSumCols - 1) / kRowSumCols);
  row_sums<T, K><<<grid, 256, 0, st>>>(p, l, m, n, part, rows);
  if (!part) col_sums<T, K><<<n, 256, 0, st>>>(p, l, m, cols);
}

using absum_fn = void (*)(const void *, size_t, int, int, char, double *, double *, cudaStream_t);
/* [single][complex] */
constexpr absum_fn absum_of[2][2] = {{launch_absum<double, 1>, launch_absum<double, 2>},
                                     {launch_absum<float, 1>, launch_absum<float, 2>}};

} // namespace

extern "C" int tsr_cuda_convert_block(int from_single, int to_single, int reals, const void *src,
                                      size_t lds, void *dst, size_t ldd, int m, int n, double scale,
                                      void *stream) {
  if (m <= 0 || n <= 0) return 0;
  const size_t r = static_cast<size_t>(reals);
  by_width[from_single != 0][to_single != 0](src, lds * r, dst, ldd * r,
                                             static_cast<long long>(m) * reals, n, scale,
                                             static_cast<cudaStream_t>(stream));
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int tsr_cuda_round_block(int to_f16, const float *src, size_t lds, void *dst, size_t ldd,
                                    long long rows, int cols, void *stream) {
  if (rows <= 0 || cols <= 0) return 0;
  const unsigned threads = 256;
  const dim3 grid(static_cast<unsigned>((rows + threads - 1) / threads),
                  static_cast<unsigned>(cols < 65535 ? cols : 65535));
  const auto st = static_cast<cudaStream_t>(stream);
  const auto ls = static_cast<long long>(lds), ld = static_cast<long long>(ldd);
  if (to_f16)
    round16<__half><<<grid, threads, 0, st>>>(src, ls, static_cast<__half *>(dst), ld, rows, cols);
  else
    round16<__nv_bfloat16>
        <<<grid, threads, 0, st>>>(src, ls, static_cast<__nv_bfloat16 *>(dst), ld, rows, cols);
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int tsr_cuda_split_block(const float *src, size_t lds, float *hi, float *lo, float *hi2,
                                    size_t ldd, long long rows, int cols, void *stream) {
  if (rows <= 0 || cols <= 0) return 0;
  const unsigned threads = 256;
  const dim3 grid(static_cast<unsigned>((rows + threads - 1) / threads),
                  static_cast<unsigned>(cols < 65535 ? cols : 65535));
  split3<<<grid, threads, 0, static_cast<cudaStream_t>(stream)>>>(
      src, static_cast<long long>(lds), hi, lo, hi2, static_cast<long long>(ldd), rows, cols);
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int tsr_cuda_absum_block(int single, int complex_, const void *a, size_t ld, int m,
                                    int n, char part, double *rows, double *cols, void *stream) {
  if (m <= 0 || n <= 0) return 0;
  absum_of[single != 0][complex_ != 0](a, ld, m, n, part, rows, cols,
                                       static_cast<cudaStream_t>(stream));
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
