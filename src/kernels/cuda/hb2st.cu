/* The bulge chasing (cpu/hb2st.h) on a GPU, every dtype: one cooperative launch whose thread
 * blocks each own sweeps b, b + B, b + 2B, ... and run their steps in order, as the CPU's step
 * does them (the bulge times the previous reflector, larfg, the rest of the bulge, the diagonal
 * block's two-sided update), on the working band in device memory. A step has two halves, the
 * bulge's (up to the rest of the bulge) and the diagonal block's, and each sweep publishes the
 * halves it has done through a progress counter, spun on by one thread of the next sweep's
 * block and published after every thread's fence. Step (s, j)'s bulge shares entries with
 * steps (s - 1, j) and (s - 1, j + 1)'s bulges and with (s - 1, j)'s diagonal block; its
 * diagonal block with (s - 1, j + 1)'s bulge and diagonal block; nothing with later steps. So
 * its bulge half waits for (s - 1, j + 1)'s bulge half and its diagonal half for (s - 1, j + 1)
 * whole (or sweep s - 1's end): each sweep starts its steps a bulge half sooner than whole steps
 * would let it. The launch is cooperative so that every block is resident and a wait always
 * ends. The band is read and written at L2 (__ldcg, __stcg): other
 * blocks' steps change it between this block's, and L1 is not coherent across blocks.
 *
 * Every pass over a block of the band is spread over all the threads with coalesced accesses:
 * products with a block by rows (a thread per row and column group, partial sums in shared
 * memory) or by columns (a warp per column), updates element by element. The right reflector of
 * the previous step and the left reflector of this one are applied to the bulge in one pass:
 * B (I - tu u uᴴ) = B - tu y uᴴ with y = B u, and (I - t v vᴴ)ᴴ of that subtracts conj(t) v wᴴ
 * with w = Bᴴ v - conj(tu) u (yᴴ v). Complex dtypes as LAPACK's zhb2st: larfg makes the
 * subdiagonal real, Hermitian products read the lower triangle's diagonal as real.
 *
 * Where a kd x (kd + 1) block fits in the shared memory a block may opt into (f32, f64 and c64
 * at kd = 128), a step copies the bulge into shared memory in one pass, works on it there and
 * writes it back, then does the same with the diagonal block's lower triangle: each of the
 * step's passes then waits on shared memory instead of a round trip to L2. The steps form a
 * chain (each sweep two steps behind the one before), so the chase's time is about 2 n steps'
 * latency, whatever the number of blocks. */
#include <cuda/std/complex>
#include <cuda_runtime.h>

#include <type_traits>

#include "kernels/cuda/cuda_kernels.h"

