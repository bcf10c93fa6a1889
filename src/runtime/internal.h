/* Runtime internals shared between the files of src/runtime/. */
#ifndef TSR_RUNTIME_INTERNAL_H
#define TSR_RUNTIME_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "device/backend.h"
#include "runtime/error.h"
#include "runtime/pool.h"
#include "tessera/tessera.h"

#define TSR_MAX_NODES 17 /* host + 16 GPUs */
#define TSR_MAX_WORKERS 512
#define TSR_ERRMSG 256
#define TSR_CACHE_LINE 64

typedef struct tsr_task tsr_task_t;
typedef struct tsr_worker tsr_worker_t;
typedef struct tsr_perfmodel tsr_perfmodel_t;

/** The last history entry one thread looked up (saves the lookup for runs of equal tasks). */
typedef struct {
  const char *kernel;
  int kind;
  uint64_t size_key;
  void *entry;
} tsr_pm_cache_t;

/* ------------------------------------------------------------------ small locks */

typedef struct {
  atomic_flag f;
} tsr_spin_t;

#define TSR_SPIN_INIT                                                                              \
  { ATOMIC_FLAG_INIT }

static inline void tsr_spin_lock(tsr_spin_t *s) {
  while (atomic_flag_test_and_set_explicit(&s->f, memory_order_acquire)) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}
static inline void tsr_spin_unlock(tsr_spin_t *s) {
  atomic_flag_clear_explicit(&s->f, memory_order_release);
}

/** Monotonic seconds. */
double tsr_now(void);

/* ------------------------------------------------------------------ coherence */

typedef enum { TSR_INVALID = 0, TSR_SHARED = 1, TSR_OWNED = 2 } tsr_state_t;

/** The replica transitions one access needs, computed from the states alone.
 *  `src` is the node to copy from before the access (-1: no copy). `state` gets the states
 *  after the access. Returns 0, or -1 when no node holds a valid replica for a read. */
int tsr_coherence_plan(const uint8_t *state, int nnodes, int node, tessera_access_t mode, int *src,
                       uint8_t *after);

/* ------------------------------------------------------------------ data handles */

typedef struct {
  void *ptr;
  size_t ld;
  uint8_t state;
  uint8_t allocated; /* memory belongs to tessera (host allocator or a node's pool) */
  void *fill_event;  /* set while an asynchronous copy into this replica may be in flight */
  atomic_int pins;   /* tasks in flight using this replica (never evicted while > 0) */
  tessera_data_t *lru_prev, *lru_next; /* the node's least-recently-used list */
  bool in_lru;
} tsr_replica_t;

struct tessera_data {
  tessera_context_t *ctx;
  size_t rows, cols, elsize;
  int home;
  pthread_mutex_t lock; /* replica states */
  tsr_replica_t rep[TSR_MAX_NODES];
  /* Dependency tracking, touched by the inserting thread only. */
  tsr_task_t *last_writer;
  tsr_task_t **readers;
  int nreaders, capreaders;
  atomic_long pending; /* inserted tasks using this handle that have not finished */
};

/** Bytes of the handle's contents. */
static inline size_t tsr_data_bytes(const tessera_data_t *h) {
  return h->rows * h->cols * h->elsize;
}

/** Makes the handle valid on `node` for `mode` (copying if needed, allocating the replica).
 *  Returns the replica's pointer and leading dimension, or a status. */
int tsr_data_acquire(tessera_data_t *h, int node, tessera_access_t mode, void **ptr, size_t *ld);

/** Asynchronous variant for a worker of a device node: a copy is enqueued on `copy_queue` and
 *  `event` recorded after it (the replica's fill marker), and `queue` (where the task's kernel
 *  goes; it may be `copy_queue`) waits for it; later work on `queue` is ordered after copies
 *  still in flight into the replicas used. The replica is pinned (never evicted) until
 *  tsr_data_unpin, and so is the copy's source replica, whose node goes to `*pinned_src` (-1
 *  when nothing was copied). `start`, when not NULL, is recorded on `copy_queue` right before
 *  a copy (traces time copies between it and `event`). Returns 0, TESSERA_ERR_NOMEM when the
 *  node's pool is full of pinned replicas (retry after in-flight tasks finish), or a status. */
