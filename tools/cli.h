/* tessera CLI — options, results and the subcommands shared between the tools/ files. */
#ifndef TESSERA_TOOLS_CLI_H
#define TESSERA_TOOLS_CLI_H

#include <stdint.h>

#include <tessera/tessera.h>

#include "npy.h"
#include "progress.h"

/** Most sizes one --n list may hold. */
#define CLI_MAX_SIZES 32

/** Exit codes. */
enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2 };

/** Subcommands; the routines double as what `bench` and `demo` run. */
typedef enum {
  CMD_INFO,
  CMD_POTRF,
  CMD_POTRS,
  CMD_POSV,
  CMD_GETRF,
  CMD_GESV,
  CMD_GEQRF,
  CMD_GELS,
  CMD_SYEVD,
  CMD_GEPOLAR,
  CMD_GESVD,
  CMD_BENCH,
  CMD_DEMO,
  CMD_GEN,
  CMD_TRACE,
  CMD_COUNT
} cli_cmd_t;

/** Parsed command line. */
typedef struct {
  cli_cmd_t cmd;
  cli_cmd_t routine; /**< routine run (potrf, potrs, posv, getrf, gesv, geqrf, gels, syevd,
                          gepolar or gesvd) */
  int64_t m;         /**< geqrf, gels, gepolar, gesvd: rows of A (-1: --n's, a square matrix) */
  int64_t sizes[CLI_MAX_SIZES];
  int nsizes; /**< 0: the subcommand's default */
  int nrhs;   /**< -1: the subcommand's default */
  tessera_dtype_t dtype;
  int dtype_set; /**< --dtype was given */
  int tile;      /**< -1: auto */
  tessera_uplo_t uplo;
  int uplo_set;    /**< --uplo was given */
  int values_only; /**< syevd, gesvd: --values-only, the values only (job N) */
  int64_t il, iu;  /**< syevd: --range IL:IU, eigenvalues il .. iu (1-based); il 0: all */
  int full;        /**< gesvd: --full, every vector (U m x m, Vᴴ n x n; job ALL_VECTORS) */
  int mixed;       /**< posv: --mixed, the factor's precision (tessera_factor_t); -1: not asked */
  double cond;     /**< bench posv|gesv --mixed: A of this condition number (gen_cond); 0: the
                        generated matrix of the plain solves */
  const char *input, *rhs, *output; /**< trace: input is the trace file, output the SVG */
  int reps;
  int workers, gpus; /**< -1: auto */
  int require_gpus;  /**< fewer GPUs than --gpus is an error, not a warning */
  tessera_sched_policy_t sched;
  const char *trace;
  int json;
  int width;    /**< trace: SVG width in pixels */
  int resident; /**< bench: 1 also times tessera_tile_potrf on a descriptor made once, 2 only it */
  int no_baseline;    /**< bench: skip the baselines */
  int no_mg;          /**< bench on GPUs: cusolverDn alone */
  int out_of_core;    /**< bench: one triangle-only descriptor filled by tasks, no baseline */
  int grid_p, grid_q; /**< --grid PxQ: distributed over the processes of MPI_COMM_WORLD; 0: not;
                           -1: on TESSERA_GRID's grid */
} cli_opts_t;

/** One result line. */
typedef struct {
  const char *routine;
  tessera_dtype_t dtype;
  tessera_uplo_t uplo;
  int uplo_set;       /**< --uplo was given */
  int64_t m, n, nrhs; /**< m: rows of a QR's m x n matrix (0 for the square routines) */
  int tile, devices, workers;
  double seconds, gflops, residual;
  double orthogonality; /**< geqrf: ‖I - Qᴴ Q‖_F / (m eps); syevd: ‖I - Vᴴ V‖_F / (n eps);
                             NaN for the others (and syevd --values-only) */
  char job;             /**< syevd: 'V' (eigenvectors too) or 'N' (values only); 0 otherwise */
  int64_t il, iu;       /**< syevd --range: the eigenvalues' indices (1-based); il 0: all */
  const char *api; /**< bench: "lapack" (host array) or "tile" (resident descriptor); or NULL */
  int has_baseline, has_baseline2;
  const char *baseline, *baseline2;
  double baseline_seconds, baseline_gflops, baseline2_seconds, baseline2_gflops;
  int baseline_tile;  /**< tile size of the baseline (cuSolverMg), 0 when none */
  const char *home;   /**< bench --out-of-core: where the tiles live ("gpus", "host", "mixed") */
  const char *factor; /**< --mixed: the precision A was factored in (its dtype's name); or NULL */
  int iterations;     /**< --mixed: the refinement's steps (negative: the fallback's code) */
} cli_result_t;

