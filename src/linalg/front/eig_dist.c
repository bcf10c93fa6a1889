/* The Hermitian eigensolver over processes (front.h: tsr_eig_lapack_processes, and the tile-level
 * form's tsr_eig_tile_processes).
 *
 * Process 0 (the root) holds A and either solves it whole in one stage on one of its devices
 * where its policy finds that faster (loops/policy.c), or runs the two stages (eig_band_dist.c):
 * the band reduction on the processes' tiles or the root's (the policy's), the bulge chasing and
 * the tridiagonal divide and conquer on the root alone (they read and write host arrays, the
 * band, T, the merges' plans decided from values, that no tile flow describes: tsr_root_run,
 * the others waiting with it). With vectors the back-transformations, whose columns are
 * independent and which hold most of the flops (4 n³ of them), then run on E's columns dealt over
 * the processes in column panels from where the merges left E (the root's accelerator in the
 * GPU forms, else its array): Q2 by each panel's process with the bulge chasing's reflectors,
 * read from the root's memory by the flow's transfers, Q1 by the QR's unmqr tasks on stage 1's
 * reflectors where the band reduction left them, and the panels come back to the root's array.
 * Every process that gave w receives the eigenvalues; every one returns the same status. */
#include <stdlib.h>
#include <string.h>

#include "distributed/dist.h"
#include "runtime/base.h"
#include "runtime/context.h"
#include "linalg/front/front.h"
#include "linalg/loops/eig_stages.h"
#include "linalg/loops/tasks.h"

enum { ROOT = 0 };

/* The root's array of `count` elements at p in the memory of node `node` (NULL on the others) as
 * a matrix of one tile the root owns (tsr_eig_array_shape's), read by the others from there. */
static int root_tile(tessera_context_t *ctx, tessera_comm_t *c, tessera_dtype_t dt, int64_t count,
                     void *p, int node, tessera_matrix_t **out) {
  size_t rows, cols;
  tsr_eig_array_shape(count, tessera_dtype_size(dt), &rows, &cols);
  return tsr_root_array(ctx, c, dt, (int64_t)rows, (int64_t)cols, (int64_t)rows, (int64_t)cols, p,
                        (int64_t)rows, node, out);
}

/* The copy of E's column panels (1 x P, each a whole number of into's tile columns) into the
 * tiles of `into`, a task per tile of into on its process (inserted, not waited for). */
static int panels_into(const tessera_matrix_t *E, tessera_matrix_t *into) {
  const int64_t k = E->nb / into->nb; /* into's tile columns per panel */
  int rc = 0;
  for (int64_t j = 0; j < into->nt && !rc; j++)
    for (int64_t i = 0; i < into->mt && !rc; i++) {
      tessera_data_t *dst = tsr_tile(into, i, j);
      const int tag[3] = {(int)i, (int)j, 0};
      if (dst)
        rc = tsr_task_lacpy_block(E->dtype, E->flow, tsr_tile(E, 0, j / k), (int)(i * into->mb),
                                  (int)(j % k * into->nb), dst, 0, TESSERA_W, tsr_tile_m(into, i),
                                  tsr_tile_n(into, j), tag, 0);
    }
  return rc;
}

/* In the GPU forms, every tile the back-transformations read on a process other than its owner,
 * brought there before the first of them runs (a touch task per tile and process, writing that
 * process's first panel of E): V and tau of the chase, stage 1's reflectors' panels and their T.
 * Over processes the transfers go one after another in one order, each started by a worker; a
 * GPU worker inside a Q2 task's launches starts none, so transfers left to run beside the
 * products wait for them. Waited for; the same status on every process. */
static int bring_in(tessera_matrix_t *E, tessera_matrix_t *V, tessera_matrix_t *T,
                    const tsr_he2hb_t *H) {
  const int size = tessera_comm_size(E->comm);
  int rc = 0;
  for (int p = 0; p < size && !rc; p++) {
    int64_t j = 0; /* process p's first panel */
    while (j < E->nt && tessera_matrix_tile_owner(E, 0, j) != p) j++;
    if (j == E->nt) continue;
    tessera_data_t *d[3] = {tsr_tile(V, 0, 0), tsr_tile(T, 0, 0), tsr_tile(E, 0, j)};
    const tessera_access_t m[3] = {TESSERA_R, TESSERA_R, TESSERA_RW};
    const int tag[3] = {p, 0, 0};
    rc = tsr_task_touch(E->flow, 3, d, m, tag);
    for (int64_t k = 0; H->V && k < H->Q.steps && !rc; k++) {
      tessera_data_t *dk[3] = {tsr_tile(H->V, 0, k), H->Q.T[k], tsr_tile(E, 0, j)};
      const int tagk[3] = {p, (int)k, 1};
      rc = tsr_task_touch(E->flow, 3, dk, m, tagk);
    }
  }
  const int waited = tessera_wait_all(E->ctx);
  return tsr_dist_agree(E->comm, rc ? rc : waited);
}

