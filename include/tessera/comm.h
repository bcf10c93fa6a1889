/* tessera — communicators and collectives across processes and GPUs.
 *
 * A communicator spans the processes of an MPI communicator, or, for programs no MPI launcher
 * started, the processes that meet through a key-value store the caller provides
 * (tessera_comm_store_t: jax.distributed's store, say). Host buffers travel over MPI, or over
 * Gloo's TCP transport for a communicator made over a store;
 * device buffers (CUDA memory) over NCCL, through one NCCL communicator over every GPU the
 * processes drive. A process may drive several GPUs (`ndevices` > 1): its device collectives
 * then take one buffer per GPU (the `_group` forms) and one call reduces, gathers or broadcasts
 * across all of them and across the processes.
 *
 * Ordering (Gloo's contract): every call takes a queue. With a queue, the operation is ordered
 * after what was put on that queue before it, and the call returns at once; the buffers must
 * then stay untouched until tessera_comm_queue_sync() returns (or, for a queue on a CUDA stream,
 * until that stream has passed the operation). With no queue (NULL), the operation is complete
 * when the call returns.
 *
 * Ranks: `root` and `peer` of host operations are process ranks (0 .. size - 1). Device
 * operations run over endpoints, one per GPU of every process: the endpoint of local GPU i of
 * process p is p * ndevices + i, and device gathers and scatters lay the endpoints' blocks out
 * in that order.
 *
 * Like MPI and NCCL, every process must make the same collective calls on a communicator (and on
 * each queue) in the same order. A participant that does not arrive within the communicator's
 * timeout makes the waiting calls fail with TESSERA_ERR_TIMEOUT; the communicator is then
 * broken (every later call fails with TESSERA_ERR_STATE) and can only be destroyed.
 *
 * Built when MPI or Gloo is found (`tessera info` says which); the device paths when NCCL is
 * found too (with MPI or Gloo carrying NCCL's unique id). Without them every call here returns
 * TESSERA_ERR_UNSUPPORTED.
 *
 * Environment:
 *   TESSERA_COMM_TIMEOUT   seconds a call waits for the other participants (default 30); a tile
 *                          transfer of a distributed flow waits as long as its peer shows
 *                          progress (heartbeats), and fails once it has shown none for that long
 */
#ifndef TESSERA_COMM_H
#define TESSERA_COMM_H

#include <stddef.h>

#include "tessera/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A communicator over processes (and their GPUs). */
typedef struct tessera_comm tessera_comm_t;

/** An ordered queue of communication operations: host operations run in order on a thread of
 *  the queue, device operations are enqueued on the queue's CUDA stream. */
typedef struct tessera_comm_queue tessera_comm_queue_t;

/** Element type of a collective: the matrix dtypes (same values) and 32/64-bit integers. */
typedef enum {
  TESSERA_COMM_F32 = TESSERA_F32,
  TESSERA_COMM_F64 = TESSERA_F64,
  TESSERA_COMM_C64 = TESSERA_C64,
  TESSERA_COMM_C128 = TESSERA_C128,
  TESSERA_COMM_I32 = 4, /**< int32_t */
  TESSERA_COMM_I64 = 5, /**< int64_t */
} tessera_comm_type_t;

/** Reduction of a reducing collective. MIN and MAX take real and integer types only; PROD of
 *  complex device buffers is not offered (NCCL has no complex types). */
typedef enum {
  TESSERA_SUM = 0,
  TESSERA_PROD = 1,
  TESSERA_MIN = 2,
  TESSERA_MAX = 3,
} tessera_reduce_t;

/** A key-value store through which the processes of a communicator find each other when no MPI
 *  launcher started them (the communicator's host transport is then Gloo, over TCP). Every
 *  process gives one over the same store, with its own rank, the same size and the same prefix.
 *  tessera calls `set` and `get` from the thread making the communicator, a host queue
 *  (tessera_comm_queue_create) or a context's first distributed matrix, never from two threads
 *  at once for one communicator: the store, `arg` and `prefix` must stay valid until
 *  tessera_comm_destroy returns. */
