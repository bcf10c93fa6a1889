/* tessera — the context: workers, devices, scheduler and every piece of mutable state.
 *
 * A context is created from a configuration. tessera_config_init() fills in the defaults;
 * fields left at their "auto" value (negative numbers, NULL strings) are then taken from the
 * environment when tessera_init() runs, else from the built-in default. Every TESSERA_* variable
 * is a row of one table (tessera_setting(): name, what it accepts, default, meaning), parsed
 * strictly once when a context is made: a value the row does not accept fails tessera_init with
 * TESSERA_ERR_ENV and a sentence naming the variable. `tessera info` prints the table with the
 * values in force. Explicit values in the configuration win over the environment.
 *
 * Thread safety: contexts are independent of each other; several may live at once and be
 * used from different threads (the process-wide settings they touch, OpenBLAS's thread count,
 * are counted across them). Within one context, task insertion and the calls that insert or
 * release (handles, matrices, tile and LAPACK-style routines, scopes, waits) come from one
 * thread at a time; calls documented as thread safe may come from any thread.
 */
#ifndef TESSERA_CONTEXT_H
#define TESSERA_CONTEXT_H

#include "tessera/comm.h"
#include "tessera/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most compute queues (streams) a GPU worker runs its tasks on. */
#define TESSERA_MAX_GPU_QUEUES 4
/** Most tasks a GPU worker keeps in flight (tessera_config_t.gpu_flights). */
#define TESSERA_MAX_GPU_FLIGHTS 8

/** Opaque context. */
typedef struct tessera_context tessera_context_t;

/** Scheduling policy. */
typedef enum {
  TESSERA_SCHED_AUTO = -1, /**< take TESSERA_SCHED, else COST */
  TESSERA_SCHED_COST = 0,  /**< earliest estimated finish: worker load + transfers + kernel time */
  TESSERA_SCHED_LOCALITY = 1, /**< place on the worker holding the most data; idle workers steal */
} tessera_sched_policy_t;

/** How the tiles of distributed matrices travel between processes. */
typedef enum {
  TESSERA_TRANSFERS_AUTO = -1,  /**< take TESSERA_DIST_TRANSFERS, else BEST */
  TESSERA_TRANSFERS_BEST = 0,   /**< GPU to GPU (NCCL) where every process's communicator spans
                                     GPUs of its context, else through host memory (MPI) */
  TESSERA_TRANSFERS_DEVICE = 1, /**< GPU to GPU only: the first distributed matrix fails where
                                     a process cannot */
  TESSERA_TRANSFERS_HOST = 2,   /**< through host memory over MPI */
} tessera_transfers_t;

/** The layout distributed routines run on where a caller lets tessera choose
 *  (tessera_matrix_fit with TESSERA_FIT_AUTO or _AUTO_BACK; the JAX binding across processes). */
typedef enum {
  TESSERA_LAYOUTS_AUTO = -1,   /**< take TESSERA_LAYOUT, else COST */
  TESSERA_LAYOUTS_COST = 0,    /**< tessera's own where the cost model finds that the move pays */
  TESSERA_LAYOUTS_TESSERA = 1, /**< tessera's own always */
  TESSERA_LAYOUTS_GIVEN = 2,   /**< the caller's: no copy */
} tessera_layouts_t;

/** The Hermitian eigensolver's method (tessera_syevd, tessera_heevd on one process). */
typedef enum {
  TESSERA_EIG_AUTO = -1, /**< take TESSERA_EIG_METHOD, else COST */
  TESSERA_EIG_COST = 0,  /**< the method measured faster at the order's octave, dtype and job
                              (the two take turns until each has been measured beyond a
                              first, trial call) */
  TESSERA_EIG_ONE = 1,   /**< one stage on one device: LAPACK's or cuSOLVER's syevd on the whole
                              matrix (a GPU that holds it, else the CPU cores) */
  TESSERA_EIG_TWO = 2,   /**< two stages over the context's devices: band reduction by tile
                              tasks, bulge chasing, divide and conquer, back-transformations */
} tessera_eig_method_t;

/** The singular value decomposition's and the polar decomposition's method (tessera_gesvd,
 *  tessera_gepolar on one process). */
typedef enum {
  TESSERA_SVD_AUTO = -1,  /**< take TESSERA_SVD_METHOD, else COST */
  TESSERA_SVD_COST = 0,   /**< on the CPU cores, the method measured faster at the shape's
                               octaves, dtype and job (the two take turns until each has been
                               measured beyond a first, trial call); with accelerators, QDWH */
  TESSERA_SVD_LAPACK = 1, /**< LAPACK's gesdd on the whole matrix on the CPU cores (the polar
                               decomposition from it: U_p = W Vᴴ, H = V Σ Vᴴ) */
  TESSERA_SVD_QDWH = 2,   /**< QDWH over the context's devices (the SVD: the eigensolver of H
                               after it) */
} tessera_svd_method_t;

