/* The polar decomposition A = U_p H of an m x n A (m >= n) by QDWH, the QR-based dynamically
 * weighted Halley iteration (Nakatsukasa, Bai and Gygi 2010; Nakatsukasa and Higham 2013), as
 * tile loops on A's distribution:
 *
 *   X_0 = A / alpha, alpha = sqrt(‖A‖_1 ‖A‖_inf) >= ‖A‖_2, and l_0 = eps a lower bound of its
 *   singular values; each step's weights (a, b, c) from l_k (tsr_qdwh_weights), then
 *     c > 100 (l small):  [sqrt(c) X; I] = [Q1; Q2] R,   X = e X + (a - e) / sqrt(c) Q1 Q2ᴴ
 *     else:               W = I + c XᴴX = L Lᴴ,          X = e X + (a - e) X L⁻ᴴ L⁻¹
 *   with e = b / c; the QR steps while l is small keep the step stable where I + c XᴴX is
 *   ill-conditioned, the Cholesky steps are half the work. Once l_k reaches 1 the steps are
 *   Halley's (a, b, c) = (3, 1, 3) until ‖X_k - X_k-1‖ (sqrt(‖.‖_1 ‖.‖_inf)) is below
 *   (5 eps)^(1/3), 10 steps in all at most (a numerically rank-deficient A's singular values
 *   below eps ‖A‖ would take dozens more to reach 1: its U_p is not orthonormal there, A = U_p H
 *   holds all the same); a Newton-Schulz step X = 1.5 X - 0.5 X XᴴX then sharpens X's
 *   orthogonality, and H = (Xᴴ A + (Xᴴ A)ᴴ) / 2.
 *
 * The QR step's stacked matrix is a matrix of column panels ((m + n) x n), X's tiles copied into
 * its top rows (scaled) and the identity below; its QR stops each step's reflectors at the
 * identity's untouched zeros (tsr_qr_t's band: step k's rows end at m + (k + 1) nb), Q's first
 * n columns are formed by unmqr on [I; 0] leaving the columns each step cannot touch, and Q1,
 * Q2 are copied into square tiles for the product. Every operation is a tile loop
 * of the library (geqrf, unmqr, herk, potrf, trsm, gemm) or a copy task per tile, so the
 * iteration runs wherever A's tiles are: CPU workers, GPUs, processes. The weights are
 * computed on the host (scalars); the norms wait for their sums. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linalg/desc/desc.h"
#include "linalg/loops/loops.h"
#include "linalg/loops/policy.h"
#include "linalg/loops/tasks.h"
#include "runtime/context.h"

/* Steps at most: QDWH's weighted steps from l_0 = eps are at most 6 in f64 (4 in f32), after
 * which every singular value at least eps ‖A‖ has converged; Halley's steps after them move only
 * what lies below (a numerically rank-deficient A), and stop here. */
enum { MOST_STEPS = 10 };

void tsr_qdwh_weights(double *l, double *a, double *b, double *c) {
  const double l2 = *l * *l, dd = cbrt(4 * (1 / l2 - 1) / l2), sqd = sqrt(1 + dd);
  *a = sqd + sqrt(2 - dd + 2 * (2 - l2) / (l2 * sqd));
  *b = (*a - 1) * (*a - 1) / 4;
  *c = *a + *b - 1;
  *l = *l * (*a + *b * l2) / (1 + *c * l2);
}

/* The call's matrices: A (read), the iterate X and a work matrix Z (m x n), W (n x n), the QR
 * step's stacked matrix Y and its Q's first columns E ((m + n) x n, column panels), with Y's
 * reflectors' T and the updates' workspaces (made once: every QR step reuses them, the flow
 * ordering each step's writes after the last one's reads). */
typedef struct {
  tessera_matrix_t *A, *X, *Z, *W, *Y, *E;
  tsr_qr_t Q;
  tsr_qr_work_t wy, we;
  double eps;
} polar_t;

/* ‖X‖_1 and ‖X‖_inf (NaN where X has one) and the first column (0-based) whose sum is not
 * finite, or -1: absum tasks into host sums, waited for; over processes summed. */