int tsr_data_acquire_async(tessera_data_t *h, tsr_worker_t *w, tessera_access_t mode, void *queue,
                           void *copy_queue, void *event, void *start, void **ptr, size_t *ld,
                           int *pinned_src);
/** Ends a task's use of the replica on `node`; clears `event` as the fill marker. */
void tsr_data_unpin(tessera_data_t *h, int node, void *event);

/** Allocates the replica on `node` if absent (device nodes: from the pool, evicting). */
int tsr_replica_alloc(tessera_context_t *ctx, tessera_data_t *h, int node);

/** Frees the replica on `node` (returning tessera's memory) and marks it Invalid. */
void tsr_replica_free(tessera_context_t *ctx, tessera_data_t *h, int node);

/** Whether `node` holds a valid replica. */
bool tsr_data_valid_on(tessera_data_t *h, int node);

/* ------------------------------------------------------------------ tasks */

struct tsr_task {
  const tessera_kernel_t *kernel;
  tessera_context_t *ctx;
  int ndata;
  tessera_data_t *data[TESSERA_MAX_TASK_DATA];
  uint8_t mode[TESSERA_MAX_TASK_DATA];
  int priority;
  tessera_scope_t scope;
  int tag[3];
  int ntag;
  uint64_t seq;
  atomic_int npred;
  atomic_int refs;
  tsr_spin_t lock; /* done, succ */
  bool done;
  int nsucc, capsucc;
  tsr_task_t **succ;
  tsr_task_t *succ_inline[4];
  double flops;
  uint64_t size_key;
  double predicted;      /* seconds the scheduler expects, counted in the worker's load */
  tsr_task_t *next_free; /* in the context's pool of finished tasks */
  _Alignas(16) unsigned char args[TESSERA_MAX_TASK_ARGS];
};

/** Whether worker `w` may run task `t` (implementation present and scope allows). */
bool tsr_worker_can_run(const tsr_worker_t *w, const tsr_task_t *t);

/** A chain of finished tasks kept by one thread for reuse. */
typedef struct {
  tsr_task_t *head, *tail;
  int n;
} tsr_task_cache_t;

/** Drops one reference to `t`; with the last, keeps it for reuse in `cache` (the calling
 *  thread's own: a worker's, or the context's insert_cache on the inserting thread), or in the
 *  context's pool when `cache` is NULL. */
void tsr_task_unref(tsr_task_t *t, tsr_task_cache_t *cache);
/** Frees the pool of finished tasks (at finalize). */
void tsr_task_pool_free(tessera_context_t *ctx);

/** Called when `t` has finished, by worker `w` on its own thread (or with w NULL from any
 *  thread): releases successors, counters, waiters. */
void tsr_task_complete(tsr_task_t *t, tsr_worker_t *w);

/** Records a kernel's failure status in the current flow. */
void tsr_flow_fail(tessera_context_t *ctx, int status);

/* ------------------------------------------------------------------ queues and workers */

/** A priority queue of ready tasks (larger priority first, then insertion order). */
typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t cond; /* the owning worker sleeps here */
  tsr_task_t **heap;
  int n, cap;
  bool sleeping;
  _Atomic double load; /* predicted seconds of queued and running tasks */
} tsr_queue_t;

int tsr_queue_init(tsr_queue_t *q);
/** Adds `x` seconds to the queue's predicted load (any thread, no lock). */
void tsr_queue_add_load(tsr_queue_t *q, double x);
void tsr_queue_destroy(tsr_queue_t *q);
/** Pushes under the queue's lock (caller holds it). Returns 0 or TESSERA_ERR_NOMEM. */
int tsr_queue_push_locked(tsr_queue_t *q, tsr_task_t *t);
/** Pops the best task under the lock (caller holds it), NULL if empty. */
tsr_task_t *tsr_queue_pop_locked(tsr_queue_t *q);
/** Pops the best task that `w` may run (for stealing), under the lock; NULL if none. */
tsr_task_t *tsr_queue_steal_locked(tsr_queue_t *q, const tsr_worker_t *w);

