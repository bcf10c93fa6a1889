/* Tile-level entry points: check the descriptors, insert the tile loop, wait for the flow. */
#include <stdint.h>
#include <stdlib.h>

#include "linalg/front/front.h"
#include "linalg/loops/loops.h"

static bool is_op(int c) {
  return c == 'N' || c == 'T' || c == 'C';
}

/* Waits for the flow whatever happened at insertion (an insertion error wins), then brings the
 * result home when `out` views the caller's array. */
int tsr_tile_finish(tessera_matrix_t *out, int rc) {
  rc = tsr_matrix_flush_copies(out, rc);
  int w = tessera_wait_all(out->ctx);
  int f = out->is_view ? tsr_matrix_flush(out) : 0;
  rc = rc ? rc : w ? w : f;
  /* a distributed flow: every process returns the same status (a failing minor is found on
   * one process only) */
  return tsr_matrix_agree(out, rc);
}

/* Rows / columns of op(X). */
static int64_t op_rows(const tessera_matrix_t *X, int op) {
  return op == 'N' ? X->m : X->n;
}
static int64_t op_cols(const tessera_matrix_t *X, int op) {
  return op == 'N' ? X->n : X->m;
}

/* Refuses operand `argno` when it stores only one triangle and the routine touches tiles outside
 * it: `need` is the triangle the routine touches ('L' or 'U'), or 0 when it touches every tile. */
int tsr_check_stored(const tessera_matrix_t *X, char need, int argno, const char *name) {
  if (!X->stored || X->stored == need) return 0;
  const char *has = X->stored == 'L' ? "lower" : "upper";
  if (need)
    return tsr_error(X->ctx, -argno,
                     "%s: argument %d stores only its %s triangle, uplo '%c' needs the other one",
                     name, argno, has, need);
  return tsr_error(X->ctx, -argno,
                   "%s: argument %d stores only its %s triangle, this operand needs every tile",
                   name, argno, has);
}

static int check_square(tessera_uplo_t uplo, const tessera_matrix_t *A, const char *name) {
  const tessera_matrix_t *m[1] = {A};
  int rc = tsr_check_tiling(m, (const int[]){2}, 1, name);
  if (rc) return rc;
  if (uplo != TESSERA_LOWER && uplo != TESSERA_UPPER)
    return tsr_error(A->ctx, -1, "%s: uplo must be 'L' or 'U'", name);
  if (A->m != A->n)
    return tsr_error(A->ctx, -2, "%s: A is %lld x %lld, not square", name, (long long)A->m,
                     (long long)A->n);
  return tsr_check_stored(A, (char)uplo, 2, name);
}

int tessera_tile_potrf(tessera_uplo_t uplo, tessera_matrix_t *A) {
  return tessera_tile_potrf_opts(uplo, A, NULL);
}

int tessera_tile_potrf_opts(tessera_uplo_t uplo, tessera_matrix_t *A,
                            const tessera_potrf_options_t *opts) {
  int rc = check_square(uplo, A, "tile_potrf");
  return rc ? rc : tsr_tile_finish(A, tsr_pxpotrf((char)uplo, A, opts));
}

int tessera_tile_lacpy(const tessera_matrix_t *A, tessera_matrix_t *B) {
  const tessera_matrix_t *m[2] = {A, B};
  int rc = tsr_check_operands(m, (const int[]){1, 2}, 2, "tile_lacpy");
  if (rc) return rc;
  const bool panels = A->mt == 1 || B->mt == 1; /* pxlacpy copies into or out of panels */
  if (A->m != B->m || A->n != B->n || A->nb != B->nb || (!panels && A->mb != B->mb))
    return tsr_error(A->ctx, -2,
                     "tile_lacpy: B is %lld x %lld in %lld x %lld tiles, A %lld x %lld in %lld x "
                     "%lld: the same sizes and tile width are needed",
                     (long long)B->m, (long long)B->n, (long long)B->mb, (long long)B->nb,
                     (long long)A->m, (long long)A->n, (long long)A->mb, (long long)A->nb);
  if (A == B) return 0; /* nothing to copy */
  rc = tsr_matrix_flush_copies((tessera_matrix_t *)A, tsr_pxlacpy(A, B));
  return tsr_tile_finish(B, rc);
}

