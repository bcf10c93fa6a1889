/* The Cholesky family's kernel tables (cholesky.h): for each kernel, its implementations per
 * device kind, its operation count and its size key for the cost model. */
#include "kernels/cholesky.h"
#include "kernels/table.h"

static double potrf_flops(const void *args) {
  const tsr_potrf_args_t *a = args;
  double n = a->n;
  return tsr_op_count(a->dtype, n * n * n / 6 + n * n / 2 + n / 3, n * n * n / 6 - n / 6);
}

static uint64_t potrf_key(const void *args) {
  const tsr_potrf_args_t *a = args;
  return tsr_size_key(a->dtype, 0, a->n, 0, 0);
}

static double trtri_flops(const void *args) {
  const tsr_trtri_args_t *a = args;
  double n = a->n;
  return tsr_op_count(a->dtype, n * n * n / 6 + n * n / 2 + n / 3,
                      n * n * n / 6 - n * n / 2 + n / 3);
}

static uint64_t trtri_key(const void *args) {
  const tsr_trtri_args_t *a = args;
  return tsr_size_key(a->dtype, a->diag == 'U' || a->diag == 'u', a->n, 0, 0);
}

/* LAWN 41 counts lauum as potri minus trtri, which is potrf's count. */
static double lauum_flops(const void *args) {
  const tsr_lauum_args_t *a = args;
  tsr_potrf_args_t p = {.dtype = a->dtype, .n = a->n};
  return potrf_flops(&p);
}

static uint64_t lauum_key(const void *args) {
  const tsr_lauum_args_t *a = args;
  return tsr_size_key(a->dtype, 0, a->n, 0, 0);
}

static double logdiag_flops(const void *args) {
  const tsr_logdiag_args_t *a = args;
  return a->n;
}

static uint64_t logdiag_key(const void *args) {
  const tsr_logdiag_args_t *a = args;
  return tsr_size_key(a->dtype, 0, a->n, 0, 0);
}

static double posv_flops(const void *args) {
  const tsr_posv_args_t *a = args;
  const tsr_potrf_args_t f = {.dtype = a->dtype, .n = a->n};
  const char side = a->side == 'R' || a->side == 'r' ? 'R' : 'L';
  return (a->batch > 1 ? a->batch : 1) *
         (potrf_flops(&f) + 2 * (side == 'R'
                                     ? tsr_triangular_flops(a->dtype, side, a->nrhs, a->n)
                                     : tsr_triangular_flops(a->dtype, side, a->n, a->nrhs)));
}

static uint64_t posv_key(const void *args) {
  const tsr_posv_args_t *a = args;
  return tsr_size_key(a->dtype, a->side == 'R' || a->side == 'r', a->n, a->nrhs, 0);
}

TSR_KERNEL_TABLE(potrf, potrf);
TSR_KERNEL_TABLE(trtri, trtri);
TSR_KERNEL_TABLE(lauum, lauum);
TSR_KERNEL_TABLE(logdiag, logdiag);
TSR_KERNEL_TABLE(posv, posv);
