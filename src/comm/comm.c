#define _POSIX_C_SOURCE 200809L
/* The collectives API (tessera/comm.h): communicators, queues, and the checks every operation
 * passes before a transport sees it. Host buffers go to MPI (mpi/host.c), device buffers to NCCL
 * (nccl/device.c); a host queue's operations go through its thread (host_queue.c). Host buffers go
 * to MPI, or to Gloo when the communicator is made over a key-value store: one table of functions
 * each (tsr_host_ops_t), chosen here. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm/host_queue.h"
#include "tessera/context.h"

const char *tessera_comm_last_error(const tessera_comm_t *comm) {
  return comm ? comm->errmsg : "There is no communicator (NULL).";
}

int tessera_comm_describe(char *buf, size_t len) {
  const tsr_host_ops_t *mpi = tsr_mpi_host(), *gloo = tsr_gloo_host();
  if (!buf || len == 0) return mpi || gloo ? 1 : 0;
  char m[160] = "no MPI (no communicator from mpirun)", g[96] = "no Gloo (no communicator "
                                                                "over a key-value store)";
  char nccl[96] = "no NCCL (device buffers not served)";
  if (mpi) mpi->describe(m, sizeof m);
  if (gloo) gloo->describe(g, sizeof g);
  if (tsr_nccl_built()) tsr_nccl_describe(nccl, sizeof nccl);
  snprintf(buf, len, "%s; %s; %s", m, g, nccl);
  return mpi || gloo ? 1 : 0;
}

/* The host transport of a configuration: Gloo over cfg->store, else MPI; NULL (with the sentence
 * in c) when this build lacks it. */
static const tsr_host_ops_t *pick_host(tessera_comm_t *c, const tessera_comm_config_t *cfg) {
  const tsr_host_ops_t *t = cfg->store ? tsr_gloo_host() : tsr_mpi_host();
  if (!t)
    tsr_comm_error(c, TESSERA_ERR_UNSUPPORTED,
                   cfg->store ? "A communicator over a key-value store needs Gloo, and tessera "
                                "was built without Gloo (install libgloo-dev and rebuild)."
                              : "Communicators need MPI (or a key-value store with Gloo), and "
                                "tessera was built without MPI (install OpenMPI's development "
                                "files and rebuild).");
  return t;
}

/* The timeout from the configuration, else TESSERA_COMM_TIMEOUT (its default when unset); -1
 * with the sentence in why when the variable is malformed. */
static double timeout_of(const tessera_comm_config_t *cfg, char *why, size_t len) {
  if (cfg->timeout_s > 0) return cfg->timeout_s;
  double s = -1;
  return tessera_setting_number("TESSERA_COMM_TIMEOUT", &s, why, len) ? -1 : s;
}

static void say(const tessera_comm_config_t *cfg, const char *text) {
  if (cfg->error && cfg->error_len) snprintf(cfg->error, cfg->error_len, "%s", text);
}

