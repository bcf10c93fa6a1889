/* Tiled matrix descriptors: tessera-owned tiles or views of a LAPACK array. */
#include <stdlib.h>

#include "linalg/desc/desc.h"
#include "runtime/context.h"

/* Home of tessera-owned tiles: 2D block-cyclic over the device nodes of the context's scope
 * (a P x Q grid, P <= Q) when the matrix fits in 70 % of their free memory and leaves room for
 * the tiles tasks bring in (32 tiles per device); else the host. */
typedef struct {
  int nodes[16];
  int p, q;
} placement_t;

static placement_t placement(tessera_context_t *ctx, double bytes, double tile_bytes) {
  placement_t pl = {.p = 0, .q = 0};
  int n = tessera_scope_nodes(ctx, tessera_get_scope(ctx), pl.nodes, 16);
  if (n > 16) n = 16;
  double cap = 0;
  for (int i = 0; i < n; i++) cap += (double)tessera_memory_node_available(ctx, pl.nodes[i]);
  if (n == 0 || bytes > 0.7 * cap || cap - bytes < 32.0 * n * tile_bytes) return pl;
  pl.p = 1;
  for (int d = 1; d * d <= n; d++)
    if (n % d == 0) pl.p = d;
  pl.q = n / pl.p;
  return pl;
}

/* Checks the arguments the constructors share for routine `f`; `first` is the argument number
 * of dtype (the context is 1) and `outno` that of the output. Returns 0 or -(argument number),
 * with a message. */
static int check_new(tessera_context_t *ctx, const char *f, int first, tessera_dtype_t dtype,
                     int64_t m, int64_t n, int64_t mb, int64_t nb, tessera_matrix_t **out,
                     int outno) {
  if (!ctx) return -1;
  if (!tessera_dtype_size(dtype))
    return tsr_error(ctx, -first, "%s: argument %d = %d is not a dtype", f, first, (int)dtype);
  const char *what[2] = {"rows", "columns"};
  int64_t dim[2] = {m, n}, tile[2] = {mb, nb};
  for (int k = 0; k < 2; k++)
    if (dim[k] < 0)
      return tsr_error(ctx, -(first + 1 + k), "%s: argument %d (%s) = %lld < 0", f, first + 1 + k,
                       what[k], (long long)dim[k]);
  for (int k = 0; k < 2; k++)
    if (tile[k] <= 0 || tile[k] > INT32_MAX)
      return tsr_error(ctx, -(first + 3 + k), "%s: argument %d (tile %s) = %lld is not in [1, %d]",
                       f, first + 3 + k, what[k], (long long)tile[k], INT32_MAX);
  if (!out) return tsr_error(ctx, -outno, "%s: argument %d (the output) is NULL", f, outno);
  return 0;
}

/* Checks the array of a view or a copy for routine `f`: argument `argno` is the array (NULL
 * only when the matrix is empty), argument argno + 1 its leading dimension. Returns 0 or
 * -(argument number), with a message. */
int tsr_check_array(tessera_context_t *ctx, const char *f, int argno, const void *a, int64_t m,
                    int64_t n, int64_t lda) {
  if (!a && m > 0 && n > 0)
    return tsr_error(ctx, -argno, "%s: argument %d (the array of a %lld x %lld matrix) is NULL", f,
                     argno, (long long)m, (long long)n);
  if (lda < (m > 1 ? m : 1))
    return tsr_error(ctx, -(argno + 1),
                     "%s: argument %d (leading dimension) = %lld < max(1, %lld rows)", f, argno + 1,
                     (long long)lda, (long long)m);
  return 0;
}

/* Bytes of the tiles A stores, as a double (the count may exceed SIZE_MAX); one term per tile
 * column: its stored tiles span rows [j mb, m) of a lower, [0, (j + 1) mb) of an upper triangle. */
