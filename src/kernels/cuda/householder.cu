/* Custom device kernels of block reflectors, behind the C launchers of cuda_kernels.h: LAPACK's
 * larft from a Gram matrix (QR's kernels, one block reflector or a strided batch of them), and
 * the staging of the bulge chasing's reflectors into block reflectors (the eigensolver's Q2). */
#include <cuda_runtime.h>

#include "kernels/cuda/cuda_kernels.h"

namespace {

constexpr int kThreads = 256;

/* The start of LAPACK's larft (forward, columnwise) from the Gram matrix G = Vᴴ V of the
 * reflectors' vectors (k x k, its upper triangle read) and tau, for the recursion of
 * tsr_cuda_larft_blocks: T gets G's strictly upper part, zeros below the diagonal, and each
 * diagonal block of `nb` columns its own T by the column recurrence
 *   T(r, i) = -tau_i sum_{c = r .. i-1} T(r, c) G(c, i),  T(i, i) = tau_i
 * (a zero tau gives a zero column). One thread block per column of T, then one per diagonal
 * block; w reals per element, complex products in the Real pairs. Batch member blockIdx.y
 * starts its G, tau and T the given strides (in elements) after the previous one's. */
template <typename Real, int w>
__global__ void larft_start(const Real *g, long long ldg, long long sg, int k, Real *t,
                            long long ldt, long long st) {
  const int j = blockIdx.x;
  g += blockIdx.y * sg * w, t += blockIdx.y * st * w;
  for (int i = threadIdx.x; i < k; i += blockDim.x)
    for (int c = 0; c < w; c++)
      t[(j * ldt + i) * w + c] = i < j ? g[(j * ldg + i) * w + c] : Real(0);
}

template <typename Real, int w>
__global__ void larft_diagonal(const Real *g, long long ldg, long long sg, const Real *tau,
                               long long stau, int k, int nb, Real *t, long long ldt,
                               long long st) {
  g += blockIdx.y * sg * w, tau += blockIdx.y * stau * w, t += blockIdx.y * st * w;
  const int o = blockIdx.x * nb, s = min(nb, k - o);
  for (int i = o; i < o + s; i++) {
    const Real tr = tau[i * w], ti = w == 2 ? tau[i * w + 1] : Real(0);
    for (int r = o + threadIdx.x; r < i; r += blockDim.x) {
      Real sr = 0, si = 0;
      for (int c = r; c < i; c++) {
        const Real *a = t + (c * ldt + r) * w, *b = g + (i * ldg + c) * w;
        const Real ai = w == 2 ? a[1] : Real(0), bi = w == 2 ? b[1] : Real(0);
        sr += a[0] * b[0] - ai * bi;
        si += a[0] * bi + ai * b[0];
      }
      Real *out = t + (i * ldt + r) * w;
      out[0] = -(tr * sr - ti * si);
      if (w == 2) out[1] = -(tr * si + ti * sr);
    }
    if (threadIdx.x == 0) {
      t[(i * ldt + i) * w] = tr;
      if (w == 2) t[(i * ldt + i) * w + 1] = ti;
    }
    __syncthreads();
  }
}

/* The strides of a batch, in elements. */
struct Strides {
  long long g, tau, t;
};

template <typename Real, int w>
void launch_larft(const void *g, size_t ldg, const void *tau, int k, int nb, void *t, size_t ldt,
                  Strides s, int count, cudaStream_t stream) {
  const Real *gr = static_cast<const Real *>(g);
  Real *tr = static_cast<Real *>(t);
  const long long lg = static_cast<long long>(ldg), lt = static_cast<long long>(ldt);
  larft_start<Real, w><<<dim3(k, count), kThreads, 0, stream>>>(gr, lg, s.g, k, tr, lt, s.t);
  const int threads = nb < kThreads ? nb : kThreads;
  larft_diagonal<Real, w><<<dim3((k + nb - 1) / nb, count), threads, 0, stream>>>(
      gr, lg, s.g, static_cast<const Real *>(tau), s.tau, k, nb, tr, lt, s.t);
}

using larft_fn = void (*)(const void *, size_t, const void *, int, int, void *, size_t, Strides,
                          int, cudaStream_t);
constexpr larft_fn larft_of[TESSERA_NUM_DTYPES] = {launch_larft<float, 1>, launch_larft<double, 1>,
                                                   launch_larft<float, 2>, launch_larft<double, 2>};

/* Block reflector b of a batch (blockIdx.y) of the bulge chasing's Q2: the reflectors of sweeps
 * s_b .. s_b + k - 1 at step j_b (s_b = s0 + b sweeps_apart, j_b = j0 + b) on the rows from
 * r_b = s_b + 1 + j_b kd, as the staircase V_b (rows x k, ldv) below `pad` rows of zeros: column
 * c (blockIdx.x) holds reflector (s_b + c, j_b)'s vector from row pad + c, its
 * min(kd, n - r_b - c) entries, zeros elsewhere;
 * its tau to taub_b[c]. Slot (s, j) of v and tau is s * steps + j (cpu/hb2st.h). */
template <typename Real, int w>
__global__ void hb2st_stage(int n, int kd, int steps, const Real *v, const Real *tau, int s0,
                            int j0, int sweeps_apart, int rows, int pad, Real *V, long long ldv,
                            long long sv, Real *taub, long long st) {
  const int b = blockIdx.y, c = blockIdx.x;
  const int s = s0 + b * sweeps_apart, j = j0 + b, r = s + 1 + j * kd;
  const long long slot = static_cast<long long>(s + c) * steps + j;
  const int len = min(kd, n - r - c);
  const Real *from = v + slot * kd * w;
  Real *to = V + (b * sv + c * ldv) * w;
  for (int i = threadIdx.x; i < rows; i += blockDim.x)
    for (int q = 0; q < w; q++) {
      const int e = i - pad - c; /* the reflector's entry on V's row i */
      to[i * w + q] = e >= 0 && e < len ? from[e * w + q] : Real(0);
    }
  if (threadIdx.x < w) taub[(b * st + c) * w + threadIdx.x] = tau[slot * w + threadIdx.x];
}

template <typename Real, int w>
void launch_stage(const tsr_cuda_hb2st_batch_t *p, const void *v, const void *tau, void *V,
                  void *taub, cudaStream_t stream) {
  hb2st_stage<Real, w><<<dim3(p->k, p->count), 128, 0, stream>>>(
      p->n, p->kd, p->steps, static_cast<const Real *>(v), static_cast<const Real *>(tau), p->s0,
      p->j0, p->sweeps_apart, p->rows, p->pad, static_cast<Real *>(V), p->ldv, p->stride_v,
      static_cast<Real *>(taub), p->stride_tau);
}

using stage_fn = void (*)(const tsr_cuda_hb2st_batch_t *, const void *, const void *, void *,
                          void *, cudaStream_t);
constexpr stage_fn stage_of[TESSERA_NUM_DTYPES] = {launch_stage<float, 1>, launch_stage<double, 1>,
                                                   launch_stage<float, 2>, launch_stage<double, 2>};

bool valid(tessera_dtype_t dtype) {
  return static_cast<int>(dtype) >= 0 && static_cast<int>(dtype) < TESSERA_NUM_DTYPES;
}

} // namespace

