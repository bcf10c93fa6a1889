/* tessera — matrices distributed over processes: the 2D block-cyclic layout of ScaLAPACK, and
 * scatter / gather between one process's LAPACK-style array and every process's local part.
 *
 * An m x n matrix cut into mb x nb blocks is dealt over a P x Q grid of processes: block (I, J)
 * belongs to the process at grid row I mod P and grid column J mod Q, whose rank is
 * row * Q + column (row-major, ScaLAPACK's default "R" order). Each process stores its blocks in
 * one column-major local array of numroc(m, mb, row, P) rows and numroc(n, nb, col, Q) columns,
 * block (I, J) at local block (I div P, J div Q): exactly the local array of a ScaLAPACK
 * descriptor with the same m, n, mb, nb and grid, so a matrix already distributed in a user's
 * memory is used as it is.
 *
 * Scatter and gather are collective calls on a communicator (tessera/comm.h). Their arguments must
 * be the same on every process (buffers aside): they are compared at the call, and a mismatch
 * fails on every process with the position of the first argument that differs.
 */
#ifndef TESSERA_DISTRIBUTION_H
#define TESSERA_DISTRIBUTION_H

#include <stdint.h>

#include "tessera/comm.h"
#include "tessera/matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A P x Q grid of processes (rank = row * q + column). */
typedef struct {
  int p, q;
} tessera_grid_t;

/** The grid row and column of `rank`. */
static inline void tessera_grid_coords(tessera_grid_t g, int rank, int *row, int *col) {
  *row = rank / g.q;
  *col = rank % g.q;
}

/** The rank owning block (bi, bj). */
static inline int tessera_grid_owner(tessera_grid_t g, int64_t bi, int64_t bj) {
  return (int)(bi % g.p) * g.q + (int)(bj % g.q);
}

/** How many of the n rows (or columns) of a dimension cut into blocks of nb the grid coordinate
 *  `coord` of `nprocs` holds: ScaLAPACK's NUMROC with the first block at coordinate 0. 0 for
 *  invalid arguments (n < 0, nb < 1, coord outside 0 .. nprocs - 1). Thread safe. */
TESSERA_API int64_t tessera_numroc(int64_t n, int64_t nb, int coord, int nprocs);

/** Deals the m x n column-major array `a` (leading dimension lda, of `dtype`) of process `root`
 *  over the grid: every process receives its blocks in its local array `local` (leading
 *  dimension lld >= max(1, its local rows)). `a` is read on the root only (NULL elsewhere).
 *  A collective call on `comm`, whose size must be p * q.
 *  @return 0; -k for an invalid argument k (1-based: comm, grid, dtype, m, n, mb, nb, root, a,
 *          lda, local, lld), with the same -k on every process when an argument differs across
 *          processes; TESSERA_ERR_NOMEM; what the communicator's operations return
 *          (TESSERA_ERR_TIMEOUT when a process does not take part). tessera_comm_last_error()
 *          says why. */
TESSERA_API int tessera_scatter_2d(tessera_comm_t *comm, tessera_grid_t grid, tessera_dtype_t dtype,
                                   int64_t m, int64_t n, int64_t mb, int64_t nb, int root,
                                   const void *a, int64_t lda, void *local, int64_t lld);

/** The reverse of tessera_scatter_2d: every process's local blocks into the m x n array `a` of
 *  `root` (written on the root only; NULL elsewhere). Same arguments, statuses and rules. */
TESSERA_API int tessera_gather_2d(tessera_comm_t *comm, tessera_grid_t grid, tessera_dtype_t dtype,
                                  int64_t m, int64_t n, int64_t mb, int64_t nb, int root, void *a,
                                  int64_t lda, const void *local, int64_t lld);

/** Creates an m x n matrix of `dtype` in mb x nb tiles dealt over the grid's processes of
 *  `comm` (block (i, j) to tessera_grid_owner(grid, i, j)): a collective call, every process
 *  making its distributed matrices in the same order. Each process allocates the tiles it owns
 *  (in host memory; its GPUs get copies as tasks need them) and holds the others as places for
 *  the copies it receives. Tile-level routines on it (potrf, potrs, posv, trsm, gemm, syrk)
 *  then run distributed: every process calls them alike, each runs the tasks that write its
 *  tiles, the tiles other processes need are sent to them, and every process returns the same
 *  status. import and export work on each process's own tiles: import takes them from the
 *  whole array given on every process, export writes them into it (the other tiles' elements
 *  are left as they were). Distributed runs need MPI_THREAD_MULTIPLE.
 *
 *  Tiles travel from GPU to GPU over NCCL when every process's communicator has GPUs
 *  (tessera_comm_config_t.ndevices) that are GPUs of its context: each tile through one of
 *  them, chosen alike everywhere; otherwise through host memory over MPI, run by CPU workers.
 *  The processes agree on the way when a context makes its first distributed matrices on the
 *  communicator; the variable TESSERA_DIST_TRANSFERS=host asks for the host, =device for the
 *  devices (or a failure saying why they cannot serve). The distributed matrices living on one
 *  communicator at a time belong to one context.
 *  @return 0; -k for an invalid argument k (a grid whose p x q is not the communicator's size,
 *          dtype, sizes); TESSERA_ERR_UNSUPPORTED without MPI or MPI_THREAD_MULTIPLE, for
 *          device transfers that cannot be had when asked for, or for a communicator whose
 *          distributed matrices belong to another context; TESSERA_ERR_NOMEM. */