int tessera_comm_create(const tessera_comm_config_t *cfg_in, tessera_comm_t **comm) {
  const tessera_comm_config_t none = {0};
  const tessera_comm_config_t *cfg = cfg_in ? cfg_in : &none;
  if (!comm) return -2;
  *comm = NULL;
  if (cfg->ndevices < 0 || cfg->ndevices > TSR_COMM_MAX_DEVICES || cfg->timeout_s < 0 ||
      (cfg->ndevices > 0 && !tsr_nccl_built())) {
    say(cfg, cfg->ndevices > 0 && cfg->ndevices <= TSR_COMM_MAX_DEVICES && cfg->timeout_s >= 0
                 ? "Device collectives need NCCL, which this build of tessera does not have."
                 : "The communicator's configuration is invalid: ndevices must be 0 to 16 and "
                   "the timeout not negative.");
    return cfg->ndevices > 0 && cfg->ndevices <= TSR_COMM_MAX_DEVICES && cfg->timeout_s >= 0
               ? TESSERA_ERR_UNSUPPORTED
               : -1;
  }
  const tessera_comm_store_t *kv = cfg->store;
  if (kv && (!kv->set || !kv->get || !kv->prefix || kv->size < 1 || kv->rank < 0 ||
             kv->rank >= kv->size)) {
    say(cfg, "The key-value store is invalid: set, get and prefix must be given, size positive "
             "and rank from 0 to size - 1.");
    return -1;
  }
  char why[200] = "";
  const double timeout = timeout_of(cfg, why, sizeof why);
  if (timeout < 0) {
    say(cfg, why);
    return TESSERA_ERR_ENV;
  }
  tessera_comm_t *c = calloc(1, sizeof *c);
  if (!c) return TESSERA_ERR_NOMEM;
  pthread_mutex_init(&c->err_lock, NULL);
  c->timeout_s = timeout;
  c->ndevices = cfg->ndevices;
  for (int i = 0; i < cfg->ndevices; i++) c->devices[i] = cfg->devices ? cfg->devices[i] : i;
  c->host = pick_host(c, cfg);
  int rc = c->host ? c->host->open(c, cfg) : TESSERA_ERR_UNSUPPORTED;
  if (rc == 0) {
    /* every process must drive as many GPUs: the endpoints' numbering depends on it */
    long lo = 0, hi = 0;
    rc = tsr_host_minmax(c, c->ndevices, &lo, &hi);
    if (rc == 0 && lo != hi)
      rc = tsr_comm_error(c, -1,
                          "The processes ask for different numbers of GPUs (from %ld to %ld): "
                          "ndevices must be the same on every process.",
                          lo, hi);
    if (rc == 0 && c->ndevices > 0) rc = tsr_nccl_open(c);
    if (rc) c->host->close(c);
  }
  if (rc) {
    say(cfg, c->errmsg);
    pthread_mutex_destroy(&c->err_lock);
    free(c);
    return rc;
  }
  *comm = c;
  return 0;
}

int tessera_comm_destroy(tessera_comm_t *comm) {
  if (!comm) return 0;
  if (atomic_load(&comm->queues) > 0)
    return tsr_comm_error(comm, TESSERA_ERR_STATE,
                          "The communicator still has %d queue(s): destroy them first.",
                          atomic_load(&comm->queues));
  if (comm->attached_close) comm->attached_close(comm->attached);
  if (comm->nccl) tsr_nccl_close(comm);
  comm->host->close(comm);
  pthread_mutex_destroy(&comm->err_lock);
  free(comm);
  return 0;
}

int tessera_comm_rank(const tessera_comm_t *comm) {
  return comm ? comm->rank : -1;
}
int tessera_comm_size(const tessera_comm_t *comm) {
  return comm ? comm->size : -1;
}
int tessera_comm_devices(const tessera_comm_t *comm) {
  return comm ? comm->ndevices : -1;
}

static int broken(tessera_comm_t *c) {
  return tsr_comm_error(c, TESSERA_ERR_STATE,
                        "The communicator is broken by an earlier failure or timeout: only "
                        "tessera_comm_destroy is left.");
}

