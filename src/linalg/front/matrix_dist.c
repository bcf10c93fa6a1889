/* Distributed matrices moved between layouts (tessera/distribution.h): onto tessera's own
 * (tessera_matrix_fit: a copy dealt as the routines run best, its copies left in the flow), and
 * between a distributed matrix and this process's ScaLAPACK local array
 * (tessera_matrix_import_local / export_local: copy tasks between the tiles this process owns
 * and a view of its local array, waited for, the status agreed). */
#define _POSIX_C_SOURCE 200809L /* gethostname */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "linalg/front/front.h"
#include "linalg/loops/loops.h"
#include "linalg/loops/tasks.h"
#include "runtime/context.h"
#include "tessera/distribution.h"

/* Copies between A's tiles on this process and its ScaLAPACK local array, through a view of the
 * local array whose tile (i / p, j / q) is A's tile (i, j). */
static int copy_local(tessera_matrix_t *A, void *local, int64_t lld, int to_local) {
  const char *f = to_local ? "matrix_export_local" : "matrix_import_local";
  if (!A) return -1;
  if (!A->comm) return tsr_error(A->ctx, -1, "%s: the matrix is not distributed", f);
  if (A->grid.p < 1)
    return tsr_error(A->ctx, -1, "%s: the matrix is a view of blocks in place, not dealt by a grid",
                     f);
  int row, col;
  tessera_grid_coords(A->grid, tessera_comm_rank(A->comm), &row, &col);
  const int64_t lr = tessera_numroc(A->m, A->mb, row, A->grid.p);
  const int64_t lc = tessera_numroc(A->n, A->nb, col, A->grid.q);
  int rc = 0; /* the arguments first, agreed: a process refusing its own leaves nobody waiting */
  if (!local && lr > 0 && lc > 0)
    rc = tsr_error(A->ctx, -2, "%s: the local array is NULL and this process holds %lld x %lld", f,
                   (long long)lr, (long long)lc);
  else if (lld < (lr > 1 ? lr : 1))
    rc = tsr_error(A->ctx, -3, "%s: lld %lld is below this process's %lld local rows", f,
                   (long long)lld, (long long)lr);
  rc = tsr_matrix_agree(A, rc);
  if (rc) return rc;
  tessera_matrix_t *V = NULL;
  if (lr > 0 && lc > 0)
    rc = tessera_matrix_view(A->ctx, A->dtype, lr, lc, A->mb, A->nb, local, lld, &V);
  for (int64_t j = col; j < A->nt && V && !rc; j += A->grid.q)
    for (int64_t i = row; i < A->mt && !rc; i += A->grid.p) {
      tessera_data_t *t = tsr_tile(A, i, j), *v = tsr_tile(V, i / A->grid.p, j / A->grid.q);
      const int tag[3] = {(int)i, (int)j, 0};
      rc = tsr_task_lacpy(A->dtype, A->flow, to_local ? t : v, to_local ? v : t, tsr_tile_m(A, i),
                          tsr_tile_n(A, j), tag, 0);
    }
  if (!to_local) rc = tsr_matrix_flush_copies(A, rc); /* new contents: old copies dropped */
  const int w = tessera_wait_all(A->ctx);
  const int d = V ? tessera_matrix_destroy(V) : 0;
  return tsr_matrix_agree(A, rc ? rc : w ? w : d);
}

int tessera_matrix_import_local(tessera_matrix_t *A, const void *local, int64_t lld) {
  return copy_local(A, (void *)(uintptr_t)local, lld, 0);
}

int tessera_matrix_export_local(tessera_matrix_t *A, void *local, int64_t lld) {
  return copy_local(A, local, lld, 1);
}

int tsr_matrix_dealt(tessera_matrix_t *src, tessera_grid_t g, int64_t mb, char part, int on,
                     bool copy, tessera_matrix_t **out) {
  const tsr_dist_place_t work = {.part = part, .on = on, .work = true};
  *out = NULL;
  int rc = tsr_matrix_create_distributed(src->ctx, src->comm, g, src->dtype, src->m, src->n, mb,
                                         src->nb, &work, out);
  if (rc || !copy) return rc;
  /* src's received copies go once their copy is made */
  rc = tsr_matrix_flush_copies(src, tsr_pxlacpy(src, *out));
  if (rc) {
    (void)tessera_wait_all(src->ctx);
    tessera_matrix_destroy(*out);
    *out = NULL;
  }
  return rc;
}

