/* tessera — tasks: kernels with declared data accesses, run in a graph the runtime infers.
 *
 * Tasks are inserted in program order. For every handle a task touches the runtime adds the
 * edges that keep the result equal to running the tasks one after another in that order:
 * read-after-write, write-after-read and write-after-write. A ready task is placed on a worker
 * by the scheduling policy and run with pointers to valid replicas on that worker's memory node.
 *
 * Example (two tasks on one handle, the second waits for the first):
 *
 *   static int scale(const tessera_exec_t *ex, void *args) {
 *     double *x = ex->ptr[0]; x[0] *= *(double *)args; return 0;
 *   }
 *   static const tessera_kernel_t k = {.name = "scale", .impl = {[TESSERA_DEVICE_CPU] = scale}};
 *   double f = 2.0;
 *   tessera_task_t t = {.kernel = &k, .args = &f, .args_size = sizeof f, .ndata = 1,
 *                       .data = {h}, .mode = {TESSERA_RW}};
 *   tessera_task_insert(ctx, &t); tessera_task_insert(ctx, &t);
 *   tessera_wait_all(ctx);
 */
#ifndef TESSERA_TASK_H
#define TESSERA_TASK_H

#include "tessera/data.h"
#include "tessera/device.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How a task touches a handle. */
typedef enum {
  TESSERA_R = 1,  /**< reads */
  TESSERA_W = 2,  /**< overwrites without reading */
  TESSERA_RW = 3, /**< reads and writes */
} tessera_access_t;

/** Most handles one task may touch. */
#define TESSERA_MAX_TASK_DATA 8
/** Most bytes of arguments copied into a task. */
#define TESSERA_MAX_TASK_ARGS 192

/** Status of a kernel that finishes asynchronously on a device queue: the kernel enqueues a
 *  copy of its library's info into `info` (pinned host memory, 0 before the kernel runs) and
 *  sets `offset`; when the queue has passed the kernel, the runtime reads `info`: > 0 becomes
 *  the flow status `offset + info`, < 0 becomes TESSERA_ERR_KERNEL. */
typedef struct {
  int info;
  int64_t offset;
} tessera_async_status_t;

/** What a kernel implementation receives when it runs. */
typedef struct {
  void *ptr[TESSERA_MAX_TASK_DATA]; /**< replica of each handle on this worker's memory node */
  size_t ld[TESSERA_MAX_TASK_DATA]; /**< its leading dimension, in elements */
  int ndata;
  tessera_device_kind_t kind;    /**< kind of the device running the task */
  int device;                    /**< index of that device among its kind */
  int worker;                    /**< worker index in the context */
  void *stream;                  /**< GPU stream to enqueue on (NULL on CPUs) */
  void *scratch;                 /**< per-worker backend scratch (e.g. library handles), or NULL */
  tessera_async_status_t *async; /**< asynchronous status slot (GPU kernels), NULL on CPUs */
  void *task;                    /**< the runtime's record of the running task, for
                                      tessera_task_defer (during the kernel's call only) */
} tessera_exec_t;

/** A task whose completion its kernel has deferred (see tessera_task_defer). */
typedef struct tessera_deferred tessera_deferred_t;

/** Called by a kernel that starts work finishing later (a message in flight, say): the task
 *  does not complete when the kernel returns 0, but when tessera_task_resume is called with the
 *  token returned here (on a GPU worker: and once the work the kernel enqueued on `stream` is
 *  done). Until then its successors wait, its data stay valid where the kernel saw them, and
 *  the worker goes on with other tasks. The kernel must return 0 after deferring. Returns NULL
 *  where deferring is not offered (a NULL `ex`); the kernel then finishes its work before
 *  returning. Thread safe for the running kernel. */
TESSERA_API tessera_deferred_t *tessera_task_defer(const tessera_exec_t *ex);

/** Completes a deferred task, from any thread, exactly once: `status` 0, or a failure that fails
 *  the flow (as a kernel's nonzero return does). */
TESSERA_API void tessera_task_resume(tessera_deferred_t *deferred, int status);

/** One implementation of a kernel. Returns 0 on success; a positive value (a LAPACK-style
 *  info) or a negative status makes the enclosing flow fail with that value. */
typedef int (*tessera_kernel_fn)(const tessera_exec_t *ex, void *args);

/** A kernel: one implementation per device kind and what the cost model needs. */
typedef struct {
  const char *name;                             /**< unique name; keys the time history */
  tessera_kernel_fn impl[TESSERA_DEVICE_KINDS]; /**< NULL where the kind has no implementation */
  double (*flops)(const void *args);            /**< floating-point operations (optional) */
  uint64_t (*size_key)(const void *args);       /**< groups runs of equal cost (optional) */
  unsigned flags;                               /**< TESSERA_KERNEL_* (0: none) */
} tessera_kernel_t;

/** Kernel flag: the kernel runs even after its flow has failed (tasks not yet started are
 *  otherwise skipped). For work other processes wait on, such as sending a tile. */
#define TESSERA_KERNEL_RUNS_AFTER_FAILURE 1u

/** A task to insert. Zero-initialise, then fill in. */
typedef struct {
  const tessera_kernel_t *kernel;
  const void *args; /**< copied into the task (at most TESSERA_MAX_TASK_ARGS bytes) */
  size_t args_size;
  int ndata;
  tessera_data_t *data[TESSERA_MAX_TASK_DATA];
  tessera_access_t mode[TESSERA_MAX_TASK_DATA];
  int priority;          /**< larger runs earlier among ready tasks */
  tessera_scope_t scope; /**< zero value: the context's scope */
  int tag[3];            /**< coordinates shown in traces (e.g. tile i, j, k) */
  int ntag;
} tessera_task_t;

/** Inserts a task. It runs once every earlier task it conflicts with has finished.
 *  When tessera_config_t.max_submitted tasks are inserted and not finished, the call first
 *  blocks until nine tenths of that bound remain (never on a worker thread of the context).
 *  Returns 0, or a negative status for an invalid description (NULL kernel, too many handles,
 *  arguments too large), TESSERA_ERR_NODEVICE when no worker of the scope has an
 *  implementation, TESSERA_ERR_NOMEM.
 *  Not thread safe: one thread inserts into a context at a time. */
TESSERA_API int tessera_task_insert(tessera_context_t *ctx, const tessera_task_t *task);

/** Waits until every inserted task has finished. Returns the status of the flow since the
 *  previous wait: 0, or the first failure (a negative status, else the smallest positive
 *  info) a kernel returned. After a failure, tasks of the same flow not yet started are
 *  skipped (their dependencies are still honoured), so a failing flow ends quickly.
 *  Resets the flow's status. */
TESSERA_API int tessera_wait_all(tessera_context_t *ctx);

#ifdef __cplusplus
}
#endif
#endif
