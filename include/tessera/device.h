/* tessera — devices, memory nodes and scopes.
 *
 * A device is a compute resource served by worker threads: the host CPU (its cores) or one
 * GPU. A memory node is a place data lives: node 0 is host memory, node 1 + g is the memory of
 * GPU g. A scope is the set of devices a task, or a whole call, may run on.
 */
#ifndef TESSERA_DEVICE_H
#define TESSERA_DEVICE_H

#include "tessera/context.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The CUDA kernel contract: what a CUDA worker hands its kernels in tessera_exec_t.scratch,
 *  one per queue of the worker, made on the worker's thread by the CUDA kernels' per-worker hook
 *  (every pointer belongs to the worker; kernels enqueue on tessera_exec_t.stream and never
 *  synchronise). A program running tessera's CUDA kernels outside a context fills one itself. */
typedef struct {
  void *cublas;           /**< cublasHandle_t: set its stream to tessera_exec_t.stream first */
  void *cusolver;         /**< cusolverDnHandle_t: likewise */
  void *workspace;        /**< device workspace for library calls */
  size_t workspace_bytes; /**< its size */
  void *host_workspace;   /**< pinned host workspace (cusolverDnX* host buffers) */
  size_t host_workspace_bytes;
  int *dev_info; /**< one device int for library info outputs */
} tessera_cuda_scratch_t;

/** Kind of device; each kind is one backend. Every kind but the CPU is an accelerator: a device
 *  with memory of its own (a memory node) and asynchronous queues, served by one worker. */
typedef enum {
  TESSERA_DEVICE_CPU = 0,
  TESSERA_DEVICE_CUDA = 1,
  /** Simulated accelerators: host memory behind the accelerator interface, running the CPU's
   *  kernels; only in builds with -DTESSERA_SIM_DEVICES=ON (tests of the runtime's device paths
   *  without a GPU), never together with CUDA. */
  TESSERA_DEVICE_SIM = 2,
} tessera_device_kind_t;

#define TESSERA_DEVICE_KINDS 3

/** The host memory node. */
#define TESSERA_HOST_NODE 0

/** Description of one device. */
typedef struct {
  tessera_device_kind_t kind;
  int index;           /**< index among devices of its kind */
  int memory_node;     /**< memory node its workers compute on */
  int workers;         /**< worker threads serving it */
  size_t memory_bytes; /**< memory of its node (host: physical memory) */
  double gflops;       /**< estimated f64 peak used by the cost model before history exists */
  char name[96];
} tessera_device_info_t;

/** Number of devices of `kind` in the context (CPU: 1 if any CPU worker runs, else 0). */
TESSERA_API int tessera_device_count(const tessera_context_t *ctx, tessera_device_kind_t kind);

/** Describes device `index` of `kind`. Returns 0 or a negative argument status. */
TESSERA_API int tessera_device_info(const tessera_context_t *ctx, tessera_device_kind_t kind,
                                    int index, tessera_device_info_t *info);

/** Number of accelerators (devices of every kind but the CPU: GPUs, simulated devices) in the
 *  context; they are memory nodes 1 to this count. */
TESSERA_API int tessera_accelerator_count(const tessera_context_t *ctx);

/** Number of memory nodes (host + accelerators). */
TESSERA_API int tessera_memory_node_count(const tessera_context_t *ctx);

/** Measured (or, before measurement, nominal) bandwidth in bytes/s from node `src` to `dst`.
 *  Returns 0 for an invalid pair. */
TESSERA_API double tessera_bandwidth(const tessera_context_t *ctx, int src, int dst);

/** A set of devices. The zero value means "every device". */
typedef struct {
  uint32_t kinds;    /**< bit (1 << kind) per allowed kind; 0 = every kind */
  uint64_t gpu_mask; /**< bit g allows accelerator g of its kind; 0 = every one */
} tessera_scope_t;

/** Every device. */
static inline tessera_scope_t tessera_scope_all(void) {
  tessera_scope_t s = {0, 0};
  return s;
}
/** CPU workers only. */
static inline tessera_scope_t tessera_scope_cpus(void) {
  tessera_scope_t s = {1u << TESSERA_DEVICE_CPU, 0};
  return s;
}
/** Accelerator workers only (every GPU, or every simulated device of a build that has them). */
static inline tessera_scope_t tessera_scope_gpus(void) {
  tessera_scope_t s = {((1u << TESSERA_DEVICE_KINDS) - 1) & ~(1u << TESSERA_DEVICE_CPU), 0};
  return s;
}

