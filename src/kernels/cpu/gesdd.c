/* The SVD in one call on the CPU (eig.h: gesdd; polar_gesdd, the polar decomposition from it): A's
 * columns scanned for a NaN or an infinity (LAPACK's gesdd is not defined on them), then LAPACK's
 * ?gesdd with jobz 'S' (economy U and VT), 'A' (U m x m, VT n x n) or 'N', from the dtype's table,
 * with the BLAS threads the call gives it. The _work forms, their workspaces queried first
 * (complex: the real workspace sized as LAPACK 3.7's documents for the job). gesdd runs on a copy
 * of A and writes U and VT into arrays of its own (then copied out), and every array it reads
 * has room past its end: OpenBLAS 0.3.21's gemv kernels for some
 * x86 cores read beyond a matrix's last element, a fault where the array ends at the end of its
 * mapping. */
#include <cblas.h>
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

/* dst (rows x cols, ldd) = src (lds), column by column. */
static void copy_columns(size_t es, int rows, int cols, const void *src, size_t lds, void *dst,
                         size_t ldd) {
  for (int j = 0; j < cols; j++)
    memcpy((char *)dst + (size_t)j * ldd * es, (const char *)src + (size_t)j * lds * es,
           (size_t)rows * es);
}

/* A's columns scanned (info[1]), then ?gesdd with `threads` BLAS threads on a copy of A, and
 * with jobz 'S' or 'A' into arrays of its own, all with room past their ends (the module
 * comment), copied out into u (ldu) and vt (ldvt); s; info[0] LAPACK's. Returns 0 or a
 * status. */
static int svd(tessera_dtype_t dt, char jobz, int m, int n, const void *a, size_t lda, void *s,
               void *u, size_t ldu, void *vt, size_t ldvt, int threads, int *info) {
  const int k = m < n ? m : n;
  info[0] = 0;
  info[1] = first_bad_column(dt, m, n, a, lda);
  if (k == 0 || info[1]) return 0;
  const bool vectors = jobz != 'N';
  const int ucols = jobz == 'A' ? m : k, vrows = jobz == 'A' ? n : k;
  const size_t es = tessera_dtype_size(dt);
  char *copy = malloc(((size_t)m * (size_t)n + SLACK) * es);
  char *uu = vectors ? malloc(((size_t)m * (size_t)ucols + SLACK) * es) : NULL;
  char *vv = vectors ? malloc(((size_t)vrows * (size_t)n + SLACK) * es) : NULL;
  lapack_int r = !copy || (vectors && (!uu || !vv)) ? -1000 : 0;
  if (!r) {
    copy_columns(es, m, n, a, lda, copy, (size_t)m);
    const int prev = threads > 1 ? tsr_cpu_blas_threads(threads) : 0;
    r = gesdd_of[dt](jobz, m, n, copy, m, s, uu, vectors ? m : 1, vv, vectors ? vrows : 1);
    if (prev > 0) tsr_cpu_blas_threads(prev);
  }
  if (r >= 0 && vectors) {
    copy_columns(es, m, ucols, uu, (size_t)m, u, ldu);
    copy_columns(es, vrows, n, vv, (size_t)vrows, vt, ldvt);
  }
  free(copy), free(uu), free(vv);
  if (r == -1000) return TESSERA_ERR_NOMEM;
  if (r < 0) return TESSERA_ERR_KERNEL;
  info[0] = (int)r;
  return 0;
}

int tsr_cpu_gesdd(const tessera_exec_t *ex, void *args) {
  const tsr_gesdd_args_t *a = args;
  const int k = a->m < a->n ? a->m : a->n;
  const bool vectors = a->jobz != 'N';
  const int vt_rows = a->jobz == 'A' ? a->n : k;
  if (!tsr_dtype_valid(a->dtype) || ex->ndata < 5 || a->m < 0 || a->n < 0 ||
      (a->jobz != 'S' && a->jobz != 'A' && a->jobz != 'N') ||
      ex->ld[0] < (size_t)(a->m > 1 ? a->m : 1) ||
      (vectors && (ex->ld[2] < (size_t)(a->m > 1 ? a->m : 1) ||
                   ex->ld[3] < (size_t)(vt_rows > 1 ? vt_rows : 1))))
    return TESSERA_ERR_KERNEL;
  return svd(a->dtype, a->jobz, a->m, a->n, ex->ptr[0], ex->ld[0], ex->ptr[1], ex->ptr[2],
             ex->ld[2], ex->ptr[3], ex->ld[3], a->threads, ex->ptr[4]);
}

/* C (m x n, ldc) = op(A) B of the dtype, op 'N' or the conjugate transpose. */
typedef void (*gemm_fn)(bool conj_a, int m, int n, int k, const void *a, int lda, const void *b,
                        int ldb, void *c, int ldc);