static double stored_bytes(const tessera_matrix_t *A) {
  double es = (double)tessera_dtype_size(A->dtype), bytes = 0;
  if (!A->stored) return (double)A->m * (double)A->n * es;
  for (int64_t j = 0; j < A->nt; j++) {
    int64_t first = A->stored == 'L' ? j * A->mb : 0;
    int64_t end = A->stored == 'L' || (j + 1) * A->mb > A->m ? A->m : (j + 1) * A->mb;
    if (end > first) bytes += (double)(end - first) * (double)tsr_tile_n(A, j) * es;
  }
  return bytes;
}

int tsr_matrix_check_host(const tessera_matrix_t *A, double tile_bytes) {
  double list = ((double)A->mt * (double)A->nt + 1) * (double)sizeof *A->tiles;
  double need = list + tile_bytes;
  double cap = (double)tessera_memory_node_capacity(A->ctx, TESSERA_HOST_NODE);
  if (need <= cap && list < (double)SIZE_MAX) return 0;
  return tsr_error(A->ctx, TESSERA_ERR_NOMEM,
                   "matrix: a %lld x %lld %s matrix in %lld x %lld tiles needs %.2f GiB of host "
                   "memory%s%s; this host has %.2f GiB.",
                   (long long)A->m, (long long)A->n, tessera_dtype_name(A->dtype), (long long)A->mb,
                   (long long)A->nb, need / 1073741824.0,
                   tile_bytes > 0 ? "" : " for its tile list", A->comm ? " on this process" : "",
                   cap / 1073741824.0);
}

tessera_matrix_t *tsr_matrix_describe(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m,
                                      int64_t n, int64_t mb, int64_t nb, char stored) {
  tessera_matrix_t *A = calloc(1, sizeof *A);
  if (!A) {
    tsr_error(ctx, TESSERA_ERR_NOMEM, "matrix: out of memory for a descriptor");
    return NULL;
  }
  *A = (tessera_matrix_t){.ctx = ctx,
                          .dtype = dtype,
                          .m = m,
                          .n = n,
                          .mb = mb,
                          .nb = nb,
                          .mt = m / mb + (m % mb != 0), /* no overflow near INT64_MAX */
                          .nt = n / nb + (n % nb != 0),
                          .stored = stored,
                          .flow = tsr_context_local_flow(ctx)};
  return A;
}

int tsr_matrix_tile_list(tessera_matrix_t *A) {
  if ((A->tiles = calloc((size_t)(A->mt * A->nt) + 1, sizeof *A->tiles))) return 0;
  return tsr_error(A->ctx, TESSERA_ERR_NOMEM, "matrix: out of memory for a list of %lld tiles",
                   (long long)(A->mt * A->nt));
}

/* Creates the descriptor (arguments checked); views place each tile in its block (registered
 * in place); `stored` 'L' or 'U' creates only the tiles of that triangle (tessera-owned tiles
 * only); `workspace` makes tessera-owned tiles workspace handles (no placement). */