static int norms(const tessera_matrix_t *X, double *one, double *inf, int64_t *bad) {
  tessera_context_t *ctx = X->ctx;
  double *sums = calloc((size_t)(X->m + X->n), sizeof *sums);
  tessera_data_t **h = calloc((size_t)(X->mt + X->nt), sizeof *h);
  int rc = sums && h ? 0 : tsr_error(ctx, TESSERA_ERR_NOMEM, "gepolar: out of memory for norms");
  for (int64_t i = 0; i < X->mt && !rc; i++)
    rc = tessera_data_register(ctx, TESSERA_HOST_NODE, sums + i * X->mb, (size_t)tsr_tile_m(X, i),
                               1, (size_t)tsr_tile_m(X, i), sizeof *sums, &h[i]);
  for (int64_t j = 0; j < X->nt && !rc; j++)
    rc = tessera_data_register(ctx, TESSERA_HOST_NODE, sums + X->m + j * X->nb,
                               (size_t)tsr_tile_n(X, j), 1, (size_t)tsr_tile_n(X, j), sizeof *sums,
                               &h[X->mt + j]);
  if (!rc) rc = tsr_pxabsum(0, X, h, h + X->mt);
  const int w = tessera_wait_all(ctx);
  if (!rc) rc = w;
  for (int64_t i = 0; h && i < X->mt + X->nt; i++)
    if (h[i]) {
      const int r = tessera_data_release(ctx, h[i]);
      if (!rc) rc = r;
    }
  if (!rc && X->flow->distributed)
    rc = X->flow->ops->allreduce(X->flow, sums, (size_t)(X->m + X->n),
                                 (tessera_comm_type_t)TESSERA_F64, TESSERA_SUM);
  *one = *inf = 0, *bad = -1;
  for (int64_t i = 0; !rc && i < X->m; i++)
    if (!(sums[i] <= *inf)) *inf = sums[i];
  for (int64_t j = 0; !rc && j < X->n; j++) {
    if (!(sums[X->m + j] <= *one)) *one = sums[X->m + j];
    if (*bad < 0 && !isfinite(sums[X->m + j])) *bad = j;
  }
  free(sums), free(h);
  return rc;
}

/* C = alpha A + beta C, tile by tile (A and C of one tiling). */
static int add(tsr_scalar_t alpha, const tessera_matrix_t *A, tsr_scalar_t beta,
               tessera_matrix_t *C) {
  int rc = 0;
  for (int64_t j = 0; j < C->nt && !rc; j++)
    for (int64_t i = 0; i < C->mt && !rc; i++) {
      const int tag[3] = {(int)i, (int)j, 0};
      rc = tsr_task_geadd(C, tsr_tile(A, i, j), alpha, beta, tsr_tile(C, i, j),
                          (int)tsr_tile_m(C, i), (int)tsr_tile_n(C, j), tag, 0);
    }
  return rc;
}

