/* Reduction of a Hermitian matrix to band form, the first stage of the two-stage eigensolver
 * (as PLASMA's and SLATE's he2hb): the lower triangle on square tiles of T, a band of kd
 * subdiagonals, kd dividing T (the band as narrow as the bulge chasing wants, the tiles as
 * large as the devices want):
 *
 *   step k:  the kd columns from k kd below row r = (k + 1) kd, gathered from their tile column
 *            into column panel k of V and factored there by geqrt: Q_k R_k, Q_k = I - V_k T_k
 *            V_kᴴ; R_k (upper) is the band's block below the diagonal (read from V);
 *            the trailing matrix A22 = A(r .., r ..) becomes Q_kᴴ A22 Q_k by
 *              W = A22 V_k T_k                      (gemms over the tiles from row tile r / T)
 *              X = W - ½ V_k (T_kᴴ V_kᴴ W)
 *              A22 -= V_k Xᴴ + X V_kᴴ               (two gemms per lower tile)
 *
 * V_k and W are kept as a tile per row tile (T x kd), zero above row r: the products then span
 * whole tiles, and what lies above r in the first row tile (or left of it) meets only zeros and
 * is left as it was. 4/3 n³ flops (and up to T / n more), all in gemms but the panels'.
 * Diagonal tiles are kept whole (both triangles), which the first task on each does. V keeps
 * every step's reflectors for the back-transformation (geqrf.c's unmqr on V's column panels). */
#include <stdlib.h>

#include "linalg/loops/loops.h"
#include "linalg/loops/tasks.h"

static const tsr_scalar_t one = {1, 0}, minus_one = {-1, 0}, minus_half = {-0.5, 0};

static tsr_operand_t op(tessera_data_t *h, char o) {
  return (tsr_operand_t){h, o};
}

/* The workspaces' owners in A's flow (over processes; ignored on one): a tile row's V and W
 * tiles the process of A's diagonal tile there, the kd x kd ones that of A's first tile, the
 * partial products their process. Adopts them all in one collective call. */
static int adopt(const tessera_matrix_t *A, tsr_he2hb_t *H) {
  const int64_t nt = H->nt, parts = H->part ? nt * H->procs : 0, count = 2 * nt + 2 + parts;
  tessera_data_t **h = calloc((size_t)count, sizeof *h);
  int *owner = calloc((size_t)count, sizeof *owner);
  int rc = h && owner ? 0 : tsr_error(A->ctx, TESSERA_ERR_NOMEM, "band reduction: out of memory");
  for (int64_t i = 0; i < nt && !rc; i++) {
    h[i] = H->v[i], h[nt + i] = H->w[i];
    owner[i] = owner[nt + i] = tessera_matrix_tile_owner(A, i, i);
  }
  if (!rc) {
    h[2 * nt] = H->m, h[2 * nt + 1] = H->t;
    owner[2 * nt] = owner[2 * nt + 1] = tessera_matrix_tile_owner(A, 0, 0);
  }
  for (int64_t k = 0; k < parts && !rc; k++) {
    h[2 * nt + 2 + k] = H->part[k];
    owner[2 * nt + 2 + k] = (int)(k % H->procs);
  }
  if (!rc) rc = A->flow->ops->adopt(A->flow, (size_t)count, h, owner, &H->set);
  free(h), free(owner);
  return rc;
}

/* The process owning every tile of A, or -1 where several own some. */
static int sole_owner(const tessera_matrix_t *A) {
  const int first = tessera_matrix_tile_owner(A, 0, 0);
  for (int64_t j = 0; j < A->nt; j++)
    for (int64_t i = j; i < A->mt; i++)
      if (tessera_matrix_tile_owner(A, i, j) != first) return -1;
  return first;
}

