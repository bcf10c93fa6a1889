/* LAPACK-style entry points: check the arguments the way LAPACK numbers them, view the
 * column-major arrays in place as tiled matrices, run the tile-level routine. On a context over
 * processes the same calls deal the root's arrays over the grid instead (lapack_dist.c): the
 * arguments are compared across the processes first, and a view becomes a distributed matrix
 * holding the part of the array the routine reads, whose written part goes back at the end. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linalg/front/front.h"
#include "linalg/loops/pivots.h"

static bool is_nan(tsr_scalar_t x) {
  return isnan(x.re);
}
static bool is_zero(tsr_scalar_t x) {
  return x.re == 0 && x.im == 0;
}

/* Whether diagonal element (i, i) (1-based) of the array `a` passes `test`: the caller's array,
 * or on a distributed context the root's, told to every process. */
static int root_diagonal_is(tessera_context_t *ctx, tessera_dtype_t dtype, const void *a,
                            int64_t lda, int i, bool (*test)(tsr_scalar_t)) {
  int flag = 0;
  if (tsr_lapack_holds_arrays(ctx)) {
    const size_t at = (size_t)(i - 1) * (size_t)(lda + 1) * tessera_dtype_size(dtype);
    flag = test(tsr_scalar_load(dtype, (const char *)a + at, 0));
  }
  return tsr_lapack_root_flag(ctx, flag);
}

/* The message of an `info` > 0 returned by a factorization (`factor`: potrf, posv) or an
 * inversion (potri) of the n x n array `a`: a NaN found on the diagonal stops the
 * factorization there (the kernels scan for it), so a NaN at order info is named as such.
 * Returns `info`. */
static int info_message(tessera_context_t *ctx, const char *f, int factor, tessera_uplo_t uplo,
                        int info, tessera_dtype_t dtype, const void *a, int64_t lda) {
  if (!factor)
    return tsr_error(ctx, info,
                     "%s: the diagonal element %d of the Cholesky factor is zero, so the factor "
                     "is singular",
                     f, info);
  if (root_diagonal_is(ctx, dtype, a, lda, info, is_nan))
    return tsr_error(ctx, info,
                     "%s: NaN at the diagonal of order %d: the matrix holds NaN (or Inf) in its "
                     "leading %d x %d block, which has no Cholesky factor",
                     f, info, info, info);
  return tsr_error(ctx, info,
                   "%s: the matrix is not positive definite: its leading minor of order %d is "
                   "not; check that it is Hermitian positive definite and that its %s triangle "
                   "is the one filled",
                   f, info, uplo == TESSERA_UPPER ? "upper" : "lower");
}

/* potrf, potri and logdet share their arguments: (ctx, uplo, dtype, n, a, lda). */
static int check_square(tessera_context_t *ctx, const char *f, tessera_uplo_t uplo,
                        tessera_dtype_t dtype, int64_t n, const void *a, int64_t lda) {
  int rc = tsr_arg_flag(ctx, f, 2, uplo, "LU");
  if (!rc) rc = tsr_arg_dtype(ctx, f, 3, dtype);
  if (!rc) rc = tsr_arg_dim(ctx, f, 4, n);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 5, a, n, n);
  if (!rc) rc = tsr_arg_ld(ctx, f, 6, lda, n);
  return rc;
}

/* Starts potrf, potri or logdet: the checks, agreed across the processes when distributed. */
static int begin_square(tsr_views_t *vs, tessera_context_t *ctx, const char *f, tessera_uplo_t uplo,
                        tessera_dtype_t dtype, int64_t n, const void *a, int64_t lda) {
  const int rc = check_square(ctx, f, uplo, dtype, n, a, lda);
  return tsr_views_begin(vs, ctx, f, rc, 3, (const int64_t[]){uplo, dtype, n},
                         (const int[]){2, 3, 4}, tessera_tile_for(ctx, n));
}

