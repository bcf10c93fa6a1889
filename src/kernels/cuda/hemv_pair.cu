/* hemm_pair for one right-hand side (kernels.h) in one kernel and one read of the tile S (r x c):
 * yr += alpha S xc and yc += alpha Sᴴ xr. A thread block takes 256 rows and 32 columns of S: each
 * thread one row, summing its row's 32 products into yr (added atomically once), and the block's
 * partial sums of Sᴴ xr per column reduced over its warps and added atomically once per column.
 * S is read once, column by column with the rows coalesced; cuBLAS's two products read it twice. */
#include <cuda_runtime.h>

#include "kernels/cuda/cuda_kernels.h"

namespace {

constexpr int kRows = 256, kCols = 32, kWarps = kRows / 32;

/* An element of a real (C false) or complex (C true) type of reals R. */
template <typename R, bool C> struct Elem { R re, im; };

template <typename R, bool C> __device__ Elem<R, C> load(const R *p, long long i) {
  return C ? Elem<R, C>{p[2 * i], p[2 * i + 1]} : Elem<R, C>{p[i], R(0)};
}

template <typename R, bool C> __device__ void add(R *p, long long i, Elem<R, C> v) {
  if (C) {
    atomicAdd(p + 2 * i, v.re);
    atomicAdd(p + 2 * i + 1, v.im);
  } else {
    atomicAdd(p + i, v.re);
  }
}

/* s += a b (conj: s += conj(a) b) */
template <typename R, bool C>
__device__ void fma_to(Elem<R, C> &s, Elem<R, C> a, Elem<R, C> b, bool conj) {
  const R ai = conj ? -a.im : a.im;
  s.re += a.re * b.re - ai * b.im;
  if (C) s.im += a.re * b.im + ai * b.re;
}

template <typename R, bool C>
__global__ void hemv_pair(const R *S, long long lds, int r, int c, const R *xc, const R *xr, R *yr,
                          R *yc, R alpha_re, R alpha_im) {
  __shared__ Elem<R, C> part[kWarps][kCols];
  const int i = blockIdx.x * kRows + threadIdx.x, j0 = blockIdx.y * kCols;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int cols = c - j0 < kCols ? c - j0 : kCols;
  const Elem<R, C> alpha{alpha_re, alpha_im}, zero{R(0), R(0)};
  const Elem<R, C> xi = i < r ? load<R, C>(xr, i) : zero;
  Elem<R, C> row = zero;
  for (int jj = 0; jj < cols; jj++) {
    const int j = j0 + jj;
    const Elem<R, C> a = i < r ? load<R, C>(S, i + j * lds) : zero;
    fma_to(row, a, load<R, C>(xc, j), false);
    Elem<R, C> col = zero;
    fma_to(col, a, xi, true);
    for (int off = 16; off > 0; off /= 2) {
      col.re += __shfl_down_sync(0xffffffffu, col.re, off);
      if (C) col.im += __shfl_down_sync(0xffffffffu, col.im, off);
    }
    if (lane == 0) part[warp][jj] = col;
  }
  if (i < r) {
    Elem<R, C> v = zero;
    fma_to(v, alpha, row, false);
    add(yr, i, v);
  }
  __syncthreads();
  if (threadIdx.x < cols) {
    Elem<R, C> s = zero;
    for (int w = 0; w < kWarps; w++) {
      s.re += part[w][threadIdx.x].re;
      s.im += part[w][threadIdx.x].im;
    }
    Elem<R, C> v = zero;
    fma_to(v, alpha, s, false);
    add(yc, j0 + threadIdx.x, v);
  }
}

template <typename R, bool C>
void launch(const void *S, size_t lds, int r, int c, const void *xc, const void *xr, void *yr,
            void *yc, double are, double aim, cudaStream_t st) {
  const dim3 grid((r + kRows - 1) / kRows, (c + kCols - 1) / kCols);
  hemv_pair<R, C><<<grid, kRows, 0, st>>>(
      static_cast<const R *>(S), static_cast<long long>(lds), r, c, static_cast<const R *>(xc),
      static_cast<const R *>(xr), static_cast<R *>(yr), static_cast<R *>(yc), R(are), R(aim));
}

using launch_fn = void (*)(const void *, size_t, int, int, const void *, const void *, void *,
                           void *, double, double, cudaStream_t);
constexpr launch_fn launch_of[TESSERA_NUM_DTYPES] = {launch<float, false>, launch<double, false>,
                                                     launch<float, true>, launch<double, true>};

} // namespace

extern "C" int tsr_cuda_hemv_pair(tessera_dtype_t dtype, const void *S, size_t lds, int r, int c,
                                  const void *xc, const void *xr, void *yr, void *yc,
                                  double alpha_re, double alpha_im, void *stream) {
  if (static_cast<int>(dtype) < 0 || static_cast<int>(dtype) >= TESSERA_NUM_DTYPES) return -1;
  if (r <= 0 || c <= 0) return 0;
  launch_of[dtype](S, lds, r, c, xc, xr, yr, yc, alpha_re, alpha_im,
                   static_cast<cudaStream_t>(stream));
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
