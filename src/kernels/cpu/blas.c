/* CPU tile kernels on host memory through OpenBLAS (CBLAS) and LAPACKE: potrf, trsm, syrk /
 * herk, gemm, lacpy, trtri and trmm (lauum: cpu/lauum.c).
 *
 * Each kernel checks its arguments and buffers, converts its flags and scalars once, and picks
 * the routine of the dtype in a single switch; trsm and trmm, whose routines share a signature,
 * share that switch. Buffers are column-major with the leading
 * dimension of tessera_exec_t.ld[]. An invalid argument (unknown dtype or flag, negative
 * dimension, leading dimension too small or above the BLAS integer range, missing buffer)
 * returns TESSERA_ERR_KERNEL without touching the data.
 */
#include <cblas.h>
#include <lapacke.h>

#include <math.h>
#include <string.h>

#include "kernels/kernel_args.h"

/* CBLAS flags, indexed by the position of the tessera letter in the strings used below. */
static const enum CBLAS_TRANSPOSE op_of[] = {CblasNoTrans, CblasTrans, CblasConjTrans}; /* NTC */
static const enum CBLAS_UPLO uplo_of[] = {CblasUpper, CblasLower};                      /* UL */
static const enum CBLAS_SIDE side_of[] = {CblasLeft, CblasRight};                       /* LR */
static const enum CBLAS_DIAG diag_of[] = {CblasNonUnit, CblasUnit};                     /* NU */

/* A scalar in both forms the BLAS routines take: s[0] / d[0] by value for real dtypes, and
 * s / d as a pointer to (re, im) for complex dtypes. */
typedef struct {
  float s[2];
  double d[2];
} blas_scalar_t;

/* One buffer of the task: its pointer and the leading dimension passed to BLAS. */
typedef struct {
  void *p;
  blasint ld;
} operand_t;

static blas_scalar_t blas_scalar(tsr_scalar_t v) {
  blas_scalar_t b = {{(float)v.re, (float)v.im}, {v.re, v.im}};
  return b;
}

/* Fills `o` with buffer `i` of `ex` holding a rows x cols block. Returns 0, or -1 when the
 * block does not fit (see tsr_operand_ld). */
static int operand(const tessera_exec_t *ex, int i, int rows, int cols, operand_t *o) {
  int ld = tsr_operand_ld(ex, i, rows, cols);
  if (ld < 0) return -1;
  o->p = ex->ptr[i];
  o->ld = ld;
  return 0;
}

/* LAPACKE routines of the form f(layout, uplo, n, a, lda), one per dtype. */
typedef struct {
  lapack_int (*s)(int, char, lapack_int, float *, lapack_int);
  lapack_int (*d)(int, char, lapack_int, double *, lapack_int);
  lapack_int (*c)(int, char, lapack_int, lapack_complex_float *, lapack_int);
  lapack_int (*z)(int, char, lapack_int, lapack_complex_double *, lapack_int);
} uplo_routine_t;

static const uplo_routine_t potrf_routine = {LAPACKE_spotrf_work, LAPACKE_dpotrf_work,
                                             LAPACKE_cpotrf_work, LAPACKE_zpotrf_work};

/* Runs `r` on the n x n `A` of a valid dtype; returns LAPACK's info. */
static lapack_int run_uplo(const uplo_routine_t *r, tessera_dtype_t dt, char uplo, int n,
                           const operand_t *A) {
  switch (dt) {
  case TESSERA_F32:
    return r->s(LAPACK_COL_MAJOR, uplo, n, A->p, A->ld);
  case TESSERA_F64:
    return r->d(LAPACK_COL_MAJOR, uplo, n, A->p, A->ld);
  case TESSERA_C64:
    return r->c(LAPACK_COL_MAJOR, uplo, n, A->p, A->ld);
  case TESSERA_C128:
    return r->z(LAPACK_COL_MAJOR, uplo, n, A->p, A->ld);
  }
  return -1;
}