/* potrf (factor = 1) and potri (0): the uplo triangle of A rewritten in place. */
static int in_place(tessera_context_t *ctx, int factor, tessera_uplo_t uplo, tessera_dtype_t dtype,
                    int64_t n, void *a, int64_t lda) {
  if (!ctx) return -1;
  const char *f = factor ? "potrf" : "potri";
  tsr_views_t vs;
  int rc = begin_square(&vs, ctx, f, uplo, dtype, n, a, lda);
  if (rc || n == 0) return rc;
  rc = tsr_views_add(&vs, dtype, n, n, a, lda, (char)uplo, TSR_IN | TSR_OUT);
  if (!rc) rc = factor ? tessera_tile_potrf(uplo, vs.v[0]) : tessera_tile_potri(uplo, vs.v[0]);
  rc = tsr_views_release(&vs, rc);
  return rc > 0 ? info_message(ctx, f, factor, uplo, rc, dtype, a, lda) : rc;
}

int tessera_potrf(tessera_context_t *ctx, tessera_uplo_t uplo, tessera_dtype_t dtype, int64_t n,
                  void *a, int64_t lda) {
  return in_place(ctx, 1, uplo, dtype, n, a, lda);
}

int tessera_potri(tessera_context_t *ctx, tessera_uplo_t uplo, tessera_dtype_t dtype, int64_t n,
                  void *a, int64_t lda) {
  return in_place(ctx, 0, uplo, dtype, n, a, lda);
}

int tessera_logdet(tessera_context_t *ctx, tessera_uplo_t uplo, tessera_dtype_t dtype, int64_t n,
                   const void *a, int64_t lda, double *logdet) {
  if (!ctx) return -1;
  if (!logdet) return tsr_error(ctx, -7, "logdet: argument 7 is NULL");
  *logdet = 0;
  tsr_views_t vs;
  int rc = begin_square(&vs, ctx, "logdet", uplo, dtype, n, a, lda);
  if (rc || n == 0) return rc;
  rc = tsr_views_add(&vs, dtype, n, n, a, lda, (char)uplo, TSR_IN);
  if (!rc) rc = tessera_tile_logdet(uplo, vs.v[0], logdet);
  return tsr_views_release(&vs, rc);
}

static int check_solve(tessera_context_t *ctx, const char *f, tessera_uplo_t uplo,
                       tessera_dtype_t dtype, int64_t n, int64_t nrhs, const void *a, int64_t lda,
                       const void *b, int64_t ldb) {
  int rc = tsr_arg_flag(ctx, f, 2, uplo, "LU");
  if (!rc) rc = tsr_arg_dtype(ctx, f, 3, dtype);
  if (!rc) rc = tsr_arg_dim(ctx, f, 4, n);
  if (!rc) rc = tsr_arg_dim(ctx, f, 5, nrhs);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 6, a, n, n);
  if (!rc) rc = tsr_arg_ld(ctx, f, 7, lda, n);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 8, b, n, nrhs);
  if (!rc) rc = tsr_arg_ld(ctx, f, 9, ldb, n);
  return rc;
}

static int solve(tessera_context_t *ctx, int factor, tessera_uplo_t uplo, tessera_dtype_t dtype,
                 int64_t n, int64_t nrhs, const void *a, int64_t lda, void *b, int64_t ldb) {
  if (!ctx) return -1;
  const char *f = factor ? "posv" : "potrs";
  tsr_views_t vs;
  int rc = check_solve(ctx, f, uplo, dtype, n, nrhs, a, lda, b, ldb);
  rc = tsr_views_begin(&vs, ctx, f, rc, 4, (const int64_t[]){uplo, dtype, n, nrhs},
                       (const int[]){2, 3, 4, 5}, tessera_tile_for(ctx, n));
  if (rc || n == 0) return rc;
  rc = tsr_views_add(&vs, dtype, n, n, a, lda, (char)uplo, factor ? TSR_IN | TSR_OUT : TSR_IN);
  if (!rc) rc = tsr_views_add(&vs, dtype, n, nrhs, b, ldb, 0, TSR_IN | TSR_OUT);
  if (!rc)
    rc = factor ? tessera_tile_posv(uplo, vs.v[0], vs.v[1])
                : tessera_tile_potrs(uplo, vs.v[0], vs.v[1]);
  rc = tsr_views_release(&vs, rc);
  return rc > 0 ? info_message(ctx, f, factor, uplo, rc, dtype, a, lda) : rc;
}

int tessera_potrs(tessera_context_t *ctx, tessera_uplo_t uplo, tessera_dtype_t dtype, int64_t n,
                  int64_t nrhs, const void *a, int64_t lda, void *b, int64_t ldb) {
  return solve(ctx, 0, uplo, dtype, n, nrhs, a, lda, b, ldb);
}

