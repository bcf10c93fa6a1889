/* The two-stage eigensolver's stage loops (eig_stages.h): the band reduction into the band's host
 * array and its back-transformation Q1 (the QR's unmqr tasks on its reflectors), the bulge
 * chasing (on a GPU as one task, else a pipeline of tasks on the CPU workers, else on this
 * thread) and its back-transformation Q2 (hb2st_apply tasks on column panels), LAPACK's
 * tridiagonal eigensolver on this thread. */
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/hb2st.h"
#include "kernels/kernels.h"
#include "linalg/loops/eig_stages.h"
#include "linalg/loops/policy.h"
#include "linalg/loops/tasks.h"
#include "runtime/context.h"
#include "tessera/linalg.h"

void tsr_eig_work_free(tessera_context_t *ctx, tsr_eig_work_t *b) {
  if (b->pinned) tsr_host_unpin(ctx, b->h);
  if (b->E) (void)tessera_matrix_destroy(b->E);
  if (b->eh) (void)tessera_data_release(ctx, b->eh);
  if (!b->in_place) free(b->h);
  free(b->ab), free(b->d), free(b->e), free(b->z), free(b->v), free(b->tau);
}

/* The band's blocks after stage 1, by copy tasks where the tiles are: the diagonal blocks
 * (kd x kd, A's block k at rows k kd of D, n x kd) and the R_k below them (the top of V's panel
 * k at rows k kd of R) — a few kd x n elements home, where the working copy's and V's whole
 * contents would be n² each. */
static int band_blocks(tessera_matrix_t *A, const tsr_he2hb_t *H, int nb, void *dh, void *rh) {
  tessera_context_t *ctx = A->ctx;
  const tessera_dtype_t dt = A->dtype;
  const size_t es = tessera_dtype_size(dt);
  const int64_t n = A->n, t = A->nb;
  tessera_data_t *D = NULL, *R = NULL;
  int rc =
      tessera_data_register(ctx, TESSERA_HOST_NODE, dh, (size_t)n, (size_t)nb, (size_t)n, es, &D);
  if (!rc && H->V)
    rc =
        tessera_data_register(ctx, TESSERA_HOST_NODE, rh, (size_t)n, (size_t)nb, (size_t)n, es, &R);
  for (int64_t r = 0; r < n && !rc; r += nb) {
    const int kb = (int)(n - r < nb ? n - r : nb), at = (int)(r % t),
              tag[3] = {(int)(r / nb), 0, 0};
    rc = tsr_task_lacpy_block(dt, tsr_context_local_flow(ctx), tsr_tile(A, r / t, r / t), at, at, D,
                              (int)r, TESSERA_RW, kb, kb, tag, 0);
    const int64_t k = r / nb, below = n - r - nb; /* R_k's rows: those below the block */
    if (!rc && H->V && below > 0 && k < H->V->nt)
      rc = tsr_task_lacpy_rows(dt, tsr_context_local_flow(ctx), tsr_tile(H->V, 0, k), (int)r, R,
                               (int)r, TESSERA_RW, (int)(below < nb ? below : nb), nb, tag, 0);
  }
  if (!rc) rc = tessera_wait_all(ctx);
  const int s = tessera_data_release(ctx, D) | (R ? tessera_data_release(ctx, R) : 0);
  return rc ? rc : s;
}

/* A's diagonal tiles replaced by workspace copies (lacpy tasks), the tiles themselves into
 * orig[k] (dropped after A). */
static int diagonal_copies(tessera_matrix_t *A, tessera_data_t **orig) {
  int rc = 0;
  for (int64_t k = 0; k < A->nt && !rc; k++) {
    const int m = tsr_tile_m(A, k), tag[3] = {(int)k, (int)k, 0};
    tessera_data_t *w = NULL;
    rc = tessera_data_create_workspace(A->ctx, (size_t)m, (size_t)m, tessera_dtype_size(A->dtype),
                                       &w);
    if (!rc)
      rc = tsr_task_lacpy_block(A->dtype, A->flow, tsr_tile(A, k, k), 0, 0, w, 0, TESSERA_W, m, m,
                                tag, 0);
    if (w) orig[k] = tsr_tile(A, k, k), A->tiles[k + k * A->mt] = w;
  }
  return rc;
}