/* E = Q1 Q2 E into the root's array a (lda), or into the distributed matrix `into` (n x n, of
 * communicator c) where given, E's column panels dealt over the processes (1 x P; a multiple of
 * into's tile width where given) from where stages 2 and 3 left it (r: in a device's memory, else
 * in a): Q2 on each panel by its process with the chase's reflectors, which the processes read from
 * the root's memory (host or device) by the flow's transfers, Q1 by unmqr tasks on stage 1's
 * reflectors H (over the processes as the band reduction left them), within each process's
 * accelerators where its GPU forms run; the panels then copied into a or into's tiles. */
static int back_dealt(tessera_context_t *ctx, tessera_comm_t *c, tessera_dtype_t dt, int64_t n,
                      void *a, int64_t lda, const tsr_eig_back_t *r, tsr_he2hb_t *H,
                      tessera_matrix_t *into) {
  int64_t head[4] = {r->nb, r->nv, r->ntau, r->e != NULL}; /* the root's */
  int rc = tsr_root_broadcast(ctx, c, head, sizeof head);
  tessera_scope_t scope;
  const bool gpu = tsr_eig_gpu(ctx, TESSERA_VECTORS, dt, n, &scope);
  /* the panels' width, the root's (every process makes E alike): as many panels on each
   * process as its share of the columns takes alone */
  const int size = tessera_comm_size(c);
  const int64_t share = (n + size - 1) / size,
                alone = tsr_eig_panel_columns(gpu, tsr_eig_cpu_workers(ctx), share),
                panels = size * ((share + alone - 1) / alone);
  int64_t width = (n + panels - 1) / panels;
  if (into) /* whole tile columns of into: the nearest multiple of its width */
    width = into->nb * (width > into->nb ? (width + into->nb / 2) / into->nb : 1);
  if (!rc) rc = tsr_root_broadcast(ctx, c, &width, sizeof width);
  const tessera_grid_t g = {1, size};
  const bool device = head[3]; /* E on the root's accelerator */
  tessera_matrix_t *from = NULL, *home = NULL, *E = NULL, *V = NULL, *T = NULL;
  tsr_qr_work_t wk = {0};
  if (!rc) rc = root_tile(ctx, c, dt, head[1] + 1, r->v, r->node, &V);
  if (!rc) rc = root_tile(ctx, c, dt, head[2] + 1, r->tau, r->node, &T);
  if (!rc)
    rc = tsr_root_array(ctx, c, dt, n, n, n, width, device ? r->e : a, device ? n : lda,
                        device ? r->e_node : TESSERA_HOST_NODE, &from);
  if (!rc && device && !into)
    rc = tsr_root_array(ctx, c, dt, n, n, n, width, a, lda, TESSERA_HOST_NODE, &home);
  /* the GPU forms' copies of E's panels too within the accelerators: GPU to GPU */
  const tessera_scope_t outer = tessera_get_scope(ctx);
  if (!rc && gpu) rc = tsr_dist_agree(c, tessera_set_scope(ctx, scope));
  if (!rc) rc = tsr_matrix_dealt(from, g, n, 0, -1, true, &E);
  if (!rc && size > 1 && gpu) rc = bring_in(E, V, T, H);
  if (!rc)
    rc = tsr_pxhb2st_apply(E, (int)head[0], tsr_tile(V, 0, 0), tsr_tile(T, 0, 0),
                           gpu ? scope : tessera_scope_all());
  if (!rc && H->V) rc = tsr_qr_work_create(E, (int)head[0], &wk);
  if (!rc && H->V) {
    wk.row = (int)head[0]; /* E's rows from nb meet the reflectors' row 0 */
    rc = tsr_pxunmqr('N', H->V, &H->Q, E, &wk);
  }
  const int waited = tessera_wait_all(ctx);
  rc = tsr_dist_agree(c, rc ? rc : waited); /* every process joins, whatever its status */
  /* the panels home from the accelerators too: a GPU's copy into the root's array goes out of
   * its memory once, not through a host worker's copy of the whole panel */
  if (!rc && into) { /* the panels into into's tiles, each from its panel's process */
    rc = tsr_matrix_flush_copies(E, panels_into(E, into));
    const int copied = tessera_wait_all(ctx);
    rc = tsr_dist_agree(c, rc ? rc : copied);
  } else if (!rc) {
    rc = tsr_lapack_gather(E, home ? home : from);
  }
  (void)tessera_set_scope(ctx, outer);
  tsr_qr_work_destroy(&wk);
  tessera_matrix_t *made[5] = {E, from, home, V, T};
  int d = 0;
  for (int i = 0; i < 5; i++)
    if (made[i]) {
      const int x = tessera_matrix_destroy(made[i]);
      if (!d) d = x;
    }
  return tsr_dist_agree(c, rc ? rc : d);
}