int tessera_comm_queue_create(tessera_comm_t *comm, int device, void *cuda_stream,
                              tessera_comm_queue_t **queue) {
  if (!comm) return -1;
  if (!queue) return tsr_comm_error(comm, -4, "The queue's address is NULL.");
  *queue = NULL;
  if (atomic_load(&comm->broken)) return broken(comm);
  if (cuda_stream && (device < 0 || device >= comm->ndevices))
    return tsr_comm_error(comm, -2,
                          "Device %d is not one of the %d GPU(s) the communicator drives.", device,
                          comm->ndevices);
  if (!cuda_stream && !tsr_host_multithreaded(comm))
    return tsr_comm_error(comm, TESSERA_ERR_UNSUPPORTED,
                          "A host queue calls %s from a thread of its own, which needs MPI "
                          "initialised with MPI_THREAD_MULTIPLE.",
                          comm->host->name);
  tessera_comm_queue_t *q = calloc(1, sizeof *q);
  if (!q) return tsr_comm_error(comm, TESSERA_ERR_NOMEM, "Out of memory for a queue.");
  q->comm = comm;
  q->device = cuda_stream ? device : -1;
  q->stream = cuda_stream;
  if (!cuda_stream) {
    int rc = tsr_host_chan_open(comm, &q->chan);
    if (rc == 0) rc = tsr_host_queue_start(q);
    if (rc) {
      tsr_host_chan_close(comm, q->chan);
      free(q);
      return rc;
    }
  }
  atomic_fetch_add(&comm->queues, 1);
  *queue = q;
  return 0;
}

int tessera_comm_queue_sync(tessera_comm_queue_t *queue) {
  if (!queue) return -1;
  if (queue->device >= 0) return tsr_nccl_run_one(queue->comm, queue->device, NULL, queue->stream);
  return tsr_host_queue_wait(queue);
}

int tessera_comm_queue_destroy(tessera_comm_queue_t *queue) {
  if (!queue) return 0;
  int rc = tessera_comm_queue_sync(queue);
  if (queue->device < 0) {
    int stop = tsr_host_queue_stop(queue);
    rc = rc ? rc : stop;
    tsr_host_chan_close(queue->comm, queue->chan);
  }
  atomic_fetch_sub(&queue->comm->queues, 1);
  free(queue);
  return rc;
}

/* Argument positions of one operation's call, for its messages. */
typedef struct {
  int send, buf, count, type, op, rank, queue;
} positions_t;

/* Checks what every operation shares: the communicator, count, type, reduction, rank. */
static int check_common(tessera_comm_t *c, const tsr_coll_t *op, positions_t at, int endpoints) {
  if (atomic_load(&c->broken)) return broken(c);
  if ((int)op->type < 0 || (int)op->type > TESSERA_COMM_I64)
    return tsr_comm_error(c, -at.type, "The element type %d is not a tessera_comm_type_t.",
                          (int)op->type);
  const size_t blocks =
      op->kind == TSR_COLL_ALLGATHER || op->kind == TSR_COLL_REDUCE_SCATTER ? (size_t)endpoints : 1;
  if (op->count > (size_t)INT_MAX / blocks)
    return tsr_comm_error(c, -at.count,
                          "A count of %zu elements is more than one operation carries (%d).",
                          op->count, INT_MAX / (int)blocks);
  const bool reduces = op->kind == TSR_COLL_ALLREDUCE || op->kind == TSR_COLL_REDUCE ||
                       op->kind == TSR_COLL_REDUCE_SCATTER;
  if (reduces && ((int)op->op < 0 || (int)op->op > TESSERA_MAX))
    return tsr_comm_error(c, -at.op, "The reduction %d is not a tessera_reduce_t.", (int)op->op);
  if (reduces && (op->op == TESSERA_MIN || op->op == TESSERA_MAX) &&
      (op->type == TESSERA_COMM_C64 || op->type == TESSERA_COMM_C128))
    return tsr_comm_error(c, -at.op, "MIN and MAX have no meaning for complex numbers.");
  const bool ranked = op->kind == TSR_COLL_BROADCAST || op->kind == TSR_COLL_REDUCE ||
                      op->kind == TSR_COLL_SEND || op->kind == TSR_COLL_RECV;
  if (ranked && (op->rank < 0 || op->rank >= endpoints))
    return tsr_comm_error(c, -at.rank, "Rank %d is out of range: the call spans %d %s.", op->rank,
                          endpoints, endpoints == c->size ? "processes" : "endpoints");
  return 0;
}