int tsr_he2hb_create(const tessera_matrix_t *A, int kd, tsr_he2hb_t *H) {
  tessera_context_t *ctx = A->ctx;
  const int64_t n = A->n, nt = A->nt;
  const int procs = A->comm ? tessera_comm_size(A->comm) : 1;
  *H = (tsr_he2hb_t){.nt = nt, .kd = kd, .procs = procs};
  if (kd < 1 || A->nb % kd || A->mb != A->nb)
    return tsr_error(ctx, TESSERA_ERR_STATE,
                     "band reduction: a band of %d in tiles of %lld x %lld (the band must divide "
                     "the square tiles)",
                     kd, (long long)A->mb, (long long)A->nb);
  if (n <= kd) return 0; /* already a band of kd >= n - 1 subdiagonals */
  const size_t es = tessera_dtype_size(A->dtype);
  const int64_t steps = (n - kd + kd - 1) / kd;
  /* over processes V's panels dealt over them, workspaces where their first writer runs; all
   * on A's process where one holds every tile of A (its steps then move no tile) */
  const int sole = A->comm ? sole_owner(A) : -1;
  const tsr_dist_place_t dealt = {.on = sole, .work = true};
  int rc = A->comm
               ? tsr_matrix_create_distributed(ctx, A->comm, (tessera_grid_t){1, procs}, A->dtype,
                                               n - kd, steps * kd, n - kd, kd, &dealt, &H->V)
               : tsr_matrix_create_workspace(ctx, A->dtype, n - kd, steps * kd, n - kd, kd, &H->V);
  if (!rc) rc = tsr_qr_create(H->V, n - kd, kd, &H->Q);
  H->v = calloc((size_t)nt, sizeof *H->v);
  H->w = calloc((size_t)nt, sizeof *H->w);
  const bool parts = procs > 1 && sole < 0; /* W's partial products, a part per process */
  if (parts) H->part = calloc((size_t)(nt * procs), sizeof *H->part);
  if (!rc && (!H->v || !H->w || (parts && !H->part)))
    rc = tsr_error(ctx, TESSERA_ERR_NOMEM, "band reduction: out of memory for the workspaces");
  for (int64_t i = 0; i < nt && !rc; i++) {
    const size_t rows = (size_t)tsr_tile_m(A, i);
    rc = tessera_data_create_workspace(ctx, rows, (size_t)kd, es, &H->v[i]);
    if (!rc) rc = tessera_data_create_workspace(ctx, rows, (size_t)kd, es, &H->w[i]);
    for (int p = 0; p < procs && H->part && !rc; p++)
      rc = tessera_data_create_workspace(ctx, rows, (size_t)kd, es, &H->part[i * procs + p]);
  }
  if (!rc) rc = tessera_data_create_workspace(ctx, (size_t)kd, (size_t)kd, es, &H->m);
  if (!rc) rc = tessera_data_create_workspace(ctx, (size_t)kd, (size_t)kd, es, &H->t);
  if (!rc) rc = adopt(A, H);
  if (rc) tsr_he2hb_destroy(H);
  return rc;
}

/* h's received copies dropped, then h released. */
static void release(tsr_flow_t *f, tessera_data_t *h) {
  if (!h) return;
  (void)f->ops->flush(f, h);
  (void)tessera_data_release(f->ctx, h);
}

void tsr_he2hb_destroy(tsr_he2hb_t *H) {
  tsr_flow_t *f = H->V ? H->V->flow : NULL;
  for (int64_t i = 0; i < H->nt && f; i++) {
    if (H->v) release(f, H->v[i]);
    if (H->w) release(f, H->w[i]);
    for (int p = 0; p < H->procs && H->part; p++) release(f, H->part[i * H->procs + p]);
  }
  if (f) release(f, H->m), release(f, H->t);
  if (f && H->set) f->ops->forget(f, H->set);
  if (H->V) {
    tsr_qr_destroy(&H->Q);
    (void)tessera_matrix_destroy(H->V);
  }
  free(H->v), free(H->w), free(H->part);
  *H = (tsr_he2hb_t){0};
}

/* Where step k works: its first row r, the row tile i0 holding it and r's row in it, the
 * reflectors kb, the tile column kt holding the panel and the panel's column in it. */
typedef struct {
  int64_t r, i0, kt;
  int ro, kb, c0;
} step_t;

static step_t step_of(const tessera_matrix_t *A, int kd, int64_t k) {
  const int64_t r = (k + 1) * kd, t = A->nb, left = A->n - r;
  return (step_t){.r = r,
                  .i0 = r / t,
                  .kt = k * kd / t,
                  .ro = (int)(r % t),
                  .kb = (int)(left < kd ? left : kd),
                  .c0 = (int)(k * kd % t)};
}

/* Step k's panel into V's panel k, its QR there, and the reflectors as tiles v[i] (zero above
 * row r, the first kb x kb block unit lower triangular). */
