/* Distributed flows: owner-computes insertion and the transfer engine (see dist.h).
 *
 * Transfers are tasks: a send reads the tile on its owner after the tile's last writer there, a
 * receive writes the tile's local copy on the process that runs a reader. Their kernels post a
 * nonblocking transfer and defer their task (tessera_task_defer); the engine's thread polls the
 * transfers and resumes each task when its transfer is done, so no worker ever waits on a
 * message. A transfer fails its flow and breaks the communicator when it has waited longer than
 * the communicator's timeout and its peer has shown no progress for as long: the engines send
 * each other heartbeats while their process runs a kernel or finishes tasks (beats.c), so a
 * peer busy in a long task keeps the transfers waiting on it, one stopped lets them fail.
 *
 * Where the tiles travel is agreed by the processes when a context first makes distributed
 * matrices on the communicator (the same everywhere):
 * - host: CPU tasks move host copies over MPI. Messages of one tile between two processes carry
 *   one tag and follow the tile's versions in order (a later version's send waits, through the
 *   tile's dependencies, for the earlier one; its receive for the earlier copy's readers; MPI
 *   does not let messages of one tag and source overtake each other).
 * - device: tasks on GPUs move the device copies over NCCL, straight from GPU to GPU (simulated
 *   devices, which have no NCCL, move theirs over MPI, on the same path otherwise). NCCL has no
 *   tags: a receive takes the next message of its peer, so each process posts its transfers in
 *   the order of the flow, which every process inserts alike. They form one chain per process
 *   (tsr_task_insert_chained): a transfer starts when the one inserted before it has finished.
 *   This cannot deadlock: a task depends only on tasks inserted before it, on every process, so
 *   by induction over the flow's order every transfer's peer posts the matching one. Each
 *   tile's transfers go through one GPU of each process (its tag modulo their count), the
 *   endpoints the peer can name.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "distributed/beats.h"
#include "distributed/dist.h"
#include "runtime/base.h"
#include "runtime/error.h"
#include "runtime/flows.h"

typedef struct {
  tsr_host_req_t *req;  /* a host transfer (MPI or Gloo), or */
  tsr_nccl_req_t *nreq; /* an NCCL one */
  tessera_deferred_t *token;
  double start;
  size_t bytes;
  int peer; /* the other process */
} transfer_t;

/* Where tiles travel (the same on every process). */
enum { XFER_HOST, XFER_SIM, XFER_NCCL };

struct tsr_dist {
  tessera_comm_t *comm;
  tsr_host_chan_t *chan;
  int next_tag, tag_limit;
  /* the context whose distributed matrices live (`live` of them), how its tiles travel, and
   * the chain of its device transfers (inserting thread only) */
  tessera_context_t *ctx;
  int live, mode, gpus;
  tsr_task_link_t chain;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool stop;
  transfer_t *xfer; /* transfers in flight */
  size_t n, cap;
  tsr_beats_t *beats;  /* the engine's thread only */
  long seen_inflight;  /* the bound context's count of tasks in flight at the last look */
  double cancel_until; /* the engine's thread only: when the cancels of failed transfers stop
                          waiting for MPI (0 until the first failure) */
  double link; /* under lock: the fastest device transfer of a MiB or more, bytes/s (0: none) */
};

/* Fails transfer x, on a communicator that is broken (or `why`, a status on it, breaks it):
 * MPI is given until one shared deadline, a second after the first failure, to let go of the
 * buffer, so the transfers of a communicator that broke fail together, not one a second. */
static int fail_transfer(tsr_dist_t *d, const transfer_t *x, int why) {
  const int rc = why ? tsr_comm_break(d->comm, why) : TESSERA_ERR_STATE;
  const double now = tsr_now();
  if (d->cancel_until == 0) d->cancel_until = now + 1.0;
  /* the buffer goes with the failed flow: MPI must be done with it first */
  if (x->req)
    (void)tsr_host_cancel(d->comm, x->req, d->cancel_until > now ? d->cancel_until - now : 0);
  return rc;
}

/* Whether the bound context progressed since the last look: a kernel runs, or its count of
 * tasks in flight moved (tasks finished or were inserted). Under d->lock; asked by the beats
 * only when one is due. */
static bool progressed(void *arg) {
  tsr_dist_t *d = arg;
  if (d->live == 0 || !d->ctx) return false;
  bool running = false;
  const long inflight = tsr_context_progress(d->ctx, &running);
  const bool moved = inflight != d->seen_inflight;
  d->seen_inflight = inflight;
  return moved || running;
}

