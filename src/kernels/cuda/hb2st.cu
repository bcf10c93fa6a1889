/* The bulge chasing (cpu/hb2st.h) on a GPU, real dtypes: one cooperative launch whose thread
 * blocks each own sweeps b, b + B, b + 2B, ... and run their steps in order, as the CPU's step
 * does them (the bulge times the previous reflector, larfg, the rest of the bulge, the diagonal
 * block's two-sided update), on the working band in device memory. Step (s, j) waits for step
 * (s - 1, j + 1) (or sweep s - 1's last) through a progress counter per sweep, spun on by one
 * thread and published after every thread's fence; the launch is cooperative so that every block
 * is resident and a wait always ends. The band is read and written through volatile pointers
 * (loads that bypass L1): another block's steps change it between this block's. */
#include <cuda_runtime.h>

#include "kernels/cuda/cuda_kernels.h"

namespace {

constexpr int kThreads = 256;

/* Steps of sweep s (cpu/hb2st.h's tsr_hb2st_steps). */
__device__ int steps_of(int n, int kd, int s) {
  if (kd < 1 || s < 0 || s > n - 2) return 0;
  const int rows = n - 1 - s;
  if (kd == 1) return rows < 2 ? rows : 2;
  return (rows + kd - 1) / kd;
}

/* The sum of x over the block (every thread gets it); part: blockDim.x entries. */
template <typename T> __device__ T block_sum(T x, T *part) {
  part[threadIdx.x] = x;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) part[threadIdx.x] += part[threadIdx.x + h];
    __syncthreads();
  }
  const T r = part[0];
  __syncthreads();
  return r;
}

/* LAPACK's larfg on alpha (*a) and the n - 1 entries x (a real dtype): beta into *a, x scaled to
 * the vector's tail, tau returned (every thread). */
template <typename T> __device__ T larfg(int n, volatile T *a, volatile T *x, T *part) {
  if (n <= 1) return T(0);
  T ss = 0;
  for (int i = threadIdx.x; i < n - 1; i += blockDim.x) ss += x[i] * x[i];
  const T xnorm = sqrt(block_sum(ss, part));
  const T alpha = *a;
  if (xnorm == T(0)) return T(0);
  T beta = -copysign(hypot(alpha, xnorm), alpha);
  const T safmin = sizeof(T) == 8 ? T(2.2250738585072014e-308) / T(1.1102230246251565e-16)
                                  : T(1.17549435e-38f) / T(5.96046448e-08f);
  T scale = 1, al = alpha;
  int k = 0;
  if (fabs(beta) < safmin) { /* rescale as LAPACK does; rare */
    const T rsafmn = T(1) / safmin;
    T xn = xnorm;
    do {
      k++;
      scale *= rsafmn, al *= rsafmn, xn *= rsafmn;
      beta *= rsafmn;
    } while (fabs(beta) < safmin && k < 20);
    beta = -copysign(hypot(al, xn), al);
  }
  const T tau = (beta - al) / beta, inv = T(1) / (al - beta);
  for (int i = threadIdx.x; i < n - 1; i += blockDim.x) x[i] = x[i] * scale * inv;
  for (int i = 0; i < k; i++) beta *= safmin;
  __syncthreads();
  if (threadIdx.x == 0) *a = beta;
  __syncthreads();
  return tau;
}

/* Step (s, j) of the reduction on the working band w (ld = ldw - 1 its dense view), as
 * cpu/hb2st.c's step; work: kd entries of device scratch of this block. */
template <typename T>
__device__ void step(int n, int kd, volatile T *w, long long ld, int s, int j, int steps0, T *v,
                     T *tau, T *work, T *part) {
  const int lo = s + 1 + j * kd, hi = min(lo + kd - 1, n - 1), len = hi - lo + 1;
  const long long slot = static_cast<long long>(s) * steps0 + j;
  T *vj = v + slot * kd;
  volatile T *col = w + lo + static_cast<long long>(j == 0 ? s : lo - kd) * ld;
  if (j > 0) {
    const T *u = v + (slot - 1) * kd;
    const T tu = tau[slot - 1];
    if (tu != T(0)) { /* the bulge B (len x kd) times H(s, j - 1): B -= tu (B u) uᵀ */
      for (int i = threadIdx.x; i < len; i += blockDim.x) {
        T y = 0;
        for (int c = 0; c < kd; c++) y += col[i + c * ld] * u[c];
        work[i] = y;
      }
      __syncthreads();
      for (int i = threadIdx.x; i < len; i += blockDim.x)
        for (int c = 0; c < kd; c++) col[i + c * ld] -= tu * work[i] * u[c];
      __syncthreads();
    }
  }
  for (int i = threadIdx.x; i < kd; i += blockDim.x) vj[i] = i == 0 ? T(1) : T(0);
  if (threadIdx.x == 0) tau[slot] = 0;
  __syncthreads();
  if (j > 0 && len == 1) return;
  const T t = larfg(len, col, col + 1, part);
  for (int i = 1 + threadIdx.x; i < len; i += blockDim.x) vj[i] = col[i], col[i] = 0;
  if (threadIdx.x == 0) tau[slot] = t;
  __syncthreads();
  if (t == T(0)) return;
  if (j > 0 && kd > 1) { /* the rest of the bulge B2 (len x kd - 1): B2 -= t v (B2ᵀ v)ᵀ */
    volatile T *b2 = col + ld;
    for (int c = threadIdx.x; c < kd - 1; c += blockDim.x) {
      T y = 0;
      for (int i = 0; i < len; i++) y += b2[i + c * ld] * vj[i];
      work[c] = y;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < len; i += blockDim.x)
      for (int c = 0; c < kd - 1; c++) b2[i + c * ld] -= t * vj[i] * work[c];
    __syncthreads();
  }
  if (len > 1) { /* C = H C H on the diagonal block (its lower triangle) */
    volatile T *C = w + static_cast<long long>(lo) * (ld + 1);
    T dot = 0;
    for (int i = threadIdx.x; i < len; i += blockDim.x) { /* work = t C v */
      T y = 0;
      for (int c = 0; c < len; c++) y += (c <= i ? C[i + c * ld] : C[c + i * ld]) * vj[c];
      work[i] = t * y;
      dot += vj[i] * work[i];
    }
    const T alpha = T(-0.5) * t * block_sum(dot, part);
    for (int i = threadIdx.x; i < len; i += blockDim.x) work[i] += alpha * vj[i];
    __syncthreads();
    for (int c = 0; c < len; c++) /* C -= v workᵀ + work vᵀ, lower */
      for (int i = c + threadIdx.x; i < len; i += blockDim.x)
        C[i + c * ld] -= vj[i] * work[c] + work[i] * vj[c];
    __syncthreads();
  }
}