/* Whether each buffer the operation needs is there. */
static int check_buffers(tessera_comm_t *c, const tsr_coll_t *op, positions_t at) {
  if (op->count == 0 || op->kind == TSR_COLL_BARRIER) return 0;
  const bool reads = op->kind != TSR_COLL_BROADCAST && op->kind != TSR_COLL_RECV;
  const bool writes =
      op->kind != TSR_COLL_SEND && !(op->kind == TSR_COLL_REDUCE && c->rank != op->rank);
  if (reads && !op->send)
    return tsr_comm_error(c, -at.send, "The buffer to send is NULL with a count of %zu.",
                          op->count);
  if (writes && !op->buf)
    return tsr_comm_error(c, -at.buf, "The buffer to receive into is NULL with a count of %zu.",
                          op->count);
  return 0;
}

/* The GPU (local index) of the operation's buffers, -1 for host buffers, or -2 when they are of
 * different kinds or on a GPU the communicator does not drive (an error recorded on c). */
static int local_device(tessera_comm_t *c, const tsr_coll_t *op) {
  const void *p[2] = {op->send, op->buf};
  int dev = -3;
  for (int i = 0; i < 2; i++) {
    if (!p[i] || op->count == 0) continue;
    int d = tsr_nccl_built() ? tsr_nccl_device_of(p[i]) : -1;
    int local = -1;
    for (int j = 0; d >= 0 && j < c->ndevices; j++)
      if (c->devices[j] == d) local = j;
    if (d >= 0 && local < 0)
      return tsr_comm_error(c, -2, "A buffer is on GPU %d, which the communicator does not drive.",
                            d);
    if (dev != -3 && dev != local)
      return tsr_comm_error(c, -2,
                            "The buffers of one call must all be host memory or all on "
                            "one GPU.");
    dev = local;
  }
  return dev == -3 ? -1 : dev;
}

/* Checks an operation of the plain (one endpoint) forms and runs it. */
static int submit(tessera_comm_t *c, const tsr_coll_t *op, tessera_comm_queue_t *q,
                  positions_t at) {
  if (!c) return -1;
  const int dev = local_device(c, op);
  if (dev < -1) return dev == -2 ? -2 : dev;
  const int endpoints = dev >= 0 ? c->size * c->ndevices : c->size;
  int rc = check_common(c, op, at, endpoints);
  if (rc == 0) rc = check_buffers(c, op, at);
  if (rc) return rc;
  if (q && q->comm != c)
    return tsr_comm_error(c, -at.queue, "The queue belongs to another communicator.");
  if (q && q->device != dev)
    return tsr_comm_error(c, -at.queue,
                          dev < 0 ? "Host buffers need a host queue (made with no CUDA stream)."
                                  : "Device buffers need a queue on their GPU's stream.");
  if (dev < 0) return q ? tsr_host_queue_put(q, op) : tsr_host_run(c, NULL, op);
  const bool p2p = op->kind == TSR_COLL_SEND || op->kind == TSR_COLL_RECV;
  if (c->ndevices > 1 && !p2p)
    return tsr_comm_error(c, TESSERA_ERR_STATE,
                          "The communicator drives %d GPUs in this process: device collectives "
                          "take a buffer per GPU (the _group forms).",
                          c->ndevices);
  if (p2p) return tsr_nccl_run_one(c, dev, op, q ? q->stream : NULL);
  return tsr_nccl_run(c, op, q ? &q->stream : NULL);
}

