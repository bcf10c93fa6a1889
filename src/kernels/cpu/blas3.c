/* CPU tile kernels of the BLAS-3 family (blas3.h) on host memory through OpenBLAS (CBLAS): gemm,
 * hemm, syrk / herk, trsm, trmm, hemm_pair (hemm_pair.c onto gemm) and geadd.
 *
 * Each kernel checks its arguments and buffers, converts its flags and scalars once, and calls
 * the routine of the dtype from the operation's table (one entry per dtype, indexed by it). The
 * table entries share one signature: scalars come as tsr_blas_scalar_t, from which each entry
 * passes the form its CBLAS routine takes (by value for real dtypes, by pointer for complex).
 * Buffers are column-major with the leading dimension of tessera_exec_t.ld[]. An invalid argument
 * (unknown dtype or flag, negative dimension, leading dimension too small or above the BLAS
 * integer range, missing buffer) returns TESSERA_ERR_KERNEL without touching the data.
 */
#include <string.h>

#include "kernels/blas3.h"
#include "kernels/cpu/cpu_blas.h"

typedef tsr_blas_scalar_t scal_t;

/* The scalar argument of each dtype's routines: the real part by value (s, d), the pair by
 * pointer (c, z); herk's real scalars by value (HERK_). */
#define SCAL_s(x) ((x)->s[0])
#define SCAL_d(x) ((x)->d[0])
#define SCAL_c(x) ((x)->s)
#define SCAL_z(x) ((x)->d)
#define HERK_c(x) ((x)->s[0])
#define HERK_z(x) ((x)->d[0])

/* ---------------------------------------------------------------- gemm */

typedef void (*gemm_fn)(enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint, blasint, blasint,
                        const scal_t *, const void *, blasint, const void *, blasint,
                        const scal_t *, void *, blasint);
#define GEMM(t)                                                                                    \
  static void t##gemm(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, blasint m, blasint n,      \
                      blasint k, const scal_t *al, const void *A, blasint lda, const void *B,      \
                      blasint ldb, const scal_t *be, void *C, blasint ldc) {                       \
    cblas_##t##gemm(CblasColMajor, ta, tb, m, n, k, SCAL_##t(al), A, lda, B, ldb, SCAL_##t(be), C, \
                    ldc);                                                                          \
  }
GEMM(s)
GEMM(d)
GEMM(c)
GEMM(z)
static const gemm_fn gemm_of[TESSERA_NUM_DTYPES] = {sgemm, dgemm, cgemm, zgemm};

int tsr_cpu_gemm(const tessera_exec_t *ex, void *args) {
  const tsr_gemm_args_t *a = args;
  int ta = tsr_op_index(a->transa, a->dtype), tb = tsr_op_index(a->transb, a->dtype);
  tsr_cpu_operand_t A, B, C;
  if (!tsr_dtype_valid(a->dtype) || ta < 0 || tb < 0 ||
      tsr_cpu_operand(ex, 0, ta ? a->k : a->m, ta ? a->m : a->k, &A) ||
      tsr_cpu_operand(ex, 1, tb ? a->n : a->k, tb ? a->k : a->n, &B) ||
      tsr_cpu_operand(ex, 2, a->m, a->n, &C))
    return TESSERA_ERR_KERNEL;
  const scal_t al = tsr_blas_scalar(a->alpha), be = tsr_blas_scalar(a->beta);
  gemm_of[a->dtype](tsr_cblas_op[ta], tsr_cblas_op[tb], a->m, a->n, a->k, &al, A.p, A.ld, B.p, B.ld,
                    &be, C.p, C.ld);
  return 0;
}

/* ---------------------------------------------------------------- hemm (symm) */

typedef void (*hemm_fn)(enum CBLAS_UPLO, blasint, blasint, const scal_t *, const void *, blasint,
                        const void *, blasint, const scal_t *, void *, blasint);
#define HEMM(name, routine, S)                                                                     \
  static void name(enum CBLAS_UPLO uplo, blasint m, blasint n, const scal_t *al, const void *A,    \
                   blasint lda, const void *B, blasint ldb, const scal_t *be, void *C,             \
                   blasint ldc) {                                                                  \
    routine(CblasColMajor, CblasLeft, uplo, m, n, S(al), A, lda, B, ldb, S(be), C, ldc);           \
  }
