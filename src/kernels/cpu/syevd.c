/* The one-stage Hermitian eigensolver on the CPU (eig.h: syevd): LAPACK's ?syevd (real) and
 * ?heevd (complex) on the whole matrix, or for an index range ?syevr / ?heevr, from the dtype's
 * table, with the BLAS threads the call gives it. The _work forms, their workspaces queried first:
 * LAPACKE's others refuse a matrix holding NaN, which LAPACK itself carries through. */
#include <complex.h>
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

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

typedef lapack_int (*syevr_fn)(char jobz, char uplo, lapack_int n, void *a, lapack_int lda,
                               lapack_int il, lapack_int iu, void *w, void *z, lapack_int *isuppz);

/* Eigenvalues il .. iu of the real routine into w[0 ..], their vectors into z (n x k): its
 * workspaces' sizes asked, then made. */
#define SYEVR(t, real)                                                                             \
  static lapack_int t##syevr(char jobz, char uplo, lapack_int n, void *a, lapack_int lda,          \
                             lapack_int il, lapack_int iu, void *w, void *z, lapack_int *isuppz) { \
    real q = 0;                                                                                    \
    lapack_int iq = 0, m = 0;                                                                      \
    lapack_int r = LAPACKE_##t##syevr_work(LAPACK_COL_MAJOR, jobz, 'I', uplo, n, a, lda, 0, 0, il, \
                                           iu, 0, &m, w, z, n, isuppz, &q, -1, &iq, -1);           \
    real *work = r ? NULL : malloc(((size_t)q + 1) * sizeof *work);                                \
    lapack_int *iwork = r ? NULL : malloc(((size_t)iq + 1) * sizeof *iwork);                       \
    if (!r && work && iwork)                                                                       \
      r = LAPACKE_##t##syevr_work(LAPACK_COL_MAJOR, jobz, 'I', uplo, n, a, lda, 0, 0, il, iu, 0,   \
                                  &m, w, z, n, isuppz, work, (lapack_int)q, iwork, iq);            \
    else if (!r)                                                                                   \
      r = -1000;                                                                                   \
    free(work), free(iwork);                                                                       \
    return r;                                                                                      \
  }
/* And of the complex one, with its real workspace too. */
#define HEEVR(t, real, cplx)                                                                       \
  static lapack_int t##syevr(char jobz, char uplo, lapack_int n, void *a, lapack_int lda,          \
                             lapack_int il, lapack_int iu, void *w, void *z, lapack_int *isuppz) { \
    cplx q = 0;                                                                                    \
    real rq = 0;                                                                                   \
    lapack_int iq = 0, m = 0;                                                                      \
    lapack_int r = LAPACKE_##t##heevr_work(LAPACK_COL_MAJOR, jobz, 'I', uplo, n, a, lda, 0, 0, il, \
                                           iu, 0, &m, w, z, n, isuppz, &q, -1, &rq, -1, &iq, -1);  \
    cplx *work = r ? NULL : malloc(((size_t)creal(q) + 1) * sizeof *work);                         \
    real *rwork = r ? NULL : malloc(((size_t)rq + 1) * sizeof *rwork);                             \
    lapack_int *iwork = r ? NULL : malloc(((size_t)iq + 1) * sizeof *iwork);                       \
    if (!r && work && rwork && iwork)                                                              \
      r = LAPACKE_##t##heevr_work(LAPACK_COL_MAJOR, jobz, 'I', uplo, n, a, lda, 0, 0, il, iu, 0,   \
                                  &m, w, z, n, isuppz, work, (lapack_int)creal(q), rwork,          \
                                  (lapack_int)rq, iwork, iq);                                      \
    else if (!r)                                                                                   \
      r = -1000;                                                                                   \
    free(work), free(rwork), free(iwork);                                                          \
    return r;                                                                                      \
  }
SYEVR(s, float)
SYEVR(d, double)
HEEVR(c, float, lapack_complex_float)
HEEVR(z, double, lapack_complex_double)
static const syevr_fn syevr_of[TESSERA_NUM_DTYPES] = {ssyevr, dsyevr, csyevr, zsyevr};

/* Eigenvalues il .. iu (and vectors) by ?syevr / ?heevr: the values into w[0 ..], the vectors
 * from a scratch Z into A's first k columns. */
static lapack_int range(const tsr_syevd_args_t *a, void *A, lapack_int lda, void *w) {
  const size_t es = tessera_dtype_size(a->dtype);
  const size_t n = (size_t)a->n, k = (size_t)(a->iu - a->il + 1);
  void *z = a->jobz == 'V' ? malloc(n * k * es) : NULL;
  lapack_int *isuppz = malloc(2 * k * sizeof *isuppz);
  lapack_int r =
      (a->jobz == 'V' && !z) || !isuppz
          ? -1000
          : syevr_of[a->dtype](a->jobz, a->uplo, a->n, A, lda, a->il, a->iu, w, z ? z : A, isuppz);
  for (size_t j = 0; !r && z && j < k; j++)
    memcpy((char *)A + j * (size_t)lda * es, (char *)z + j * n * es, n * es);
  free(z), free(isuppz);
  return r;
}

int tsr_cpu_syevd(const tessera_exec_t *ex, void *args) {
  const tsr_syevd_args_t *a = args;
  if (!tsr_dtype_valid(a->dtype) || ex->ndata < 3 || a->n < 0 ||
      (a->jobz != 'V' && a->jobz != 'N') || (a->uplo != 'L' && a->uplo != 'U') ||
      ex->ld[0] < (size_t)(a->n > 1 ? a->n : 1) ||
      (a->il != 0 && (a->il < 1 || a->iu < a->il || a->iu > a->n)))
    return TESSERA_ERR_KERNEL;
  int *info = ex->ptr[2];
  *info = 0;
  if (a->n == 0) return 0;
  const int prev = a->threads > 1 ? tsr_cpu_blas_threads(a->threads) : 0;
  const lapack_int r = a->il > 0 ? range(a, ex->ptr[0], (lapack_int)ex->ld[0], ex->ptr[1])
                                 : syevd_of[a->dtype](a->jobz, a->uplo, a->n, ex->ptr[0],
                                                      (lapack_int)ex->ld[0], ex->ptr[1]);
  if (prev > 0) tsr_cpu_blas_threads(prev);
  if (r == -1000) return TESSERA_ERR_NOMEM;
  if (r < 0) return TESSERA_ERR_KERNEL;
  *info = (int)r;
  return 0;
}