/* Waits on `cond` for at most `s` seconds. */
static void wait_for(pthread_cond_t *cond, pthread_mutex_t *lock, double s) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  const long ns = ts.tv_nsec + (long)(s * 1e9);
  ts.tv_sec += ns / 1000000000L;
  ts.tv_nsec = ns % 1000000000L;
  pthread_cond_timedwait(cond, lock, &ts);
}

/* Heartbeats every eighth of the timeout, at most every second. */
static double beat_period(const tessera_comm_t *c) {
  return c->timeout_s / 8 < 1.0 ? c->timeout_s / 8 : 1.0;
}

/* The engine: polls the transfers in flight, resumes the finished ones' tasks. */
static void *engine(void *arg) {
  tsr_dist_t *d = arg;
  pthread_mutex_lock(&d->lock);
  while (!d->stop || d->n > 0) {
    tsr_beats_poll(d->beats, progressed, d);
    if (d->n == 0) {
      /* nothing in flight here: still beating while a distributed matrix lives */
      if (d->live == 0)
        pthread_cond_wait(&d->cond, &d->lock);
      else
        wait_for(&d->cond, &d->lock, beat_period(d->comm) / 4);
      continue;
    }
    bool progress = false;
    for (size_t i = 0; i < d->n;) {
      transfer_t x = d->xfer[i];
      int rc = x.req ? tsr_host_test(d->comm, x.req) : tsr_nccl_p2p_test(d->comm, x.nreq);
      const double now = tsr_now(), heard = tsr_beats_heard(d->beats, x.peer);
      if (rc == 0 && atomic_load(&d->comm->broken)) /* another transfer's failure broke it */
        rc = fail_transfer(d, &x, 0);
      else if (rc == 0 && now - x.start > d->comm->timeout_s && now - heard > d->comm->timeout_s)
        rc = fail_transfer(d, &x,
                           tsr_comm_error(d->comm, TESSERA_ERR_TIMEOUT,
                                          "A tile's transfer did not complete within %g s, and "
                                          "process %d showed no progress for as long (no task "
                                          "of its ran or finished): it has not taken part, or "
                                          "waits itself (raise TESSERA_COMM_TIMEOUT when its "
                                          "work outside tessera takes longer).",
                                          d->comm->timeout_s, x.peer));
      if (rc == 0) {
        i++;
        continue;
      }
      d->xfer[i] = d->xfer[--d->n]; /* done or failed: the task goes on */
      progress = true;
      /* a device transfer's time, from its posting to its end, is the link's or more (a send
       * through the host may end before its bytes arrive: no measure) */
      if (rc == 1 && x.nreq && x.bytes >= (1u << 20) && now > x.start &&
          x.bytes / (now - x.start) > d->link)
        d->link = (double)x.bytes / (now - x.start);
      pthread_mutex_unlock(&d->lock);
      tessera_task_resume(x.token, rc == 1 ? 0 : rc);
      pthread_mutex_lock(&d->lock);
    }
    if (!progress) {
      pthread_mutex_unlock(&d->lock);
      nanosleep(&(struct timespec){0, 20000}, NULL);
      pthread_mutex_lock(&d->lock);
    }
  }
  pthread_mutex_unlock(&d->lock);
  return NULL;
}

/* Stops the engine and frees it (tessera_comm_destroy, through the communicator's attachment). */
static void engine_close(void *engine) {
  tsr_dist_t *d = engine;
  tessera_comm_t *c = d->comm;
  pthread_mutex_lock(&d->lock);
  d->stop = true;
  pthread_cond_broadcast(&d->cond);
  pthread_mutex_unlock(&d->lock);
  pthread_join(d->thread, NULL);
  pthread_cond_destroy(&d->cond);
  pthread_mutex_destroy(&d->lock);
  tsr_beats_close(d->beats);
  tsr_host_chan_close(c, d->chan);
  free(d->xfer);
  free(d);
}

/* The communicator's transfer engine, started on first use: it is the communicator's attachment,
 * which tessera_comm_destroy hands back to engine_close. */
