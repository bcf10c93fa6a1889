/* Distributed matrices (tessera_matrix_create_distributed and its import / export of ScaLAPACK
 * local arrays): descriptors whose tiles carry the distributed flows' records (distributed/dist.h),
 * dealt over a process grid by the 2D block-cyclic layout (distributed/layout.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comm/transport.h"
#include "distributed/dist.h"
#include "linalg/desc/desc.h"
#include "tessera/distribution.h"

int tessera_matrix_create_distributed(tessera_context_t *ctx, tessera_comm_t *comm,
                                      tessera_grid_t grid, tessera_dtype_t dtype, int64_t m,
                                      int64_t n, int64_t mb, int64_t nb, tessera_matrix_t **out) {
  const tsr_dist_place_t at = {.on = -1};
  return tsr_matrix_create_distributed(ctx, comm, grid, dtype, m, n, mb, nb, &at, out);
}

/* A checksum of the blocks' owners, the same on every process that passes the same table. */
static int64_t owners_sum(const tsr_blocks_t *b) {
  uint64_t sum = 0;
  for (int64_t k = 0; k < b->bm * b->bn; k++) sum = sum * 31 + (uint64_t)b->owner[k] + 1;
  return (int64_t)(sum >> 1);
}

int tsr_matrix_create_distributed(tessera_context_t *ctx, tessera_comm_t *comm, tessera_grid_t grid,
                                  tessera_dtype_t dtype, int64_t m, int64_t n, int64_t mb,
                                  int64_t nb, const tsr_dist_place_t *at, tessera_matrix_t **out) {
  const tsr_blocks_t *given = at->blocks;
  const char *f = given ? "matrix_view_blocks" : "matrix_create_distributed";
  const int shift = given ? 1 : 0; /* view_blocks numbers its arguments from dtype = 3 */
  if (!ctx) return -1;
  if (!comm) return tsr_error(ctx, -2, "%s: NULL communicator", f);
  const int size = tessera_comm_size(comm), rank = tessera_comm_rank(comm);
  if (!given && (grid.p < 1 || grid.q < 1 || (int64_t)grid.p * grid.q != size))
    return tsr_error(ctx, -3, "%s: a %d x %d grid for a communicator of %d processes", f, grid.p,
                     grid.q, size);
  if (!tessera_dtype_size(dtype))
    return tsr_error(ctx, -4 + shift, "%s: %d is not a dtype", f, (int)dtype);
  if (m < 0 || n < 0) return tsr_error(ctx, (m < 0 ? -5 : -6) + shift, "%s: negative size", f);
  if (mb < 1 || nb < 1 || mb > INT32_MAX || nb > INT32_MAX)
    return tsr_error(ctx, (mb < 1 || mb > INT32_MAX ? -7 : -8) + shift,
                     "%s: tile size out of range", f);
  if (!out) return tsr_error(ctx, given ? -14 : -9, "%s: NULL output", f);
  /* the blocks' grid, and this process's own checks of them: folded into the agreement */
  tsr_blocks_t blk = given ? *given : (tsr_blocks_t){0};
  int bad = 0;
  if (given) {
    tsr_blocks_grid(&blk, m, n);
    bad = tsr_blocks_check(ctx, f, 8, &blk, m, n, mb, nb, rank);
    for (int64_t k = 0; !bad && k < blk.bm * blk.bn; k++)
      if (blk.owner[k] < 0 || blk.owner[k] >= size)
        bad = tsr_error(ctx, -12, "%s: block %lld belongs to process %d, not one of 0 .. %d", f,
                        (long long)k, blk.owner[k], size - 1);
  }
  /* the owners' checksum reads bm x bn entries: only where the blocks' sizes hold, which every
   * process finds alike (the sizes are compared too) */
  const bool whole = given && blk.owner && blk.brows > 0 && blk.bcols > 0 &&
                     (blk.brows >= m || blk.brows % mb == 0) &&
                     (blk.bcols >= n || blk.bcols % nb == 0);
  const int64_t v[] = {grid.p,
                       grid.q,
                       dtype,
                       m,
                       n,
                       mb,
                       nb,
                       at->part,
                       blk.brows,
                       blk.bcols,
                       whole ? owners_sum(&blk) : 0};
  const int pos[] = {3, 3, 4 - shift, 5 - shift, 6 - shift, 7 - shift, 8 - shift, 2, 8, 9, 12};
  const char *const names[] = {"the grid's rows",
                               "the grid's columns",
                               "the dtype",
                               "m",
                               "n",
                               "mb",
                               "nb",
                               "the part",
                               "the blocks' rows",
                               "the blocks' columns",
                               "the blocks' owners"};
  int rc = tsr_dist_same_on(ctx, comm, f, given ? 11 : 8, v, pos, names, bad);
  if (rc) return rc;
  if (given && (!blk.bm || !blk.bn)) blk.bm = blk.bn = 1; /* an empty matrix */
  tessera_matrix_t *A = tsr_matrix_describe(ctx, dtype, m, n, mb, nb, at->part);
  if (A) A->comm = comm, A->grid = grid, A->is_view = given != NULL;
  const size_t es = tessera_dtype_size(dtype);
  /* the host holds the tile list and the tiles this process makes on it (a workspace lives where
   * its first writer runs, a registered tile is the caller's; a part's tiles are bounded by the
   * whole matrix's); every process learns whether one cannot, so none goes on alone */
  int row = 0, col = 0;
  if (!given) tessera_grid_coords(grid, rank, &row, &col);
  const double own = at->work || at->mine || given ? 0
                     : at->on >= 0 ? (at->on == rank ? (double)m * (double)n * (double)es : 0)
                                   : (double)tessera_numroc(m, mb, row, grid.p) *
                                         (double)tessera_numroc(n, nb, col, grid.q) * (double)es;
  rc = A ? tsr_matrix_check_host(A, own) : TESSERA_ERR_NOMEM;
  if (!rc) rc = tsr_matrix_tile_list(A);
  tsr_flow_t *flow = rc ? NULL : tsr_dist_flow_create(ctx, comm);
  const size_t count = rc ? 0 : (size_t)(A->mt * A->nt); /* the tile list fits: no overflow */
  int *owner = rc ? NULL : malloc((count ? count : 1) * sizeof *owner);
  if (!rc && (!flow || !owner)) rc = tsr_error(ctx, TESSERA_ERR_NOMEM, "%s: out of memory", f);
  rc = tsr_dist_agree_on(ctx, comm, rc,
                         "matrix_create_distributed: another process cannot hold its part of "
                         "the matrix in host memory.");
  if (rc) {
    if (flow) flow->ops->destroy(flow);
    free(owner);
    if (A) free(A->tiles);
    free(A);
    return rc;
  }
  A->flow = flow;
  /* every tile's owner, then the tiles, then the flow adopts them all (a collective call that
   * every process makes, whether or not it could make its tiles) */
  for (int64_t j = 0; j < A->nt; j++)
    for (int64_t i = 0; i < A->mt; i++) {
      const size_t t = (size_t)(i + j * A->mt);
      owner[t] = -1;
      if (!tsr_in_part(at->part, i, j)) continue;
      char *place = NULL;
      const size_t tm = (size_t)tsr_tile_m(A, i), tn = (size_t)tsr_tile_n(A, j);
      int node = TESSERA_HOST_NODE;
      size_t ld = (size_t)at->ld;
      if (given) {
        const int64_t k = tsr_block_of(&blk, mb, nb, i, j, es, &place);
        owner[t] = blk.owner[k];
        node = owner[t] == rank ? blk.node[k] : node;
        ld = (size_t)blk.ld;
      } else {
        owner[t] = at->on >= 0 ? at->on : tessera_grid_owner(grid, i, j);
        if (at->mine) place = (char *)at->mine + (size_t)(i * mb + j * nb * at->ld) * es;
      }
      if (rc) continue;
      rc = owner[t] != rank || at->work
               ? tessera_data_create_workspace(ctx, tm, tn, es, &A->tiles[t])
           : place ? tessera_data_register(ctx, node, place, tm, tn, ld, es, &A->tiles[t])
                   : tessera_data_create(ctx, tm, tn, es, &A->tiles[t]);
    }
  const int adopted = flow->ops->adopt(flow, count, A->tiles, owner, &A->dist);
  free(owner);
  if (!rc) rc = adopted;
  if (rc) {
    tessera_matrix_destroy(A);
    return rc;
  }
  *out = A;
  return 0;
}

int tessera_matrix_view_blocks(tessera_context_t *ctx, tessera_comm_t *comm, tessera_dtype_t dtype,
                               int64_t m, int64_t n, int64_t mb, int64_t nb, int64_t brows,
                               int64_t bcols, void *const *a, const int *nodes, const int *owners,
                               int64_t lda, tessera_matrix_t **out) {
  const tsr_blocks_t blk = {
      .brows = brows, .bcols = bcols, .ld = lda, .ptr = a, .node = nodes, .owner = owners};
  if (!comm) return tsr_matrix_view_blocks(ctx, dtype, m, n, mb, nb, &blk, out);
  const tsr_dist_place_t at = {.on = -1, .blocks = &blk};
  return tsr_matrix_create_distributed(ctx, comm, (tessera_grid_t){0, 0}, dtype, m, n, mb, nb, &at,
                                       out);
}

int tessera_matrix_tile_owner(const tessera_matrix_t *A, int64_t i, int64_t j) {
  if (!A || !A->comm || i < 0 || j < 0 || i >= A->mt || j >= A->nt) return -1;
  const tsr_dist_tile_t *rec = A->dist;
  return rec[i + j * A->mt].owner; /* also where a part's tile is absent */
}
