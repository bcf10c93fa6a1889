/* Distributed flows: owner-computes insertion and the transfer engine (see dist.h).
 *
 * Transfers are tasks: a send reads the tile on its owner after the tile's last writer there, a
 * receive writes the tile's local copy on the process that runs a reader. Their kernels (CPU)
 * post a nonblocking MPI transfer on the engine's own channel and defer their task
 * (tessera_task_defer); the engine's thread polls the transfers and resumes each task when its
 * transfer is done, so no worker ever waits on a message. Messages of one tile between two
 * processes carry one tag and follow the tile's versions in order: a later version's send waits
 * (through the tile's dependencies) for the earlier one, its receive for the earlier copy's
 * readers, and MPI does not let messages of one tag and source overtake each other. A transfer
 * that does not complete within the communicator's timeout fails its flow and breaks the
 * communicator. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm/dist.h"
#include "runtime/replica.h"

typedef struct {
  tsr_mpi_req_t *req;
  tessera_deferred_t *token;
  double start;
} transfer_t;

struct tsr_dist {
  tessera_comm_t *comm;
  tsr_mpi_chan_t *chan;
  int next_tag, tag_limit;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool stop;
  transfer_t *xfer; /* transfers in flight */
  size_t n, cap;
};

/* The engine: polls the transfers in flight, resumes the finished ones' tasks. */
static void *engine(void *arg) {
  tsr_dist_t *d = arg;
  pthread_mutex_lock(&d->lock);
  while (!d->stop || d->n > 0) {
    if (d->n == 0) {
      pthread_cond_wait(&d->cond, &d->lock);
      continue;
    }
    bool progress = false;
    for (size_t i = 0; i < d->n;) {
      transfer_t x = d->xfer[i];
      int rc = tsr_mpi_test(d->comm, x.req);
      if (rc == 0 && tsr_now() - x.start > d->comm->timeout_s)
        rc = tsr_comm_break(d->comm,
                            tsr_comm_error(d->comm, TESSERA_ERR_TIMEOUT,
                                           "A tile's transfer did not complete within %g s: the "
                                           "other process has not taken part.",
                                           d->comm->timeout_s));
      if (rc == 0) {
        i++;
        continue;
      }
      d->xfer[i] = d->xfer[--d->n]; /* done or failed: the task goes on */
      progress = true;
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

static int engine_start(tessera_comm_t *c) {
  if (c->dist) return 0;
  if (!tsr_mpi_multithreaded(c))
    return tsr_comm_error(c, TESSERA_ERR_UNSUPPORTED,
                          "Distributed matrices move tiles from threads of tessera's own, which "
                          "needs MPI initialised with MPI_THREAD_MULTIPLE.");
  tsr_dist_t *d = calloc(1, sizeof *d);
  if (!d) return tsr_comm_error(c, TESSERA_ERR_NOMEM, "Out of memory for the transfer engine.");
  d->comm = c;
  d->tag_limit = tsr_mpi_tag_limit(c);
  int rc = tsr_mpi_chan_open(c, &d->chan);
  if (rc) {
    free(d);
    return rc;
  }
  pthread_mutex_init(&d->lock, NULL);
  pthread_cond_init(&d->cond, NULL);
  if (pthread_create(&d->thread, NULL, engine, d) != 0) {
    tsr_mpi_chan_close(d->chan);
    free(d);
    return tsr_comm_error(c, TESSERA_ERR_NOMEM, "The transfer engine's thread did not start.");
  }
  c->dist = d;
  c->dist_close = tsr_dist_close;
  return 0;
}

void tsr_dist_close(tessera_comm_t *c) {
  tsr_dist_t *d = c->dist;
  if (!d) return;
  pthread_mutex_lock(&d->lock);
  d->stop = true;
  pthread_cond_broadcast(&d->cond);
  pthread_mutex_unlock(&d->lock);
  pthread_join(d->thread, NULL);
  pthread_cond_destroy(&d->cond);
  pthread_mutex_destroy(&d->lock);
  tsr_mpi_chan_close(d->chan);
  free(d->xfer);
  free(d);
  c->dist = NULL;
  c->dist_close = NULL;
}

int tsr_dist_tiles(tessera_comm_t *c, size_t count, tsr_dist_tile_t **tiles) {
  int rc = engine_start(c);
  if (rc) return rc;
  tsr_dist_t *d = c->dist;
  if ((long long)d->next_tag + (long long)count > d->tag_limit)
    return tsr_comm_error(c, TESSERA_ERR_UNSUPPORTED,
                          "%zu more distributed tiles exceed the %d tags MPI offers.", count,
                          d->tag_limit);
  const size_t bits = ((size_t)c->size + 7) / 8;
  tsr_dist_tile_t *t = calloc(count ? count : 1, sizeof *t + bits);
  if (!t) return tsr_comm_error(c, TESSERA_ERR_NOMEM, "Out of memory for distributed tiles.");
  uint8_t *sent = (uint8_t *)(t + count);
  for (size_t i = 0; i < count; i++)
    t[i] = (tsr_dist_tile_t){d, -1, d->next_tag++, sent + i * bits, false};
  *tiles = t;
  return 0;
}

void tsr_dist_tiles_free(tsr_dist_tile_t *tiles) {
  free(tiles);
}

void tsr_dist_attach(tessera_data_t *h, tsr_dist_tile_t *t) {
  h->dist = t;
}

tsr_dist_tile_t *tsr_dist_of(const tessera_data_t *h) {
  return h ? h->dist : NULL;
}

/* ------------------------------------------------------------------------------ transfers */

typedef struct {
  tsr_dist_t *d;
  int peer, tag;
  bool receive;
  size_t rows, cols, elsize;
} transfer_args_t;

/* Posts the transfer and defers the task to the engine. */
static int transfer_kernel(const tessera_exec_t *ex, void *args) {
  const transfer_args_t *a = args;
  tsr_dist_t *d = a->d;
  tessera_deferred_t *token = tessera_task_defer(ex);
  if (!token) return TESSERA_ERR_KERNEL;
  tsr_mpi_req_t *req = NULL;
  int rc = tsr_mpi_post(d->comm, d->chan, a->receive, ex->ptr[0], a->rows, a->cols, ex->ld[0],
                        a->elsize, a->peer, a->tag, &req);
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
    d->xfer[d->n++] = (transfer_t){req, token, tsr_now()};
    pthread_cond_broadcast(&d->cond);
  }
  pthread_mutex_unlock(&d->lock);
  if (rc) tessera_task_resume(token, rc);
  return 0;
}

/* Transfers run after a failure too: the other process waits on them (it learns of the failure
 * from the status the processes agree on at the end of the flow). */
static const tessera_kernel_t transfer = {.name = "tile_transfer",
                                          .impl = {[TESSERA_DEVICE_CPU] = transfer_kernel},
                                          .flags = TESSERA_KERNEL_RUNS_AFTER_FAILURE};

static int insert_transfer(tessera_context_t *ctx, tessera_data_t *h, const tsr_dist_tile_t *t,
                           bool receive, int peer) {
  const transfer_args_t a = {t->d, peer, t->tag, receive, h->rows, h->cols, h->elsize};
  tessera_task_t task = {.kernel = &transfer,
                         .args = &a,
                         .args_size = sizeof a,
                         .ndata = 1,
                         .data = {h},
                         .mode = {receive ? TESSERA_W : TESSERA_R},
                         .priority = 1 << 20, /* transfers before the compute they feed */
                         .scope = tessera_scope_cpus()};
  return tessera_task_insert(ctx, &task);
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

int tsr_dist_agree(tessera_comm_t *c, int status) {
  /* the lowest negative status, else the lowest positive one: one minimum over an encoding */
  const long big = 1L << 40;
  long lo = 0, hi = 0;
  int rc = tsr_mpi_minmax(c, status ? status : big, &lo, &hi);
  if (rc) return rc;
  return lo == big ? 0 : (int)lo;
}