template <typename T>
__global__ void chase(int n, int kd, T *w, long long ldw, T *v, T *tau, T *scratch, int *progress) {
  __shared__ T part[kThreads];
  const int sweeps = n - 1, steps0 = steps_of(n, kd, 0);
  T *work = scratch + static_cast<long long>(blockIdx.x) * kd;
  volatile int *prog = progress;
  for (int s = blockIdx.x; s < sweeps; s += gridDim.x) {
    const int steps = steps_of(n, kd, s), before = s > 0 ? steps_of(n, kd, s - 1) : 0;
    for (int j = 0; j < steps; j++) {
      if (s > 0 && threadIdx.x == 0) {
        const int need = min(j + 2, before);
        while (prog[s - 1] < need) {
        }
        __threadfence();
      }
      __syncthreads();
      step(n, kd, w, ldw - 1, s, j, steps0, v, tau, work, part);
      __threadfence(); /* every thread's writes to the band, before the step is published */
      __syncthreads();
      if (threadIdx.x == 0) prog[s] = j + 1;
    }
  }
}

/* The working band from LAPACK's lower band storage: rows 0 .. min(kd, n - 1 - j) of column j
 * from ab, zeros below (cpu/hb2st.c's load, real dtypes). */
template <typename T>
__global__ void load(int n, int kd, const T *ab, long long ldab, T *w, long long ldw) {
  for (long long j = blockIdx.x; j < n; j += gridDim.x) {
    const long long rows = min(static_cast<long long>(kd), n - 1 - j);
    for (int r = threadIdx.x; r < ldw; r += blockDim.x)
      w[r + j * ldw] = r <= rows ? ab[r + j * ldab] : T(0);
  }
}

/* d and e (doubles) from the reduced band's rows 0 and 1. */
template <typename T>
__global__ void extract(int n, const T *w, long long ldw, double *d, double *e) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    d[i] = static_cast<double>(w[i * ldw]);
    if (i + 1 < n) e[i] = static_cast<double>(w[1 + i * ldw]);
  }
}

template <typename T> int run(const tsr_cuda_hb2st_t *p, cudaStream_t st) {
  const int n = p->n, kd = p->kd;
  const long long ldw = static_cast<long long>(p->ldw);
  const unsigned columns = static_cast<unsigned>(n < 4096 ? n : 4096);
  load<T><<<columns, 128, 0, st>>>(n, kd, static_cast<const T *>(p->ab),
                                   static_cast<long long>(p->ldab), static_cast<T *>(p->w), ldw);
  if (cudaGetLastError() != cudaSuccess) return -1;
  if (n >= 2 && kd >= 1) {
    if (cudaMemsetAsync(p->progress, 0, static_cast<size_t>(n) * sizeof(int), st) != cudaSuccess)
      return -1;
    int nn = n, kk = kd;
    long long lw = ldw;
    T *wt = static_cast<T *>(p->w), *vt = static_cast<T *>(p->v), *tt = static_cast<T *>(p->tau),
      *sc = static_cast<T *>(p->scratch);
    int *pg = p->progress;
    void *args[] = {&nn, &kk, &wt, &lw, &vt, &tt, &sc, &pg};
    if (cudaLaunchCooperativeKernel(reinterpret_cast<void *>(chase<T>), dim3(p->blocks),
                                    dim3(kThreads), args, 0, st) != cudaSuccess)
      return -1;
  }
  const unsigned b = static_cast<unsigned>((n + 255) / 256 < 1024 ? (n + 255) / 256 : 1024);
  extract<T><<<b, 256, 0, st>>>(n, static_cast<const T *>(p->w), ldw, p->d, p->e);
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

} // namespace

extern "C" int tsr_cuda_hb2st_blocks(tessera_dtype_t dtype, int sweeps) {
  int dev = 0, sms = 0, per = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
    return -1;
  const cudaError_t e =
      dtype == TESSERA_F64
          ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, chase<double>, kThreads, 0)
          : cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, chase<float>, kThreads, 0);
  if (e != cudaSuccess || per < 1) return -1;
  /* a block per multiprocessor: more would only spin beside the working ones (about n / (2 kd)
   * sweeps are in flight at once) */
  const int most = sms;
  return sweeps < most ? (sweeps > 0 ? sweeps : 1) : most;
}

extern "C" int tsr_cuda_hb2st_run(tessera_dtype_t dtype, const tsr_cuda_hb2st_t *p, void *stream) {
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  if (p->n < 1) return 0;
  if (dtype == TESSERA_F64) return run<double>(p, st);
  if (dtype == TESSERA_F32) return run<float>(p, st);
  return -1;
}
