/* What the CPU tile kernels (blas3.c, cholesky.c, lu.c, qr.c, copy.c, eig.c) share: CBLAS flags
 * from tessera's letters, scalars in the forms CBLAS takes, and the operands of a task checked
 * against their shapes.
 */
#ifndef TSR_KERNELS_CPU_BLAS_H
#define TSR_KERNELS_CPU_BLAS_H

#include <cblas.h>

#include "kernels/kernel_args.h"

/* CBLAS flags, indexed by the position of the tessera letter in "NTC", "UL", "LR", "NU". */
static const enum CBLAS_TRANSPOSE tsr_cblas_op[] = {CblasNoTrans, CblasTrans, CblasConjTrans};
static const enum CBLAS_UPLO tsr_cblas_uplo[] = {CblasUpper, CblasLower};
static const enum CBLAS_SIDE tsr_cblas_side[] = {CblasLeft, CblasRight};
static const enum CBLAS_DIAG tsr_cblas_diag[] = {CblasNonUnit, CblasUnit};

/** A scalar in every form the routines of a dtype table take (see blas3.c). */
typedef struct {
  float s[2];
  double d[2];
} tsr_blas_scalar_t;

static inline tsr_blas_scalar_t tsr_blas_scalar(tsr_scalar_t v) {
  tsr_blas_scalar_t b = {{(float)v.re, (float)v.im}, {v.re, v.im}};
  return b;
}

/** One buffer of a task: its pointer and the leading dimension passed to BLAS. */
typedef struct {
  void *p;
  blasint ld;
} tsr_cpu_operand_t;

/** Fills `o` with buffer `i` of `ex` holding a rows x cols block. Returns 0, or -1 when the
 *  block does not fit (see tsr_operand_ld). */
static inline int tsr_cpu_operand(const tessera_exec_t *ex, int i, int rows, int cols,
                                  tsr_cpu_operand_t *o) {
  int ld = tsr_operand_ld(ex, i, rows, cols);
  if (ld < 0) return -1;
  o->p = ex->ptr[i];
  o->ld = ld;
  return 0;
}

#endif