HEMM(ssymm, cblas_ssymm, SCAL_s)
HEMM(dsymm, cblas_dsymm, SCAL_d)
HEMM(chemm, cblas_chemm, SCAL_c)
HEMM(zhemm, cblas_zhemm, SCAL_z)
/* Indexed by the dtype: a Hermitian product of a real dtype is its symmetric one. */
static const hemm_fn hemm_of[TESSERA_NUM_DTYPES] = {ssymm, dsymm, chemm, zhemm};

int tsr_cpu_hemm(const tessera_exec_t *ex, void *args) {
  const tsr_hemm_args_t *a = args;
  const int u = tsr_letter(a->uplo, "UL");
  tsr_cpu_operand_t A, B, C;
  if (!tsr_dtype_valid(a->dtype) || u < 0 || tsr_cpu_operand(ex, 0, a->m, a->m, &A) ||
      tsr_cpu_operand(ex, 1, a->m, a->n, &B) || tsr_cpu_operand(ex, 2, a->m, a->n, &C))
    return TESSERA_ERR_KERNEL;
  if (a->m == 0 || a->n == 0) return 0;
  const scal_t al = tsr_blas_scalar(a->alpha), be = tsr_blas_scalar(a->beta);
  hemm_of[a->dtype](u ? CblasLower : CblasUpper, a->m, a->n, &al, A.p, A.ld, B.p, B.ld, &be, C.p,
                    C.ld);
  return 0;
}

/* ---------------------------------------------------------------- syrk / herk */

typedef void (*rank_k_fn)(enum CBLAS_UPLO, enum CBLAS_TRANSPOSE, blasint, blasint, const scal_t *,
                          const void *, blasint, const scal_t *, void *, blasint);
#define RANK_K(name, routine, S)                                                                   \
  static void name(enum CBLAS_UPLO uplo, enum CBLAS_TRANSPOSE op, blasint n, blasint k,            \
                   const scal_t *al, const void *A, blasint lda, const scal_t *be, void *C,        \
                   blasint ldc) {                                                                  \
    routine(CblasColMajor, uplo, op, n, k, S(al), A, lda, S(be), C, ldc);                          \
  }
RANK_K(ssyrk, cblas_ssyrk, SCAL_s)
RANK_K(dsyrk, cblas_dsyrk, SCAL_d)
RANK_K(csyrk, cblas_csyrk, SCAL_c)
RANK_K(zsyrk, cblas_zsyrk, SCAL_z)
RANK_K(cherk, cblas_cherk, HERK_c)
RANK_K(zherk, cblas_zherk, HERK_z)
/* Indexed by the dtype; a Hermitian update of a real dtype is its symmetric one. */
static const rank_k_fn syrk_of[TESSERA_NUM_DTYPES] = {ssyrk, dsyrk, csyrk, zsyrk};
static const rank_k_fn herk_of[TESSERA_NUM_DTYPES] = {ssyrk, dsyrk, cherk, zherk};

int tsr_cpu_syrk(const tessera_exec_t *ex, void *args) {
  const tsr_syrk_args_t *a = args;
  int u = tsr_letter(a->uplo, "UL"), t = tsr_letter(a->trans, "NTC");
  tsr_cpu_operand_t A, C;
  if (!tsr_dtype_valid(a->dtype) || u < 0 || t < 0 ||
      tsr_cpu_operand(ex, 0, t ? a->k : a->n, t ? a->n : a->k, &A) ||
      tsr_cpu_operand(ex, 1, a->n, a->n, &C))
    return TESSERA_ERR_KERNEL;
  /* The trans letter gives the shape of A; the conjugation comes from `herk`. */
  const bool herk = a->herk && tsr_dtype_complex(a->dtype);
  const enum CBLAS_TRANSPOSE op = t == 0 ? CblasNoTrans : herk ? CblasConjTrans : CblasTrans;
  const scal_t al = tsr_blas_scalar(a->alpha), be = tsr_blas_scalar(a->beta);
  (a->herk ? herk_of : syrk_of)[a->dtype](tsr_cblas_uplo[u], op, a->n, a->k, &al, A.p, A.ld, &be,
                                          C.p, C.ld);
  return 0;
}

/* ---------------------------------------------------------------- trsm and trmm */

typedef void (*triangular_fn)(enum CBLAS_SIDE, enum CBLAS_UPLO, enum CBLAS_TRANSPOSE,
                              enum CBLAS_DIAG, blasint, blasint, const scal_t *, const void *,
                              blasint, void *, blasint);
#define TRIANGULAR(t, op)                                                                          \
  static void t##op(enum CBLAS_SIDE side, enum CBLAS_UPLO uplo, enum CBLAS_TRANSPOSE trans,        \
                    enum CBLAS_DIAG diag, blasint m, blasint n, const scal_t *al, const void *A,   \
                    blasint lda, void *B, blasint ldb) {                                           \
    cblas_##t##op(CblasColMajor, side, uplo, trans, diag, m, n, SCAL_##t(al), A, lda, B, ldb);     \
  }
