/* The Cholesky family on the shards of a call (cholesky.h): potrf with the log det and the solve
 * or the inverse, the factored solves and inverse, and potrs in mixed precision. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cholesky.h"

/* Negates the imaginary part of the element at z (complex dtypes; real ones unchanged). */
static void conjugate(tessera_dtype_t dt, void *z) {
  if (dt == TESSERA_C128) ((double *)z)[1] = -((double *)z)[1];
  if (dt == TESSERA_C64) ((float *)z)[1] = -((float *)z)[1];
}

/* dst (cols x rows, ldd = cols) = the conjugate transpose of src (rows x cols, lds = rows). */
static void conj_transpose(tessera_dtype_t dt, int64_t rows, int64_t cols, const char *src,
                           char *dst) {
  const size_t es = tessera_dtype_size(dt);
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++) {
      char *d = dst + (size_t)(j + i * cols) * es;
      memcpy(d, src + (size_t)(i + j * rows) * es, es);
      conjugate(dt, d);
    }
}

/* The n x k array at `a` (leading dimension n) summed over the call's processes in place: each
 * process's tiles of a distributed matrix, zeros elsewhere, made whole on every process. */
static int summed(const call_t *c, tessera_dtype_t dt, void *a, int64_t n, int64_t k) {
  if (!c->comm) return 0;
  const int rc = tessera_comm_allreduce(c->comm, a, a, (size_t)(n * k), (tessera_comm_type_t)dt,
                                        TESSERA_SUM, NULL);
  if (rc) fprintf(stderr, "tessera.jax: %s\n", tessera_comm_last_error(c->comm));
  return rc;
}

/* The mixed-precision solve of potrs (p->mixed >= 0): A the blocks of Aᵀ, which for Hermitian A
 * is conj(A), BT those of Bᵀ. Through the host (the refinement's vectors are there anyway):
 * C = conj(B) (n x k), tessera_tile_posv_mixed on Aᵀ and C, whose answer Z = conj(A)⁻¹ conj(B)
 * is conj(X), and Xᵀ = conj(Z)ᵀ back into BT. Over processes every one puts Bᵀ together from
 * the processes' tiles, C's rows are dealt as A's diagonal tiles are, and Z is put together the
 * same way before each process writes its own tiles of BT. */
static int mixed_solve(tessera_context_t *ctx, const call_t *c, tessera_uplo_t uplo,
                       const part_t *p, tessera_matrix_t *A, tessera_matrix_t *BT) {
  const int64_t n = p->n, k = p->nrhs, nb = p->tile, bm = (n + nb - 1) / nb;
  const tessera_dtype_t dt = (tessera_dtype_t)p->dtype;
  const size_t es = tessera_dtype_size(dt), bytes = (size_t)(n * k) * es;
  char *bt = calloc(1, bytes), *cz = malloc(bytes);
  void **blocks = calloc((size_t)bm, sizeof *blocks);
  int *owners = calloc((size_t)bm, sizeof *owners), *nodes = calloc((size_t)bm, sizeof *nodes);
  tessera_matrix_t *C = NULL;
  int rc =
      bt && cz && blocks && owners && nodes ? tessera_matrix_export(BT, bt, k) : TESSERA_ERR_NOMEM;
  if (!rc) rc = summed(c, dt, bt, k, n);
  if (!rc) conj_transpose(dt, k, n, bt, cz);
  tessera_mixed_options_t o;
  tessera_mixed_options_init(&o);
  o.factor = (tessera_factor_t)p->mixed;
  for (int64_t i = 0; i < bm && !rc; i++) {
    blocks[i] = cz + (size_t)(i * nb) * es;
    owners[i] = c->comm ? tessera_matrix_tile_owner(A, i, i) : 0;
  }
  if (!rc)
    rc = c->comm ? tessera_matrix_view_blocks(ctx, c->comm, dt, n, k, nb, nb, nb, k, blocks, nodes,
                                              owners, n, &C)
                 : tessera_matrix_view(ctx, dt, n, k, nb, nb, cz, n, &C);
  if (!rc) rc = tessera_tile_posv_mixed(uplo, A, C, &o, NULL);
  const int d = C ? tessera_matrix_destroy(C) : 0; /* the answer home in cz (its owners') */
  if (!rc) rc = d;
  const int me = c->comm ? tessera_comm_rank(c->comm) : 0;
  for (int64_t i = 0; i < bm && !rc && c->comm; i++) /* the others' blocks, for the sum */
    for (int64_t j = 0; j < k && owners[i] != me; j++)
      memset(cz + (size_t)(i * nb + j * n) * es, 0, (size_t)(i + 1 < bm ? nb : n - i * nb) * es);
  if (!rc) rc = summed(c, dt, cz, n, k);
  if (!rc) conj_transpose(dt, n, k, cz, bt);
  if (!rc) rc = tessera_matrix_import(BT, bt, k);
  free(bt), free(cz), free(blocks), free(owners), free(nodes);
  return rc;
}

