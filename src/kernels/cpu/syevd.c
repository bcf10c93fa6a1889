/* The one-stage Hermitian eigensolver on the CPU (eig.h: syevd): LAPACK's ?syevd (real) and
 * ?heevd (complex) on the whole matrix, from the dtype's table, with the BLAS threads the call
 * gives it. The _work forms, their workspaces queried first: LAPACKE's others refuse a matrix
 * holding NaN, which LAPACK itself carries through. */
#include <complex.h>
#include <lapacke.h>
#include <stdlib.h>

#include "device/cpu/cpu.h"
#include "kernels/eig.h"

typedef lapack_int (*syevd_fn)(char jobz, char uplo, lapack_int n, void *a, lapack_int lda,
                               void *w);

/* One call of the real routine: its workspaces' sizes asked (lwork = -1), then made. */
#define SYEVD(t, real)                                                                             \
  static lapack_int t##syevd(char jobz, char uplo, lapack_int n, void *a, lapack_int lda,          \
                             void *w) {                                                            \
    real q = 0;                                                                                    \
    lapack_int iq = 0;                                                                             \
    lapack_int r =                                                                                 \
        LAPACKE_##t##syevd_work(LAPACK_COL_MAJOR, jobz, uplo, n, a, lda, w, &q, -1, &iq, -1);      \
    real *work = r ? NULL : malloc(((size_t)q + 1) * sizeof *work);                                \
    lapack_int *iwork = r ? NULL : malloc(((size_t)iq + 1) * sizeof *iwork);                       \
    if (!r && work && iwork)                                                                       \
      r = LAPACKE_##t##syevd_work(LAPACK_COL_MAJOR, jobz, uplo, n, a, lda, w, work, (lapack_int)q, \
                                  iwork, iq);                                                      \
    else if (!r)                                                                                   \
      r = -1000;                                                                                   \
    free(work), free(iwork);                                                                       \
    return r;                                                                                      \
  }
/* And of the complex one, with its real workspace too. */
#define HEEVD(t, real, cplx)                                                                       \
  static lapack_int t##syevd(char jobz, char uplo, lapack_int n, void *a, lapack_int lda,          \
                             void *w) {                                                            \
    cplx q = 0;                                                                                    \
    real rq = 0;                                                                                   \
    lapack_int iq = 0;                                                                             \
    lapack_int r = LAPACKE_##t##heevd_work(LAPACK_COL_MAJOR, jobz, uplo, n, a, lda, w, &q, -1,     \
                                           &rq, -1, &iq, -1);                                      \
    cplx *work = r ? NULL : malloc(((size_t)creal(q) + 1) * sizeof *work);                         \
    real *rwork = r ? NULL : malloc(((size_t)rq + 1) * sizeof *rwork);                             \
    lapack_int *iwork = r ? NULL : malloc(((size_t)iq + 1) * sizeof *iwork);                       \
    if (!r && work && rwork && iwork)                                                              \
      r = LAPACKE_##t##heevd_work(LAPACK_COL_MAJOR, jobz, uplo, n, a, lda, w, work,                \
                                  (lapack_int)creal(q), rwork, (lapack_int)rq, iwork, iq);         \
    else if (!r)                                                                                   \
      r = -1000;                                                                                   \
    free(work), free(rwork), free(iwork);                                                          \
    return r;                                                                                      \
  }
SYEVD(s, float)
SYEVD(d, double)
HEEVD(c, float, lapack_complex_float)
HEEVD(z, double, lapack_complex_double)
static const syevd_fn syevd_of[TESSERA_NUM_DTYPES] = {ssyevd, dsyevd, csyevd, zsyevd};

int tsr_cpu_syevd(const tessera_exec_t *ex, void *args) {
  const tsr_syevd_args_t *a = args;
  if (!tsr_dtype_valid(a->dtype) || ex->ndata < 3 || a->n < 0 ||
      (a->jobz != 'V' && a->jobz != 'N') || (a->uplo != 'L' && a->uplo != 'U') ||
      ex->ld[0] < (size_t)(a->n > 1 ? a->n : 1))
    return TESSERA_ERR_KERNEL;
  int *info = ex->ptr[2];
  *info = 0;
  if (a->n == 0) return 0;
  const int prev = a->threads > 1 ? tsr_cpu_blas_threads(a->threads) : 0;
  const lapack_int r =
      syevd_of[a->dtype](a->jobz, a->uplo, a->n, ex->ptr[0], (lapack_int)ex->ld[0], ex->ptr[1]);
  if (prev > 0) tsr_cpu_blas_threads(prev);
  if (r == -1000) return TESSERA_ERR_NOMEM;
  if (r < 0) return TESSERA_ERR_KERNEL;
  *info = (int)r;
  return 0;
}
