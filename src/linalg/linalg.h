/* Algorithms layer internals: matrix descriptors and the tile-task inserters the tile loops use. */
#ifndef TSR_LINALG_H
#define TSR_LINALG_H

#include <stdbool.h>

#include "kernels/kernels.h"
#include "runtime/error.h"
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
  /* A distributed matrix (tessera_matrix_create_distributed): the communicator, the grid, and
   * the tiles' records (comm/dist.h); NULL comm for a matrix of this process alone. */
  tessera_comm_t *comm;
  tessera_grid_t grid;
  void *dist;
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

/* Inserters: one task each, tagged (i, j, k) for traces. Flags and dimensions are those of the
 * operation as the operands present it (tiles of a view included); an operation whose written
 * operand carries Aᴴ is inserted as its conjugate transpose on the tiles themselves. Return 0 or
 * a negative status. */
int tsr_task_potrf(const tessera_matrix_t *A, char uplo, int64_t k, int prio);
int tsr_task_trsm(const tessera_matrix_t *A, char side, char uplo, char trans, char diag,
                  tsr_scalar_t alpha, tsr_operand_t a, tsr_operand_t b, int m, int n,
                  const int tag[3], int prio);
int tsr_task_syrk(const tessera_matrix_t *C, int herk, char uplo, char trans, int n, int k,
                  tsr_scalar_t alpha, tsr_operand_t a, tsr_scalar_t beta, tsr_operand_t c,
                  const int tag[3], int prio);
int tsr_task_gemm(const tessera_matrix_t *C, tsr_operand_t a, tsr_operand_t b, int m, int n, int k,
                  tsr_scalar_t alpha, tsr_scalar_t beta, tsr_operand_t c, const int tag[3],
                  int prio);
int tsr_task_trtri(const tessera_matrix_t *A, char uplo, char diag, int64_t k, int prio);
/** trtri on operand `a` holding an n x n triangle whose first row is global row `offset`. */
int tsr_task_trtri_on(const tessera_matrix_t *A, tsr_operand_t a, char uplo, char diag, int n,
                      int64_t offset, const int tag[3], int prio);
int tsr_task_lauum(const tessera_matrix_t *A, char uplo, int64_t k, int prio);
int tsr_task_trmm(const tessera_matrix_t *A, char side, char uplo, char trans, char diag,
                  tsr_scalar_t alpha, tsr_operand_t a, tsr_operand_t b, int m, int n,
                  const int tag[3], int prio);
int tsr_task_lacpy(tessera_dtype_t dtype, tessera_context_t *ctx, tessera_data_t *src,
                   tessera_data_t *dst, int m, int n, const int tag[3], int prio);
/** A lacpy of the m x n block at row src_row of src into dst at row dst_row, dst accessed
 *  with dst_mode (TESSERA_RW where the copy fills part of it). */
int tsr_task_lacpy_rows(tessera_dtype_t dtype, tessera_context_t *ctx, tessera_data_t *src,
                        int src_row, tessera_data_t *dst, int dst_row, tessera_access_t dst_mode,
                        int m, int n, const int tag[3], int prio);

/** getrf of column panel k of A (one tile row) from row k nb, its pivots and info into `piv`,
 *  the inverse of its unit lower diagonal block into `inv` when not NULL. */
int tsr_task_getrf(const tessera_matrix_t *A, int64_t k, tessera_data_t *piv, tessera_data_t *inv,
                   int prio);
/** The interchanges of `piv` (k of them, relative to row r0) on the n columns of the column
 *  panel `tile` of A (A->m rows), in order (incx 1) or reversed (-1). */
int tsr_task_laswp(const tessera_matrix_t *A, tessera_data_t *tile, tessera_data_t *piv, int n,
                   int r0, int k, int incx, const int tag[3], int prio);
/** An lu_step (kernels.h) with the column panel `panel` of B->m rows on the column panel `b`
 *  (n columns), with the interchanges `piv` first when it is not NULL, the product with
 *  getrf's `inv` (when it and piv are not NULL) for its solve. */
int tsr_task_lu_step(const tessera_matrix_t *B, char uplo, char trans, tessera_data_t *panel,
                     tessera_data_t *b, tessera_data_t *piv, tessera_data_t *inv, int n, int r0,
                     int kb, const int tag[3], int prio);

