/* CPU tile kernels on host memory through LAPACKE: potrf, trtri, getrf and laswp, lauum by
 * recursive halving (lauum_blocked.c) onto herk and trmm (cpu/blas.c), lu_step (lu_step.c) onto
 * laswp, trsm, trmm and gemm, and logdiag. Each calls the routine of
 * the dtype from the operation's table, as cpu/blas.c does; an invalid argument returns
 * TESSERA_ERR_KERNEL without touching the data.
 */
#include <lapacke.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu_blas.h"

/* ---------------------------------------------------------------- potrf */

typedef lapack_int (*potrf_fn)(char, lapack_int, void *, lapack_int);
#define POTRF(t)                                                                                   \
  static lapack_int t##potrf(char uplo, lapack_int n, void *A, lapack_int lda) {                   \
    return LAPACKE_##t##potrf_work(LAPACK_COL_MAJOR, uplo, n, A, lda);                             \
  }
POTRF(s)
POTRF(d)
POTRF(c)
POTRF(z)
static const potrf_fn potrf_of[TESSERA_NUM_DTYPES] = {spotrf, dpotrf, cpotrf, zpotrf};

int tsr_cpu_potrf(const tessera_exec_t *ex, void *args) {
  const tsr_potrf_args_t *a = args;
  int u = tsr_letter(a->uplo, "UL");
  tsr_cpu_operand_t A;
  if (!tsr_dtype_valid(a->dtype) || u < 0 || tsr_cpu_operand(ex, 0, a->n, a->n, &A))
    return TESSERA_ERR_KERNEL;
  if (a->n == 0) return 0;
  lapack_int info = potrf_of[a->dtype]("UL"[u], a -> n, A.p, A.ld);
  if (info < 0) return TESSERA_ERR_KERNEL;
  /* A NaN pivot passes the positivity test of OpenBLAS: report the first one among the
   * pivots computed before any failure LAPACK found. */
  size_t elsize = tessera_dtype_size(a->dtype);
  int last = info > 0 ? (int)info - 1 : a->n;
  for (int j = 0; j < last; j++) {
    const char *ajj = (const char *)A.p + ((size_t)j * (size_t)A.ld + (size_t)j) * elsize;
    if (isnan(tsr_scalar_load(a->dtype, ajj, 0.0).re)) return tsr_pivot_info(a->offset, j);
  }
  return info > 0 ? tsr_pivot_info(a->offset, info - 1) : 0;
}

/* ---------------------------------------------------------------- trtri */

typedef lapack_int (*trtri_fn)(char, char, lapack_int, void *, lapack_int);
#define TRTRI(t)                                                                                   \
  static lapack_int t##trtri(char uplo, char diag, lapack_int n, void *A, lapack_int lda) {        \
    return LAPACKE_##t##trtri_work(LAPACK_COL_MAJOR, uplo, diag, n, A, lda);                       \
  }
TRTRI(s)
TRTRI(d)
TRTRI(c)
TRTRI(z)
static const trtri_fn trtri_of[TESSERA_NUM_DTYPES] = {strtri, dtrtri, ctrtri, ztrtri};

int tsr_cpu_trtri(const tessera_exec_t *ex, void *args) {
  const tsr_trtri_args_t *a = args;
  int u = tsr_letter(a->uplo, "UL"), d = tsr_letter(a->diag, "NU");
  tsr_cpu_operand_t A;
  if (!tsr_dtype_valid(a->dtype) || u < 0 || d < 0 || tsr_cpu_operand(ex, 0, a->n, a->n, &A))
    return TESSERA_ERR_KERNEL;
  if (a->n == 0) return 0;
  lapack_int info = trtri_of[a->dtype]("UL"[u], "NU"[d], a -> n, A.p, A.ld);
  if (info < 0) return TESSERA_ERR_KERNEL;
  return info > 0 ? tsr_pivot_info(a->offset, info - 1) : 0;
}

/* ---------------------------------------------------------------- lauum */

/* The leaf of the recursion: order 1, where the product is |a|². OpenBLAS 0.3.21's own clauum /
 * zlauum read one element past the end of the tile (its last zero-length dot product), which
 * faults when the tile ends an allocation; halving down to order 1 touches nothing outside the
 * triangle. */
static int lauum_leaf(const tessera_exec_t *ex, void *args) {
  const tsr_lauum_args_t *a = args;
  if (a->n != 1) return a->n == 0 ? 0 : TESSERA_ERR_KERNEL;
  tsr_scalar_t v = tsr_scalar_load(a->dtype, ex->ptr[0], 0);
  tsr_scalar_store(a->dtype, ex->ptr[0], (tsr_scalar_t){v.re * v.re + v.im * v.im, 0});
  return 0;
}

int tsr_cpu_lauum(const tessera_exec_t *ex, void *args) {
  const tsr_lauum_args_t *a = args;
  int u = tsr_letter(a->uplo, "UL");
  if (!tsr_dtype_valid(a->dtype) || u < 0 || tsr_operand_ld(ex, 0, a->n, a->n) < 0)
    return TESSERA_ERR_KERNEL;
  if (a->n == 0) return 0;
  return tsr_lauum_blocked(ex, a, lauum_leaf, tsr_cpu_syrk, tsr_cpu_trmm, 1);
}