int tessera_posv(tessera_context_t *ctx, tessera_uplo_t uplo, tessera_dtype_t dtype, int64_t n,
                 int64_t nrhs, void *a, int64_t lda, void *b, int64_t ldb) {
  return solve(ctx, 1, uplo, dtype, n, nrhs, a, lda, b, ldb);
}

/* The scalar *x of the call, the root's on a distributed context, in `own` (16 bytes). */
static int root_scalar(tessera_context_t *ctx, tessera_dtype_t dtype, const void *x, void *own) {
  memcpy(own, x, tessera_dtype_size(dtype));
  return tsr_lapack_broadcast(ctx, own, tessera_dtype_size(dtype));
}

int tessera_trsm(tessera_context_t *ctx, tessera_side_t side, tessera_uplo_t uplo,
                 tessera_op_t transa, tessera_diag_t diag, tessera_dtype_t dtype, int64_t m,
                 int64_t n, const void *alpha, const void *a, int64_t lda, void *b, int64_t ldb) {
  if (!ctx) return -1;
  const char *f = "trsm";
  int64_t ka = side == TESSERA_LEFT ? m : n;
  int rc = tsr_arg_flag(ctx, f, 2, side, "LR");
  if (!rc) rc = tsr_arg_flag(ctx, f, 3, uplo, "LU");
  if (!rc) rc = tsr_arg_flag(ctx, f, 4, transa, "NTC");
  if (!rc) rc = tsr_arg_flag(ctx, f, 5, diag, "NU");
  if (!rc) rc = tsr_arg_dtype(ctx, f, 6, dtype);
  if (!rc) rc = tsr_arg_dim(ctx, f, 7, m);
  if (!rc) rc = tsr_arg_dim(ctx, f, 8, n);
  if (!rc && !alpha) rc = tsr_error(ctx, -9, "trsm: argument 9 (alpha) is NULL");
  if (!rc) rc = tsr_arg_ptr(ctx, f, 10, a, ka, ka);
  if (!rc) rc = tsr_arg_ld(ctx, f, 11, lda, ka);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 12, b, m, n);
  if (!rc) rc = tsr_arg_ld(ctx, f, 13, ldb, m);
  tsr_views_t vs;
  rc = tsr_views_begin(&vs, ctx, f, rc, 7, (const int64_t[]){side, uplo, transa, diag, dtype, m, n},
                       (const int[]){2, 3, 4, 5, 6, 7, 8}, tessera_tile_for(ctx, m > n ? m : n));
  if (rc || m == 0 || n == 0) return rc;
  double al[2];
  rc = root_scalar(ctx, dtype, alpha, al);
  if (!rc) rc = tsr_views_add(&vs, dtype, ka, ka, a, lda, (char)uplo, TSR_IN);
  if (!rc) rc = tsr_views_add(&vs, dtype, m, n, b, ldb, 0, TSR_IN | TSR_OUT);
  if (!rc) rc = tessera_tile_trsm(side, uplo, transa, diag, al, vs.v[0], vs.v[1]);
  return tsr_views_release(&vs, rc);
}

