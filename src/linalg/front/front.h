/* What the front doors share: on a context over processes, which process holds the arrays of a
 * LAPACK-style call, the agreement of its arguments and tile, the root's flags and bytes, and
 * the arrays dealt to and gathered from the grid (lapack_dist.c); the views of a call's arrays
 * (views.c); the argument checks numbered as LAPACK numbers them (checks.c); and the tile-level
 * helpers of LU and QR: the end of a call, the column panels they run on (tile.c). */
#ifndef TSR_LINALG_FRONT_H
#define TSR_LINALG_FRONT_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/eig.h"
#include "linalg/desc/desc.h"
#include "linalg/loops/loops.h"
#include "linalg/loops/policy.h"

/* LAPACK-style calls on a context over processes. What every call asks goes through the
 * context's flow (runtime/flow.h), which on a context of one process answers at once; the rest
 * (lapack_dist.c) a call on a context of one process never makes. */

/** Whether this process holds the arrays of LAPACK-style calls: every process of a context of
 *  its own, process 0 of a distributed context. */
static inline bool tsr_lapack_holds_arrays(const tessera_context_t *ctx) {
  return tsr_context_flow(ctx)->rank == 0;
}
/** The same status on every process of the context. */
static inline int tsr_lapack_agreed(const tessera_context_t *ctx, int rc) {
  return tsr_flow_agree(tsr_context_flow(ctx), rc);
}
/** The root's `bytes` (a multiple of 4) of buf on every process; buf may be NULL on the others
 *  (the bytes are received and dropped). */
static inline int tsr_lapack_broadcast(const tessera_context_t *ctx, void *buf, size_t bytes) {
  tsr_flow_t *f = tsr_context_flow(ctx);
  return f->ops->broadcast(f, buf, bytes, 0);
}
/** The root's `flag` on every process (its own where the exchange fails). */
static inline int tsr_lapack_root_flag(const tessera_context_t *ctx, int flag) {
  int32_t v = flag;
  return tsr_lapack_broadcast(ctx, &v, sizeof v) ? flag : v;
}
/** Compares the k scalar arguments `values` (argument numbers `argno`) across the processes
 *  together with each one's own checks (`rc`: 0 or -argno), and agrees on the tile size: *tile,
 *  this process's choice on entry, becomes the smallest any process chose. The same status on
 *  every process; the one at fault keeps its own message. At most 8 values. */
int tsr_lapack_agree(tessera_context_t *ctx, const char *f, int k, const int64_t *values,
                     const int *argno, int rc, int64_t *tile);
/** Most elements one message of the front doors moves: MPI counts in int. */
#define TSR_MESSAGE_ELEMENTS ((size_t)1 << 28)
/** The root's `bytes` of buf on every process of c (tsr_lapack_broadcast on any communicator). */
int tsr_root_broadcast(tessera_context_t *ctx, tessera_comm_t *c, void *buf, size_t bytes);
/** run(arg) on process 0 of c alone (on a thread of its own), while every process exchanges a
 *  small message with the others every few milliseconds until it has returned: a collective
 *  call whose work only the root can do (it reads the root's arrays in ways no tile flow
 *  describes) and which may outlast the communicator's timeout. Returns the root's status and
 *  message on every process, or the exchange's failure; run(arg) alone where c is NULL. */
int tsr_root_run(tessera_context_t *ctx, tessera_comm_t *c, const char *f, int (*run)(void *),
                 void *arg);
/** run(arg) on every process of c at once (each on a thread of its own), the processes
 *  exchanging a small message every few milliseconds until every one has returned: work of
 *  unequal lengths that may outlast the timeout. The same status on every process (the one at
 *  fault keeps its message). */
int tsr_all_run(tessera_context_t *ctx, tessera_comm_t *c, const char *f, int (*run)(void *),
                void *arg);
/** The distributed A into the root's array h (A->m x A->n, leading dimension A->m; NULL on the
 *  others), by tile copies to the root. The same status on every process. */