TESSERA_API int tessera_matrix_create_distributed(tessera_context_t *ctx, tessera_comm_t *comm,
                                                  tessera_grid_t grid, tessera_dtype_t dtype,
                                                  int64_t m, int64_t n, int64_t mb, int64_t nb,
                                                  tessera_matrix_t **out);

/** Creates an m x n matrix whose tiles are views into blocks of arrays held in place, on several
 *  memory nodes and, over a communicator, on several processes: the shards of a framework's
 *  array over a mesh of devices, for example. The matrix is cut into blocks of brows x bcols
 *  elements, bm = ceil(m / brows) by bn = ceil(n / bcols) of them (the last row and column of
 *  blocks may be smaller); block (I, J), at index k = I + J * bm of the lists, is the
 *  column-major array a[k] with leading dimension lda in the memory of node nodes[k] of
 *  process owners[k]. No copy is made; the arrays hold the results once the routines' flows are
 *  waited for, as a view's do.
 *
 *  comm NULL: every block is this process's (owners is not read). Otherwise a collective call
 *  on comm, made like tessera_matrix_create_distributed (every process making its distributed
 *  matrices in the same order, with the same sizes and the same owners); each process reads
 *  only its own blocks' entries of a and nodes. Tile-level routines on it run distributed: each
 *  tile's tasks on the process owning its block, the tiles other processes need sent to them.
 *  tessera_matrix_tile_owner gives a tile's process; the ScaLAPACK import and export do not
 *  apply (no grid deals it).
 *  @param brows, bcols  block sizes: multiples of mb and nb (no tile straddles two blocks),
 *                       unless one block spans the dimension
 *  @param a       bm * bn arrays (NULL only for a block holding no element or another
 *                 process's)
 *  @param nodes   bm * bn memory nodes
 *  @param owners  bm * bn ranks of comm (NULL when comm is NULL)
 *  @param lda     leading dimension of every block (>= max(1, min(m, brows)))
 *  @return 0; -k for an invalid argument k (1-based: ctx, comm, dtype, m, n, mb, nb, brows,
 *          bcols, a, nodes, owners, lda, out), with a message in tessera_last_error, the same
 *          status on every process of comm; TESSERA_ERR_NOMEM; what the communicator's
 *          operations return (TESSERA_ERR_TIMEOUT when a process does not take part). Not
 *          thread safe against concurrent insertion on the context. */
TESSERA_API int tessera_matrix_view_blocks(tessera_context_t *ctx, tessera_comm_t *comm,
                                           tessera_dtype_t dtype, int64_t m, int64_t n, int64_t mb,
                                           int64_t nb, int64_t brows, int64_t bcols, void *const *a,
                                           const int *nodes, const int *owners, int64_t lda,
                                           tessera_matrix_t **out);

/** ScaLAPACK's entry for a matrix already distributed in the program's memory: copies this
 *  process's blocks of the distributed matrix A from `local`, its local array (leading dimension
 *  lld) of a ScaLAPACK descriptor with A's m, n, mb, nb and grid (block (I, J) at local block
 *  (I div P, J div Q), as tessera_scatter_2d leaves it). A collective call, every process
 *  passing its own local array; copies of A's tiles that processes received earlier are
 *  dropped. `local` may be NULL where the process holds no element.
 *  @return 0; -1 for a NULL or undistributed A; -2 for a NULL local array holding elements; -3
 *          for lld below max(1, the local rows) (the same status on every process, with a
 *          message on the context of the process at fault); a failure of the copies. */
TESSERA_API int tessera_matrix_import_local(tessera_matrix_t *A, const void *local, int64_t lld);

/** The reverse of tessera_matrix_import_local: this process's blocks of A into its local array.
 *  Same rules and statuses. */
TESSERA_API int tessera_matrix_export_local(tessera_matrix_t *A, void *local, int64_t lld);

/** The communicator of a context made over processes (tessera_config_t.distributed), for
 *  distributed matrices of one's own (tessera_matrix_create_distributed with
 *  tessera_context_grid()); NULL for a context of this process alone. Owned by the context. */
TESSERA_API tessera_comm_t *tessera_context_comm(const tessera_context_t *ctx);

/** The process grid of such a context; {0, 0} for a context of this process alone. */
TESSERA_API tessera_grid_t tessera_context_grid(const tessera_context_t *ctx);

