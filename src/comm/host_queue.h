/* The queues of the collectives API (tessera_comm_queue_t): a device queue is a caller's CUDA
 * stream, on which the device transport enqueues; a host queue is a thread of its own running
 * host operations in order on a channel of its own (host_queue.c). This header stands on the
 * transport header (transport.h); only the API (comm.c) and the host queues include it. */
#ifndef TSR_COMM_HOST_QUEUE_H
#define TSR_COMM_HOST_QUEUE_H

#include <pthread.h>
#include <stdbool.h>

#include "comm/transport.h"

struct tessera_comm_queue {
  tessera_comm_t *comm;
  int device;   /* -1: a host queue */
  void *stream; /* a device queue's CUDA stream */
  /* host queues: a thread runs the operations in order on a channel of their own */
  tsr_host_chan_t *chan;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  tsr_coll_t *ring;
  size_t cap, head, tail; /* operations ring[head .. tail) wait; `running` one is under way */
  bool running, stop;
  int status; /* the first failure not yet reported by a sync */
};

/** Starts the thread of host queue `q` (its comm and chan set). Returns 0 or a status, with a
 *  message on the communicator. */
int tsr_host_queue_start(tessera_comm_queue_t *q);
/** Puts one host operation on the queue, after those put before it. Returns 0 or
 *  TESSERA_ERR_NOMEM. Any thread. */
int tsr_host_queue_put(tessera_comm_queue_t *q, const tsr_coll_t *op);
/** Waits for the queue's operations; returns and clears the first failure. Any thread. */
int tsr_host_queue_wait(tessera_comm_queue_t *q);
/** Waits, stops the thread and frees what tsr_host_queue_start made; returns the first failure
 *  not yet reported. */
int tsr_host_queue_stop(tessera_comm_queue_t *q);

#endif
