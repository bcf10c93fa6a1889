/* The communication layer's insides: the communicator, its queues, one operation as a value, and
 * the two transports under them (mpi/host.c for host buffers, nccl/device.c for device buffers).
 *
 * comm.c checks every call's arguments and hands a checked operation to a transport; queue.c
 * runs host operations in order on a thread of the queue; base.c is the ground all of them
 * stand on (messages, deadlines). A transport never checks arguments
 * and never reads the environment. */
#ifndef TSR_COMM_COMM_H
#define TSR_COMM_COMM_H

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

typedef struct tsr_mpi tsr_mpi_t;   /* mpi/host.c */
typedef struct tsr_nccl tsr_nccl_t; /* nccl/device.c */
typedef struct tsr_mpi_chan
    tsr_mpi_chan_t;                 /* an MPI communicator of its own (one per host queue) */
typedef struct tsr_dist tsr_dist_t; /* dist.c: transfers of distributed tiles */

struct tessera_comm {
  int rank, size, ndevices;
  int devices[TSR_COMM_MAX_DEVICES];
  double timeout_s;
  tsr_mpi_t *mpi;
  tsr_nccl_t *nccl;                      /* NULL without device endpoints */
  tsr_dist_t *dist;                      /* made with the first distributed matrix (dist.c) */
  void (*dist_close)(tessera_comm_t *c); /* set with `dist`: stops it (destroy calls it) */
  atomic_bool broken; /* a wait timed out or a transport failed: only destroy is left */
  atomic_int queues;  /* queues made and not destroyed */
  pthread_mutex_t err_lock;
  char errmsg[TSR_COMM_ERRMSG];
};

struct tessera_comm_queue {
  tessera_comm_t *comm;
  int device; /* -1: a host queue */
  void *stream;
  /* host queues: a thread runs the operations in order on a channel of their own */
  tsr_mpi_chan_t *chan;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  tsr_coll_t *ring;
  size_t cap, head, tail; /* operations ring[head .. tail) wait; `running` one is under way */
  bool running, stop;
  int status; /* the first failure not yet reported by a sync */
};

