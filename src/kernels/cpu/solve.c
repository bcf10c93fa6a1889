/* CPU whole-matrix solves (posv, gesv): the factorization by the CPU tile kernels on the whole
 * matrix, its info into the caller's int, then the shared solves (solve_whole.c). */
#include <stdlib.h>

#include "kernels/cpu/cpu_blas.h"

int tsr_cpu_posv(const tessera_exec_t *ex, void *args) {
  const tsr_posv_args_t *a = args;
  const int right = tsr_letter(a->side, "LR");
  if (!tsr_dtype_valid(a->dtype) || tsr_letter(a->uplo, "UL") < 0 || right < 0 || ex->ndata < 3 ||
      !ex->ptr[2] || tsr_operand_ld(ex, 1, right ? a->nrhs : a->n, right ? a->n : a->nrhs) < 0)
    return TESSERA_ERR_KERNEL;
  int *info = ex->ptr[2];
  double *logdet = ex->ndata > 3 ? ex->ptr[3] : NULL;
  const tsr_potrf_args_t f = {.dtype = a->dtype, .uplo = a->uplo, .n = a->n};
  const int rc = tsr_cpu_potrf(ex, (void *)&f);
  if (rc < 0) return rc;
  *info = rc;
  if (logdet) {
    const tsr_logdiag_args_t d = {.dtype = a->dtype, .n = a->n, .out = logdet};
    if (tsr_cpu_logdiag(ex, (void *)&d)) return TESSERA_ERR_KERNEL;
    *logdet *= 2;
  }
  return rc ? 0 : tsr_potrs_whole(ex, a, tsr_cpu_trsm_blocked);
}

int tsr_cpu_gesv(const tessera_exec_t *ex, void *args) {
  const tsr_gesv_args_t *a = args;
  if (!tsr_dtype_valid(a->dtype) || tsr_letter(a->trans, "NTC") < 0 || ex->ndata < 3 ||
      !ex->ptr[2] || tsr_operand_ld(ex, 1, a->n, a->nrhs) < 0)
    return TESSERA_ERR_KERNEL;
  int *info = ex->ptr[2];
  int *piv = malloc((size_t)TSR_PIV_INTS(a->n) * sizeof *piv);
  if (!piv) return TESSERA_ERR_NOMEM;
  tessera_exec_t e = *ex;
  e.ptr[1] = piv; /* getrf's buffers: {A, piv} */
  e.ld[1] = (size_t)TSR_PIV_INTS(a->n);
  e.ndata = 2;
  const tsr_getrf_args_t f = {.dtype = a->dtype, .m = a->n, .n = a->n};
  int rc = tsr_cpu_getrf(&e, (void *)&f);
  *info = rc ? 0 : piv[0];
  if (!rc && piv[0] == 0) {
    e = *ex;
    e.ptr[3] = piv;
    e.ld[3] = (size_t)TSR_PIV_INTS(a->n);
    e.ndata = 4;
    rc = tsr_getrs_whole(&e, a, tsr_cpu_laswp, tsr_cpu_trsm_blocked);
  }
  free(piv);
  return rc;
}