/** Sets the scope used by tasks that do not name one (default: every device).
 *  Returns 0, or TESSERA_ERR_NODEVICE if no worker of the context is in `scope`.
 *  Not thread safe against concurrent task insertion on the same context. */
TESSERA_API int tessera_set_scope(tessera_context_t *ctx, tessera_scope_t scope);

/** The scope in force for tasks that do not name one. */
TESSERA_API tessera_scope_t tessera_get_scope(const tessera_context_t *ctx);

/** Device memory nodes the scope allows, in order (the host node is not listed). Writes at most
 *  `max` of them to `nodes` and returns how many there are. */
TESSERA_API int tessera_scope_nodes(const tessera_context_t *ctx, tessera_scope_t scope, int *nodes,
                                    int max);

/** Bytes a memory node can hold: a device's pool, or the host's physical memory. */
TESSERA_API size_t tessera_memory_node_capacity(const tessera_context_t *ctx, int node);

/** Bytes of a device's pool not in use (replicas that could be evicted count as in use); for
 *  the host, its capacity. */
TESSERA_API size_t tessera_memory_node_available(const tessera_context_t *ctx, int node);

/** The device the calling thread serves: a worker of the context returns its device index and
 *  sets `*kind`; any other thread gets -1. Thread safe. */
TESSERA_API int tessera_current_device(const tessera_context_t *ctx, tessera_device_kind_t *kind);

/** Waits until the work queued so far on `queue`, a native queue of the device of memory node
 *  `node` that tessera does not own (for a CUDA GPU, a cudaStream_t such as a framework's
 *  stream), is done: a wait on that queue alone, never a device-wide synchronisation. Lets
 *  tessera read buffers that work on that queue produces. The host node has no queues: 0.
 *  @return 0, -2 for a node that does not exist, -3 for a NULL queue on a device node,
 *          TESSERA_ERR_BACKEND when the wait fails.
 *  Thread safe (concurrent failures may overwrite each other's message). */
TESSERA_API int tessera_queue_sync(tessera_context_t *ctx, int node, void *queue);

/** Copies `bytes` bytes from `src` in the memory of node `src_node` to `dst` in the memory of
 *  node `dst_node` (host or device memory, registered with tessera or not), complete on return.
 *  Meant for small values (a status, a scalar result) beside the tiled routines.
 *  @return 0, -2 / -4 for a node that does not exist, -3 / -5 for a NULL pointer,
 *          TESSERA_ERR_BACKEND when the copy fails.
 *  Thread safe (concurrent failures may overwrite each other's message). */
TESSERA_API int tessera_memory_copy(tessera_context_t *ctx, int dst_node, void *dst, int src_node,
                                    const void *src, size_t bytes);

/** Enqueues `count` copies of `bytes` bytes each, copy j from src + j * lds (node `src_node`) to
 *  dst + j * ldd (node `dst_node`; lds, ldd >= bytes, or any when count is 1), on `queue`, a
 *  native queue of a device node involved that tessera does not own (as tessera_queue_sync
 *  takes; two devices' memory is copied peer to peer): work queued after it on that queue sees
 *  the copies, and the caller goes on. Between host buffers `queue` is NULL and the copies are
 *  complete on return.
 *  @return 0, -2 / -5 for a node that does not exist, -3 / -6 for a NULL pointer, -4 / -7 for a
 *          stride below `bytes`, -10 for a queue that does not fit the nodes (NULL with a
 *          device, or given between host buffers), TESSERA_ERR_BACKEND when a copy fails.
 *  Thread safe (concurrent failures may overwrite each other's message). */
TESSERA_API int tessera_queue_copy(tessera_context_t *ctx, int dst_node, void *dst, size_t ldd,
                                   int src_node, const void *src, size_t lds, size_t bytes,
                                   size_t count, void *queue);

/** Runs `fn(arg)` on the worker thread of accelerator `dev` (memory node 1 + dev; bound to that
 *  device, between its tasks) and waits for it. Returns fn's return value, or a negative status
 *  (no such accelerator).
 *  Not thread safe against concurrent insertion on the same context. */
TESSERA_API int tessera_run_on_device(tessera_context_t *ctx, int dev, int (*fn)(void *arg),
                                      void *arg);

#ifdef __cplusplus
}
#endif
#endif