int tsr_lapack_collect(tessera_matrix_t *A, void *h);
/** The root's array h (as tsr_lapack_collect's) back into the distributed A's tiles. */
int tsr_lapack_deal(const void *h, tessera_matrix_t *A);
/** A matrix over A's communicator (and context and dtype) of m x n in mb x nb tiles, all the
 *  root's, in place in its array `at` (leading dimension ld; NULL on the others) in the memory
 *  of its node `node`. */
int tsr_root_matrix(const tessera_matrix_t *A, int64_t m, int64_t n, int64_t mb, int64_t nb,
                    void *at, int64_t ld, int node, tessera_matrix_t **out);
/** tsr_root_matrix over communicator comm of context ctx, in dtype dt. */
int tsr_root_array(tessera_context_t *ctx, tessera_comm_t *comm, tessera_dtype_t dt, int64_t m,
                   int64_t n, int64_t mb, int64_t nb, void *at, int64_t ld, int node,
                   tessera_matrix_t **out);
/** tsr_lapack_collect and tsr_lapack_deal with the root's array in the memory of its node
 *  `node` (a device's: the tiles travel to and from it without a host array). */
int tsr_lapack_collect_on(tessera_matrix_t *A, void *h, int node);
int tsr_lapack_deal_on(const void *h, int node, tessera_matrix_t *A);
/** A matrix of the context's grid in nb x nb tiles (only the tiles of `part`: 'L', 'U' triangle
 *  of tiles, 0 all), or with `panels` in column panels of nb columns dealt over a 1 x P grid of
 *  every process (LU), and `root`, the root's m x n array a (lda) as a matrix the root owns;
 *  when `in`, the copies of root's tiles into out's are inserted (not waited for). */
int tsr_lapack_scatter(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n,
                       int64_t nb, bool panels, const void *a, int64_t lda, char part, bool in,
                       tessera_matrix_t **out, tessera_matrix_t **root);
/** A matrix over src's communicator on grid g, of src's sizes, dtype and tile width in tiles of
 *  mb rows, holding the tiles of `part` (tsr_in_part's), owned by the grid's owners (`on` -1) or
 *  all by process `on`, its tiles workspaces living where their first writer runs
 *  (matrix_dist.c); with `copy`, src's tiles copied into it (inserted, not waited for; src's
 *  received copies dropped after them). On a failure nothing is made and *out is NULL. A
 *  collective call on src's communicator. */
int tsr_matrix_dealt(tessera_matrix_t *src, tessera_grid_t g, int64_t mb, char part, int on,
                     bool copy, tessera_matrix_t **out);
/** Copies A's tiles back into `root`'s (the root's array) and waits: the same status on every
 *  process. */
int tsr_lapack_gather(tessera_matrix_t *A, tessera_matrix_t *root);

/* The views of one LAPACK-style call's arrays (views.c), destroyed together. */
#define TSR_MAX_VIEWS 3
/** How a routine touches an array: read, written. */
enum { TSR_IN = 1, TSR_OUT = 2 };
typedef struct {
  tessera_context_t *ctx;
  tessera_matrix_t *v[TSR_MAX_VIEWS];
  tessera_matrix_t *r[TSR_MAX_VIEWS]; /* distributed: the root's arrays as matrices of the root */
  int n;
  int64_t tile;                /* one tile size for every array of the call */
  bool dist;                   /* the context spans processes: the views are distributed matrices */
  bool panels;                 /* tiles span the rows (column panels of `tile` columns: LU, QR) */
  int io[TSR_MAX_VIEWS];       /* how the routine touches each (TSR_IN, TSR_OUT) */
  void *pinned[TSR_MAX_VIEWS]; /* the arrays pinned for the call (tsr_host_pin), else NULL */
} tsr_views_t;
/** Starts a call whose own checks gave `rc`, in tiles of `tile` (this process's choice): on a
 *  distributed context the k scalar arguments (numbers argno) are compared across the processes
 *  with everyone's checks, and the tile size is agreed. */