/** Configuration of a context. Initialise with tessera_config_init(). */
typedef struct {
  int cpu_workers;              /**< CPU worker threads, 0..512; -1 = auto */
  int gpus;                     /**< GPUs to use; -1 = auto (all) */
  tessera_sched_policy_t sched; /**< scheduling policy */
  int tile_size;                /**< tile size of LAPACK-style calls; -1 = auto */
  int bind_workers;             /**< pin workers to cores: 1 yes, 0 no, -1 = auto */
  const char *trace_file;       /**< Chrome trace written at finalize; NULL = auto */
  const char *perfmodel_file;   /**< kernel-time history; NULL = auto, "none" = disabled */
  int copy_queue;               /**< GPU workers copy inputs on a queue of their own, ahead of
                                     the kernels: 1 yes, 0 on the kernel's queue, -1 = auto (1) */
  int gpu_queues;               /**< compute queues per GPU worker, 1..TESSERA_MAX_GPU_QUEUES;
                                     -1 = auto (TESSERA_MAX_GPU_QUEUES) */
  int gpu_flights;              /**< tasks each GPU worker keeps in flight besides the urgent
                                     lane's, 2..TESSERA_MAX_GPU_FLIGHTS; -1 = auto
                                     (TESSERA_GPU_FLIGHTS, else TESSERA_MAX_GPU_FLIGHTS) */
  int64_t gpu_mem_limit;        /**< bytes of each GPU's memory pool, at most; -1 = auto
                                     (TESSERA_GPU_MEM_LIMIT, else the free memory less a
                                     reserve for library workspaces) */
  int max_submitted;            /**< most tasks inserted and not finished: tessera_task_insert
                                     blocks at this bound until the count falls to nine tenths
                                     of it (a worker inserting never blocks); -1 = auto
                                     (TESSERA_MAX_SUBMITTED, else TESSERA_DEFAULT_MAX_SUBMITTED) */
  int trsm_inverse;             /**< Cholesky panel method of calls that do not choose
                                     (tessera_potrf_options_t): 1 multiply by inverted diagonal
                                     tiles, 0 solve with them; -1 = auto (TESSERA_TRSM_INVERSE,
                                     else 1 when the call's scope holds GPUs) */
  double comm_timeout_s;        /**< seconds a distributed context's communicator waits for the
                                     other processes (tessera_comm_config_t.timeout_s); -1 =
                                     auto (TESSERA_COMM_TIMEOUT, else 30) */
  tessera_transfers_t dist_transfers; /**< how tiles of distributed matrices travel */
  tessera_layouts_t dist_layout;      /**< which layout distributed routines run on */
  tessera_eig_method_t eig_method;    /**< the eigensolver's method */
  tessera_svd_method_t svd_method;    /**< the SVD's and the polar decomposition's method */
  /* A context over processes. Its tessera_init and tessera_finalize are collective calls over
   * the processes of `mpi_comm`: tessera_init makes a communicator (tessera/comm.h) over them
   * whose GPUs are the context's (tiles then travel between processes over NCCL), starting MPI
   * when the program has not (tessera_finalize then ends it). The LAPACK-style calls
   * (tessera/linalg.h) on such a context are collective too: every process makes them alike,
   * the arrays are read and written on process 0 only (the others may pass NULL), the matrix is
   * dealt over the grid, the routine runs distributed, and every process returns the same
   * status. tessera_context_comm() and tessera_context_grid() (tessera/distribution.h) give
   * the communicator and grid for distributed matrices of one's own. Each process should see
   * GPUs of its own (CUDA_VISIBLE_DEVICES, or TESSERA_GPUS with one process per node). */
  int distributed;      /**< 1: the context spans the processes of `mpi_comm`; 0: this process
                             alone; -1 = auto: 1 when mpi_comm or comm_store is given or
                             TESSERA_GRID is set */
  const void *mpi_comm; /**< address of the MPI_Comm a distributed context spans (tessera works
                             on a duplicate); NULL: MPI_COMM_WORLD */
  const tessera_comm_store_t *comm_store; /**< the processes of a distributed context met
                                              through this key-value store (over Gloo, no MPI:
                                              tessera/comm.h), which must outlive the context;
                                              implies distributed (unless 0); NULL: MPI */
  int grid_p, grid_q; /**< its P x Q process grid, P * Q = the number of processes (process r
                           at row r / Q, column r mod Q); -1 = auto: TESSERA_GRID's "PxQ",
                           else the squarest (P <= Q, P the largest divisor up to the square
                           root). Both set or both auto. */
} tessera_config_t;

/** Default bound on tasks inserted and not finished (tessera_config_t.max_submitted): a task
 *  takes a few hundred bytes, so the bound keeps a flow of any length within ~20 MB while
 *  leaving the scheduler tens of thousands of tasks to look ahead into. */
#define TESSERA_DEFAULT_MAX_SUBMITTED 50000