int tessera_tile_potri(tessera_uplo_t uplo, tessera_matrix_t *A) {
  int rc = check_square(uplo, A, "tile_potri");
  if (rc) return rc;
  /* One flow: lauum's tasks wait on trtri's through their tiles; after a singular diagonal
   * (trtri's info) the tasks not yet started are skipped. */
  rc = tsr_pxtrtri((char)uplo, 'N', A);
  return tsr_tile_finish(A, rc ? rc : tsr_pxlauum((char)uplo, A));
}

int tessera_tile_logdet(tessera_uplo_t uplo, const tessera_matrix_t *A, double *logdet) {
  int rc = check_square(uplo, A, "tile_logdet");
  if (rc) return rc;
  if (!logdet) return tsr_error(A->ctx, -3, "tile_logdet: NULL output");
  double *logs = calloc((size_t)A->nt + 1, sizeof *logs);
  if (!logs) return tsr_error(A->ctx, TESSERA_ERR_NOMEM, "tile_logdet: out of memory");
  rc = tsr_tile_finish((tessera_matrix_t *)A, tsr_pxlogdiag(A, logs));
  double s = 0; /* distributed: each process has the logs of the diagonal tiles it owns */
  for (int64_t k = 0; k < A->nt; k++) s += logs[k];
  free(logs);
  const int c = A->flow->ops->allreduce(A->flow, &s, 1, TESSERA_COMM_F64, TESSERA_SUM);
  if (c && !rc) rc = c;
  *logdet = 2 * s;
  return rc;
}

int tsr_check_potrs(tessera_uplo_t uplo, const tessera_matrix_t *A, const tessera_matrix_t *B,
                    const char *name) {
  const tessera_matrix_t *m[2] = {A, B};
  int rc = tsr_check_tiling(m, (const int[]){2, 3}, 2, name);
  if (rc) return rc;
  if (uplo != TESSERA_LOWER && uplo != TESSERA_UPPER)
    return tsr_error(A->ctx, -1, "%s: uplo must be 'L' or 'U'", name);
  if (A->m != A->n || B->m != A->n)
    return tsr_error(A->ctx, -3, "%s: A is %lld x %lld and B has %lld rows", name, (long long)A->m,
                     (long long)A->n, (long long)B->m);
  rc = tsr_check_stored(A, (char)uplo, 2, name);
  return rc ? rc : tsr_check_stored(B, 0, 3, name);
}

int tessera_tile_potrs(tessera_uplo_t uplo, const tessera_matrix_t *A, tessera_matrix_t *B) {
  int rc = tsr_check_potrs(uplo, A, B, "tile_potrs");
  return rc ? rc : tsr_tile_finish(B, tsr_matrix_flush_copies(A, tsr_pxpotrs((char)uplo, A, B)));
}

int tessera_tile_posv(tessera_uplo_t uplo, tessera_matrix_t *A, tessera_matrix_t *B) {
  int rc = tsr_check_potrs(uplo, A, B, "tile_posv");
  if (rc) return rc;
  rc = tsr_tile_finish(A, tsr_pxpotrf((char)uplo, A, NULL));
  return rc ? rc : tsr_tile_finish(B, tsr_matrix_flush_copies(A, tsr_pxpotrs((char)uplo, A, B)));
}

int tessera_tile_trsm(tessera_side_t side, tessera_uplo_t uplo, tessera_op_t transa,
                      tessera_diag_t diag, const void *alpha, const tessera_matrix_t *A,
                      tessera_matrix_t *B) {
  const tessera_matrix_t *m[2] = {A, B};
  int rc = tsr_check_tiling(m, (const int[]){6, 7}, 2, "tile_trsm");
  if (rc) return rc;
  tessera_context_t *ctx = A->ctx;
  if (side != TESSERA_LEFT && side != TESSERA_RIGHT)
    return tsr_error(ctx, -1, "tile_trsm: side must be 'L' or 'R'");
  if (uplo != TESSERA_LOWER && uplo != TESSERA_UPPER)
    return tsr_error(ctx, -2, "tile_trsm: uplo must be 'L' or 'U'");
  if (!is_op(transa)) return tsr_error(ctx, -3, "tile_trsm: transa must be 'N', 'T' or 'C'");
  if (diag != TESSERA_UNIT && diag != TESSERA_NONUNIT)
    return tsr_error(ctx, -4, "tile_trsm: diag must be 'N' or 'U'");
  if (!alpha) return tsr_error(ctx, -5, "tile_trsm: alpha is NULL");
  int64_t need = side == TESSERA_LEFT ? B->m : B->n;
  if (A->m != A->n || A->m != need)
    return tsr_error(ctx, -6, "tile_trsm: A is %lld x %lld, needs %lld x %lld", (long long)A->m,
                     (long long)A->n, (long long)need, (long long)need);
  if ((rc = tsr_check_stored(A, (char)uplo, 6, "tile_trsm")) ||
      (rc = tsr_check_stored(B, 0, 7, "tile_trsm")))
    return rc;
  tsr_scalar_t a = tsr_scalar_load(A->dtype, alpha, 1);
  return tsr_tile_finish(B,
                         tsr_matrix_flush_copies(A, tsr_pxtrsm((char)side, (char)uplo, (char)transa,
                                                               (char)diag, a, A, B)));
}

