/* The SVD in one call on the CPU (eig.h: gesdd): A's columns scanned for a NaN or an infinity
 * (LAPACK's gesdd is not defined on them), then LAPACK's ?gesdd with jobz 'S' (economy U and
 * VT) or 'N', from the dtype's table, with the BLAS threads the call gives it. The _work forms,
 * their workspaces queried first (complex: the real workspace sized as LAPACK 3.7's documents
 * for the job). gesdd runs on a copy of A, and every workspace it reads has room past its end:
 * OpenBLAS 0.3.21's gemv kernels for some x86 cores read beyond a matrix's last element, a
 * fault where the array ends at the end of its mapping. */
#include <complex.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "device/cpu/cpu.h"
#include "kernels/eig.h"

/* Elements past the end of each array gesdd reads (see above). */
enum { SLACK = 4096 };

typedef lapack_int (*gesdd_fn)(char jobz, lapack_int m, lapack_int n, void *a, lapack_int lda,
                               void *s, void *u, lapack_int ldu, void *vt, lapack_int ldvt);

#define GESDD(t, real)                                                                             \
  static lapack_int t##gesdd(char jobz, lapack_int m, lapack_int n, void *a, lapack_int lda,       \
                             void *s, void *u, lapack_int ldu, void *vt, lapack_int ldvt) {        \
    const lapack_int k = m < n ? m : n;                                                            \
    real q = 0;                                                                                    \
    lapack_int *iwork = malloc((8 * (size_t)k + 1) * sizeof *iwork);                               \
    lapack_int r = iwork ? LAPACKE_##t##gesdd_work(LAPACK_COL_MAJOR, jobz, m, n, a, lda, s, u,     \
                                                   ldu, vt, ldvt, &q, -1, iwork)                   \
                         : -1000;                                                                  \
    real *work = r ? NULL : malloc(((size_t)q + SLACK) * sizeof *work);                            \
    if (!r && work)                                                                                \
      r = LAPACKE_##t##gesdd_work(LAPACK_COL_MAJOR, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, \
                                  (lapack_int)q, iwork);                                           \
    else if (!r)                                                                                   \
      r = -1000;                                                                                   \
    free(work), free(iwork);                                                                       \
    return r;                                                                                      \
  }
#define GESDD_COMPLEX(t, real, cplx)                                                               \
  static lapack_int t##gesdd(char jobz, lapack_int m, lapack_int n, void *a, lapack_int lda,       \
                             void *s, void *u, lapack_int ldu, void *vt, lapack_int ldvt) {        \
    const size_t k = (size_t)(m < n ? m : n), big = (size_t)(m > n ? m : n);                       \
    const size_t rk =                                                                              \
        jobz == 'N' ? 7 * k                                                                        \
                    : k * (5 * k + 7 > 2 * big + 2 * k + 1 ? 5 * k + 7 : 2 * big + 2 * k + 1);     \
    cplx q = 0;                                                                                    \
    real *rwork = malloc((rk + SLACK) * sizeof *rwork);                                            \
    lapack_int *iwork = malloc((8 * k + 1) * sizeof *iwork);                                       \
    lapack_int r = rwork && iwork                                                                  \
                       ? LAPACKE_##t##gesdd_work(LAPACK_COL_MAJOR, jobz, m, n, a, lda, s, u, ldu,  \
                                                 vt, ldvt, &q, -1, rwork, iwork)                   \
                       : -1000;                                                                    \
    cplx *work = r ? NULL : malloc(((size_t)creal(q) + SLACK) * sizeof *work);                     \
    if (!r && work)                                                                                \
      r = LAPACKE_##t##gesdd_work(LAPACK_COL_MAJOR, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, \
                                  (lapack_int)creal(q), rwork, iwork);                             \
    else if (!r)                                                                                   \
      r = -1000;                                                                                   \
    free(work), free(rwork), free(iwork);                                                          \
    return r;                                                                                      \
  }
GESDD(s, float)
GESDD(d, double)
GESDD_COMPLEX(c, float, lapack_complex_float)
GESDD_COMPLEX(z, double, lapack_complex_double)
static const gesdd_fn gesdd_of[TESSERA_NUM_DTYPES] = {sgesdd, dgesdd, cgesdd, zgesdd};

/* The first column (1-based) of the m x n A (lda) holding a NaN or an infinity, else 0: its
 * real parts and imaginary parts read as the real type's 2 m consecutive numbers a column. */
static int first_bad_column(tessera_dtype_t dt, int m, int n, const void *a, size_t lda) {
  const size_t per = tsr_dtype_complex(dt) ? 2 : 1, rows = per * (size_t)m, ld = per * lda;
  for (int j = 0; j < n; j++)
    for (size_t i = 0; i < rows; i++) {
      const double v = tsr_dtype_single(dt) ? ((const float *)a)[i + (size_t)j * ld]
                                            : ((const double *)a)[i + (size_t)j * ld];
      if (!isfinite(v)) return j + 1;
    }
  return 0;
}

int tsr_cpu_gesdd(const tessera_exec_t *ex, void *args) {
  const tsr_gesdd_args_t *a = args;
  const int k = a->m < a->n ? a->m : a->n;
  const bool vectors = a->jobz == 'S';
  if (!tsr_dtype_valid(a->dtype) || ex->ndata < 5 || a->m < 0 || a->n < 0 ||
      (a->jobz != 'S' && a->jobz != 'N') || ex->ld[0] < (size_t)(a->m > 1 ? a->m : 1) ||
      (vectors &&
       (ex->ld[2] < (size_t)(a->m > 1 ? a->m : 1) || ex->ld[3] < (size_t)(k > 1 ? k : 1))))
    return TESSERA_ERR_KERNEL;
  int *info = ex->ptr[4];
  info[0] = 0;
  info[1] = first_bad_column(a->dtype, a->m, a->n, ex->ptr[0], ex->ld[0]);
  if (k == 0 || info[1]) return 0;
  const size_t es = tessera_dtype_size(a->dtype), col = (size_t)a->m * es;
  char *copy = malloc(col * (size_t)a->n + SLACK * es);
  if (!copy) return TESSERA_ERR_NOMEM;
  for (int j = 0; j < a->n; j++)
    memcpy(copy + (size_t)j * col, (const char *)ex->ptr[0] + (size_t)j * ex->ld[0] * es, col);
  const int prev = a->threads > 1 ? tsr_cpu_blas_threads(a->threads) : 0;
  const lapack_int r =
      gesdd_of[a->dtype](a->jobz, a->m, a->n, copy, a->m, ex->ptr[1], vectors ? ex->ptr[2] : NULL,
                         vectors ? (lapack_int)ex->ld[2] : 1, vectors ? ex->ptr[3] : NULL,
                         vectors ? (lapack_int)ex->ld[3] : 1);
  if (prev > 0) tsr_cpu_blas_threads(prev);
  free(copy);
  if (r == -1000) return TESSERA_ERR_NOMEM;
  if (r < 0) return TESSERA_ERR_KERNEL;
  info[0] = (int)r;
  return 0;
}
