/* CPU tile kernels of the LU family (lu.h) on host memory through LAPACKE: getrf and laswp,
 * lu_step (lu_step.c) onto laswp, trsm, trmm and gemm; and gesv, the whole solve: the
 * factorization on the whole matrix, its info into the caller's int, then the shared solve
 * (solve_whole.c). Each calls the routine of the dtype from the operation's table, as
 * cpu/blas3.c does; an invalid argument returns TESSERA_ERR_KERNEL without touching the data.
 */
#include <lapacke.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cholesky.h"
#include "kernels/cpu/cpu_blas.h"
#include "kernels/lu.h"

/* ---------------------------------------------------------------- getrf */

typedef lapack_int (*getrf_fn)(lapack_int, lapack_int, void *, lapack_int, lapack_int *);
typedef lapack_int (*laswp_fn)(lapack_int, void *, lapack_int, lapack_int, lapack_int,
                               const lapack_int *, lapack_int);
#define LU(t)                                                                                      \
  static lapack_int t##getrf(lapack_int m, lapack_int n, void *A, lapack_int lda,                  \
                             lapack_int *ipiv) {                                                   \
    return LAPACKE_##t##getrf_work(LAPACK_COL_MAJOR, m, n, A, lda, ipiv);                          \
  }                                                                                                \
  static lapack_int t##laswp(lapack_int n, void *A, lapack_int lda, lapack_int k1, lapack_int k2,  \
                             const lapack_int *ipiv, lapack_int incx) {                            \
    return LAPACKE_##t##laswp_work(LAPACK_COL_MAJOR, n, A, lda, k1, k2, ipiv, incx);               \
  }
LU(s)
LU(d)
LU(c)
LU(z)
static const getrf_fn getrf_of[TESSERA_NUM_DTYPES] = {sgetrf, dgetrf, cgetrf, zgetrf};
static const laswp_fn laswp_of[TESSERA_NUM_DTYPES] = {slaswp, dlaswp, claswp, zlaswp};

/* Whether element (i, j) of the column-major block p (leading dimension ld) is NaN. */
static bool is_nan_at(tessera_dtype_t dt, const char *p, size_t ld, size_t i, size_t j) {
  const char *x = p + (i + j * ld) * tessera_dtype_size(dt);
  tsr_scalar_t v = tsr_scalar_load(dt, x, 0.0);
  return isnan(v.re) || isnan(v.im);
}

/* L11⁻¹ into buffer 2 of ex (getrf's inv, whole: zeros above its unit diagonal), L11 the unit
 * lower k x k block of the factors at p: copied there, then inverted in place by the Cholesky
 * family's trtri. */
static int lower_inverse(const tessera_exec_t *ex, tessera_dtype_t dt, const char *p, int ld,
                         int k) {
  tsr_cpu_operand_t V;
  if (tsr_cpu_operand(ex, 2, k, k, &V)) return TESSERA_ERR_KERNEL;
  const size_t es = tessera_dtype_size(dt);
  for (int j = 0; j < k; j++) {
    char *col = (char *)V.p + (size_t)j * (size_t)V.ld * es;
    memset(col, 0, (size_t)j * es);
    tsr_scalar_store(dt, col + (size_t)j * es, (tsr_scalar_t){1, 0});
    memcpy(col + (size_t)(j + 1) * es, p + ((size_t)j * (size_t)ld + (size_t)j + 1) * es,
           (size_t)(k - j - 1) * es);
  }
  tessera_exec_t e = *ex;
  e.ndata = 1;
  e.ptr[0] = V.p, e.ld[0] = ex->ld[2];
  const tsr_trtri_args_t inv = {.dtype = dt, .uplo = 'L', .diag = 'U', .n = k};
  return tsr_cpu_trtri(&e, (void *)&inv) < 0 ? TESSERA_ERR_KERNEL : 0;
}

int tsr_cpu_getrf(const tessera_exec_t *ex, void *args) {
  const tsr_getrf_args_t *a = args;
  tsr_cpu_operand_t A;
  if (!tsr_dtype_valid(a->dtype) || a->r0 < 0 || a->r0 > a->m ||
      tsr_cpu_operand(ex, 0, a->m, a->n, &A) || ex->ndata < 2 || !ex->ptr[1] ||
      sizeof(lapack_int) != sizeof(int))
    return TESSERA_ERR_KERNEL;
  const int rows = a->m - a->r0, k = rows < a->n ? rows : a->n;
  int *piv = ex->ptr[1];
  piv[0] = 0;
  if (k == 0) return 0;
  char *p = (char *)A.p + (size_t)a->r0 * tessera_dtype_size(a->dtype);
  lapack_int info = getrf_of[a->dtype](rows, a->n, p, A.ld, piv + 1);
  if (info < 0) return TESSERA_ERR_KERNEL;
  /* a NaN in the factored block: the first column holding one, if before a zero pivot */
  int first = info > 0 ? (int)info : INT_MAX;
  for (int j = 0; j < a->n && j + 1 < first; j++)
    for (int i = 0; i < rows; i++)
      if (is_nan_at(a->dtype, p, (size_t)A.ld, (size_t)i, (size_t)j)) {
        first = j + 1;
        break;
      }
  piv[0] = first == INT_MAX ? 0 : first;
  if (ex->ndata > 2 && lower_inverse(ex, a->dtype, p, A.ld, k)) return TESSERA_ERR_KERNEL;
  return tsr_lu_swaps(piv, k, rows) ? TESSERA_ERR_NOMEM : 0; /* the permutation, for devices */
}

int tsr_cpu_laswp(const tessera_exec_t *ex, void *args) {
  const tsr_laswp_args_t *a = args;
  tsr_cpu_operand_t A;
  if (!tsr_dtype_valid(a->dtype) || a->r0 < 0 || a->k < 0 || (int64_t)a->r0 + a->k > a->m ||
      (a->incx != 1 && a->incx != -1) || tsr_cpu_operand(ex, 0, a->m, a->n, &A) || ex->ndata < 2 ||
      (!ex->ptr[1] && a->k > 0))
    return TESSERA_ERR_KERNEL;
  if (a->k == 0 || a->n == 0) return 0;
  const int *piv = (const int *)ex->ptr[1] + 1, rows = a->m - a->r0;
  for (int i = 0; i < a->k; i++)
    if (piv[i] < 1 || piv[i] > rows) return TESSERA_ERR_KERNEL;
  char *p = (char *)A.p + (size_t)a->r0 * tessera_dtype_size(a->dtype);
  return laswp_of[a->dtype](a->n, p, A.ld, 1, a->k, piv, a->incx) < 0 ? TESSERA_ERR_KERNEL : 0;
}

int tsr_cpu_lu_step(const tessera_exec_t *ex, void *args) {
  return tsr_lu_step(ex, args, tsr_cpu_laswp, tsr_cpu_trsm_blocked, tsr_cpu_trmm, tsr_cpu_gemm);
}

/* ---------------------------------------------------------------- gesv */

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