static int matrix_new(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n,
                      int64_t mb, int64_t nb, const tsr_blocks_t *pan, char stored, bool workspace,
                      tessera_matrix_t **out) {
  size_t es = tessera_dtype_size(dtype);
  tessera_matrix_t *A = tsr_matrix_describe(ctx, dtype, m, n, mb, nb, stored);
  if (!A) return TESSERA_ERR_NOMEM;
  A->is_view = pan->bm > 0;
  int rc = tsr_matrix_check_host(A, 0); /* the tile list first: it also bounds stored_bytes */
  placement_t pl = {.p = 0};
  if (!rc && !pan->bm && !workspace) {
    pl = placement(ctx, stored_bytes(A), (double)mb * (double)nb * (double)es);
    if (!pl.p) rc = tsr_matrix_check_host(A, stored_bytes(A));
  }
  if (!rc) rc = tsr_matrix_tile_list(A);
  if (rc) {
    free(A);
    return rc;
  }
  for (int64_t j = 0; j < A->nt && !rc; j++)
    for (int64_t i = 0; i < A->mt && !rc; i++) {
      if (!tsr_in_part(stored, i, j)) continue;
      size_t tm = (size_t)tsr_tile_m(A, i), tn = (size_t)tsr_tile_n(A, j);
      tessera_data_t **t = &A->tiles[i + j * A->mt];
      if (pan->bm) {
        char *a;
        const int64_t k = tsr_block_of(pan, mb, nb, i, j, es, &a);
        rc = tessera_data_register(ctx, pan->node[k], a, tm, tn, (size_t)pan->ld, es, t);
      } else if (workspace) {
        rc = tessera_data_create_workspace(ctx, tm, tn, es, t);
      } else if (pl.p && tessera_data_create_on(ctx, pl.nodes[(i % pl.p) * pl.q + j % pl.q], tm, tn,
                                                es, t) == 0)
        rc = 0;
      else /* no GPU placement, or that GPU's pool is full: the tile lives on the host */
        rc = tessera_data_create(ctx, tm, tn, es, t);
    }
  if (rc == TESSERA_ERR_NOMEM && !pan->bm)
    rc = tsr_error(
        ctx, rc, "matrix: out of memory for the tiles of a %lld x %lld %s matrix (%.2f GiB)",
        (long long)m, (long long)n, tessera_dtype_name(dtype), stored_bytes(A) / 1073741824.0);
  if (rc) {
    tessera_matrix_destroy(A);
    return rc;
  }
  *out = A;
  return 0;
}

int tessera_matrix_create(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n,
                          int64_t mb, int64_t nb, tessera_matrix_t **out) {
  int rc = check_new(ctx, "matrix_create", 2, dtype, m, n, mb, nb, out, 7);
  return rc ? rc : matrix_new(ctx, dtype, m, n, mb, nb, &(tsr_blocks_t){0}, 0, false, out);
}

int tsr_matrix_create_workspace(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n,
                                int64_t mb, int64_t nb, tessera_matrix_t **out) {
  int rc = check_new(ctx, "matrix_create_workspace", 2, dtype, m, n, mb, nb, out, 7);
  return rc ? rc : matrix_new(ctx, dtype, m, n, mb, nb, &(tsr_blocks_t){0}, 0, true, out);
}

int tessera_matrix_create_triangle(tessera_context_t *ctx, tessera_dtype_t dtype,
                                   tessera_uplo_t uplo, int64_t n, int64_t nb,
                                   tessera_matrix_t **out) {
  if (!ctx) return -1;
  if (!tessera_dtype_size(dtype))
    return tsr_error(ctx, -2, "matrix_create_triangle: %d is not a dtype", (int)dtype);
  if (uplo != TESSERA_LOWER && uplo != TESSERA_UPPER)
    return tsr_error(ctx, -3, "matrix_create_triangle: uplo must be 'L' or 'U'");
  if (n < 0) return tsr_error(ctx, -4, "matrix_create_triangle: n = %lld < 0", (long long)n);
  if (nb <= 0 || nb > INT32_MAX)
    return tsr_error(ctx, -5, "matrix_create_triangle: tile size %lld is out of range",
                     (long long)nb);
  if (!out) return tsr_error(ctx, -6, "matrix_create_triangle: NULL output");
  return matrix_new(ctx, dtype, n, n, nb, nb, &(tsr_blocks_t){0}, (char)uplo, false, out);
}

/* A view of one array on one node: a single panel. */
static int view_one(tessera_context_t *ctx, int node, tessera_dtype_t dtype, int64_t m, int64_t n,
                    int64_t mb, int64_t nb, void *a, int64_t lda, tessera_matrix_t **out) {
  tsr_blocks_t pan = {.bm = 1,
                      .bn = 1,
                      .brows = m > 0 ? m : 1,
                      .bcols = n > 0 ? n : 1,
                      .ld = lda,
                      .ptr = &a,
                      .node = &node};
  return matrix_new(ctx, dtype, m, n, mb, nb, &pan, 0, false, out);
}

