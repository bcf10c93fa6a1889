/* The LU family's kernel tables (lu.h): for each kernel, its implementations per device kind,
 * its operation count and its size key for the cost model. */
#include "kernels/lu.h"
#include "kernels/table.h"

/* LAWN 41's getrf count for an m x n block (m >= n; the transposed count otherwise). */
static double getrf_flops(const void *args) {
  const tsr_getrf_args_t *a = args;
  double m = a->m - a->r0, n = a->n;
  if (m < n) {
    double t = m;
    m = n, n = t;
  }
  return tsr_op_count(a->dtype, m * n * n / 2 - n * n * n / 6 + m * n / 2 - n * n / 2 + 2 * n / 3,
                      m * n * n / 2 - n * n * n / 6 - m * n / 2 + n / 6);
}

static uint64_t getrf_key(const void *args) {
  const tsr_getrf_args_t *a = args;
  return tsr_size_key(a->dtype, 0, a->m - a->r0, a->n, 0);
}

/* A row interchange moves 2n elements: counted as n operations for the cost model. */
static double laswp_flops(const void *args) {
  const tsr_laswp_args_t *a = args;
  return (double)a->k * a->n;
}

static uint64_t laswp_key(const void *args) {
  const tsr_laswp_args_t *a = args;
  return tsr_size_key(a->dtype, 0, a->m - a->r0, a->n, a->k);
}

/* The triangular solve of order kb and the product with the off-diagonal part. */
static double lu_step_flops(const void *args) {
  const tsr_lu_step_args_t *a = args;
  const double rows = a->uplo == 'L' ? a->m - a->r0 - a->kb : a->r0;
  const double prod = rows * a->kb * a->n;
  return tsr_triangular_flops(a->dtype, 'L', a->kb, a->n) + tsr_op_count(a->dtype, prod, prod);
}

static uint64_t lu_step_key(const void *args) {
  const tsr_lu_step_args_t *a = args;
  const int64_t rows = a->uplo == 'L' ? a->m - a->r0 - a->kb : a->r0;
  return tsr_size_key(a->dtype, (a->uplo == 'L') | (a->trans != 'N') << 1, rows, a->n, a->kb);
}

static double gesv_flops(const void *args) {
  const tsr_gesv_args_t *a = args;
  const tsr_getrf_args_t f = {.dtype = a->dtype, .m = a->n, .n = a->n};
  return getrf_flops(&f) + 2 * tsr_triangular_flops(a->dtype, 'L', a->n, a->nrhs);
}

static uint64_t gesv_key(const void *args) {
  const tsr_gesv_args_t *a = args;
  return tsr_size_key(a->dtype, a->trans != 'N' && a->trans != 'n', a->n, a->nrhs, 0);
}

TSR_KERNEL_TABLE(getrf, getrf);
TSR_KERNEL_TABLE(laswp, laswp);
TSR_KERNEL_TABLE(lu_step, lu_step);
TSR_KERNEL_TABLE(gesv, gesv);
