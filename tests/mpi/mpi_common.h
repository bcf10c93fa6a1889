/* Helpers of the MPI tests of tessera_comm on host buffers (test_collectives.c,
 * test_comm_errors.c): the suite's communicator and this process in it, elements of every
 * comm type as two doubles with the values each process contributes and their reductions,
 * buffers followed by guard elements with their fills and checks, host queues, the group
 * setup and teardown, a context on the processes' devices for the distributed routines' tests,
 * and MPI's start and end in main. Header only.
 *
 * The including file defines _POSIX_C_SOURCE before its first system include and includes
 * cmocka first.
 */
#ifndef TESSERA_MPI_COMMON_H
#define TESSERA_MPI_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "../test_common.h"
#include <tessera/tessera.h>

static tessera_comm_t *g_comm; /* the suite's communicator (MPI_COMM_WORLD, host only) */
static int g_rank, g_size;     /* this process in it */
static int g_thread_multiple;  /* MPI runs with MPI_THREAD_MULTIPLE: host queues can be made */
static int g_queues_skipped;   /* a test was skipped for want of host queues */
static char g_what[200];       /* the call being checked, for failure messages */
/* The queue a test has open: closed by the test, or by drop_open() when the test fails half way */
static tessera_comm_queue_t *g_queue;

enum { GUARD = 3 }; /* elements after a buffer that must stay SENTINEL */

/* ---------------------------------------------------------------- elements */

/* One element as two doubles (im is 0 for real and integer types). */
typedef struct {
  double re, im;
} val_t;

static const val_t SENTINEL = {-99.0, -99.0}; /* what unwritten elements hold */

static inline int is_complex(tessera_comm_type_t t) {
  return t == TESSERA_COMM_C64 || t == TESSERA_COMM_C128;
}

/* Bytes of one element, by type (the enum's values are 0 .. 5). */
static inline size_t esize(tessera_comm_type_t t) {
  static const size_t sizes[] = {sizeof(float),      sizeof(double),  2 * sizeof(float),
                                 2 * sizeof(double), sizeof(int32_t), sizeof(int64_t)};
  return sizes[t];
}

/* Scalar k of buf; a complex element i is scalars 2i (real part) and 2i + 1 (imaginary). */
static inline void put_scalar(tessera_comm_type_t t, void *buf, size_t k, double x) {
  switch (t) {
  case TESSERA_COMM_F32:
  case TESSERA_COMM_C64:
    ((float *)buf)[k] = (float)x;
    break;
  case TESSERA_COMM_F64:
  case TESSERA_COMM_C128:
    ((double *)buf)[k] = x;
    break;
  case TESSERA_COMM_I32:
    ((int32_t *)buf)[k] = (int32_t)x;
    break;
  case TESSERA_COMM_I64:
    ((int64_t *)buf)[k] = (int64_t)x;
    break;
  }
}

static inline double get_scalar(tessera_comm_type_t t, const void *buf, size_t k) {
  switch (t) {
  case TESSERA_COMM_F32:
  case TESSERA_COMM_C64:
    return ((const float *)buf)[k];
  case TESSERA_COMM_F64:
  case TESSERA_COMM_C128:
    return ((const double *)buf)[k];
  case TESSERA_COMM_I32:
    return ((const int32_t *)buf)[k];
  case TESSERA_COMM_I64:
    return (double)((const int64_t *)buf)[k];
  }
  return 0.0;
}

/* Writes element i of buf (complex types as two floats or two doubles). */
static inline void put(tessera_comm_type_t t, void *buf, size_t i, val_t v) {
  if (!is_complex(t)) {
    put_scalar(t, buf, i, v.re);
    return;
  }
  put_scalar(t, buf, 2 * i, v.re);
  put_scalar(t, buf, 2 * i + 1, v.im);
}

/* Reads element i of buf. */
static inline val_t get(tessera_comm_type_t t, const void *buf, size_t i) {
  if (!is_complex(t)) return (val_t){get_scalar(t, buf, i), 0.0};
  return (val_t){get_scalar(t, buf, 2 * i), get_scalar(t, buf, 2 * i + 1)};
}