/* Cholesky family on the shards (leader, scope set): potrf, then the log det and the solve
 * (potrs) or the inverse (potri); cho_solve and cho_inverse take the factor instead of A (its
 * solve, its inverse), cho_first and cho_second too (the first and the second of the solve's two
 * triangular solves: with A = Fᴴ F, F the upper factor or the lower one's conjugate transpose,
 * F⁻ᴴ B and F⁻¹ B). V is the blocks of Aᵀ, BT those of Bᵀ (potrs). */
int tsr_jax_cholesky(tessera_context_t *ctx, const call_t *c, const part_t *p, int count,
                     double *logdet) {
  const int64_t n = p[0].n, nb = p[0].tile;
  /* Read column-major, the shards are the blocks of Aᵀ: the caller's lower triangle is this
   * matrix's upper one. */
  tessera_uplo_t uplo = p[0].lower ? TESSERA_UPPER : TESSERA_LOWER;
  tessera_matrix_t *V = NULL, *A = NULL, *BT = NULL;
  blocks_t ab, bb;
  tsr_jax_blocks(c, p, count, n, n, p[0].cols, p[0].rows, 0, 1, 0, &ab);
  int rc = tessera_matrix_view_blocks(ctx, c->comm, p[0].dtype, n, n, nb, nb, p[0].cols, p[0].rows,
                                      ab.a, ab.nodes, ab.owners, p[0].cols, &V);
  /* potrs and cho_solve leave A as it was (cho_solve: A is the factor, which it only reads);
   * the factor or the inverse is the others' result */
  const bool half = c->op == OP_CHO_FIRST || c->op == OP_CHO_SECOND;
  const bool solve = c->op == OP_POTRS || c->op == OP_CHO_SOLVE || half, back = !solve;
  if (!rc) rc = tsr_jax_fit(c, V, TESSERA_LAYOUT_TILES, (char)uplo, back, &A);
  if (!rc && solve && p[0].nrhs > 0) {
    tsr_jax_blocks(c, p, count, p[0].nrhs, n, p[0].nrhs, p[0].rows, 1, 1, 1, &bb);
    rc = tessera_matrix_view_blocks(ctx, c->comm, p[0].dtype, p[0].nrhs, n, nb, nb, p[0].nrhs,
                                    p[0].rows, bb.a, bb.nodes, bb.owners, p[0].nrhs, &BT);
  }
  if (!rc && BT && p[0].mixed >= 0) {
    rc = mixed_solve(ctx, c, uplo, &p[0], A, BT);
  } else {
    const bool factored = c->op == OP_CHO_SOLVE || c->op == OP_CHO_INVERSE || half;
    if (!rc && !factored) rc = tessera_tile_potrf(uplo, A);
    if (!rc && c->op == OP_POTRS && p[0].logdet) rc = tessera_tile_logdet(uplo, A, logdet);
    if (!rc && (c->op == OP_POTRI || c->op == OP_CHO_INVERSE)) rc = tessera_tile_potri(uplo, A);
    if (!rc && BT) {
      /* A X = B as Xᵀ Aᵀ = Bᵀ: two triangular solves from the right with Aᵀ's factor,
       * LOWER (Aᵀ = L Lᴴ): Xᵀ = Bᵀ L⁻ᴴ L⁻¹; UPPER (Aᵀ = Uᴴ U): Xᵀ = Bᵀ U⁻¹ U⁻ᴴ. */
      static const double one[2] = {1, 0};
      static const float onef[2] = {1, 0};
      const void *alpha = p[0].dtype == TESSERA_F32 || p[0].dtype == TESSERA_C64
                              ? (const void *)onef
                              : (const void *)one;
      tessera_op_t first = uplo == TESSERA_LOWER ? TESSERA_CONJTRANS : TESSERA_NOTRANS;
      tessera_op_t second = uplo == TESSERA_LOWER ? TESSERA_NOTRANS : TESSERA_CONJTRANS;
      if (c->op != OP_CHO_SECOND)
        rc = tessera_tile_trsm(TESSERA_RIGHT, uplo, first, TESSERA_NONUNIT, alpha, A, BT);
      if (!rc && c->op != OP_CHO_FIRST)
        rc = tessera_tile_trsm(TESSERA_RIGHT, uplo, second, TESSERA_NONUNIT, alpha, A, BT);
    }
  }
  if (A) rc = tsr_jax_unfit(V, A, back, rc); /* the result back into the shards */
  if (rc < 0) fprintf(stderr, "tessera.jax: %s\n", tessera_last_error(ctx));
  int d1 = tessera_matrix_destroy(BT), d2 = tessera_matrix_destroy(V);
  return rc ? rc : d1 ? d1 : d2;
}
