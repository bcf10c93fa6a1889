/* CPU tile kernels of the Cholesky family (cholesky.h) on host memory through LAPACKE: potrf,
 * trtri, lauum by recursive halving (lauum_blocked.c) onto herk and trmm (cpu/blas3.c), and
 * logdiag; and posv, the whole solve: the factorization on the whole matrix, its info into the
 * caller's int, then the shared solves (solve_whole.c). Each calls the routine of the dtype from
 * the operation's table, as cpu/blas3.c does; an invalid argument returns TESSERA_ERR_KERNEL
 * without touching the data.
 */
#include <lapacke.h>
#include <math.h>

#include "kernels/cholesky.h"
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

/* ---------------------------------------------------------------- posv */

static int posv_one(const tessera_exec_t *ex, const tsr_posv_args_t *a) {
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

/* A batch's systems one after the other. */
int tsr_cpu_posv(const tessera_exec_t *ex, void *args) {
  const tsr_posv_args_t *a = args;
  if (!tsr_dtype_valid(a->dtype) || ex->ndata < 3) return TESSERA_ERR_KERNEL;
  int rc = 0;
  for (int i = 0; i < (a->batch > 1 ? a->batch : 1) && !rc; i++) {
    const tessera_exec_t e = tsr_posv_member(ex, a, i);
    rc = posv_one(&e, a);
  }
  return rc;
}