/* The owner in A of the element at row r, column c (tiles of A; column panels have one row). */
static int owner_at(const tessera_matrix_t *A, int64_t r, int64_t c) {
  return tessera_matrix_tile_owner(A, A->mt == 1 ? 0 : r / A->mb, c / A->nb);
}

/* Whether the processes' work shares one host's cores: every process on this host (its name's
 * hash the same everywhere), every worker of their scopes a CPU worker, and more of them than
 * the host has cores. A process's idle time is then another's, and balance saves nothing. */
static int cores_shared(const tessera_matrix_t *A, int workers, int host_workers, bool *shared) {
  char name[256] = {0};
  gethostname(name, sizeof name - 1);
  int64_t h = 0;
  for (const char *c = name; *c; c++) h = (h * 31 + (unsigned char)*c) % 1000000007;
  int64_t same[2] = {h, -h}, cpus = workers == host_workers ? host_workers : -(1 << 20);
  int rc = A->flow->ops->allreduce(A->flow, same, 2, TESSERA_COMM_I64, TESSERA_MIN);
  if (!rc) rc = A->flow->ops->allreduce(A->flow, &cpus, 1, TESSERA_COMM_I64, TESSERA_SUM);
  *shared = !rc && same[0] == -same[1] && cpus > sysconf(_SC_NPROCESSORS_ONLN);
  return rc;
}

/* Whether the copy of A on grid g in mb x nb tiles (part `part`) pays, by the cost model:
 * the trailing updates' seconds on A's owners and on g's (tsr_layout_seconds, each tile's owner
 * in A the owner of its first element), against the seconds the tiles changing process take
 * at the flow's link rate, the busiest process's sends and receives (twice with `back`); none
 * saved where the processes share a host's cores (cores_shared). The same answer on every
 * process (each must find that it pays; one that cannot estimate finds that it does not). */
static int fit_pays(tessera_matrix_t *A, tessera_grid_t g, int64_t mb, char part, bool back,
                    bool *pays) {
  const int procs = tessera_comm_size(A->comm);
  const int64_t nb = A->nb, mt = (A->m + mb - 1) / mb, nt = (A->n + nb - 1) / nb;
  const int64_t steps = mt == 1 ? nt : (mt < nt ? mt : nt);
  const size_t es = tessera_dtype_size(A->dtype);
  int *now = malloc((size_t)(mt * nt + 1) * sizeof *now);
  int *fit = malloc((size_t)(mt * nt + 1) * sizeof *fit);
  double *moved = calloc((size_t)procs, sizeof *moved);
  double *scale = malloc((size_t)(steps + 1) * sizeof *scale);
  int rc = now && fit && moved && scale ? 0 : TESSERA_ERR_NOMEM;
  for (int64_t j = 0; !rc && j < nt; j++)
    for (int64_t i = 0; i < mt; i++) {
      const int64_t t = i + j * mt;
      now[t] = fit[t] = -1;
      if (!tsr_in_part(part, i, j)) continue;
      now[t] = owner_at(A, i * mb, j * nb);
      fit[t] = tessera_grid_owner(g, i, j);
      /* the elements changing process, by A's tiles within this one */
      const int64_t r1 = (i + 1) * mb < A->m ? (i + 1) * mb : A->m;
      const int64_t cols = (j + 1) * nb < A->n ? nb : A->n - j * nb;
      for (int64_t r = i * mb; r < r1;) {
        const int64_t next = A->mt == 1 ? r1 : (r / A->mb + 1) * A->mb;
        const int from = owner_at(A, r, j * nb);
        const double bytes = (double)((next < r1 ? next : r1) - r) * (double)cols * (double)es;
        if (from != fit[t] && from >= 0) moved[from] += bytes, moved[fit[t]] += bytes;
        r = next;
      }
    }
  /* a step's update of a panel spans the rows below the step, in tiles of nb */
  for (int64_t k = 0; !rc && k < steps; k++)
    scale[k] = mt == 1 ? (double)(A->m - k * nb) / (double)nb : 1;
  int workers = 0, host_workers = 0;
  bool shared = false;
  double rate = tsr_scope_rate(A->ctx, &workers, &host_workers);
  rate = rate > 0 ? rate : 1e9;
  /* collective: every process takes part, whatever its own allocations found */
  const int cs = cores_shared(A, workers, host_workers, &shared);
  if (!rc) rc = cs;
  const double unit = 2.0 * (double)nb * (double)nb * (double)nb / rate;
  double most = 0;
  for (int p = 0; !rc && p < procs; p++) most = moved[p] > most ? moved[p] : most;
  const double saved = rc || shared
                           ? 0
                           : tsr_layout_seconds(now, mt, nt, procs, steps, scale, unit) -
                                 tsr_layout_seconds(fit, mt, nt, procs, steps, scale, unit);
  const double moving = most / A->flow->ops->link(A->flow) * (back ? 2 : 1);
  int32_t yes = !rc && tsr_fit_pays(saved, moving);
  free(now), free(fit), free(moved), free(scale);
  const int r = A->flow->ops->allreduce(A->flow, &yes, 1, TESSERA_COMM_I32, TESSERA_MIN);
  *pays = yes;
  /* an estimate this process could not make (out of memory) is a copy that does not pay: the
   * same status everywhere, A itself the result; a failure of the reductions is the call's */
  return r ? r : cs;
}