static int check_rank_k(tessera_uplo_t uplo, tessera_op_t trans, const tessera_matrix_t *A,
                        const tessera_matrix_t *C, const char *name, int herk) {
  const tessera_matrix_t *m[2] = {A, C};
  int rc = tsr_check_tiling(m, (const int[]){4, 6}, 2, name);
  if (rc) return rc;
  tessera_context_t *ctx = A->ctx;
  bool cplx = tessera_dtype_is_complex(A->dtype);
  if (uplo != TESSERA_LOWER && uplo != TESSERA_UPPER)
    return tsr_error(ctx, -1, "%s: uplo must be 'L' or 'U'", name);
  bool ok = trans == TESSERA_NOTRANS || (!cplx && is_op(trans)) ||
            (cplx && trans == (herk ? TESSERA_CONJTRANS : TESSERA_TRANS));
  if (!ok)
    return tsr_error(ctx, -2, "%s: trans '%c' is not allowed for %s", name, (char)trans,
                     tessera_dtype_name(A->dtype));
  if (C->m != C->n || op_rows(A, trans) != C->n)
    return tsr_error(ctx, -4, "%s: op(A) has %lld rows, C is %lld x %lld", name,
                     (long long)op_rows(A, trans), (long long)C->m, (long long)C->n);
  rc = tsr_check_stored(A, 0, 4, name);
  return rc ? rc : tsr_check_stored(C, (char)uplo, 6, name);
}

int tessera_tile_syrk(tessera_uplo_t uplo, tessera_op_t trans, const void *alpha,
                      const tessera_matrix_t *A, const void *beta, tessera_matrix_t *C) {
  int rc = check_rank_k(uplo, trans, A, C, "tile_syrk", 0);
  if (rc) return rc;
  if (!alpha || !beta) return tsr_error(A->ctx, alpha ? -5 : -3, "tile_syrk: NULL scalar");
  tsr_scalar_t a = tsr_scalar_load(A->dtype, alpha, 1), b = tsr_scalar_load(A->dtype, beta, 0);
  return tsr_tile_finish(
      C, tsr_matrix_flush_copies(A, tsr_pxsyrk(0, (char)uplo, (char)trans, a, A, b, C)));
}

int tessera_tile_herk(tessera_uplo_t uplo, tessera_op_t trans, double alpha,
                      const tessera_matrix_t *A, double beta, tessera_matrix_t *C) {
  int rc = check_rank_k(uplo, trans, A, C, "tile_herk", 1);
  if (rc) return rc;
  tsr_scalar_t a = {alpha, 0}, b = {beta, 0};
  return tsr_tile_finish(
      C, tsr_matrix_flush_copies(A, tsr_pxsyrk(1, (char)uplo, (char)trans, a, A, b, C)));
}

int tessera_tile_gemm(tessera_op_t transa, tessera_op_t transb, const void *alpha,
                      const tessera_matrix_t *A, const tessera_matrix_t *B, const void *beta,
                      tessera_matrix_t *C) {
  const tessera_matrix_t *m[3] = {A, B, C};
  int rc = tsr_check_tiling(m, (const int[]){4, 5, 7}, 3, "tile_gemm");
  if (rc) return rc;
  tessera_context_t *ctx = A->ctx;
  if (!is_op(transa)) return tsr_error(ctx, -1, "tile_gemm: transa must be 'N', 'T' or 'C'");
  if (!is_op(transb)) return tsr_error(ctx, -2, "tile_gemm: transb must be 'N', 'T' or 'C'");
  if (!alpha || !beta) return tsr_error(ctx, alpha ? -6 : -3, "tile_gemm: NULL scalar");
  if (op_rows(A, transa) != C->m || op_cols(B, transb) != C->n ||
      op_cols(A, transa) != op_rows(B, transb))
    return tsr_error(ctx, -4, "tile_gemm: op(A) %lld x %lld, op(B) %lld x %lld, C %lld x %lld",
                     (long long)op_rows(A, transa), (long long)op_cols(A, transa),
                     (long long)op_rows(B, transb), (long long)op_cols(B, transb), (long long)C->m,
                     (long long)C->n);
  for (int i = 0; i < 3 && !rc; i++)
    rc = tsr_check_stored(m[i], 0, i == 2 ? 7 : 4 + i, "tile_gemm");
  if (rc) return rc;
  tsr_scalar_t a = tsr_scalar_load(A->dtype, alpha, 1), b = tsr_scalar_load(A->dtype, beta, 0);
  rc = tsr_pxgemm((char)transa, (char)transb, a, A, B, b, C);
  return tsr_tile_finish(C, tsr_matrix_flush_copies(B, tsr_matrix_flush_copies(A, rc)));
}