int tessera_matrix_view_on(tessera_context_t *ctx, int node, tessera_dtype_t dtype, int64_t m,
                           int64_t n, int64_t mb, int64_t nb, void *a, int64_t lda,
                           tessera_matrix_t **out) {
  const char *f = "matrix_view_on";
  int rc = check_new(ctx, f, 3, dtype, m, n, mb, nb, out, 10);
  if (rc) return rc;
  if (node < 0 || node >= tessera_memory_node_count(ctx))
    return tsr_error(ctx, -2, "%s: argument 2 = memory node %d, which does not exist (%d nodes)", f,
                     node, tessera_memory_node_count(ctx));
  if ((rc = tsr_check_array(ctx, f, 8, a, m, n, lda))) return rc;
  return view_one(ctx, node, dtype, m, n, mb, nb, a, lda, out);
}

int tessera_matrix_view(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n,
                        int64_t mb, int64_t nb, void *a, int64_t lda, tessera_matrix_t **out) {
  int rc = check_new(ctx, "matrix_view", 2, dtype, m, n, mb, nb, out, 9);
  if (!rc) rc = tsr_check_array(ctx, "matrix_view", 7, a, m, n, lda);
  if (rc) return rc;
  return view_one(ctx, TESSERA_HOST_NODE, dtype, m, n, mb, nb, a, lda, out);
}

int tessera_matrix_view_panels(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n,
                               int64_t mb, int64_t nb, int64_t width, int count, void *const *a,
                               const int *nodes, int64_t lda, tessera_matrix_t **out) {
  const char *f = "matrix_view_panels";
  int rc = check_new(ctx, f, 2, dtype, m, n, mb, nb, out, 12);
  if (rc) return rc;
  if (width <= 0 || (count > 1 && width % nb))
    return tsr_error(ctx, -7, "%s: panel width %lld is not a positive multiple of the tile (%lld)",
                     f, (long long)width, (long long)nb);
  if (count < 1 || (double)count * (double)width < (double)n)
    return tsr_error(ctx, -8, "%s: %d panels of %lld columns do not hold %lld columns", f, count,
                     (long long)width, (long long)n);
  if (!a || !nodes) return tsr_error(ctx, !a ? -9 : -10, "%s: NULL panel array", f);
  for (int p = 0; p < count; p++) {
    int64_t cols = n - p * width < width ? n - p * width : width;
    if (!a[p] && m > 0 && cols > 0)
      return tsr_error(ctx, -9, "%s: panel %d is NULL but holds %lld columns", f, p,
                       (long long)cols);
    if (nodes[p] < 0 || nodes[p] >= tessera_memory_node_count(ctx))
      return tsr_error(ctx, -10, "%s: panel %d is on memory node %d, which does not exist", f, p,
                       nodes[p]);
  }
  if (lda < (m > 1 ? m : 1))
    return tsr_error(ctx, -11, "%s: leading dimension %lld < max(1, %lld rows)", f, (long long)lda,
                     (long long)m);
  tsr_blocks_t pan = {.bm = 1,
                      .bn = count,
                      .brows = m > 0 ? m : 1,
                      .bcols = width,
                      .ld = lda,
                      .ptr = a,
                      .node = nodes};
  return matrix_new(ctx, dtype, m, n, mb, nb, &pan, 0, false, out);
}

