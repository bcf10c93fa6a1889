/* The BLAS-3 family's kernel tables (blas3.h): for each kernel, its implementations per device
 * kind, its operation count and its size key for the cost model. */
#include "kernels/blas3.h"
#include "kernels/table.h"

static double gemm_flops(const void *args) {
  const tsr_gemm_args_t *a = args;
  double mnk = (double)a->m * a->n * a->k;
  return tsr_op_count(a->dtype, mnk, mnk);
}

static uint64_t gemm_key(const void *args) {
  const tsr_gemm_args_t *a = args;
  return tsr_size_key(a->dtype, 0, a->m, a->n, a->k);
}

static double syrk_flops(const void *args) {
  const tsr_syrk_args_t *a = args;
  double n = a->n, k = a->k;
  return tsr_op_count(a->dtype, k * n * (n + 1) / 2, k * n * (n + 1) / 2);
}

static uint64_t syrk_key(const void *args) {
  const tsr_syrk_args_t *a = args;
  return tsr_size_key(a->dtype, a->herk != 0, a->n, a->k, 0);
}

/* trsm and trmm: the variant is the side. */
static uint64_t triangular_key(tessera_dtype_t dtype, char side, int m, int n) {
  return tsr_size_key(dtype, side == 'R' || side == 'r', m, n, 0);
}

static double trsm_flops(const void *args) {
  const tsr_trsm_args_t *a = args;
  return tsr_triangular_flops(a->dtype, a->side, a->m, a->n);
}

static uint64_t trsm_key(const void *args) {
  const tsr_trsm_args_t *a = args;
  return triangular_key(a->dtype, a->side, a->m, a->n);
}

static double trmm_flops(const void *args) {
  const tsr_trmm_args_t *a = args;
  return tsr_triangular_flops(a->dtype, a->side, a->m, a->n);
}

static uint64_t trmm_key(const void *args) {
  const tsr_trmm_args_t *a = args;
  return triangular_key(a->dtype, a->side, a->m, a->n);
}

static double hemm_flops(const void *args) {
  const tsr_hemm_args_t *a = args;
  const double mmn = (double)a->m * a->m * a->n;
  return tsr_op_count(a->dtype, mmn, mmn);
}

static uint64_t hemm_key(const void *args) {
  const tsr_hemm_args_t *a = args;
  return tsr_size_key(a->dtype, a->uplo == 'U', a->m, a->n, 0);
}

static double hemm_pair_flops(const void *args) {
  const tsr_hemm_pair_args_t *a = args;
  const double rck = 2.0 * (double)a->r * a->c * a->k;
  return tsr_op_count(a->dtype, rck, rck);
}

static uint64_t hemm_pair_key(const void *args) {
  const tsr_hemm_pair_args_t *a = args;
  return tsr_size_key(a->dtype, 0, a->r, a->c, a->k);
}

static double geadd_flops(const void *args) {
  const tsr_geadd_args_t *a = args;
  const double mn = (double)a->m * a->n;
  return tsr_op_count(a->dtype, mn, mn);
}

static uint64_t geadd_key(const void *args) {
  const tsr_geadd_args_t *a = args;
  return tsr_size_key(a->dtype, 0, a->m, a->n, 0);
}

TSR_KERNEL_TABLE(gemm, gemm);
TSR_KERNEL_TABLE(syrk, syrk);
TSR_KERNEL_TABLE(trsm, trsm_blocked);
TSR_KERNEL_TABLE(trmm, trmm);
TSR_KERNEL_TABLE(hemm, hemm);
TSR_KERNEL_TABLE(hemm_pair, hemm_pair);
TSR_KERNEL_TABLE(geadd, geadd);