/* ---------------------------------------------------------------- LU */

/* LU's operands: any tiling; LU itself runs on column panels (tiles spanning the rows). */
static int check_lu(const tessera_matrix_t *X, int argno, const char *name) {
  if (X->m > INT32_MAX || X->n > INT32_MAX)
    return tsr_error(X->ctx, -argno, "%s: argument %d is %lld x %lld, beyond LU's 2^31 - 1", name,
                     argno, (long long)X->m, (long long)X->n);
  return tsr_check_stored(X, 0, argno, name);
}

int tsr_panels_new(const tessera_matrix_t *X, int64_t m, int64_t n, int64_t nb,
                   tessera_matrix_t **out) {
  const int64_t rows = m > 0 ? m : 1;
  return X->comm
             ? tessera_matrix_create_distributed(X->ctx, X->comm,
                                                 (tessera_grid_t){1, tessera_comm_size(X->comm)},
                                                 X->dtype, m, n, rows, nb, out)
             : tessera_matrix_create(X->ctx, X->dtype, m, n, rows, nb, out);
}

/* The column panels LU runs on: X itself when its tiles span its rows, else a copy in panels
 * of X's tile width (a matrix of its size, context and communicator, placed as
 * tessera_matrix_create places one, so the call holds X twice; distributed, its panels dealt
 * over a 1 x P grid), X copied in by tasks. A collective call for a distributed X. */
int tsr_panels_of(tessera_matrix_t *X, tessera_matrix_t **out) {
  *out = X;
  if (X->mt <= 1) return 0;
  tessera_matrix_t *P = NULL;
  int rc = tsr_panels_new(X, X->m, X->n, X->nb, &P);
  if (!rc) rc = tsr_matrix_flush_copies(X, tsr_pxlacpy(X, P));
  if (rc) {
    (void)tessera_matrix_destroy(P); /* waits for the copies inserted */
    return rc;
  }
  *out = P;
  return 0;
}

/* Inserts the copy of panels P (from panels_of) back into X after the flow (rc 0). */
int tsr_panels_back(tessera_matrix_t *X, tessera_matrix_t *P, int rc) {
  if (P == X || rc) return rc;
  return tsr_matrix_flush_copies(P, tsr_pxlacpy(P, X));
}

/* Frees panels P (from panels_of) once the flow is over. */
int tsr_panels_free(tessera_matrix_t *X, tessera_matrix_t *P, int rc) {
  if (!P || P == X) return rc;
  const int d = tessera_matrix_destroy(P);
  return rc ? rc : d;
}

static int min64(int64_t a, int64_t b) {
  return (int)(a < b ? a : b);
}

/* The status of an LU call's checks (`rc`: 0 or -argno) on every process of a distributed X,
 * with the pivots ipiv[from .. to) (argument `argno`) compared across them when given: each
 * process passes the whole ipiv, the same everywhere. */
static int agree_lu(const tessera_matrix_t *X, const char *name, int rc, const int *ipiv,
                    int64_t from, int64_t to, int argno) {
  if (!X->flow->distributed) return rc;
  int64_t sum = 0; /* a checksum of the pivots and their places */
  for (int64_t i = from; !rc && ipiv && i < to; i++) sum += (int64_t)ipiv[i] * (i % 8191 + 1);
  const char *const what[] = {"ipiv (a checksum of its pivots)"};
  return X->flow->ops->same(X->flow, name, ipiv ? 1 : 0, &sum, &argno, what, rc);
}