namespace {

constexpr int kThreads = 1024, kWarps = kThreads / 32;
/* Shared memory a launch takes without opting in: the step's vectors live there when they fit
 * beside the reduction scratch, else in the block's scratch. */
constexpr size_t kShared = 48 << 10;

/* Steps of sweep s (cpu/hb2st.h's tsr_hb2st_steps). */
__device__ int steps_of(int n, int kd, int s) {
  if (kd < 1 || s < 0 || s > n - 2) return 0;
  const int rows = n - 1 - s;
  if (kd == 1) return rows < 2 ? rows : 2;
  return (rows + kd - 1) / kd;
}

using zd = cuda::std::complex<double>;
using zf = cuda::std::complex<float>;

/* The real type of T, and the scalar helpers every dtype shares. */
template <typename T> struct real_of { using type = T; };
template <typename R> struct real_of<cuda::std::complex<R>> { using type = R; };
template <typename T> using real_t = typename real_of<T>::type;

template <typename R> __device__ R re(R x) {
  return x;
}
template <typename R> __device__ R re(cuda::std::complex<R> x) {
  return x.real();
}
template <typename R> __device__ R im(R) {
  return R(0);
}
template <typename R> __device__ R im(cuda::std::complex<R> x) {
  return x.imag();
}
template <typename R> __device__ R cj(R x) {
  return x;
}
template <typename R> __device__ cuda::std::complex<R> cj(cuda::std::complex<R> x) {
  return cuda::std::conj(x);
}
template <typename R> __device__ R abs2(R x) {
  return x * x;
}
template <typename R> __device__ R abs2(cuda::std::complex<R> x) {
  return x.real() * x.real() + x.imag() * x.imag();
}
template <typename T> __device__ T make(real_t<T> r, real_t<T> i);
template <> __device__ double make<double>(double r, double) {
  return r;
}
template <> __device__ float make<float>(float r, float) {
  return r;
}
template <> __device__ zd make<zd>(double r, double i) {
  return zd(r, i);
}
template <> __device__ zf make<zf>(float r, float i) {
  return zf(r, i);
}

/* Loads and stores of the band at L2. */
__device__ double get(const double *p) {
  return __ldcg(p);
}
__device__ float get(const float *p) {
  return __ldcg(p);
}
__device__ zd get(const zd *p) {
  const double2 v = __ldcg(reinterpret_cast<const double2 *>(p));
  return zd(v.x, v.y);
}
__device__ zf get(const zf *p) {
  const float2 v = __ldcg(reinterpret_cast<const float2 *>(p));
  return zf(v.x, v.y);
}
__device__ void put(double *p, double x) {
  __stcg(p, x);
}
__device__ void put(float *p, float x) {
  __stcg(p, x);
}
__device__ void put(zd *p, zd x) {
  __stcg(reinterpret_cast<double2 *>(p), make_double2(x.real(), x.imag()));
}
__device__ void put(zf *p, zf x) {
  __stcg(reinterpret_cast<float2 *>(p), make_float2(x.real(), x.imag()));
}

/* Where a step's blocks are read and written: the band at L2, or the step's copy in shared
 * memory. */
struct AtL2 {
  template <typename T> static __device__ T ld(const T *p) { return get(p); }
  template <typename T> static __device__ void st(T *p, T x) { put(p, x); }
};
struct InShared {
  template <typename T> static __device__ T ld(const T *p) { return *p; }
  template <typename T> static __device__ void st(T *p, T x) { *p = x; }
};

/* dst = src on the rows x cols block (only the entries c <= i where lower), From and To the
 * two sides' accessors; every thread takes part. */
template <typename From, typename To, typename T>
__device__ void copy_block(int rows, int cols, bool lower, const T *src, long long lds, T *dst,
                           long long ldd) {
  const int count = rows * cols;
  for (int k = threadIdx.x; k < count; k += kThreads) {
    const int i = k % rows, c = k / rows;
    if (!lower || c <= i) To::st(dst + i + c * ldd, From::ld(src + i + c * lds));
  }
  __syncthreads();
}

__device__ double shfl(double x, int o) {
  return __shfl_xor_sync(0xffffffffu, x, o);
}
__device__ float shfl(float x, int o) {
  return __shfl_xor_sync(0xffffffffu, x, o);
}
template <typename R> __device__ cuda::std::complex<R> shfl(cuda::std::complex<R> x, int o) {
  return cuda::std::complex<R>(shfl(x.real(), o), shfl(x.imag(), o));
}

template <typename T> __device__ T warp_sum(T x) {
  for (int o = 16; o > 0; o /= 2) x += shfl(x, o);
  return x;
}

/* The sum of x over the block (every thread gets it); red: kWarps entries. */
template <typename T> __device__ T block_sum(T x, T *red) {
  x = warp_sum(x);
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = x;
  __syncthreads();
  T r = 0;
  for (int k = 0; k < kWarps; k++) r += red[k];
  __syncthreads();
  return r;
}

/* A block of `rows` rows by rows: threads (g, r) take row i0 + r of column group g. */
struct Rows {
  int R, G, g, r;
};
__device__ Rows rows_of(int rows) {
  const int R = min((rows + 31) / 32 * 32, kThreads);
  return {R, kThreads / R, static_cast<int>(threadIdx.x) / R, static_cast<int>(threadIdx.x) % R};
}

/* y = M x over columns c0 .. cols - 1 of M (rows x cols, column stride ld, in the band), only
 * c <= i where lower (a Hermitian matrix's lower triangle: its diagonal read as real); x and y
 * in the block's vectors; part: kThreads entries. */
template <typename M, typename T>
__device__ void by_rows(int rows, int c0, int cols, bool lower, const T *m, long long ld,
                        const T *x, T *y, T *part) {
  const Rows L = rows_of(rows);
  for (int i0 = 0; i0 < rows; i0 += L.R) {
    const int i = i0 + L.r;
    T acc = 0;
    if (L.g < L.G && i < rows) {
      const int end = lower ? min(cols, i + 1) : cols;
      for (int c = c0 + L.g; c < end; c += L.G) {
        const T a = M::ld(m + i + c * ld);
        acc += (lower && c == i ? T(re(a)) : a) * x[c];
      }
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    if (static_cast<int>(threadIdx.x) < L.R && i0 + static_cast<int>(threadIdx.x) < rows) {
      T sum = 0;
      for (int k = 0; k < L.G; k++) sum += part[k * L.R + threadIdx.x];
      y[i0 + threadIdx.x] = sum;
    }
    __syncthreads();
  }
}

/* z[c] (+)= sum over rows i (i > c where lower) of conj(M[i, c]) x[i], c = c0 .. cols - 1 (Mᴴ x,
 * or a Hermitian lower triangle's part above the diagonal): a warp per column. */
template <typename M, typename T>
__device__ void by_columns(int rows, int c0, int cols, bool lower, const T *m, long long ld,
                           const T *x, T *z, bool add) {
  const int w = threadIdx.x / 32, l = threadIdx.x % 32;
  for (int c = c0 + w; c < cols; c += kWarps) {
    T acc = 0;
    for (int i = (lower ? c + 1 : 0) + l; i < rows; i += 32)
      acc += cj(M::ld(m + i + c * ld)) * x[i];
    acc = warp_sum(acc);
    if (l == 0) z[c] = add ? z[c] + acc : acc;
  }
  __syncthreads();
}

/* LAPACK's larfg on the len entries of col (alpha first): beta (real) into col[0], the
 * vector's tail into vv[1 ..] and vg[1 ..] (vv[0] = vg[0] = 1), zeros below beta; tau returned
 * (every thread). Complex alpha with a zero tail still gets a reflector, which makes it real.
 * red: kWarps entries. */
template <typename M, typename T> __device__ T larfg(int len, T *col, T *vv, T *vg, T *red) {
  using R = real_t<T>;
  const T alpha = M::ld(col); /* read before the sum's barrier: thread 0 writes beta there */
  R ss = 0;
  for (int i = 1 + threadIdx.x; i < len; i += kThreads) ss += abs2(M::ld(col + i));
  const R xnorm = sqrt(block_sum(ss, reinterpret_cast<R *>(red)));
  const R alphr = re(alpha), alphi = im(alpha);
  T tau = 0, scale = 1;
  R beta = alphr;
  int k = 0;
  if (xnorm != R(0) || alphi != R(0)) {
    beta = -copysign(hypot(hypot(alphr, alphi), xnorm), alphr);
    const R safmin = sizeof(R) == 8 ? R(2.2250738585072014e-308) / R(1.1102230246251565e-16)
                                    : R(1.17549435e-38f) / R(5.96046448e-08f);
    R ar = alphr, ai = alphi, rs = 1;
    if (fabs(beta) < safmin) { /* rescale as LAPACK does; rare */
      const R rsafmn = R(1) / safmin;
      R xn = xnorm;
      do {
        k++;
        rs *= rsafmn, ar *= rsafmn, ai *= rsafmn, xn *= rsafmn, beta *= rsafmn;
      } while (fabs(beta) < safmin && k < 20);
      beta = -copysign(hypot(hypot(ar, ai), xn), ar);
    }
    tau = make<T>((beta - ar) / beta, -ai / beta);
    scale = T(rs) / (make<T>(ar, ai) - T(beta));
    for (int i = 0; i < k; i++) beta *= safmin;
  }
  for (int i = 1 + threadIdx.x; i < len; i += kThreads) {
    const T x = tau != T(0) ? M::ld(col + i) * scale : M::ld(col + i);
    vv[i] = x, vg[i] = x;
    M::st(col + i, T(0));
  }
  if (threadIdx.x == 0) vv[0] = 1, vg[0] = 1, M::st(col, T(beta));
  __syncthreads();
  return tau;
}

/* The step's vectors (kd entries each) and the block's reduction scratch. */
template <typename T> struct Vecs { T *u, *y, *x, *z, *vv, *part, *red; };

/* Whether the step's five vectors of kd entries fit in shared memory beside the reduction
 * scratch (kThreads + kWarps entries). */
template <typename T> __host__ __device__ bool vectors_shared(int kd) {
  return (kThreads + kWarps + 5 * static_cast<size_t>(kd)) * sizeof(T) <= kShared;
}

/* Waits until sweep s - 1 has published `need` halves of its steps; every thread then reads
 * what they wrote. */
__device__ void wait_for(const volatile int *prog, int s, int need) {
  if (s > 0 && threadIdx.x == 0) {
    while (prog[s - 1] < need) {
    }
    __threadfence();
  }
  __syncthreads();
}

/* Publishes `done` halves of sweep s's steps once every thread's writes to the band are out. */
__device__ void publish(volatile int *prog, int s, int done) {
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) prog[s] = done;
}

/* Step (s, j) of the reduction on the working band w (ld = ldw - 1 its dense view), as
 * cpu/hb2st.c's step. With Staged, the bulge (len x kd; column s alone at j = 0) and then the
 * diagonal block's lower triangle are worked on in `stage` (shared memory, leading dimension
 * kd + 1) between a copy in and a copy back. */
template <bool Staged, typename T>
__device__ void step(int n, int kd, T *w, long long ld, int s, int j, int steps0, T *v, T *tau,
                     const Vecs<T> &V, T *stage, volatile int *prog, int before) {
  using M = typename std::conditional<Staged, InShared, AtL2>::type;
  const int lo = s + 1 + j * kd, hi = min(lo + kd - 1, n - 1), len = hi - lo + 1;
  const long long slot = static_cast<long long>(s) * steps0 + j;
  T *vj = v + slot * kd;
  T *const band = w + lo + static_cast<long long>(j == 0 ? s : lo - kd) * ld;
  const int width = j == 0 ? 1 : kd;
  const long long lb = Staged ? kd + 1 : ld;
  T *col = Staged ? stage : band;
  if (Staged) copy_block<AtL2, InShared>(len, width, false, band, ld, col, lb);
  T tu = 0;
  if (j > 0) {
    tu = tau[slot - 1];
    const T *u = v + (slot - 1) * kd;
    for (int c = threadIdx.x; c < kd; c += kThreads) V.u[c] = u[c];
    for (int i = threadIdx.x; i < len; i += kThreads) V.y[i] = 0;
    __syncthreads();
    if (tu != T(0)) { /* y = B u, and the bulge's first column times H(s, j - 1) */
      by_rows<M>(len, 0, kd, false, col, lb, V.u, V.y, V.part);
      for (int i = threadIdx.x; i < len; i += kThreads)
        M::st(col + i, M::ld(col + i) - tu * V.y[i] * cj(V.u[0]));
      __syncthreads();
    }
  }
  for (int i = len + threadIdx.x; i < kd; i += kThreads) vj[i] = 0;
  T t = 0;
  if (j == 0 || len > 1) {
    t = larfg<M>(len, col, V.vv, vj, V.red);
  } else {
    if (threadIdx.x == 0) V.vv[0] = 1, vj[0] = 1;
    __syncthreads();
  }
  if (threadIdx.x == 0) tau[slot] = t;
  if (j > 0 && kd > 1 && (tu != T(0) || t != T(0))) { /* the rest of the bulge, both sides */
    T gamma = 0;
    if (t != T(0)) {
      by_columns<M>(len, 1, kd, false, col, lb, V.vv, V.z, false); /* z = B2ᴴ v */
      T part = 0;
      for (int i = threadIdx.x; i < len; i += kThreads) part += cj(V.y[i]) * V.vv[i];
      gamma = block_sum(part, V.red);
    }
    const Rows L = rows_of(len);
    for (int i0 = 0; i0 < len; i0 += L.R) {
      const int i = i0 + L.r;
      if (L.g >= L.G || i >= len) continue;
      const T yi = tu * V.y[i], vi = cj(t) * V.vv[i];
      for (int c = 1 + L.g; c < kd; c += L.G) {
        T *p = col + i + c * lb;
        const T wc = t != T(0) ? cj(V.z[c]) - tu * cj(V.u[c]) * cj(gamma) : T(0);
        M::st(p, M::ld(p) - yi * cj(V.u[c]) - vi * wc);
      }
    }
    __syncthreads();
  }
  if (Staged) copy_block<InShared, AtL2>(len, width, false, col, lb, band, ld);
  publish(prog, s, 2 * j + 1);
  if (t == T(0) || len < 2) return;
  wait_for(prog, s, min(2 * j + 4, 2 * before));
  /* C = Hᴴ C H on the diagonal block (its lower triangle): x = t C v, x += alpha v with
   * alpha = -conj(t) (vᴴ x) / 2, C -= v xᴴ + x vᴴ (the diagonal kept real) */
  T *const diag = w + static_cast<long long>(lo) * (ld + 1);
  T *C = Staged ? stage : diag;
  if (Staged) copy_block<AtL2, InShared>(len, len, true, diag, ld, C, lb);
  by_rows<M>(len, 0, len, true, C, lb, V.vv, V.x, V.part);
  by_columns<M>(len, 0, len, true, C, lb, V.vv, V.x, true);
  T dot = 0;
  for (int i = threadIdx.x; i < len; i += kThreads) dot += cj(V.vv[i]) * V.x[i];
  const T alpha = T(-0.5) * cj(t) * t * block_sum(dot, V.red);
  for (int i = threadIdx.x; i < len; i += kThreads) V.x[i] = t * V.x[i] + alpha * V.vv[i];
  __syncthreads();
  const Rows L = rows_of(len);
  for (int i0 = 0; i0 < len; i0 += L.R) {
    const int i = i0 + L.r;
    if (L.g >= L.G || i >= len) continue;
    const T vi = V.vv[i], xi = V.x[i];
    for (int c = L.g; c <= i; c += L.G) {
      T *p = C + i + c * lb;
      const T r = M::ld(p) - vi * cj(V.x[c]) - xi * cj(V.vv[c]);
      M::st(p, c == i ? T(re(r)) : r);
    }
  }
  __syncthreads();
  if (Staged) copy_block<InShared, AtL2>(len, len, true, C, lb, diag, ld);
}

template <bool Staged, typename T>
__global__ void __launch_bounds__(kThreads, 1)
    chase(int n, int kd, T *w, long long ldw, T *v, T *tau, T *scratch, int *progress) {
  extern __shared__ __align__(16) unsigned char smem[];
  T *sh = reinterpret_cast<T *>(smem);
  T *vecs = Staged || vectors_shared<T>(kd) ? sh + kThreads + kWarps
                                            : scratch + static_cast<long long>(blockIdx.x) * 5 * kd;
  T *stage = Staged ? vecs + 5 * kd : nullptr;
  const Vecs<T> V = {vecs,          vecs + kd, vecs + 2 * kd, vecs + 3 * kd,
                     vecs + 4 * kd, sh,        sh + kThreads};
  const int sweeps = n - 1, steps0 = steps_of(n, kd, 0);
  volatile int *prog = progress;
  for (int s = blockIdx.x; s < sweeps; s += gridDim.x) {
    const int steps = steps_of(n, kd, s), before = s > 0 ? steps_of(n, kd, s - 1) : 0;
    for (int j = 0; j < steps; j++) {
      wait_for(prog, s, min(2 * j + 3, 2 * before));
      step<Staged>(n, kd, w, ldw - 1, s, j, steps0, v, tau, V, stage, prog, before);
      publish(prog, s, 2 * j + 2);
    }
  }
}

/* Shared memory of a block: the reduction scratch, the step's vectors where they fit (always
 * when staged) and, staged, the step's block of kd x (kd + 1). */
template <typename T> size_t shared_bytes(int kd, bool staged) {
  const size_t k = static_cast<size_t>(kd);
  return (kThreads + kWarps + (staged || vectors_shared<T>(kd) ? 5 * k : 0) +
          (staged ? k * (k + 1) : 0)) *
         sizeof(T);
}

/* Whether the steps work in shared memory on this device: its block fits in what a block may
 * opt into, and the kernel takes that much. */
template <typename T> bool staged_on_device(int kd) {
  int dev = 0, most = 0;
  const size_t bytes = shared_bytes<T>(kd, true);
  return cudaGetDevice(&dev) == cudaSuccess &&
         cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) ==
             cudaSuccess &&
         bytes <= static_cast<size_t>(most) &&
         cudaFuncSetAttribute(chase<true, T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(bytes)) == cudaSuccess;
}