TRIANGULAR(s, trsm)
TRIANGULAR(d, trsm)
TRIANGULAR(c, trsm)
TRIANGULAR(z, trsm)
TRIANGULAR(s, trmm)
TRIANGULAR(d, trmm)
TRIANGULAR(c, trmm)
TRIANGULAR(z, trmm)
static const triangular_fn trsm_of[TESSERA_NUM_DTYPES] = {strsm, dtrsm, ctrsm, ztrsm};
static const triangular_fn trmm_of[TESSERA_NUM_DTYPES] = {strmm, dtrmm, ctrmm, ztrmm};

/* trsm and trmm: the same arguments and operands; `table` is the operation's. */
static int triangular(const tessera_exec_t *ex, const tsr_trsm_args_t *a,
                      const triangular_fn *table) {
  int s = tsr_letter(a->side, "LR"), u = tsr_letter(a->uplo, "UL"), d = tsr_letter(a->diag, "NU");
  int t = tsr_op_index(a->trans, a->dtype);
  int na = s == 1 ? a->n : a->m;
  tsr_cpu_operand_t A, B;
  if (!tsr_dtype_valid(a->dtype) || s < 0 || u < 0 || t < 0 || d < 0 ||
      tsr_cpu_operand(ex, 0, na, na, &A) || tsr_cpu_operand(ex, 1, a->m, a->n, &B))
    return TESSERA_ERR_KERNEL;
  const scal_t al = tsr_blas_scalar(a->alpha);
  table[a->dtype](tsr_cblas_side[s], tsr_cblas_uplo[u], tsr_cblas_op[t], tsr_cblas_diag[d], a->m,
                  a->n, &al, A.p, A.ld, B.p, B.ld);
  return 0;
}

int tsr_cpu_trsm(const tessera_exec_t *ex, void *args) {
  return triangular(ex, args, trsm_of);
}

int tsr_cpu_trmm(const tessera_exec_t *ex, void *args) {
  return triangular(ex, args, trmm_of);
}

/* Solves up to order 48 in OpenBLAS's trsm, larger ones by recursive halving onto gemm. */
int tsr_cpu_trsm_blocked(const tessera_exec_t *ex, void *args) {
  return tsr_trsm_blocked(ex, args, tsr_cpu_trsm, tsr_cpu_gemm, 48);
}

/* Blocks of 64 columns: S's block (a tile's rows x 64) stays in cache for its second product. */
int tsr_cpu_hemm_pair(const tessera_exec_t *ex, void *args) {
  return tsr_hemm_pair(ex, args, tsr_cpu_gemm, 64);
}

/* ---------------------------------------------------------------- geadd */

/* C = alpha A + beta C, column by column: scal then axpy (standard CBLAS, no axpby). */
typedef void (*geadd_fn)(blasint, const scal_t *, const void *, const scal_t *, void *);
#define GEADD(t)                                                                                   \
  static void t##geadd(blasint m, const scal_t *al, const void *A, const scal_t *be, void *C) {    \
    cblas_##t##scal(m, SCAL_##t(be), C, 1);                                                        \
    cblas_##t##axpy(m, SCAL_##t(al), A, 1, C, 1);                                                  \
  }
GEADD(s)
GEADD(d)
GEADD(c)
GEADD(z)
static const geadd_fn geadd_of[TESSERA_NUM_DTYPES] = {sgeadd, dgeadd, cgeadd, zgeadd};

int tsr_cpu_geadd(const tessera_exec_t *ex, void *args) {
  const tsr_geadd_args_t *a = args;
  tsr_cpu_operand_t A, C;
  if (!tsr_dtype_valid(a->dtype) || tsr_cpu_operand(ex, 0, a->m, a->n, &A) ||
      tsr_cpu_operand(ex, 1, a->m, a->n, &C))
    return TESSERA_ERR_KERNEL;
  const scal_t al = tsr_blas_scalar(a->alpha), be = tsr_blas_scalar(a->beta);
  const size_t es = tessera_dtype_size(a->dtype);
  for (int j = 0; j < a->n; j++)
    geadd_of[a->dtype](a->m, &al, (const char *)A.p + (size_t)j * (size_t)A.ld * es, &be,
                       (char *)C.p + (size_t)j * (size_t)C.ld * es);
  return 0;
}
