/* What the kernel families' table files (blas3.c, cholesky.c, lu.c, qr.c, eig.c, copy.c) share:
 * operation counts, size keys and the macro that writes a kernel's table. Header only; each
 * table file sits above the implementations it names (cpu/, cuda/ and the recursive kernels) and
 * calls none of them itself.
 *
 * Operation counts follow LAPACK Working Note 41: a kernel is counted as `fmuls`
 * multiplications and `fadds` additions, and on complex dtypes a multiplication weighs 6 real
 * operations and an addition 2 (so complex gemm is 8mnk against 2mnk for real gemm).
 */
#ifndef TSR_KERNELS_TABLE_H
#define TSR_KERNELS_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/dtype.h"
#include "tessera/task.h"

/** Operations of `fmuls` multiplications and `fadds` additions in `dtype`. */
static inline double tsr_op_count(tessera_dtype_t dtype, double fmuls, double fadds) {
  return tsr_dtype_complex(dtype) ? 6.0 * fmuls + 2.0 * fadds : fmuls + fadds;
}

/** Size key: dtype in bits 0-1, a variant in bits 2-3, then three dimensions of 20 bits each
 *  at bits 4, 24 and 44. A dimension beyond 20 bits saturates; a negative one counts as 0. */
static inline uint64_t tsr_size_key(tessera_dtype_t dtype, unsigned variant, int64_t m, int64_t n,
                                    int64_t k) {
  const int64_t max = (INT64_C(1) << 20) - 1;
  int64_t dim[3] = {m, n, k};
  uint64_t key = ((uint64_t)dtype & 3u) | (uint64_t)(variant & 3u) << 2;
  for (int i = 0; i < 3; i++) {
    int64_t v = dim[i] < 0 ? 0 : dim[i] > max ? max : dim[i];
    key |= (uint64_t)v << (4 + 20 * i);
  }
  return key;
}

/** Operations of a triangular solve or product (trsm, trmm) whose op(A) is of order m (side
 *  'L') or n (side 'R') on an m x n B: each column (or row) of the other dimension is one
 *  triangular solve (or product) of that order. */
static inline double tsr_triangular_flops(tessera_dtype_t dtype, char side, int m, int n) {
  int right = side == 'R' || side == 'r';
  double na = right ? n : m, nrhs = right ? m : n;
  return tsr_op_count(dtype, nrhs * na * (na + 1) / 2, nrhs * na * (na - 1) / 2);
}

/* The table of kernel `op`: CPU implementation tsr_cpu_<fn>, CUDA implementation
 * tsr_cuda_<fn> when the CUDA backend is built, the CPU's for simulated devices when they are,
 * <op>_flops and <op>_key (static functions of the table file). */
#ifdef TESSERA_HAVE_CUDA
#define TSR_CUDA_IMPL(fn) tsr_cuda_##fn
#else
#define TSR_CUDA_IMPL(fn) NULL
#endif
#ifdef TESSERA_SIM_DEVICES
#define TSR_SIM_IMPL(fn) tsr_cpu_##fn /* simulated devices compute in host memory */
#else
#define TSR_SIM_IMPL(fn) NULL
#endif
#define TSR_KERNEL_TABLE(op, fn)                                                                   \
  const tessera_kernel_t tsr_kernel_##op = {                                                       \
      .name = #op,                                                                                 \
      .impl = {[TESSERA_DEVICE_CPU] = tsr_cpu_##fn,                                                \
               [TESSERA_DEVICE_CUDA] = TSR_CUDA_IMPL(fn),                                          \
               [TESSERA_DEVICE_SIM] = TSR_SIM_IMPL(fn)},                                           \
      .flops = op##_flops,                                                                         \
      .size_key = op##_key,                                                                        \
  }

/* The table of a host-only kernel: CPU workers (and the host node's inline runs) only. */
#define TSR_HOST_KERNEL_TABLE(op)                                                                  \
  const tessera_kernel_t tsr_kernel_##op = {                                                       \
      .name = #op,                                                                                 \
      .impl = {[TESSERA_DEVICE_CPU] = tsr_cpu_##op},                                               \
      .flops = op##_flops,                                                                         \
      .size_key = op##_key,                                                                        \
  }

#endif