/* Stage 1 on the working copy b->h, through a view of it (dropped afterwards: its contents are
 * not needed again): the band into b->ab (kd = nb subdiagonals: its diagonal blocks from A, the
 * blocks below them from the top of V's panels), the reflectors kept in H. */
int tsr_eig_reduce_to_band(tessera_context_t *ctx, tessera_dtype_t dt, int64_t n, int nb,
                           tsr_eig_work_t *b, tsr_he2hb_t *H) {
  const size_t es = tessera_dtype_size(dt);
  const int64_t t = tsr_eig_band_tile(b->gpu, n, nb);
  tessera_matrix_t *A = NULL;
  char *dh = malloc((size_t)(n * nb) * es), *rh = malloc((size_t)(n * nb) * es);
  tessera_data_t **orig = calloc((size_t)((n + t - 1) / t), sizeof *orig);
  int rc =
      dh && rh && orig ? 0 : tsr_error(ctx, TESSERA_ERR_NOMEM, "syevd: out of memory for the band");
  if (!rc) rc = tessera_matrix_view(ctx, dt, n, n, t, t, b->h, b->ldh, &A);
  if (!rc && b->values && b->in_place) rc = diagonal_copies(A, orig);
  if (!rc) rc = tsr_he2hb_create(A, nb, H);
  if (!rc) rc = tsr_pxhe2hb(A, H);
  if (!rc) rc = band_blocks(A, H, nb, dh, rh);
  if (A) {
    if (rc) (void)tessera_wait_all(ctx);
    const int s = tsr_matrix_drop(A);
    if (!rc) rc = s;
  }
  for (int64_t k = 0; k < (n + t - 1) / t; k++) /* A's own diagonal tiles, read by the copies */
    if (orig[k]) {
      const int s = tsr_data_drop(ctx, orig[k]);
      if (!rc) rc = s;
    }
  free(orig);
  for (int64_t j = 0; j < n && !rc; j++) {
    const int64_t k = j / nb, c = j - k * nb, below = (k + 1) * nb; /* R_k from row `below` */
    for (int64_t i = j; i < n && i <= j + nb; i++) {
      const char *from =
          i < below ? dh + tsr_eig_at(i, c, n) * es : rh + tsr_eig_at(i - nb, c, n) * es;
      memcpy((char *)b->ab + tsr_eig_at(i - j, j, nb + 1) * es, from, es);
    }
  }
  free(dh);
  free(rh);
  return rc;
}

/* E = Q1 E on rows nb .. n - 1 of b->h (E, n x m): the first stage's reflectors by unmqr
 * tasks, on the one tile Q2 left (b->E: no copy home and back between the two) or on column
 * panels of a view. */
int tsr_eig_back_band(tessera_context_t *ctx, tessera_dtype_t dt, int64_t n, int64_t m, int nb,
                      tsr_eig_work_t *b, tsr_he2hb_t *H) {
  tessera_matrix_t *C = b->E;
  b->E = NULL;
  if (!H->V) return C ? tessera_matrix_destroy(C) : 0;
  const size_t es = tessera_dtype_size(dt);
  tsr_qr_work_t wk = {0};
  tsr_qr_pairs_t P = {0};
  char *rows = (char *)b->h + (size_t)nb * es;
  int rc = C ? 0
             : tessera_matrix_view(ctx, dt, n - nb, m, n - nb,
                                   tsr_eig_panel_columns(b->gpu, b->workers, n), rows, b->ldh, &C);
  /* the GPU forms by pairs of steps: products of inner dimension 2 nb, half the passes over E */
  const int64_t width = b->gpu ? 2 * (int64_t)nb : nb;
  if (!rc) rc = tsr_qr_work_create(C, width, &wk);
  if (!rc) wk.row = C->m - (n - nb); /* Q2's tile holds E's rows from 0, the view from nb */
  if (!rc && b->gpu) rc = tsr_qr_pairs_create(H->V, &H->Q, &P);
  if (!rc)
    rc = b->gpu ? tsr_pxunmqr_pairs('N', H->V, &H->Q, C, &wk, &P)
                : tsr_pxunmqr('N', H->V, &H->Q, C, &wk);
  if (!rc) rc = tessera_wait_all(ctx);
  tsr_qr_pairs_destroy(&P);
  tsr_qr_work_destroy(&wk);
  if (C) {
    const int s = tessera_matrix_destroy(C);
    if (!rc) rc = s;
  }
  return rc;
}