static int engine_start(tessera_comm_t *c, tsr_dist_t **out) {
  if ((*out = tsr_comm_attachment(c, engine_close)) != NULL) return 0;
  if (!tsr_host_multithreaded(c))
    return tsr_comm_error(c, TESSERA_ERR_UNSUPPORTED,
                          "Distributed matrices move tiles from threads of tessera's own, which "
                          "needs MPI initialised with MPI_THREAD_MULTIPLE.");
  tsr_dist_t *d = calloc(1, sizeof *d);
  if (!d) return tsr_comm_error(c, TESSERA_ERR_NOMEM, "Out of memory for the transfer engine.");
  d->comm = c;
  d->tag_limit = tsr_host_tag_limit(c); /* the tiles' tags are below it, the beats' is it */
  int rc = tsr_host_chan_open(c, &d->chan);
  if (!rc) rc = tsr_beats_open(c, d->chan, d->tag_limit, beat_period(c), &d->beats);
  if (rc) {
    if (d->chan) tsr_host_chan_close(c, d->chan);
    free(d);
    return rc;
  }
  pthread_mutex_init(&d->lock, NULL);
  pthread_cond_init(&d->cond, NULL);
  if (pthread_create(&d->thread, NULL, engine, d) != 0) {
    tsr_beats_close(d->beats);
    tsr_host_chan_close(c, d->chan);
    free(d);
    return tsr_comm_error(c, TESSERA_ERR_NOMEM, "The transfer engine's thread did not start.");
  }
  rc = tsr_comm_attach(c, d, engine_close);
  if (rc) {
    engine_close(d);
    return rc;
  }
  *out = d;
  return 0;
}

/* How this process could move tiles for ctx: over NCCL when the communicator's GPUs are all
 * GPUs of the context, over MPI from simulated devices when it has them, else through the host.
 * The context's dist_transfers may ask for the host, or for the devices or a failure (-1). */
static int local_mode(tessera_comm_t *c, tessera_context_t *ctx, int *gpus) {
  const tessera_transfers_t want = tessera_config(ctx)->dist_transfers;
  if (want == TESSERA_TRANSFERS_HOST) return XFER_HOST;
  const int host = want == TESSERA_TRANSFERS_DEVICE ? -1 : XFER_HOST;
  if ((*gpus = tessera_device_count(ctx, TESSERA_DEVICE_SIM)) > 0) return XFER_SIM;
  const int cuda = tessera_device_count(ctx, TESSERA_DEVICE_CUDA);
  if (!c->nccl || c->ndevices < 1) return host;
  for (int i = 0; i < c->ndevices; i++)
    if (c->devices[i] >= cuda) return host;
  *gpus = c->ndevices;
  return XFER_NCCL;
}

/* Binds the engine to ctx when no distributed matrix lives: the processes agree how tiles
 * travel, and the chain starts afresh (its last link may be of a context since finalized). */
static int bind_context(tsr_dist_t *d, tessera_context_t *ctx) {
  tessera_comm_t *c = d->comm;
  if (d->live > 0 && d->ctx != ctx)
    return tsr_comm_error(c, TESSERA_ERR_UNSUPPORTED,
                          "The communicator's distributed matrices belong to another context: "
                          "destroy them before making some for this one.");
  if (d->live > 0) return 0;
  int gpus = 0;
  long lo = 0, hi = 0;
  int rc = tsr_host_minmax(c, local_mode(c, ctx, &gpus), &lo, &hi);
  if (rc) return rc;
  if (lo < 0)
    return tsr_comm_error(c, TESSERA_ERR_UNSUPPORTED,
                          "TESSERA_DIST_TRANSFERS=device, but tiles cannot travel between the "
                          "devices of every process: that needs the communicator's GPUs "
                          "(tessera_comm_config_t.devices, over NCCL) among the context's, or "
                          "simulated devices.");
  const int mode = lo == hi ? (int)lo : XFER_HOST;
  if (mode == XFER_NCCL) rc = tsr_nccl_p2p_open(c);
  if (rc) return rc;
  pthread_mutex_lock(&d->lock); /* the engine reads the context's progress */
  d->ctx = ctx;
  pthread_mutex_unlock(&d->lock);
  d->mode = mode;
  d->gpus = gpus;
  d->chain = (tsr_task_link_t){0};
  return 0;
}

double tsr_dist_link(tessera_comm_t *c) {
  tsr_dist_t *d = tsr_comm_attachment(c, engine_close);
  if (!d) return 1.25e9;
  pthread_mutex_lock(&d->lock);
  const double link = d->link, prior = d->mode == XFER_NCCL ? 25e9 : 1.25e9;
  pthread_mutex_unlock(&d->lock);
  return link > 0 ? link : prior;
}

