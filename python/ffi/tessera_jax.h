/* tessera's XLA FFI handlers: the C side of the JAX binding (python/tessera/jax.py).
 *
 * Python loads this library with ctypes, creates one state (tessera_jax_state_create) for the
 * process and passes its address to every call as the attribute `state`; the state owns one
 * tessera context per platform (made at the first call that needs it) and the rendezvous table.
 * Nothing here is process-global. The operations are one table, python/tessera/_native.py's,
 * which the handler table here is indexed as (tessera_jax_op); the Python side checks at load
 * that both name the same operations with the same flags.
 *
 * Every handler is called by XLA once per device of the mesh, from one thread per device, with
 * that device's shard of A (row-major): on a 1D mesh its rows (nl x Np), on a grows x gcols mesh
 * its block (Np / grows x Np / gcols); for potrs its rows of B (nl x k), and for lu_solve the
 * whole Bᵀ (k x Np, row-major, the same on every device). A row-major shard of A is, read
 * column-major, a block of Aᵀ (a column panel on a 1D mesh): the shards are registered in place
 * as the blocks of one tessera matrix (tessera_matrix_view_blocks; no transpose, no gather),
 * distributed over the processes when the mesh spans several. Cholesky (A Hermitian, so Aᵀ =
 * conj(A) is too): factored with the triangle opposite to the one the caller names, and solved
 * from the right (Xᵀ Aᵀ = Bᵀ, B's blocks those of mesh column 0). LU: Aᵀ factored with partial
 * pivoting (P Aᵀ = L U), A X = B solved as (Aᵀ)ᵀ X = B on Bᵀ's buffer read column-major (B, n x
 * k, leading dimension Np): mesh device 0's in place, the solution then copied into every other
 * device's, those of other processes through a broadcast. A call on a mesh of one device whose
 * matrix is one tile (tile >= n) runs neither rendezvous nor flow: the same solve on the whole
 * shard, enqueued on XLA's stream (tessera_queue_posv / tessera_queue_gesv), the status and log
 * det written there in the stream's order (X undefined when the status is not 0). potrs,
 * cholesky and lu_solve on a 1D mesh of several devices may, as the seconds measured each way on
 * the call's shape say (small.c), run the same solve on one device of each process instead: the
 * shards gathered there in mesh order (the whole Aᵀ, and potrs' Bᵀ), the result written back
 * into them as the multi-device routine writes it. lu_factor leaves the factors of Aᵀ in A's
 * shards and its pivots in a buffer of every device; lu_factored solves A x = b (trans 0) or
 * Aᵀ x = b (trans 1) on those factors and pivots, as lu_solve writes x.
 * QR and least squares (qr.c) take A (m x n, any shape) transposed: each device's buffer is its
 * block of Aᵀ, row-major, so that read column-major it is its block of A itself (QR needs A's
 * columns, which a row-major shard of A does not hold), and B (least squares) or C = [I; 0]
 * (QR's Q) the same way, this device's rows of it transposed (k x its rows of A; on a 2D mesh,
 * those of mesh column 0 are used). The blocks are registered in place as one tessera matrix of
 * m x n (the padding past it untouched); QR factors it (tessera_tile_geqrf) and forms Q C in C's
 * buffers (tessera_tile_unmqr), least squares solves it (tessera_tile_gels) with X in the first
 * n rows of B's buffers.
 * The Hermitian eigensolver (syevd, eig.c) gathers A's lower triangle into one host copy on
 * each process (tessera_syevd / tessera_heevd take host arrays of one process): the leader
 * copies its devices' blocks there, transposed to column-major; across processes the copies are
 * summed into that of mesh device 0's process, which alone solves (the others beating with it
 * in small collectives so that no timeout ends their wait) and broadcasts the eigenvalues (and
 * V). Every device receives the eigenvalues; with vectors, each device's block of V replaces its
 * shard of A.
 * Attributes:
 *   state    (u64)   the state's address
 *   site     (s64)   identifies the call site within the program (rendezvous key with run id)
 *   ndev     (s64)   devices of the mesh (grows x gcols)
 *   gcols    (s64)   devices along the mesh's column axis (1 on a 1D mesh)
 *   owners   (s64[ndev]) jax's process index of each device, row axis major
 *   n        (s64)   order of A (<= Np; rows and columns past n are padding, untouched); with
 *                    TRANSPOSED, A's columns
 *   m        (s64)   TRANSPOSED: A's rows (A is m x n)
 *   tile     (s64)   tile size: divides both sides of a shard when there are several devices
 *                    (TRANSPOSED: QR's panel width, dividing a block's columns on a 2D mesh;
 *                    syevd: unused, the library tiles its host copy itself)
 *   lower    (s32)   Cholesky ops: 1: A's lower triangle is read (and the factor / inverse
 *                    written there)
 *   logdet   (s32)   potrs: 1 to compute log det A
 *   mixed    (s64)   potrs, lu_solve: -1, or the factor precision of tessera_tile_posv_mixed /
 *                    tessera_tile_gesv_mixed
 *   vectors  (s64)   syevd: 1 for the eigenvectors too, 0 for the eigenvalues alone
 *   trans    (s64)   lu_factored: 0 solves A x = b, 1 Aᵀ x = b
 * Operands: A's shard, potrs' B shard or lu_solve's Bᵀ, and the device's place in the mesh
 * (row * gcols + column, s32 scalar). Results: the matrix in place (aliased to A: the factors,
 * which the Python side drops; syevd: the eigenvectors' block with vectors), X (aliased to B /
 * Bᵀ) for potrs and lu_solve, potrs' log det (f64[1]), syevd's eigenvalues (n, ascending, f32
 * for f32 and c64 matrices, f64 for f64 and c128; the same on every device), and the status
 * (s32[1]): 0, LAPACK's info (Cholesky: the order of the first minor not positive definite; LU:
 * the first exactly zero U(i, i) or column holding NaN, X then untouched; least squares: the
 * first exactly zero R(i, i); syevd: the first column of A's lower triangle holding a NaN or an
 * infinity, or the tridiagonal eigensolver's failure), or a negative tessera status
 * (TESSERA_ERR_TIMEOUT when a device's call did not arrive in time).
 */
