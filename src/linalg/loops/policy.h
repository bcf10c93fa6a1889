/* The algorithms layer's device, size and precision choices (policy.c): every choice of where a
 * call's tasks run, how large its tiles and panels are, and in which precision it factors is one
 * entry here, which the front doors and the loops ask. The public tile sizes are in
 * tessera/linalg.h. */
#ifndef TSR_LINALG_POLICY_H
#define TSR_LINALG_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tessera/linalg.h"
#include "tessera/tessera.h"

/** The Cholesky panel method of a call (policy.c): 1 for products with inverted diagonal tiles,
 *  0 for triangular solves. `opts` may be NULL (automatic). */
int tsr_panel_inverse(tessera_context_t *ctx, const tessera_potrf_options_t *opts);

/** The accelerators of the context's scope into *scope when one of them can hold `bytes` (its
 *  pool's capacity), and true; else the CPU workers' scope and false. */
bool tsr_fitting_accelerators(tessera_context_t *ctx, size_t bytes, tessera_scope_t *scope);

/** Whether an LU factorization of A has its panels' tasks make L_kk⁻¹ for the updates to
 *  multiply by (a product, where a triangular solve runs far below gemm's rate on GPUs): on
 *  one process; not over several, where each step's inverse would be one more tile travelling
 *  to every process beside the panel and its pivots, and the updates there solve instead. */
bool tsr_lu_inverts(const tessera_matrix_t *A);

/* Distributed layouts (front/matrix_dist.c). */

/** Seconds of a factorization's trailing updates over `procs` processes when its tile (i, j)
 *  (of mt x nt; a matrix in column panels has mt = 1) belongs to process owner[i + j * mt] (-1:
 *  no tile): at step k (of `steps`) each tile still updated (min(i, j) > k; a panel j > k) costs
 *  scale[k] (NULL: 1) updates of `unit` seconds on its process, and a step lasts as long as its
 *  busiest process's updates (the steps' look-ahead overlaps the rest). */
double tsr_layout_seconds(const int *owner, int64_t mt, int64_t nt, int procs, int64_t steps,
                          const double *scale, double unit);
/** Whether moving a matrix onto tessera's layout pays: the seconds of updates the balance saves
 *  against the seconds of the move. */
bool tsr_fit_pays(double saved, double moving);

/* The eigensolver (front/eig.c, loops/eig_stages.c, loops/stedc.c). */

/** Whether syevd (on one process, its vectors here) runs in one stage on one device: the
 *  context's eig_method (tessera_eig_method_t), and for COST the method measured faster at n's
 *  octave, dtype and job in the context's history (tsr_eig_measured), once each has been
 *  measured there beyond its first call (a trial, kept apart); until then the methods take
 *  turns, the one stage first. *where
 * receives the one stage's device: an accelerator of the scope whose pool holds A and cuSOLVER's
 * workspace (work_bytes of it into *work_bytes), else the CPU workers (*work_bytes 0). */
bool tsr_eig_one_stage(tessera_context_t *ctx, tessera_job_t job, tessera_dtype_t dt, int64_t n,
                       tessera_scope_t *where, size_t *work_bytes);
/** Records a syevd call's seconds in the context's history: one stage on `where` or two stages
 *  on the scope in force. */
void tsr_eig_measured(tessera_context_t *ctx, bool one, tessera_scope_t where, tessera_job_t job,
                      tessera_dtype_t dt, int64_t n, double seconds);
/** tsr_eig_one_stage and tsr_eig_measured for k of the n eigenpairs (syevdx's range; k = n: the
 *  whole solve's): a range has its own history, keyed by k's octave too, whose seconds the
 *  methods' choice for ranges reads. */
bool tsr_eig_one_stage_range(tessera_context_t *ctx, tessera_job_t job, tessera_dtype_t dt,
                             int64_t n, int64_t k, tessera_scope_t *where, size_t *work_bytes);
void tsr_eig_measured_range(tessera_context_t *ctx, bool one, tessera_scope_t where,
                            tessera_job_t job, tessera_dtype_t dt, int64_t n, int64_t k,
                            double seconds);

/** Whether tessera_gesvd (`polar`: tessera_gepolar, whose job says whether H is wanted) of an
 *  m x n A runs through LAPACK's gesdd on the CPU cores rather than by QDWH: the context's
 *  svd_method, else (cost) on a scope of CPUs alone the method measured faster at the shape's
 *  octaves, dtype and job (tsr_svd_measured; they take turns until each has a mean beyond a
 *  first, trial call), and with accelerators in the scope never. */
bool tsr_svd_lapack(tessera_context_t *ctx, bool polar, tessera_job_t job, tessera_dtype_t dt,
                    int64_t m, int64_t n);
/** Records a gesvd (`polar`: gepolar) call's seconds for its method (on a scope of CPUs alone). */
void tsr_svd_measured(tessera_context_t *ctx, bool polar, bool lapack, tessera_job_t job,
                      tessera_dtype_t dt, int64_t m, int64_t n, double seconds);

