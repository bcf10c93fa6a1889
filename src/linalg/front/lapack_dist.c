/* LAPACK-style calls on a context over processes (tessera_config_t.distributed): the arrays live
 * on process 0 (the root). A call compares its arguments across the processes, deals the part of
 * each array the routine reads (a triangle, or all of it) over the grid as a distributed matrix,
 * runs the tile-level routine distributed, and brings back the part it writes.
 *
 * The moves are tasks of the flow, so the runtime carries them: the root's array is a matrix
 * owned by the root (its tiles the array's blocks in place there), and the call copies its
 * tiles into the distributed matrix's (tile copies inserted before the routine's tasks: each
 * tile travels from the root to its owner over the flow's transfers, GPU to GPU over NCCL where
 * the context's devices allow, and the routine starts on the tiles as they arrive), then the
 * written tiles back. The distributed matrix's tiles have no home memory: they live where their
 * copy is made (a GPU of their owner, typically) and go when the call ends. */
#include <stdio.h>

#include "dist/dist.h"
#include "linalg/front/front.h"
#include "linalg/loops/loops.h"

enum { ROOT = 0 };

bool tsr_lapack_holds_arrays(const tessera_context_t *ctx) {
  tessera_comm_t *c = tessera_context_comm(ctx);
  return !c || tessera_comm_rank(c) == ROOT;
}

int tsr_lapack_agree(tessera_context_t *ctx, const char *f, int k, const int64_t *values,
                     const int *argno, int rc, int64_t *tile) {
  tessera_comm_t *c = tessera_context_comm(ctx);
  if (!c) return rc;
  enum { MAXK = 8 };
  char names[MAXK][16];
  const char *np[MAXK];
  if (k > MAXK) return tsr_error(ctx, TESSERA_ERR_STATE, "%s: too many arguments to compare", f);
  for (int i = 0; i < k; i++) {
    snprintf(names[i], sizeof names[i], "argument %d", argno[i]);
    np[i] = names[i];
  }
  const int s = tsr_dist_same_on(ctx, c, f, k, values, argno, np, rc);
  /* one tile size on every process: the smallest any would choose */
  return s ? s : tsr_dist_min(ctx, c, f, tile);
}

int tsr_lapack_root_flag(tessera_context_t *ctx, int flag) {
  tessera_comm_t *c = tessera_context_comm(ctx);
  if (!c) return flag;
  int32_t mine = tessera_comm_rank(c) == ROOT ? flag : 0, out = mine;
  return tessera_comm_allreduce(c, &mine, &out, 1, TESSERA_COMM_I32, TESSERA_MAX, NULL) ? flag
                                                                                        : out;
}

int tsr_lapack_broadcast(tessera_context_t *ctx, void *buf, size_t bytes) {
  tessera_comm_t *c = tessera_context_comm(ctx);
  if (!c || !bytes) return 0;
  /* every dtype's scalar is a whole number of 32-bit words */
  const int rc = tessera_comm_broadcast(c, buf, bytes / 4, TESSERA_COMM_I32, ROOT, NULL);
  return rc ? tsr_error(ctx, rc, "%s", tessera_comm_last_error(c)) : 0;
}

int tsr_lapack_scatter(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n,
                       int64_t nb, bool panels, const void *a, int64_t lda, char part, bool in,
                       tessera_matrix_t **out, tessera_matrix_t **root) {
  tessera_comm_t *c = tessera_context_comm(ctx);
  /* panels span the rows: a grid of one row deals them over every process */
  const tessera_grid_t g =
      panels ? (tessera_grid_t){1, tessera_comm_size(c)} : tessera_context_grid(ctx);
  const int64_t mb = panels ? (m > 1 ? m : 1) : nb;
  void *mine = tessera_comm_rank(c) == ROOT ? (void *)(uintptr_t)a : NULL;
  *out = *root = NULL;
  const tsr_dist_place_t work = {.part = part, .on = -2}, home = {part, ROOT, mine, lda, NULL};
  int rc = tsr_matrix_create_distributed(ctx, c, g, dtype, m, n, mb, nb, &work, out);
  if (!rc) rc = tsr_matrix_create_distributed(ctx, c, g, dtype, m, n, mb, nb, &home, root);
  if (!rc && in) /* the copies of the root's tiles go once their copy is made */
    rc = tsr_dist_flush_matrix(*root, tsr_pxlacpy(*root, *out));
  if (rc) {
    (void)tessera_wait_all(ctx);
    tessera_matrix_destroy(*out);
    tessera_matrix_destroy(*root);
    *out = *root = NULL;
  }
  return rc;
}

int tsr_lapack_gather(tessera_matrix_t *A, tessera_matrix_t *root) {
  int rc = tsr_dist_flush_matrix(A, tsr_pxlacpy(A, root));
  const int w = tessera_wait_all(A->ctx);
  if (!rc) rc = w;
  if (!rc && tessera_comm_rank(A->comm) == ROOT) rc = tsr_matrix_flush(root); /* into the array */
  return tsr_dist_agree(A->comm, rc);
}