/* ---------------------------------------------------------------- logdiag */

int tsr_cpu_logdiag(const tessera_exec_t *ex, void *args) {
  const tsr_logdiag_args_t *a = args;
  if (!tsr_dtype_valid(a->dtype) || !a->out || tsr_operand_ld(ex, 0, a->n, a->n) < 0)
    return TESSERA_ERR_KERNEL;
  const size_t step = (ex->ld[0] + 1) * tessera_dtype_size(a->dtype);
  const char *p = ex->ptr[0];
  double s = 0;
  for (int i = 0; i < a->n; i++, p += step) s += log(fabs(tsr_scalar_load(a->dtype, p, 0).re));
  *a->out = s;
  return 0;
}

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
 * lower k x k block of the factors at p. */
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
  return trtri_of[dt]('L', 'U', k, V.p, V.ld) < 0 ? TESSERA_ERR_KERNEL : 0;
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

/* ---------------------------------------------------------------- geqrt, qr_step */

typedef lapack_int (*geqrt_fn)(lapack_int, lapack_int, lapack_int, void *, lapack_int, void *,
                               lapack_int, void *);
#define GEQRT(t)                                                                                   \
  static lapack_int t##geqrt(lapack_int m, lapack_int n, lapack_int nb, void *A, lapack_int lda,   \
                             void *T, lapack_int ldt, void *work) {                                \
    return LAPACKE_##t##geqrt_work(LAPACK_COL_MAJOR, m, n, nb, A, lda, T, ldt, work);              \
  }
GEQRT(s)
GEQRT(d)
GEQRT(c)
GEQRT(z)
static const geqrt_fn geqrt_of[TESSERA_NUM_DTYPES] = {sgeqrt, dgeqrt, cgeqrt, zgeqrt};

/* LAPACK's geqrt with one block of the whole width: T is k x k. The _work form: LAPACKE's
 * other form refuses a matrix holding NaN, which LAPACK itself carries through. */
int tsr_cpu_geqrt(const tessera_exec_t *ex, void *args) {
  const tsr_geqrt_args_t *a = args;
  tsr_cpu_operand_t A, T;
  const int rows = a->m - a->r0, k = rows < a->n ? rows : a->n;
  if (!tsr_dtype_valid(a->dtype) || a->r0 < 0 || rows < 0 || ex->ndata < 2 ||
      tsr_cpu_operand(ex, 0, a->m, a->n, &A) || tsr_cpu_operand(ex, 1, k, k, &T))
    return TESSERA_ERR_KERNEL;
  if (k == 0) return 0;
  const size_t es = tessera_dtype_size(a->dtype);
  void *work = malloc((size_t)k * (size_t)a->n * es);
  if (!work) return TESSERA_ERR_NOMEM;
  char *p = (char *)A.p + (size_t)a->r0 * es;
  const lapack_int info = geqrt_of[a->dtype](rows, a->n, k, p, A.ld, T.p, T.ld, work);
  free(work);
  return info < 0 ? TESSERA_ERR_KERNEL : 0;
}

typedef lapack_int (*larft_fn)(lapack_int, lapack_int, const void *, lapack_int, const void *,
                               void *, lapack_int);
#define LARFT(t)                                                                                   \
  static lapack_int t##larft(lapack_int n, lapack_int k, const void *V, lapack_int ldv,            \
                             const void *tau, void *T, lapack_int ldt) {                           \
    return LAPACKE_##t##larft_work(LAPACK_COL_MAJOR, 'F', 'C', n, k, V, ldv, tau, T, ldt);         \
  }
LARFT(s)
LARFT(d)
LARFT(c)
LARFT(z)
static const larft_fn larft_of[TESSERA_NUM_DTYPES] = {slarft, dlarft, clarft, zlarft};

int tsr_cpu_larft(const tessera_exec_t *ex, void *args) {
  const tsr_larft_args_t *a = args;
  tsr_cpu_operand_t V, tau, T;
  const int rows = a->m - a->r0;
  if (!tsr_dtype_valid(a->dtype) || a->r0 < 0 || a->kb < 0 || rows < a->kb || ex->ndata < 3 ||
      tsr_cpu_operand(ex, 0, a->m, a->kb, &V) || tsr_cpu_operand(ex, 1, a->kb, 1, &tau) ||
      tsr_cpu_operand(ex, 2, a->kb, a->kb, &T))
    return TESSERA_ERR_KERNEL;
  if (a->kb == 0) return 0;
  const char *v = (const char *)V.p + (size_t)a->r0 * tessera_dtype_size(a->dtype);
  return larft_of[a->dtype](rows, a->kb, v, V.ld, tau.p, T.p, T.ld) < 0 ? TESSERA_ERR_KERNEL : 0;
}

int tsr_cpu_qr_step(const tessera_exec_t *ex, void *args) {
  return tsr_qr_step(ex, args, tsr_cpu_lacpy, tsr_cpu_trmm, tsr_cpu_gemm, tsr_cpu_geadd);
}