/* The QR step: Y = [sqrt(c) X; I] = Q R, E = Q [I; 0], X = e X + s E_top E_bottomᴴ. */
static int qr_step(polar_t *P, double e, double s, double sqrt_c) {
  tessera_matrix_t *X = P->X, *Y = P->Y, *E = P->E;
  const int64_t m = X->m, n = X->n;
  int rc = 0;
  for (int64_t j = 0; j < X->nt && !rc; j++) {
    for (int64_t i = 0; i < X->mt && !rc; i++) {
      const int tag[3] = {(int)i, (int)j, 1};
      rc = tsr_task_convert(X->flow, X->dtype, tsr_tile(X, i, j), Y->dtype, tsr_tile(Y, 0, j),
                            (int)(i * X->mb), 0, TESSERA_RW, (int)tsr_tile_m(X, i),
                            (int)tsr_tile_n(X, j), sqrt_c, tag, 0);
    }
    const int tag[3] = {0, (int)j, 2};
    if (!rc)
      rc = tsr_task_identity(Y->dtype, Y->flow, tsr_tile(Y, 0, j), (int)m, TESSERA_RW, (int)n,
                             (int)tsr_tile_n(Y, j), (int)(-j * Y->nb), tag, 0);
  }
  if (!rc && !P->Q.T) rc = tsr_qr_create(Y, n, Y->nb, &P->Q);
  P->Q.band = m; /* Y's identity: panel k's rows below m + (k + 1) nb stay zero */
  if (!rc && !P->wy.W) rc = tsr_qr_work_create(Y, Y->nb, &P->wy);
  if (!rc && !P->we.W) rc = tsr_qr_work_create(E, Y->nb, &P->we);
  P->we.identity = true; /* E = [I; 0] below */
  if (!rc) rc = tsr_pxgeqrf(Y, &P->Q, &P->wy);
  if (!rc) rc = tsr_pxidentity_rows(E, 0, true);
  if (!rc) rc = tsr_pxunmqr('N', Y, &P->Q, E, &P->we);
  /* E's top rows into Z (m x n), its bottom rows into W (n x n), then the product */
  tessera_matrix_t *to[2] = {P->Z, P->W};
  for (int t = 0; t < 2 && !rc; t++)
    for (int64_t j = 0; j < to[t]->nt && !rc; j++)
      for (int64_t i = 0; i < to[t]->mt && !rc; i++) {
        const int tag[3] = {(int)i, (int)j, 3 + t};
        rc = tsr_task_lacpy_block(E->dtype, E->flow, tsr_tile(E, 0, j),
                                  (int)((t ? m : 0) + i * to[t]->mb), 0, tsr_tile(to[t], i, j), 0,
                                  TESSERA_W, (int)tsr_tile_m(to[t], i), (int)tsr_tile_n(to[t], j),
                                  tag, 0);
      }
  if (!rc) rc = tsr_pxgemm('N', 'C', (tsr_scalar_t){s, 0}, P->Z, P->W, (tsr_scalar_t){e, 0}, X);
  return tsr_matrix_flush_copies(E, tsr_matrix_flush_copies(Y, rc));
}

/* The Cholesky step: W = I + c XᴴX = L Lᴴ, Z = X L⁻ᴴ L⁻¹, then Z = X_new - X (kept for the
 * convergence test) and X = X + Z. Returns potrf's info where W is not positive definite (NaN). */
static int chol_step(polar_t *P, double a_minus_e, double c, double e) {
  tessera_matrix_t *X = P->X, *Z = P->Z, *W = P->W;
  const tsr_scalar_t one = {1, 0};
  int rc = 0;
  for (int64_t j = 0; j < W->nt && !rc; j++)
    for (int64_t i = j; i < W->mt && !rc; i++) {
      const int tag[3] = {(int)i, (int)j, 6};
      rc = tsr_task_identity(W->dtype, W->flow, tsr_tile(W, i, j), 0, TESSERA_W,
                             (int)tsr_tile_m(W, i), (int)tsr_tile_n(W, j),
                             i == j ? 0 : (int)tsr_tile_n(W, j), tag, 0);
    }
  if (!rc) rc = tsr_pxsyrk(1, 'L', 'C', (tsr_scalar_t){c, 0}, X, one, W);
  if (!rc) rc = tsr_pxpotrf('L', W, NULL);
  if (!rc) rc = tsr_pxlacpy(X, Z);
  if (!rc) rc = tsr_pxtrsm('R', 'L', 'C', 'N', one, W, Z);
  if (!rc) rc = tsr_pxtrsm('R', 'L', 'N', 'N', one, W, Z);
  if (!rc) rc = add((tsr_scalar_t){e - 1, 0}, X, (tsr_scalar_t){a_minus_e, 0}, Z);
  if (!rc) rc = add(one, Z, one, X);
  return tsr_matrix_flush_copies(W, rc);
}