/* -2 with a message when getrf's ipiv is NULL and A has elements. */
static int check_ipiv(const tessera_matrix_t *A, const int *ipiv, const char *name) {
  return !ipiv && A->m > 0 && A->n > 0 ? tsr_error(A->ctx, -2, "%s: ipiv is NULL", name) : 0;
}

/* An LU call's operands as column panels, and its pivots. */
typedef struct {
  tessera_matrix_t *A, *Ap; /* A and its panels (A itself, or a copy) */
  tessera_matrix_t *B, *Bp; /* B and its panels, or NULL */
  tsr_pivots_t P;
} lu_call_t;

/* Opens call c on A (and B when not NULL): their panels (panels_of), then pivots of `kmin`
 * interchanges in steps of `nb` columns (0: A's tile width) for A's rows: a factorization's
 * (`factor`: with their L_kk⁻¹ workspaces) or those of `ipiv`, imported. Whatever it made is
 * in c for lu_close, whatever the status; c->Ap is A's panels or A itself, never NULL, and
 * c->Bp NULL only when B's panels were not reached. */
static int lu_open(lu_call_t *c, tessera_matrix_t *A, tessera_matrix_t *B, int64_t kmin, int64_t nb,
                   bool factor, const int *ipiv) {
  *c = (lu_call_t){.A = A, .B = B};
  int rc = tsr_panels_of(A, &c->Ap);
  if (!rc && B) rc = tsr_panels_of(B, &c->Bp);
  if (!rc)
    rc =
        tsr_pivots_create(c->Ap, kmin, nb ? nb : c->Ap->nb, factor && tsr_lu_inverts(c->Ap), &c->P);
  if (!rc && ipiv) rc = tsr_pivots_import(&c->P, ipiv);
  return rc;
}

/* Frees what lu_open made once the flow is over: `rc`, else the first failure of the frees. */
static int lu_close(lu_call_t *c, int rc) {
  tsr_pivots_destroy(&c->P);
  if (c->B) rc = tsr_panels_free(c->B, c->Bp, rc);
  return tsr_panels_free(c->A, c->Ap, rc);
}

/* The end of a factorization into P: the flow (and the copy of panels Ap into A) waited for,
 * the pivots exported; returns the info or a negative status. */
static int getrf_finish(tessera_matrix_t *A, tessera_matrix_t *Ap, int *ipiv, tsr_pivots_t *P,
                        int rc) {
  rc = tsr_tile_finish(A, tsr_panels_back(A, Ap, rc));
  const int info = rc < 0 || !P->steps ? rc : tsr_pivots_export(P, ipiv);
  return rc < 0 ? rc : info;
}

int tessera_tile_getrf(tessera_matrix_t *A, int *ipiv) {
  if (!A) return tsr_error(NULL, -1, "tile_getrf: argument 1 is NULL");
  int rc = check_lu(A, 1, "tile_getrf");
  if (!rc) rc = check_ipiv(A, ipiv, "tile_getrf");
  rc = agree_lu(A, "tile_getrf", rc, NULL, 0, 0, 2);
  if (rc) return rc;
  lu_call_t c;
  rc = lu_open(&c, A, NULL, min64(A->m, A->n), 0, true, NULL);
  rc = getrf_finish(A, c.Ap, ipiv, &c.P, rc ? rc : tsr_pxgetrf(c.Ap, &c.P));
  return lu_close(&c, rc);
}

/* The operands of a solve: A square, B of its rows, of one context, dtype and communicator
 * (argument numbers a and b). */
static int check_solve(const tessera_matrix_t *A, const tessera_matrix_t *B, int a, int b,
                       const char *name) {
  int rc =
      tsr_check_operands((const tessera_matrix_t *const[]){A, B}, (const int[]){a, b}, 2, name);
  if (!rc) rc = check_lu(A, a, name);
  if (!rc) rc = check_lu(B, b, name);
  if (!rc && (A->m != A->n || B->m != A->n))
    rc = tsr_error(A->ctx, -b, "%s: A is %lld x %lld and B has %lld rows", name, (long long)A->m,
                   (long long)A->n, (long long)B->m);
  return rc;
}

