/* Distributed matrices (tessera_matrix_create_distributed and its import / export of ScaLAPACK
 * local arrays): descriptors whose tiles carry the distributed flows' records (dist/dist.h),
 * dealt over a process grid by the 2D block-cyclic layout (dist/layout.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "dist/dist.h"
#include "linalg/loops/tasks.h"
#include "tessera/distribution.h"

int tessera_matrix_create_distributed(tessera_context_t *ctx, tessera_comm_t *comm,
                                      tessera_grid_t grid, tessera_dtype_t dtype, int64_t m,
                                      int64_t n, int64_t mb, int64_t nb, tessera_matrix_t **out) {
  return tsr_matrix_create_distributed(ctx, comm, grid, dtype, m, n, mb, nb, 0, -1, NULL, 0, out);
}

int tsr_matrix_create_distributed(tessera_context_t *ctx, tessera_comm_t *comm, tessera_grid_t grid,
                                  tessera_dtype_t dtype, int64_t m, int64_t n, int64_t mb,
                                  int64_t nb, char part, int on, void *mine, int64_t ld,
                                  tessera_matrix_t **out) {
  const char *f = "matrix_create_distributed";
  if (!ctx) return -1;
  if (!comm) return tsr_error(ctx, -2, "%s: NULL communicator", f);
  const int size = tessera_comm_size(comm), rank = tessera_comm_rank(comm);
  if (grid.p < 1 || grid.q < 1 || (int64_t)grid.p * grid.q != size)
    return tsr_error(ctx, -3, "%s: a %d x %d grid for a communicator of %d processes", f, grid.p,
                     grid.q, size);
  if (!tessera_dtype_size(dtype)) return tsr_error(ctx, -4, "%s: %d is not a dtype", f, (int)dtype);
  if (m < 0 || n < 0) return tsr_error(ctx, m < 0 ? -5 : -6, "%s: negative size", f);
  if (mb < 1 || nb < 1 || mb > INT32_MAX || nb > INT32_MAX)
    return tsr_error(ctx, mb < 1 || mb > INT32_MAX ? -7 : -8, "%s: tile size out of range", f);
  if (!out) return tsr_error(ctx, -9, "%s: NULL output", f);
  const int64_t v[] = {grid.p, grid.q, dtype, m, n, mb, nb, part};
  const int pos[] = {3, 3, 4, 5, 6, 7, 8, 2};
  const char *const names[] = {
      "the grid's rows", "the grid's columns", "the dtype", "m", "n", "mb", "nb", "the part"};
  int rc = tsr_dist_same_on(ctx, comm, f, 8, v, pos, names, 0);
  if (rc) return rc;
  tessera_matrix_t *A = tsr_matrix_describe(ctx, dtype, m, n, mb, nb, part);
  if (A) A->comm = comm, A->grid = grid;
  const size_t es = tessera_dtype_size(dtype);
  /* the host holds the tile list and the tiles this process makes on it (a workspace lives where
   * its first writer runs, a registered tile is the caller's; a part's tiles are bounded by the
   * whole matrix's); every process learns whether one cannot, so none goes on alone */
  int row, col;
  tessera_grid_coords(grid, rank, &row, &col);
  const double own = on == -2 || mine ? 0
                     : on >= 0        ? (on == rank ? (double)m * (double)n * (double)es : 0)
                                      : (double)tessera_numroc(m, mb, row, grid.p) *
                                     (double)tessera_numroc(n, nb, col, grid.q) * (double)es;
  rc = A ? tsr_matrix_check_host(A, own) : TESSERA_ERR_NOMEM;
  if (!rc) rc = tsr_matrix_tile_list(A);
  rc = tsr_dist_agree_on(ctx, comm, rc,
                         "matrix_create_distributed: another process cannot hold its part of "
                         "the matrix in host memory.");
  tsr_dist_tile_t *rec = NULL;
  if (!rc) { /* the tile list fits: its count does not overflow */
    rc = tsr_dist_tiles(comm, ctx, (size_t)(A->mt * A->nt), &rec);
    if (rc)
      rc = tsr_error(ctx, rc, "%s: %s", f,
                     rc == TESSERA_ERR_NOMEM ? "out of memory" : tessera_comm_last_error(comm));
  }
  if (rc && (!A || !A->tiles)) {
    free(A);
    return rc;
  }
  A->dist = rec;
  for (int64_t j = 0; j < A->nt && !rc; j++)
    for (int64_t i = 0; i < A->mt && !rc; i++) {
      if (!tsr_in_part(part, i, j)) continue;
      const size_t tm = (size_t)(i < A->mt - 1 ? mb : m - i * mb);
      const size_t tn = (size_t)(j < A->nt - 1 ? nb : n - j * nb);
      tsr_dist_tile_t *r = &rec[i + j * A->mt];
      tessera_data_t **t = &A->tiles[i + j * A->mt];
      r->owner = on >= 0 ? on : tessera_grid_owner(grid, i, j); /* -1, -2: by the grid */
      char *at = mine ? (char *)mine + (size_t)(i * mb + j * nb * ld) * es : NULL;
      rc = r->owner != rank || on == -2 ? tessera_data_create_workspace(ctx, tm, tn, es, t)
           : at ? tessera_data_register(ctx, TESSERA_HOST_NODE, at, tm, tn, (size_t)ld, es, t)
                : tessera_data_create(ctx, tm, tn, es, t);
      if (!rc) tsr_dist_attach(*t, r);
    }
  if (rc) {
    tessera_matrix_destroy(A);
    return rc;
  }
  *out = A;
  return 0;
}

