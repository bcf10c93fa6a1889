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
   *  thread (core `core` when >= 0), creates its queues and library handles. `*scratch`
   *  receives per-worker state handed to kernels. */
  int (*worker_start)(void *state, int dev, int core, void **scratch);
  /** Called on the worker thread before it exits. */
  void (*worker_stop)(void *state, int dev, void *scratch);
};

/** The CPU backend (always present). */
const tsr_backend_t *tsr_backend_cpu(void);

#endif
