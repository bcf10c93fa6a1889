/* The polar decomposition and the SVD on the shards of a JAX call (operations polar and gesvd
 * of the handler table, flags TRANSPOSED | SQUARE, gesvd with EIGEN).
 *
 * A is m x n with m >= n (tessera.jax turns a wide A's SVD into its conjugate transpose's).
 * Each device's buffer of A is its block of A transposed, so read column-major it is the block
 * itself, as QR's (qr.c); the second operand is the device's block of an n x n matrix sharded
 * as A (H for polar, Vᴴ for gesvd), given the same way. Both are registered in place as tessera
 * matrices of square tiles (the tile divides every block the mesh splits), and the library's
 * tile-level routine runs on them: tessera_tile_gepolar (U_p over A, H into the second) or
 * tessera_tile_gesvd (U over A, Vᴴ into the second, the singular values to every device).
 * Over processes the views are distributed: each tile's tasks run where its block lies. Rows
 * and columns past m and n are padding, never read or written. */
#include <stdio.h>
#include <stdlib.h>

#include "svd.h"

int tsr_jax_svd_shape(const call_t *c, const part_t *p) {
  const int64_t grows = c->ndev / c->gcols;
  /* p->cols is a block's rows, p->rows its columns (the buffers are the blocks transposed) */
  if (p->n < 1 || p->m < p->n || p->tile < 1 || p->m > p->cols * grows ||
      p->n > p->rows * c->gcols || (p->vectors && p->n > p->hrows * grows) || p->nrhs != p->rows) {
    fprintf(stderr,
            "tessera.jax: %d x %d blocks of %lld x %lld (and %lld x %lld) do not hold a %lld x "
            "%lld matrix with m >= n and its n x n companion\n",
            (int)grows, c->gcols, (long long)p->cols, (long long)p->rows, (long long)p->hrows,
            (long long)p->nrhs, (long long)p->m, (long long)p->n);
    return TESSERA_ERR_STATE;
  }
  return 0;
}

int tsr_jax_svd(tessera_context_t *ctx, const call_t *c, const part_t *p, int count) {
  const int64_t m = p[0].m, n = p[0].n, nb = p[0].tile;
  const int64_t brows = p[0].cols, bcols = p[0].rows, hrows = p[0].hrows;
  const tessera_dtype_t dt = (tessera_dtype_t)p[0].dtype;
  const int svd = c->op == OP_GESVD, vectors = p[0].vectors != 0;
  const size_t rs = dt == TESSERA_F32 || dt == TESSERA_C64 ? sizeof(float) : sizeof(double);
  void *s = svd ? malloc((size_t)n * rs) : NULL;
  if (svd && !s) {
    fprintf(stderr, "tessera.jax: out of memory for %lld singular values\n", (long long)n);
    return tsr_jax_agree(c, TESSERA_ERR_NOMEM);
  }
  tessera_matrix_t *A = NULL, *B = NULL;
  blocks_t ab, bb;
  tsr_jax_blocks(c, p, count, m, n, brows, bcols, 0, 0, 0, &ab);
  int rc = tessera_matrix_view_blocks(ctx, c->comm, dt, m, n, nb, nb, brows, bcols, ab.a, ab.nodes,
                                      ab.owners, brows, &A);
  if (!rc && vectors) {
    tsr_jax_blocks(c, p, count, n, n, hrows, bcols, 1, 0, 0, &bb);
    rc = tessera_matrix_view_blocks(ctx, c->comm, dt, n, n, nb, nb, hrows, bcols, bb.a, bb.nodes,
                                    bb.owners, hrows, &B);
  }
  if (!rc && svd)
    rc =
        tessera_tile_gesvd(vectors ? TESSERA_VECTORS : TESSERA_VALUES, A, s, vectors ? A : NULL, B);
  else if (!rc)
    rc = tessera_tile_gepolar(A, B, NULL);
  if (rc < 0 && rc != TESSERA_ERR_TIMEOUT)
    fprintf(stderr, "tessera.jax: %s\n", tessera_last_error(ctx));
  const int d1 = tessera_matrix_destroy(B), d2 = tessera_matrix_destroy(A);
  if (!rc) rc = d1 ? d1 : d2;
  for (int i = 0; i < count && !rc && svd; i++)
    if (tessera_memory_copy(ctx, p[i].node, p[i].w, TESSERA_HOST_NODE, s, (size_t)n * rs)) {
      fprintf(stderr, "tessera.jax: %s\n", tessera_last_error(ctx));
      rc = TESSERA_ERR_BACKEND;
    }
  free(s);
  return rc == TESSERA_ERR_TIMEOUT ? rc : tsr_jax_agree(c, rc);
}

int tessera_jax_tile_polar(tsr_jax_state_t *s, int platform, int64_t m, int64_t n) {
  return tsr_jax_tile_of(s, platform, m, n, tessera_tile_for_polar);
}
