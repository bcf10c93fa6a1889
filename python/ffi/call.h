/* What the handlers (handlers.c) and the routines they run on the shards (handlers.c, lu.c, qr.c,
 * eig.c, svd.c, cholesky.c)
 * share: one device's part of a call, the call, the blocks of a matrix over the mesh, and the
 * agreement of the call's processes on a status (call.c). Internal to libtessera_jax. */
#ifndef TSR_JAX_CALL_H
#define TSR_JAX_CALL_H

#include <stdbool.h>
#include <stdint.h>

#include "state.h"

enum { MAX_DEVICES = 256 };

/* The operations, indexed as python/tessera/_native.py's OPS. */
typedef enum {
  OP_POTRS,
  OP_POTRI,
  OP_CHOLESKY,
  OP_LU_SOLVE,
  OP_QR,
  OP_LEAST_SQUARES,
  OP_SYEVD,
  OP_POLAR,
  OP_GESVD,
  OP_CHO_SOLVE,
  OP_CHO_INVERSE,
  OP_CHO_FIRST,
  OP_CHO_SECOND,
  OP_LU_FACTOR,
  OP_LU_FACTORED,
  OP_COUNT
} op_t;

/* What one device's call deposits at the rendezvous. rows x cols are the dimensions of the
 * row-major buffer XLA gives (with TESSERA_JAX_TRANSPOSED: A's block transposed, so its
 * column-major reading is a cols x rows block of A). */
typedef struct {
  int node;                 /* tessera memory node of its device */
  int rank;                 /* its place in the mesh: row * gcols + column */
  void *a, *b;              /* its shard of A (in place); potrs: its rows of B; lu_solve: Bᵀ */
  int64_t rows, cols, nrhs; /* its shard of A: rows x cols; B: rows x nrhs (lu_solve: Bᵀ, the
                               whole nrhs x (gcols * cols), on every device; with
                               TRANSPOSED, its rows of B transposed, nrhs x cols) */
  int64_t m, n, tile, lower, logdet; /* m: A's rows with TRANSPOSED (else A is n x n) */
  int64_t vectors; /* syevd: 1 for the eigenvectors too; polar: for H; gesvd: for U and Vᴴ */
  int64_t hrows;   /* with TESSERA_JAX_SQUARE: the rows of its block of the n x n matrix */
  int64_t mixed;   /* potrs: -1, or the factor precision of a mixed-precision solve */
  void *w;         /* syevd: its eigenvalues' buffer (n, A's real type); gesvd: singular values */
  int32_t *piv;    /* lu_factor: its buffer of the pivots (n); lu_factored: the pivots given */
  int64_t trans;   /* lu_factored: 0 solves A x = b, 1 Aᵀ x = b */
  void *queue;     /* its device's XLA stream (NULL on the host) */
  int dtype;
  /* A batched call (jax.vmap's leading axes on every operand and result) holds `batch` members,
   * each a call as above: member i's A, B and W `i` steps (bytes) after the first's, its pivots
   * i * n ints after, its status st[i] and log det ld[i] (NULL without LOGDET). */
  int64_t batch;
  size_t a_step, b_step, w_step;
  int32_t *st;
  double *ld;
} part_t;

/* One call: the devices of the mesh (ndev = grows x gcols, device r at row r / gcols, column
 * r % gcols), the process of each (owners, jax's process indices) and this process's. */
typedef struct {
  op_t op;
  int platform;
  int ndev, gcols, mine; /* mine: the devices of this process */
  int64_t owners[MAX_DEVICES];
  int process;          /* this process's index (jax's) */
  tessera_comm_t *comm; /* NULL when every device is this process's */
  const int *rank_of;   /* the communicator's rank of each process index */
} call_t;

/* The blocks of a matrix over the mesh's devices, as tessera_matrix_view_blocks takes them. */
typedef struct {
  void *a[MAX_DEVICES];
  int nodes[MAX_DEVICES], owners[MAX_DEVICES];
} blocks_t;

/** Member i of p's batch: a call of one member (batch 1). */
part_t tsr_jax_member(const part_t *p, int64_t i);
/** Writes p's statuses (`count` members from member `first`, status[k] and, with p->logdet and a
 *  log det buffer, logdet[k] for member first + k) into its buffers. Returns 0 or a status. */
int tsr_jax_write_members(tessera_context_t *ctx, const part_t *p, int64_t first, int64_t count,
                          const int32_t *status, const double *logdet);

/** The blocks of a matrix of `rows` x `cols` elements in blocks of brows x bcols, from the
 *  participants' buffers (their A, or with `use_b` their B): the device at mesh (row, column) =
 *  (r / gcols, r % gcols) holds block (row, column), or with `transposed` block (column, row) (the
 *  transposed reading of a row-major shard); with `one_column` only the devices of mesh column 0,
 *  their column taken as 0. Devices whose block lies wholly in the padding hold none. */
void tsr_jax_blocks(const call_t *c, const part_t *p, int count, int64_t rows, int64_t cols,
                    int64_t brows, int64_t bcols, int use_b, int transposed, int one_column,
                    blocks_t *out);

/** The same status on every process of the call's communicator: the lowest negative any has,
 *  else the lowest positive (LAPACK's info), else 0; TESSERA_ERR_TIMEOUT when they cannot be
 *  reached. */
int tsr_jax_agree(const call_t *c, int rc);

/** Over processes (c->comm), a copy of the shards' view V on tessera's own layout
 *  (tessera_matrix_fit: `part` of it, dealt for balance, moved GPU to GPU as the routine
 *  starts) into *A where the cost model finds that it pays (`back`: the result comes back into
 *  V, a second move); elsewhere, and on one process, *A is V itself, whose tiles the cost
 *  model places on the devices as it goes. */
int tsr_jax_fit(const call_t *c, tessera_matrix_t *V, tessera_layout_t layout, char part, bool back,
                tessera_matrix_t **A);
/** The fitted copy A's part back into V when `back` (the routine's result is A's) and rc is 0,
 *  then A destroyed (nothing when A is V). Returns rc, else the copy's status. */
int tsr_jax_unfit(tessera_matrix_t *V, tessera_matrix_t *A, bool back, int rc);

/** A routine's tile for an m x n matrix on `platform` (`rule`: tessera_tile_for_qr, ...) on the
 *  platform's context: > 0, or a negative status when the context cannot be made. */
int tsr_jax_tile_of(tsr_jax_state_t *s, int platform, int64_t m, int64_t n,
                    int (*rule)(const tessera_context_t *, int64_t, int64_t));

/** Whether the call's operation is a whole-matrix solve one device runs on a queue
 *  (tsr_jax_queue_solve): potrs, cholesky or lu_solve, not in mixed precision. */
bool tsr_jax_queue_solves(const call_t *c, const part_t *p);
/** That solve on the device of p, enqueued on p->queue (tessera_queue_posv_batch,
 *  tessera_queue_gesv): the whole matrix at `a` read column-major as Aᵀ (leading dimension
 *  p->cols), B at `b` (potrs: Bᵀ, nrhs x n, solved from the right; lu_solve: Bᵀ of leading
 *  dimension p->cols, (Aᵀ)ᵀ x = b), the info at `info` and potrs' log det at `logdet` (with
 *  p->logdet), on the device; each of p's batch, p->a_step and p->b_step bytes apart (Cholesky's
 *  as one batched call). Returns as those calls. */
int tsr_jax_queue_solve(tessera_context_t *ctx, const call_t *c, const part_t *p, void *a, void *b,
                        int *info, double *logdet);

#endif