/* X = 1.5 X - 0.5 X (XᴴX); then H = (XᴴA + (XᴴA)ᴴ) / 2 where H is wanted. */
static int finish(polar_t *P, tessera_matrix_t *H) {
  tessera_matrix_t *X = P->X, *Z = P->Z, *W = P->W;
  const tsr_scalar_t one = {1, 0}, zero = {0, 0}, half = {0.5, 0};
  int rc = tsr_pxgemm('C', 'N', one, X, X, zero, W);
  if (!rc) rc = tsr_pxgemm('N', 'N', one, X, W, zero, Z);
  if (!rc) rc = add((tsr_scalar_t){-0.5, 0}, Z, (tsr_scalar_t){1.5, 0}, X);
  if (!rc && H) rc = tsr_pxgemm('C', 'N', one, X, P->A, zero, W);
  if (!rc && H) rc = tsr_pxtranspose(W, H);
  if (!rc && H) rc = add(half, W, half, H);
  const int w = tessera_wait_all(X->ctx);
  return rc ? rc : w;
}

/* The steps from X_0: the scheduled QR and Cholesky steps, then Halley's until the change is
 * small (tested after the last scheduled step and each of Halley's: the only waits, each step's
 * tasks otherwise following the last one's as the flow orders them) or MOST_STEPS. Returns 0,
 * a positive value where an iterate was not finite (potrf's info, or a NaN in the change), or a
 * negative status; *steps the steps run. */
static int iterate(polar_t *P, int *steps) {
  const double tol_l = 5 * P->eps, tol = cbrt(tol_l);
  double l = P->eps;
  int rc = 0, k = 0;
  bool converged = false;
  while (!rc && k < MOST_STEPS && !converged) {
    double a = 3, b = 1, c = 3;
    const bool scheduled = l + tol_l < 1;
    if (scheduled) tsr_qdwh_weights(&l, &a, &b, &c);
    const double e = b / c;
    k++;
    if (c > 100) {
      rc = qr_step(P, e, (a - e) / sqrt(c), sqrt(c));
      continue;
    }
    rc = chol_step(P, a - e, c, e);
    if (rc || (scheduled && l + tol_l < 1)) continue;
    double one = 0, inf = 0;
    int64_t bad = -1;
    rc = norms(P->Z, &one, &inf, &bad);
    if (!rc && bad >= 0) rc = 1;
    if (!rc) converged = sqrt(one * inf) <= tol;
  }
  *steps = k;
  return rc;
}

int tsr_pxgepolar(tessera_matrix_t *A, tessera_matrix_t *H, int *steps) {
  tessera_context_t *ctx = A->ctx;
  const int64_t m = A->m, n = A->n;
  polar_t P = {.A = A, .eps = tsr_dtype_single(A->dtype) ? FLT_EPSILON : DBL_EPSILON};
  double one = 0, inf = 0;
  int64_t bad = -1;
  int rc = norms(A, &one, &inf, &bad), k = 0;
  if (!rc && bad >= 0)
    return tsr_error(ctx, (int)(bad + 1), "gepolar: A has a NaN or an infinity in column %lld",
                     (long long)(bad + 1));
  const double alpha = one > 0 && inf > 0 ? sqrt(one) * sqrt(inf) : 1;
  if (!rc) rc = tsr_matrix_like(A, m, n, false, &P.X);
  if (!rc) rc = tsr_matrix_like(A, m, n, false, &P.Z);
  if (!rc) rc = tsr_matrix_like(A, n, n, false, &P.W);
  if (!rc) rc = tsr_matrix_like(A, m + n, n, true, &P.Y);
  if (!rc) rc = tsr_matrix_like(A, m + n, n, true, &P.E);
  if (!rc) rc = tsr_pxconvert(0, A, 1 / alpha, P.X);
  if (!rc) rc = iterate(&P, &k);
  if (!rc) rc = finish(&P, H);
  if (!rc) rc = tsr_pxlacpy(P.X, A);
  const int w = tessera_wait_all(ctx);
  if (!rc) rc = w;
  tsr_qr_work_destroy(&P.we);
  tsr_qr_work_destroy(&P.wy);
  tsr_qr_destroy(&P.Q);
  tessera_matrix_t *made[5] = {P.X, P.Z, P.W, P.Y, P.E};
  for (int i = 0; i < 5; i++)
    if (made[i]) {
      const int d = tsr_matrix_drop(made[i]);
      if (!rc) rc = d;
    }
  if (steps) *steps = k;
  if (rc > 0) return tsr_error(ctx, (int)(n + 1), "gepolar: the iteration met a non-finite value");
  return rc;
}