/** Sets the thread count of the BLAS library where it can be set (the LAPACKE baselines). */
void cli_blas_threads(int threads);

/** Name of a subcommand or routine. */
const char *cli_cmd_name(cli_cmd_t cmd);

/** The value of --mixed that asks the factor precision `mixed` (a tessera_factor_t): "auto",
 *  "s", "tf32", "bf16" or "h"; "" for TESSERA_FACTOR_WORKING (no value asks it), NULL beyond. */
const char *cli_mixed_name(int mixed);

/** The name of the precision a mixed-precision solve of a `dtype` matrix factored in (`f`, as
 *  tessera_mixed_result_t reports it): "tf32", "bf16", "f16", or a dtype's name. */
const char *cli_factor_name(tessera_dtype_t dtype, tessera_factor_t f);

/** Creates the context from the options (workers, gpus, sched, tile, trace). Prints the error
 *  and returns CLI_FAILED on failure. With --gpus G and fewer GPUs found, warns that it runs on
 *  what exists, or fails with --require-gpus. */
int cli_context(const cli_opts_t *o, tessera_context_t **ctx);

/** cli_context for a context created anew in the same command (the GPUs were checked already). */
int cli_context_again(const cli_opts_t *o, tessera_context_t **ctx);

/** Finalizes the context; returns `rc`, or CLI_FAILED if finalization fails (message printed). */
int cli_finish(tessera_context_t *ctx, int rc);

/** Ends the progress phase, prints why `status` (returned by `what`) failed and returns
 *  CLI_FAILED. */
int cli_report(const tessera_context_t *ctx, cli_progress_t *prog, const char *what, int status);

/** Allocates a rows x cols array of `dtype`; prints an error and returns NULL on failure. */
void *cli_alloc(tessera_dtype_t dtype, int64_t rows, int64_t cols);

/** Checks, before anything is computed, that `path` (given with option `flag`) can be written:
 *  creates it (and removes it again) or opens the existing file without truncating it. Prints a
 *  sentence naming the path and the reason and returns CLI_FAILED when it cannot. */
int cli_check_writable(const char *flag, const char *path);

/** Where a second array of `--output FILE` goes: FILE without its .npy suffix, then `suffix`
 *  (getrf's pivots ".piv.npy", geqrf's tau ".tau.npy", syevd's eigenvectors ".vectors.npy"). */
const char *cli_beside_path(const char *output, const char *suffix, char *buf, size_t len);

/** Whether this process holds the arrays: every process of a context of its own, process 0 of
 *  one over the processes of an mpirun (--grid), where the others pass NULL (or stay quiet). */
int cli_holds(const tessera_context_t *ctx);

/** The thread count of a CPU baseline (LAPACKE): --workers, else the context's CPU workers; at
 *  least 1. */
int cli_baseline_threads(const cli_opts_t *o, const tessera_context_t *ctx);

/** What cli_read_operand asks of an operand's rows besides a count: a square matrix, or any
 *  shape (a QR's m x n A). */
enum { CLI_SQUARE = -1, CLI_ANY_SHAPE = -2 };

/** Reads the .npy operand `path`: `rows` rows (CLI_SQUARE: a square matrix; CLI_ANY_SHAPE: any)
 *  of dtype `dtype` (any when `any_dtype`). Prints what is wrong, naming the file, and returns
 *  CLI_FAILED (arr's data freed) when it cannot be read or does not fit; CLI_OK otherwise. */
