/* QR and least squares on the shards of a JAX call (operations qr and least_squares of the
 * handler table, flags RHS_ROWS | TRANSPOSED).
 *
 * A is m x n, of any shape for QR, m >= n for least squares. Each device's buffer of A is its
 * block of A transposed, row-major (XLA's dims: its block's columns x its rows), so read
 * column-major it is the block of A itself: block (I, J) of A for the device at mesh row I and
 * column J, with leading dimension its rows. tessera's QR runs on column panels, which these
 * blocks are when the mesh has one row (a copy in panels otherwise, made by the library; over
 * processes a copy on tessera's cyclic panels, the factored A brought back for R). The
 * right-hand side is this device's rows of a matrix C (QR: [I; 0], whose columns become Q's)
 * or B (least squares), transposed as A's block; on a 2D mesh those of mesh column 0 are the
 * matrix's, the others are left as they are. Rows and columns past m and n are padding, never
 * read or written. */
#include <stdio.h>
#include <stdlib.h>

#include "qr.h"

int tsr_jax_qr_shape(const call_t *c, const part_t *p) {
  const int64_t grows = c->ndev / c->gcols;
  /* p->cols is a block's rows, p->rows its columns (the buffer is the block transposed) */
  if (p->m < 1 || p->n < 1 || p->tile < 1 || p->m > p->cols * grows || p->n > p->rows * c->gcols ||
      (c->op == OP_LEAST_SQUARES && p->m < p->n)) {
    fprintf(stderr,
            "tessera.jax: %d x %d blocks of %lld x %lld do not hold a %lld x %lld matrix%s\n",
            (int)grows, c->gcols, (long long)p->cols, (long long)p->rows, (long long)p->m,
            (long long)p->n, c->op == OP_LEAST_SQUARES ? " with m >= n" : "");
    return TESSERA_ERR_STATE;
  }
  return 0;
}

int tsr_jax_qr(tessera_context_t *ctx, const call_t *c, const part_t *p, int count) {
  const int64_t m = p[0].m, n = p[0].n, k = p[0].nrhs, nb = p[0].tile;
  const int64_t brows = p[0].cols, bcols = p[0].rows, kmin = m < n ? m : n;
  const tessera_dtype_t dtype = (tessera_dtype_t)p[0].dtype;
  /* tiles of a block's rows; where one block spans A's rows, column panels of A itself */
  const int64_t mb = c->ndev / c->gcols == 1 || brows > m ? m : brows;
  void *tau = c->op == OP_QR ? malloc((size_t)kmin * tessera_dtype_size(dtype)) : NULL;
  if (c->op == OP_QR && !tau) {
    fprintf(stderr, "tessera.jax: out of memory for %lld reflectors\n", (long long)kmin);
    return tsr_jax_agree(c, TESSERA_ERR_NOMEM);
  }
  tessera_matrix_t *V = NULL, *A = NULL, *C = NULL;
  blocks_t ab, cb;
  tsr_jax_blocks(c, p, count, m, n, brows, bcols, 0, 0, 0, &ab);
  int rc = tessera_matrix_view_blocks(ctx, c->comm, dtype, m, n, mb, nb, brows, bcols, ab.a,
                                      ab.nodes, ab.owners, brows, &V);
  /* over processes: panels, the factored A back for R (qr) */
  if (!rc) rc = tsr_jax_fit(c, V, TESSERA_LAYOUT_PANELS, 0, c->op == OP_QR, &A);
  if (!rc && k > 0) {
    tsr_jax_blocks(c, p, count, m, k, brows, k, 1, 0, 1, &cb);
    rc = tessera_matrix_view_blocks(ctx, c->comm, dtype, m, k, mb, k < nb ? k : nb, brows, k, cb.a,
                                    cb.nodes, cb.owners, brows, &C);
  }
  if (!rc && c->op == OP_QR) {
    rc = tessera_tile_geqrf(A, tau); /* R above the diagonal, the reflectors below */
    if (!rc && C) rc = tessera_tile_unmqr(TESSERA_LEFT, TESSERA_NOTRANS, A, tau, C); /* Q C */
  } else if (!rc) {
    rc = C ? tessera_tile_gels(A, C) : 0; /* X in B's first n rows, unless R(i, i) = 0 */
  }
  if (A) rc = tsr_jax_unfit(V, A, c->op == OP_QR, rc); /* R is read off the shards */
  if (rc < 0) fprintf(stderr, "tessera.jax: %s\n", tessera_last_error(ctx));
  int d1 = tessera_matrix_destroy(C), d2 = tessera_matrix_destroy(V);
  if (!rc) rc = d1 ? d1 : d2;
  free(tau);
  return rc == TESSERA_ERR_TIMEOUT ? rc : tsr_jax_agree(c, rc);
}

int tessera_jax_tile_qr(tsr_jax_state_t *s, int platform, int64_t m, int64_t n) {
  return tsr_jax_tile_of(s, platform, m, n, tessera_tile_for_qr);
}
