/* The symmetric tridiagonal eigenproblem with vectors by Cuppen's divide and conquer as tasks
 * (LAPACK's dlaed0 order): T split in halves, level by level, into leaves of at most `leaf`
 * rows, each cut taking the modulus of its subdiagonal entry off the two diagonal entries it
 * joins; the leaves solved by dstedc tasks on the CPU workers, into the diagonal blocks of Q;
 * then the merges bottom up, a level at a time (cpu/laed.h):
 *   1. each merge's coupling vector from two rows of Q (laed_rows tasks, where Q is);
 *   2. on this thread, each merge's deflation; its secular equation's roots where the tasks on Q
 *      run: one laed_secular task on the plan there (tessera's own iteration, a warp per root on
 *      a GPU), or laed_roots tasks (LAPACK's dlaed4) on the CPU workers;
 *   3. each merge carried out on Q (laed_merge tasks: rotations, regrouping, the secular
 *      vectors and their product with Q's block, a gemm).
 * The tasks on Q run on the context's accelerators where one can hold Q and the workspace (the
 * cost model would keep the first small merges where Q is, on the host, and Q would move
 * between the two), so Q stays on one device between merges; else on the CPU workers.
 * T is scaled to a unit largest entry first, as dstedc scales it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/laed.h"
#include "linalg/loops/loops.h"
#include "linalg/loops/policy.h"
#include "linalg/loops/tasks.h"
#include "runtime/context.h"

/* Roots per laed_roots task. */
enum { ROOTS_PER_TASK = 256 };

/* The blocks of one level: count blocks, block i at start[i] of size[i]. */
typedef struct {
  int64_t count, *start, *size;
} level_t;

/* LAPACK's info for a failure on the block at a of order m: rows and columns a + 1 .. a + m
 * (1-based) as info / (n + 1) and info mod (n + 1). */
static int failed_on(int64_t n, int64_t a, int64_t m) {
  const int64_t info = (a + 1) * (n + 1) + a + m;
  return info > 0 && info < 0x7fffffff ? (int)info : 1;
}

/* The leaves: dstedc tasks on the diagonal blocks of q, each zeroing the rest of its columns;
 * without q (values alone), each into a scratch block, of which the first and last rows go to
 * `rows` (2 x n, leading dimension 2). */
static int leaves(tessera_context_t *ctx, int64_t n, const level_t *lv, double *d, double *e,
                  double *q, int64_t ldq, double *rows) {
  int rc = 0;
  tessera_data_t **h = calloc((size_t)(3 * lv->count), sizeof *h);
  double **own = q ? NULL : calloc((size_t)lv->count, sizeof *own);
  if (!h || (!q && !own)) {
    free(h), free(own);
    return tsr_error(ctx, TESSERA_ERR_NOMEM, "stedc: out of memory for the leaves");
  }
  for (int64_t i = 0; i < lv->count && !rc; i++) {
    const int64_t s = lv->start[i], m = lv->size[i];
    const int tag[3] = {(int)i, 0, 0};
    if (!q && !(own[i] = malloc((size_t)(m * m) * sizeof **own)))
      rc = tsr_error(ctx, TESSERA_ERR_NOMEM, "stedc: out of memory for the leaves");
    if (!rc)
      rc = tessera_data_register(ctx, TESSERA_HOST_NODE, d + s, (size_t)m, 1, (size_t)m, 8,
                                 &h[3 * i]);
    if (!rc)
      rc = tessera_data_register(ctx, TESSERA_HOST_NODE, e + s, (size_t)m, 1, (size_t)m, 8,
                                 &h[3 * i + 1]);
    if (!rc)
      rc = q ? tessera_data_register(ctx, TESSERA_HOST_NODE, q + s * ldq, (size_t)n, (size_t)m,
                                     (size_t)ldq, 8, &h[3 * i + 2])
             : tessera_data_register(ctx, TESSERA_HOST_NODE, own[i], (size_t)m, (size_t)m,
                                     (size_t)m, 8, &h[3 * i + 2]);
    if (!rc)
      rc = tsr_task_stedc(ctx, h[3 * i], h[3 * i + 1], h[3 * i + 2], (int)m, q ? n : m, q ? s : 0,
                          tag, 0);
  }
  const int waited = tessera_wait_all(ctx);
  for (int64_t i = 0; i < 3 * lv->count; i++)
    if (h[i]) {
      const int r = tessera_data_release(ctx, h[i]);
      if (!rc && !waited) rc = r;
    }
  for (int64_t i = 0; own && i < lv->count; i++) {
    const int64_t s = lv->start[i], m = lv->size[i];
    for (int64_t c = 0; c < m && own[i] && !rc && !waited; c++)
      rows[2 * (s + c)] = own[i][c * m], rows[2 * (s + c) + 1] = own[i][c * m + m - 1];
    free(own[i]);
  }
  free(h), free(own);
  return rc ? rc : waited > 0 ? failed_on(n, 0, n) : waited;
}

