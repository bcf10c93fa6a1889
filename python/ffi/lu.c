/* LU on the shards of a call (lu.h). The shards are the blocks of Aᵀ, which LU factors in place
 * (when the blocks span its rows: a 1D mesh; else through a copy in column panels): P Aᵀ = L U.
 * A x = b is then (Aᵀ)ᵀ x = b, getrs with TRANS (not CONJTRANS: (Aᵀ)ᵀ = A for complex A too),
 * and Aᵀ x = b getrs with NOTRANS on the same factors. lu_solve factors and solves (with a
 * mixed-precision factor, p->mixed >= 0, tessera_tile_gesv_mixed with TRANS on the same
 * descriptors: A factored in a copy, left as it was unless it falls back; over processes too);
 * lu_factor factors, the factors back into the shards and the pivots (every process receives
 * them all) into every device's buffer; lu_factored solves on factors and pivots given. Every
 * device holds the whole Bᵀ (nrhs x Np row-major: B, n x nrhs column-major with leading
 * dimension Np); mesh device 0's copy is solved in place and the solution copied into the
 * others'. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "lu.h"

/* The solution, in the buffer of mesh device 0 (`root`: the participant holding
 * it, -1 on the other processes), into every other device's: over the communicator through
 * host memory to the other processes, then one contiguous copy per device. */
static int spread(tessera_context_t *ctx, const call_t *c, const part_t *p, int count, int root,
                  size_t bytes) {
  void *host = NULL;
  int rc = 0, from = root;
  if (c->comm) {
    host = malloc(bytes);
    if (!host) return TESSERA_ERR_NOMEM;
    if (root >= 0)
      rc = tessera_memory_copy(ctx, TESSERA_HOST_NODE, host, p[root].node, p[root].b, bytes);
    const size_t es = tessera_dtype_size(p[0].dtype);
    int b = tessera_comm_broadcast(c->comm, host, bytes / es, (tessera_comm_type_t)p[0].dtype,
                                   c->rank_of[c->owners[0]], NULL);
    if (b) fprintf(stderr, "tessera.jax: %s\n", tessera_comm_last_error(c->comm));
    rc = rc ? TESSERA_ERR_BACKEND : b;
  }
  for (int i = 0; i < count && !rc; i++) {
    if (i == root) continue;
    if (from >= 0 ? tessera_memory_copy(ctx, p[i].node, p[i].b, p[from].node, p[from].b, bytes)
                  : tessera_memory_copy(ctx, p[i].node, p[i].b, TESSERA_HOST_NODE, host, bytes))
      rc = TESSERA_ERR_BACKEND;
  }
  if (rc == TESSERA_ERR_BACKEND) fprintf(stderr, "tessera.jax: %s\n", tessera_last_error(ctx));
  free(host);
  return rc;
}

int tsr_jax_lu(tessera_context_t *ctx, const call_t *c, const part_t *p, int count) {
  const bool factor = c->op != OP_LU_FACTORED, keep = c->op == OP_LU_FACTOR;
  const int64_t n = p[0].n, nb = p[0].tile, k = keep ? 0 : p[0].nrhs, ld = p[0].cols * c->gcols;
  const size_t pivots = (size_t)(n > 0 ? n : 1) * sizeof(int);
  int *ipiv = malloc(pivots);
  if (!ipiv) {
    fprintf(stderr, "tessera.jax: out of memory for %lld pivots\n", (long long)n);
    return TESSERA_ERR_NOMEM;
  }
  int rc = 0;
  if (!factor && n > 0 && /* the pivots given, read where they are */
      tessera_memory_copy(ctx, TESSERA_HOST_NODE, ipiv, p[0].node, p[0].piv,
                          (size_t)n * sizeof *ipiv))
    rc = TESSERA_ERR_BACKEND;
  tessera_matrix_t *V = NULL, *A = NULL, *B = NULL;
  blocks_t ab;
  tsr_jax_blocks(c, p, count, n, n, p[0].cols, p[0].rows, 0, 1, 0, &ab);
  const int64_t mb = c->gcols == 1 ? n : nb; /* panels spanning the rows where blocks do */
  if (!rc)
    rc = tessera_matrix_view_blocks(ctx, c->comm, p[0].dtype, n, n, mb, nb, p[0].cols, p[0].rows,
                                    ab.a, ab.nodes, ab.owners, p[0].cols, &V);
  if (!rc) rc = tsr_jax_fit(c, V, TESSERA_LAYOUT_PANELS, 0, keep, &A);
  int root = -1; /* the participant that is mesh device 0 */
  for (int i = 0; i < count; i++)
    if (p[i].rank == 0) root = i;
  if (!rc && k > 0) {
    void *b0 = root >= 0 ? p[root].b : NULL;
    int node0 = root >= 0 ? p[root].node : TESSERA_HOST_NODE;
    int owner0 = c->comm ? c->rank_of[c->owners[0]] : 0;
    rc = tessera_matrix_view_blocks(ctx, c->comm, p[0].dtype, n, k, n, nb, n > 0 ? n : 1, k, &b0,
                                    &node0, &owner0, ld, &B);
  }
  if (!rc && B && p[0].mixed >= 0) { /* (Aᵀ)ᵀ X = B refined from a low-precision LU of Aᵀ */
    tessera_mixed_options_t o;
    tessera_mixed_options_init(&o);
    o.factor = (tessera_factor_t)p[0].mixed;
    o.trans = TESSERA_TRANS;
    rc = tessera_tile_gesv_mixed(A, ipiv, B, &o, NULL);
  } else {
    if (!rc && factor) rc = tessera_tile_getrf(A, ipiv);
    const tessera_op_t op = !factor && p[0].trans ? TESSERA_NOTRANS : TESSERA_TRANS;
    if (!rc && B) rc = tessera_tile_getrs(op, A, ipiv, B);
  }
  if (A) rc = tsr_jax_unfit(V, A, keep, rc);
  int d1 = tessera_matrix_destroy(B), d2 = tessera_matrix_destroy(V);
  if (!rc) rc = d1 ? d1 : d2;
  for (int i = 0; i < count && keep && !rc && n > 0; i++) /* the pivots into every device's */
    if (tessera_memory_copy(ctx, p[i].node, p[i].piv, TESSERA_HOST_NODE, ipiv,
                            (size_t)n * sizeof *ipiv))
      rc = TESSERA_ERR_BACKEND;
  if (rc < 0) fprintf(stderr, "tessera.jax: %s\n", tessera_last_error(ctx));
  free(ipiv);
  const size_t bytes = (size_t)k * (size_t)ld * tessera_dtype_size(p[0].dtype);
  if (!rc && bytes) rc = spread(ctx, c, p, count, root, bytes);
  return rc == TESSERA_ERR_TIMEOUT ? rc : tsr_jax_agree(c, rc);
}