/* syrk (herk = 0, scalars of the dtype) and herk (herk = 1, real scalars). */
static int rank_k(tessera_context_t *ctx, int herk, tessera_uplo_t uplo, tessera_op_t trans,
                  tessera_dtype_t dtype, int64_t n, int64_t k, const void *alpha, double ralpha,
                  const void *a, int64_t lda, const void *beta, double rbeta, void *c,
                  int64_t ldc) {
  if (!ctx) return -1;
  const char *f = herk ? "herk" : "syrk";
  int64_t am = trans == TESSERA_NOTRANS ? n : k, an = trans == TESSERA_NOTRANS ? k : n;
  int rc = tsr_arg_flag(ctx, f, 2, uplo, "LU");
  if (!rc) rc = tsr_arg_flag(ctx, f, 3, trans, "NTC");
  if (!rc) rc = tsr_arg_dtype(ctx, f, 4, dtype);
  if (!rc) rc = tsr_arg_dim(ctx, f, 5, n);
  if (!rc) rc = tsr_arg_dim(ctx, f, 6, k);
  if (!rc && !herk && !alpha) rc = tsr_error(ctx, -7, "syrk: argument 7 (alpha) is NULL");
  if (!rc) rc = tsr_arg_ptr(ctx, f, 8, a, am, an);
  if (!rc) rc = tsr_arg_ld(ctx, f, 9, lda, am);
  if (!rc && !herk && !beta) rc = tsr_error(ctx, -10, "syrk: argument 10 (beta) is NULL");
  if (!rc) rc = tsr_arg_ptr(ctx, f, 11, c, n, n);
  if (!rc) rc = tsr_arg_ld(ctx, f, 12, ldc, n);
  tsr_views_t vs;
  rc = tsr_views_begin(&vs, ctx, f, rc, 5, (const int64_t[]){uplo, trans, dtype, n, k},
                       (const int[]){2, 3, 4, 5, 6}, tessera_tile_for(ctx, n > k ? n : k));
  if (rc || n == 0) return rc;
  double al[2], be[2]; /* syrk's scalars; herk's real ones travel as two doubles */
  double real[2] = {ralpha, rbeta};
  rc = herk ? tsr_lapack_broadcast(ctx, real, sizeof real) : root_scalar(ctx, dtype, alpha, al);
  if (!rc && !herk) rc = root_scalar(ctx, dtype, beta, be);
  if (!rc) rc = tsr_views_add(&vs, dtype, am, an, a, lda, 0, TSR_IN);
  if (!rc) rc = tsr_views_add(&vs, dtype, n, n, c, ldc, (char)uplo, TSR_IN | TSR_OUT);
  if (!rc) {
    rc = herk ? tessera_tile_herk(uplo, trans, real[0], vs.v[0], real[1], vs.v[1])
              : tessera_tile_syrk(uplo, trans, al, vs.v[0], be, vs.v[1]);
    if (rc == -2) rc = tsr_error(ctx, -3, "%s: %s", f, tessera_last_error(ctx));
  }
  return tsr_views_release(&vs, rc);
}

int tessera_syrk(tessera_context_t *ctx, tessera_uplo_t uplo, tessera_op_t trans,
                 tessera_dtype_t dtype, int64_t n, int64_t k, const void *alpha, const void *a,
                 int64_t lda, const void *beta, void *c, int64_t ldc) {
  return rank_k(ctx, 0, uplo, trans, dtype, n, k, alpha, 0, a, lda, beta, 0, c, ldc);
}

int tessera_herk(tessera_context_t *ctx, tessera_uplo_t uplo, tessera_op_t trans,
                 tessera_dtype_t dtype, int64_t n, int64_t k, double alpha, const void *a,
                 int64_t lda, double beta, void *c, int64_t ldc) {
  return rank_k(ctx, 1, uplo, trans, dtype, n, k, NULL, alpha, a, lda, NULL, beta, c, ldc);
}

int tessera_gemm(tessera_context_t *ctx, tessera_op_t transa, tessera_op_t transb,
                 tessera_dtype_t dtype, int64_t m, int64_t n, int64_t k, const void *alpha,
                 const void *a, int64_t lda, const void *b, int64_t ldb, const void *beta, void *c,
                 int64_t ldc) {
  if (!ctx) return -1;
  const char *f = "gemm";
  int64_t am = transa == TESSERA_NOTRANS ? m : k, an = transa == TESSERA_NOTRANS ? k : m;
  int64_t bm = transb == TESSERA_NOTRANS ? k : n, bn = transb == TESSERA_NOTRANS ? n : k;
  int rc = tsr_arg_flag(ctx, f, 2, transa, "NTC");
  if (!rc) rc = tsr_arg_flag(ctx, f, 3, transb, "NTC");
  if (!rc) rc = tsr_arg_dtype(ctx, f, 4, dtype);
  if (!rc) rc = tsr_arg_dim(ctx, f, 5, m);
  if (!rc) rc = tsr_arg_dim(ctx, f, 6, n);
  if (!rc) rc = tsr_arg_dim(ctx, f, 7, k);
  if (!rc && !alpha) rc = tsr_error(ctx, -8, "gemm: argument 8 (alpha) is NULL");
  if (!rc) rc = tsr_arg_ptr(ctx, f, 9, a, am, an);
  if (!rc) rc = tsr_arg_ld(ctx, f, 10, lda, am);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 11, b, bm, bn);
  if (!rc) rc = tsr_arg_ld(ctx, f, 12, ldb, bm);
  if (!rc && !beta) rc = tsr_error(ctx, -13, "gemm: argument 13 (beta) is NULL");
  if (!rc) rc = tsr_arg_ptr(ctx, f, 14, c, m, n);
  if (!rc) rc = tsr_arg_ld(ctx, f, 15, ldc, m);
  const int64_t order = m > n ? (m > k ? m : k) : (n > k ? n : k);
  tsr_views_t vs;
  rc = tsr_views_begin(&vs, ctx, f, rc, 6, (const int64_t[]){transa, transb, dtype, m, n, k},
                       (const int[]){2, 3, 4, 5, 6, 7}, tessera_tile_for(ctx, order));
  if (rc || m == 0 || n == 0) return rc;
  double al[2], be[2];
  rc = root_scalar(ctx, dtype, alpha, al);
  if (!rc) rc = root_scalar(ctx, dtype, beta, be);
  if (!rc) rc = tsr_views_add(&vs, dtype, am, an, a, lda, 0, TSR_IN);
  if (!rc) rc = tsr_views_add(&vs, dtype, bm, bn, b, ldb, 0, TSR_IN);
  if (!rc) rc = tsr_views_add(&vs, dtype, m, n, c, ldc, 0, TSR_IN | TSR_OUT);
  if (!rc) rc = tessera_tile_gemm(transa, transb, al, vs.v[0], vs.v[1], be, vs.v[2]);
  return tsr_views_release(&vs, rc);
}