/** One trace event. */
typedef struct {
  double start, end;
  const char *name;
  int tag[3];
  int ntag;
  int transfer; /* 1 for a data transfer */
} tsr_event_t;

/** A task launched (or being launched) on an asynchronous worker, not yet known finished. */
typedef struct {
  tsr_task_t *task;
  void *queue;
  void *done;                              /* event recorded after the kernel */
  void *fill[TESSERA_MAX_TASK_DATA];       /* events marking copies into replicas */
  void *copy_start[TESSERA_MAX_TASK_DATA]; /* tracing: timed events before those copies */
  int src[TESSERA_MAX_TASK_DATA];          /* node of a copy's pinned source, or -1 */
  int acquired;                            /* handles made valid so far */
  double alone_since; /* refused memory with no other task in flight here since then */
  bool running;       /* kernel enqueued, done event recorded */
  bool skipped;       /* the flow had failed: no kernel */
  tessera_exec_t ex;
  tessera_async_status_t *status; /* pinned host memory */
  double launched;
} tsr_flight_t;

#ifndef TSR_FLIGHTS
#define TSR_FLIGHTS                                                                                \
  8 /* tasks in flight per GPU worker (a build may set another, -DTSR_FLIGHTS=N) */
#endif
#define TSR_NOMEM_WAIT_S 2.0 /* seconds a task alone waits for memory before it fails */
#define TSR_QUEUES TESSERA_MAX_GPU_QUEUES /* compute queues per GPU worker, at most */

struct tsr_worker {
  _Alignas(TSR_CACHE_LINE) int id; /* workers sit in an array: no line shared between two */
  tessera_device_kind_t kind;
  int device;
  int node;
  int core;
  double gflops; /* nominal rate for the cost model's fallback */
  const tsr_backend_t *be;
  void *be_state;
  void *scratch;
  tessera_context_t *ctx;
  pthread_t thread;
  pthread_t self; /* set by the worker itself before it counts as started */
  tsr_queue_t queue;
  _Alignas(TSR_CACHE_LINE) tessera_worker_stats_t stats; /* written by this worker only */
  tsr_event_t *events;
  size_t nevents, capevents;
  int start_status;
  tsr_task_cache_t task_cache;                   /* finished tasks, this worker's thread only */
  tsr_pm_cache_t pm_cache[TESSERA_DEVICE_KINDS]; /* this worker's thread only */
  struct { /* measurements of one kernel and size not yet in the history */
    const char *kernel;
    uint64_t size_key;
    double sum;
    long n;
  } samples;
  /* Asynchronous kinds: queues, tasks in flight. */
  void *queues[TSR_QUEUES];
  void *copy_queue; /* inputs copied here, ahead of the kernels (TESSERA_COPY_QUEUE=1), or NULL */
  void *qscratch[TSR_QUEUES]; /* library handles and workspaces, one set per queue */
  void *time_ref;             /* tracing: a timed event passed at time_ref_s (tsr_now) */
  double time_ref_s;
  tsr_flight_t flights[TSR_FLIGHTS];
  int nflights;
  unsigned next_queue;
  double last_done;
};

/** Next task for `w`: spins briefly, then sleeps up to a few ms; NULL if none came. */
tsr_task_t *tsr_worker_next_task(tsr_worker_t *w);
/** Moves the worker's pending kernel-time measurements into the shared history. */
void tsr_worker_flush_samples(tsr_worker_t *w);
/** Accounts a task that ran on `w` from t0 to t1 (counters, history when `measured`, trace,
 *  load) and completes it. */
