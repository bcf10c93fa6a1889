/* Reduction of a Hermitian matrix to band form, the first stage of the two-stage eigensolver
 * (as PLASMA's and SLATE's he2hb): on square tiles of nb, the lower triangle,
 *
 *   step k:  the tile column below the diagonal, A(k+1 .., k), gathered into column panel k of
 *            V and factored there by geqrt: A(k+1 .., k) = Q_k R_k, Q_k = I - V_k T_k V_kᴴ;
 *            R_k (upper) is the band's block A(k+1, k);
 *            the trailing matrix A22 = A(k+1 .., k+1 ..) becomes Q_kᴴ A22 Q_k by
 *              W = A22 V_k T_k                      (gemms over A22's tiles, both triangles)
 *              X = W - ½ V_k (T_kᴴ V_kᴴ W)
 *              A22 -= V_k Xᴴ + X V_kᴴ               (two gemms per lower tile)
 *
 * 4/3 n³ flops, all in gemms but the panels'. Diagonal tiles are kept whole (both triangles:
 * the products read them as full tiles), which the first task on each does. V keeps every
 * step's reflectors for the back-transformation (geqrf.c's unmqr on V's column panels). */
#include <stdlib.h>

#include "linalg/loops/loops.h"
#include "linalg/loops/tasks.h"

static const tsr_scalar_t one = {1, 0}, minus_one = {-1, 0}, minus_half = {-0.5, 0};

static tsr_operand_t op(tessera_data_t *h, char o) {
  return (tsr_operand_t){h, o};
}

int tsr_he2hb_create(const tessera_matrix_t *A, tsr_he2hb_t *H) {
  tessera_context_t *ctx = A->ctx;
  const int64_t n = A->n, nb = A->nb, nt = A->nt;
  *H = (tsr_he2hb_t){.nt = nt};
  if (nt <= 1) return 0; /* one tile: already a band of nb >= n - 1 subdiagonals */
  const size_t es = tessera_dtype_size(A->dtype);
  int rc = tessera_matrix_create(ctx, A->dtype, n - nb, (nt - 1) * nb, n - nb, nb, &H->V);
  if (!rc) rc = tsr_qr_create(H->V, n - nb, nb, &H->Q);
  H->v = calloc((size_t)nt, sizeof *H->v);
  H->w = calloc((size_t)nt, sizeof *H->w);
  if (!rc && (!H->v || !H->w))
    rc = tsr_error(ctx, TESSERA_ERR_NOMEM, "band reduction: out of memory for the workspaces");
  for (int64_t i = 1; i < nt && !rc; i++) {
    rc = tessera_data_create_workspace(ctx, (size_t)tsr_tile_m(A, i), (size_t)nb, es, &H->v[i]);
    if (!rc)
      rc = tessera_data_create_workspace(ctx, (size_t)tsr_tile_m(A, i), (size_t)nb, es, &H->w[i]);
  }
  if (!rc) rc = tessera_data_create_workspace(ctx, (size_t)nb, (size_t)nb, es, &H->m);
  if (rc) tsr_he2hb_destroy(H);
  return rc;
}

void tsr_he2hb_destroy(tsr_he2hb_t *H) {
  const tessera_context_t *c = H->V ? H->V->ctx : NULL;
  for (int64_t i = 1; i < H->nt && c; i++) {
    if (H->v && H->v[i]) (void)tessera_data_release((tessera_context_t *)c, H->v[i]);
    if (H->w && H->w[i]) (void)tessera_data_release((tessera_context_t *)c, H->w[i]);
  }
  if (H->m && c) (void)tessera_data_release((tessera_context_t *)c, H->m);
  if (H->V) {
    tsr_qr_destroy(&H->Q);
    (void)tessera_matrix_destroy(H->V);
  }
  free(H->v);
  free(H->w);
  *H = (tsr_he2hb_t){0};
}

/* Step k's panel: A(k+1 .., k) into V's panel k, its QR there, R back into A(k+1, k), and the
 * reflectors as tiles v[i] (the first unit lower triangular). */
static int panel(tessera_matrix_t *A, tsr_he2hb_t *H, int64_t k, int prio) {
  const tessera_dtype_t dt = A->dtype;
  tessera_context_t *ctx = A->ctx;
  const int nb = (int)A->nb, kb = tsr_tile_m(A, k + 1);
  tessera_data_t *vp = tsr_tile(H->V, 0, k);
  int rc = 0;
  for (int64_t i = k + 1; i < A->nt && !rc; i++) {
    const int tag[3] = {(int)i, (int)k, (int)k};
    rc = tsr_task_lacpy_rows(dt, ctx, tsr_tile(A, i, k), 0, vp, (int)(i - 1) * nb, TESSERA_RW,
                             tsr_tile_m(A, i), nb, tag, prio);
  }
  if (!rc) rc = tsr_task_geqrt(H->V, k, H->Q.T[k], prio);
  const int tag[3] = {(int)(k + 1), (int)k, (int)k};
  if (!rc)
    rc = tsr_task_lacpy_rows(dt, ctx, vp, (int)k * nb, tsr_tile(A, k + 1, k), 0, TESSERA_W, kb, nb,
                             tag, prio);
  if (!rc) rc = tsr_task_triangle(dt, ctx, vp, (int)k * nb, 'L', H->v[k + 1], kb, tag, prio);
  for (int64_t i = k + 2; i < A->nt && !rc; i++) {
    const int ti[3] = {(int)i, (int)k, (int)k};
    rc = tsr_task_lacpy_rows(dt, ctx, vp, (int)(i - 1) * nb, H->v[i], 0, TESSERA_W,
                             tsr_tile_m(A, i), kb, ti, prio);
  }
  return rc;
}