/** The same status on every process of `comm`, for a caller ending a collective call of its own
 *  alike everywhere: *status becomes the lowest negative status any process passes, else the
 *  lowest positive one (LAPACK's first failing minor), else 0. Returns 0, or the communicator's
 *  failure (its message in tessera_comm_last_error; *status unchanged). Collective: every
 *  process of comm calls it, in the same order as its other collectives. Thread safety: that of
 *  comm's other collectives. */
TESSERA_API int tessera_agree(tessera_comm_t *comm, int *status);

/** Compares `count` values (at most 16: a collective call's arguments) across the processes of
 *  `comm`, with each process's own status folded in: *differs becomes the index of the first
 *  value that is not the same on every process (-1 when none is), and *status the lowest
 *  negative status any process passes (else its own). Returns 0, or the communicator's failure
 *  (*differs and *status unchanged), or -(argument number) for an invalid argument (a count
 *  outside [0, 16], a NULL pointer). Collective, as tessera_agree. */
TESSERA_API int tessera_agree_values(tessera_comm_t *comm, int count, const int64_t *values,
                                     int *differs, int *status);

/** The layouts tessera's distributed routines run on (tessera_matrix_fit). */
typedef enum {
  /** square tiles dealt 2D block-cyclic over the most square grid of the processes with at
   *  least as many rows as columns (tessera_grid_fitted): the Cholesky family, triangular
   *  solves and products, where every process takes part in each step's panel and updates */
  TESSERA_LAYOUT_TILES = 0,
  /** column panels (tiles spanning the rows) dealt cyclically over every process: LU and QR,
   *  whose panels factor whole on one process */
  TESSERA_LAYOUT_PANELS = 1,
} tessera_layout_t;

/** When tessera_matrix_fit makes its copy. */
typedef enum {
  /** as the context's dist_layout says (TESSERA_LAYOUT): by default where the cost model finds
   *  that it pays, the updates' seconds the balance saves (from each process's tiles step by
   *  step, at the rate of the devices in the context's scope) against the seconds of the move
   *  (the tiles that change process, at the rate the processes' transfers have reached);
   *  otherwise A itself is the result */
  TESSERA_FIT_AUTO = 0,
  /** the same, the caller bringing the result back (the move counted twice) */
  TESSERA_FIT_AUTO_BACK = 1,
  /** always */
  TESSERA_FIT_ALWAYS = 2,
} tessera_fit_t;

/** The grid a distributed matrix of tessera's own layout takes over `processes` processes: the
 *  most square p x q, p >= q ({2, 1}, {2, 2}, {4, 2}, {3, 1}, ...). {0, 0} for a count below 1. */
TESSERA_API tessera_grid_t tessera_grid_fitted(int processes);

/** A copy of the distributed matrix A on tessera's own layout, made for the routines that
 *  follow: a matrix over A's communicator with A's tile width, dealt as `layout` says, that
 *  holds the tiles of `part` ('L': tiles (i, j) with i >= j, 'U': i <= j, 0: every tile; the
 *  diagonal tiles whole), its tiles with no home memory (each lives on a device of its owner,
 *  the one its copy ran on, and goes with the matrix). Whatever layout A arrives in (the blocks
 *  of a framework's shards, a grid of the caller's), the routines then balance their work over
 *  the processes and keep the critical path short.
 *
 *  The copy of A's tiles is inserted in the flow and not waited for: each tile travels from its
 *  owner in A to its owner in the copy (GPU to GPU over NCCL where the flow's transfers are the
 *  devices'), and the next tile-level routine on the copy starts on the tiles as they arrive
 *  and waits for the rest (as tessera_wait_all does). A must not change until then. Bring
 *  results back with tessera_tile_lacpy (copy, A). `when` says whether the copy is made always
 *  or where it pays (*out is then A itself where it does not: the processes decide alike,
 *  nothing is copied, and the caller has nothing to bring back or destroy). A collective call
 *  on A's communicator.
 *  @return 0; -1 for a NULL A or one that is not distributed; -2 for an unknown layout; -3 for
 *          a part other than 'L', 'U' or 0, or a triangle of a matrix that is not square; -1
 *          for square tiles made from tiles that are neither square nor column panels (column
 *          panels are made from any); -4 for an unknown `when`; -5 for a NULL out; the failures
 *          of tessera_matrix_create_distributed. The same status on every process. */
TESSERA_API int tessera_matrix_fit(tessera_matrix_t *A, tessera_layout_t layout, char part,
                                   tessera_fit_t when, tessera_matrix_t **out);

/** The rank owning tile (i, j) of A: its grid owner for a distributed matrix, else the rank of
 *  no process (-1). */
TESSERA_API int tessera_matrix_tile_owner(const tessera_matrix_t *A, int64_t i, int64_t j);

#ifdef __cplusplus
}
#endif
#endif