/* ---------------------------------------------------------------- LU */

int tsr_lu_views_begin(tsr_views_t *vs, tessera_context_t *ctx, const char *f, int rc, int k,
                       const int64_t *values, const int *argno, int64_t m, int64_t n, int *ipiv,
                       int **piv, bool read_ipiv) {
  rc = tsr_views_begin(vs, ctx, f, rc, k, values, argno, tessera_tile_for_lu(ctx, m, n));
  vs->panels = true;
  *piv = ipiv;
  if (rc || !vs->dist) return rc;
  const int64_t kmin = m < n ? m : n;
  if (!tsr_lapack_holds_arrays(ctx) && kmin > 0) {
    *piv = calloc((size_t)kmin, sizeof **piv);
    rc = *piv ? 0 : tsr_error(ctx, TESSERA_ERR_NOMEM, "%s: out of memory for the pivots", f);
  }
  rc = tsr_lapack_agreed(ctx, rc);
  if (!rc && read_ipiv) rc = tsr_lapack_broadcast(ctx, *piv, (size_t)kmin * sizeof **piv);
  return rc;
}

int tsr_lu_views_end(tsr_views_t *vs, int rc, int *ipiv, int *piv) {
  rc = tsr_views_release(vs, rc);
  if (piv != ipiv) free(piv);
  return rc;
}

/* The message of getrf's info > 0 (the factors in `a`, m rows; distributed: the root's). */
static int lu_info_message(tessera_context_t *ctx, const char *f, int info, tessera_dtype_t dtype,
                           const void *a, int64_t lda) {
  if (root_diagonal_is(ctx, dtype, a, lda, info, is_zero))
    return tsr_error(ctx, info,
                     "%s: U(%d, %d) is exactly zero: the matrix is singular, and a solve with "
                     "its factors would divide by zero",
                     f, info, info);
  return tsr_error(ctx, info,
                   "%s: column %d is the first of the factors to hold NaN: the matrix holds NaN "
                   "(or Inf)",
                   f, info);
}

static int check_ipiv(tessera_context_t *ctx, const char *f, int argno, const int *ipiv,
                      int64_t k) {
  return !ipiv && k > 0 && tsr_lapack_holds_arrays(ctx)
             ? tsr_error(ctx, -argno, "%s: argument %d (ipiv) is NULL", f, argno)
             : 0;
}

