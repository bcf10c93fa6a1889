/* Tile-level QR: check the descriptor, run the factorization on its column panels (the matrix
 * itself when its tiles span its rows, else a copy), wait, and hand LAPACK's tau back. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "linalg/front/front.h"
#include "linalg/loops/loops.h"
#include "tessera/linalg.h"

int tessera_tile_geqrf(tessera_matrix_t *A, void *tau) {
  if (!A) return tsr_error(NULL, -1, "tile_geqrf: argument 1 is NULL");
  const int64_t kmin = A->m < A->n ? A->m : A->n;
  int rc = 0;
  if (A->m > INT32_MAX || A->n > INT32_MAX)
    rc = tsr_error(A->ctx, -1, "tile_geqrf: A is %lld x %lld, beyond QR's 2^31 - 1",
                   (long long)A->m, (long long)A->n);
  else if (!tau && kmin > 0)
    rc = tsr_error(A->ctx, -2, "tile_geqrf: argument 2 (tau) is NULL");
  if (!rc) rc = tsr_check_stored(A, 0, 1, "tile_geqrf");
  rc = tsr_matrix_agree(A, rc); /* the same status on every process */
  if (rc || kmin == 0) return rc;
  tessera_matrix_t *P = NULL;
  tsr_qr_t Q = {0};
  tsr_qr_work_t w = {0};
  rc = tsr_panels_of(A, &P);
  if (!rc) rc = tsr_qr_create(P, kmin, P->nb, &Q);
  if (!rc) rc = tsr_qr_work_create(P, P->nb, &w);
  if (!rc) rc = tsr_pxgeqrf(P, &Q, &w);
  rc = tsr_tile_finish(A, tsr_panels_back(A, P, rc));
  if (!rc) rc = tsr_qr_tau(&Q, A->dtype, tau);
  tsr_qr_work_destroy(&w);
  tsr_qr_destroy(&Q);
  return tsr_panels_free(A, P, rc);
}

/* Xᴴ in a new matrix P of column panels (X->n rows, of X's tile height, or its width where X is
 * in column panels), distributed over a 1 x P grid as X's panels are, X copied in by tasks. */
static int transposed(tessera_matrix_t *X, tessera_matrix_t **out) {
  tessera_matrix_t *P = NULL;
  int rc = tsr_panels_new(X, X->n, X->m, X->mt > 1 ? X->mb : X->nb, &P);
  if (!rc) rc = tsr_matrix_flush_copies(X, tsr_pxtranspose(X, P));
  if (rc) (void)tessera_matrix_destroy(P); /* waits for the copies inserted */
  *out = rc ? NULL : P;
  return rc;
}

/* C op(Q) = (op(Q)ᴴ Cᴴ)ᴴ: Cᴴ in column panels, Q or Qᴴ applied from the left, C written back. */
static int unmqr_right(tessera_op_t trans, const tessera_matrix_t *A, const void *tau,
                       tessera_matrix_t *C) {
  tessera_matrix_t *P = NULL;
  int rc = transposed(C, &P);
  if (!rc)
    rc = tessera_tile_unmqr(
        TESSERA_LEFT, trans == TESSERA_NOTRANS ? TESSERA_CONJTRANS : TESSERA_NOTRANS, A, tau, P);
  if (!rc) rc = tsr_tile_finish(C, tsr_matrix_flush_copies(P, tsr_pxtranspose(P, C)));
  const int d = P ? tessera_matrix_destroy(P) : 0;
  return rc ? rc : d;
}

