/* The two stages over processes (front.h: tsr_eig_two_stages):
 *
 *   1. the root's working copy of A (tsr_eig_working_copy: NaN scan, lower triangle, scaling)
 *      in tiles of the band's multiple t, dealt over the context's grid where the policy deals
 *      the band reduction (tsr_eig_band_dealt: the CPU forms), else all the root's (its
 *      accelerator's);
 *   2. the band reduction (loops/he2hb.c) on those tiles, every process running the tasks of
 *      the tiles it owns, its reflectors V dealt over the processes by panels (or the root's);
 *   3. into the root's arrays: the diagonal tiles (the band's diagonal blocks) and the blocks
 *      below them (each R_k, from V's panel k);
 *   4. the bulge chasing and the tridiagonal eigensolver on the root (tsr_eig_band_solve), the
 *      other processes waiting with it.
 *
 * With vectors stage 1's reflectors stay where the band reduction left them, for the caller's
 * back-transformations over the processes (eig_dist.c), with Q2's from the root. The root-only
 * parts run through tsr_root_run, so every process returns the same status. */
#include <stdlib.h>
#include <string.h>

#include "distributed/dist.h"
#include "linalg/front/front.h"
#include "linalg/loops/loops.h"
#include "linalg/loops/tasks.h"

enum { ROOT = 0 };

/* The call, the root's working state, and what the processes agree on. */
typedef struct {
  tsr_eig_call_t x;
  tessera_comm_t *comm;
  tsr_eig_back_t *out; /* with vectors: Q2's reflectors */
  tsr_he2hb_t *H;      /* with vectors: stage 1's, kept for the caller */
  void *h;             /* the root's working copy (n x n, leading dimension ldh): A itself
                          where the GPU forms run with vectors, which overwrite it whole */
  int64_t ldh;
  void *dg;         /* the root's copy of the diagonal tiles (t x n) */
  void *rk;         /* the root's copy of the blocks below them (nb x n) */
  double s;         /* the working copy's scaling */
  int64_t sizes[3]; /* the band nb, the tile t and whether the band reduction is dealt
                       over the processes: the root's choice */
} call_t;

/* The root's working copy and its choice of band and tiles (tsr_root_run). */
static int prepare_call(void *p) {
  call_t *c = p;
  const size_t es = tessera_dtype_size(c->x.dt);
  tessera_scope_t scope;
  const bool gpu = tsr_eig_gpu(c->x.ctx, c->x.job, c->x.dt, c->x.n, &scope);
  /* in place as on one process (eig.c): no n² copy made, and A, pinned by the caller for the
   * eigenvectors, goes to the accelerators at the link's speed */
  const bool in_place = gpu && c->x.job == TESSERA_VECTORS;
  c->ldh = in_place ? c->x.lda : c->x.n;
  c->h = in_place ? c->x.a : malloc((size_t)(c->x.n * c->x.n) * es);
  if (!c->h)
    return tsr_error(c->x.ctx, TESSERA_ERR_NOMEM, "%s: out of memory for a copy of A (n = %lld)",
                     c->x.f, (long long)c->x.n);
  const int64_t bad = tsr_eig_working_copy(c->x.ctx, c->x.f, c->x.job, c->x.uplo, c->x.dt, c->x.n,
                                           c->x.a, c->x.lda, c->x.w, c->h, c->ldh, &c->s);
  const int nb = tsr_eig_band(c->x.ctx, c->x.job, gpu, c->x.n);
  c->sizes[0] = nb;
  c->sizes[1] = tsr_eig_band_tile(gpu, c->x.n, nb);
  c->sizes[2] = tsr_eig_band_dealt(gpu);
  return (int)bad;
}

/* The root's copies (tiles of M, in the root's array) of `count` handles src[k], the rows[k] x
 * cols[k] block of each (rows[k] x rows[k] where cols is NULL) from row from[k] (0 where from
 * is NULL) into tile (0, k) of M, by tasks of flow f; the sources flushed, nothing waited for. */
static int to_root(tsr_flow_t *f, tessera_matrix_t *M, tessera_data_t *const *src, const int *rows,
                   const int *cols, const int64_t *from, int64_t count) {
  int rc = 0;
  for (int64_t k = 0; k < count && !rc; k++) {
    const int tag[3] = {(int)k, 0, 0};
    rc = tsr_task_lacpy_block(M->dtype, f, src[k], from ? (int)from[k] : 0, 0, tsr_tile(M, 0, k), 0,
                              TESSERA_W, rows[k], cols ? cols[k] : rows[k], tag, 0);
  }
  for (int64_t k = 0; k < count && !rc; k++) rc = f->ops->flush(f, src[k]);
  return rc;
}