int tsr_dist_tiles(tessera_comm_t *c, tessera_context_t *ctx, size_t count,
                   tsr_dist_tile_t **tiles) {
  tsr_dist_t *d = NULL;
  int rc = engine_start(c, &d);
  if (rc) return rc;
  rc = bind_context(d, ctx);
  if (rc) return rc;
  if ((long long)d->next_tag + (long long)count > d->tag_limit)
    return tsr_comm_error(c, TESSERA_ERR_UNSUPPORTED,
                          "%zu more distributed tiles exceed the %d tags MPI offers.", count,
                          d->tag_limit);
  const size_t bits = ((size_t)c->size + 7) / 8;
  tsr_dist_tile_t *t = calloc(count ? count : 1, sizeof *t + bits);
  if (!t) return tsr_comm_error(c, TESSERA_ERR_NOMEM, "Out of memory for distributed tiles.");
  uint8_t *sent = (uint8_t *)(t + count);
  t[0].d = d; /* also the record of an empty matrix: its free finds the engine there */
  for (size_t i = 0; i < count; i++)
    t[i] = (tsr_dist_tile_t){d, -1, d->next_tag++, sent + i * bits, false};
  pthread_mutex_lock(&d->lock);
  d->live++;
  pthread_cond_broadcast(&d->cond); /* the engine beats while a matrix lives */
  pthread_mutex_unlock(&d->lock);
  *tiles = t;
  return 0;
}

void tsr_dist_tiles_free(tsr_dist_tile_t *tiles) {
  if (tiles) {
    tsr_dist_t *d = tiles[0].d;
    pthread_mutex_lock(&d->lock);
    d->live--;
    pthread_mutex_unlock(&d->lock);
  }
  free(tiles);
}

void tsr_dist_attach(tessera_data_t *h, tsr_dist_tile_t *t) {
  tsr_data_set_record(h, t);
}

tsr_dist_tile_t *tsr_dist_of(const tessera_data_t *h) {
  return tsr_data_record(h);
}

/* ------------------------------------------------------------------------------ transfers */

typedef struct {
  tsr_dist_t *d;
  int peer, tag;
  int slot; /* device transfers: the GPU of each process that carries the tile (its index) */
  bool receive;
  size_t rows, cols, elsize;
} transfer_args_t;

/* Hands a transfer the kernel of `a` posted (req over the host, or nreq over NCCL; rc its
 * status) to the engine, which resumes `token` when it is done. */
static void track(const transfer_args_t *a, tsr_host_req_t *req, tsr_nccl_req_t *nreq,
                  tessera_deferred_t *token, int rc) {
  tsr_dist_t *d = a->d;
  const transfer_t x = {.req = req,
                        .nreq = nreq,
                        .token = token,
                        .start = tsr_now(),
                        .bytes = a->rows * a->cols * a->elsize,
                        .peer = a->peer};
  pthread_mutex_lock(&d->lock);
  if (!rc && d->n == d->cap) {
    size_t cap = d->cap ? 2 * d->cap : 64;
    transfer_t *grown = realloc(d->xfer, cap * sizeof *grown);
    if (grown)
      d->xfer = grown, d->cap = cap;
    else
      rc = TESSERA_ERR_NOMEM; /* the posted transfer is lost with the failed flow */
  }
  if (!rc) {
    d->xfer[d->n++] = x;
    pthread_cond_broadcast(&d->cond);
  }
  pthread_mutex_unlock(&d->lock);
  if (rc) tessera_task_resume(x.token, rc);
}

/* Posts an MPI transfer of the copy the task sees (host memory, or a simulated device's) and
 * defers the task to the engine. */
static int mpi_transfer_kernel(const tessera_exec_t *ex, void *args) {
  const transfer_args_t *a = args;
  tessera_deferred_t *token = tessera_task_defer(ex);
  if (!token) return TESSERA_ERR_KERNEL;
  tsr_host_req_t *req = NULL;
  int rc = tsr_host_post(a->d->comm, a->d->chan, a->receive, ex->ptr[0], a->rows, a->cols,
                         ex->ld[0], a->elsize, a->peer, a->tag, &req);
  track(a, req, NULL, token, rc);
  return 0;
}

/* Posts an NCCL transfer of the GPU copy, after the work on the task's stream (the copy's
 * arrival there), on the tile channel, and defers the task to the engine. */
static int nccl_transfer_kernel(const tessera_exec_t *ex, void *args) {
  const transfer_args_t *a = args;
  tessera_deferred_t *token = tessera_task_defer(ex);
  if (!token) return TESSERA_ERR_KERNEL;
  tsr_nccl_req_t *req = NULL;
  const int peer = a->peer * a->d->comm->ndevices + a->slot;
  int rc = tsr_nccl_p2p_post(a->d->comm, a->slot, a->receive, ex->ptr[0], a->rows, a->cols,
                             ex->ld[0], a->elsize, peer, ex->stream, &req);
  track(a, NULL, req, token, rc);
  return 0;
}