/* E = Q2 E (b->h, n x m) with the reflectors b->v, b->tau (lay): tasks on column panels of E
 * within b->scope where the context has CPU workers or the GPU forms run, else on this thread. */
int tsr_eig_back_tridiagonal(tessera_context_t *ctx, tessera_dtype_t dt, int64_t n, int64_t m,
                             int nb, tsr_eig_work_t *b, const tsr_hb2st_layout_t *lay,
                             int workers) {
  tsr_hb2st_apply_args_t aa = {.dtype = dt, .n = (int)n, .kd = nb, .m = (int)m};
  if (workers == 0 && !b->gpu) {
    void *ap[3] = {b->v, b->tau, b->h};
    const size_t al[3] = {1, 1, (size_t)b->ldh};
    const int rc =
        tsr_run_inline(ctx, TESSERA_HOST_NODE, NULL, &tsr_kernel_hb2st_apply, &aa, 3, ap, al);
    return rc > 0 ? tsr_error(ctx, TESSERA_ERR_KERNEL, "syevd: Q2's application failed") : rc;
  }
  const size_t es = tessera_dtype_size(dt);
  tessera_matrix_t *E = b->E; /* the merges' Q where they left it, else a view of panels */
  const bool kept = E != NULL;
  tessera_data_t *v = b->vh, *tau = b->tauh; /* the device's, or the host arrays' */
  const size_t nv = (size_t)lay->nv + 1, nt = (size_t)lay->ntau + 1;
  b->E = NULL;
  int rc = E ? 0
             : tessera_matrix_view(ctx, dt, n, m, n, tsr_eig_panel_columns(b->gpu, b->workers, n),
                                   b->h, b->ldh, &E);
  if (!rc && !v) rc = tessera_data_register(ctx, TESSERA_HOST_NODE, b->v, nv, 1, nv, es, &v);
  if (!rc && !tau) rc = tessera_data_register(ctx, TESSERA_HOST_NODE, b->tau, nt, 1, nt, es, &tau);
  if (!rc) rc = tsr_pxhb2st_apply(E, nb, v, tau, b->scope);
  if (!rc) rc = tessera_wait_all(ctx);
  const int s = (v && v != b->vh ? tessera_data_release(ctx, v) : 0) |
                (tau && tau != b->tauh ? tessera_data_release(ctx, tau) : 0);
  int d = 0;
  if (E && kept && !rc)
    b->E = E; /* the merges' tile stays where it is for Q1 (tsr_eig_back_band) */
  else if (E)
    d = tessera_matrix_destroy(E);
  return rc ? rc : s ? s : d;
}

/* The bulge chasing as one task on the accelerators (the GPU forms): T into b->d,
 * b->e; the reflectors into handles b->vh, b->tauh, which stay on the device for Q2's
 * application and are freed without a copy home: workspaces, or where the back-transformations
 * run elsewhere (b->defer) arrays of the first accelerator's own, which other processes read. */
static int gpu_chase(tessera_context_t *ctx, tessera_dtype_t dt, int64_t n, int nb,
                     tsr_eig_work_t *b, const tsr_hb2st_layout_t *lay) {
  const size_t es = tessera_dtype_size(dt);
  size_t vr, vc, tr, tc;
  tsr_eig_array_shape(lay->nv + 1, es, &vr, &vc);
  tsr_eig_array_shape(lay->ntau + 1, es, &tr, &tc);
  tessera_data_t *ab = NULL, *d = NULL, *e = NULL;
  int rc = tessera_scope_nodes(ctx, b->scope, &b->vnode, 1) < 1 ? TESSERA_ERR_STATE : 0;
  if (!rc)
    rc = tessera_data_register(ctx, TESSERA_HOST_NODE, b->ab, (size_t)nb + 1, (size_t)n,
                               (size_t)nb + 1, es, &ab);
  if (!rc) rc = tessera_data_register(ctx, TESSERA_HOST_NODE, b->d, (size_t)n, 1, (size_t)n, 8, &d);
  if (!rc) rc = tessera_data_register(ctx, TESSERA_HOST_NODE, b->e, (size_t)n, 1, (size_t)n, 8, &e);
  if (!rc && b->defer) { /* read from there by other processes: arrays of the device's own */
    rc = tessera_data_create_on(ctx, b->vnode, vr, vc, es, &b->vh);
    if (!rc) rc = tessera_data_create_on(ctx, b->vnode, tr, tc, es, &b->tauh);
  } else if (!rc) { /* workspaces, which a full pool may evict */
    rc = tessera_data_create_workspace(ctx, vr * vc, 1, es, &b->vh);
    if (!rc) rc = tessera_data_create_workspace(ctx, tr * tc, 1, es, &b->tauh);
  }
  const int tag[3] = {0, 0, 0};
  if (!rc) rc = tsr_task_hb2st(dt, ctx, ab, d, e, b->vh, b->tauh, (int)n, nb, b->scope, tag);
  if (!rc) rc = tessera_wait_all(ctx);
  tessera_data_t *h[3] = {ab, d, e};
  for (int i = 0; i < 3; i++)
    if (h[i]) {
      const int r = tessera_data_release(ctx, h[i]);
      if (!rc) rc = r;
    }
  return rc;
}

