/* Workers: what every worker shares (worker.c), the loop of CPU
 * workers (worker_cpu.c), the loop of asynchronous workers (worker_async.c), their threads
 * (worker_threads.c), and their trace events (trace.c). */
#ifndef TSR_RUNTIME_WORKER_H
#define TSR_RUNTIME_WORKER_H

#include <pthread.h>
#include <stdbool.h>

#include "device/backend.h"
#include "runtime/base.h"
#include "runtime/perfmodel.h"
#include "runtime/ready.h"
#include "runtime/runs_on.h"
#include "runtime/task.h"

/* ------------------------------------------------------------------ workers */

/** One trace event. */
typedef struct {
  double start, end;
  const char *name;
  int tag[3];
  int ntag;
  int transfer; /* 1 for a data transfer */
  /* a GPU task: when its kernel was enqueued (its span on the device runs from there to `end`;
   * `start` is clipped to the worker's previous completion, so that a worker's events do not
   * overlap), and its lane: 0 a compute queue, 1 the urgent lane */
  double launched;
  int lane;
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
  double alone_since;  /* refused memory with no other task in flight here since then */
  double started_over; /* when it last gave its replicas back to allocate them afresh, or 0 */
  bool running;        /* kernel enqueued, done event recorded */
  bool skipped;        /* the flow had failed: no kernel */
  bool deferred;       /* the kernel deferred the task: done once resumed and its event passed */
  bool urgent;         /* on the worker's urgent lane */
  bool counted;        /* a kernel running on the device, counted in the worker's `running` */
  tsr_run_t run;       /* the kernel's run record (tessera_exec_t.task), during launch */
  tessera_exec_t ex;
  tessera_async_status_t *status; /* pinned host memory */
  double launched;
} tsr_flight_t;

#ifndef TSR_FLIGHTS
#define TSR_FLIGHTS                                                                                \
  TESSERA_MAX_GPU_FLIGHTS /* tasks in flight per GPU worker, at most (a build may set another,     \
                             -DTSR_FLIGHTS=N); cfg.gpu_flights of them are used */
#endif
#define TSR_NOMEM_WAIT_S 2.0   /* seconds a task alone waits for memory before it fails */
#define TSR_NOMEM_RETRY_S 0.05 /* seconds between its fresh starts meanwhile (worker_async.c) */
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
  const tsr_backend_entry_t *entry; /* its kind's registry entry: the kernels' scratch hooks */
  void *scratch;
  tessera_context_t *ctx;
  pthread_t thread;
  pthread_t self;    /* set by the worker itself before it counts as started */
  tsr_ready_t ready; /* its ready tasks (ready.c) */
  _Alignas(TSR_CACHE_LINE) tessera_worker_stats_t stats; /* written by this worker only */
  /* its kernels running now (a CPU call; GPU kernels enqueued and not done; a deferred task's
   * not once its kernel returned): written by this worker only, read by tsr_workers_running */
  atomic_long running;
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
  /* The urgent lane (where the backend has one): a queue the device runs ahead of the others,
   * its scratch, and one more flight, for one task at a time that outranks every task in
   * flight (the next panel of a factorization while trailing updates fill the queues). */
  void *urgent_queue, *urgent_scratch;
  void *time_ref; /* tracing: a timed event passed at time_ref_s (tsr_now) */
  double time_ref_s;
  tsr_flight_t flights[TSR_FLIGHTS + 1];
  tessera_async_status_t *status_slots; /* the flights' status slots, one pinned allocation */
  int nflights;
  unsigned next_queue;
  double last_done;
};

/** The accelerator worker `w` drives (its device's index among its kind's), or -1 for a worker
 *  on the host. */
static inline int tsr_worker_accel(const tsr_worker_t *w) {
  return w->node == TESSERA_HOST_NODE ? -1 : w->device;
}

/** Whether worker `w` may run task `t` (implementation present and scope allows). */
static inline bool tsr_worker_can_run(const tsr_worker_t *w, const tsr_task_t *t) {
  return tsr_task_runs_on(t, w->kind, tsr_worker_accel(w));
}

/** The worker among `workers[0..n)` running on the calling thread, or NULL. */
static inline const tsr_worker_t *tsr_worker_of_thread(const tsr_worker_t *workers, int n) {
  pthread_t self = pthread_self();
  for (int i = 0; i < n; i++)
    if (pthread_equal(workers[i].self, self)) return &workers[i];
  return NULL;
}

/** Counts `delta` kernels of `w` as running (on w's thread: one writer, no read-modify-write
 *  shared with other threads). */
static inline void tsr_worker_running_add(tsr_worker_t *w, long delta) {
  atomic_store_explicit(&w->running,
                        atomic_load_explicit(&w->running, memory_order_relaxed) + delta,
                        memory_order_relaxed);
}
/** Whether a kernel of any worker of `ctx` runs now: with the count of tasks in flight, the
 *  sign of progress the transfer engine's heartbeats carry to the other processes
 *  (distributed/flow.c). Any thread. */
bool tsr_workers_running(const tessera_context_t *ctx);

/** Next task for `w`: spins briefly, then sleeps up to a few ms; NULL if none came. */
tsr_task_t *tsr_worker_next_task(tsr_worker_t *w);
/** Moves the worker's pending kernel-time measurements into the shared history. */
void tsr_worker_flush_samples(tsr_worker_t *w);
/** Accounts a task that ran on `w` from t0 to t1 (counters, history when `measured`, trace,
 *  load) and completes it. */
void tsr_worker_finish(tsr_worker_t *w, tsr_task_t *t, double t0, double t1, bool measured);

/** Accounts a task whose kernel deferred its completion (tessera_task_defer): the kernel's run
 *  from t0 to t1 under `name` and its tags; tessera_task_resume completes the task itself. */
void tsr_worker_deferred(tsr_worker_t *w, const char *name, const int *tag, int ntag, double t0,
                         double t1);
/** Makes / frees what the kernels of `w`'s kind keep per worker (or per queue), through the
 *  registry's hooks, on `w`'s thread; NULL where the kind keeps nothing. */
int tsr_worker_scratch_create(tsr_worker_t *w, void **scratch);
void tsr_worker_scratch_destroy(tsr_worker_t *w, void *scratch);
/** The loop of a CPU worker (worker_cpu.c), until the context stops. */
void tsr_cpu_worker_loop(tsr_worker_t *w);
/** The loop of a worker of an asynchronous kind (worker_async.c), until the context stops. */
void tsr_async_worker_loop(tsr_worker_t *w);

/** Starts / stops every worker thread of the context (worker_threads.c). */
int tsr_workers_start(tessera_context_t *ctx);
void tsr_workers_stop(tessera_context_t *ctx);

/** Appends a trace event to worker `w` when tracing is on. */
void tsr_trace_event(tsr_worker_t *w, const char *name, const int *tag, int ntag, double start,
                     double end, int transfer);

#endif