/* Checks a group operation (ops[i] on local GPU i) and runs it. */
static int submit_group(tessera_comm_t *c, tsr_coll_t *ops, tessera_comm_queue_t *const *queues,
                        positions_t at) {
  if (!c) return -1;
  if (c->ndevices == 0 || !c->nccl)
    return tsr_comm_error(c, TESSERA_ERR_UNSUPPORTED,
                          "The communicator drives no GPU: group forms take device buffers.");
  for (int i = 0; i < c->ndevices; i++) {
    int rc = check_common(c, &ops[i], at, c->size * c->ndevices);
    if (rc == 0) rc = check_buffers(c, &ops[i], at);
    if (rc == 0 && local_device(c, &ops[i]) != i && ops[i].count > 0)
      rc = tsr_comm_error(c, -at.buf, "Buffer %d of the group is not on the group's GPU %d.", i,
                          c->devices[i]);
    if (rc == 0 && queues && (!queues[i] || queues[i]->comm != c || queues[i]->device != i))
      rc = tsr_comm_error(c, -at.queue,
                          "Queue %d of the group is not a queue of GPU %d of this "
                          "communicator.",
                          i, c->devices[i]);
    if (rc) return rc;
  }
  void *streams[TSR_COMM_MAX_DEVICES];
  for (int i = 0; queues && i < c->ndevices; i++) streams[i] = queues[i]->stream;
  return tsr_nccl_run(c, ops, queues ? streams : NULL);
}

/* The operations. Positions count the communicator as 1. */

int tessera_comm_broadcast(tessera_comm_t *comm, void *buf, size_t count, tessera_comm_type_t type,
                           int root, tessera_comm_queue_t *queue) {
  tsr_coll_t op = {TSR_COLL_BROADCAST, buf, buf, count, type, TESSERA_SUM, root};
  return submit(comm, &op, queue, (positions_t){2, 2, 3, 4, 0, 5, 6});
}

int tessera_comm_allreduce(tessera_comm_t *comm, const void *send, void *recv, size_t count,
                           tessera_comm_type_t type, tessera_reduce_t op,
                           tessera_comm_queue_t *queue) {
  tsr_coll_t o = {TSR_COLL_ALLREDUCE, send, recv, count, type, op, 0};
  return submit(comm, &o, queue, (positions_t){2, 3, 4, 5, 6, 0, 7});
}

int tessera_comm_reduce(tessera_comm_t *comm, const void *send, void *recv, size_t count,
                        tessera_comm_type_t type, tessera_reduce_t op, int root,
                        tessera_comm_queue_t *queue) {
  tsr_coll_t o = {TSR_COLL_REDUCE, send, recv, count, type, op, root};
  return submit(comm, &o, queue, (positions_t){2, 3, 4, 5, 6, 7, 8});
}

int tessera_comm_allgather(tessera_comm_t *comm, const void *send, void *recv, size_t count,
                           tessera_comm_type_t type, tessera_comm_queue_t *queue) {
  tsr_coll_t o = {TSR_COLL_ALLGATHER, send, recv, count, type, TESSERA_SUM, 0};
  return submit(comm, &o, queue, (positions_t){2, 3, 4, 5, 0, 0, 6});
}

int tessera_comm_reduce_scatter(tessera_comm_t *comm, const void *send, void *recv, size_t count,
                                tessera_comm_type_t type, tessera_reduce_t op,
                                tessera_comm_queue_t *queue) {
  tsr_coll_t o = {TSR_COLL_REDUCE_SCATTER, send, recv, count, type, op, 0};
  return submit(comm, &o, queue, (positions_t){2, 3, 4, 5, 6, 0, 7});
}

int tessera_comm_send(tessera_comm_t *comm, const void *buf, size_t count, tessera_comm_type_t type,
                      int peer, tessera_comm_queue_t *queue) {
  tsr_coll_t o = {TSR_COLL_SEND, buf, NULL, count, type, TESSERA_SUM, peer};
  return submit(comm, &o, queue, (positions_t){2, 2, 3, 4, 0, 5, 6});
}

int tessera_comm_recv(tessera_comm_t *comm, void *buf, size_t count, tessera_comm_type_t type,
                      int peer, tessera_comm_queue_t *queue) {
  tsr_coll_t o = {TSR_COLL_RECV, NULL, buf, count, type, TESSERA_SUM, peer};
  return submit(comm, &o, queue, (positions_t){2, 2, 3, 4, 0, 5, 6});
}