/** The Cholesky panel method of a call (policy.c): 1 for products with inverted diagonal tiles,
 *  0 for triangular solves. `opts` may be NULL (automatic). */
int tsr_panel_inverse(tessera_context_t *ctx, const tessera_potrf_options_t *opts);

/** The pivots of an LU factorization (getrf.c): one handle per step of nb columns, each holding
 *  the step's info (int) and its kb pivots relative to its first row r0 = k nb. For a
 *  distributed matrix the handles are distributed too: step k's belongs to the process owning
 *  the panel of column k nb, which factors it; the others receive it where they read it. */
typedef struct {
  tessera_context_t *ctx;
  tessera_comm_t *comm;       /* the matrix's communicator, or NULL */
  int64_t m, kmin, nb, steps; /* m: the rows the pivots may name */
  tessera_data_t **h;
  tessera_data_t **inv; /* a factorization's: step k's L_kk⁻¹ (workspace), or NULL */
  void *dist;           /* the handles' distributed records (comm/dist.h), or NULL */
} tsr_pivots_t;

/** Pivots of step k: min(nb, kmin - k nb). */
static inline int64_t tsr_pivots_count(const tsr_pivots_t *P, int64_t k) {
  const int64_t left = P->kmin - k * P->nb;
  return left < P->nb ? left : P->nb;
}
/** Makes the pivot handles of a factorization of A's m rows and min(m, n) = kmin in steps of
 *  nb columns (each step's handle as kernels.h's TSR_PIV_INTS lays it out), and for a
 *  factorization (`factor`) the workspace handles of its L_kk⁻¹, distributed as A is: a
 *  collective call when A is distributed. */
int tsr_pivots_create(const tessera_matrix_t *A, int64_t kmin, int64_t nb, bool factor,
                      tsr_pivots_t *P);
void tsr_pivots_destroy(tsr_pivots_t *P);
/** -argno with a message unless every ipiv[i] (i < kmin) is in [i + 1, m], as getrf leaves it. */
int tsr_pivots_check(tessera_context_t *ctx, const char *f, int argno, const int *ipiv,
                     int64_t kmin, int64_t m);
/** Fills the handles (before any task uses them) from LAPACK's 1-based ipiv (each process
 *  the handles it owns). */
int tsr_pivots_import(tsr_pivots_t *P, const int *ipiv);
/** Waits for the handles and writes LAPACK's ipiv from them (distributed: the whole ipiv on
 *  every process, a collective call). Returns the factorization's info (the first step's
 *  reported column, made global), or a negative status: the same on every process. */
int tsr_pivots_export(tsr_pivots_t *P, int *ipiv);

/* Tile loops: insert the tasks of a whole operation without waiting. */
int tsr_pxpotrf(char uplo, tessera_matrix_t *A, const tessera_potrf_options_t *opts);
int tsr_pxtrsm(char side, char uplo, char trans, char diag, tsr_scalar_t alpha,
               const tessera_matrix_t *A, tessera_matrix_t *B);
int tsr_pxsyrk(int herk, char uplo, char trans, tsr_scalar_t alpha, const tessera_matrix_t *A,
               tsr_scalar_t beta, tessera_matrix_t *C);
int tsr_pxgemm(char transa, char transb, tsr_scalar_t alpha, const tessera_matrix_t *A,
               const tessera_matrix_t *B, tsr_scalar_t beta, tessera_matrix_t *C);
int tsr_pxpotrs(char uplo, const tessera_matrix_t *A, tessera_matrix_t *B);
int tsr_pxtrtri(char uplo, char diag, tessera_matrix_t *A);
int tsr_pxlauum(char uplo, tessera_matrix_t *A);
/** Inserts one task per diagonal tile adding log|A_kk(i,i)| into logs[k] (nt doubles, zeroed). */
int tsr_pxlogdiag(const tessera_matrix_t *A, double *logs);
/** B = A, of the same size and tile columns: the same tiles, or one of the two in column panels
 *  (tiles spanning its rows) and the other not. */
int tsr_pxlacpy(const tessera_matrix_t *A, tessera_matrix_t *B);
/** LU with partial pivoting of A (one tile row: column panels), pivots and info into P (made
 *  for min(m, n) in steps of A's nb). */