/* The state of the merges: Q's rows in parts (each a handle, its first row, its rows, its
 * workspace and the scope of its tasks; one part: Q whole), the coupling vectors z, each
 * merge's plan. */
typedef struct {
  tessera_context_t *ctx;
  tessera_scope_t scope; /* of the tasks on Q */
  bool devices;          /* whether that is the accelerators */
  int64_t n;
  double *d, *e, *z;
  int parts;
  tessera_data_t *part[TSR_STEDC_PARTS], *work[TSR_STEDC_PARTS];
  int64_t start[TSR_STEDC_PARTS], rows[TSR_STEDC_PARTS];
  tessera_scope_t where[TSR_STEDC_PARTS];
  tessera_data_t *zh;
  tsr_laed_plan_t **plan;
  tessera_data_t **planh;
} merges_t;

/* The part holding row r. */
static int part_of(const merges_t *M, int64_t r) {
  int p = 0;
  while (p + 1 < M->parts && M->start[p + 1] <= r) p++;
  return p;
}

/* Merge i's coupling vector from the rows about its cut (block at a of order m, halves n1 and
 * m - n1): one laed_rows task where both rows are in one part, else one per half. */
static int coupling(merges_t *M, int64_t i, int64_t a, int64_t m, int64_t n1) {
  const int p = part_of(M, a + n1 - 1), q = part_of(M, a + n1);
  const int tag[3] = {(int)i, 1, 0}, tag2[3] = {(int)i, 1, 1};
  const tsr_laed_rows_args_t both = {a, m, a + n1 - 1 - M->start[p], 1};
  if (p == q) return tsr_task_laed_rows(M->ctx, M->part[p], M->zh, &both, M->where[p], tag);
  const tsr_laed_rows_args_t first = {a, n1, a + n1 - 1 - M->start[p], 0},
                             second = {a + n1, m - n1, a + n1 - M->start[q], 0};
  const int rc = tsr_task_laed_rows(M->ctx, M->part[p], M->zh, &first, M->where[p], tag);
  return rc ? rc : tsr_task_laed_rows(M->ctx, M->part[q], M->zh, &second, M->where[q], tag2);
}

/* Merge i (plan p, its handle h, the block at a) carried out: a laed_merge task on each part
 * holding rows of the block, on those rows. */
static int carry_out(merges_t *M, int64_t i, const tsr_laed_plan_t *p, tessera_data_t *h,
                     int64_t a) {
  int rc = 0;
  for (int q = part_of(M, a); q < M->parts && M->start[q] < a + p->m && !rc; q++) {
    const int64_t r0 = M->start[q] > a ? M->start[q] - a : 0, end = M->start[q] + M->rows[q] - a,
                  r1 = end < p->m ? end : p->m;
    const tsr_laed_merge_args_t args = {
        .plan = *p, .a = a, .row = a + r0 - M->start[q], .r0 = (int32_t)r0, .r1 = (int32_t)r1};
    const int tag[3] = {(int)i, 3, q};
    rc = tsr_task_laed_merge(M->ctx, M->part[q], h, M->work[q], &args, M->where[q], tag);
  }
  return rc;
}

/* A plan's bytes as a handle of the flow. */
static int register_plan(tessera_context_t *ctx, tsr_laed_plan_t *p, tessera_data_t **h) {
  return tessera_data_register(ctx, TESSERA_HOST_NODE, p, (size_t)p->bytes, 1, (size_t)p->bytes, 1,
                               h);
}

/* Merge i of a level, of the block of order m whose halves have n1 and m - n1 rows: its plan
 * from the halves' eigenvalues d and coupling vector z (cpu/laed.h), its secular equation's
 * roots: with `devices` (k > 2), the plan registered into *h and one laed_secular task within
 * them; else laed_roots tasks on the CPU workers. */