int tessera_comm_barrier(tessera_comm_t *comm, tessera_comm_queue_t *queue) {
  tsr_coll_t o = {TSR_COLL_BARRIER, NULL, NULL, 0, TESSERA_COMM_I32, TESSERA_SUM, 0};
  if (queue && queue->device >= 0 && comm && queue->comm == comm) {
    if (comm->ndevices > 1)
      return tsr_comm_error(comm, TESSERA_ERR_STATE,
                            "The communicator drives %d GPUs in this process: a device barrier "
                            "needs a queue per GPU (tessera_comm_allreduce_group of nothing "
                            "orders them all).",
                            comm->ndevices);
    return tsr_nccl_run(comm, &o, &queue->stream);
  }
  return submit(comm, &o, queue, (positions_t){0, 0, 0, 0, 0, 0, 2});
}

/* Group forms: one operation per local GPU, ops[i] on send[i] and recv[i]. */
static int group(tessera_comm_t *comm, tsr_coll_kind_t kind, const void *const *send,
                 void *const *recv, size_t count, tessera_comm_type_t type, tessera_reduce_t op,
                 int rank, tessera_comm_queue_t *const *queues, positions_t at) {
  if (!comm) return -1;
  if (!send || !recv)
    return tsr_comm_error(comm, -at.send, "The arrays of buffers (one per GPU) must not be NULL.");
  tsr_coll_t ops[TSR_COMM_MAX_DEVICES];
  for (int i = 0; i < comm->ndevices; i++)
    ops[i] = (tsr_coll_t){kind, send[i], recv[i], count, type, op, rank};
  return submit_group(comm, ops, queues, at);
}

int tessera_comm_broadcast_group(tessera_comm_t *comm, void *const *bufs, size_t count,
                                 tessera_comm_type_t type, int root,
                                 tessera_comm_queue_t *const *queues) {
  return group(comm, TSR_COLL_BROADCAST, (const void *const *)bufs, bufs, count, type, TESSERA_SUM,
               root, queues, (positions_t){2, 2, 3, 4, 0, 5, 6});
}

int tessera_comm_allreduce_group(tessera_comm_t *comm, const void *const *send, void *const *recv,
                                 size_t count, tessera_comm_type_t type, tessera_reduce_t op,
                                 tessera_comm_queue_t *const *queues) {
  return group(comm, TSR_COLL_ALLREDUCE, send, recv, count, type, op, 0, queues,
               (positions_t){2, 3, 4, 5, 6, 0, 7});
}

int tessera_comm_reduce_group(tessera_comm_t *comm, const void *const *send, void *const *recv,
                              size_t count, tessera_comm_type_t type, tessera_reduce_t op, int root,
                              tessera_comm_queue_t *const *queues) {
  return group(comm, TSR_COLL_REDUCE, send, recv, count, type, op, root, queues,
               (positions_t){2, 3, 4, 5, 6, 7, 8});
}

int tessera_comm_allgather_group(tessera_comm_t *comm, const void *const *send, void *const *recv,
                                 size_t count, tessera_comm_type_t type,
                                 tessera_comm_queue_t *const *queues) {
  return group(comm, TSR_COLL_ALLGATHER, send, recv, count, type, TESSERA_SUM, 0, queues,
               (positions_t){2, 3, 4, 5, 0, 0, 6});
}

int tessera_comm_reduce_scatter_group(tessera_comm_t *comm, const void *const *send,
                                      void *const *recv, size_t count, tessera_comm_type_t type,
                                      tessera_reduce_t op, tessera_comm_queue_t *const *queues) {
  return group(comm, TSR_COLL_REDUCE_SCATTER, send, recv, count, type, op, 0, queues,
               (positions_t){2, 3, 4, 5, 6, 0, 7});
}