void tsr_worker_finish(tsr_worker_t *w, tsr_task_t *t, double t0, double t1, bool measured);
/** The loop of a worker of an asynchronous kind (worker_async.c). */
void tsr_async_worker_loop(tsr_worker_t *w);

/** Wakes worker `w` if it sleeps. */
void tsr_worker_wake(tsr_worker_t *w);

/** Starts / stops every worker thread of the context. */
int tsr_workers_start(tessera_context_t *ctx);
void tsr_workers_stop(tessera_context_t *ctx);

/** Appends a trace event to worker `w` when tracing is on. */
void tsr_trace_event(tsr_worker_t *w, const char *name, const int *tag, int ntag, double start,
                     double end, int transfer);

/* ------------------------------------------------------------------ scheduling */

typedef struct {
  const char *name;
  /** A ready task: place it on a worker's queue. `from` is the worker that made it ready, or
   *  NULL for the inserting thread. */
  void (*push)(tessera_context_t *ctx, tsr_task_t *t, tsr_worker_t *from);
  /** Next task for `w` (its own queue, then what it may steal), or NULL. */
  tsr_task_t *(*pop)(tessera_context_t *ctx, tsr_worker_t *w);
} tsr_sched_ops_t;

const tsr_sched_ops_t *tsr_sched_cost(void);
const tsr_sched_ops_t *tsr_sched_locality(void);

/** Shared by the policies: pushes `t` on `w`'s queue with predicted cost `predicted` and wakes
 *  the worker, or another idle worker of the same memory node that may steal it. */
void tsr_sched_enqueue(tessera_context_t *ctx, tsr_worker_t *w, tsr_task_t *t, double predicted,
                       tsr_worker_t *from);
/** Tasks pushed by the inserting thread wake a sleeping worker once this many wait for it. */
#define TSR_WAKE_BATCH 8
/** Wakes every sleeping worker (before a thread blocks in a wait call). */
void tsr_wake_idle(tessera_context_t *ctx);
/** Shared by the policies: own queue first, then steal from workers of the same memory node. */
tsr_task_t *tsr_sched_pop_steal(tessera_context_t *ctx, tsr_worker_t *w);

/* ------------------------------------------------------------------ performance model */

tsr_perfmodel_t *tsr_perfmodel_create(void);
void tsr_perfmodel_destroy(tsr_perfmodel_t *pm);
/** Loads a history file; a missing file is not an error, malformed lines are skipped. */
int tsr_perfmodel_load(tsr_perfmodel_t *pm, const char *path);
/** Saves the history: merged, under a lock, with what the file holds now (other contexts'
 *  saves), through a uniquely named temporary file. The file's folder must exist unless it is
 *  tessera's own cache folder, which is created. */
int tsr_perfmodel_save(const tsr_perfmodel_t *pm, const char *path);
/** The default history file ($XDG_CACHE_HOME/tessera/perfmodel.txt, else
 *  ~/.cache/tessera/perfmodel.txt), or "" when neither variable is set. */
void tsr_perfmodel_default_path(char *buf, size_t size);
/** Mean measured seconds, or a negative value when unknown. Thread safe; `cache` (or NULL)
 *  belongs to the calling thread. */
double tsr_perfmodel_predict(const tsr_perfmodel_t *pm, tsr_pm_cache_t *cache, const char *kernel,
                             tessera_device_kind_t kind, uint64_t size_key);
/** Adds `count` measurements whose mean is `seconds`. Thread safe. */
void tsr_perfmodel_record(tsr_perfmodel_t *pm, const char *kernel, tessera_device_kind_t kind,
                          uint64_t size_key, double seconds, long count);

/** Expected seconds of `t` on `w`: history, else flops / nominal rate. */
double tsr_expected_time(tessera_context_t *ctx, const tsr_task_t *t, const tsr_worker_t *w,
                         tsr_pm_cache_t *cache);
/** Nominal bytes/s of copies from pageable (user-registered) host memory to a device. */
#define TSR_PAGEABLE_BW 8e9