int tsr_views_begin(tsr_views_t *vs, tessera_context_t *ctx, const char *f, int rc, int k,
                    const int64_t *values, const int *argno, int64_t tile);
/** Adds the view of the m x n array a (lda; distributed: the root's, dealt over the grid, only
 *  the tiles of `part`, 'L', 'U' or 0 for all) touched as `io`. Within one process the array is
 *  pinned for the call where the context's accelerators pin host memory. */
int tsr_views_add(tsr_views_t *vs, tessera_dtype_t dtype, int64_t m, int64_t n, const void *a,
                  int64_t lda, char part, int io);
/** Ends the call whose status is rc: distributed, the written parts go back to the root (after a
 *  factorization's info too, as LAPACK leaves the partial factor); the views are destroyed and
 *  the arrays unpinned. */
int tsr_views_release(tsr_views_t *vs, int rc);

/** An LU call's views (lapack.c) begun: tsr_views_begin in LU's tiles and panels (the tile
 *  size the smallest any process would choose, on a context over processes), and on a context
 *  over processes `*piv`, the call's pivots on every process: the root's ipiv, scratch
 *  elsewhere (kmin of them; with read_ipiv the root's copied in). End with tsr_lu_views_end. */
int tsr_lu_views_begin(tsr_views_t *vs, tessera_context_t *ctx, const char *f, int rc, int k,
                       const int64_t *values, const int *argno, int64_t m, int64_t n, int *ipiv,
                       int **piv, bool read_ipiv);
/** tsr_views_release, and the scratch pivots freed. */
int tsr_lu_views_end(tsr_views_t *vs, int rc, int *ipiv, int *piv);

/* Argument checks of the LAPACK-style front doors (checks.c): each returns 0, or -argno with a
 * message naming the routine `name` and the argument. */
int tsr_arg_ld(tessera_context_t *ctx, const char *name, int argno, int64_t ld, int64_t rows);
int tsr_arg_ptr(tessera_context_t *ctx, const char *name, int argno, const void *p, int64_t m,
                int64_t n);
int tsr_arg_dim(tessera_context_t *ctx, const char *name, int argno, int64_t v);
int tsr_arg_flag(tessera_context_t *ctx, const char *name, int argno, int v, const char *allowed);
int tsr_arg_dtype(tessera_context_t *ctx, const char *name, int argno, tessera_dtype_t d);

/* The Hermitian eigensolver's parts (eig.c, eig_one.c, eig_prepare.c) and its form over processes
 * (eig_dist.c). */

/** What stages 2 and 3 leave for back-transformations run elsewhere (tsr_eig_band_solve): the
 *  band nb; Q2's reflectors v and tau (nv + 1 and ntau + 1 elements, the bulge chasing's layout,
 *  kernels/cpu/hb2st.h, in arrays of tsr_eig_array_shape) in the memory of node `node`: host
 *  arrays, or a device's where a GPU chased (the handles hv, htau holding them); E, T's
 *  eigenvectors, at e (n x n, leading dimension n) in the memory of device node e_node where
 *  the merges left them on an accelerator (the handle he holding it), else NULL: E is then in
 *  the caller's array. Freed by tsr_eig_back_free. */
typedef struct {
  int nb;
  int64_t nv, ntau;
  void *v, *tau;
  int node;
  tessera_data_t *hv, *htau;
  void *e;
  int e_node;
  tessera_data_t *he;
} tsr_eig_back_t;
void tsr_eig_back_free(tessera_context_t *ctx, tsr_eig_back_t *r);
/** The host memory tsr_eig_solve on ctx holds at most besides A and w, in bytes (the forms
 *  its stages take on ctx's devices decided as the call decides them; eig_api.c). */