/* The copies to_root inserted into D and R (NULL where none) waited for, once, and flushed into
 * the root's arrays: the same status on every process. */
static int on_root(tessera_context_t *ctx, tessera_comm_t *comm, tessera_matrix_t *D,
                   tessera_matrix_t *R, int rc) {
  const int waited = tessera_wait_all(ctx);
  if (!rc) rc = waited;
  const bool root = tessera_comm_rank(comm) == ROOT;
  if (!rc && root && D) rc = tsr_matrix_flush(D);
  if (!rc && root && R) rc = tsr_matrix_flush(R);
  return tsr_dist_agree(comm, rc);
}

/* The root's working copy h (n x n, leading dimension ldh) in tiles of t, its lower triangle, dealt
 * over comm's processes (the context's grid where comm is the context's, else a fitted one) or,
 * unless `dealt`, all the root's: *home the root's array as a matrix, *A the copy (the copies
 * inserted, not waited for). */
static int deal_copy(tessera_context_t *ctx, tessera_comm_t *comm, tessera_dtype_t dt, int64_t n,
                     int64_t t, void *h, int64_t ldh, bool dealt, tessera_matrix_t **home,
                     tessera_matrix_t **A) {
  const tessera_grid_t g = comm == tessera_context_comm(ctx)
                               ? tessera_context_grid(ctx)
                               : tessera_grid_fitted(tessera_comm_size(comm));
  const bool root = tessera_comm_rank(comm) == ROOT;
  const tsr_dist_place_t at = {.part = 'L', .on = ROOT, .mine = root ? h : NULL, .ld = ldh};
  *A = NULL;
  int rc = tsr_matrix_create_distributed(ctx, comm, g, dt, n, n, t, t, &at, home);
  if (!rc) rc = tsr_matrix_dealt(*home, g, t, 'L', dealt ? -1 : ROOT, true, A);
  return rc;
}

/* Stage 1 on the dealt copy of the root's working copy, the band's blocks in the root's arrays
 * c->dg (the diagonal tiles) and c->rk (R_k below them, from the panels of V); with c->H
 * (vectors) the reflectors kept there, else dropped. */
