/* Kernel tables: for each tile kernel, its implementations per device kind, its operation
 * count and its size key for the cost model; and the scalar loader the kernels share.
 *
 * Operation counts follow LAPACK Working Note 41: a kernel is counted as `fmuls`
 * multiplications and `fadds` additions, and on complex dtypes a multiplication weighs 6 real
 * operations and an addition 2 (so complex gemm is 8mnk against 2mnk for real gemm).
 */
#include "kernels/kernels.h"

tsr_scalar_t tsr_scalar_load(tessera_dtype_t dtype, const void *p, double dflt) {
  tsr_scalar_t s = {dflt, 0.0};
  if (!p) return s;
  const float *f = p;
  const double *d = p;
  switch (dtype) {
  case TESSERA_F32:
    s.re = f[0];
    break;
  case TESSERA_F64:
    s.re = d[0];
    break;
  case TESSERA_C64:
    s.re = f[0], s.im = f[1];
    break;
  case TESSERA_C128:
    s.re = d[0], s.im = d[1];
    break;
  default:
    break;
  }
  return s;
}

/* Operations of `fmuls` multiplications and `fadds` additions in `dtype`. */
static double op_count(tessera_dtype_t dtype, double fmuls, double fadds) {
  int complex_dtype = dtype == TESSERA_C64 || dtype == TESSERA_C128;
  return complex_dtype ? 6.0 * fmuls + 2.0 * fadds : fmuls + fadds;
}

/* Size key: dtype in bits 0-1, a variant in bits 2-3, then three dimensions of 20 bits each
 * at bits 4, 24 and 44. A dimension beyond 20 bits saturates; a negative one counts as 0. */
static uint64_t size_key(tessera_dtype_t dtype, unsigned variant, int64_t m, int64_t n, int64_t k) {
  const int64_t max = (INT64_C(1) << 20) - 1;
  int64_t dim[3] = {m, n, k};
  uint64_t key = ((uint64_t)dtype & 3u) | (uint64_t)(variant & 3u) << 2;
  for (int i = 0; i < 3; i++) {
    int64_t v = dim[i] < 0 ? 0 : dim[i] > max ? max : dim[i];
    key |= (uint64_t)v << (4 + 20 * i);
  }
  return key;
}

static double potrf_flops(const void *args) {
  const tsr_potrf_args_t *a = args;
  double n = a->n;
  return op_count(a->dtype, n * n * n / 6 + n * n / 2 + n / 3, n * n * n / 6 - n / 6);
}

static uint64_t potrf_key(const void *args) {
  const tsr_potrf_args_t *a = args;
  return size_key(a->dtype, 0, a->n, 0, 0);
}

/* op(A) is order `na` and B is m x n; each of the other dimension's columns (or rows) is
 * one triangular solve of order na. */
static double trsm_flops(const void *args) {
  const tsr_trsm_args_t *a = args;
  int right = a->side == 'R' || a->side == 'r';
  double na = right ? a->n : a->m, nrhs = right ? a->m : a->n;
  return op_count(a->dtype, nrhs * na * (na + 1) / 2, nrhs * na * (na - 1) / 2);
}

static uint64_t trsm_key(const void *args) {
  const tsr_trsm_args_t *a = args;
  return size_key(a->dtype, a->side == 'R' || a->side == 'r', a->m, a->n, 0);
}

static double syrk_flops(const void *args) {
  const tsr_syrk_args_t *a = args;
  double n = a->n, k = a->k;
  return op_count(a->dtype, k * n * (n + 1) / 2, k * n * (n + 1) / 2);
}

static uint64_t syrk_key(const void *args) {
  const tsr_syrk_args_t *a = args;
  return size_key(a->dtype, a->herk != 0, a->n, a->k, 0);
}

static double gemm_flops(const void *args) {
  const tsr_gemm_args_t *a = args;
  double mnk = (double)a->m * a->n * a->k;
  return op_count(a->dtype, mnk, mnk);
}

static uint64_t gemm_key(const void *args) {
  const tsr_gemm_args_t *a = args;
  return size_key(a->dtype, 0, a->m, a->n, a->k);
}

static double lacpy_flops(const void *args) {
  (void)args;
  return 0.0;
}

static uint64_t lacpy_key(const void *args) {
  const tsr_lacpy_args_t *a = args;
  return size_key(a->dtype, 0, a->m, a->n, 0);
}

const tessera_kernel_t tsr_kernel_potrf = {
    .name = "potrf",
    .impl = {[TESSERA_DEVICE_CPU] = tsr_cpu_potrf, [TESSERA_DEVICE_CUDA] = NULL},
    .flops = potrf_flops,
    .size_key = potrf_key,
};

const tessera_kernel_t tsr_kernel_trsm = {
    .name = "trsm",
    .impl = {[TESSERA_DEVICE_CPU] = tsr_cpu_trsm, [TESSERA_DEVICE_CUDA] = NULL},
    .flops = trsm_flops,
    .size_key = trsm_key,
};

const tessera_kernel_t tsr_kernel_syrk = {
    .name = "syrk",
    .impl = {[TESSERA_DEVICE_CPU] = tsr_cpu_syrk, [TESSERA_DEVICE_CUDA] = NULL},
    .flops = syrk_flops,
    .size_key = syrk_key,
};

const tessera_kernel_t tsr_kernel_gemm = {
    .name = "gemm",
    .impl = {[TESSERA_DEVICE_CPU] = tsr_cpu_gemm, [TESSERA_DEVICE_CUDA] = NULL},
    .flops = gemm_flops,
    .size_key = gemm_key,
};

const tessera_kernel_t tsr_kernel_lacpy = {
    .name = "lacpy",
    .impl = {[TESSERA_DEVICE_CPU] = tsr_cpu_lacpy, [TESSERA_DEVICE_CUDA] = NULL},
    .flops = lacpy_flops,
    .size_key = lacpy_key,
};
