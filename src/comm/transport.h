/* The communication layer's insides: the communicator, one operation as a value, and the
 * transports under them (for host buffers mpi/host.c or gloo/host.c, one table each; for device
 * buffers nccl/device.c). This is the transport header: the layers above and the host queues
 * (host_queue.h) stand on it, and it knows nothing of either.
 *
 * comm.c checks every call's arguments and hands a checked operation to a transport (or to a
 * host queue, host_queue.c, which runs host operations in order on a thread of its own); base.c
 * is the ground all of them stand on (messages, deadlines, attachments). A transport never checks
 * arguments and never reads the environment. */
#ifndef TSR_COMM_TRANSPORT_H
#define TSR_COMM_TRANSPORT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "tessera/comm.h"

#define TSR_COMM_ERRMSG 256
#define TSR_COMM_MAX_DEVICES 16

/** What an operation does. */
typedef enum {
  TSR_COLL_BROADCAST,
  TSR_COLL_ALLREDUCE,
  TSR_COLL_REDUCE,
  TSR_COLL_ALLGATHER,
  TSR_COLL_REDUCE_SCATTER,
  TSR_COLL_SEND,
  TSR_COLL_RECV,
  TSR_COLL_BARRIER,
} tsr_coll_kind_t;

/** One checked operation of one endpoint, held by value (a host queue copies it). `buf` is the
 *  buffer written (broadcast's buffer, recv), `send` the one read; `rank` is the root or the
 *  peer. */
typedef struct {
  tsr_coll_kind_t kind;
  const void *send;
  void *buf;
  size_t count;
  tessera_comm_type_t type;
  tessera_reduce_t op;
  int rank;
} tsr_coll_t;

typedef struct tsr_host_chan tsr_host_chan_t; /* a channel: one per host queue, one for tiles */
typedef struct tsr_host_req tsr_host_req_t;   /* a point-to-point transfer in flight */
typedef struct tsr_nccl tsr_nccl_t;           /* nccl/device.c */

struct tessera_comm {
  int rank, size, ndevices;
  int devices[TSR_COMM_MAX_DEVICES];
  double timeout_s;
  const struct tsr_host_ops *host; /* the host transport's table (MPI or Gloo) */
  void *host_state;                /* its state, the transport's own */
  tsr_nccl_t *nccl;                /* NULL without device endpoints */
  /* what a layer above keeps on the communicator (tsr_comm_attach): the communication layer
   * never reads it, and destroy hands it to its close function before the transports end */
  void *attached;
  void (*attached_close)(void *attached);
  atomic_bool broken; /* a wait timed out or a transport failed: only destroy is left */
  atomic_int queues;  /* queues made and not destroyed */
  pthread_mutex_t err_lock;
  char errmsg[TSR_COMM_ERRMSG];
};