/* One call's arguments, for the root's part (tsr_root_run). */
typedef struct {
  tsr_eig_call_t x;
  int one;               /* the root solves in one stage on one of its devices */
  tessera_scope_t where; /* there */
  size_t work;           /* with that much GPU workspace */
} call_t;

/* The root's part on one process, or its one-stage solve. */
static int solve_call(void *p) {
  const call_t *c = p;
  const tsr_eig_call_t *x = &c->x;
  if (c->one)
    return tsr_eig_one(x->ctx, x->f, x->job, x->uplo, x->dt, x->n, x->a, x->lda, x->w, c->where,
                       c->work);
  return tsr_eig_solve(x->ctx, x->f, x->job, x->uplo, x->dt, x->n, x->a, x->lda, x->w);
}

/* syevd over the processes of comm: a and lda process 0's, w where given. With `into` (the
 * tile-level call's distributed A, with vectors) the two stages put the eigenvectors into its
 * tiles rather than into a, and say so in *put (the same on every process). */
static int processes(tessera_context_t *ctx, tessera_comm_t *comm, const char *f, tessera_job_t job,
                     tessera_uplo_t uplo, tessera_dtype_t dt, int64_t n, void *a, int64_t lda,
                     void *w, tessera_matrix_t *into, bool *put) {
  tsr_eig_back_t r = {0};
  const double t0 = tsr_now();
  const bool many = tessera_comm_size(comm) > 1;
  call_t c = {{ctx, f, job, uplo, dt, n, a, lda, w}, 0, tessera_get_scope(ctx), 0};
  /* over processes the root's policy picks the method: in one stage on one of its devices, or
   * the two stages with the band reduction and the back-transformations dealt */
  if (many && tessera_comm_rank(comm) == ROOT)
    c.one = tsr_eig_one_stage(ctx, job, dt, n, &c.where, &c.work);
  int rc = many ? tsr_root_broadcast(ctx, comm, &c.one, sizeof c.one) : 0;
  if (!rc && (!many || c.one)) {
    rc = tsr_root_run(ctx, comm, f, solve_call, &c);
  } else if (!rc) {
    /* with vectors the root's array takes T's eigenvectors to its accelerator and all of them
     * back: pinned for those copies (where a backend pins) */
    const bool pinned = job == TESSERA_VECTORS && tessera_comm_rank(comm) == ROOT &&
                        tsr_host_pin(ctx, a, (size_t)(lda * (n - 1) + n) * tessera_dtype_size(dt));
    tsr_he2hb_t H = {0};
    rc = tsr_eig_two_stages(&c.x, comm, &r, &H);
    if (rc == 0 && job == TESSERA_VECTORS) rc = back_dealt(ctx, comm, dt, n, a, lda, &r, &H, into);
    *put = rc == 0 && job == TESSERA_VECTORS && into;
    tsr_he2hb_destroy(&H);
    if (pinned) tsr_host_unpin(ctx, a);
    /* the two stages' seconds with their dealt parts, for the root's policy */
    if (rc == 0 && tessera_comm_rank(comm) == ROOT)
      tsr_eig_measured(ctx, false, tessera_get_scope(ctx), job, dt, n, tsr_now() - t0);
  }
  tsr_eig_back_free(ctx, &r);
  if (rc < 0) return rc;
  const size_t rs = tsr_dtype_real_size(dt);
  const int s = tsr_root_broadcast(ctx, comm, w, (size_t)n * rs);
  return s ? s : rc;
}

int tsr_eig_lapack_processes(tessera_context_t *ctx, const char *f, tessera_job_t job,
                             tessera_uplo_t uplo, tessera_dtype_t dt, int64_t n, void *a,
                             int64_t lda, void *w, int rc) {
  int64_t tile = 1;
  const int64_t values[4] = {job, uplo, dt, n};
  const int argno[4] = {2, 3, 4, 5};
  rc = tsr_lapack_agree(ctx, f, 4, values, argno, rc, &tile);
  if (rc || n == 0) return rc;
  bool put = false;
  return processes(ctx, tessera_context_comm(ctx), f, job, uplo, dt, n, a, lda, w, NULL, &put);
}

/* The one stage on the root's accelerator of scope `where` (cuSOLVER's workspace work_bytes)
 * for a distributed A: its tiles collected into one array in that device's memory (received
 * there from their owners, no host array), the solve there, with VECTORS the eigenvectors dealt
 * back into A's tiles from it; w broadcast. *unsure (the same everywhere) as
 * tsr_eig_one_tiles's, A then as it was. */