int tessera_matrix_tile_owner(const tessera_matrix_t *A, int64_t i, int64_t j) {
  if (!A || !A->comm || i < 0 || j < 0 || i >= A->mt || j >= A->nt) return -1;
  return tessera_grid_owner(A->grid, i, j);
}

int tsr_dist_flush_matrix(const tessera_matrix_t *X, int rc) {
  if (!X || !X->comm) return rc;
  for (int64_t t = 0; t < X->mt * X->nt && !rc; t++)
    if (X->tiles[t]) rc = tsr_dist_flush(X->ctx, X->tiles[t]);
  return rc;
}

/* Copies between A's tiles on this process and its ScaLAPACK local array, through a view of the
 * local array whose tile (i / p, j / q) is A's tile (i, j). */
static int copy_local(tessera_matrix_t *A, void *local, int64_t lld, int to_local) {
  const char *f = to_local ? "matrix_export_local" : "matrix_import_local";
  if (!A) return -1;
  if (!A->comm) return tsr_error(A->ctx, -1, "%s: the matrix is not distributed", f);
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
  rc = tsr_dist_agree(A->comm, rc);
  if (rc) return rc;
  tessera_matrix_t *V = NULL;
  if (lr > 0 && lc > 0)
    rc = tessera_matrix_view(A->ctx, A->dtype, lr, lc, A->mb, A->nb, local, lld, &V);
  for (int64_t j = col; j < A->nt && V && !rc; j += A->grid.q)
    for (int64_t i = row; i < A->mt && !rc; i += A->grid.p) {
      tessera_data_t *t = tsr_tile(A, i, j), *v = tsr_tile(V, i / A->grid.p, j / A->grid.q);
      const int tag[3] = {(int)i, (int)j, 0};
      rc = tsr_task_lacpy(A->dtype, A->ctx, to_local ? t : v, to_local ? v : t, tsr_tile_m(A, i),
                          tsr_tile_n(A, j), tag, 0);
    }
  if (!to_local) rc = tsr_dist_flush_matrix(A, rc); /* new contents: old copies dropped */
  const int w = tessera_wait_all(A->ctx);
  const int d = V ? tessera_matrix_destroy(V) : 0;
  return tsr_dist_agree(A->comm, rc ? rc : w ? w : d);
}

int tessera_matrix_import_local(tessera_matrix_t *A, const void *local, int64_t lld) {
  return copy_local(A, (void *)(uintptr_t)local, lld, 0);
}

int tessera_matrix_export_local(tessera_matrix_t *A, void *local, int64_t lld) {
  return copy_local(A, local, lld, 1);
}