/* The working band from LAPACK's lower band storage: rows 0 .. min(kd, n - 1 - j) of column j
 * from ab (the diagonal's real part), zeros below (cpu/hb2st.c's load). */
template <typename T>
__global__ void load(int n, int kd, const T *ab, long long ldab, T *w, long long ldw) {
  for (long long j = blockIdx.x; j < n; j += gridDim.x) {
    const long long rows = min(static_cast<long long>(kd), n - 1 - j);
    for (int r = threadIdx.x; r < ldw; r += blockDim.x)
      w[r + j * ldw] = r == 0 ? T(re(ab[j * ldab])) : r <= rows ? ab[r + j * ldab] : T(0);
  }
}

/* d and e (doubles) from the reduced band's rows 0 and 1 (real: larfg made them so). */
template <typename T>
__global__ void extract(int n, const T *w, long long ldw, double *d, double *e) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    d[i] = static_cast<double>(re(w[i * ldw]));
    if (i + 1 < n) e[i] = static_cast<double>(re(w[1 + i * ldw]));
  }
}

template <typename T> int blocks_for(int kd, int sweeps) {
  int dev = 0, sms = 0, per = 0;
  const bool staged = staged_on_device<T>(kd);
  const size_t sh = shared_bytes<T>(kd, staged);
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, staged ? chase<true, T> : chase<false, T>,
                                                    kThreads, sh) != cudaSuccess ||
      per < 1)
    return -1;
  /* a block per multiprocessor: about n / (2 kd) sweeps are in flight at once */
  return sweeps < sms ? (sweeps > 0 ? sweeps : 1) : sms;
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
    const bool staged = staged_on_device<T>(kd);
    const void *kernel = reinterpret_cast<const void *>(staged ? chase<true, T> : chase<false, T>);
    if (cudaLaunchCooperativeKernel(kernel, dim3(p->blocks), dim3(kThreads), args,
                                    shared_bytes<T>(kd, staged), st) != cudaSuccess)
      return -1;
  }
  const unsigned b = static_cast<unsigned>((n + 255) / 256 < 1024 ? (n + 255) / 256 : 1024);
  extract<T><<<b, 256, 0, st>>>(n, static_cast<const T *>(p->w), ldw, p->d, p->e);
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

} // namespace

extern "C" int tsr_cuda_hb2st_blocks(tessera_dtype_t dtype, int kd, int sweeps) {
  switch (dtype) {
  case TESSERA_F64:
    return blocks_for<double>(kd, sweeps);
  case TESSERA_F32:
    return blocks_for<float>(kd, sweeps);
  case TESSERA_C128:
    return blocks_for<zd>(kd, sweeps);
  case TESSERA_C64:
    return blocks_for<zf>(kd, sweeps);
  default:
    return -1;
  }
}

extern "C" int tsr_cuda_hb2st_run(tessera_dtype_t dtype, const tsr_cuda_hb2st_t *p, void *stream) {
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  if (p->n < 1) return 0;
  switch (dtype) {
  case TESSERA_F64:
    return run<double>(p, st);
  case TESSERA_F32:
    return run<float>(p, st);
  case TESSERA_C128:
    return run<zd>(p, st);
  case TESSERA_C64:
    return run<zf>(p, st);
  default:
    return -1;
  }
}