static int plan_merge(tessera_context_t *ctx, int64_t i, int64_t m, int64_t n1, const double *d,
                      const double *z, double rho, tsr_laed_plan_t **plan,
                      const tessera_scope_t *devices, tessera_data_t **h) {
  tsr_laed_plan_t *p = *plan = tsr_laed_deflate(m, n1, d, z, rho);
  if (!p) return tsr_error(ctx, TESSERA_ERR_NOMEM, "stedc: out of memory for a merge");
  if (devices && p->k > 2) {
    const int tag[3] = {(int)i, 2, 0};
    const int rc = register_plan(ctx, p, h);
    return rc ? rc : tsr_task_laed_secular(ctx, *h, p, tsr_laed_wsq(p), *devices, tag);
  }
  int rc = 0;
  for (int64_t j = 0; j < p->k && !rc; j += ROOTS_PER_TASK) {
    const int tag[3] = {(int)i, 2, (int)j};
    rc = tsr_task_laed_roots(ctx, p, j, j + ROOTS_PER_TASK < p->k ? j + ROOTS_PER_TASK : p->k, tag);
  }
  return rc;
}

/* After plan p's roots (the block at a of T's order n): LAPACK's info where a root failed, else
 * 0 with the merged eigenvalues into d (the block's). */
static int finish_merge(int64_t n, int64_t a, tsr_laed_plan_t *p, double *d) {
  if (p->info) return failed_on(n, a, p->m);
  tsr_laed_finish(p);
  memcpy(d, tsr_laed_d(p, p->lambda), (size_t)p->m * sizeof *d);
  return 0;
}

/* The merges of level `up` (blocks made of level `down`'s pairs). */
static int merge_level(merges_t *M, const level_t *up, const level_t *down) {
  tessera_context_t *ctx = M->ctx;
  int rc = 0;
  for (int64_t i = 0; i < up->count && !rc; i++)
    rc = coupling(M, i, up->start[i], up->size[i], down->size[2 * i]);
  if (!rc) rc = tessera_data_sync(ctx, M->zh);
  for (int64_t i = 0; i < up->count && !rc; i++) {
    const int64_t a = up->start[i], n1 = down->size[2 * i];
    rc = plan_merge(ctx, i, up->size[i], n1, M->d + a, M->z + a, M->e[a + n1 - 1], &M->plan[i],
                    M->devices ? &M->scope : NULL, &M->planh[i]);
  }
  const int waited = tessera_wait_all(ctx);
  if (rc || waited) return rc ? rc : waited;
  for (int64_t i = 0; i < up->count && !rc; i++) {
    tsr_laed_plan_t *p = M->plan[i];
    const int64_t a = up->start[i];
    if (M->planh[i]) { /* the roots computed there: the plan home, then planned further here */
      rc = tessera_data_release(ctx, M->planh[i]);
      M->planh[i] = NULL;
      if (rc) return rc;
    }
    if ((rc = finish_merge(M->n, a, p, M->d + a))) return rc;
    rc = register_plan(ctx, p, &M->planh[i]);
    if (!rc) rc = carry_out(M, i, p, M->planh[i], a);
  }
  return rc;
}

/* Indices of a merge per laed_update task (values alone). */
enum { UPDATE_PER_TASK = 256 };

/* The laed_update tasks of one phase over the k indices of plan i (values alone). */
static int update_tasks(tessera_context_t *ctx, tsr_laed_plan_t *p, int phase, int64_t i,
                        const double *q2, double *wt, double *u) {
  int rc = 0;
  for (int64_t j = 0; j < p->k && !rc; j += UPDATE_PER_TASK) {
    const tsr_laed_update_args_t args = {.plan = p,
                                         .phase = phase,
                                         .i0 = j,
                                         .i1 = j + UPDATE_PER_TASK < p->k ? j + UPDATE_PER_TASK
                                                                          : p->k,
                                         .q2 = q2,
                                         .wt = wt,
                                         .u = u};
    const int tag[3] = {(int)i, 4 + phase, (int)j};
    rc = tsr_task_laed_update(ctx, &args, tag);
  }
  return rc;
}

