/* The context and its memory nodes: backends opened, one node per memory (the host, then each
 * device with its pool), host allocation for tiles (nodes.c); configuration, workers made,
 * start and end of a context (context.c). */
#ifndef TSR_RUNTIME_CONTEXT_H
#define TSR_RUNTIME_CONTEXT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "device/backend.h"
#include "runtime/base.h"
#include "runtime/flow.h"
#include "runtime/perfmodel.h"
#include "runtime/pool.h"
#include "runtime/task.h"

typedef struct tsr_sched_ops tsr_sched_ops_t;

/* What a memory node keeps for kernels run on callers' threads (tsr_run_inline): its kernels'
 * scratch and the event ending the last such run's work, made at the first run. */
typedef struct {
  pthread_mutex_t lock;
  bool made;
  void *scratch, *event;
  void *queue; /* the queue of the last run (the event's) */
} tsr_inline_t;

typedef struct {
  const tsr_backend_t *be; /* backend owning the memory (the registry's first for the host) */
  void *be_state;
  int device; /* -1 for host memory */
  void *slab; /* device nodes: the pool's memory, allocated once */
  tsr_pool_t pool;
  pthread_mutex_t lru_lock;
  tessera_data_t *lru_head, *lru_tail; /* replicas on this node, least recently used first */
  tsr_inline_t inl;                    /* kernels run on callers' threads (inline.c) */
} tsr_node_t;

typedef struct {
  const tsr_backend_t *be;
  const tsr_backend_entry_t *entry; /* its registry entry (the kernels' per-worker hooks) */
  void *state;
  int ndevices;
} tsr_backend_slot_t;

/* Host tiles freed and kept for reuse: blocks[0 .. count) of their sizes, `bytes` in all, at
 * most `limit`. */
typedef struct {
  struct tsr_host_block {
    void *ptr;
    size_t bytes;
  } * blocks;
  int count, cap;
  size_t bytes, limit;
} tsr_host_cache_t;

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
  long tasks_made; /* task objects allocated so far (inserting thread) */

  _Alignas(TSR_CACHE_LINE) tsr_spin_t pool_lock; /* finished tasks kept for reuse */
  tsr_task_t *pool;
  int pool_n;

  _Alignas(TSR_CACHE_LINE) atomic_long inflight; /* inserted, not finished */
  /* tessera_task_resume calls under way on threads that are not the context's: finalize waits
   * for them to leave the context before freeing it */
  atomic_int resuming;
  long window_low; /* an insertion blocked at cfg.max_submitted resumes at this count */

  _Alignas(TSR_CACHE_LINE) pthread_mutex_t wait_lock;
  pthread_cond_t wait_cond;

  pthread_mutex_t alloc_lock;  /* serialises allocations that reach a backend, and host_cache */
  tsr_host_cache_t host_cache; /* host tiles freed, kept for reuse (nodes.c) */
  size_t gpu_mem_limit;        /* bytes of each GPU's pool; 0 = most of the free memory */
  int sim_devices;             /* simulated devices standing in for GPUs (builds with them) */
  tessera_kernel_t run_kernel; /* tessera_run_on_device's, on every kind (tsr_run_kernel_init) */
  double t0;
  bool tracing;
  char errmsg[TSR_ERRMSG];
  void *upper; /* the layers above keep their state of the context here (runtime/attach.h) */
  tsr_flow_t local_flow; /* the flow of this process's own tasks (flow.c) */
  tsr_flow_t *flow;      /* the flow over the processes the context spans, else &local_flow */
};

/** Waits for every task inserted so far that uses `h` and frees it without bringing its latest
 *  contents home (tessera_data_release without the copy): for a working copy whose last contents
 *  nobody reads. Returns 0 or a negative status. */
int tsr_data_drop(tessera_context_t *ctx, tessera_data_t *h);

/** Pins the caller's host memory (bytes at ptr) for fast copies with the context's devices:
 *  1 when pinned (unpin with tsr_host_unpin), 0 where no backend pins or pinning failed. */
int tsr_host_pin(tessera_context_t *ctx, void *ptr, size_t bytes);
void tsr_host_unpin(tessera_context_t *ctx, void *ptr);

/** Allocates / frees host memory for tiles (pinned when a backend offers it): a block freed is
 *  kept for a later allocation of its size, within a share of the machine's memory, so that a
 *  repeated call's workspaces do not fault their pages in again; `bytes` at free: the size it
 *  was allocated with. */
void *tsr_host_alloc(tessera_context_t *ctx, size_t bytes);
void tsr_host_free(tessera_context_t *ctx, void *ptr, size_t bytes);

/** Makes the kernel of tessera_run_on_device (devices.c): the caller's function, implemented on
 *  every device kind, the task's scope choosing the device. */
void tsr_run_kernel_init(tessera_kernel_t *k);

/** Opens the backends and lays out memory nodes (host, then devices with their pools). */
int tsr_nodes_open(tessera_context_t *ctx);
void tsr_nodes_close(tessera_context_t *ctx);

/** Runs kernel `k` (its implementation for the device kind of memory node `node`) on the calling
 *  thread with buffers ptr / ld, its work enqueued on `queue`, a queue of that device the caller
 *  owns (NULL for the host node, whose kernels run to completion): no task, worker or wait. The
 *  kernel's scratch is the node's own for such runs, made at the first one; a run on another
 *  queue than the last waits, on the device, for the last one's work. Runs on one node are
 *  serialised. Returns the kernel's status, or a negative status (message in the context). */
int tsr_run_inline(tessera_context_t *ctx, int node, void *queue, const tessera_kernel_t *k,
                   void *args, int ndata, void *const ptr[], const size_t ld[]);
/** Frees what the inline runs of node `nd` made (tsr_nodes_close). */
void tsr_inline_close(tessera_context_t *ctx, tsr_node_t *nd);

/** The flop rate (flop/s) of the workers the context's scope admits: their nominal rates
 *  summed, what the cost model assumes before it has measured (devices.c); *workers and
 *  *host_workers receive how many workers it admits and how many of them are the host's. */
double tsr_scope_rate(const tessera_context_t *ctx, int *workers, int *host_workers);

#endif