/* Transfers run after a failure too: the other process waits on them (it learns of the failure
 * from the status the processes agree on at the end of the flow). */
static const tessera_kernel_t transfer = {.name = "tile_transfer",
                                          .impl = {[TESSERA_DEVICE_CPU] = mpi_transfer_kernel,
                                                   [TESSERA_DEVICE_SIM] = mpi_transfer_kernel,
                                                   [TESSERA_DEVICE_CUDA] = nccl_transfer_kernel},
                                          .flags = TESSERA_KERNEL_RUNS_AFTER_FAILURE};

static int insert_transfer(tessera_context_t *ctx, tessera_data_t *h, const tsr_dist_tile_t *t,
                           bool receive, int peer) {
  tsr_dist_t *d = t->d;
  const bool device = d->mode != XFER_HOST;
  const int slot = device ? t->tag % d->gpus : 0;
  size_t rows, cols, elsize;
  tsr_data_shape(h, &rows, &cols, &elsize);
  const transfer_args_t a = {d, peer, t->tag, slot, receive, rows, cols, elsize};
  tessera_scope_t scope = tessera_scope_cpus();
  if (d->mode == XFER_SIM) scope = (tessera_scope_t){1u << TESSERA_DEVICE_SIM, 1ull << slot};
  if (d->mode == XFER_NCCL)
    scope = (tessera_scope_t){1u << TESSERA_DEVICE_CUDA, 1ull << d->comm->devices[slot]};
  tessera_task_t task = {.kernel = &transfer,
                         .args = &a,
                         .args_size = sizeof a,
                         .ndata = 1,
                         .data = {h},
                         .mode = {receive ? TESSERA_W : TESSERA_R},
                         .priority = 1 << 20, /* transfers before the compute they feed */
                         .scope = scope,
                         .tag = {t->tag, peer},
                         .ntag = 2};
  return device ? tsr_task_insert_chained(ctx, &task, &d->chain) : tessera_task_insert(ctx, &task);
}

static bool has_bit(const uint8_t *b, int i) {
  return b[i / 8] >> (i % 8) & 1;
}

/* New contents of the tile (or its copies discarded): no process holds them. */
static void forget_sent(tsr_dist_tile_t *r) {
  memset(r->sent, 0, ((size_t)r->d->comm->size + 7) / 8);
}

int tsr_dist_insert(tessera_context_t *ctx, const tessera_task_t *t) {
  int runner = -1;
  tsr_dist_t *d = NULL;
  for (int i = 0; i < t->ndata && runner < 0; i++) {
    const tsr_dist_tile_t *r = tsr_dist_of(t->data[i]);
    if (r) d = r->d;
    if (r && (t->mode[i] & TESSERA_W)) runner = r->owner;
  }
  if (!d) return tessera_task_insert(ctx, t);
  for (int i = 0; i < t->ndata && runner < 0; i++) /* a task writing no distributed tile */
    if (tsr_dist_of(t->data[i])) runner = tsr_dist_of(t->data[i])->owner;
  const int me = d->comm->rank;
  int rc = 0;
  for (int i = 0; i < t->ndata && !rc; i++) {
    tsr_dist_tile_t *r = tsr_dist_of(t->data[i]);
    if (!r || r->owner == runner || !(t->mode[i] & TESSERA_R)) continue;
    if (me == r->owner && !has_bit(r->sent, runner)) {
      rc = insert_transfer(ctx, t->data[i], r, false, runner);
      r->sent[runner / 8] |= (uint8_t)(1u << (runner % 8));
    } else if (me == runner && !r->cached) {
      rc = insert_transfer(ctx, t->data[i], r, true, r->owner);
      r->cached = true;
    }
  }
  for (int i = 0; i < t->ndata && !rc; i++) {
    tsr_dist_tile_t *r = tsr_dist_of(t->data[i]);
    if (!r || !(t->mode[i] & TESSERA_W)) continue;
    if (r->owner != runner)
      return tsr_error(ctx, -2,
                       "task_insert(%s): it writes tiles of processes %d and %d; a task of a "
                       "distributed flow writes the tiles of one process only.",
                       t->kernel->name ? t->kernel->name : "(unnamed)", runner, r->owner);
    forget_sent(r);
    r->cached = false;
  }
  return rc || me != runner ? rc : tessera_task_insert(ctx, t);
}

int tsr_dist_flush(tessera_context_t *ctx, tessera_data_t *h) {
  tsr_dist_tile_t *r = tsr_dist_of(h);
  if (!r) return 0;
  forget_sent(r);
  if (!r->cached) return 0;
  r->cached = false;
  return tessera_data_discard(ctx, h);
}
