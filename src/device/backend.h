/* Device backends: one device kind behind one table of functions.
 *
 * A backend knows its devices, their memory, copies and queues. It knows nothing of tasks,
 * tiles or linear algebra. The runtime holds one table per compiled-in kind; adding a kind
 * means adding a folder under src/device/ and one entry in tsr_backends().
 */
#ifndef TSR_BACKEND_H
#define TSR_BACKEND_H

#include <stddef.h>

#include "tessera/device.h"

typedef struct tsr_backend tsr_backend_t;

struct tsr_backend {
  const char *name;
  tessera_device_kind_t kind;

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

  /** Copies a 2D block (rows x cols elements of elsize bytes, column-major) between memory of
   *  two nodes, where `dst_dev` / `src_dev` are -1 for host memory and a device index of this
   *  kind otherwise; `queue` orders it (NULL: complete on return). Returns 0 or a status. */
  int (*copy2d)(void *state, int dst_dev, void *dst, size_t ldd, int src_dev, const void *src,
                size_t lds, size_t rows, size_t cols, size_t elsize, void *queue);

  /** Called on a worker thread when it starts, bound to `dev` for its whole life: binds the
   *  thread (core `core` when >= 0) and creates its library handles and workspaces. `*scratch`
   *  receives per-worker state handed to kernels. Queues are made by queue_create. */
  int (*worker_start)(void *state, int dev, int core, void **scratch);
  /** Called on the worker thread before it exits. */
  void (*worker_stop)(void *state, int dev, void *scratch);

  /* Asynchronous kinds only (NULL on the CPU). Queues are streams, events mark points in them.
   * Every call is made on a thread bound to the device (a worker of it) unless said otherwise. */
  int (*queue_create)(void *state, int dev, void **queue);
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
  /** Blocks until all work on `queue` is done. */
  int (*queue_sync)(void *state, void *queue);
  /** Free and total bytes of device `dev`'s memory. Any thread. */
  int (*mem_info)(void *state, int dev, size_t *free_bytes, size_t *total_bytes);
  /** Bytes/s of a copy of `bytes` from `src_dev` to `dst_dev` (-1: host, pinned), measured
   *  once at open time and cached; 0 if unknown. Any thread. */
  double (*bandwidth)(void *state, int dst_dev, int src_dev);
};

/** The CPU backend (always present). */
const tsr_backend_t *tsr_backend_cpu(void);

#ifdef TESSERA_HAVE_CUDA
/** The CUDA backend (src/device/cuda/). */
const tsr_backend_t *tsr_backend_cuda(void);
#endif

#ifdef TESSERA_SIM_DEVICES
/** Simulated devices in host memory, standing in for GPUs in tests (src/device/sim/). */
const tsr_backend_t *tsr_backend_sim(void);
#endif

#endif
