/* Matrix descriptors (matrix.c; distributed ones: distributed.c): the tiles of a matrix, views
 * of their conjugate transpose, tile operands, the constructors' shared steps and the checks of
 * operands. The ground of the algorithms layer. */
#ifndef TSR_LINALG_DESC_H
#define TSR_LINALG_DESC_H

#include <stdbool.h>
#include "kernels/kernels.h"
#include "runtime/error.h"
#include "runtime/flow.h"
#include "tessera/tessera.h"

/** Workspace tiles a descriptor may hold (see struct tessera_matrix). */
#define TSR_MATRIX_WORK 4

struct tessera_matrix {
  tessera_context_t *ctx;
  tessera_dtype_t dtype;
  int64_t m, n, mb, nb, mt, nt;
  tessera_data_t **tiles; /* tile (i, j) at i + j * mt; NULL where absent (see stored) */
  int is_view;
  /* 0: every tile exists; 'L' / 'U': only those of that triangle (i >= j / i <= j), the others
   * are NULL (tessera_matrix_create_triangle). */
  char stored;
  /* Workspace tiles of the factorizations (potrf.c), made on first use, freed with the
   * descriptor: a ring of inverted diagonal tiles. */
  tessera_data_t *work[TSR_MATRIX_WORK];
  int nwork;
  /* 'C': a view (tsr_matrix_ct) of the conjugate transpose of the descriptor whose tiles it
   * shares (dimensions, tiling and `stored` swapped, tile (i, j) is that one's (j, i) with Aᴴ
   * applied in the kernel calls); 0 or 'N': the matrix itself. */
  char op;
  /* How the algorithms insert its tasks and let go of its tiles (runtime/flow.h): its context's
   * local flow for a matrix of this process alone, a distributed flow of its own for a
   * distributed matrix, which also has the communicator and grid it was made on (NULL comm: of
   * this process alone) and the flow's record of its tiles (`dist`, what the flow adopted). */
  tsr_flow_t *flow;
  tessera_comm_t *comm;
  tessera_grid_t grid;
  void *dist;
  /* The products' arithmetic on accelerators for a single-precision descriptor (kernels.h's
   * tsr_math_t): 0 its own, else tensor cores on rounded inputs with f32 accumulation; set by
   * the mixed-precision solves on their factor's copy. */
  int math;
};

/** The conjugate-transpose view of A (a value sharing A's tiles; a view of a view is the
 *  matrix itself). The tile loops take it to run the lower-triangle form of an algorithm on an
 *  upper triangle (Uᴴ is lower), as SLATE's potrf does; inserters apply Aᴴ in the kernel calls.
 *  The workspace tiles stay with A. */
static inline tessera_matrix_t tsr_matrix_ct(const tessera_matrix_t *A) {
  tessera_matrix_t v = *A;
  v.m = A->n, v.n = A->m, v.mb = A->nb, v.nb = A->mb, v.mt = A->nt, v.nt = A->mt;
  v.stored = A->stored == 'L' ? 'U' : A->stored == 'U' ? 'L' : A->stored;
  v.op = A->op == 'C' ? 'N' : 'C';
  v.nwork = 0;
  return v;
}

/** Handle of tile (i, j) (in range); on a view, the handle of the shared tile (j, i). */
static inline tessera_data_t *tsr_tile(const tessera_matrix_t *A, int64_t i, int64_t j) {
  return A->op == 'C' ? A->tiles[j + i * A->nt] : A->tiles[i + j * A->mt];
}
/** Rows of tile row i, columns of tile column j. */
static inline int tsr_tile_m(const tessera_matrix_t *A, int64_t i) {
  return (int)(i == A->mt - 1 ? A->m - i * A->mb : A->mb);
}
static inline int tsr_tile_n(const tessera_matrix_t *A, int64_t j) {
  return (int)(j == A->nt - 1 ? A->n - j * A->nb : A->nb);
}

/** A tile operand: a handle and the operation applied to it ('N', 'T', 'C'). */
typedef struct {
  tessera_data_t *h;
  char op;
} tsr_operand_t;

/** The operation op(inner(X)) as one operation on X ('N', 'T' or 'C'; on real dtypes 'C' is
 *  'T'), or 0 where it is a conjugation without transposition (complex dtypes). */
static inline char tsr_op_compose(tessera_dtype_t dt, char outer, char inner) {
  if (!tsr_dtype_complex(dt)) {
    outer = outer == 'C' ? 'T' : outer;
    inner = inner == 'C' ? 'T' : inner;
  }
  if (outer == 'N') return inner;
  if (inner == 'N') return outer;
  return outer == inner ? 'N' : 0;
}

/** Tile (i, l) of op(A) as an operand ('N', 'T', 'C'): A(i, l), or A(l, i) with the operation;
 *  on a view, with the view's Aᴴ composed in. */