typedef struct {
  void *arg; /**< passed to set and get as their first argument */
  /** Stores `len` bytes of `value` under `key` (a NUL-terminated string of printable
   *  characters, `prefix` first, '/' between parts; a key is set once). Returns 0, or nonzero
   *  when it could not (tessera_comm_create then fails with TESSERA_ERR_BACKEND). */
  int (*set)(void *arg, const char *key, const void *value, size_t len);
  /** Waits up to `timeout_s` seconds for `key` to be set (by any process), then copies up to
   *  `cap` bytes of its value into `value` and its whole length into *len (more than cap: tessera
   *  asks again with room for it). Returns 0, or nonzero when the key did not come in time or the
   *  store failed (tessera_comm_create then fails with TESSERA_ERR_TIMEOUT). */
  int (*get)(void *arg, const char *key, void *value, size_t cap, size_t *len, double timeout_s);
  int rank;           /**< this process's rank, 0 .. size - 1, each once */
  int size;           /**< the number of processes */
  const char *prefix; /**< namespace of this communicator's keys: distinct for every
                           communicator made over one store (keys are never deleted) */
} tessera_comm_store_t;

/** How to make a communicator. The zero value: every process of MPI_COMM_WORLD, host buffers
 *  only, the default timeout. */
typedef struct {
  const void *mpi_comm; /**< address of the MPI_Comm to span (tessera works on a duplicate of
                             it); NULL: MPI_COMM_WORLD */
  int ndevices;         /**< GPUs this process drives in device collectives: 0 for none (host
                             buffers only); the same on every process */
  const int *devices; /**< their CUDA device ordinals, `ndevices` of them; NULL: 0 .. ndevices-1 */
  double timeout_s;   /**< seconds a call waits for the other participants; 0: the
                           TESSERA_COMM_TIMEOUT variable, else 30 */
  char *error;        /**< optional: where tessera_comm_create writes, as a sentence, why it
                           failed (at most error_len bytes, NUL-terminated) */
  size_t error_len;
  const tessera_comm_store_t *store; /**< NULL: MPI (above); given: the processes of the store,
                                          over Gloo, MPI not touched at all (mpi_comm unused) */
} tessera_comm_config_t;

/** Makes a communicator: a collective call over the processes of cfg->mpi_comm, or of cfg->store
 *  when given (then Gloo: the processes rendezvous through the store within the timeout, each
 *  listening on an address of this host's name, as torch's Gloo does). Initialises MPI
 *  (MPI_THREAD_MULTIPLE) when the program has not; tessera_comm_destroy then finalises it, so a
 *  program that lets tessera start MPI uses one communicator at a time and cannot start MPI
 *  again after destroying the last. A program that initialised MPI itself keeps that to itself:
 *  host queues need MPI_THREAD_MULTIPLE there. With ndevices > 0, makes the NCCL communicator
 *  (its unique id broadcast over MPI or Gloo).
 *  @param cfg  NULL for the defaults
 *  @param comm receives the communicator
 *  @return 0; -1 for an invalid configuration (negative ndevices or timeout, a device that does
 *          not exist, a GPU two endpoints would drive, ndevices differing across processes);
 *          TESSERA_ERR_UNSUPPORTED without MPI (with a store: without Gloo; or without
 *          NCCL when ndevices > 0); TESSERA_ERR_BACKEND when MPI, Gloo, NCCL or the store's set
 *          fails; TESSERA_ERR_TIMEOUT when, over a store, a process did not arrive in time;
 * TESSERA_ERR_ENV for a malformed TESSERA_COMM_TIMEOUT; TESSERA_ERR_NOMEM. cfg->error (when given)
 * says what failed. Not thread safe with other calls on the same MPI communicator. */
TESSERA_API int tessera_comm_create(const tessera_comm_config_t *cfg, tessera_comm_t **comm);