double tsr_eig_host_bytes(tessera_context_t *ctx, tessera_job_t job, tessera_dtype_t dt, int64_t n);

/** The solver on the host array a (lda) of this process, its arguments checked, n > 0. */
int tsr_eig_solve(tessera_context_t *ctx, const char *f, tessera_job_t job, tessera_uplo_t uplo,
                  tessera_dtype_t dt, int64_t n, void *a, int64_t lda, void *w);
/** tsr_eig_solve with the eigenvectors of eigenvalues lo .. lo + k - 1 (0-based, ascending)
 *  alone, into a's first k columns (the two stages carry those k back, the one stage as
 *  tsr_eig_one_range); w (n) receives those eigenvalues at w[lo ..], its other entries
 *  undefined. */
int tsr_eig_solve_range(tessera_context_t *ctx, const char *f, tessera_job_t job,
                        tessera_uplo_t uplo, tessera_dtype_t dt, int64_t n, void *a, int64_t lda,
                        void *w, int64_t lo, int64_t k);
/** Columns lo .. lo + k - 1 of the n-row array a (lda) moved to columns 0 .. k - 1. */
void tsr_eig_first_columns(tessera_dtype_t dt, int64_t n, void *a, int64_t lda, int64_t lo,
                           int64_t k);
/** The two stages' working copy h (ldh) of A (a, lda; its `uplo` triangle made the lower one of
 *  h), scaled as LAPACK scales it by *s: 0, a negative status, or LAPACK's info for A's first
 *  column holding a NaN or an infinity (a and w then filled with NaN, the message on ctx). */
int64_t tsr_eig_working_copy(tessera_context_t *ctx, const char *f, tessera_job_t job,
                             tessera_uplo_t uplo, tessera_dtype_t dt, int64_t n, void *a,
                             int64_t lda, void *w, void *h, int64_t ldh, double *s);
/** Stages 2 and 3 on a band made elsewhere (ab, (nb + 1) x n, taken: freed here) of a working
 *  copy scaled by s: the eigenvalues into w; with vectors T's eigenvectors E (into a, lda, or
 *  kept on the accelerator) and Q2's reflectors into *out (freed by the caller, whatever the
 *  status), E's back-transformations left to the caller. */
int tsr_eig_band_solve(tessera_context_t *ctx, tessera_job_t job, tessera_dtype_t dt, int64_t n,
                       int nb, void *ab, double s, void *a, int64_t lda, void *w,
                       tsr_eig_back_t *out);
/** One eigensolver call's arguments (on the root: its array a, lda; w where given), which the
 *  parts over processes pass on. */
typedef struct {
  tessera_context_t *ctx;
  const char *f;
  tessera_job_t job;
  tessera_uplo_t uplo;
  tessera_dtype_t dt;
  int64_t n;
  void *a;
  int64_t lda;
  void *w;
} tsr_eig_call_t;
/** The two stages over processes (eig_band_dist.c) on the root's array of `call`: the band
 *  reduction on the processes' tiles (tsr_eig_band_dealt), the band's stages on the root; with
 *  vectors *out receives T's eigenvectors E and Q2's reflectors (tsr_eig_band_solve's, on the
 *  root) and *H stage 1's as the band reduction left them over the processes, for the
 *  back-transformations the caller deals (out is needed either way and freed by the caller, H
 *  destroyed by it where the status is 0). The same status everywhere. */
int tsr_eig_two_stages(const tsr_eig_call_t *call, tessera_comm_t *comm, tsr_eig_back_t *out,
                       tsr_he2hb_t *H);
/** The one-stage solver (eig_one.c) on the host array a (lda) of this process, its arguments
 *  checked, n > 0: LAPACK's or cuSOLVER's syevd on the device `where` (tsr_eig_one_stage), its
 *  GPU workspace work_bytes. */
int tsr_eig_one(tessera_context_t *ctx, const char *f, tessera_job_t job, tessera_uplo_t uplo,
                tessera_dtype_t dt, int64_t n, void *a, int64_t lda, void *w, tessera_scope_t where,
                size_t work_bytes);