int tessera_getrf(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n, void *a,
                  int64_t lda, int *ipiv) {
  if (!ctx) return -1;
  const char *f = "getrf";
  int rc = tsr_arg_dtype(ctx, f, 2, dtype);
  if (!rc) rc = tsr_arg_dim(ctx, f, 3, m);
  if (!rc) rc = tsr_arg_dim(ctx, f, 4, n);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 5, a, m, n);
  if (!rc) rc = tsr_arg_ld(ctx, f, 6, lda, m);
  if (!rc) rc = check_ipiv(ctx, f, 7, ipiv, m < n ? m : n);
  tsr_views_t vs;
  int *piv = NULL;
  rc = tsr_lu_views_begin(&vs, ctx, f, rc, 3, (const int64_t[]){dtype, m, n},
                          (const int[]){2, 3, 4}, m, n, ipiv, &piv, false);
  if (!rc && m > 0 && n > 0) rc = tsr_views_add(&vs, dtype, m, n, a, lda, 0, TSR_IN | TSR_OUT);
  if (!rc && m > 0 && n > 0) rc = tessera_tile_getrf(vs.v[0], piv);
  rc = tsr_lu_views_end(&vs, rc, ipiv, piv);
  return rc > 0 ? lu_info_message(ctx, f, rc, dtype, a, lda) : rc;
}

/* getrs (factor = 0) and gesv (1): A n x n, B n x nrhs; argument numbers from `first` (dtype). */
static int lu_solve(tessera_context_t *ctx, int factor, tessera_op_t trans, tessera_dtype_t dtype,
                    int64_t n, int64_t nrhs, const void *a, int64_t lda, int *ipiv, void *b,
                    int64_t ldb) {
  if (!ctx) return -1;
  const char *f = factor ? "gesv" : "getrs";
  const int o = factor ? 2 : 3; /* argument number of dtype */
  int rc = factor ? 0 : tsr_arg_flag(ctx, f, 2, trans, "NTC");
  if (!rc) rc = tsr_arg_dtype(ctx, f, o, dtype);
  if (!rc) rc = tsr_arg_dim(ctx, f, o + 1, n);
  if (!rc) rc = tsr_arg_dim(ctx, f, o + 2, nrhs);
  if (!rc) rc = tsr_arg_ptr(ctx, f, o + 3, a, n, n);
  if (!rc) rc = tsr_arg_ld(ctx, f, o + 4, lda, n);
  if (!rc) rc = check_ipiv(ctx, f, o + 5, ipiv, n);
  if (!rc && !factor && tsr_lapack_holds_arrays(ctx))
    rc = tsr_pivots_check(ctx, f, o + 5, ipiv, n, n);
  if (!rc) rc = tsr_arg_ptr(ctx, f, o + 6, b, n, nrhs);
  if (!rc) rc = tsr_arg_ld(ctx, f, o + 7, ldb, n);
  tsr_views_t vs;
  int *piv = NULL;
  rc = tsr_lu_views_begin(&vs, ctx, f, rc, 4, (const int64_t[]){trans, dtype, n, nrhs},
                          (const int[]){2, o, o + 1, o + 2}, n, n, ipiv, &piv, !factor);
  if (!rc && n > 0)
    rc = tsr_views_add(&vs, dtype, n, n, a, lda, 0, factor ? TSR_IN | TSR_OUT : TSR_IN);
  if (!rc && n > 0 && nrhs > 0)
    rc = tsr_views_add(&vs, dtype, n, nrhs, b, ldb, 0, TSR_IN | TSR_OUT);
  if (!rc && n > 0)
    rc = factor     ? (nrhs > 0 ? tessera_tile_gesv(vs.v[0], piv, vs.v[1])
                                : tessera_tile_getrf(vs.v[0], piv))
         : nrhs > 0 ? tessera_tile_getrs(trans, vs.v[0], piv, vs.v[1])
                    : 0;
  rc = tsr_lu_views_end(&vs, rc, ipiv, piv);
  return rc > 0 ? lu_info_message(ctx, f, rc, dtype, a, lda) : rc;
}

int tessera_getrs(tessera_context_t *ctx, tessera_op_t trans, tessera_dtype_t dtype, int64_t n,
                  int64_t nrhs, const void *a, int64_t lda, const int *ipiv, void *b, int64_t ldb) {
  return lu_solve(ctx, 0, trans, dtype, n, nrhs, a, lda, (int *)(uintptr_t)ipiv, b, ldb);
}

int tessera_gesv(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t n, int64_t nrhs, void *a,
                 int64_t lda, int *ipiv, void *b, int64_t ldb) {
  return lu_solve(ctx, 1, TESSERA_NOTRANS, dtype, n, nrhs, a, lda, ipiv, b, ldb);
}