static int panel(tessera_matrix_t *A, tsr_he2hb_t *H, int64_t k, int prio) {
  const tessera_dtype_t dt = A->dtype;
  const int64_t t = A->nb, kd = H->kd;
  const step_t s = step_of(A, H->kd, k);
  tessera_data_t *vp = tsr_tile(H->V, 0, k);
  int rc = 0;
  for (int64_t i = s.i0; i < A->nt && !rc; i++) { /* V's row = A's row - kd */
    const int from = i == s.i0 ? s.ro : 0, tag[3] = {(int)i, (int)k, (int)k};
    rc = tsr_task_lacpy_block(dt, A->flow, tsr_tile(A, i, s.kt), from, s.c0, vp,
                              (int)(i * t + from - kd), TESSERA_RW, tsr_tile_m(A, i) - from,
                              (int)kd, tag, prio);
  }
  if (!rc) rc = tsr_task_geqrt(H->V, k, H->V->m, H->Q.T[k], prio);
  const int m0 = tsr_tile_m(A, s.i0), below = m0 - s.ro - s.kb;
  const int vr = (int)(s.r - kd), tag[3] = {(int)s.i0, (int)k, (int)k};
  if (!rc) /* v[i0]: zeros, the unit lower block at row ro, the vectors below it */
    rc = tsr_task_identity(dt, A->flow, H->v[s.i0], 0, TESSERA_W, m0, (int)kd, (int)kd, tag, prio);
  if (!rc) rc = tsr_task_triangle(dt, A->flow, vp, vr, 'L', H->t, s.kb, tag, prio);
  if (!rc)
    rc = tsr_task_lacpy_rows(dt, A->flow, H->t, 0, H->v[s.i0], s.ro, TESSERA_RW, s.kb, s.kb, tag,
                             prio);
  if (!rc && below > 0)
    rc = tsr_task_lacpy_rows(dt, A->flow, vp, vr + s.kb, H->v[s.i0], s.ro + s.kb, TESSERA_RW, below,
                             s.kb, tag, prio);
  for (int64_t i = s.i0 + 1; i < A->nt && !rc; i++) {
    const int ti[3] = {(int)i, (int)k, (int)k};
    rc = tsr_task_lacpy_rows(dt, A->flow, vp, (int)(i * t - kd), H->v[i], 0, TESSERA_W,
                             tsr_tile_m(A, i), s.kb, ti, prio);
  }
  return rc;
}