/** tsr_eig_one with the vectors of eigenvalues lo .. lo + k - 1 alone into a's first k columns
 *  (as tsr_eig_solve_range; w's other entries undefined): LAPACK's ?syevr / ?heevr on the CPU
 *  cores, cuSOLVER's Xsyevdx on a GPU. */
int tsr_eig_one_range(tessera_context_t *ctx, const char *f, tessera_job_t job, tessera_uplo_t uplo,
                      tessera_dtype_t dt, int64_t n, void *a, int64_t lda, void *w,
                      tessera_scope_t where, size_t work_bytes, int64_t lo, int64_t k);
/** The one-stage solver's arguments (one thread; work_bytes of GPU workspace). */
static inline tsr_syevd_args_t tsr_eig_one_args(tessera_job_t job, tessera_uplo_t uplo,
                                                tessera_dtype_t dt, int64_t n, size_t work_bytes) {
  return (tsr_syevd_args_t){.dtype = dt,
                            .jobz = job == TESSERA_VECTORS ? 'V' : 'N',
                            .uplo = (char)uplo,
                            .n = (int)n,
                            .threads = 1,
                            .work_bytes = work_bytes};
}
/** The one stage as one task at `where` on the n x n array of handle a: w (host, n of the
 *  dtype's real type) and *info registered for it, its workspace made; waited for, w and the
 *  info home. */
int tsr_eig_one_task(tessera_context_t *ctx, const tsr_syevd_args_t *args, tessera_data_t *a,
                     void *w, int *info, tessera_scope_t where);
/** Whether a solve with eigenvalues w and `info` leaves its status unsure: an info, or an
 *  eigenvalue that is not finite (a NaN or an infinity in A, which the solve did not scan). */
bool tsr_eig_unsure(tessera_dtype_t dt, int64_t n, const void *w, int info);
/** The one-stage solver on the tiles of A (not distributed, n > 0, its arguments checked) at the
 *  accelerator of `where` (work_bytes > 0 of GPU workspace): A's tiles copied by tasks into one
 *  array in that device's memory, cuSOLVER's syevd there, with VECTORS the eigenvectors copied
 *  back into A's tiles; w (host) receives the eigenvalues. Where the solve leaves an info or an
 *  eigenvalue that is not finite (a NaN or an infinity in A), *unsure is set and A is left as it
 *  was, for a solver that names the column. Returns 0 or a negative status. */
int tsr_eig_one_tiles(tessera_context_t *ctx, const char *f, tessera_job_t job, tessera_uplo_t uplo,
                      tessera_matrix_t *A, void *w, tessera_scope_t where, size_t work_bytes,
                      bool *unsure);
/** The context's CPU workers (0 without a CPU device): the host stages' tasks run on them, and
 *  the inline ones use their cores while they wait. */
int tsr_eig_cpu_workers(const tessera_context_t *ctx);

/** The status of a gesdd or polar_gesdd kernel's inline run (svd.c): its run's status `rc`
 *  (a kernel failure as TESSERA_ERR_KERNEL), else info[1], the column holding a NaN or an
 *  infinity, else info[0], the bidiagonal SVD's failure; each with a message for routine f. */
int tsr_gesdd_status(tessera_context_t *ctx, const char *f, int rc, const int info[2]);
/** h (n x n, ldh; NULL: a scan only) = A's `uplo` triangle made lower (eig_prepare) by tasks
 *  over column ranges of equal area on the CPU workers (`workers`), else on this thread; the
 *  triangle's largest modulus into *amax. Returns the first column (1-based) holding a NaN or
 *  an infinity, 0, or a negative status. */
int64_t tsr_eig_prepare(tessera_context_t *ctx, tessera_dtype_t dt, char uplo, int64_t n,
                        const void *a, int64_t lda, void *h, int64_t ldh, int workers,
                        double *amax);