int tsr_blocks_check(tessera_context_t *ctx, const char *f, int argno, const tsr_blocks_t *b,
                     int64_t m, int64_t n, int64_t mb, int64_t nb, int rank) {
  const int64_t size[2] = {b->brows, b->bcols}, dim[2] = {m, n}, tile[2] = {mb, nb};
  const char *what[2] = {"rows", "columns"};
  for (int k = 0; k < 2; k++)
    if (size[k] <= 0 || (size[k] < dim[k] && size[k] % tile[k]))
      return tsr_error(ctx, -(argno + k),
                       "%s: blocks of %lld %s are not a positive multiple of the tile's %lld (a "
                       "tile would straddle two blocks)",
                       f, (long long)size[k], what[k], (long long)tile[k]);
  if (!b->ptr || !b->node || (rank >= 0 && !b->owner))
    return tsr_error(ctx,
                     !b->ptr    ? -(argno + 2)
                     : !b->node ? -(argno + 3)
                                : -(argno + 4),
                     "%s: NULL list of block %s", f,
                     !b->ptr    ? "arrays"
                     : !b->node ? "nodes"
                                : "owners");
  for (int64_t J = 0; J < b->bn; J++)
    for (int64_t I = 0; I < b->bm; I++) {
      const int64_t k = I + J * b->bm;
      const int64_t rows = m - I * b->brows < b->brows ? m - I * b->brows : b->brows;
      const int64_t cols = n - J * b->bcols < b->bcols ? n - J * b->bcols : b->bcols;
      if (rank >= 0 && b->owner[k] != rank) continue;
      if (!b->ptr[k] && rows > 0 && cols > 0)
        return tsr_error(ctx, -(argno + 2), "%s: block (%lld, %lld) is NULL but holds %lld x %lld",
                         f, (long long)I, (long long)J, (long long)rows, (long long)cols);
      if (b->node[k] < 0 || b->node[k] >= tessera_memory_node_count(ctx))
        return tsr_error(ctx, -(argno + 3),
                         "%s: block (%lld, %lld) is on memory node %d, which does not exist", f,
                         (long long)I, (long long)J, b->node[k]);
    }
  const int64_t rows = m < b->brows ? m : b->brows;
  if (b->ld < (rows > 1 ? rows : 1))
    return tsr_error(ctx, -(argno + 5), "%s: leading dimension %lld < max(1, %lld rows)", f,
                     (long long)b->ld, (long long)rows);
  return 0;
}

int tsr_matrix_view_blocks(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n,
                           int64_t mb, int64_t nb, const tsr_blocks_t *given,
                           tessera_matrix_t **out) {
  const char *f = "matrix_view_blocks";
  int rc = check_new(ctx, f, 3, dtype, m, n, mb, nb, out, 14);
  if (rc) return rc;
  tsr_blocks_t blk = *given;
  tsr_blocks_grid(&blk, m, n);
  if ((rc = tsr_blocks_check(ctx, f, 8, &blk, m, n, mb, nb, -1))) return rc;
  if (!blk.bm || !blk.bn) blk.bm = blk.bn = 1; /* an empty matrix: still a view */
  return matrix_new(ctx, dtype, m, n, mb, nb, &blk, 0, false, out);
}

/* Frees A, its tiles' latest contents brought home where `home`. */
static int destroy(tessera_matrix_t *A, bool home) {
  if (!A) return 0;
  int rc = 0;
  for (int64_t t = 0; t < A->mt * A->nt; t++)
    if (A->tiles[t]) {
      int r = home ? tessera_data_release(A->ctx, A->tiles[t]) : tsr_data_drop(A->ctx, A->tiles[t]);
      if (r && !rc) rc = r;
    }
  for (int w = 0; w < A->nwork; w++) {
    int r = tessera_data_release(A->ctx, A->work[w]);
    if (r && !rc) rc = r;
  }
  free(A->tiles);
  A->flow->ops->forget(A->flow, A->dist);
  if (A->flow != tsr_context_local_flow(A->ctx)) A->flow->ops->destroy(A->flow);
  free(A);
  return rc;
}

int tessera_matrix_destroy(tessera_matrix_t *A) {
  return destroy(A, true);
}

int tsr_matrix_drop(tessera_matrix_t *A) {
  return destroy(A, false);
}