/** Records a message for tessera_comm_last_error and returns `status`. */
int tsr_comm_error(tessera_comm_t *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Marks the communicator broken after a failed or timed-out operation; returns `status`. */
int tsr_comm_break(tessera_comm_t *c, int status);

/** Polls `poll(arg)` (1: done, 0: not yet, < 0: a failure status, recorded) until it is done or
 *  the communicator's timeout has passed since the call: spins first (small operations complete
 *  within microseconds), then sleeps between polls. A failure or a timeout breaks the
 *  communicator; `what` names the operation in the timeout's message. */
int tsr_comm_wait(tessera_comm_t *c, int (*poll)(void *arg), void *arg, const char *what);

/* Host transport (mpi/host.c). Every function records its failures on `c`. */

/** Whether this build has MPI (mpi/host.c) rather than mpi/absent.c. */
bool tsr_mpi_built(void);
/** Starts: MPI (initialised when the program has not), a duplicate of `mpi_comm` (NULL: world),
 *  the rank and size into c. */
int tsr_mpi_open(tessera_comm_t *c, const void *mpi_comm);
/** Frees the duplicate; finalises MPI when tsr_mpi_open initialised it and c is not broken. */
void tsr_mpi_close(tessera_comm_t *c);
/** Whether threads other than the caller may call MPI (MPI_THREAD_MULTIPLE). */
bool tsr_mpi_multithreaded(const tessera_comm_t *c);
/** The lowest and highest of `value` over the processes (a collective call). */
int tsr_mpi_minmax(tessera_comm_t *c, long value, long *lo, long *hi);
/** Broadcasts `bytes` bytes of `data` from rank 0 (a collective call). */
int tsr_mpi_share(tessera_comm_t *c, void *data, size_t bytes);
/** Gathers `bytes` bytes of `mine` from every process into `all` (size * bytes, in rank order)
 *  on every process (a collective call). */
int tsr_mpi_gather_all(tessera_comm_t *c, const void *mine, void *all, size_t bytes);
/** Runs one operation on host buffers to completion, on the communicator's own MPI
 *  communicator (chan NULL) or on a queue's channel, within c->timeout_s. */
int tsr_mpi_run(tessera_comm_t *c, tsr_mpi_chan_t *chan, const tsr_coll_t *op);
/** A channel (an MPI communicator of its own, duplicated collectively) and its end. */
int tsr_mpi_chan_open(tessera_comm_t *c, tsr_mpi_chan_t **chan);
void tsr_mpi_chan_close(tsr_mpi_chan_t *chan);
/** The MPI library's version line into buf. */
void tsr_mpi_describe(char *buf, size_t len);

/** A point-to-point transfer in flight (mpi/host.c). */
typedef struct tsr_mpi_req tsr_mpi_req_t;
/** Posts, on `chan`, a nonblocking send (or receive when `receive`) of the rows x cols block at
 *  ptr (leading dimension ld, elements of elsize bytes) to (from) `peer` with `tag`. */
int tsr_mpi_post(tessera_comm_t *c, tsr_mpi_chan_t *chan, bool receive, void *ptr, size_t rows,
                 size_t cols, size_t ld, size_t elsize, int peer, int tag, tsr_mpi_req_t **req);
/** 1 when the transfer is done (the request is then freed), 0 while it is not, or a failure
 *  (freed as well). */
int tsr_mpi_test(tessera_comm_t *c, tsr_mpi_req_t *req);
/** Withdraws a posted transfer that timed out (MPI_Cancel, then up to `wait_s` seconds for it to
 *  end, cancelled or done) and frees it: its buffer is then MPI's no more. Returns 0, or -1 when
 *  it did not end (left to MPI: a peer still sending into it). */
int tsr_mpi_cancel(tsr_mpi_req_t *req, double wait_s);
/** The largest tag MPI accepts. */
int tsr_mpi_tag_limit(const tessera_comm_t *c);

/* Device transport (nccl/device.c; absent without NCCL: tsr_nccl_built() is false). */

bool tsr_nccl_built(void);
/** Makes the NCCL communicator over every endpoint of every process, and per local GPU a stream
 *  and scratch for calls without a queue. */
int tsr_nccl_open(tessera_comm_t *c);
void tsr_nccl_close(tessera_comm_t *c);
/** The CUDA device holding `ptr`, or -1 for host memory. */
int tsr_nccl_device_of(const void *ptr);
/** Runs ops[i] on local GPU i for every i (one NCCL group), on queues[i]'s stream, or when
 *  `queues` is NULL on the communicator's streams, waited for within c->timeout_s. */
int tsr_nccl_run(tessera_comm_t *c, const tsr_coll_t *ops, tessera_comm_queue_t *const *queues);
/** Runs op on the one local GPU `device` only (send, recv). */
int tsr_nccl_run_one(tessera_comm_t *c, int device, const tsr_coll_t *op,
                     tessera_comm_queue_t *queue);
void tsr_nccl_describe(char *buf, size_t len);

/** A tile transfer between device endpoints in flight (nccl/device.c). */
typedef struct tsr_nccl_req tsr_nccl_req_t;
/** Opens the tile channel once (later calls return 0): per local GPU a NCCL communicator of its
 *  own, split from the communicator's, and a stream, with every pair of endpoints connected
 *  (so no later transfer blocks its thread connecting). A collective call. */
int tsr_nccl_p2p_open(tessera_comm_t *c);
/** Posts on the tile channel of local GPU `device` (current on the calling thread) a send (or
 *  a receive) of `bytes` at device pointer ptr to (from) endpoint `peer`, after the work
 *  enqueued so far on stream `after`. The channel's operations run in the order posted: the
 *  caller orders them alike on every process. */
int tsr_nccl_p2p_post(tessera_comm_t *c, int device, bool receive, void *ptr, size_t bytes,
                      int peer, void *after, tsr_nccl_req_t **req);
/** 1 when the transfer is done (the request is then freed), 0 while it is not, or a failure
 *  (freed as well). Any thread. */
int tsr_nccl_p2p_test(tessera_comm_t *c, tsr_nccl_req_t *req);

/* Host queues (queue.c). */

/** Starts the thread of a host queue. */
int tsr_queue_start(tessera_comm_queue_t *q);
/** Puts one host operation on the queue. */
int tsr_queue_put(tessera_comm_queue_t *q, const tsr_coll_t *op);
/** Waits for the queue's operations; returns and clears the first failure. */
int tsr_queue_wait(tessera_comm_queue_t *q);
/** Waits, stops the thread and frees what tsr_queue_start made. */
int tsr_queue_stop(tessera_comm_queue_t *q);

#endif
