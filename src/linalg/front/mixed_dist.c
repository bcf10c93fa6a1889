/* The low-precision copy of a distributed A in a mixed-precision solve (front/mixed.h), its
 * tiles owned as A's tiles are. */
#include <stdlib.h>

#include "linalg/desc/desc.h"
#include "linalg/front/mixed.h"
#include "linalg/loops/refine.h"
#include "runtime/context.h"

/* The process owning A's tile (i, j), or for a Hermitian A the stored one of (i, j) and
 * (j, i). */
static int owner_of(const tsr_mixed_t *m, int64_t i, int64_t j) {
  const bool swap = (m->uplo == 'L' && i < j) || (m->uplo == 'U' && i > j);
  return tessera_matrix_tile_owner(m->A, swap ? j : i, swap ? i : j);
}

int tsr_mixed_low_copy(tsr_mixed_t *m, int64_t mb, int64_t nb, void **store) {
  const int64_t n = m->n;
  const tessera_matrix_t *A = m->A;
  if (!A->is_view && A->grid.p > 0 && A->mb == mb && A->nb == nb) /* dealt by a grid: A's owners */
    return tsr_matrix_create_distributed(m->ctx, m->comm, A->grid, m->lo, n, n, mb, nb,
                                         &(tsr_dist_place_t){.on = -1, .work = true}, &m->L);
  const int64_t mt = (n + mb - 1) / mb, nt = (n + nb - 1) / nb, count = mt * nt;
  const int me = tessera_comm_rank(m->comm);
  void **blocks = calloc((size_t)count, sizeof *blocks);
  int *owners = malloc((size_t)count * sizeof *owners),
      *nodes = calloc((size_t)count, sizeof *nodes);
  int64_t mine = 0;
  for (int64_t k = 0; owners && k < count; k++)
    mine += (owners[k] = owner_of(m, k % mt, k / mt)) == me;
  const size_t tile = (size_t)(mb * nb) * m->les;
  *store = malloc(mine > 0 ? (size_t)mine * tile : 1);
  int rc = blocks && owners && nodes && *store ? 0 : TESSERA_ERR_NOMEM;
  for (int64_t k = 0, used = 0; !rc && k < count; k++)
    if (owners[k] == me) blocks[k] = (char *)*store + (size_t)used++ * tile;
  if (!rc)
    rc = tessera_matrix_view_blocks(m->ctx, m->comm, m->lo, n, n, mb, nb, mb, nb, blocks, nodes,
                                    owners, mb, &m->L);
  free(blocks), free(owners), free(nodes);
  return rc == TESSERA_ERR_NOMEM ? tsr_error(m->ctx, rc, "mixed-precision solve: out of memory")
                                 : rc;
}