/* Element i of process r for SUM, MIN, MAX and the moving operations: integers in -5 .. 5 that
 * differ from process to process (so MIN and MAX pick different processes along the buffer),
 * with an imaginary part depending on both for complex types. Sums over 4 processes are exact. */
static inline val_t gen(tessera_comm_type_t t, int r, size_t i) {
  val_t v = {(double)((r * 5 + (int)(i % 11) * 3) % 11) - 5.0, 0.0};
  if (is_complex(t)) v.im = (double)(i % 5) - 2.0 - r;
  return v;
}

/* Element i of process r for PROD: 2, -1 or 1 (real), 1 - i, 1 or 1 + i (complex); products over
 * 4 processes stay small integers, exact even in f32. */
static inline val_t gen_prod(tessera_comm_type_t t, int r, size_t i) {
  int k = (int)((i + (size_t)r) % 3);
  val_t v = {k == 0 ? 2.0 : k == 1 ? -1.0 : 1.0, 0.0};
  if (is_complex(t)) v = (val_t){1.0, (double)k - 1.0};
  return v;
}

static inline val_t value(tessera_comm_type_t t, tessera_reduce_t op, int r, size_t i) {
  return op == TESSERA_PROD ? gen_prod(t, r, i) : gen(t, r, i);
}

static inline val_t combine(tessera_reduce_t op, val_t a, val_t b) {
  switch (op) {
  case TESSERA_SUM:
    return (val_t){a.re + b.re, a.im + b.im};
  case TESSERA_PROD:
    return (val_t){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  case TESSERA_MIN:
    return b.re < a.re ? b : a;
  case TESSERA_MAX:
    return b.re > a.re ? b : a;
  }
  return a;
}

/* op over every process of element i. */
static inline val_t reduced(tessera_comm_type_t t, tessera_reduce_t op, size_t i) {
  val_t v = value(t, op, 0, i);
  for (int r = 1; r < g_size; r++) v = combine(op, v, value(t, op, r, i));
  return v;
}

/* ---------------------------------------------------------------- buffers and checks */

/* Names the call being checked (in failure messages). */
static inline void what(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void what(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_what, sizeof g_what, fmt, ap);
  va_end(ap);
}

/* The detailed message of the last failing call on the suite's communicator. */
static inline const char *comm_error(void) {
  const char *e = tessera_comm_last_error(g_comm);
  return e ? e : "(NULL)";
}

/* n elements of type t holding SENTINEL, followed by GUARD more that must stay SENTINEL; NULL
 * when `null` (a count-0 call with NULL buffers). */
static inline void *new_buf(tessera_comm_type_t t, size_t n, int null) {
  if (null) return NULL;
  void *b = malloc((n + GUARD) * esize(t));
  assert_non_null(b);
  for (size_t i = 0; i < n + GUARD; i++) put(t, b, i, SENTINEL);
  return b;
}

/* Element j of buf = value(t, op, r, j), for j < n. */
static inline void fill(tessera_comm_type_t t, void *buf, size_t n, tessera_reduce_t op, int r) {
  for (size_t j = 0; j < n; j++) put(t, buf, j, value(t, op, r, j));
}

static inline void check_elem(tessera_comm_type_t t, const void *buf, size_t i, val_t want) {
  val_t got = get(t, buf, i);
  if (got.re != want.re || (is_complex(t) && got.im != want.im))
    fail_msg("%s: rank %d, element %zu = (%g, %g), expected (%g, %g)", g_what, g_rank, i, got.re,
             got.im, want.re, want.im);
}

/* The GUARD elements after the first n are still SENTINEL (nothing written past the end). */
static inline void check_guard(tessera_comm_type_t t, const void *buf, size_t n) {
  if (!buf) return;
  for (size_t g = 0; g < GUARD; g++) check_elem(t, buf, n + g, SENTINEL);
}

/* buf holds value(t, op, r, j) for j < n and is intact after (a send buffer left alone). */
static inline void check_filled(tessera_comm_type_t t, const void *buf, size_t n,
                                tessera_reduce_t op, int r) {
  for (size_t j = 0; j < n; j++) check_elem(t, buf, j, value(t, op, r, j));
  check_guard(t, buf, n);
}

/* ---------------------------------------------------------------- queues */

/* Skips the current test where MPI runs below MPI_THREAD_MULTIPLE (no host queues); the program
 * then reports itself skipped (mpi_finish), not passed. */
#define skip_without_queues()                                                                      \
  do {                                                                                             \
    if (!g_thread_multiple) {                                                                      \
      g_queues_skipped = 1;                                                                        \
      skip();                                                                                      \
    }                                                                                              \
  } while (0)

/* Mode 0: no queue (NULL); mode 1: a new host queue on g_comm, kept in g_queue until closed. */
static inline tessera_comm_queue_t *open_queue(int mode) {
  tessera_comm_queue_t *q = NULL;
  if (!mode) return NULL;
  int rc = tessera_comm_queue_create(g_comm, 0, NULL, &q);
  if (rc != 0 || !q) fail_msg("tessera_comm_queue_create = %d (%s)", rc, comm_error());
  return g_queue = q;
}

static inline void close_queue(tessera_comm_queue_t *q) {
  g_queue = NULL;
  if (q) assert_int_equal(tessera_comm_queue_destroy(q), 0);
}

/* The call (already made) returned rc; with a queue, waits for it. */
static inline void done(int rc, tessera_comm_queue_t *q) {
  if (rc != 0) fail_msg("%s: status %d (%s)", g_what, rc, comm_error());
  if (q && (rc = tessera_comm_queue_sync(q)) != 0)
    fail_msg("%s: tessera_comm_queue_sync = %d (%s)", g_what, rc, comm_error());
}

/* ---------------------------------------------------------------- setup */

static inline int group_setup(void **state) {
  (void)state;
  tessera_comm_config_t cfg = {.timeout_s = 20};
  int rc = tessera_comm_create(&cfg, &g_comm);
  if (rc != 0 || !g_comm) {
    fprintf(stderr, "tessera_comm_create = %d (%s)\n", rc, comm_error());
    return -1;
  }
  g_rank = tessera_comm_rank(g_comm);
  g_size = tessera_comm_size(g_comm);
  return 0;
}

/* After each test: the queue a failed test left open, so that the next tests and the teardown
 * still run. */
static inline int drop_open(void **state) {
  (void)state;
  tessera_comm_queue_destroy(g_queue);
  g_queue = NULL;
  return 0;
}

static inline int group_teardown(void **state) {
  (void)state;
  return tessera_comm_destroy(g_comm) == 0 ? 0 : -1;
}

/* A group whose tests share one CPU context per process: 2 workers, no GPU (g_ctx). */
static tessera_context_t *g_ctx;

static inline int cpu_group_setup(void **state) {
  if (group_setup(state)) return -1;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 2;
  cfg.gpus = 0;
  return tessera_init(&g_ctx, &cfg);
}

static inline int cpu_group_teardown(void **state) {
  tessera_finalize(g_ctx);
  return group_teardown(state);
}

/* ---------------------------------------------------------------- on devices */

/* A context on this process's devices (`workers` CPU workers beside them) and a communicator
 * over the processes and their GPUs, for a distributed test's cases on devices: simulated
 * devices (their tiles over MPI), or with TESSERA_TEST_GPUS=<GPUs of the machine> a GPU of each
 * local process's own (tiles over NCCL); GPUs every process sees move tiles through the host.
 * TESSERA_DIST_TRANSFERS is set to match. False, with nothing made, where a process has no
 * device (the caller skips). Closed by devices_close. */
static inline bool devices_open(int workers, tessera_context_t **ctx, tessera_comm_t **comm) {
  const char *env = getenv("TESSERA_TEST_GPUS");
  const bool own = env && atoi(env) >= g_size;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = workers;
  cfg.gpu_mem_limit = 256 << 20;
  if (own) cfg.gpus = 1;
  assert_int_equal(tessera_init(ctx, &cfg), 0);
  const int cuda = tessera_device_count(*ctx, TESSERA_DEVICE_CUDA);
  const int sim = tessera_device_count(*ctx, TESSERA_DEVICE_SIM);
  long lo = 0, mine = cuda + sim;
  assert_int_equal(
      tessera_comm_allreduce(g_comm, &mine, &lo, 1, TESSERA_COMM_I64, TESSERA_MIN, NULL), 0);
  if (lo == 0) {
    tessera_finalize(*ctx);
    *ctx = NULL;
    return false;
  }
  tessera_comm_config_t cc = {.timeout_s = 20, .ndevices = cuda > 0 && own};
  assert_int_equal(tessera_comm_create(&cc, comm), 0);
  if (sim > 0 || cc.ndevices > 0) setenv("TESSERA_DIST_TRANSFERS", "device", 1);
  return true;
}

static inline void devices_close(tessera_context_t *ctx, tessera_comm_t *comm) {
  unsetenv("TESSERA_DIST_TRANSFERS");
  assert_int_equal(tessera_finalize(ctx), 0);
  assert_int_equal(tessera_comm_destroy(comm), 0);
}

/** A context over the suite's processes for LAPACK-style calls (arrays on process 0): 2 CPU
 *  workers each, no GPU, tiles of `tile`. */
static inline tessera_context_t *lapack_context(int tile) {
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 2, cfg.gpus = 0, cfg.tile_size = tile, cfg.distributed = 1;
  tessera_context_t *ctx = NULL;
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  return ctx;
}

/** Runs `cases` (a test's tile-level cases: context, tile size, quick) on the processes' devices
 *  (devices_open, `workers` CPU workers each), the suite's communicator standing for theirs
 *  meanwhile; skips the test where no process has a device. */
static inline void on_devices(int workers, void (*cases)(tessera_context_t *, int64_t, bool),
                              int64_t nb) {
  tessera_context_t *ctx = NULL;
  tessera_comm_t *comm = NULL, *host_comm = g_comm;
  if (!devices_open(workers, &ctx, &comm)) skip();
  g_comm = comm;
  cases(ctx, nb, true);
  g_comm = host_comm;
  devices_close(ctx, comm);
}

/* ---------------------------------------------------------------- main */

/* With TESSERA_TEST_GPUS=<GPUs of the machine>, each local process sees one GPU of its own
 * (CUDA_VISIBLE_DEVICES by its local rank under Open MPI); called before CUDA starts. */
static inline void own_gpu(void) {
  const char *gpus = getenv("TESSERA_TEST_GPUS"), *local = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  if (gpus && local && atoi(gpus) > 0) {
    char only[16];
    snprintf(only, sizeof only, "%d", atoi(local) % atoi(gpus));
    setenv("CUDA_VISIBLE_DEVICES", only, 1);
  }
}

/* Initialises MPI (asking for MPI_THREAD_MULTIPLE, noting whether it is provided) and starts the
 * watchdog; nonzero when MPI does not start. */
static inline int mpi_start(int *argc, char ***argv) {
  int provided = MPI_THREAD_SINGLE;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) return 2;
  g_thread_multiple = provided >= MPI_THREAD_MULTIPLE;
  tt_watchdog(280); /* under ctest's 300 s: a hang ends with a message rather than a kill */
  return 0;
}

/* Finalises MPI after the group's run, which `failed` tests failed; the exit status: 1 when a test
 * failed, else TT_SKIPPED when a test was skipped for want of host queues, else 0. */
static inline int mpi_finish(int failed) {
  MPI_Finalize();
  return failed ? 1 : g_queues_skipped ? TT_SKIPPED : 0;
}

#endif /* TESSERA_MPI_COMMON_H */