int64_t tessera_matrix_rows(const tessera_matrix_t *A) {
  return A ? A->m : 0;
}
int64_t tessera_matrix_cols(const tessera_matrix_t *A) {
  return A ? A->n : 0;
}
int64_t tessera_matrix_tile_rows(const tessera_matrix_t *A) {
  return A ? A->mb : 0;
}
int64_t tessera_matrix_tile_cols(const tessera_matrix_t *A) {
  return A ? A->nb : 0;
}
tessera_dtype_t tessera_matrix_dtype(const tessera_matrix_t *A) {
  return A ? A->dtype : TESSERA_F64;
}

tessera_data_t *tessera_matrix_tile(const tessera_matrix_t *A, int64_t i, int64_t j) {
  if (!A || i < 0 || j < 0 || i >= A->mt || j >= A->nt) return NULL;
  return tsr_tile(A, i, j);
}

int tsr_matrix_flush(tessera_matrix_t *A) {
  int rc = 0;
  /* a distributed matrix's home is its owners' memory: the copies of other processes' tiles
   * have none to go to */
  for (int64_t t = 0; t < A->mt * A->nt && !rc; t++)
    if (A->tiles[t] && tsr_flow_mine(A->flow, A->tiles[t]))
      rc = tessera_data_sync(A->ctx, A->tiles[t]);
  return rc;
}

int tsr_matrix_flush_copies(const tessera_matrix_t *X, int rc) {
  if (!X || !X->flow->distributed) return rc;
  for (int64_t t = 0; t < X->mt * X->nt && !rc; t++)
    if (X->tiles[t]) rc = tsr_flow_flush(X->flow, X->tiles[t]);
  return rc;
}

int tsr_matrix_workspace(const tessera_matrix_t *X, int owner, size_t rows, size_t cols,
                         tsr_work_t *w) {
  return tsr_flow_workspace(X->flow, owner, rows, cols, tessera_dtype_size(X->dtype), &w->h,
                            &w->set);
}

int tsr_matrix_workspace_free(const tessera_matrix_t *X, tsr_work_t *w, int rc) {
  rc = tsr_flow_workspace_free(X->flow, w->h, w->set, rc);
  *w = (tsr_work_t){0};
  return rc;
}

/* The checks of tsr_check_operands, and with `square` those of the tiles (tsr_check_tiling). */
static int check_operands(const tessera_matrix_t *const *mats, const int *argno, int count,
                          const char *routine, bool square) {
  tessera_context_t *ctx = NULL; /* the first operand's, where a message goes */
  for (int i = 0; i < count && !ctx; i++)
    if (mats[i]) ctx = mats[i]->ctx;
  for (int i = 0; i < count; i++) {
    const tessera_matrix_t *M = mats[i];
    if (!M) return tsr_error(ctx, -argno[i], "%s: argument %d is NULL", routine, argno[i]);
    if (M->ctx != ctx || M->dtype != mats[0]->dtype)
      return tsr_error(ctx, -argno[i], "%s: argument %d has another context or dtype", routine,
                       argno[i]);
    if (square && (M->mb != M->nb || M->mb != mats[0]->mb))
      return tsr_error(ctx, -argno[i],
                       "%s: argument %d has %lld x %lld tiles; square tiles of one size needed",
                       routine, argno[i], (long long)M->mb, (long long)M->nb);
    if (M->comm != mats[0]->comm)
      return tsr_error(ctx, -argno[i],
                       "%s: argument %d is %s, argument %d %s: operands are distributed over "
                       "one communicator or none is",
                       routine, argno[i], M->comm ? "distributed" : "of this process alone",
                       argno[0], mats[0]->comm ? "distributed" : "of this process alone");
  }
  return 0;
}

int tsr_check_tiling(const tessera_matrix_t *const *mats, const int *argno, int count,
                     const char *routine) {
  return check_operands(mats, argno, count, routine, true);
}

int tsr_check_operands(const tessera_matrix_t *const *mats, const int *argno, int count,
                       const char *routine) {
  return check_operands(mats, argno, count, routine, false);
}