static inline tsr_operand_t tsr_op_tile(const tessera_matrix_t *A, char op, int64_t i, int64_t l) {
  const char own = A->op == 'C' ? 'C' : 'N';
  if (op == 'N') return (tsr_operand_t){tsr_tile(A, i, l), own};
  return (tsr_operand_t){tsr_tile(A, l, i), tsr_op_compose(A->dtype, op, own)};
}

/** Tile (i, j) of A as an operand. */
static inline tsr_operand_t tsr_tile_op(const tessera_matrix_t *A, int64_t i, int64_t j) {
  return tsr_op_tile(A, 'N', i, j);
}

/** Whether tile (i, j) is in `part` ('L': i >= j, 'U': i <= j, 0: every tile). */
static inline bool tsr_in_part(char part, int64_t i, int64_t j) {
  return part == 'L' ? i >= j : part == 'U' ? i <= j : true;
}

/** A new descriptor of an m x n matrix in mb x nb tiles (arguments checked by the caller), its
 *  tile count computed without overflow, no tile list yet; `stored` as tsr_in_part's part.
 *  NULL, with a message on ctx, when out of memory. Shared by every constructor. */
tessera_matrix_t *tsr_matrix_describe(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m,
                                      int64_t n, int64_t mb, int64_t nb, char stored);
/** 0 when the host's memory holds A's tile list and `tile_bytes` of its tiles besides, else
 *  TESSERA_ERR_NOMEM with a message on A's context: beyond it the kernel overcommits and the
 *  first use of the memory fails. */
int tsr_matrix_check_host(const tessera_matrix_t *A, double tile_bytes);
/** Checks the array of a view or a copy for routine `f`: argument `argno` is the array (NULL
 *  only when the matrix is empty), argument argno + 1 its leading dimension. Returns 0 or
 *  -(argument number), with a message on ctx. */
int tsr_check_array(tessera_context_t *ctx, const char *f, int argno, const void *a, int64_t m,
                    int64_t n, int64_t lda);
/** Allocates A's (empty) tile list: 0 or TESSERA_ERR_NOMEM with a message. */
int tsr_matrix_tile_list(tessera_matrix_t *A);

/** tessera_matrix_create with workspace tiles (tessera_data_create_workspace): each lives where
 *  its first writer runs and reaches the host only when evicted as its last copy, so a matrix of
 *  intermediate results on a device gives way when a later stage needs the pool; freed with A,
 *  never copied home. */
int tsr_matrix_create_workspace(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n,
                                int64_t mb, int64_t nb, tessera_matrix_t **out);

/** tessera_matrix_destroy without bringing the tiles' latest contents home (tsr_data_drop): for
 *  a view of a working copy whose last contents nobody reads. */
int tsr_matrix_drop(tessera_matrix_t *A);

/** Where the tiles of a view live: a grid of bm x bn blocks of brows x bcols elements (the last
 *  row and column of blocks may be smaller), block (I, J) (index I + J * bm) the column-major
 *  array ptr[..] with leading dimension ld in the memory of node node[..]; in a distributed
 *  view it belongs to process owner[..] (its array and node are read on that process only).
 *  No tile straddles two blocks. bm 0: tessera allocates the tiles. */
typedef struct {
  int64_t bm, bn, brows, bcols, ld;
  void *const *ptr;
  const int *node;
  const int *owner;
} tsr_blocks_t;

/** Sets b's grid (bm x bn) for an m x n matrix in b's block sizes (0 for a size below 1). */
static inline void tsr_blocks_grid(tsr_blocks_t *b, int64_t m, int64_t n) {
  b->bm = b->brows > 0 ? m / b->brows + (m % b->brows != 0) : 0;
  b->bn = b->bcols > 0 ? n / b->bcols + (n % b->bcols != 0) : 0;
}

/** The block of blocks `b` holding tile (i, j) of a matrix in mb x nb tiles, and the address of
 *  the tile's first element in it (elements of es bytes). */
static inline int64_t tsr_block_of(const tsr_blocks_t *b, int64_t mb, int64_t nb, int64_t i,
                                   int64_t j, size_t es, char **at) {
  const int64_t bi = i * mb / b->brows, bj = j * nb / b->bcols, k = bi + bj * b->bm;
  const int64_t r = i * mb - bi * b->brows, c = j * nb - bj * b->bcols;
  *at = b->ptr[k] ? (char *)b->ptr[k] + ((size_t)r + (size_t)c * (size_t)b->ld) * es : NULL;
  return k;
}

/** Where the tiles of a distributed matrix are: only those of `part` exist ('L': i >= j, 'U':
 *  i <= j, stored as tessera_matrix_create_triangle's; 0: all); `on` >= 0 makes process `on`
 *  own every tile (-1: the grid's owners); with `work` the tiles are workspaces living where
 *  their first writer runs, with no home memory; where `mine` is given (the whole m x n
 *  array, leading dimension ld) the tiles this process owns are that array's blocks in place;
 *  where `blocks` is given, the tiles are those blocks' in place, owned by their blocks'
 *  processes (no grid; `on` and `mine` unused). All but the arrays and nodes must be the same
 *  on every process. */