int tessera_tile_getrs(tessera_op_t trans, const tessera_matrix_t *A, const int *ipiv,
                       tessera_matrix_t *B) {
  int rc = check_solve(A, B, 2, 4, "tile_getrs");
  if (!A || !B) return rc;
  if (!rc && !is_op(trans)) rc = tsr_error(A->ctx, -1, "tile_getrs: trans must be 'N', 'T' or 'C'");
  if (!rc && !ipiv && A->n > 0) rc = tsr_error(A->ctx, -3, "tile_getrs: ipiv is NULL");
  if (!rc && A->n > 0) rc = tsr_pivots_check(A->ctx, "tile_getrs", 3, ipiv, A->n, A->n);
  rc = agree_lu(A, "tile_getrs", rc, ipiv, 0, A->n, 3);
  if (rc || A->n == 0 || B->n == 0) return rc;
  lu_call_t c; /* A is read only: its panels are a copy or A */
  rc = lu_open(&c, (tessera_matrix_t *)(uintptr_t)A, B, A->n, 0, false, ipiv);
  if (!rc) rc = tsr_pxgetrs((char)trans, c.Ap, &c.P, c.Bp);
  if (c.Bp) rc = tsr_tile_finish(B, tsr_panels_back(B, c.Bp, tsr_matrix_flush_copies(c.Ap, rc)));
  return lu_close(&c, rc);
}

int tsr_check_gesv(const tessera_matrix_t *A, const int *ipiv, const tessera_matrix_t *B,
                   const char *name) {
  const int rc = check_solve(A, B, 1, 3, name);
  return rc ? rc : check_ipiv(A, ipiv, name);
}

int tessera_tile_gesv(tessera_matrix_t *A, int *ipiv, tessera_matrix_t *B) {
  int rc = tsr_check_gesv(A, ipiv, B, "tile_gesv");
  if (!A || !B) return rc;
  rc = agree_lu(A, "tile_gesv", rc, NULL, 0, 0, 2);
  if (rc) return rc;
  lu_call_t c;
  rc = lu_open(&c, A, B, min64(A->m, A->n), 0, true, NULL);
  if (c.Bp) {
    /* the solve waits on the factorization's info: none if a pivot is zero, as LAPACK's */
    const int info = getrf_finish(A, c.Ap, ipiv, &c.P, rc ? rc : tsr_pxgetrf(c.Ap, &c.P));
    rc = info;
    if (!info && A->n > 0 && B->n > 0)
      rc = tsr_tile_finish(B, tsr_panels_back(B, c.Bp, tsr_pxgetrs('N', c.Ap, &c.P, c.Bp)));
  }
  return lu_close(&c, rc);
}

int tessera_tile_laswp(tessera_matrix_t *A, int64_t k1, int64_t k2, const int *ipiv, int incx) {
  if (!A) return tsr_error(NULL, -1, "tile_laswp: argument 1 is NULL");
  int rc = check_lu(A, 1, "tile_laswp");
  if (rc) return rc;
  const bool some = k2 >= k1 && A->n > 0;
  if (k1 < 1 || k2 < k1 - 1 || k2 > A->m)
    rc = tsr_error(A->ctx, -2, "tile_laswp: rows k1 = %lld .. k2 = %lld are not within 1 .. %lld",
                   (long long)k1, (long long)k2, (long long)A->m);
  else if (incx != 1 && incx != -1)
    rc = tsr_error(A->ctx, -5, "tile_laswp: incx = %d is not 1 or -1", incx);
  else if (some && !ipiv)
    rc = tsr_error(A->ctx, -4, "tile_laswp: ipiv is NULL");
  for (int64_t i = k1 - 1; !rc && some && i < k2; i++)
    if (ipiv[i] < 1 || ipiv[i] > A->m)
      rc = tsr_error(A->ctx, -4, "tile_laswp: ipiv[%lld] = %d is outside [1, %lld]", (long long)i,
                     ipiv[i], (long long)A->m);
  rc = agree_lu(A, "tile_laswp", rc, some ? ipiv : NULL, k1 - 1, k2, 4);
  if (rc || !some) return rc;
  /* one step of k2 interchanges from row 0: those before k1 are rows kept in place */
  int *piv = malloc((size_t)k2 * sizeof *piv);
  if (!piv) return tsr_error(A->ctx, TESSERA_ERR_NOMEM, "tile_laswp: out of memory");
  for (int64_t i = 0; i < k2; i++) piv[i] = i < k1 - 1 ? (int)(i + 1) : ipiv[i];
  lu_call_t c;
  rc = lu_open(&c, A, NULL, k2, k2, false, piv);
  free(piv);
  if (!rc) rc = tsr_pxlaswp(c.Ap, &c.P, incx);
  rc = tsr_tile_finish(A, tsr_panels_back(A, c.Ap, rc));
  return lu_close(&c, rc);
}