int tessera_tile_unmqr(tessera_side_t side, tessera_op_t trans, const tessera_matrix_t *A,
                       const void *tau, tessera_matrix_t *C) {
  static const char f[] = "tile_unmqr";
  int rc = tsr_check_operands((const tessera_matrix_t *const[]){A, C}, (const int[]){3, 5}, 2, f);
  if (!A || !C) return rc;
  const int64_t k = A->m < A->n ? A->m : A->n;
  const bool complex = A->dtype == TESSERA_C64 || A->dtype == TESSERA_C128;
  if (!rc && side != TESSERA_LEFT && side != TESSERA_RIGHT)
    rc = tsr_error(A->ctx, -1, "%s: side must be TESSERA_LEFT or TESSERA_RIGHT", f);
  if (!rc && trans != TESSERA_NOTRANS && trans != TESSERA_CONJTRANS &&
      !(trans == TESSERA_TRANS && !complex))
    rc = tsr_error(A->ctx, -2, "%s: trans must be 'N' or 'C' ('T' on real dtypes)", f);
  if (!rc && side == TESSERA_LEFT && C->m != A->m)
    rc = tsr_error(A->ctx, -5, "%s: C has %lld rows and Q's order is A's %lld", f, (long long)C->m,
                   (long long)A->m);
  if (!rc && side == TESSERA_RIGHT && C->n != A->m)
    rc = tsr_error(A->ctx, -5, "%s: C has %lld columns and Q's order is A's %lld", f,
                   (long long)C->n, (long long)A->m);
  if (!rc && !tau && k > 0) rc = tsr_error(A->ctx, -4, "%s: argument 4 (tau) is NULL", f);
  if (!rc) rc = tsr_check_stored(A, 0, 3, f);
  if (!rc) rc = tsr_check_stored(C, 0, 5, f);
  rc = tsr_matrix_agree(A, rc);
  if (rc || k == 0 || C->m == 0 || C->n == 0) return rc;
  if (side == TESSERA_RIGHT) return unmqr_right(trans, A, tau, C);
  tessera_matrix_t *Ap = NULL, *Cp = NULL;
  tsr_qr_t Q = {0};
  tsr_qr_work_t w = {0};
  rc = tsr_panels_of((tessera_matrix_t *)(uintptr_t)A, &Ap);
  if (!rc) rc = tsr_panels_of(C, &Cp);
  if (!rc) rc = tsr_qr_create(Ap, k, Ap->nb, &Q);
  if (!rc) rc = tsr_qr_work_create(Cp, Ap->nb, &w);
  if (!rc) rc = tsr_pxlarft(Ap, tau, &Q);
  if (!rc) rc = tsr_pxunmqr(trans == TESSERA_NOTRANS ? 'N' : 'C', Ap, &Q, Cp, &w);
  if (Cp) rc = tsr_tile_finish(C, tsr_panels_back(C, Cp, rc));
  tsr_qr_work_destroy(&w);
  tsr_qr_destroy(&Q);
  rc = tsr_panels_free(C, Cp, rc);
  return tsr_panels_free((tessera_matrix_t *)(uintptr_t)A, Ap, rc);
}

int tessera_tile_ungqr(tessera_matrix_t *A, int64_t k, const void *tau) {
  static const char f[] = "tile_ungqr";
  if (!A) return tsr_error(NULL, -1, "%s: argument 1 is NULL", f);
  int rc = 0;
  if (A->n > A->m)
    rc = tsr_error(A->ctx, -1, "%s: A is %lld x %lld; Q's first n columns need n <= m", f,
                   (long long)A->m, (long long)A->n);
  else if (k < 0 || k > A->n)
    rc = tsr_error(A->ctx, -2, "%s: k = %lld is not in [0, n = %lld]", f, (long long)k,
                   (long long)A->n);
  else if (!tau && k > 0)
    rc = tsr_error(A->ctx, -3, "%s: argument 3 (tau) is NULL", f);
  if (!rc) rc = tsr_check_stored(A, 0, 1, f);
  rc = tsr_matrix_agree(A, rc);
  if (rc || A->n == 0) return rc;
  /* Q [I; 0]: the identity's first n columns in panels, Q applied from the left, then into A */
  tessera_matrix_t *Ap = NULL, *C = NULL;
  tsr_qr_t Q = {0};
  tsr_qr_work_t w = {0};
  rc = tsr_panels_of(A, &Ap);
  const int64_t nb = Ap ? Ap->nb : 1;
  if (!rc) rc = tsr_panels_new(A, A->m, A->n, nb, &C);
  if (!rc) rc = tsr_pxidentity_rows(C, 0, true);
  if (!rc && k > 0) rc = tsr_qr_create(Ap, k, nb, &Q);
  if (!rc && k > 0) rc = tsr_qr_work_create(C, nb, &w);
  w.identity = true; /* C = [I; 0] */
  if (!rc && k > 0) rc = tsr_pxlarft(Ap, tau, &Q);
  if (!rc && k > 0) rc = tsr_pxunmqr('N', Ap, &Q, C, &w);
  if (!rc) rc = tsr_matrix_flush_copies(C, tsr_pxlacpy(C, A));
  rc = tsr_tile_finish(A, rc);
  tsr_qr_work_destroy(&w);
  tsr_qr_destroy(&Q);
  const int d = C ? tessera_matrix_destroy(C) : 0;
  rc = tsr_panels_free(A, Ap, rc);
  return rc ? rc : d;
}