/* One level's merges without vectors: every block keeps its eigenvectors' first and last rows
 * (rows: 2 x n, leading dimension 2), from which the next level's coupling vectors come. Each
 * merge: the coupling vector from its halves' kept rows, the plan and its roots (as with
 * vectors), then the block's two kept rows, [first row of the left half, 0] and [0, last row of
 * the right half], through the plan: rotations and regrouping on this thread
 * (tsr_laed_regroup), Löwner's weights and the product with S (O(k²) each) as one laed_values
 * task within `devices` where given, else laed_update tasks over index ranges on the CPU
 * workers, the columns placed on this thread (tsr_laed_place). */
static int values_level(tessera_context_t *ctx, int64_t n, const level_t *up, const level_t *down,
                        double *d, const double *e, double *rows, double *z,
                        const tessera_scope_t *devices) {
  const int64_t count = up->count;
  tsr_laed_plan_t **plan = calloc((size_t)count, sizeof *plan);
  double **buf = calloc((size_t)count, sizeof *buf); /* a merge's q2 (2 m), wt (k), u (2 k) */
  tessera_data_t **h = calloc(2 * (size_t)count, sizeof *h); /* each merge's plan and q2 .. u */
  int rc =
      plan && buf && h ? 0 : tsr_error(ctx, TESSERA_ERR_NOMEM, "stedc: out of memory for a merge");
  for (int64_t i = 0; i < count && !rc; i++) {
    const int64_t a = up->start[i], m = up->size[i], n1 = down->size[2 * i];
    for (int64_t c = 0; c < m; c++) z[a + c] = rows[2 * (a + c) + (c < n1 ? 1 : 0)];
    rc = plan_merge(ctx, i, m, n1, d + a, z + a, e[a + n1 - 1], &plan[i], devices, &h[2 * i]);
  }
  int waited = tessera_wait_all(ctx);
  for (int64_t i = 0; i < count && !rc && !waited; i++) {
    tsr_laed_plan_t *p = plan[i];
    if (h[2 * i]) { /* the roots computed there: the plan home */
      rc = tessera_data_release(ctx, h[2 * i]);
      h[2 * i] = NULL;
      if (rc) break;
    }
    const int64_t a = up->start[i], m = p->m, n1 = p->n1, k = p->k;
    if ((rc = finish_merge(n, a, p, d + a))) break;
    double *q = buf[i] = malloc((size_t)(4 * m + 3 * k + 1) * sizeof *q), *q2 = q + 2 * m;
    if (!q) {
      rc = tsr_error(ctx, TESSERA_ERR_NOMEM, "stedc: out of memory for a merge");
      break;
    }
    for (int64_t c = 0; c < m; c++)
      q[2 * c] = c < n1 ? rows[2 * (a + c)] : 0, q[2 * c + 1] = c < n1 ? 0 : rows[2 * (a + c) + 1];
    tsr_laed_regroup(p, q, 2, 2, q2);
    if (k > 2 && devices) {
      const int tag[3] = {(int)i, 4, 0};
      rc = register_plan(ctx, p, &h[2 * i]);
      if (!rc)
        rc = tessera_data_register(ctx, TESSERA_HOST_NODE, q2, (size_t)(2 * m + 3 * k), 1,
                                   (size_t)(2 * m + 3 * k), sizeof(double), &h[2 * i + 1]);
      if (!rc) rc = tsr_task_laed_values(ctx, h[2 * i], h[2 * i + 1], p, *devices, tag);
    } else if (k > 2) {
      rc = update_tasks(ctx, p, 0, i, q2, q2 + 2 * m, q2 + 2 * m + k);
    }
  }
  waited = tessera_wait_all(ctx);
  for (int64_t i = 0; i < count && !rc && !waited; i++) {
    double *q2 = buf[i] + 2 * plan[i]->m;
    if (!h[2 * i + 1])
      rc = update_tasks(ctx, plan[i], 1, i, q2, q2 + 2 * plan[i]->m,
                        q2 + 2 * plan[i]->m + plan[i]->k);
  }
  waited = tessera_wait_all(ctx);
  for (int64_t i = 0; h && i < 2 * count; i++) /* wt and u home */
    if (h[i]) {
      const int r = tessera_data_release(ctx, h[i]);
      if (!rc) rc = r;
    }
  for (int64_t i = 0; i < count && !rc && !waited; i++) {
    const double *q2 = buf[i] + 2 * plan[i]->m;
    tsr_laed_place(plan[i], q2 + 2 * plan[i]->m + plan[i]->k, q2, 2, rows + 2 * up->start[i], 2);
  }
  for (int64_t i = 0; i < count && plan && buf; i++) free(plan[i]), free(buf[i]);
  free(plan), free(buf), free(h);
  return rc ? rc : waited;
}