static int one_on_root(tessera_context_t *ctx, const char *f, tessera_job_t job,
                       tessera_uplo_t uplo, tessera_matrix_t *A, void *w, tessera_scope_t where,
                       size_t work_bytes, bool *unsure) {
  const double t0 = tsr_now();
  tessera_comm_t *c = A->comm;
  const bool root = tessera_comm_rank(c) == ROOT;
  const tessera_dtype_t dt = A->dtype;
  const int64_t n = A->n;
  int node = TESSERA_HOST_NODE, rc = 0;
  tessera_data_t *h = NULL; /* the root's array */
  if (root && tessera_scope_nodes(ctx, where, &node, 1) < 1)
    rc = tsr_error(ctx, TESSERA_ERR_STATE, "%s: the one-stage solver's device has no memory", f);
  if (root && !rc)
    rc = tessera_data_create_on(ctx, node, (size_t)n, (size_t)n, tessera_dtype_size(dt), &h);
  rc = tsr_dist_agree_on(ctx, c, rc, "process 0 cannot hold A in its device's memory");
  void *at = h ? tessera_data_ptr(h) : NULL;
  if (!rc) rc = tsr_lapack_collect_on(A, at, node);
  int64_t st[2] = {0, 0}; /* the root's status, and whether its solve is unsure */
  if (!rc && root) {
    const tsr_syevd_args_t args = tsr_eig_one_args(job, uplo, dt, n, work_bytes);
    int info = 0;
    st[0] = tsr_eig_one_task(ctx, &args, h, w, &info, where);
    st[1] = !st[0] && tsr_eig_unsure(dt, n, w, info);
  }
  if (!rc) rc = tsr_root_broadcast(ctx, c, st, sizeof st);
  if (!rc) rc = tsr_dist_agree_on(ctx, c, (int)st[0], "process 0's one-stage solve failed");
  *unsure = !rc && st[1];
  if (!rc && !*unsure && job == TESSERA_VECTORS) rc = tsr_lapack_deal_on(at, node, A);
  if (!rc && !*unsure) rc = tsr_root_broadcast(ctx, c, w, (size_t)n * tsr_dtype_real_size(dt));
  if (h) {
    const int r = tessera_data_release(ctx, h);
    if (!rc) rc = r;
  }
  if (!rc && !*unsure && root) tsr_eig_measured(ctx, true, where, job, dt, n, tsr_now() - t0);
  return rc;
}

/* The tile-level form of a distributed A (its checks gave rc): in one stage on the root's
 * accelerator where its policy takes that (one_on_root), else A collected into an array of
 * process 0, solved there as the LAPACK-style call over processes does, the two stages'
 * eigenvectors copied into A's tiles from the processes' panels (a one-stage solve's, or NaN,
 * dealt back from the array). */
int tsr_eig_tile_processes(tessera_context_t *ctx, const char *f, tessera_job_t job,
                           tessera_uplo_t uplo, tessera_matrix_t *A, void *w, int rc) {
  const int64_t n = A->n, values[3] = {job, uplo, n};
  const int argno[3] = {1, 2, 3};
  const char *names[3] = {"argument 1 (job)", "argument 2 (uplo)", "the order of A"};
  rc = tsr_dist_same_on(ctx, A->comm, f, 3, values, argno, names, rc);
  if (rc || n == 0) return rc;
  const bool root = tessera_comm_rank(A->comm) == 0;
  tessera_scope_t where = tessera_get_scope(ctx);
  size_t work = 0;
  int one = root && tsr_eig_one_stage(ctx, job, A->dtype, n, &where, &work) && work > 0;
  rc = tsr_root_broadcast(ctx, A->comm, &one, sizeof one);
  if (!rc && one) {
    bool unsure = false;
    rc = one_on_root(ctx, f, job, uplo, A, w, where, work, &unsure);
    if (rc || !unsure) return rc;
  }
  if (rc) return rc;
  void *h = root ? malloc((size_t)(n * n) * tessera_dtype_size(A->dtype)) : NULL;
  rc = tsr_lapack_collect(A, h);
  bool put = false; /* the eigenvectors already in A's tiles */
  if (!rc)
    rc = processes(ctx, A->comm, f, job, uplo, A->dtype, n, h, n, w,
                   job == TESSERA_VECTORS ? A : NULL, &put);
  if (rc >= 0 && !put && (rc > 0 || job == TESSERA_VECTORS)) { /* the vectors, or NaN */
    const int s = tsr_lapack_deal(h, A);
    if (!rc) rc = s;
  }
  free(h);
  return rc;
}
