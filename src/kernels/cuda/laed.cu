/* Device kernels of the tridiagonal divide and conquer's merges (cpu/laed.h), behind the C
 * launchers of cuda_kernels.h: the coupling vector from two rows, the secular equation's roots
 * (secular.h), the deflation's rotations, the regrouping of columns, the secular problem's
 * eigenvectors (Löwner's formula), their products with the two kept rows of the values-only
 * merges and the final placement of the merged block's columns. f64. */
#include <cuda_runtime.h>

#include "kernels/cuda/cuda_kernels.h"
#include "kernels/secular.h"

namespace {

constexpr int kThreads = 256;

/* z[c] = Q(r, c), plus Q(r + 1, c) with `two`, for c in [c0, c0 + count): where both rows are
 * read, one of the two is zero (Q block diagonal). */
__global__ void rows(const double *q, long long ld, long long c0, long long count, long long r,
                     int two, double *z) {
  for (long long c = c0 + blockIdx.x * blockDim.x + threadIdx.x; c < c0 + count;
       c += gridDim.x * blockDim.x)
    z[c] = q[c * ld + r] + (two ? q[c * ld + r + 1] : 0);
}

/* The secular equation's roots (secular.h), a warp per root: its lanes sum over the poles, the
 * butterfly leaves every lane the same sums, so every lane takes the same steps. Root j's origin,
 * delta = -τ and value; a root that did not converge gives *info = its index + 1. */
constexpr int kWarp = 32;

__global__ void secular(long long k, const double *dl, const double *w, double rho, double wsq,
                        double *root, int *origin, double *delta, int *info) {
  const long long j = (blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x) / kWarp;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  if (j >= k) return; /* the whole warp */
  tsr_secular_t s;
  tsr_secular_start(&s, k, j, dl, rho, wsq);
  int done = 0;
  while (!done) {
    tsr_secular_sums_t sum = {0, 0, 0, 0};
    tsr_secular_add(&s, dl, w, lane, k, kWarp, &sum);
    for (int h = kWarp / 2; h > 0; h /= 2) {
      sum.psi += __shfl_xor_sync(0xffffffffu, sum.psi, h);
      sum.dpsi += __shfl_xor_sync(0xffffffffu, sum.dpsi, h);
      sum.phi += __shfl_xor_sync(0xffffffffu, sum.phi, h);
      sum.dphi += __shfl_xor_sync(0xffffffffu, sum.dphi, h);
    }
    done = tsr_secular_step(&s, dl, &sum);
  }
  if (lane != 0) return;
  if (done < 0) {
    atomicCAS(info, 0, static_cast<int>(j + 1));
    return;
  }
  origin[j] = static_cast<int>(s.o), delta[j] = -s.tau, root[j] = dl[s.o] + s.tau;
}

/* The rotations (x, y, c, s) in order on columns x and y of the m-row block: a thread per row. */
__global__ void rotate(double *q, long long ld, long long m, const double *rot, long long nrot) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= m) return;
  for (long long r = 0; r < nrot; r++) {
    const double *g = rot + 4 * r;
    double *x = q + static_cast<long long>(g[0]) * ld + i,
           *y = q + static_cast<long long>(g[1]) * ld + i;
    const double a = *x, b = *y;
    *x = g[2] * a + g[3] * b;
    *y = g[2] * b - g[3] * a;
  }
}

/* to(:, c) = from(:, col[c]) for c < n, m rows (to's leading dimension ldt). */
__global__ void gather(const double *from, long long ldf, long long m, const int *col, long long n,
                       double *to, long long ldt) {
  for (long long c = blockIdx.y; c < n; c += gridDim.y) {
    const double *f = from + col[c] * ldf;
    for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x)
      to[c * ldt + i] = f[i];
  }
}

/* dlamda[i] - root j to high relative accuracy (cpu/laed.h). */
__device__ double gap(const double *dl, const int *origin, const double *delta, long long i,
                      long long j) {
  return (dl[i] - dl[origin[j]]) + delta[j];
}

/* Löwner's weights wt[i] (the sign of w[i]): a thread per i. */
__global__ void weights(long long k, const double *dl, const double *w, const int *origin,
                        const double *delta, double *wt) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= k) return;
  double x = gap(dl, origin, delta, i, i);
  for (long long j = 0; j < k; j++)
    if (j != i) x *= gap(dl, origin, delta, i, j) / (dl[i] - dl[j]);
  wt[i] = copysign(sqrt(-x), w[i]);
}

/* Column j = j0 + the block's index of S: at row r, wt[i] / (dlamda[i] - root j) for i =
 * perm[r], normalized, into column j - j0 of s. */
__global__ void vectors(long long k, long long j0, const double *dl, const int *origin,
                        const double *delta, const double *wt, const int *perm, double *s) {
  __shared__ double part[kThreads];
  const long long j = j0 + blockIdx.x;
  double *c = s + blockIdx.x * k, sum = 0;
  for (long long r = threadIdx.x; r < k; r += blockDim.x) {
    const long long i = perm[r];
    const double v = wt[i] / gap(dl, origin, delta, i, j);
    c[r] = v;
    sum += v * v;
  }
  part[threadIdx.x] = sum;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) part[threadIdx.x] += part[threadIdx.x + h];
    __syncthreads();
  }
  const double inv = 1 / sqrt(part[0]);
  for (long long r = threadIdx.x; r < k; r += blockDim.x) c[r] *= inv;
}

/* Column j of u = q2[:, 0:k] S, a thread block per column: S's column (at row r, wt[i] /
 * (dlamda[i] - root j) for i = perm[r]), its norm and its products with q2's two rows summed in
 * one pass, then scaled. */