/* X = W - ½ V (Tᴴ Vᴴ W) with W = A22 V T, into the tiles w[i] (i > k). */
static int products(tessera_matrix_t *A, tsr_he2hb_t *H, int64_t k, int prio) {
  const int64_t nt = A->nt;
  const int kb = tsr_tile_m(A, k + 1);
  tessera_data_t *t = H->Q.T[k];
  int rc = 0;
  for (int64_t i = k + 1; i < nt && !rc; i++) { /* W_i = Σ_j A(i, j) V_j, A(i, j) = A(j, i)ᴴ */
    const int mi = tsr_tile_m(A, i), tag[3] = {(int)i, (int)k, (int)k};
    for (int64_t j = k + 1; j < nt && !rc; j++) {
      const tsr_operand_t a = j <= i ? op(tsr_tile(A, i, j), 'N') : op(tsr_tile(A, j, i), 'C');
      const tsr_operand_t v = op(H->v[j], 'N');
      rc = j == k + 1
               ? tsr_task_gemm_new(A, a, v, mi, kb, tsr_tile_m(A, j), one, H->w[i], tag, prio)
               : tsr_task_gemm(A, a, v, mi, kb, tsr_tile_m(A, j), one, one, op(H->w[i], 'N'), tag,
                               prio);
    }
    if (!rc)
      rc = tsr_task_trmm(A, 'R', 'U', 'N', 'N', one, op(t, 'N'), op(H->w[i], 'N'), mi, kb, tag,
                         prio);
  }
  const int tk[3] = {(int)k, (int)k, (int)k};
  for (int64_t i = k + 1; i < nt && !rc; i++) /* M = Vᴴ W */
    rc = i == k + 1 ? tsr_task_gemm_new(A, op(H->v[i], 'C'), op(H->w[i], 'N'), kb, kb,
                                        tsr_tile_m(A, i), one, H->m, tk, prio)
                    : tsr_task_gemm(A, op(H->v[i], 'C'), op(H->w[i], 'N'), kb, kb, tsr_tile_m(A, i),
                                    one, one, op(H->m, 'N'), tk, prio);
  if (!rc) /* M = Tᴴ M */
    rc = tsr_task_trmm(A, 'L', 'U', 'C', 'N', one, op(t, 'N'), op(H->m, 'N'), kb, kb, tk, prio);
  for (int64_t i = k + 1; i < nt && !rc; i++) {
    const int tag[3] = {(int)i, (int)k, (int)k};
    rc = tsr_task_gemm(A, op(H->v[i], 'N'), op(H->m, 'N'), tsr_tile_m(A, i), kb, kb, minus_half,
                       one, op(H->w[i], 'N'), tag, prio);
  }
  return rc;
}

/* A(i, j) -= V_i X_jᴴ + X_i V_jᴴ on the lower tiles of A22 (diagonal tiles whole). */
static int update(tessera_matrix_t *A, tsr_he2hb_t *H, int64_t k) {
  const int64_t nt = A->nt;
  const int kb = tsr_tile_m(A, k + 1);
  int rc = 0;
  for (int64_t j = k + 1; j < nt && !rc; j++) {
    const int prio = tsr_panel_prio(nt, j, k);
    for (int64_t i = j; i < nt && !rc; i++) {
      const int mi = tsr_tile_m(A, i), nj = tsr_tile_m(A, j), tag[3] = {(int)i, (int)j, (int)k};
      const tsr_operand_t c = op(tsr_tile(A, i, j), 'N');
      rc = tsr_task_gemm(A, op(H->v[i], 'N'), op(H->w[j], 'C'), mi, nj, kb, minus_one, one, c, tag,
                         prio);
      if (!rc)
        rc = tsr_task_gemm(A, op(H->w[i], 'N'), op(H->v[j], 'C'), mi, nj, kb, minus_one, one, c,
                           tag, prio);
    }
  }
  return rc;
}

int tsr_pxhb2st_apply(tessera_matrix_t *E, int kd, tessera_data_t *v, tessera_data_t *tau) {
  int rc = 0;
  for (int64_t j = 0; j < E->nt && !rc; j++) {
    const int tag[3] = {0, (int)j, 0};
    rc = tsr_task_hb2st_apply(E->dtype, E->ctx, v, tau, tsr_tile(E, 0, j), (int)E->m, kd,
                              tsr_tile_n(E, j), tag, 0);
  }
  return rc;
}

int tsr_pxhe2hb(tessera_matrix_t *A, tsr_he2hb_t *H) {
  const int64_t nt = A->nt;
  int rc = 0;
  for (int64_t k = 0; k < nt && !rc; k++) {
    const int tag[3] = {(int)k, (int)k, 0};
    rc = tsr_task_hefill(A->dtype, A->ctx, tsr_tile(A, k, k), tsr_tile_m(A, k), tag,
                         tsr_panel_prio(nt, k, 0));
  }
  for (int64_t k = 0; k + 1 < nt && !rc; k++) {
    const int prio = tsr_panel_prio(nt, k + 1, k);
    rc = panel(A, H, k, prio);
    if (!rc) rc = products(A, H, k, prio);
    if (!rc) rc = update(A, H, k);
  }
  return rc;
}