#define GEMM_REAL(t, real)                                                                         \
  static void t##gemm(bool conj_a, int m, int n, int k, const void *a, int lda, const void *b,     \
                      int ldb, void *c, int ldc) {                                                 \
    cblas_##t##gemm(CblasColMajor, conj_a ? CblasTrans : CblasNoTrans, CblasNoTrans, m, n, k, 1,   \
                    a, lda, b, ldb, 0, c, ldc);                                                    \
  }
#define GEMM_COMPLEX(t, real)                                                                      \
  static void t##gemm(bool conj_a, int m, int n, int k, const void *a, int lda, const void *b,     \
                      int ldb, void *c, int ldc) {                                                 \
    const real one[2] = {1, 0}, zero[2] = {0, 0};                                                  \
    cblas_##t##gemm(CblasColMajor, conj_a ? CblasConjTrans : CblasNoTrans, CblasNoTrans, m, n, k,  \
                    one, a, lda, b, ldb, zero, c, ldc);                                            \
  }
GEMM_REAL(s, float)
GEMM_REAL(d, double)
GEMM_COMPLEX(c, float)
GEMM_COMPLEX(z, double)
static const gemm_fn gemm_of[TESSERA_NUM_DTYPES] = {sgemm, dgemm, cgemm, zgemm};

/* Row i of the n x n x (ld n) times the real s[i]: each element's parts, real and imaginary. */
static void scale_rows(tessera_dtype_t dt, int n, void *x, const void *s) {
  const size_t per = tsr_dtype_complex(dt) ? 2 : 1;
  for (size_t j = 0; j < (size_t)n; j++)
    for (size_t i = 0; i < (size_t)n; i++)
      for (size_t p = 0; p < per; p++) {
        const size_t at = (i + j * (size_t)n) * per + p;
        if (tsr_dtype_single(dt))
          ((float *)x)[at] *= ((const float *)s)[i];
        else
          ((double *)x)[at] *= ((const double *)s)[i];
      }
}

/* H (n x n, ldh) made exactly Hermitian: (H + Hᴴ) / 2, as the iteration's H is. */
#define HERMITIAN(T, per)                                                                          \
  for (size_t j = 0; j < (size_t)n; j++)                                                           \
    for (size_t i = j; i < (size_t)n; i++) {                                                       \
      T *lo = (T *)h + (i + j * ldh) * per, *up = (T *)h + (j + i * ldh) * per;                    \
      const T re = (lo[0] + up[0]) / 2;                                                            \
      lo[0] = up[0] = re;                                                                          \
      if (per == 2) {                                                                              \
        const T im = i == j ? 0 : (lo[1] - up[1]) / 2;                                             \
        lo[1] = im, up[1] = -im;                                                                   \
      }                                                                                            \
    }
static void hermitian(tessera_dtype_t dt, int n, void *h, size_t ldh) {
  const size_t per = tsr_dtype_complex(dt) ? 2 : 1;
  if (tsr_dtype_single(dt)) {
    HERMITIAN(float, per)
  } else {
    HERMITIAN(double, per)
  }
}

int tsr_cpu_polar_gesdd(const tessera_exec_t *ex, void *args) {
  const tsr_polar_gesdd_args_t *a = args;
  const int m = a->m, n = a->n;
  if (!tsr_dtype_valid(a->dtype) || ex->ndata < 3 || n < 0 || m < n ||
      ex->ld[0] < (size_t)(m > 1 ? m : 1) || (a->want_h && ex->ld[1] < (size_t)(n > 1 ? n : 1)))
    return TESSERA_ERR_KERNEL;
  int *info = ex->ptr[2];
  const size_t es = tessera_dtype_size(a->dtype), rs = tsr_dtype_real_size(a->dtype);
  char *w = malloc(((size_t)m * (size_t)n + SLACK) * es),
       *vt = malloc(((size_t)n * n + SLACK) * es);
  char *s = malloc(((size_t)n + SLACK) * rs);
  int rc = w && vt && s ? 0 : TESSERA_ERR_NOMEM;
  if (!rc)
    rc = svd(a->dtype, 'S', m, n, ex->ptr[0], ex->ld[0], s, w, (size_t)m, vt, (size_t)n, a->threads,
             info);
  if (!rc && n > 0 && !info[0] && !info[1]) {
    const int prev = a->threads > 1 ? tsr_cpu_blas_threads(a->threads) : 0;
    gemm_of[a->dtype](false, m, n, n, w, m, vt, n, ex->ptr[0], (int)ex->ld[0]); /* W Vᴴ */
    if (a->want_h) { /* V Σ Vᴴ = (Vᴴ)ᴴ (Σ Vᴴ), Σ Vᴴ formed in W's place */
      memcpy(w, vt, (size_t)n * n * es);
      scale_rows(a->dtype, n, w, s);
      gemm_of[a->dtype](true, n, n, n, vt, n, w, n, ex->ptr[1], (int)ex->ld[1]);
      hermitian(a->dtype, n, ex->ptr[1], ex->ld[1]);
    }
    if (prev > 0) tsr_cpu_blas_threads(prev);
  }
  free(w), free(vt), free(s);
  return rc;
}
