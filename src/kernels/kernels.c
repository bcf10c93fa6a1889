/* Kernel tables: for each tile kernel, its implementations per device kind, its operation
 * count and its size key for the cost model. This file sits above the implementations it names
 * (cpu/, cuda/ and the recursive kernels) and calls none of them itself.
 *
 * Operation counts follow LAPACK Working Note 41: a kernel is counted as `fmuls`
 * multiplications and `fadds` additions, and on complex dtypes a multiplication weighs 6 real
 * operations and an addition 2 (so complex gemm is 8mnk against 2mnk for real gemm).
 */
#include "kernels/kernels.h"

/* Operations of `fmuls` multiplications and `fadds` additions in `dtype`. */
static double op_count(tessera_dtype_t dtype, double fmuls, double fadds) {
  return tsr_dtype_complex(dtype) ? 6.0 * fmuls + 2.0 * fadds : fmuls + fadds;
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

/* trsm and trmm: op(A) is order `na` and B is m x n; each of the other dimension's columns (or
 * rows) is one triangular solve (or product) of order na. */
static double triangular_flops(tessera_dtype_t dtype, char side, int m, int n) {
  int right = side == 'R' || side == 'r';
  double na = right ? n : m, nrhs = right ? m : n;
  return op_count(dtype, nrhs * na * (na + 1) / 2, nrhs * na * (na - 1) / 2);
}

static uint64_t triangular_key(tessera_dtype_t dtype, char side, int m, int n) {
  return size_key(dtype, side == 'R' || side == 'r', m, n, 0);
}

static double trsm_flops(const void *args) {
  const tsr_trsm_args_t *a = args;
  return triangular_flops(a->dtype, a->side, a->m, a->n);
}

static uint64_t trsm_key(const void *args) {
  const tsr_trsm_args_t *a = args;
  return triangular_key(a->dtype, a->side, a->m, a->n);
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

static double hemm_flops(const void *args) {
  const tsr_hemm_args_t *a = args;
  const double mmn = (double)a->m * a->m * a->n;
  return op_count(a->dtype, mmn, mmn);
}

static uint64_t hemm_key(const void *args) {
  const tsr_hemm_args_t *a = args;
  return size_key(a->dtype, a->uplo == 'U', a->m, a->n, 0);
}

static double hemm_pair_flops(const void *args) {
  const tsr_hemm_pair_args_t *a = args;
  const double rck = 2.0 * (double)a->r * a->c * a->k;
  return op_count(a->dtype, rck, rck);
}

static uint64_t hemm_pair_key(const void *args) {
  const tsr_hemm_pair_args_t *a = args;
  return size_key(a->dtype, 0, a->r, a->c, a->k);
}

static double geadd_flops(const void *args) {
  const tsr_geadd_args_t *a = args;
  const double mn = (double)a->m * a->n;
  return op_count(a->dtype, mn, mn);
}

static uint64_t geadd_key(const void *args) {
  const tsr_geadd_args_t *a = args;
  return size_key(a->dtype, 0, a->m, a->n, 0);
}

static double lacpy_flops(const void *args) {
  (void)args;
  return 0.0;
}

static uint64_t lacpy_key(const void *args) {
  const tsr_lacpy_args_t *a = args;
  return size_key(a->dtype, 0, a->m, a->n, 0);
}

static double convert_flops(const void *args) {
  (void)args;
  return 0.0;
}

static uint64_t convert_key(const void *args) {
  const tsr_convert_args_t *a = args;
  return size_key(a->to, tsr_dtype_single(a->from), a->m, a->n, 0);
}

static double absum_flops(const void *args) {
  (void)args;
  return 0.0;
}

static uint64_t absum_key(const void *args) {
  const tsr_absum_args_t *a = args;
  return size_key(a->dtype, a->part != 0, a->m, a->n, 0);
}

static double diagonal_flops(const void *args) {
  (void)args;
  return 0.0;
}

static uint64_t diagonal_key(const void *args) {
  const tsr_diagonal_args_t *a = args;
  return size_key(a->dtype, 0, a->n, 1, 0);
}

static double transpose_flops(const void *args) {
  (void)args;
  return 0.0;
}

static uint64_t transpose_key(const void *args) {
  const tsr_transpose_args_t *a = args;
  return size_key(a->dtype, 0, a->m, a->n, 0);
}

static double triangle_flops(const void *args) {
  (void)args;
  return 0.0;
}

static uint64_t triangle_key(const void *args) {
  const tsr_triangle_args_t *a = args;
  return size_key(a->dtype, a->uplo == 'U', a->k, a->k, 0);
}

static double hefill_flops(const void *args) {
  (void)args;
  return 0.0;
}

static uint64_t hefill_key(const void *args) {
  const tsr_hefill_args_t *a = args;
  return size_key(a->dtype, 0, a->n, a->n, 0);
}

/* Bulge chasing: about 6 n² kd real operations (a two-sided update of a kd x kd block per kd
 * entries annihilated), complex four times as many. */
static double hb2st_flops(const void *args) {
  const tsr_hb2st_args_t *a = args;
  const double n = a->n, kd = a->kd;
  return op_count(a->dtype, 3 * n * n * kd, 3 * n * n * kd);
}

static uint64_t hb2st_key(const void *args) {
  const tsr_hb2st_args_t *a = args;
  return size_key(a->dtype, 0, a->n, a->kd, 0);
}

/* A step: the bulge's two rank-one updates of kd x kd (j >= 1) and the diagonal block's
 * two-sided update (hemv + her2), about 6 kd² multiplications and as many additions. */
static double hb2st_steps_flops(const void *args) {
  const tsr_hb2st_steps_args_t *a = args;
  const double kd = a->kd < a->n - 1 ? a->kd : a->n - 1, steps = a->count;
  return kd > 0 ? op_count(a->dtype, 6 * kd * kd * steps, 6 * kd * kd * steps) : 0.0;
}

static uint64_t hb2st_steps_key(const void *args) {
  const tsr_hb2st_steps_args_t *a = args;
  return size_key(a->dtype, 0, a->kd < a->n - 1 ? a->kd : a->n - 1, a->count, 0);
}

/* n² / kd reflectors of kd entries, each applied to m columns. */
static double hb2st_apply_flops(const void *args) {
  const tsr_hb2st_apply_args_t *a = args;
  const double n = a->n, m = a->m;
  return op_count(a->dtype, 2 * n * n * m, 2 * n * n * m);
}

static uint64_t hb2st_apply_key(const void *args) {
  const tsr_hb2st_apply_args_t *a = args;
  return size_key(a->dtype, 0, a->n, a->m, a->kd);
}

/* Divide and conquer: about 4/3 n³ for the merges' products with vectors, O(n²) without. */
static double stedc_flops(const void *args) {
  const tsr_stedc_args_t *a = args;
  const double n = a->n;
  return a->vectors ? 4 * n * n * n / 3 : 30 * n * n;
}

static uint64_t stedc_key(const void *args) {
  const tsr_stedc_args_t *a = args;
  return size_key(TESSERA_F64, a->vectors != 0, a->n, 0, 0);
}

/* One pass over the columns' triangle entries. */
static double eig_prepare_flops(const void *args) {
  const tsr_eig_prepare_args_t *a = args;
  return (double)(a->j1 - a->j0) * (double)(a->n - (a->j0 + a->j1) / 2);
}

static uint64_t eig_prepare_key(const void *args) {
  const tsr_eig_prepare_args_t *a = args;
  return size_key(a->dtype, 0, a->n, a->j1 - a->j0, 0);
}

static double laed_rows_flops(const void *args) {
  return (double)((const tsr_laed_rows_args_t *)args)->m;
}

static uint64_t laed_rows_key(const void *args) {
  return size_key(TESSERA_F64, 0, ((const tsr_laed_rows_args_t *)args)->m, 0, 0);
}

/* dlaed4: a few passes over the k poles per root. */
static double laed_roots_flops(const void *args) {
  const tsr_laed_roots_args_t *a = args;
  return 40.0 * (double)a->plan->k * (double)(a->j1 - a->j0);
}

static uint64_t laed_roots_key(const void *args) {
  const tsr_laed_roots_args_t *a = args;
  return size_key(TESSERA_F64, 0, a->plan->k, a->j1 - a->j0, 0);
}

/* Löwner's products (phase 0) or a column of S and its two sums (phase 1): a few flops per pole
 * for each index. */
static double laed_update_flops(const void *args) {
  const tsr_laed_update_args_t *a = args;
  return (a->phase ? 6.0 : 3.0) * (double)a->plan->k * (double)(a->i1 - a->i0);
}

static uint64_t laed_update_key(const void *args) {
  const tsr_laed_update_args_t *a = args;
  return size_key(TESSERA_F64, a->phase, a->plan->k, a->i1 - a->i0, 0);
}

/* The product of the m x k regrouped vectors by the k x k secular ones. */
static double laed_merge_flops(const void *args) {
  const tsr_laed_plan_t *p = &((const tsr_laed_merge_args_t *)args)->plan;
  return 2.0 * (double)p->m * (double)p->k * (double)p->k;
}

static uint64_t laed_merge_key(const void *args) {
  const tsr_laed_plan_t *p = &((const tsr_laed_merge_args_t *)args)->plan;
  return size_key(TESSERA_F64, 0, p->m, p->k, 0);
}

static double identity_flops(const void *args) {
  (void)args;
  return 0.0;
}

static uint64_t identity_key(const void *args) {
  const tsr_identity_args_t *a = args;
  return size_key(a->dtype, 0, a->m, a->n, 0);
}

static double trtri_flops(const void *args) {
  const tsr_trtri_args_t *a = args;
  double n = a->n;
  return op_count(a->dtype, n * n * n / 6 + n * n / 2 + n / 3, n * n * n / 6 - n * n / 2 + n / 3);
}

static uint64_t trtri_key(const void *args) {
  const tsr_trtri_args_t *a = args;
  return size_key(a->dtype, a->diag == 'U' || a->diag == 'u', a->n, 0, 0);
}

/* LAWN 41 counts lauum as potri minus trtri, which is potrf's count. */
static double lauum_flops(const void *args) {
  const tsr_lauum_args_t *a = args;
  tsr_potrf_args_t p = {.dtype = a->dtype, .n = a->n};
  return potrf_flops(&p);
}

static uint64_t lauum_key(const void *args) {
  const tsr_lauum_args_t *a = args;
  return size_key(a->dtype, 0, a->n, 0, 0);
}

static double trmm_flops(const void *args) {
  const tsr_trmm_args_t *a = args;
  return triangular_flops(a->dtype, a->side, a->m, a->n);
}

static uint64_t trmm_key(const void *args) {
  const tsr_trmm_args_t *a = args;
  return triangular_key(a->dtype, a->side, a->m, a->n);
}

static double logdiag_flops(const void *args) {
  const tsr_logdiag_args_t *a = args;
  return a->n;
}

static uint64_t logdiag_key(const void *args) {
  const tsr_logdiag_args_t *a = args;
  return size_key(a->dtype, 0, a->n, 0, 0);
}

/* LAWN 41's getrf count for an m x n block (m >= n; the transposed count otherwise). */
static double getrf_flops(const void *args) {
  const tsr_getrf_args_t *a = args;
  double m = a->m - a->r0, n = a->n;
  if (m < n) {
    double t = m;
    m = n, n = t;
  }
  return op_count(a->dtype, m * n * n / 2 - n * n * n / 6 + m * n / 2 - n * n / 2 + 2 * n / 3,
                  m * n * n / 2 - n * n * n / 6 - m * n / 2 + n / 6);
}

static uint64_t getrf_key(const void *args) {
  const tsr_getrf_args_t *a = args;
  return size_key(a->dtype, 0, a->m - a->r0, a->n, 0);
}

/* A row interchange moves 2n elements: counted as n operations for the cost model. */
static double laswp_flops(const void *args) {
  const tsr_laswp_args_t *a = args;
  return (double)a->k * a->n;
}

static uint64_t laswp_key(const void *args) {
  const tsr_laswp_args_t *a = args;
  return size_key(a->dtype, 0, a->m - a->r0, a->n, a->k);
}

/* The triangular solve of order kb and the product with the off-diagonal part. */
static double lu_step_flops(const void *args) {
  const tsr_lu_step_args_t *a = args;
  const double rows = a->uplo == 'L' ? a->m - a->r0 - a->kb : a->r0;
  const double prod = rows * a->kb * a->n;
  return triangular_flops(a->dtype, 'L', a->kb, a->n) + op_count(a->dtype, prod, prod);
}

static uint64_t lu_step_key(const void *args) {
  const tsr_lu_step_args_t *a = args;
  const int64_t rows = a->uplo == 'L' ? a->m - a->r0 - a->kb : a->r0;
  return size_key(a->dtype, (a->uplo == 'L') | (a->trans != 'N') << 1, rows, a->n, a->kb);
}

/* geqrt of an m' x n block (m' = m - r0): geqrf's leading terms (LAPACK Working Note 41),
 * 2 k² (M - k / 3) for k = min(m', n), M = max(m', n), and as many again for T (larft). */
static double geqrt_flops(const void *args) {
  const tsr_geqrt_args_t *a = args;
  const double m = a->m - a->r0, n = a->n;
  if (m <= 0 || n <= 0) return 0;
  const double k = m < n ? m : n, big = m < n ? n : m, half = k * k * (big - k / 3);
  return 2 * op_count(a->dtype, half, half);
}

static uint64_t geqrt_key(const void *args) {
  const tsr_geqrt_args_t *a = args;
  return size_key(a->dtype, 0, a->m - a->r0, a->n, 0);
}

/* larft of kb vectors of m' rows: about kb² m' (LAPACK Working Note 41's larft). */
static double larft_flops(const void *args) {
  const tsr_larft_args_t *a = args;
  const double rows = a->m - a->r0, kb = a->kb, half = kb * kb * rows / 2;
  return op_count(a->dtype, half, half);
}

static uint64_t larft_key(const void *args) {
  const tsr_larft_args_t *a = args;
  return size_key(a->dtype, 0, a->m - a->r0, a->kb, 0);
}

/* Two products with V (each 2 kb n m' less the triangle's half) and one with T. */
static double qr_step_flops(const void *args) {
  const tsr_qr_step_args_t *a = args;
  const double rows = a->m - a->r0, kb = a->kb, n = a->n;
  const double prod = 2 * (rows * kb * n - kb * kb * n / 2) + kb * kb * n / 2;
  return op_count(a->dtype, prod, prod);
}

static uint64_t qr_step_key(const void *args) {
  const tsr_qr_step_args_t *a = args;
  return size_key(a->dtype, a->trans != 'N', a->m - a->r0, a->n, a->kb);
}

static double posv_flops(const void *args) {
  const tsr_posv_args_t *a = args;
  const tsr_potrf_args_t f = {.dtype = a->dtype, .n = a->n};
  const char side = a->side == 'R' || a->side == 'r' ? 'R' : 'L';
  return potrf_flops(&f) + 2 * (side == 'R' ? triangular_flops(a->dtype, side, a->nrhs, a->n)
                                            : triangular_flops(a->dtype, side, a->n, a->nrhs));
}

static uint64_t posv_key(const void *args) {
  const tsr_posv_args_t *a = args;
  return size_key(a->dtype, a->side == 'R' || a->side == 'r', a->n, a->nrhs, 0);
}

static double gesv_flops(const void *args) {
  const tsr_gesv_args_t *a = args;
  const tsr_getrf_args_t f = {.dtype = a->dtype, .m = a->n, .n = a->n};
  return getrf_flops(&f) + 2 * triangular_flops(a->dtype, 'L', a->n, a->nrhs);
}

static uint64_t gesv_key(const void *args) {
  const tsr_gesv_args_t *a = args;
  return size_key(a->dtype, a->trans != 'N' && a->trans != 'n', a->n, a->nrhs, 0);
}

/* The table of kernel `op`: CPU implementation tsr_cpu_<fn>, CUDA implementation
 * tsr_cuda_<fn> when the CUDA backend is built, the CPU's for simulated devices when they are,
 * <op>_flops and <op>_key. */
#ifdef TESSERA_HAVE_CUDA
#define CUDA_IMPL(fn) tsr_cuda_##fn
#else
#define CUDA_IMPL(fn) NULL
#endif
#ifdef TESSERA_SIM_DEVICES
#define SIM_IMPL(fn) tsr_cpu_##fn /* simulated devices compute in host memory */
#else
#define SIM_IMPL(fn) NULL
#endif
#define KERNEL_TABLE(op, fn)                                                                       \
  const tessera_kernel_t tsr_kernel_##op = {                                                       \
      .name = #op,                                                                                 \
      .impl = {[TESSERA_DEVICE_CPU] = tsr_cpu_##fn,                                                \
               [TESSERA_DEVICE_CUDA] = CUDA_IMPL(fn),                                              \
               [TESSERA_DEVICE_SIM] = SIM_IMPL(fn)},                                               \
      .flops = op##_flops,                                                                         \
      .size_key = op##_key,                                                                        \
  }

KERNEL_TABLE(potrf, potrf);
KERNEL_TABLE(trsm, trsm_blocked);
KERNEL_TABLE(syrk, syrk);
KERNEL_TABLE(gemm, gemm);
KERNEL_TABLE(hemm_pair, hemm_pair);
KERNEL_TABLE(hemm, hemm);
KERNEL_TABLE(lacpy, lacpy);
KERNEL_TABLE(convert, convert);
KERNEL_TABLE(absum, absum);
KERNEL_TABLE(diagonal, diagonal);
KERNEL_TABLE(transpose, transpose);
KERNEL_TABLE(identity, identity);
/* Host-only kernels: CPU workers (and the host node's inline runs) only. */
#define HOST_KERNEL_TABLE(op)                                                                      \
  const tessera_kernel_t tsr_kernel_##op = {                                                       \
      .name = #op,                                                                                 \
      .impl = {[TESSERA_DEVICE_CPU] = tsr_cpu_##op},                                               \
      .flops = op##_flops,                                                                         \
      .size_key = op##_key,                                                                        \
  }
HOST_KERNEL_TABLE(hb2st_steps);
HOST_KERNEL_TABLE(stedc);
HOST_KERNEL_TABLE(laed_roots);
HOST_KERNEL_TABLE(laed_update);
HOST_KERNEL_TABLE(eig_prepare);
KERNEL_TABLE(triangle, triangle_copy);
KERNEL_TABLE(hefill, hefill);
KERNEL_TABLE(hb2st, hb2st);
KERNEL_TABLE(hb2st_apply, hb2st_apply);
KERNEL_TABLE(laed_rows, laed_rows);
KERNEL_TABLE(laed_merge, laed_merge);
KERNEL_TABLE(geadd, geadd);
KERNEL_TABLE(trtri, trtri);
KERNEL_TABLE(lauum, lauum);
KERNEL_TABLE(trmm, trmm);
KERNEL_TABLE(logdiag, logdiag);
KERNEL_TABLE(getrf, getrf);
KERNEL_TABLE(laswp, laswp);
KERNEL_TABLE(lu_step, lu_step);
KERNEL_TABLE(qr_step, qr_step);
KERNEL_TABLE(geqrt, geqrt);
KERNEL_TABLE(larft, larft);

KERNEL_TABLE(posv, posv);
KERNEL_TABLE(gesv, gesv);
