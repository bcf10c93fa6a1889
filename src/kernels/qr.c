/* The QR family's kernel tables (qr.h): for each kernel, its implementations per device kind,
 * its operation count and its size key for the cost model. */
#include "kernels/qr.h"
#include "kernels/table.h"

/* geqrt of an m' x n block (m' = m - r0): geqrf's leading terms (LAPACK Working Note 41),
 * 2 k² (M - k / 3) for k = min(m', n), M = max(m', n), and as many again for T (larft). */
static double geqrt_flops(const void *args) {
  const tsr_geqrt_args_t *a = args;
  const double m = a->m - a->r0, n = a->n;
  if (m <= 0 || n <= 0) return 0;
  const double k = m < n ? m : n, big = m < n ? n : m, half = k * k * (big - k / 3);
  return 2 * tsr_op_count(a->dtype, half, half);
}

static uint64_t geqrt_key(const void *args) {
  const tsr_geqrt_args_t *a = args;
  return tsr_size_key(a->dtype, 0, a->m - a->r0, a->n, 0);
}

/* larft of kb vectors of m' rows: about kb² m' (LAPACK Working Note 41's larft). */
static double larft_flops(const void *args) {
  const tsr_larft_args_t *a = args;
  const double rows = a->m - a->r0, kb = a->kb, half = kb * kb * rows / 2;
  return tsr_op_count(a->dtype, half, half);
}

static uint64_t larft_key(const void *args) {
  const tsr_larft_args_t *a = args;
  return tsr_size_key(a->dtype, 0, a->m - a->r0, a->kb, 0);
}

/* Two products with V (each 2 kb n m' less the triangle's half) and one with T. */
static double qr_step_flops(const void *args) {
  const tsr_qr_step_args_t *a = args;
  const double rows = a->m - a->r0, kb = a->kb, n = a->n;
  const double prod = 2 * (rows * kb * n - kb * kb * n / 2) + kb * kb * n / 2;
  return tsr_op_count(a->dtype, prod, prod);
}

static uint64_t qr_step_key(const void *args) {
  const tsr_qr_step_args_t *a = args;
  return tsr_size_key(a->dtype, a->trans != 'N', a->m - a->r0, a->n, a->kb);
}

TSR_KERNEL_TABLE(geqrt, geqrt);
TSR_KERNEL_TABLE(larft, larft);
TSR_KERNEL_TABLE(qr_step, qr_step);
