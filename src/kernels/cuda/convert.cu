/* The precision conversion of a tile on a GPU (kernels.h's convert): the real loop of the pair
 * over twice the rows for complex dtypes, as the CPU's (cpu/convert.c); and the rounding of
 * single-precision blocks to 16-bit floats, the operands of tensor-core products. */
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
