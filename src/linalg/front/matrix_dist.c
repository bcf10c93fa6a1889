/* Distributed matrices moved between layouts (tessera/distribution.h): onto tessera's own
 * (tessera_matrix_fit: a copy dealt as the routines run best, its copies left in the flow), and
 * between a distributed matrix and this process's ScaLAPACK local array
 * (tessera_matrix_import_local / export_local: copy tasks between the tiles this process owns
 * and a view of its local array, waited for, the status agreed). */
#include <stdint.h>

#include "linalg/desc/desc.h"
#include "linalg/loops/loops.h"
#include "linalg/loops/tasks.h"
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

int tessera_matrix_fit(tessera_matrix_t *A, tessera_layout_t layout, char part,
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
  else if (!out)
    rc = tsr_error(A->ctx, -4, "%s: NULL output", f);
  const int64_t v[] = {layout, part};
  rc = A->flow->ops->same(A->flow, f, 2, v, (const int[]){2, 3},
                          (const char *const[]){"the layout", "the part"}, rc);
  if (rc) return rc;
  const int size = tessera_comm_size(A->comm);
  const tessera_grid_t g = panels ? (tessera_grid_t){1, size} : tessera_grid_fitted(size);
  const int64_t mb = panels ? (A->m > 1 ? A->m : 1) : A->nb;
  const tsr_dist_place_t work = {.part = part, .on = -2};
  *out = NULL;
  rc = tsr_matrix_create_distributed(A->ctx, A->comm, g, A->dtype, A->m, A->n, mb, A->nb, &work,
                                     out);
  if (rc) return rc;
  /* A's received copies go once their copy is made */
  rc = tsr_matrix_flush_copies(A, tsr_pxlacpy(A, *out));
  if (rc) {
    (void)tessera_wait_all(A->ctx);
    tessera_matrix_destroy(*out);
    *out = NULL;
  }
  return tsr_matrix_agree(A, rc);
}