#ifndef TESSERA_JAX_H
#define TESSERA_JAX_H

#include <stdint.h>

#include "tessera/comm.h"

#include "xla/ffi/api/c_api.h"

#define TSR_JAX_EXPORT __attribute__((visibility("default")))

/** Platforms, as the handlers are registered. */
enum { TESSERA_JAX_CPU = 0, TESSERA_JAX_CUDA = 1, TESSERA_JAX_PLATFORMS = 2 };

typedef struct tsr_jax_state tsr_jax_state_t;

/** A state: contexts made lazily, rendezvous waiting at most TESSERA_JAX_TIMEOUT seconds for
 *  every device of a call to arrive; each GPU's pool takes TESSERA_GPU_MEM_LIMIT bytes where set,
 *  else `xla_left` (what XLA leaves of a GPU; <= 0: tessera's default). NULL, with a sentence in
 *  err (at most len bytes), for a malformed TESSERA_* variable or when out of memory. */
TSR_JAX_EXPORT tsr_jax_state_t *tessera_jax_state_create(int64_t xla_left, char *err, size_t len);

/** Closes the state: waits for the calls in progress, finalizes the contexts (writing a trace
 *  when TESSERA_TRACE is set). Calls made afterwards fail with an XLA error. The state's few
 *  hundred bytes are not freed, so that a call XLA still runs at interpreter exit finds it. */
TSR_JAX_EXPORT void tessera_jax_state_destroy(tsr_jax_state_t *s);

/** Tile size tessera prefers for a matrix of order n over `ndev` devices of `platform` (the
 *  binding then takes a divisor of the shard near it), for LU's column panels when `lu` is
 *  nonzero, else for Cholesky's square tiles: > 0, or a negative status when the platform's
 *  context cannot be made (tessera_jax_error says why). */
TSR_JAX_EXPORT int tessera_jax_tile(tsr_jax_state_t *s, int platform, int64_t n, int ndev, int lu);

/** The message of the last failure of `platform`'s context ("" when none). */
TSR_JAX_EXPORT const char *tessera_jax_error(tsr_jax_state_t *s, int platform);

/** `platform`'s context (made at its first use), held for the caller as one multi-device call
 *  of the handlers holds it, until tessera_jax_context_release: no handler runs on it
 *  meanwhile, and its tasks run on the GPUs of `gpus` (bit g: CUDA GPU g) or, on the CPU
 *  platform, on its CPU workers. For tessera's own routines on the shards of jax arrays in the
 *  same process as the binding, on its pools: a second context there would find the GPUs'
 *  memory taken by XLA and by this one (bench/jax_potrs.py). Returns 0 and `*ctx`, or a
 *  negative status (tessera_jax_error says why) and NULL. */
TSR_JAX_EXPORT int tessera_jax_context_acquire(tsr_jax_state_t *s, int platform, uint64_t gpus,
                                               struct tessera_context **ctx);

/** Releases what tessera_jax_context_acquire held (`ctx`, the context it gave). */
TSR_JAX_EXPORT void tessera_jax_context_release(tsr_jax_state_t *s, int platform,
                                                struct tessera_context *ctx);