/** Destroys a communicator (every queue made on it must be destroyed first); a collective call.
 *  Finalises MPI when tessera_comm_create initialised it. NULL is a no-op. Returns 0, or
 *  TESSERA_ERR_STATE when queues are still open. */
TESSERA_API int tessera_comm_destroy(tessera_comm_t *comm);

/** The calling process's rank, the number of processes, and the GPUs each process drives
 *  (ndevices); -1 for a NULL communicator. Thread safe. */
TESSERA_API int tessera_comm_rank(const tessera_comm_t *comm);
TESSERA_API int tessera_comm_size(const tessera_comm_t *comm);
TESSERA_API int tessera_comm_devices(const tessera_comm_t *comm);

/** The message of the last failing call on `comm` ("" if none; a fixed sentence for NULL): owned
 *  by the communicator, valid until its next failing call. */
TESSERA_API const char *tessera_comm_last_error(const tessera_comm_t *comm);

/** Writes a line naming the transports this build has ("MPI 3.1 (Open MPI v4.1.4); Gloo 0.5.0
 *  (TCP, over a key-value store); NCCL 2.28.3", or why each is not there) into buf (at most len
 *  bytes, NUL-terminated). Returns 1 when communicators can be made (MPI or Gloo is built in),
 *  else 0. Thread safe. */
TESSERA_API int tessera_comm_describe(char *buf, size_t len);

/** Makes a queue on `comm`: for host buffers when cuda_stream is NULL (a thread of the queue
 *  runs its operations in order, on an MPI communicator, or Gloo context, of its own), else for
 * device buffers of local GPU `device` (0 .. ndevices-1), enqueued on cuda_stream (a cudaStream_t
 * of that GPU). A collective call: every process makes its queues in the same order.
 *  @return 0; -1 for a NULL comm or out-of-range device; TESSERA_ERR_UNSUPPORTED for a host
 *          queue when MPI runs below MPI_THREAD_MULTIPLE, or a device queue without NCCL;
 *          TESSERA_ERR_STATE on a broken communicator; TESSERA_ERR_NOMEM, TESSERA_ERR_BACKEND. */
TESSERA_API int tessera_comm_queue_create(tessera_comm_t *comm, int device, void *cuda_stream,
                                          tessera_comm_queue_t **queue);

/** Waits until every operation put on the queue so far is complete. Returns 0, or the first
 *  failure of those operations (then the queue's communicator is broken). */
TESSERA_API int tessera_comm_queue_sync(tessera_comm_queue_t *queue);

/** Waits for the queue (as tessera_comm_queue_sync) and destroys it; returns what the wait
 *  returned. NULL is a no-op. */
TESSERA_API int tessera_comm_queue_destroy(tessera_comm_queue_t *queue);

/* The operations. `count` counts elements of `type` in each buffer. Every buffer is host memory,
 * or device memory of a GPU the communicator drives (found from the pointer); all the buffers of
 * one call, on every process, are of one kind, and a device buffer's queue must be a device
 * queue of the buffer's GPU (or NULL). Each returns 0, or:
 *   -k                      argument k (1-based) is invalid: a NULL communicator or buffer with
 *                           count > 0, a bad type, reduction or rank, MIN / MAX of a complex
 *                           type, a queue of another communicator or of the wrong kind
 *   TESSERA_ERR_STATE       the communicator is broken; or it drives several GPUs and the call
 *                           is not a _group form
 *   TESSERA_ERR_UNSUPPORTED device buffers without NCCL; PROD of complex device buffers
 *   TESSERA_ERR_TIMEOUT     a participant did not arrive within the timeout
 *   TESSERA_ERR_BACKEND     MPI, NCCL or CUDA failed
 * with tessera_comm_last_error() saying which. Operations taking a queue report their own
 * failures at tessera_comm_queue_sync. */

/** buf of `root` is copied into buf of every other process. */
TESSERA_API int tessera_comm_broadcast(tessera_comm_t *comm, void *buf, size_t count,
                                       tessera_comm_type_t type, int root,
                                       tessera_comm_queue_t *queue);