int tsr_cpu_potrf(const tessera_exec_t *ex, void *args) {
  const tsr_potrf_args_t *a = args;
  int u = tsr_letter(a->uplo, "UL");
  operand_t A;
  if (!tsr_dtype_valid(a->dtype) || u < 0 || operand(ex, 0, a->n, a->n, &A))
    return TESSERA_ERR_KERNEL;
  if (a->n == 0) return 0;
  lapack_int info = run_uplo(&potrf_routine, a->dtype, "UL"[u], a -> n, &A);
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

/* trsm (solve != 0) and trmm (solve == 0): the same arguments and operands. */
static int triangular(const tessera_exec_t *ex, const tsr_trsm_args_t *a, int solve) {
  int s = tsr_letter(a->side, "LR"), u = tsr_letter(a->uplo, "UL"), d = tsr_letter(a->diag, "NU");
  int t = tsr_op_index(a->trans, a->dtype);
  int na = s == 1 ? a->n : a->m;
  operand_t A, B;
  if (!tsr_dtype_valid(a->dtype) || s < 0 || u < 0 || t < 0 || d < 0 ||
      operand(ex, 0, na, na, &A) || operand(ex, 1, a->m, a->n, &B))
    return TESSERA_ERR_KERNEL;
  const enum CBLAS_SIDE side = side_of[s];
  const enum CBLAS_UPLO uplo = uplo_of[u];
  const enum CBLAS_TRANSPOSE op = op_of[t];
  const enum CBLAS_DIAG diag = diag_of[d];
  const blasint m = a->m, n = a->n;
  blas_scalar_t al = blas_scalar(a->alpha);
  switch (a->dtype) {
  case TESSERA_F32:
    (solve ? cblas_strsm : cblas_strmm)(CblasColMajor, side, uplo, op, diag, m, n, al.s[0], A.p,
                                        A.ld, B.p, B.ld);
    break;
  case TESSERA_F64:
    (solve ? cblas_dtrsm : cblas_dtrmm)(CblasColMajor, side, uplo, op, diag, m, n, al.d[0], A.p,
                                        A.ld, B.p, B.ld);
    break;
  case TESSERA_C64:
    (solve ? cblas_ctrsm : cblas_ctrmm)(CblasColMajor, side, uplo, op, diag, m, n, al.s, A.p, A.ld,
                                        B.p, B.ld);
    break;
  case TESSERA_C128:
    (solve ? cblas_ztrsm : cblas_ztrmm)(CblasColMajor, side, uplo, op, diag, m, n, al.d, A.p, A.ld,
                                        B.p, B.ld);
    break;
  }
  return 0;
}

int tsr_cpu_trsm(const tessera_exec_t *ex, void *args) {
  return triangular(ex, args, 1);
}

int tsr_cpu_syrk(const tessera_exec_t *ex, void *args) {
  const tsr_syrk_args_t *a = args;
  int u = tsr_letter(a->uplo, "UL"), t = tsr_letter(a->trans, "NTC");
  /* The trans letter gives the shape of A; the conjugation comes from `herk`. */
  int herk = a->herk && tsr_dtype_complex(a->dtype);
  operand_t A, C;
  if (!tsr_dtype_valid(a->dtype) || u < 0 || t < 0 ||
      operand(ex, 0, t ? a->k : a->n, t ? a->n : a->k, &A) || operand(ex, 1, a->n, a->n, &C))
    return TESSERA_ERR_KERNEL;
  const enum CBLAS_UPLO uplo = uplo_of[u];
  const enum CBLAS_TRANSPOSE op = t == 0 ? CblasNoTrans : herk ? CblasConjTrans : CblasTrans;
  const blasint n = a->n, k = a->k;
  blas_scalar_t al = blas_scalar(a->alpha), be = blas_scalar(a->beta);
  switch (a->dtype) {
  case TESSERA_F32:
    cblas_ssyrk(CblasColMajor, uplo, op, n, k, al.s[0], A.p, A.ld, be.s[0], C.p, C.ld);
    break;
  case TESSERA_F64:
    cblas_dsyrk(CblasColMajor, uplo, op, n, k, al.d[0], A.p, A.ld, be.d[0], C.p, C.ld);
    break;
  case TESSERA_C64:
    if (herk)
      cblas_cherk(CblasColMajor, uplo, op, n, k, al.s[0], A.p, A.ld, be.s[0], C.p, C.ld);
    else
      cblas_csyrk(CblasColMajor, uplo, op, n, k, al.s, A.p, A.ld, be.s, C.p, C.ld);
    break;
  case TESSERA_C128:
    if (herk)
      cblas_zherk(CblasColMajor, uplo, op, n, k, al.d[0], A.p, A.ld, be.d[0], C.p, C.ld);
    else
      cblas_zsyrk(CblasColMajor, uplo, op, n, k, al.d, A.p, A.ld, be.d, C.p, C.ld);
    break;
  }
  return 0;
}

int tsr_cpu_gemm(const tessera_exec_t *ex, void *args) {
  const tsr_gemm_args_t *a = args;
  int ta = tsr_op_index(a->transa, a->dtype), tb = tsr_op_index(a->transb, a->dtype);
  operand_t A, B, C;
  if (!tsr_dtype_valid(a->dtype) || ta < 0 || tb < 0 ||
      operand(ex, 0, ta ? a->k : a->m, ta ? a->m : a->k, &A) ||
      operand(ex, 1, tb ? a->n : a->k, tb ? a->k : a->n, &B) || operand(ex, 2, a->m, a->n, &C))
    return TESSERA_ERR_KERNEL;
  const enum CBLAS_TRANSPOSE opa = op_of[ta], opb = op_of[tb];
  const blasint m = a->m, n = a->n, k = a->k;
  blas_scalar_t al = blas_scalar(a->alpha), be = blas_scalar(a->beta);
  switch (a->dtype) {
  case TESSERA_F32:
    cblas_sgemm(CblasColMajor, opa, opb, m, n, k, al.s[0], A.p, A.ld, B.p, B.ld, be.s[0], C.p,
                C.ld);
    break;
  case TESSERA_F64:
    cblas_dgemm(CblasColMajor, opa, opb, m, n, k, al.d[0], A.p, A.ld, B.p, B.ld, be.d[0], C.p,
                C.ld);
    break;
  case TESSERA_C64:
    cblas_cgemm(CblasColMajor, opa, opb, m, n, k, al.s, A.p, A.ld, B.p, B.ld, be.s, C.p, C.ld);
    break;
  case TESSERA_C128:
    cblas_zgemm(CblasColMajor, opa, opb, m, n, k, al.d, A.p, A.ld, B.p, B.ld, be.d, C.p, C.ld);
    break;
  }
  return 0;
}

int tsr_cpu_lacpy(const tessera_exec_t *ex, void *args) {
  const tsr_lacpy_args_t *a = args;
  operand_t S, D;
  if (!tsr_dtype_valid(a->dtype) || operand(ex, 0, a->m, a->n, &S) ||
      operand(ex, 1, a->m, a->n, &D))
    return TESSERA_ERR_KERNEL;
  if (a->m == 0 || a->n == 0 || (S.p == D.p && S.ld == D.ld)) return 0;
  size_t elsize = tessera_dtype_size(a->dtype);
  size_t col = (size_t)a->m * elsize;
  size_t lds = (size_t)S.ld * elsize, ldd = (size_t)D.ld * elsize;
  if (lds == col && ldd == col) {
    memcpy(D.p, S.p, col * (size_t)a->n);
    return 0;
  }
  for (int j = 0; j < a->n; j++)
    memcpy((char *)D.p + (size_t)j * ldd, (const char *)S.p + (size_t)j * lds, col);
  return 0;
}

int tsr_cpu_trtri(const tessera_exec_t *ex, void *args) {
  const tsr_trtri_args_t *a = args;
  int u = tsr_letter(a->uplo, "UL"), d = tsr_letter(a->diag, "NU");
  operand_t A;
  if (!tsr_dtype_valid(a->dtype) || u < 0 || d < 0 || operand(ex, 0, a->n, a->n, &A))
    return TESSERA_ERR_KERNEL;
  if (a->n == 0) return 0;
  const char uplo = "UL"[u], diag = "NU"[d];
  lapack_int info = -1;
  switch (a->dtype) {
  case TESSERA_F32:
    info = LAPACKE_strtri_work(LAPACK_COL_MAJOR, uplo, diag, a->n, A.p, A.ld);
    break;
  case TESSERA_F64:
    info = LAPACKE_dtrtri_work(LAPACK_COL_MAJOR, uplo, diag, a->n, A.p, A.ld);
    break;
  case TESSERA_C64:
    info = LAPACKE_ctrtri_work(LAPACK_COL_MAJOR, uplo, diag, a->n, A.p, A.ld);
    break;
  case TESSERA_C128:
    info = LAPACKE_ztrtri_work(LAPACK_COL_MAJOR, uplo, diag, a->n, A.p, A.ld);
    break;
  }
  if (info < 0) return TESSERA_ERR_KERNEL;
  return info > 0 ? tsr_pivot_info(a->offset, info - 1) : 0;
}

int tsr_cpu_trmm(const tessera_exec_t *ex, void *args) {
  const tsr_trmm_args_t *m = args;
  const tsr_trsm_args_t a = {m->dtype, m->side, m->uplo, m->trans, m->diag, m->m, m->n, m->alpha};
  return triangular(ex, &a, 0);
}