/** Fills `cfg` with "auto" values. Thread safe. */
TESSERA_API void tessera_config_init(tessera_config_t *cfg);

/** One TESSERA_* variable of the configuration table. */
typedef struct {
  const char *name;     /**< "TESSERA_GPUS" */
  const char *accepts;  /**< the values it takes, in words ("an integer from 0 to 16") */
  const char *fallback; /**< what holds while it is unset, in words */
  const char *doc;      /**< what it sets, one line */
  const char *reader;   /**< who reads it: "tessera_init", "tessera_comm_create" or
                             "tessera.jax" (the JAX binding) */
} tessera_setting_t;

/** Number of rows of the configuration table. Thread safe. */
TESSERA_API int tessera_setting_count(void);

/** Row i of the configuration table, 0 <= i < tessera_setting_count(); NULL otherwise. The
 *  rows are static. Thread safe. */
TESSERA_API const tessera_setting_t *tessera_setting(int i);

/** Fills the fields of `cfg` still at their "auto" value from the TESSERA_* variables that set
 *  them, as tessera_init does (fields no variable sets stay "auto"; path fields point into the
 *  environment). For a program that wants to know what tessera_init will be given (the CLI, the
 *  JAX binding).
 *  @return 0; -1 for a NULL cfg; TESSERA_ERR_ENV for a value its row does not accept, with a
 *          sentence naming the variable in `msg` (at most `len` bytes; may be NULL). */
TESSERA_API int tessera_config_from_env(tessera_config_t *cfg, char *msg, size_t len);

/** The value of the numeric variable `name` (a row that takes an integer, 0 or 1, a size in
 *  bytes or seconds): the environment's when set, else the row's default (NAN where the default
 *  depends on the context). For the readers outside tessera_init (the JAX binding's timeout).
 *  @return 0; -1 for a name not in the table or not numeric, or a NULL value; TESSERA_ERR_ENV
 *          for a malformed value, with a sentence in `msg`. */
TESSERA_API int tessera_setting_number(const char *name, double *value, char *msg, size_t len);

/** Writes the text of row i's value in force into buf (at most len bytes): for a row that
 *  fills a field of `cfg` (tessera_config(ctx) of a context: the values it runs with), that
 *  field; for the others, or with a NULL cfg, the environment's text, else the default in
 *  parentheses. 0, or -1 for a bad row or buffer. */
TESSERA_API int tessera_setting_show(const tessera_config_t *cfg, int i, char *buf, size_t len);

/** Creates a context: resolves the configuration against the environment, discovers
 *  devices, starts workers; for a distributed context (tessera_config_t.distributed), a
 *  collective call that also makes its communicator over the processes, and where cpu_workers
 *  is "auto" shares the cores among the processes that run on them (one host, the same CPU
 *  affinity).
 *  @param ctx  receives the context
 *  @param cfg  configuration, or NULL for all defaults
 *  @return 0, -1 for a NULL `ctx`, -2 for a configuration that cannot work (an unknown
 *          policy, a numeric field outside its variable's range such as cpu_workers above 512
 *          or gpu_queues above TESSERA_MAX_GPU_QUEUES, gpu_mem_limit or max_submitted 0, no
 *          worker at all, a grid that is not the number of processes or differs across them),
 *          TESSERA_ERR_ENV for a malformed TESSERA_* variable, TESSERA_ERR_NOMEM,
 *          TESSERA_ERR_BACKEND, and for a distributed context what tessera_comm_create returns
 *          (TESSERA_ERR_UNSUPPORTED in a build without MPI), or TESSERA_ERR_UNSUPPORTED where
 *          MPI runs below MPI_THREAD_MULTIPLE (a program that called MPI_Init itself). A
 *          message saying why is printed on stderr, since no context exists to hold it.
 *  Thread safe; each context is independent. */
TESSERA_API int tessera_init(tessera_context_t **ctx, const tessera_config_t *cfg);

/** Waits for every task, stops the workers, writes the trace and the kernel-time history,
 *  frees the context (a distributed context: a collective call, which destroys its
 *  communicator). Handles and matrices must have been released before.
 *  Returns the status of the last unwaited flow (see tessera_wait_all), else TESSERA_ERR_IO when
 *  the trace file cannot be written, else 0. NULL is a no-op. */
TESSERA_API int tessera_finalize(tessera_context_t *ctx);

/** The detailed message of the last failing call on `ctx` ("" if none). The string is owned
 *  by the context and valid until the next failing call. */
TESSERA_API const char *tessera_last_error(const tessera_context_t *ctx);

/** The configuration in force (environment and defaults resolved). */
TESSERA_API const tessera_config_t *tessera_config(const tessera_context_t *ctx);

/** Number of worker threads (CPU and GPU) of the context. */
TESSERA_API int tessera_worker_count(const tessera_context_t *ctx);

#ifdef __cplusplus
}
#endif
#endif