extern "C" int tsr_cuda_larft_blocks(tessera_dtype_t dtype, const void *g, size_t ldg,
                                     const void *tau, int k, int nb, void *t, size_t ldt,
                                     void *stream) {
  return tsr_cuda_larft_batched(dtype, g, ldg, 0, tau, 0, k, nb, t, ldt, 0, 1, stream);
}

extern "C" int tsr_cuda_larft_batched(tessera_dtype_t dtype, const void *g, size_t ldg,
                                      long long stride_g, const void *tau, long long stride_tau,
                                      int k, int nb, void *t, size_t ldt, long long stride_t,
                                      int count, void *stream) {
  if (!valid(dtype) || nb < 1 || count < 0) return -1;
  if (k > 0 && count > 0)
    larft_of[dtype](g, ldg, tau, k, nb, t, ldt, Strides{stride_g, stride_tau, stride_t}, count,
                    static_cast<cudaStream_t>(stream));
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int tsr_cuda_hb2st_stage(tessera_dtype_t dtype, const tsr_cuda_hb2st_batch_t *batch,
                                    const void *v, const void *tau, void *V, void *taub,
                                    void *stream) {
  if (!valid(dtype) || !batch || batch->k < 1 || batch->count < 0 || batch->pad < 0 ||
      batch->rows < batch->k + batch->pad)
    return -1;
  if (batch->count > 0) stage_of[dtype](batch, v, tau, V, taub, static_cast<cudaStream_t>(stream));
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
