/* Device backends: one device kind behind one table of functions.
 *
 * A backend knows its devices, their memory, copies and queues. It knows nothing of tasks,
 * tiles or linear algebra. Each backend is a folder src/device/<name>/ whose table is returned
 * by `const tsr_backend_t *tsr_backend_<name>(void)`. CMake lists the folders it builds
 * (TESSERA_BACKENDS) and generates the registry (tsr_backend_registry) from that list, adding
 * the per-worker hooks of the kind's kernels when src/kernels/<name>/handles.c exists
 * (tsr_<name>_scratch_create / _destroy). The runtime opens whatever the registry holds:
 * adding a kind means adding the folders and its name to TESSERA_BACKENDS, never editing the
 * runtime.
 */
#ifndef TSR_BACKEND_H
#define TSR_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "tessera/device.h"

typedef struct tsr_backend tsr_backend_t;

struct tsr_backend {
  const char *name;
  tessera_device_kind_t kind; /* the kernels its workers run (tessera_kernel_t.impl[kind]) */
  /** Its workers run tasks asynchronously: kernels and copies are enqueued on queues and
   *  learnt complete through events (the queue and event entries below are all set). Without
   *  it, a worker runs each task to completion on its thread. */
  bool async;
  /** Its devices are simulated, not found: the runtime opens as many as the configuration asks
   *  (TESSERA_SIM_DEVICES) within TESSERA_GPUS, where a kind of real devices opens every device
   *  it finds within TESSERA_GPUS. */
  bool simulated;

  /** Opens the backend for a context: counts devices (<= max), sets up what the whole
   *  process needs. `*state` receives backend state for this context. Returns 0 or a status. */
  int (*open)(int max_devices, int *ndevices, void **state);
  /** Closes what open() set up. */
  void (*close)(void *state);
  /** Describes device `dev` (name, memory, nominal f64 GFLOP/s). */
  int (*info)(void *state, int dev, tessera_device_info_t *info);

  /** Memory of device `dev`; NULL on failure. */
  void *(*alloc)(void *state, int dev, size_t bytes);
  void (*free)(void *state, int dev, void *ptr);

  /** Host memory suited to fast copies with this kind (pinned); NULL if the kind has none. */
  void *(*host_alloc)(void *state, size_t bytes);
  void (*host_free)(void *state, void *ptr);
  /** Pins `bytes` of the caller's host memory at ptr for fast copies with this kind (0), or
   *  -1 where it cannot; NULL where the kind has no pinning. Unpinned by host_unregister. */
  int (*host_register)(void *state, void *ptr, size_t bytes);
  void (*host_unregister)(void *state, void *ptr);

  /** Copies a 2D block (rows x cols elements of elsize bytes, column-major) between memory of
   *  two nodes, where `dst_dev` / `src_dev` are -1 for host memory and a device index of this
   *  kind otherwise; `queue` orders it (NULL: complete on return). Returns 0 or a status. */
  int (*copy2d)(void *state, int dst_dev, void *dst, size_t ldd, int src_dev, const void *src,
                size_t lds, size_t rows, size_t cols, size_t elsize, void *queue);

  /** Optional (NULL: nothing to do). Called on a worker thread when it starts: binds the
   *  thread to device `dev` for its whole life. Queues are made by queue_create; what the
   *  kernels keep per worker, by the registry's scratch hooks. */
  int (*worker_start)(void *state, int dev);
  /** Optional (NULL: threads need no binding). Binds the calling thread, any thread, to device
   *  `dev` for a while, `*prev` receiving what leave() restores; for the calls that run a
   *  kernel on a caller's thread (runtime/inline.c). */
  int (*enter)(void *state, int dev, int *prev);
  void (*leave)(void *state, int dev, int prev);

  /* Asynchronous kinds only (NULL where `async` is false). Queues are streams, events mark points
   * in them. Every call is made on a thread bound to the device (a worker of it) unless said
   * otherwise. */
  int (*queue_create)(void *state, int dev, void **queue);
  /** Optional (NULL: none). A queue whose work the device runs ahead of the other queues'
   *  pending work (a stream of the highest priority): the worker's urgent lane. */
  int (*queue_create_urgent)(void *state, int dev, void **queue);
  void (*queue_destroy)(void *state, int dev, void *queue);
  int (*event_create)(void *state, int dev, void **event);
  void (*event_destroy)(void *state, int dev, void *event);
  /** Marks the current end of `queue`. */
  int (*event_record)(void *state, void *event, void *queue);
  /** 1 when the work before the event is done, 0 while pending, a negative status on error.
   *  Any thread. */
  int (*event_query)(void *state, void *event);
  /** Blocks until the event is done. Any thread. */
  int (*event_sync)(void *state, void *event);
  /** Makes later work on `queue` wait for `event` (which may belong to another device). */
  int (*queue_wait_event)(void *state, void *queue, void *event);
  /** Optional (NULL: no timing): an event that also takes the time it is reached, and the
   *  seconds from timed event `from` to timed event `to` of one device, both done. Used by
   *  traces to place copies on the timeline. */
  int (*event_create_timed)(void *state, int dev, void **event);
  int (*event_elapsed)(void *state, void *from, void *to, double *seconds);
  /** Blocks until all work on `queue` (also a queue tessera does not own) is done. Any
   *  thread. */
  int (*queue_sync)(void *state, void *queue);
  /** Free and total bytes of device `dev`'s memory. Any thread. */
  int (*mem_info)(void *state, int dev, size_t *free_bytes, size_t *total_bytes);
  /** Bytes/s of a copy of `bytes` from `src_dev` to `dst_dev` (-1: host, pinned), measured
   *  once at open time and cached; 0 if unknown. Any thread. */
  double (*bandwidth)(void *state, int dst_dev, int src_dev);
};

/** One device kind compiled in: its backend and the per-worker hooks of its kernels. */
typedef struct {
  const tsr_backend_t *(*backend)(void);
  /** Optional (NULL: the kind's kernels keep nothing per worker). Called on the worker's thread
   *  once the backend has bound it, once per queue of an asynchronous worker: makes what the
   *  kernels are handed in tessera_exec_t.scratch (library handles, workspaces). Returns 0 or
   *  a status. */
  int (*scratch_create)(int dev, void **scratch);
  /** Frees what scratch_create made, on the same thread. */
  void (*scratch_destroy)(int dev, void *scratch);
} tsr_backend_entry_t;

/** The device kinds compiled in, the CPU's first (generated by CMake: registry.c in the build
 *  tree). `*n` receives their count. */
const tsr_backend_entry_t *tsr_backend_registry(int *n);

#endif