/** Records a message for tessera_comm_last_error and returns `status`. */
int tsr_comm_error(tessera_comm_t *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Marks the communicator broken after a failed or timed-out operation; returns `status`. */
int tsr_comm_break(tessera_comm_t *c, int status);

/** Attaches `obj` to the communicator for a layer above, with the function that frees it:
 *  tessera_comm_destroy calls close(obj) first, while the transports still run. One attachment
 *  per communicator: returns 0, or TESSERA_ERR_STATE (with a message) when one is there. Not
 *  thread safe: the caller orders it with its other calls on the communicator. */
int tsr_comm_attach(tessera_comm_t *c, void *obj, void (*close)(void *obj));

/** What tsr_comm_attach attached with `close` (the attachment's kind), or NULL. */
static inline void *tsr_comm_attachment(const tessera_comm_t *c, void (*close)(void *obj)) {
  return c->attached_close == close ? c->attached : NULL;
}

/** Polls `poll(arg)` (1: done, 0: not yet, < 0: a failure status, recorded) until it is done or
 *  the communicator's timeout has passed since the call: spins first (small operations complete
 *  within microseconds), then sleeps between polls. A failure or a timeout breaks the
 *  communicator; `what` names the operation in the timeout's message. */
int tsr_comm_wait(tessera_comm_t *c, int (*poll)(void *arg), void *arg, const char *what);

/* Host transports: MPI (mpi/host.c) and Gloo over a caller's key-value store (gloo/host.c),
 * each one table of the functions below, chosen when the communicator is made (tsr_host_pick).
 * Every function records its failures on `c`; none checks arguments or reads the environment. */

typedef struct tsr_host_ops {
  const char *name; /* "MPI", "Gloo" */
  /** Starts: for MPI (initialised when the program has not) a duplicate of cfg->mpi_comm (NULL:
   *  world), for Gloo a context rendezvoused through cfg->store; the rank and size into c. */
  int (*open)(tessera_comm_t *c, const tessera_comm_config_t *cfg);
  /** Frees what open made (MPI: finalises it when open initialised it and c is not broken). */
  void (*close)(tessera_comm_t *c);
  /** Whether threads other than the caller may call the transport at once. */
  bool (*multithreaded)(const tessera_comm_t *c);
  /** The lowest and highest of `value` over the processes (a collective call). */
  int (*minmax)(tessera_comm_t *c, long value, long *lo, long *hi);
  /** Broadcasts `bytes` bytes of `data` from rank 0 (a collective call). */
  int (*share)(tessera_comm_t *c, void *data, size_t bytes);
  /** Gathers `bytes` bytes of `mine` from every process into `all` (size * bytes, in rank
   *  order) on every process (a collective call). */
  int (*gather_all)(tessera_comm_t *c, const void *mine, void *all, size_t bytes);
  /** Runs one operation on host buffers to completion, on the communicator's own channel (chan
   *  NULL) or on a queue's, within c->timeout_s. */
  int (*run)(tessera_comm_t *c, tsr_host_chan_t *chan, const tsr_coll_t *op);
  /** A channel of its own (made collectively, like MPI_Comm_dup) and its end. */
  int (*chan_open)(tessera_comm_t *c, tsr_host_chan_t **chan);
  void (*chan_close)(tessera_comm_t *c, tsr_host_chan_t *chan);
  /** Posts, on `chan`, a nonblocking send (or receive when `receive`) of the rows x cols block
   *  at ptr (leading dimension ld, elements of elsize bytes) to (from) `peer` with `tag`. */
  int (*post)(tessera_comm_t *c, tsr_host_chan_t *chan, bool receive, void *ptr, size_t rows,
              size_t cols, size_t ld, size_t elsize, int peer, int tag, tsr_host_req_t **req);
  /** 1 when the transfer is done (the request is then freed), 0 while it is not, or a failure
   *  (freed as well). Never blocks. */
  int (*test)(tessera_comm_t *c, tsr_host_req_t *req);
  /** Withdraws a posted transfer (waiting up to `wait_s` seconds for it to end, cancelled or
   *  done) and frees it: its buffer is then the transport's no more. Returns 0, or -1 when it
   *  did not end (left to the transport: a peer still sending into it). */
  int (*cancel)(tessera_comm_t *c, tsr_host_req_t *req, double wait_s);
  /** The largest tag the transport accepts. */
  int (*tag_limit)(const tessera_comm_t *c);
  /** The library's version line into buf. */
  void (*describe)(char *buf, size_t len);
} tsr_host_ops_t;

/** The transports' tables: NULL for one this build does not have (mpi/absent.c,
 *  gloo/absent.c). */
const tsr_host_ops_t *tsr_mpi_host(void);
const tsr_host_ops_t *tsr_gloo_host(void);

/* The calls of the layers above, through the communicator's table. */
static inline bool tsr_host_multithreaded(const tessera_comm_t *c) {
  return c->host->multithreaded(c);
}
static inline int tsr_host_minmax(tessera_comm_t *c, long value, long *lo, long *hi) {
  return c->host->minmax(c, value, lo, hi);
}
static inline int tsr_host_share(tessera_comm_t *c, void *data, size_t bytes) {
  return c->host->share(c, data, bytes);
}
static inline int tsr_host_gather_all(tessera_comm_t *c, const void *mine, void *all,
                                      size_t bytes) {
  return c->host->gather_all(c, mine, all, bytes);
}
static inline int tsr_host_run(tessera_comm_t *c, tsr_host_chan_t *chan, const tsr_coll_t *op) {
  return c->host->run(c, chan, op);
}
static inline int tsr_host_chan_open(tessera_comm_t *c, tsr_host_chan_t **chan) {
  return c->host->chan_open(c, chan);
}
static inline void tsr_host_chan_close(tessera_comm_t *c, tsr_host_chan_t *chan) {
  if (chan) c->host->chan_close(c, chan);
}
static inline int tsr_host_post(tessera_comm_t *c, tsr_host_chan_t *chan, bool receive, void *ptr,
                                size_t rows, size_t cols, size_t ld, size_t elsize, int peer,
                                int tag, tsr_host_req_t **req) {
  return c->host->post(c, chan, receive, ptr, rows, cols, ld, elsize, peer, tag, req);
}
static inline int tsr_host_test(tessera_comm_t *c, tsr_host_req_t *req) {
  return c->host->test(c, req);
}
static inline int tsr_host_cancel(tessera_comm_t *c, tsr_host_req_t *req, double wait_s) {
  return c->host->cancel(c, req, wait_s);
}
static inline int tsr_host_tag_limit(const tessera_comm_t *c) {
  return c->host->tag_limit(c);
}

/** The name of a host operation for messages ("A broadcast", ...). */
const char *tsr_coll_name(tsr_coll_kind_t k);

/* Device transport (nccl/device.c; absent without NCCL: tsr_nccl_built() is false). */

bool tsr_nccl_built(void);
/** Makes the NCCL communicator over every endpoint of every process, and per local GPU a stream
 *  and scratch for calls without a queue. */
int tsr_nccl_open(tessera_comm_t *c);
void tsr_nccl_close(tessera_comm_t *c);
/** The CUDA device holding `ptr`, or -1 for host memory. */
int tsr_nccl_device_of(const void *ptr);
/** Runs ops[i] on local GPU i for every i (one NCCL group), enqueued on CUDA stream
 *  streams[i], or when `streams` is NULL on the communicator's streams, waited for within
 *  c->timeout_s. */
int tsr_nccl_run(tessera_comm_t *c, const tsr_coll_t *ops, void *const *streams);
/** Runs op on the one local GPU `device` only (send, recv), on `stream` (NULL: the
 *  communicator's, waited for); with op NULL, waits for `stream` within c->timeout_s. */
int tsr_nccl_run_one(tessera_comm_t *c, int device, const tsr_coll_t *op, void *stream);
void tsr_nccl_describe(char *buf, size_t len);

/** A tile transfer between device endpoints in flight (nccl/device.c). */
typedef struct tsr_nccl_req tsr_nccl_req_t;
/** Opens the tile channel once (later calls return 0): per local GPU a NCCL communicator of its
 *  own, split from the communicator's, and a stream, with every pair of endpoints connected
 *  (so no later transfer blocks its thread connecting). A collective call. */
int tsr_nccl_p2p_open(tessera_comm_t *c);
/** Posts on the tile channel of local GPU `device` (current on the calling thread) a send (or
 *  a receive) of the rows x cols block at device pointer ptr (leading dimension ld, elements
 *  of elsize bytes; a strided block travels through a packed copy on the channel's stream) to
 * (from) endpoint `peer`, after the work enqueued so far on stream `after`. The channel's
 * operations run in the order posted: the caller orders them alike on every process. */
int tsr_nccl_p2p_post(tessera_comm_t *c, int device, bool receive, void *ptr, size_t rows,
                      size_t cols, size_t ld, size_t elsize, int peer, void *after,
                      tsr_nccl_req_t **req);
/** 1 when the transfer is done (the request is then freed), 0 while it is not, or a failure
 *  (freed as well). Any thread. */
int tsr_nccl_p2p_test(tessera_comm_t *c, tsr_nccl_req_t *req);

#endif