/** Expected seconds of moving the data `t` lacks onto `w`'s memory node. */
double tsr_transfer_time(tessera_context_t *ctx, const tsr_task_t *t, const tsr_worker_t *w);

/* ------------------------------------------------------------------ memory nodes */

typedef struct {
  const tsr_backend_t *be; /* backend owning the memory (CPU for the host) */
  void *be_state;
  int device; /* -1 for host memory */
  void *slab; /* device nodes: the pool's memory, allocated once */
  tsr_pool_t pool;
  pthread_mutex_t lru_lock;
  tessera_data_t *lru_head, *lru_tail; /* replicas on this node, least recently used first */
} tsr_node_t;

/* ------------------------------------------------------------------ the context */

typedef struct {
  const tsr_backend_t *be;
  void *state;
  int ndevices;
} tsr_backend_slot_t;

struct tessera_context {
  tessera_config_t cfg;
  char trace_path[1024];
  char perfmodel_path[1024];

  tsr_backend_slot_t backends[TESSERA_DEVICE_KINDS];
  int nnodes;
  tsr_node_t nodes[TSR_MAX_NODES];
  double bandwidth[TSR_MAX_NODES][TSR_MAX_NODES]; /* bytes/s */

  int nworkers;
  tsr_worker_t *workers;
  atomic_int started;
  atomic_bool stop;

  /* Fields every task touches sit on cache lines of their own, grouped by who writes them:
   * read-mostly, the inserting thread's, the task pool, the in-flight count. */
  _Alignas(TSR_CACHE_LINE) const tsr_sched_ops_t *sched;
  tsr_perfmodel_t *perfmodel;
  tessera_scope_t scope;
  atomic_int waiters; /* threads in a wait call */
  atomic_int flow_status;
  atomic_bool flow_failed;

  _Alignas(TSR_CACHE_LINE) uint64_t seq;  /* insertion counter (inserting thread) */
  const tessera_kernel_t *checked_kernel; /* last kernel/scope pair found runnable */
  tessera_scope_t checked_scope;
  tsr_task_cache_t insert_cache;                 /* the inserting thread's */
  tsr_pm_cache_t pm_cache[TESSERA_DEVICE_KINDS]; /* the inserting thread's */

  _Alignas(TSR_CACHE_LINE) tsr_spin_t pool_lock; /* finished tasks kept for reuse */
  tsr_task_t *pool;
  int pool_n;

  _Alignas(TSR_CACHE_LINE) atomic_long inflight; /* inserted, not finished */

  _Alignas(TSR_CACHE_LINE) pthread_mutex_t wait_lock;
  pthread_cond_t wait_cond;

  pthread_mutex_t alloc_lock; /* serialises allocations that reach a backend */
  size_t gpu_mem_limit;       /* bytes of each GPU's pool; 0 = most of the free memory */
  double t0;
  bool tracing;
  char errmsg[TSR_ERRMSG];
};

/** Zeroed memory aligned to a cache line (free with free()). */
void *tsr_zalloc_aligned(size_t bytes);

/** Allocates / frees host memory for tiles (pinned when a backend offers it). */
void *tsr_host_alloc(tessera_context_t *ctx, size_t bytes);
void tsr_host_free(tessera_context_t *ctx, void *ptr);

/** Opens the backends and lays out memory nodes (host, then devices with their pools). */
int tsr_nodes_open(tessera_context_t *ctx);
void tsr_nodes_close(tessera_context_t *ctx);
/** Memory node of device `dev` of `kind` (the host node for the CPU). */
int tsr_node_of(const tessera_context_t *ctx, tessera_device_kind_t kind, int dev);

/** Blocks until `*count` (a counter that completions decrement and then notify) is zero. */
void tsr_wait_zero(tessera_context_t *ctx, atomic_long *count);

/** Wakes threads blocked in a wait call. */
void tsr_notify_waiters(tessera_context_t *ctx);

#endif