int cli_read_operand(const char *path, int64_t rows, tessera_dtype_t dtype, int any_dtype,
                     npy_array_t *arr);

/** Refuses, before anything is allocated, a run of potrf .. gesv or syevd on one process whose
 *  arrays do not fit in memory together (tools/footprint.h): the order and dtype come from --n
 *  and --dtype or the header of --input, the right-hand sides from --nrhs or the header of
 *  --rhs (a file that cannot be read is reported later, when it is read). Returns CLI_OK, or
 *  CLI_FAILED with the footprint and the memory there is printed. ctx: the context syevd runs
 *  on (NULL for the other commands). */
int cli_check_memory(const cli_opts_t *o, tessera_context_t *ctx);

/** Bytes of physical memory of this machine (0 when unknown). */
double cli_host_memory(void);

/** Whether `routine` is an LU routine (getrf, gesv): a general matrix, pivots. */
static inline int cli_is_lu(cli_cmd_t routine) {
  return routine == CMD_GETRF || routine == CMD_GESV;
}

/** Whether `routine` is a QR routine (geqrf, gels): an m x n matrix. */
static inline int cli_is_qr(cli_cmd_t routine) {
  return routine == CMD_GEQRF || routine == CMD_GELS;
}

/** Whether `routine` is one of the singular value family (gepolar, gesvd): an m x n matrix. */
static inline int cli_is_svd(cli_cmd_t routine) {
  return routine == CMD_GEPOLAR || routine == CMD_GESVD;
}

/** Whether `routine` only factors (potrf, getrf): no right-hand sides. */
static inline int cli_is_factor(cli_cmd_t routine) {
  return routine == CMD_POTRF || routine == CMD_GETRF;
}

/** Floating-point operations of `routine` on an n x n matrix with nrhs right-hand sides. */
double cli_flops(cli_cmd_t routine, tessera_dtype_t dtype, int64_t n, int64_t nrhs);

/** Fills the context-dependent fields of a result (tile, devices, workers). */
void cli_result_init(cli_result_t *r, const cli_opts_t *o, const tessera_context_t *ctx);

/** Prints the table header (nothing with --json), with columns for the baselines named
 *  `baseline` and `baseline2` where they are not NULL. */
void cli_print_header(const cli_opts_t *o, const char *baseline, const char *baseline2);

/** Prints one result as a table row or, with --json, one JSON object. */
void cli_print_result(const cli_opts_t *o, const cli_result_t *r);

/** Prints the devices of the context, one per line. */
void cli_print_devices(const tessera_context_t *ctx);

/** The subcommands; each returns an exit code. */
int cli_info(const cli_opts_t *o);
int cli_solve(const cli_opts_t *o);
/** geqrf and gels on one m x n matrix (tools/qr.c; with --grid or TESSERA_GRID the tile-level
 *  routine over the processes, tools/dist.c), and their bench against LAPACKE. */
int cli_qr(const cli_opts_t *o);
int cli_bench_qr(const cli_opts_t *o);
/** `tessera bench posv|gesv --mixed P` (bench_mixed.c). */
int cli_bench_mixed(const cli_opts_t *o);
/** `tessera syevd` (tools/eig.c): eigenvalues, and eigenvectors unless --values-only, of a
 *  generated or .npy Hermitian matrix, timed and checked. */
int cli_eig(const cli_opts_t *o);
/** What syevd computes for the options: TESSERA_VALUES with --values-only, else VECTORS. */
static inline tessera_job_t cli_eig_job(const cli_opts_t *o) {
  return o->values_only ? TESSERA_VALUES : o->full ? TESSERA_ALL_VECTORS : TESSERA_VECTORS;
}
/** The real dtype of `dtype`'s eigenvalues: f32 for f32 and c64, f64 for f64 and c128. */
tessera_dtype_t cli_real_dtype(tessera_dtype_t dtype);
/** Floating-point operations counted for syevd of order n: LAPACK's usual estimates, 4/3 n³
 *  without eigenvectors and 9 n³ with, four times that for complex dtypes. */