/* Releases the plans of one level (waiting for their merges). */
static int release_plans(merges_t *M, int64_t count) {
  int rc = 0;
  for (int64_t i = 0; i < count; i++) {
    if (M->planh[i]) {
      const int r = tessera_data_release(M->ctx, M->planh[i]);
      if (!rc) rc = r;
    }
    free(M->plan[i]);
    M->plan[i] = NULL, M->planh[i] = NULL;
  }
  return rc;
}

/* The levels of the split: level 0 the whole, each next one halving every block, until every
 * block has at most `leaf` rows. Returns the number of levels, or 0 when out of memory. */
static int split(int64_t n, int64_t leaf, level_t *lv, int most) {
  int L = 1;
  lv[0].count = 1;
  lv[0].start = malloc(sizeof(int64_t)), lv[0].size = malloc(sizeof(int64_t));
  if (!lv[0].start || !lv[0].size) return 0;
  lv[0].start[0] = 0, lv[0].size[0] = n;
  while (L < most && lv[L - 1].size[lv[L - 1].count - 1] > leaf) {
    level_t *p = &lv[L - 1], *c = &lv[L];
    c->count = 2 * p->count;
    c->start = malloc((size_t)c->count * sizeof(int64_t));
    c->size = malloc((size_t)c->count * sizeof(int64_t));
    L++;
    if (!c->start || !c->size) return 0;
    for (int64_t i = 0; i < p->count; i++) {
      c->size[2 * i] = p->size[i] / 2, c->size[2 * i + 1] = p->size[i] - p->size[i] / 2;
      c->start[2 * i] = p->start[i], c->start[2 * i + 1] = p->start[i] + p->size[i] / 2;
    }
  }
  return L;
}

/* Q's parts (merges_t): with `spread` (the caller takes them) and the merges on accelerators,
 * one per accelerator that holds its share (tsr_stedc_parts), the blocks of the level with that
 * many; else Q whole, qh where given. Each part with a workspace for a merge on its rows. */
static int make_parts(merges_t *M, const level_t *lv, int L, double *q, int64_t ldq,
                      tessera_data_t *qh, bool spread) {
  const int64_t n = M->n;
  int most = 1;
  for (int l = 1; l < L && most * 2 <= TSR_STEDC_PARTS; l++) most *= 2;
  M->parts = spread && !qh && M->devices && most > 1
                 ? tsr_stedc_parts(M->ctx, M->scope, n, most, M->where)
                 : 1;
  if (M->parts == 1) M->where[0] = M->scope;
  int l = 0, rc = 0;
  while ((1 << l) < M->parts) l++;
  for (int p = 0; p < M->parts && !rc; p++) {
    M->start[p] = lv[l].start[p], M->rows[p] = lv[l].size[p];
    const int64_t work = tsr_laed_work_rows(M->rows[p], n);
    if (M->parts == 1 && qh)
      M->part[p] = qh;
    else
      rc = tessera_data_register(M->ctx, TESSERA_HOST_NODE, q + M->start[p], (size_t)M->rows[p],
                                 (size_t)n, (size_t)ldq, 8, &M->part[p]);
    if (!rc)
      rc = tessera_data_create_workspace(M->ctx, (size_t)n, (size_t)((work + n - 1) / n), 8,
                                         &M->work[p]);
  }
  return rc;
}

/* Both forms: with q, the eigenvectors into q (the merges on Q); without, the eigenvalues alone
 * (each block's first and last eigenvector rows kept). With `out`, Q's parts stay where the
 * merges left them, handed to the caller. */
