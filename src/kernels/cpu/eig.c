/* CPU kernels of the eigensolver's second stage and tridiagonal solve: bulge chasing and its
 * back-transformation (hb2st.c, hb2st_apply.c), and LAPACK's divide and conquer (dstedc) or
 * root-free QR (dsterf) on the real tridiagonal. */
#include <lapacke.h>

#include "kernels/cpu/cpu_blas.h"
#include "kernels/cpu/hb2st.h"

int tsr_cpu_hb2st(const tessera_exec_t *ex, void *args) {
  const tsr_hb2st_args_t *a = args;
  if (!tsr_dtype_valid(a->dtype) || ex->ndata < 5 || a->n < 0 || a->kd < 0 || ex->ld[0] > INT32_MAX)
    return TESSERA_ERR_KERNEL;
  return tsr_hb2st(a->dtype, a->n, a->kd, ex->ptr[0], (int)ex->ld[0], ex->ptr[1], ex->ptr[2],
                   ex->ptr[3], ex->ptr[4], NULL);
}

int tsr_cpu_hb2st_apply(const tessera_exec_t *ex, void *args) {
  const tsr_hb2st_apply_args_t *a = args;
  if (!tsr_dtype_valid(a->dtype) || ex->ndata < 3 || ex->ld[2] > INT32_MAX)
    return TESSERA_ERR_KERNEL;
  return tsr_hb2st_apply(a->dtype, a->n, a->kd, ex->ptr[0], ex->ptr[1], a->m, ex->ptr[2],
                         (int)ex->ld[2]);
}

int tsr_cpu_stedc(const tessera_exec_t *ex, void *args) {
  const tsr_stedc_args_t *a = args;
  if (a->n < 0 || ex->ndata < (a->vectors ? 3 : 2) || (a->vectors && ex->ld[2] < (size_t)a->n))
    return TESSERA_ERR_KERNEL;
  if (a->n == 0) return 0;
  const lapack_int n = a->n;
  const lapack_int info = a->vectors ? LAPACKE_dstedc(LAPACK_COL_MAJOR, 'I', n, ex->ptr[0],
                                                      ex->ptr[1], ex->ptr[2], (lapack_int)ex->ld[2])
                                     : LAPACKE_dsterf(n, ex->ptr[0], ex->ptr[1]);
  return info < 0 ? TESSERA_ERR_KERNEL : (int)info;
}