/* X = W - ½ V (Tᴴ Vᴴ W) with W = A22 V T (zero above row r), into the tiles w[i]. */
static int products(tessera_matrix_t *A, tsr_he2hb_t *H, int64_t k, int prio) {
  const int64_t nt = A->nt;
  const step_t s = step_of(A, H->kd, k);
  const int kb = s.kb;
  tessera_data_t *t = H->Q.T[k];
  int rc = 0;
  const int procs = H->part ? H->procs : 1;
  bool *used = calloc((size_t)procs, sizeof *used);
  if (!used) return tsr_error(A->ctx, TESSERA_ERR_NOMEM, "band reduction: out of memory");
  for (int64_t i = s.i0; i < nt && !rc; i++) { /* W_i = Σ_j A(i, j) V_j, A(i, j) = A(j, i)ᴴ */
    const int mi = tsr_tile_m(A, i), tag[3] = {(int)i, (int)k, (int)k};
    /* over processes each product into the part of W_i of the process of A's tile, the parts
     * then summed into W_i */
    for (int p = 0; p < procs; p++) used[p] = false;
    for (int64_t j = s.i0; j < nt && !rc; j++) {
      const tsr_operand_t a = j <= i ? op(tsr_tile(A, i, j), 'N') : op(tsr_tile(A, j, i), 'C');
      const tsr_operand_t v = op(H->v[j], 'N');
      const int p = procs > 1 ? tsr_flow_owner(A->flow, a.h) : 0;
      tessera_data_t *into = procs > 1 ? H->part[i * procs + p] : H->w[i];
      rc = !used[p] ? tsr_task_gemm_new(A, a, v, mi, kb, tsr_tile_m(A, j), one, into, tag, prio)
                    : tsr_task_gemm(A, a, v, mi, kb, tsr_tile_m(A, j), one, one, op(into, 'N'), tag,
                                    prio);
      used[p] = true;
    }
    bool first = true;
    for (int p = 0; p < procs && procs > 1 && !rc; p++) {
      if (!used[p]) continue;
      tessera_data_t *part = H->part[i * procs + p];
      rc = first ? tsr_task_lacpy_block(A->dtype, A->flow, part, 0, 0, H->w[i], 0, TESSERA_W, mi,
                                        kb, tag, prio)
                 : tsr_task_geadd(A, part, one, one, H->w[i], mi, kb, tag, prio);
      first = false;
    }
    if (!rc && i == s.i0 && s.ro > 0) /* the rows above r: none of A22 */
      rc = tsr_task_identity(A->dtype, A->flow, H->w[i], 0, TESSERA_RW, s.ro, kb, kb, tag, prio);
    if (!rc)
      rc = tsr_task_trmm(A, 'R', 'U', 'N', 'N', one, op(t, 'N'), op(H->w[i], 'N'), mi, kb, tag,
                         prio);
  }
  const int tk[3] = {(int)k, (int)k, (int)k};
  for (int64_t i = s.i0; i < nt && !rc; i++) /* M = Vᴴ W */
    rc = i == s.i0 ? tsr_task_gemm_new(A, op(H->v[i], 'C'), op(H->w[i], 'N'), kb, kb,
                                       tsr_tile_m(A, i), one, H->m, tk, prio)
                   : tsr_task_gemm(A, op(H->v[i], 'C'), op(H->w[i], 'N'), kb, kb, tsr_tile_m(A, i),
                                   one, one, op(H->m, 'N'), tk, prio);
  if (!rc) /* M = Tᴴ M */
    rc = tsr_task_trmm(A, 'L', 'U', 'C', 'N', one, op(t, 'N'), op(H->m, 'N'), kb, kb, tk, prio);
  for (int64_t i = s.i0; i < nt && !rc; i++) {
    const int tag[3] = {(int)i, (int)k, (int)k};
    rc = tsr_task_gemm(A, op(H->v[i], 'N'), op(H->m, 'N'), tsr_tile_m(A, i), kb, kb, minus_half,
                       one, op(H->w[i], 'N'), tag, prio);
  }
  free(used);
  return rc;
}

/* A(i, j) -= V_i X_jᴴ + X_i V_jᴴ on the lower tiles from row tile i0 (diagonal tiles whole). */
static int update(tessera_matrix_t *A, tsr_he2hb_t *H, int64_t k) {
  const int64_t nt = A->nt;
  const step_t s = step_of(A, H->kd, k);
  int rc = 0;
  for (int64_t j = s.i0; j < nt && !rc; j++) {
    const int prio = tsr_panel_prio(nt, j, s.kt);
    for (int64_t i = j; i < nt && !rc; i++) {
      const int mi = tsr_tile_m(A, i), nj = tsr_tile_m(A, j), tag[3] = {(int)i, (int)j, (int)k};
      const tsr_operand_t c = op(tsr_tile(A, i, j), 'N');
      rc = tsr_task_gemm(A, op(H->v[i], 'N'), op(H->w[j], 'C'), mi, nj, s.kb, minus_one, one, c,
                         tag, prio);
      if (!rc)
        rc = tsr_task_gemm(A, op(H->w[i], 'N'), op(H->v[j], 'C'), mi, nj, s.kb, minus_one, one, c,
                           tag, prio);
    }
  }
  return rc;
}

int tsr_pxhe2hb(tessera_matrix_t *A, tsr_he2hb_t *H) {
  const int64_t nt = A->nt;
  int rc = 0;
  for (int64_t k = 0; k < nt && !rc; k++) {
    const int tag[3] = {(int)k, (int)k, 0};
    rc = tsr_task_hefill(A->dtype, A->flow, tsr_tile(A, k, k), tsr_tile_m(A, k), tag,
                         tsr_panel_prio(nt, k, 0));
  }
  for (int64_t k = 0; H->V && k < H->Q.steps && !rc; k++) {
    const step_t s = step_of(A, H->kd, k);
    const int prio = tsr_panel_prio(nt, s.i0, s.kt);
    rc = panel(A, H, k, prio);
    if (!rc) rc = products(A, H, k, prio);
    if (!rc) rc = update(A, H, k);
  }
  return rc;
}