static int dc(tessera_context_t *ctx, int64_t n, double *d, double *e, double *q, int64_t ldq,
              int64_t leaf, tessera_data_t *qh, tsr_stedc_parts_t *out) {
  if (n < 1) return 0;
  double scale = 0;
  for (int64_t i = 0; i < n; i++) scale = fmax(scale, fabs(d[i]));
  for (int64_t i = 0; i + 1 < n; i++) scale = fmax(scale, fabs(e[i]));
  enum { MOST_LEVELS = 40 };
  level_t lv[MOST_LEVELS] = {{0}};
  double *ds = malloc((size_t)n * sizeof *ds), *es = calloc((size_t)n, sizeof *es);
  double *rows = q ? NULL : malloc(2 * (size_t)n * sizeof *rows);
  merges_t M = {.ctx = ctx,
                .scope = tessera_scope_cpus(),
                .n = n,
                .d = ds,
                .e = es,
                .z = malloc((size_t)n * sizeof(double))};
  M.devices = tsr_stedc_merges_scope(ctx, q != NULL, n, &M.scope);
  /* blocks of one level differ by at most a row: with leaves of two rows or more, none is empty */
  const int L = split(n, leaf < 2 ? 2 : leaf, lv, MOST_LEVELS);
  const int64_t most = lv[L > 1 ? L - 2 : 0].count;
  M.plan = calloc((size_t)most, sizeof *M.plan), M.planh = calloc((size_t)most, sizeof *M.planh);
  int rc =
      !ds || !es || !M.z || !L || !M.plan || !M.planh || (!q && !rows)
          ? tsr_error(ctx, TESSERA_ERR_NOMEM, "stedc: out of memory for n = %lld", (long long)n)
          : 0;
  if (!rc) {
    const double s = scale > 0 ? scale : 1;
    for (int64_t i = 0; i < n; i++) ds[i] = d[i] / s;
    for (int64_t i = 0; i + 1 < n; i++) es[i] = e[i] / s;
    for (int64_t i = 1; i < lv[L - 1].count; i++) { /* the cuts */
      const int64_t c = lv[L - 1].start[i];
      ds[c - 1] -= fabs(es[c - 1]), ds[c] -= fabs(es[c - 1]);
    }
    rc = leaves(ctx, n, &lv[L - 1], ds, es, q, ldq, rows);
  }
  for (int l = L - 2; l >= 0 && !rc && !q; l--)
    rc = values_level(ctx, n, &lv[l], &lv[l + 1], ds, es, rows, M.z, M.devices ? &M.scope : NULL);
  if (!rc && q && (L > 1 || out)) {
    rc = make_parts(&M, lv, L, q, ldq, qh, out != NULL);
    if (!rc)
      rc = tessera_data_register(ctx, TESSERA_HOST_NODE, M.z, (size_t)n, 1, (size_t)n, 8, &M.zh);
    for (int l = L - 2; l >= 0 && !rc; l--) {
      rc = merge_level(&M, &lv[l], &lv[l + 1]);
      const int r = release_plans(&M, lv[l].count);
      if (!rc) rc = r;
    }
    if (rc) (void)tessera_wait_all(ctx);
    const bool hand = out && !rc;
    for (int p = 0; p < M.parts; p++) {
      tessera_data_t *h[2] = {M.work[p], M.part[p] != qh && !hand ? M.part[p] : NULL};
      for (int i = 0; i < 2; i++) {
        const int r = h[i] ? tessera_data_release(ctx, h[i]) : 0;
        if (!rc) rc = r;
      }
    }
    const int r = M.zh ? tessera_data_release(ctx, M.zh) : 0;
    if (!rc) rc = r;
    if (hand) {
      out->count = M.parts;
      for (int p = 0; p < M.parts; p++)
        out->part[p] = M.part[p], out->start[p] = M.start[p], out->rows[p] = M.rows[p];
    }
  }
  if (!rc)
    for (int64_t i = 0; i < n; i++) d[i] = ds[i] * (scale > 0 ? scale : 1);
  for (int l = 0; l < MOST_LEVELS; l++) free(lv[l].start), free(lv[l].size);
  free(ds), free(es), free(rows), free(M.z), free(M.plan), free(M.planh);
  return rc;
}

int tsr_stedc_dc(tessera_context_t *ctx, int64_t n, double *d, double *e, double *q, int64_t ldq,
                 int64_t leaf, tessera_data_t *qh) {
  return dc(ctx, n, d, e, q, ldq, leaf, qh, NULL);
}

int tsr_stedc_dc_parts(tessera_context_t *ctx, int64_t n, double *d, double *e, double *q,
                       int64_t ldq, int64_t leaf, tsr_stedc_parts_t *out) {
  *out = (tsr_stedc_parts_t){0};
  return dc(ctx, n, d, e, q, ldq, leaf, NULL, out);
}

int tsr_stedc_values(tessera_context_t *ctx, int64_t n, double *d, double *e, int64_t leaf) {
  return dc(ctx, n, d, e, NULL, 0, leaf, NULL, NULL);
}