__global__ void row_product(long long k, const double *dl, const int *origin, const double *delta,
                            const double *wt, const int *perm, const double *q2, double *u) {
  __shared__ double part[3][kThreads];
  const long long j = blockIdx.x;
  double nrm = 0, u0 = 0, u1 = 0;
  for (long long r = threadIdx.x; r < k; r += blockDim.x) {
    const long long i = perm[r];
    const double v = wt[i] / gap(dl, origin, delta, i, j);
    nrm += v * v, u0 += q2[2 * r] * v, u1 += q2[2 * r + 1] * v;
  }
  part[0][threadIdx.x] = nrm, part[1][threadIdx.x] = u0, part[2][threadIdx.x] = u1;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h /= 2) {
    if (threadIdx.x < h)
      for (int r = 0; r < 3; r++) part[r][threadIdx.x] += part[r][threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  const double inv = 1 / sqrt(part[0][0]);
  u[2 * j] = part[1][0] * inv, u[2 * j + 1] = part[2][0] * inv;
}

/* Column c of the block (rows rows of its m): column out[c] of q2 (u copied over its first k
 * columns; leading dimension rows). */
__global__ void place(double *q, long long ld, long long rows, long long m, const int *out,
                      const double *q2) {
  for (long long c = blockIdx.y; c < m; c += gridDim.y) {
    const double *f = q2 + out[c] * rows;
    for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += gridDim.x * blockDim.x)
      q[c * ld + i] = f[i];
  }
}

int launched() {
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

/* Thread blocks along columns (the grid's y, at most its limit; kernels loop over the rest). */
unsigned columns(long long n) {
  return static_cast<unsigned>(n < 65535 ? n : 65535);
}

unsigned blocks(long long n) {
  const long long b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 1024 ? (b < 1 ? 1 : b) : 1024);
}

} // namespace

extern "C" int tsr_cuda_laed_rows_enqueue(const double *q, size_t ld, long long c0, long long count,
                                          long long r, int two, double *z, void *stream) {
  if (count > 0)
    rows<<<blocks(count), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        q, static_cast<long long>(ld), c0, count, r, two, z);
  return launched();
}

extern "C" int tsr_cuda_laed_secular_enqueue(long long k, const double *dlamda, const double *w,
                                             double rho, double wsq, double *root, int *origin,
                                             double *delta, int *info, void *stream) {
  const long long threads = k * kWarp;
  if (k > 2)
    secular<<<static_cast<unsigned>((threads + kThreads - 1) / kThreads), kThreads, 0,
              static_cast<cudaStream_t>(stream)>>>(k, dlamda, w, rho, wsq, root, origin, delta,
                                                   info);
  return launched();
}

extern "C" int tsr_cuda_laed_values_enqueue(long long k, const double *dlamda, const double *w,
                                            const int *origin, const double *delta, const int *perm,
                                            const double *q2, double *wt, double *u, void *stream) {
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  if (k > 2) {
    weights<<<static_cast<unsigned>((k + kThreads - 1) / kThreads), kThreads, 0, st>>>(
        k, dlamda, w, origin, delta, wt);
    row_product<<<static_cast<unsigned>(k), kThreads, 0, st>>>(k, dlamda, origin, delta, wt, perm,
                                                               q2, u);
  }
  return launched();
}

extern "C" int tsr_cuda_laed_prepare(const tsr_cuda_laed_t *p, void *stream) {
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  const long long m = p->m, k = p->k, r = p->rows, ld = static_cast<long long>(p->ld);
  if (p->nrot > 0 && r > 0)
    rotate<<<static_cast<unsigned>((r + kThreads - 1) / kThreads), kThreads, 0, st>>>(
        p->q, ld, r, p->rot, p->nrot);
  if (m > 0 && r > 0)
    gather<<<dim3(blocks(r) < 8 ? blocks(r) : 8, columns(m)), kThreads, 0, st>>>(
        p->q, ld, r, p->src, m, p->q2, r);
  if (k > 2)
    weights<<<static_cast<unsigned>((k + kThreads - 1) / kThreads), kThreads, 0, st>>>(
        k, p->dlamda, p->w, p->origin, p->delta, p->wt);
  return launched();
}

extern "C" int tsr_cuda_laed_vectors(const tsr_cuda_laed_t *p, long long j0, long long j1,
                                     void *stream) {
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  const long long k = p->k;
  if (k <= 2)
    return j1 > j0 && cudaMemcpyAsync(p->s, p->vec2 + j0 * k,
                                      static_cast<size_t>((j1 - j0) * k) * sizeof(double),
                                      cudaMemcpyDeviceToDevice, st) != cudaSuccess
               ? -1
               : 0;
  if (j1 > j0)
    vectors<<<static_cast<unsigned>(j1 - j0), kThreads, 0, st>>>(k, j0, p->dlamda, p->origin,
                                                                 p->delta, p->wt, p->perm, p->s);
  return launched();
}

extern "C" int tsr_cuda_laed_place(const tsr_cuda_laed_t *p, void *stream) {
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  const long long m = p->m, r = p->rows;
  const size_t col = static_cast<size_t>(r) * sizeof(double);
  if (p->k > 0 && r > 0 &&
      cudaMemcpy2DAsync(p->q2, col, p->q, p->ld * sizeof(double), col, static_cast<size_t>(p->k),
                        cudaMemcpyDeviceToDevice, st) != cudaSuccess)
    return -1;
  if (m > 0 && r > 0)
    place<<<dim3(blocks(r) < 8 ? blocks(r) : 8, columns(m)), kThreads, 0, st>>>(
        p->q, static_cast<long long>(p->ld), r, m, p->out, p->q2);
  return launched();
}