typedef struct {
  char part;
  int on;
  bool work;
  void *mine;
  int64_t ld;
  const tsr_blocks_t *blocks;
} tsr_dist_place_t;

/** tessera_matrix_create_distributed with the tiles placed as `at` says. */
int tsr_matrix_create_distributed(tessera_context_t *ctx, tessera_comm_t *comm, tessera_grid_t grid,
                                  tessera_dtype_t dtype, int64_t m, int64_t n, int64_t mb,
                                  int64_t nb, const tsr_dist_place_t *at, tessera_matrix_t **out);

/** tessera_matrix_view_blocks on this process alone (given's grid size is computed here). */
int tsr_matrix_view_blocks(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n,
                           int64_t mb, int64_t nb, const tsr_blocks_t *given,
                           tessera_matrix_t **out);

/** Checks a view's blocks for routine `f` (arguments numbered from `argno`: brows, bcols, the
 *  arrays, the nodes, the owners, the leading dimension) where this process reads them: those
 *  of rank `rank` (-1: all). Returns 0 or -(argument number), with a message on ctx. */
int tsr_blocks_check(tessera_context_t *ctx, const char *f, int argno, const tsr_blocks_t *b,
                     int64_t m, int64_t n, int64_t mb, int64_t nb, int rank);

/** Checks that descriptors can be combined: same context and dtype, square tiles of one size.
 *  `argno[i]` is the argument number of mats[i] for the error status. */
int tsr_check_tiling(const tessera_matrix_t *const *mats, const int *argno, int count,
                     const char *routine);
/** The same checks but the tiles': operands not NULL, of one context, dtype and communicator
 *  (or none). */
int tsr_check_operands(const tessera_matrix_t *const *mats, const int *argno, int count,
                       const char *routine);

/** A workspace tile of a flow on X, rows x cols of X's dtype, owned by process `owner` (-1: this
 *  one; its tasks run there; on a distributed flow the others hold a place for the copies they
 *  receive): a collective call on a distributed X, every process making the same ones in the
 *  same order. Free it with tsr_matrix_workspace_free once its last task is inserted. */
typedef struct {
  tessera_data_t *h;
  void *set; /* the flow's record of it */
} tsr_work_t;
int tsr_matrix_workspace(const tessera_matrix_t *X, int owner, size_t rows, size_t cols,
                         tsr_work_t *w);
/** After its last reader is inserted: drops the received copies, waits for the tasks using w
 *  and frees it with its record. Returns `rc`, else the first failure. */
int tsr_matrix_workspace_free(const tessera_matrix_t *X, tsr_work_t *w, int rc);

/** Makes the home memory of every tile current (a view's array then holds the result); of a
 *  distributed matrix, of the tiles this process owns. */
int tsr_matrix_flush(tessera_matrix_t *A);
/** After the last task of a flow on X (every process alike): each process drops the copies of
 *  X's tiles it received once their readers finish (the flow's flush of every tile), so that
 *  what a routine received is not kept past it. Returns `rc` unchanged when it is nonzero or X
 *  is of this process alone (nothing to drop), else 0 or a failure. */
int tsr_matrix_flush_copies(const tessera_matrix_t *X, int rc);

/** The same status on every process X spans (the flow's agreement; X's own on one process). */
static inline int tsr_matrix_agree(const tessera_matrix_t *X, int status) {
  return tsr_flow_agree(X->flow, status);
}

/** The flow the tasks of an operation writing C and reading A and B go through: the first
 *  distributed flow of the three. A task writing tiles of this process alone but reading a
 *  distributed matrix then runs on the owner of the distributed tile it reads (each process adds
 *  the products of the tiles it owns into its own C: the residuals of the mixed-precision solves
 *  over processes). */
static inline tsr_flow_t *tsr_operands_flow(const tessera_matrix_t *C, const tessera_matrix_t *A,
                                            const tessera_matrix_t *B) {
  return C->flow->distributed ? C->flow : A->flow->distributed ? A->flow : B->flow;
}

/** C as the inserters of an operation on C, A and B take it: with their flow. */
static inline tessera_matrix_t tsr_matrix_in_flow(const tessera_matrix_t *C,
                                                  const tessera_matrix_t *A,
                                                  const tessera_matrix_t *B) {
  tessera_matrix_t v = *C;
  v.flow = tsr_operands_flow(C, A, B);
  return v;
}

/** Whether this process runs the tasks writing tile (i, j) of A. */
static inline bool tsr_tile_mine(const tessera_matrix_t *A, int64_t i, int64_t j) {
  return tsr_flow_mine(A->flow, tsr_tile(A, i, j));
}

#endif
