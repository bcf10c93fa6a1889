/* tessera — tiled matrix descriptors.
 *
 * A matrix of m x n elements of one dtype is cut into tiles of mb x nb (the last tile row and
 * column may be smaller). Each tile is a data handle. A matrix either owns its tiles
 * (contiguous tiles in host memory, pinned where a GPU backend exists) or is a view of a
 * LAPACK column-major array registered in place. Descriptors stay resident across calls, so
 * a sequence of tile-level routines moves no data back to the host between them.
 *
 * A triangle-only matrix (tessera_matrix_create_triangle) holds the tiles of one triangle of a
 * square Hermitian matrix and no others, half the memory of a full one: the Cholesky routines
 * (tile potrf, potrs, posv, potri, logdet with the same uplo) touch nothing else. Routines that
 * would touch an absent tile refuse the descriptor with a negative status.
 */
#ifndef TESSERA_MATRIX_H
#define TESSERA_MATRIX_H

#include "tessera/data.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque matrix descriptor. */
typedef struct tessera_matrix tessera_matrix_t;

/** Creates a matrix whose tiles tessera allocates (contents undefined): on the GPUs of the
 *  context's scope, 2D block-cyclic, when it fits in 70 % of their free pool memory, else in
 *  (pinned) host memory (a tile whose GPU pool is full goes to the host too). The tiles stay where
 * they are between calls.
 *  @param m, n    rows and columns (>= 0)
 *  @param mb, nb  tile rows and columns (> 0)
 *  @return 0 or a negative status. */
TESSERA_API int tessera_matrix_create(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m,
                                      int64_t n, int64_t mb, int64_t nb, tessera_matrix_t **out);

/** Creates an n x n matrix with nb x nb tiles of which only those of the `uplo` triangle exist:
 *  tile (i, j) with i >= j (LOWER) or i <= j (UPPER), the diagonal tiles whole (their
 *  elements on the other side of the diagonal are stored but never read by the Cholesky
 *  routines). Placed as tessera_matrix_create places a matrix of the bytes actually stored.
 *  tessera_matrix_tile returns NULL for an absent tile; import and export copy the stored
 *  tiles only (export leaves the array's other elements as they were). Tile-level routines
 *  accept it where they touch only that triangle: potrf, potrs, posv, potri and logdet with
 *  the same uplo, trsm as A with the same uplo, syrk / herk as C with the same uplo; elsewhere
 *  they return a negative status.
 *  @param uplo  TESSERA_LOWER or TESSERA_UPPER
 *  @param n     order (>= 0)
 *  @param nb    tile size (> 0)
 *  @return 0 or a negative status (-i for an invalid argument i; TESSERA_ERR_NOMEM when the
 *          host cannot hold the tiles). Not thread safe against concurrent insertion on the
 *          same context. */
TESSERA_API int tessera_matrix_create_triangle(tessera_context_t *ctx, tessera_dtype_t dtype,
                                               tessera_uplo_t uplo, int64_t n, int64_t nb,
                                               tessera_matrix_t **out);

/** Creates a matrix whose tiles are views into the column-major array `a` (leading dimension
 *  `lda` >= max(1, m)). No copy is made; the array must outlive the descriptor, and it holds
 *  the results once the routines' flows are waited for. */
TESSERA_API int tessera_matrix_view(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m,
                                    int64_t n, int64_t mb, int64_t nb, void *a, int64_t lda,
                                    tessera_matrix_t **out);

/** As tessera_matrix_view, for an array in the memory of node `node` (a GPU's memory, for
 *  buffers that already live there, such as a framework's device arrays): tiles are registered
 *  in place, homed on that node; results stay there. */
TESSERA_API int tessera_matrix_view_on(tessera_context_t *ctx, int node, tessera_dtype_t dtype,
                                       int64_t m, int64_t n, int64_t mb, int64_t nb, void *a,
                                       int64_t lda, tessera_matrix_t **out);

/** Creates an m x n matrix whose columns are `count` column panels held in place in several
 *  arrays, possibly in the memory of several nodes (for example the shards of a framework's
 *  array, one per GPU): panel p holds columns [p * width, min(n, (p + 1) * width)) as a
 *  column-major array at `a[p]` with leading dimension `lda`, in the memory of node `nodes[p]`.
 *  No copy is made; each tile is homed on the node of its panel, and the arrays hold the
 *  results once the routines' flows are waited for.
 *  @param width  columns per panel: a multiple of nb when count > 1, so no tile straddles two
 *                panels; count * width >= n (panels past column n, or parts of the last one,
 *                are not touched)
 *  @param count  panels (>= 1)
 *  @param a      count pointers (a NULL pointer only for a panel holding no column)
 *  @param nodes  count memory nodes
 *  @param lda    leading dimension of every panel (>= max(1, m))
 *  @return 0 or -i for invalid argument i (the context is 1), with a message in
 *          tessera_last_error. Not thread safe against concurrent insertion on the context. */
TESSERA_API int tessera_matrix_view_panels(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m,
                                           int64_t n, int64_t mb, int64_t nb, int64_t width,
                                           int count, void *const *a, const int *nodes, int64_t lda,
                                           tessera_matrix_t **out);

/** Copies the column-major array `a` into the matrix's tiles (runs as tasks, waits). */
TESSERA_API int tessera_matrix_import(tessera_matrix_t *A, const void *a, int64_t lda);

/** Copies the matrix's tiles into the column-major array `a` (waits for pending tasks). */
TESSERA_API int tessera_matrix_export(tessera_matrix_t *A, void *a, int64_t lda);

/** Waits for the matrix's tasks and frees the descriptor and the tiles it owns. NULL: no-op. */
TESSERA_API int tessera_matrix_destroy(tessera_matrix_t *A);

/** Dimensions and tiling. */
TESSERA_API int64_t tessera_matrix_rows(const tessera_matrix_t *A);
TESSERA_API int64_t tessera_matrix_cols(const tessera_matrix_t *A);
TESSERA_API int64_t tessera_matrix_tile_rows(const tessera_matrix_t *A);
TESSERA_API int64_t tessera_matrix_tile_cols(const tessera_matrix_t *A);
TESSERA_API tessera_dtype_t tessera_matrix_dtype(const tessera_matrix_t *A);

/** The handle of tile (i, j), for inserting one's own tasks on a matrix; NULL out of range or
 *  absent (the other triangle of a triangle-only matrix). */
TESSERA_API tessera_data_t *tessera_matrix_tile(const tessera_matrix_t *A, int64_t i, int64_t j);

#ifdef __cplusplus
}
#endif
#endif