static int dealt_stage1(call_t *c) {
  tessera_context_t *ctx = c->x.ctx;
  const int64_t n = c->x.n, nb = c->sizes[0], t = c->sizes[1];
  const bool root = tessera_comm_rank(c->comm) == ROOT;
  const size_t es = tessera_dtype_size(c->x.dt);
  tessera_matrix_t *A = NULL, *home = NULL, *D = NULL, *R = NULL;
  tsr_he2hb_t H = {0};
  /* the GPU forms' copies and tasks within each process's accelerators, as on one process: a
   * CPU worker taking a copy into a tile, or a block of one to the root's arrays, would bring
   * whole tiles to the host */
  tessera_scope_t scope;
  const tessera_scope_t outer = tessera_get_scope(ctx);
  const bool gpu = tsr_eig_gpu(ctx, c->x.job, c->x.dt, n, &scope);
  int rc = gpu ? tsr_dist_agree(c->comm, tessera_set_scope(ctx, scope)) : 0;
  if (!rc) rc = deal_copy(ctx, c->comm, c->x.dt, n, t, c->h, c->ldh, c->sizes[2], &home, &A);
  if (rc) {
    if (home) (void)tessera_matrix_destroy(home);
    (void)tessera_set_scope(ctx, outer);
    return rc;
  }
  rc = tsr_he2hb_create(A, (int)nb, &H);
  if (!rc) rc = tsr_pxhe2hb(A, &H);
  /* the diagonal tiles to the root */
  const size_t count = (size_t)A->nt + (size_t)H.Q.steps + 1;
  int *rows = calloc(count, sizeof *rows), *cols = calloc(count, sizeof *cols);
  int64_t *from = calloc(count, sizeof *from);
  tessera_data_t **src = calloc(count, sizeof *src);
  if (!rc && (!rows || !cols || !from || !src))
    rc = tsr_error(ctx, TESSERA_ERR_NOMEM, "syevd: out of memory");
  if (root && !rc && !(c->dg = malloc((size_t)(t * n) * es))) rc = TESSERA_ERR_NOMEM;
  if (root && !rc && H.V && !(c->rk = calloc((size_t)(nb * n), es))) rc = TESSERA_ERR_NOMEM;
  rc = tsr_dist_agree_on(ctx, A->comm, rc, "a process is out of memory for the band reduction");
  /* both gathers inserted before one wait: the diagonal tiles, and R_k, V's panel k from its
   * row k nb (V's row r is A's row r + nb), its rows there (nb, or fewer at the end) by the
   * panel's columns within A's n */
  const int64_t vrows = n - nb, steps = H.Q.steps;
  if (!rc) rc = tsr_root_matrix(A, t, n, t, t, c->dg, t, TESSERA_HOST_NODE, &D);
  if (!rc && H.V)
    rc = tsr_root_matrix(H.V, nb, steps * nb, nb, nb, c->rk, nb, TESSERA_HOST_NODE, &R);
  for (int64_t i = 0; i < A->nt && !rc; i++) src[i] = tsr_tile(A, i, i), rows[i] = tsr_tile_m(A, i);
  int copied = rc ? rc : to_root(A->flow, D, src, rows, NULL, NULL, A->nt);
  for (int64_t k = 0; k < steps && !copied && H.V; k++) {
    src[k] = tsr_tile(H.V, 0, k), from[k] = k * nb;
    rows[k] = (int)(vrows - k * nb < nb ? vrows - k * nb : nb);
    cols[k] = (int)(tsr_tile_n(H.V, k) < n - k * nb ? tsr_tile_n(H.V, k) : n - k * nb);
  }
  if (!copied && H.V) copied = to_root(H.V->flow, R, src, rows, cols, from, steps);
  if (!rc) rc = on_root(ctx, A->comm, D, R, copied);
  free(rows), free(cols), free(from), free(src);
  if (R) (void)tessera_matrix_destroy(R);
  if (D) (void)tessera_matrix_destroy(D);
  if (!rc && c->H)
    *c->H = H;
  else
    tsr_he2hb_destroy(&H);
  const int w = tessera_wait_all(ctx);
  if (A) (void)tessera_matrix_destroy(A);
  if (home) (void)tessera_matrix_destroy(home);
  (void)tessera_set_scope(ctx, outer);
  return rc ? rc : w;
}

/* The band from the root's diagonal tiles and the blocks R_k below them, then stages 2 and 3
 * (tsr_root_run). */
static int band_call(void *p) {
  call_t *c = p;
  const size_t es = tessera_dtype_size(c->x.dt);
  const int64_t n = c->x.n, nb = c->sizes[0], t = c->sizes[1];
  char *ab = calloc((size_t)(n * (nb + 1)), es);
  if (!ab) return tsr_error(c->x.ctx, TESSERA_ERR_NOMEM, "syevd: out of memory for the band");
  for (int64_t j = 0; j < n; j++) {
    const int64_t k = j / nb, below = (k + 1) * nb;
    for (int64_t i = j; i < n && i <= j + nb; i++) {
      const char *from = i < below ? (const char *)c->dg + (size_t)(i % t + j * t) * es
                                   : (const char *)c->rk + (size_t)(i - below + j * nb) * es;
      memcpy(ab + (size_t)(i - j + j * (nb + 1)) * es, from, es);
    }
  }
  tsr_eig_back_t *out = c->x.job == TESSERA_VECTORS ? c->out : NULL;
  return tsr_eig_band_solve(c->x.ctx, c->x.job, c->x.dt, n, (int)nb, ab, c->s, c->x.a, c->x.lda,
                            c->x.w, out);
}

int tsr_eig_two_stages(const tsr_eig_call_t *call, tessera_comm_t *comm, tsr_eig_back_t *out,
                       tsr_he2hb_t *H) {
  call_t c = {
      .x = *call, .comm = comm, .out = out, .H = call->job == TESSERA_VECTORS ? H : NULL, .s = 1};
  tessera_context_t *ctx = call->ctx;
  int rc = tsr_root_run(ctx, comm, call->f, prepare_call, &c);
  if (!rc) rc = tsr_root_broadcast(ctx, comm, c.sizes, sizeof c.sizes);
  if (!rc) rc = dealt_stage1(&c);
  if (c.h != call->a) free(c.h);
  c.h = NULL;
  if (!rc) rc = tsr_root_run(ctx, comm, call->f, band_call, &c);
  free(c.dg), free(c.rk);
  return rc;
}