/** recv of every process = op over the processes of send (recv may equal send: in place). */
TESSERA_API int tessera_comm_allreduce(tessera_comm_t *comm, const void *send, void *recv,
                                       size_t count, tessera_comm_type_t type, tessera_reduce_t op,
                                       tessera_comm_queue_t *queue);

/** recv of `root` = op over the processes of send; recv is not used elsewhere (may be NULL). */
TESSERA_API int tessera_comm_reduce(tessera_comm_t *comm, const void *send, void *recv,
                                    size_t count, tessera_comm_type_t type, tessera_reduce_t op,
                                    int root, tessera_comm_queue_t *queue);

/** recv (size * count elements) of every process = the send blocks of processes 0, 1, ... */
TESSERA_API int tessera_comm_allgather(tessera_comm_t *comm, const void *send, void *recv,
                                       size_t count, tessera_comm_type_t type,
                                       tessera_comm_queue_t *queue);

/** recv (count elements) of process p = block p of op over the processes of send (size * count
 *  elements). */
TESSERA_API int tessera_comm_reduce_scatter(tessera_comm_t *comm, const void *send, void *recv,
                                            size_t count, tessera_comm_type_t type,
                                            tessera_reduce_t op, tessera_comm_queue_t *queue);

/** Sends buf to `peer`, which receives it with tessera_comm_recv (as MPI's send: it may wait for
 *  the receive to start). On a communicator driving several GPUs, device buffers go from the
 *  endpoint of the buffer's GPU to endpoint `peer`; a send and its receive between two GPUs of
 *  the same process must then be issued from different threads (NCCL connects the pair on its
 *  first exchange, waiting for both ends). */
TESSERA_API int tessera_comm_send(tessera_comm_t *comm, const void *buf, size_t count,
                                  tessera_comm_type_t type, int peer, tessera_comm_queue_t *queue);

/** Receives into buf what `peer` sends with tessera_comm_send (count and type must match). */
TESSERA_API int tessera_comm_recv(tessera_comm_t *comm, void *buf, size_t count,
                                  tessera_comm_type_t type, int peer, tessera_comm_queue_t *queue);

/** Returns (or, on a queue, completes) once every process has reached it. A device queue's
 *  barrier orders its stream after every endpoint's arrival. */
TESSERA_API int tessera_comm_barrier(tessera_comm_t *comm, tessera_comm_queue_t *queue);

/* Group forms: device buffers, one per GPU the process drives (ndevices of them, in the order
 * of tessera_comm_config_t.devices), and one queue per GPU (or `queues` NULL: complete on
 * return). The collective spans every endpoint of every process. */

TESSERA_API int tessera_comm_broadcast_group(tessera_comm_t *comm, void *const *bufs, size_t count,
                                             tessera_comm_type_t type, int root,
                                             tessera_comm_queue_t *const *queues);
TESSERA_API int tessera_comm_allreduce_group(tessera_comm_t *comm, const void *const *send,
                                             void *const *recv, size_t count,
                                             tessera_comm_type_t type, tessera_reduce_t op,
                                             tessera_comm_queue_t *const *queues);
TESSERA_API int tessera_comm_reduce_group(tessera_comm_t *comm, const void *const *send,
                                          void *const *recv, size_t count, tessera_comm_type_t type,
                                          tessera_reduce_t op, int root,
                                          tessera_comm_queue_t *const *queues);
TESSERA_API int tessera_comm_allgather_group(tessera_comm_t *comm, const void *const *send,
                                             void *const *recv, size_t count,
                                             tessera_comm_type_t type,
                                             tessera_comm_queue_t *const *queues);
TESSERA_API int tessera_comm_reduce_scatter_group(tessera_comm_t *comm, const void *const *send,
                                                  void *const *recv, size_t count,
                                                  tessera_comm_type_t type, tessera_reduce_t op,
                                                  tessera_comm_queue_t *const *queues);

#ifdef __cplusplus
}
#endif
#endif