/* The band b->ab to T (b->d, b->e) and Q2's reflectors (b->v, b->tau): on a GPU (gpu_chase)
 * in the GPU forms; else a pipeline of tasks of a few steps each on a working
 * band (loops/hb2st.c) where the context has CPU workers, else the sequential kernel on this
 * thread; the same result bit for bit on CPUs. */
int tsr_eig_to_tridiagonal(tessera_context_t *ctx, tessera_dtype_t dt, int64_t n, int nb,
                           tsr_eig_work_t *b, const tsr_hb2st_layout_t *lay, int workers) {
  if (b->gpu) return gpu_chase(ctx, dt, n, nb, b, lay);
  if (workers == 0) {
    tsr_hb2st_args_t ha = {.dtype = dt, .n = (int)n, .kd = nb};
    void *hp[5] = {b->ab, b->d, b->e, b->v, b->tau};
    const size_t hl[5] = {(size_t)nb + 1, (size_t)n, (size_t)n, 1, 1};
    return tsr_run_inline(ctx, TESSERA_HOST_NODE, NULL, &tsr_kernel_hb2st, &ha, 5, hp, hl);
  }
  void *w = malloc((size_t)lay->ldw * (size_t)n * tessera_dtype_size(dt));
  if (!w)
    return tsr_error(ctx, TESSERA_ERR_NOMEM,
                     "syevd: out of memory for the working band of n = %lld", (long long)n);
  int rc = tsr_hb2st_load(dt, (int)n, nb, b->ab, nb + 1, w, lay->ldw);
  tsr_hb2st_band_t B;
  const int group = tsr_hb2st_group((int)n, nb, workers);
  if (!rc) rc = tsr_hb2st_band_create(ctx, dt, (int)n, nb, w, lay->ldw, group, &B);
  if (!rc) {
    rc = tsr_pxhb2st(&B, b->v, b->tau);
    const int waited = tessera_wait_all(ctx), released = tsr_hb2st_band_destroy(&B);
    rc = rc ? rc : waited ? waited : released;
  }
  if (!rc) rc = tsr_hb2st_extract(dt, (int)n, nb, w, lay->ldw, b->d, b->e);
  free(w);
  return rc;
}

/* T's eigenvalues (and vectors into z, leading dimension ldz) by LAPACK's stedc / sterf on this
 * thread: the workers are idle while it runs, and its BLAS calls take their cores. */
int tsr_eig_stedc_inline(tessera_context_t *ctx, tessera_job_t job, int64_t n, tsr_eig_work_t *b,
                         double *z, int64_t ldz, int workers) {
  tsr_stedc_args_t sa = {
      .n = (int)n, .vectors = job == TESSERA_VECTORS, .threads = workers > 1 ? workers : 1};
  void *sp[3] = {b->d, b->e, z};
  const size_t sl[3] = {(size_t)n, (size_t)n, (size_t)ldz};
  const int rc = tsr_run_inline(ctx, TESSERA_HOST_NODE, NULL, &tsr_kernel_stedc, &sa,
                                sa.vectors ? 3 : 2, sp, sl);
  if (rc > 0)
    return tsr_error(ctx, rc, "syevd: the tridiagonal eigensolver (LAPACK's %s) failed: info %d",
                     sa.vectors ? "dstedc" : "dsterf", rc);
  return rc;
}
