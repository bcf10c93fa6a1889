/* The one-stage Hermitian eigensolver on the CPU (eig.h: syevd): LAPACK's ?syevd (real) and
 * ?heevd (complex) on the whole matrix, from the dtype's table, with the BLAS threads the call
 * gives it. */
#include <lapacke.h>

#include "device/cpu/cpu.h"
#include "kernels/eig.h"

typedef lapack_int (*syevd_fn)(char jobz, char uplo, lapack_int n, void *a, lapack_int lda,
                               void *w);

#define SYEVD(t, routine, real)                                                                    \
  static lapack_int t##syevd(char jobz, char uplo, lapack_int n, void *a, lapack_int lda,          \
                             void *w) {                                                            \
    return LAPACKE_##routine(LAPACK_COL_MAJOR, jobz, uplo, n, a, lda, (real *)w);                  \
  }
SYEVD(s, ssyevd, float)
SYEVD(d, dsyevd, double)
SYEVD(c, cheevd, float)
SYEVD(z, zheevd, double)
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
  if (r < 0) return TESSERA_ERR_KERNEL;
  *info = (int)r;
  return 0;
}