/** Joins the processes of a JAX program that spans several (jax.distributed): this process is
 *  `process` of `processes` (jax's indices). Makes the binding's communicator over them, on
 *  host buffers: a collective call, every process making it at its first call whose mesh spans the
 * processes. `store` NULL: over MPI (the program was launched by mpirun or srun, and MPI's world
 * must be those processes; MPI starts here); else over Gloo, bootstrapped through the key-value
 * store (jax's distributed store), with no MPI. Its calls, and those of the communicators
 * tessera_jax_join makes, wait TESSERA_JAX_TIMEOUT seconds for the other processes. A second call
 * fails. Returns 0, or a negative status with the reason in tessera_jax_error (platform CPU). */
TSR_JAX_EXPORT int tessera_jax_processes(tsr_jax_state_t *s, int process, int processes,
                                         const tessera_comm_store_t *store);

/** The communicator of `platform`'s calls over the processes (tessera_jax_processes first):
 *  on the CPU platform the binding's own, on CUDA one whose device endpoints are the context's
 *  GPUs (the same count on every process), made at the first call (later calls return 0): a
 *  collective call, every process joining at the same point of the program. Returns 0, or a
 *  negative status with the reason in tessera_jax_error. */
TSR_JAX_EXPORT int tessera_jax_join(tsr_jax_state_t *s, int platform);

/** The calls of potrs, cholesky and lu_solve on this process that ran on one device instead
 *  of the multi-device routine, their matrix small for the mesh (the binding's measured choice,
 *  python/ffi/small.c): an observation for tests and diagnostics, which changes nothing. */
TSR_JAX_EXPORT int64_t tessera_jax_one_device_calls(tsr_jax_state_t *s);

/** 1 when tessera was built with its CUDA backend, else 0. */
TSR_JAX_EXPORT int tessera_jax_cuda_built(void);

/** Flags of an operation (tessera_jax_op): its right-hand side operand and the attributes and
 *  results it has besides those of every operation (python/tessera/_native.py's flags). */
enum {
  TESSERA_JAX_RHS_ROWS = 1,     /**< operand 1: this device's rows of B (nl x k); result 1: X */
  TESSERA_JAX_RHS_WHOLE_T = 2,  /**< operand 1: the whole Bᵀ (k x Np); result 1: Xᵀ */
  TESSERA_JAX_LOWER = 4,        /**< attribute `lower` */
  TESSERA_JAX_LOGDET = 8,       /**< attribute `logdet`; the result before the status: log det */
  TESSERA_JAX_TRANSPOSED = 16,  /**< attribute `m`: A is m x n, its blocks given transposed (row-
                                     major blocks of Aᵀ); with RHS_ROWS, operand 1 is this
                                     device's rows of B transposed (nrhs x its rows) */
  TESSERA_JAX_EIGEN = 32,       /**< attribute `vectors`; the result before the status: the
                                     eigenvalues (n, A's real type) */
  TESSERA_JAX_MIXED = 64,       /**< attribute `mixed`: the factor precision of a mixed-precision
                                     solve (tessera_factor_t), or -1 for the plain solve */
  TESSERA_JAX_SQUARE = 128,     /**< with TRANSPOSED: operand 1 is this device's block of an
                                     n x n matrix (H, Vᴴ) sharded over the mesh as A, transposed
                                     as A's (its columns: the block's rows); result 1 that
                                     matrix */
  TESSERA_JAX_PIVOTS_OUT = 256, /**< result 1 (after A): the pivots of the LU factorization left
                                     in A's shards (s32, n; 1-based, as LAPACK's), the same on
                                     every device */
  TESSERA_JAX_PIVOTS_IN = 512   /**< operand 1 (after A, before B): those pivots, with A's shards
                                     that factorization; attribute `trans` */
};

/** QR's panel width for an m x n matrix on `platform` (tessera_tile_for_qr of its context): > 0,
 *  or a negative status when the platform's context cannot be made (tessera_jax_error says
 *  why). */
TSR_JAX_EXPORT int tessera_jax_tile_qr(tsr_jax_state_t *s, int platform, int64_t m, int64_t n);

/** The polar decomposition's tile for an m x n matrix on `platform` (tessera_tile_for_polar of
 *  its context), which gesvd shares: > 0, or a negative status as tessera_jax_tile_qr. */
TSR_JAX_EXPORT int tessera_jax_tile_polar(tsr_jax_state_t *s, int platform, int64_t m, int64_t n);

/** Entry `op` of the handler table (0 potrs, 1 potri, 2 cholesky, 3 lu_solve, 4 qr,
 *  5 least_squares, 6 syevd, 7 polar, 8 gesvd, 9 cho_solve, 10 cho_inverse, 11 cho_first,
 *  12 cho_second, 13 lu_factor, 14 lu_factored, indexed as
 *  python/tessera/_native.py's OPS): its name (the FFI target is tessera_<name>), its flags
 *  and its handler for `platform`. Returns 0, or -1 when `op` or `platform` is out of range
 *  (the table has no entry `op`). */
TSR_JAX_EXPORT int tessera_jax_op(int op, int platform, const char **name, int *flags,
                                  XLA_FFI_Handler **handler);

#endif