int tsr_qr_gels_panels(tessera_matrix_t *P, bool wide, tessera_matrix_t *Bp, const char *f) {
  const int64_t k = P->n;
  tsr_qr_t Q = {0};
  tsr_qr_work_t wp = {0}, wb = {0};
  int rc = tsr_qr_create(P, k, P->nb, &Q);
  if (!rc) rc = tsr_qr_work_create(P, P->nb, &wp);
  if (!rc) rc = tsr_pxgeqrf(P, &Q, &wp);
  if (!rc) {
    const int info = tsr_qr_zero_diagonal(P, k);
    rc = info <= 0 ? info
         : wide    ? tsr_error(P->ctx, info,
                               "%s: R(%d, %d) is exactly zero: A does not have full rank, and the "
                                  "minimum norm solution is not defined by it",
                               f, info, info)
                   : tsr_error(P->ctx, info,
                               "%s: R(%d, %d) is exactly zero: A does not have full rank, and the "
                                  "least squares solution is not unique",
                               f, info, info);
  }
  if (!rc) rc = tsr_qr_work_create(Bp, P->nb, &wb);
  /* tall: R x = (Qᴴ b)(1 .. k); wide: Rᴴ y = b(1 .. k), then x = Q [y; 0] */
  if (!rc) rc = wide ? tsr_pxqr_solve(P, k, 'C', Bp) : tsr_pxunmqr('C', P, &Q, Bp, &wb);
  if (!rc) rc = wide ? tsr_pxunmqr('N', P, &Q, Bp, &wb) : tsr_pxqr_solve(P, k, 'N', Bp);
  tsr_qr_work_destroy(&wb); /* each release waits for its handle's tasks */
  tsr_qr_work_destroy(&wp);
  tsr_qr_destroy(&Q);
  return rc;
}

/* The minimum norm solution of A X = B for m < n: the QR of Aᴴ (a copy in column panels; A is
 * left as it was), Rᴴ Y = B(1 .. m), X = Q [Y; 0] (B's rows m .. n - 1 zeroed first). */
static int gels_wide(tessera_matrix_t *A, tessera_matrix_t *B, const char *f) {
  tessera_matrix_t *P = NULL, *Bp = NULL;
  int rc = transposed(A, &P);
  if (!rc) rc = tsr_panels_of(B, &Bp);
  if (!rc) rc = tsr_pxidentity_rows(Bp, A->m, false);
  if (!rc) rc = tsr_qr_gels_panels(P, true, Bp, f);
  if (Bp) rc = tsr_tile_finish(B, tsr_panels_back(B, Bp, rc));
  rc = tsr_panels_free(B, Bp, rc);
  const int d = P ? tessera_matrix_destroy(P) : 0;
  return rc ? rc : d;
}

int tessera_tile_gels(tessera_matrix_t *A, tessera_matrix_t *B) {
  static const char f[] = "tile_gels";
  int rc = tsr_check_operands((const tessera_matrix_t *const[]){A, B}, (const int[]){1, 2}, 2, f);
  if (!A || !B) return rc;
  const bool wide = A->m < A->n;
  if (!rc && B->m != (wide ? A->n : A->m))
    rc = tsr_error(A->ctx, -2, "%s: B has %lld rows; it needs max(m, n) = %lld", f, (long long)B->m,
                   (long long)(wide ? A->n : A->m));
  if (!rc) rc = tsr_check_stored(B, 0, 2, f);
  rc = tsr_matrix_agree(A, rc);
  if (rc || A->m == 0 || A->n == 0 || B->n == 0) return rc;
  if (wide) return gels_wide(A, B, f);
  tessera_matrix_t *Ap = NULL, *Bp = NULL;
  rc = tsr_panels_of(A, &Ap);
  if (!rc) rc = tsr_panels_of(B, &Bp);
  if (!rc) rc = tsr_qr_gels_panels(Ap, false, Bp, f);
  /* B gets x only when solved; A its QR whenever it was factored, an exactly zero R(i, i) too */
  if (Bp) rc = tsr_tile_finish(B, tsr_panels_back(B, Bp, rc));
  if (Ap) {
    const int a = tsr_tile_finish(A, tsr_panels_back(A, Ap, rc > 0 ? 0 : rc));
    if (a < 0 && rc >= 0) rc = a;
  }
  rc = tsr_panels_free(B, Bp, rc);
  return tsr_panels_free(A, Ap, rc);
}