/** NaN in w and in what the call writes of a (every entry with vectors, else the triangle). */
void tsr_eig_fill_nan(tessera_dtype_t dt, tessera_job_t job, char uplo, int64_t n, void *a,
                      int64_t lda, void *w);
/** The LAPACK-style syevd on a context over processes, its own checks `rc` agreed first. */
int tsr_eig_lapack_processes(tessera_context_t *ctx, const char *f, tessera_job_t job,
                             tessera_uplo_t uplo, tessera_dtype_t dt, int64_t n, void *a,
                             int64_t lda, void *w, int rc);
/** The tile-level syevd of a distributed A (its own checks gave rc): A collected into an array of
 *  process 0, solved there as the LAPACK-style call over processes does, the eigenvectors of the
 *  two stages copied into A's tiles from the processes' panels (those of one stage on process
 *  0's device dealt back from there). */
int tsr_eig_tile_processes(tessera_context_t *ctx, const char *f, tessera_job_t job,
                           tessera_uplo_t uplo, tessera_matrix_t *A, void *w, int rc);
/** Least squares on column panels (qr.c): P is A (m x k, m >= k, `wide` false) or Aᴴ (the
 *  minimum norm solution of the wide A, `wide` true), factored by QR in place, and Bp (P's rows)
 *  receives x: R x = (Qᴴ b)(1 .. k), or Rᴴ y = b(1 .. k) then x = Q [y; 0]. Returns 0, LAPACK's
 *  info i > 0 for an exactly zero R(i, i) (B untouched; the message names routine `f`), or a
 *  negative status; the caller waits for Bp and P. */
int tsr_qr_gels_panels(tessera_matrix_t *P, bool wide, tessera_matrix_t *Bp, const char *f);

/* Shared by the tile-level front doors (tile.c, qr.c). */

/** Ends a tile-level call whose flow on `out` was inserted with status rc: flushes, waits, and
 *  on a distributed matrix agrees on one status across the processes. */
int tsr_tile_finish(tessera_matrix_t *out, int rc);
/** The operands of a Cholesky solve (uplo 1, A 2, B 3): same context and tiling of n, A square
 *  and stored where the solve reads it. */
int tsr_check_potrs(tessera_uplo_t uplo, const tessera_matrix_t *A, const tessera_matrix_t *B,
                    const char *name);
/** The operands of an LU solve (A 1, ipiv 2, B 3): A square, B of its rows, one context, dtype
 *  and communicator, ipiv given where A is not empty. */
int tsr_check_gesv(const tessera_matrix_t *A, const int *ipiv, const tessera_matrix_t *B,
                   const char *name);
/** Refuses operand `argno` when it stores one triangle only and the routine touches tiles
 *  outside it (`need`: the triangle it touches, 'L' or 'U', or 0 for every tile). */
int tsr_check_stored(const tessera_matrix_t *X, char need, int argno, const char *name);
/** A new m x n matrix of column panels nb wide, of X's context, dtype and communicator
 *  (distributed: its panels dealt over a 1 x P grid). */
int tsr_panels_new(const tessera_matrix_t *X, int64_t m, int64_t n, int64_t nb,
                   tessera_matrix_t **out);
/** The column panels LU and QR run on: X itself when its tiles span its rows, else a copy in
 *  panels of X's tile width, X copied in by tasks. A collective call for a distributed X. */
int tsr_panels_of(tessera_matrix_t *X, tessera_matrix_t **out);
/** Inserts the copy of panels P (from tsr_panels_of) back into X after the flow (rc 0). */
int tsr_panels_back(tessera_matrix_t *X, tessera_matrix_t *P, int rc);
/** Frees panels P (from tsr_panels_of) once the flow is over: rc, else the free's status. */
int tsr_panels_free(tessera_matrix_t *X, tessera_matrix_t *P, int rc);

#endif