int tessera_matrix_fit(tessera_matrix_t *A, tessera_layout_t layout, char part, tessera_fit_t when,
                       tessera_matrix_t **out) {
  const char *f = "matrix_fit";
  if (!A) return -1;
  if (!A->comm) return tsr_error(A->ctx, -1, "%s: A is not distributed", f);
  int rc = 0; /* every process checks alike (its arguments are compared below) */
  const bool panels = layout == TESSERA_LAYOUT_PANELS;
  if (layout != TESSERA_LAYOUT_TILES && !panels)
    rc = tsr_error(A->ctx, -2, "%s: %d is not a layout", f, (int)layout);
  else if (part != 0 && part != 'L' && part != 'U')
    rc = tsr_error(A->ctx, -3, "%s: part '%c' is not 'L', 'U' or 0 (every tile)", f, part);
  else if (part && (A->m != A->n || (A->mt > 1 && A->mb != A->nb) || panels))
    rc = tsr_error(A->ctx, -3,
                   "%s: a triangle ('%c') of a matrix that is not square in square tiles", f, part);
  else if (!panels && A->mt > 1 && A->mb != A->nb)
    rc = tsr_error(A->ctx, -1,
                   "%s: A's %lld x %lld tiles are neither square nor column panels, which square "
                   "tiles are made from",
                   f, (long long)A->mb, (long long)A->nb);
  else if (when != TESSERA_FIT_AUTO && when != TESSERA_FIT_AUTO_BACK && when != TESSERA_FIT_ALWAYS)
    rc = tsr_error(A->ctx, -4, "%s: %d is not a tessera_fit_t", f, (int)when);
  else if (!out)
    rc = tsr_error(A->ctx, -5, "%s: NULL output", f);
  const int64_t v[] = {layout, part, when};
  rc = A->flow->ops->same(A->flow, f, 3, v, (const int[]){2, 3, 4},
                          (const char *const[]){"the layout", "the part", "when"}, rc);
  if (rc) return rc;
  const int size = tessera_comm_size(A->comm);
  const tessera_grid_t g = panels ? (tessera_grid_t){1, size} : tessera_grid_fitted(size);
  const int64_t mb = panels ? (A->m > 1 ? A->m : 1) : A->nb;
  *out = NULL;
  /* the context's configuration first (TESSERA_LAYOUT), then the cost model */
  const tessera_layouts_t cfg = tessera_config(A->ctx)->dist_layout;
  bool pays = when == TESSERA_FIT_ALWAYS || cfg == TESSERA_LAYOUTS_TESSERA;
  if (!pays && cfg == TESSERA_LAYOUTS_COST)
    rc = fit_pays(A, g, mb, part, when == TESSERA_FIT_AUTO_BACK, &pays);
  if (rc || !pays) {
    if (!rc) *out = A;
    return rc;
  }
  return tsr_matrix_agree(A, tsr_matrix_dealt(A, g, mb, part, -1, true, out));
}