int tsr_pxgetrf(tessera_matrix_t *A, tsr_pivots_t *P);
/** op(A) X = B with getrf's factors (B in column panels of A->m rows). */
int tsr_pxgetrs(char trans, const tessera_matrix_t *A, const tsr_pivots_t *P, tessera_matrix_t *B);
/** The interchanges of P on every column panel of B, in order (incx 1) or reversed (-1). */
int tsr_pxlaswp(tessera_matrix_t *B, const tsr_pivots_t *P, int incx);

/** Makes the home memory of every tile current (a view's array then holds the result). */
int tsr_matrix_flush(tessera_matrix_t *A);
/** After the last task of a flow on X (every process alike): each process drops the copies of
 *  X's tiles it received once their readers finish (tsr_dist_flush on every tile), so that
 *  what a routine received is not kept past it. Returns `rc` unchanged when it is nonzero or X
 *  is not distributed (nothing done), else 0 or a failure. */
int tsr_dist_flush_matrix(const tessera_matrix_t *X, int rc);

/* LAPACK-style calls on a context over processes (lapack_dist.c); a call on a context of one
 * process never makes them. */

/** Whether this process holds the arrays of LAPACK-style calls: every process of a context of
 *  its own, process 0 of a distributed context. */
bool tsr_lapack_holds_arrays(const tessera_context_t *ctx);
/** Compares the k scalar arguments `values` (argument numbers `argno`) across the processes
 *  together with each one's own checks (`rc`: 0 or -argno), and agrees on the tile size: *tile,
 *  this process's choice on entry, becomes the smallest any process chose. The same status on
 *  every process; the one at fault keeps its own message. At most 8 values. */
int tsr_lapack_agree(tessera_context_t *ctx, const char *f, int k, const int64_t *values,
                     const int *argno, int rc, int64_t *tile);
/** The root's `flag` on every process (its own where the exchange fails). */
int tsr_lapack_root_flag(tessera_context_t *ctx, int flag);
/** The root's `bytes` (a multiple of 4) of buf on every process. */
int tsr_lapack_broadcast(tessera_context_t *ctx, void *buf, size_t bytes);
/** A matrix of the context's grid in nb x nb tiles (only the tiles of `part`: 'L', 'U' triangle
 *  of tiles, 0 all), or with `panels` in column panels of nb columns dealt over a 1 x P grid of
 *  every process (LU), and `root`, the root's m x n array a (lda) as a matrix the root owns;
 *  when `in`, the copies of root's tiles into out's are inserted (not waited for). */
int tsr_lapack_scatter(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n,
                       int64_t nb, bool panels, const void *a, int64_t lda, char part, bool in,
                       tessera_matrix_t **out, tessera_matrix_t **root);
/** Copies A's tiles back into `root`'s (the root's array) and waits: the same status on every
 *  process. */
int tsr_lapack_gather(tessera_matrix_t *A, tessera_matrix_t *root);

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
/** Allocates A's (empty) tile list: 0 or TESSERA_ERR_NOMEM with a message. */
int tsr_matrix_tile_list(tessera_matrix_t *A);

/** tessera_matrix_create_distributed with more choices: only the tiles of `part` exist ('L':
 *  i >= j, 'U': i <= j, stored as tessera_matrix_create_triangle's; 0: all); `on` >= 0 makes
 *  process `on` own every tile (-1: the grid's owners; -2: the grid's owners, their tiles
 *  workspaces living where their first writer runs, with no home memory); where `mine` is given
 *  (the whole m x n array, leading dimension ld) the tiles this process owns are that array's
 *  blocks in place. `part` and `on` must be the same on every process. */
int tsr_matrix_create_distributed(tessera_context_t *ctx, tessera_comm_t *comm, tessera_grid_t grid,
                                  tessera_dtype_t dtype, int64_t m, int64_t n, int64_t mb,
                                  int64_t nb, char part, int on, void *mine, int64_t ld,
                                  tessera_matrix_t **out);

/** Checks that descriptors can be combined: same context and dtype, square tiles of one size.
 *  `argno[i]` is the argument number of mats[i] for the error status. */
int tsr_check_tiling(const tessera_matrix_t *const *mats, const int *argno, int count,
                     const char *routine);
/** The same checks but the tiles': operands not NULL, of one context, dtype and communicator
 *  (or none). */
int tsr_check_operands(const tessera_matrix_t *const *mats, const int *argno, int count,
                       const char *routine);

#endif