double cli_eig_flops(tessera_dtype_t dtype, int64_t n, tessera_job_t job);
/** Fills the n x n `a` with the generated Hermitian (real symmetric) matrix of syevd: the lower
 *  triangle gen_dense's (seed GEN_SEED_A), the upper its conjugate, the diagonal real. */
void cli_eig_generate(tessera_dtype_t dtype, int64_t n, void *a, int64_t lda);
/** tessera_syevd (real dtypes) or tessera_heevd (complex); with il > 0 tessera_syevdx /
 *  heevdx for eigenvalues il .. iu. */
int cli_eig_tessera(tessera_context_t *ctx, tessera_job_t job, tessera_uplo_t uplo,
                    tessera_dtype_t dtype, int64_t n, void *a, int64_t lda, int64_t il, int64_t iu,
                    void *w);
/** LAPACKE's ?syevd / ?heevd of the dtype, with the BLAS's current thread count; returns its
 *  info. */
int cli_eig_lapacke(tessera_job_t job, tessera_uplo_t uplo, tessera_dtype_t dtype, int64_t n,
                    void *a, int64_t lda, void *w);
/** The check of a syevd result on the full Hermitian n x n `a0`, into *res and *orth: `w` the k
 *  eigenvalues lo .. lo + k - 1 (all: 0 and n). VECTORS, `v` (ld lda) holding their
 *  eigenvectors: *res = ‖A V − V diag(w)‖_F / (‖A‖_F n eps) and *orth = ‖I − Vᴴ V‖_F / (n eps),
 *  by two gemms (tessera_gemm on `ctx`). VALUES: *res = max_i |w_i − wref_(lo+i)| / (‖A‖_F n
 *  eps), wref LAPACKE's n eigenvalues (job N) of A, computed here on a copy with `threads` BLAS
 *  threads when `wref` is NULL; *orth NaN. Returns CLI_OK, or CLI_FAILED with the reason printed
 *  (the progress phase ended). */
int cli_eig_check(tessera_context_t *ctx, tessera_job_t job, tessera_dtype_t dtype, int64_t n,
                  int64_t lo, int64_t k, const void *a0, int64_t lda, const void *v, const void *w,
                  const void *wref, int threads, cli_progress_t *prog, double *res, double *orth);
/** `tessera gepolar` and `tessera gesvd` (tools/svd.c): the polar decomposition, the singular
 *  values and vectors (--values-only: the values) of a generated or .npy m x n matrix, timed
 *  and checked; with --grid, the LAPACK-style call over the processes from process 0's arrays. */
int cli_svd(const cli_opts_t *o);
/** `tessera bench gepolar|gesvd` (tools/svd.c): the LAPACK-style call against cusolverDnXgesvdp
 *  on GPU 0 (with GPUs) or LAPACKE's ?gesdd with as many threads (without), per order. */
int cli_bench_svd(const cli_opts_t *o);
/** potrf .. gesv, geqrf and gels distributed over a --grid of processes (tools/dist.c): every
 *  process makes its tiles of the same problem, the routine runs on tile matrices dealt over the
 *  grid (LU, QR: column panels over every process), and process 0 prints the result with the
 *  residual of the whole result. */
int cli_solve_distributed(const cli_opts_t *o);
/** Runs cli_solve_distributed with --grid, or with TESSERA_GRID set in the environment (on its
 *  grid), else `local` (the command on this process alone). Returns an exit code. */
int cli_local_or_grid(const cli_opts_t *o, int (*local)(const cli_opts_t *));
int cli_demo(const cli_opts_t *o);
int cli_gen(const cli_opts_t *o);
int cli_bench(const cli_opts_t *o);
/** `tessera bench potrf --out-of-core` (bench_ooc.c): the matrix exists once, as the tiles of a
 *  triangle-only descriptor, generated in place and checked without a copy. */
int cli_bench_ooc(const cli_opts_t *o);
int cli_trace_svg(const cli_opts_t *o);

#endif