/** A new m x n matrix of A's context, dtype and tile width for a routine's intermediate results:
 *  A's tiles (`panels`: column panels, tiles spanning the rows), on A's grid (a fitted one for a
 *  distributed view; panels over a 1 x P grid) where A is distributed, else workspace tiles of
 *  this process (tsr_matrix_create_workspace). Free with tsr_matrix_drop. */
int tsr_matrix_like(const tessera_matrix_t *A, int64_t m, int64_t n, bool panels,
                    tessera_matrix_t **out);

/** Where the polar decomposition of an m x n A runs (its five iteration matrices beside A,
 *  spread over the accelerators): the accelerators of the context's scope into *scope and true
 *  where one of them holds its share, else the CPU workers' scope and false. */
bool tsr_polar_gpu(tessera_context_t *ctx, tessera_dtype_t dt, int64_t m, int64_t n,
                   tessera_scope_t *scope);

/** Whether syevd's stages take their GPU forms on ctx: an accelerator of the context's scope
 *  holds the largest stage's data; *scope receives the accelerators' scope, else the CPUs'. */
bool tsr_eig_gpu(tessera_context_t *ctx, tessera_job_t job, tessera_dtype_t dt, int64_t n,
                 tessera_scope_t *scope);
/** The band width (and tile) of syevd's first stage for `job` in the GPU forms (`gpu`, as
 *  tsr_eig_gpu says) or the CPU forms: tessera_tile_for_eig's, from that answer. */
int tsr_eig_band(const tessera_context_t *ctx, tessera_job_t job, bool gpu, int64_t n);
/** The tile of the band reduction of an n x n matrix to a band of kd subdiagonals, in its GPU
 *  forms (`gpu`) or its CPU forms. */
int64_t tsr_eig_band_tile(bool gpu, int64_t n, int kd);
/** Whether the band reduction over processes runs on tiles dealt over them (else all on process
 *  0's devices): on the CPU workers of every process in the CPU forms; in the GPU forms on the
 *  root's accelerator, where a step's products need every tile of V and W on every process and
 *  their transfers outlast the step's gemms (docs/benchmarks.md). */
bool tsr_eig_band_dealt(bool gpu);
/** Columns of E (n x n) per task of the back-transformations, in the GPU forms or on `workers`
 *  CPU workers. */
int64_t tsr_eig_panel_columns(bool gpu, int workers, int64_t n);
/** Steps per task of the bulge chasing (loops/hb2st.c) for a band of order n and bandwidth kd on
 *  `workers` CPU workers: tasks of tens of microseconds, sweeps cut into enough of them to
 *  overlap; at least 2. */
int tsr_hb2st_group(int n, int kd, int workers);
/** How T's eigenproblem of order n is solved: the rows of the leaves of the divide and conquer
 *  as tasks (loops/stedc.c: with vectors tsr_stedc_dc, without tsr_stedc_values), or 0 for
 *  LAPACK's stedc / sterf on the calling thread; in the GPU forms (`gpu`) or not, on `workers`
 *  CPU workers. */
int64_t tsr_eig_stedc_leaf(tessera_job_t job, bool gpu, int workers, int64_t n);

/** Where the divide and conquer's merges of order n run their tasks (with `vectors` those on Q,
 *  without them the roots and the kept rows' products): the scope's accelerators into *scope and
 *  true, else the CPU workers' scope and false. */
bool tsr_stedc_merges_scope(tessera_context_t *ctx, bool vectors, int64_t n,
                            tessera_scope_t *scope);

/** With vectors on accelerators (`scope`, tsr_stedc_merges_scope's), Q's rows in parts, one per
 *  accelerator: the most parts, a power of two up to `most`, for which that many accelerators of
 *  the scope each hold a part of Q (n / parts of its rows) and a merge's workspace on those
 *  rows; their scopes (one accelerator each) into part[]. Returns the count, 1 where one part
 *  (Q whole, on one device) is all there is. */
int tsr_stedc_parts(tessera_context_t *ctx, tessera_scope_t scope, int64_t n, int most,
                    tessera_scope_t *part);

/* The mixed-precision solves (front/mixed.c, loops/refine.c). */

/** The factor precision o asks of a solve (Cholesky, or LU with `lu`) of order n and dtype dt on
 *  ctx's devices, TESSERA_FACTOR_AUTO resolved. */
tessera_factor_t tsr_mixed_precision(tessera_context_t *ctx, tessera_dtype_t dt, bool lu, int64_t n,
                                     const tessera_mixed_options_t *o);
/** The product arithmetic (TSR_MATH_*) of factor precision f's tasks (an LU with `lu`); 0: the
 *  factor's dtype's own. */
int tsr_mixed_math(tessera_factor_t f, bool lu);
/** Whether a mixed-precision solve's tasks run on ctx's accelerators (its scope narrowed to
 *  them and the caller's array pinned). */
bool tsr_mixed_on_accelerators(tessera_context_t *ctx);
/** Whether the low-precision factor of an n x n A (`les` bytes an element) in precision f is one
 *  tile, on ctx's current scope: a Cholesky factor (not `lu`) on tensor cores of the one
 *  accelerator that holds it, A on this process alone (not `distributed`). */
bool tsr_mixed_one_tile(tessera_context_t *ctx, tessera_factor_t f, bool lu, bool distributed,
                        int64_t n, size_t les);

#endif
