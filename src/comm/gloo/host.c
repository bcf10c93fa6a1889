/* The host transport over Gloo: for programs no MPI launcher started, the processes meet
 * through the caller's key-value store (tessera_comm_store_t) and talk over Gloo's TCP
 * transport (shim.h). The communicator has a Gloo context of its own, and each channel (a host
 * queue's, the distributed flows' tiles') another, rendezvoused collectively under a key
 * namespace of its own, so operations of different channels never match each other. Tile
 * transfers are Gloo unbound buffers with the tag as slot, strided blocks packed for sending and
 * unpacked when their receive completes; testing one never waits (shim.cc says why that
 * matters). A closed channel's context stays open until the communicator closes, after a
 * barrier: a process that finishes first keeps answering the late ones' last messages. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/transport.h"
#include "comm/gloo/shim.h"

struct tsr_host_chan {
  tsr_gloo_t *g;
  tsr_host_chan_t *next; /* closed channels, freed with the communicator */
};

typedef struct {
  tsr_host_chan_t own;
  pthread_mutex_t lock; /* guards the two below */
  int channels;         /* channels made: the next one's key namespace */
  tsr_host_chan_t *closed;
} gloo_t;

struct tsr_host_req {
  tsr_gloo_xfer_t *x;
  bool receive;
  void *packed;              /* a strided block's contiguous copy, or NULL */
  void *ptr;                 /* the block: unpacked here when a receive completes */
  size_t rows, cols, ld, es; /* its shape, leading dimension and element size (bytes) */
};

static gloo_t *state(const tessera_comm_t *c) {
  return c->host_state;
}

/* A failed Gloo call: its sentence recorded, the communicator broken (a timeout or a failure
 * leaves Gloo's connections closed). */
static int failed(tessera_comm_t *c, int rc, const char *why) {
  return tsr_comm_break(c, tsr_comm_error(c, rc, "%s", why));
}

static size_t elsize(tessera_comm_type_t t) {
  static const size_t sizes[] = {
      [TESSERA_COMM_F32] = 4,   [TESSERA_COMM_F64] = 8, [TESSERA_COMM_C64] = 8,
      [TESSERA_COMM_C128] = 16, [TESSERA_COMM_I32] = 4, [TESSERA_COMM_I64] = 8};
  return sizes[t];
}

static int gloo_open(tessera_comm_t *c, const tessera_comm_config_t *cfg) {
  gloo_t *s = calloc(1, sizeof *s);
  if (!s) return tsr_comm_error(c, TESSERA_ERR_NOMEM, "Out of memory for the communicator.");
  char why[TSR_COMM_ERRMSG] = "";
  const int rc =
      tsr_gloo_connect(cfg->store, NULL, "main", c->timeout_s, &s->own.g, why, sizeof why);
  if (rc) {
    free(s);
    return tsr_comm_error(c, rc, "%s", why);
  }
  pthread_mutex_init(&s->lock, NULL);
  c->rank = cfg->store->rank;
  c->size = cfg->store->size;
  c->host_state = s;
  return 0;
}

static void gloo_close(tessera_comm_t *c) {
  gloo_t *s = state(c);
  if (!s) return;
  /* every process here before any closes its connections (a late one may still be finishing
   * transfers with it); on a broken communicator the others may be gone: no waiting */
  char why[TSR_COMM_ERRMSG];
  if (!atomic_load(&c->broken)) (void)tsr_gloo_barrier(s->own.g, why, sizeof why);
  for (tsr_host_chan_t *ch = s->closed, *next; ch; ch = next) {
    next = ch->next;
    tsr_gloo_free(ch->g);
    free(ch);
  }
  tsr_gloo_free(s->own.g);
  pthread_mutex_destroy(&s->lock);
  free(s);
  c->host_state = NULL;
}

static bool gloo_multithreaded(const tessera_comm_t *c) {
  (void)c;
  return true; /* shim.cc serialises what Gloo does not */
}

static int gloo_minmax(tessera_comm_t *c, long value, long *lo, long *hi) {
  int64_t v[2] = {value, -(int64_t)value}, r[2] = {0, 0};
  char why[TSR_COMM_ERRMSG];
  const int rc =
      tsr_gloo_allreduce(state(c)->own.g, v, r, 2, TESSERA_COMM_I64, TESSERA_MIN, why, sizeof why);
  *lo = (long)r[0], *hi = (long)-r[1];
  return rc ? failed(c, rc, why) : 0;
}

static int gloo_share(tessera_comm_t *c, void *data, size_t bytes) {
  char why[TSR_COMM_ERRMSG];
  const int rc = tsr_gloo_broadcast(state(c)->own.g, data, bytes, 0, why, sizeof why);
  return rc ? failed(c, rc, why) : 0;
}

static int gloo_gather_all(tessera_comm_t *c, const void *mine, void *all, size_t bytes) {
  char why[TSR_COMM_ERRMSG];
  const int rc = tsr_gloo_allgather(state(c)->own.g, mine, all, bytes, why, sizeof why);
  return rc ? failed(c, rc, why) : 0;
}

/* A reduce-scatter as an all-reduce of the whole buffer, this process keeping its block. */
static int reduce_scatter(tessera_comm_t *c, tsr_gloo_t *g, const tsr_coll_t *op, char *why,
                          size_t len) {
  const size_t block = op->count * elsize(op->type);
  char *all = malloc(block * (size_t)c->size);
  if (!all) {
    snprintf(why, len, "Out of memory for a reduce-scatter.");
    return TESSERA_ERR_NOMEM;
  }
  int rc =
      tsr_gloo_allreduce(g, op->send, all, op->count * (size_t)c->size, op->type, op->op, why, len);
  if (rc == 0) memcpy(op->buf, all + block * (size_t)c->rank, block);
  free(all);
  return rc;
}

static int gloo_run(tessera_comm_t *c, tsr_host_chan_t *chan, const tsr_coll_t *op) {
  tsr_gloo_t *g = (chan ? chan : &state(c)->own)->g;
  const size_t bytes = op->count * elsize(op->type);
  if (op->count == 0 && op->kind != TSR_COLL_BARRIER) return 0; /* nothing travels */
  char why[TSR_COMM_ERRMSG] = "";
  int rc = 0;
  switch (op->kind) {
  case TSR_COLL_BROADCAST:
    rc = tsr_gloo_broadcast(g, op->buf, bytes, op->rank, why, sizeof why);
    break;
  case TSR_COLL_ALLREDUCE:
    rc = tsr_gloo_allreduce(g, op->send, op->buf, op->count, op->type, op->op, why, sizeof why);
    break;
  case TSR_COLL_REDUCE:
    rc = tsr_gloo_reduce(g, op->send, op->buf, op->count, op->type, op->op, op->rank, why,
                         sizeof why);
    break;
  case TSR_COLL_ALLGATHER:
    rc = tsr_gloo_allgather(g, op->send, op->buf, bytes, why, sizeof why);
    break;
  case TSR_COLL_REDUCE_SCATTER:
    rc = reduce_scatter(c, g, op, why, sizeof why);
    break;
  case TSR_COLL_SEND:
  case TSR_COLL_RECV:
    rc = tsr_gloo_sendrecv(g, op->kind == TSR_COLL_RECV,
                           op->kind == TSR_COLL_RECV ? op->buf : (void *)op->send, bytes, op->rank,
                           0, why, sizeof why);
    break;
  case TSR_COLL_BARRIER:
    rc = tsr_gloo_barrier(g, why, sizeof why);
    break;
  }
  return rc ? failed(c, rc, why) : 0;
}

static int gloo_chan_open(tessera_comm_t *c, tsr_host_chan_t **chan) {
  gloo_t *s = state(c);
  *chan = calloc(1, sizeof **chan);
  if (!*chan) return tsr_comm_error(c, TESSERA_ERR_NOMEM, "Out of memory for a channel.");
  pthread_mutex_lock(&s->lock);
  char name[32];
  snprintf(name, sizeof name, "chan%d", s->channels++);
  pthread_mutex_unlock(&s->lock);
  char why[TSR_COMM_ERRMSG];
  const int rc = tsr_gloo_connect(NULL, s->own.g, name, c->timeout_s, &(*chan)->g, why, sizeof why);
  if (rc) {
    free(*chan);
    *chan = NULL;
    return failed(c, rc, why);
  }
  return 0;
}

static void gloo_chan_close(tessera_comm_t *c, tsr_host_chan_t *chan) {
  gloo_t *s = state(c);
  pthread_mutex_lock(&s->lock);
  chan->next = s->closed;
  s->closed = chan;
  pthread_mutex_unlock(&s->lock);
}

/* Copies the rows x cols block at `block` (leading dimension r->ld) to or from r->packed. */
static void pack(const tsr_host_req_t *r, bool unpack) {
  const size_t col = r->rows * r->es;
  for (size_t j = 0; j < r->cols; j++) {
    char *b = (char *)r->ptr + j * r->ld * r->es, *p = (char *)r->packed + j * col;
    memcpy(unpack ? b : p, unpack ? p : b, col);
  }
}

static void req_free(tsr_host_req_t *r) {
  tsr_gloo_xfer_free(r->x);
  free(r->packed);
  free(r);
}

static int gloo_post(tessera_comm_t *c, tsr_host_chan_t *chan, bool receive, void *ptr, size_t rows,
                     size_t cols, size_t ld, size_t es, int peer, int tag, tsr_host_req_t **out) {
  tsr_host_req_t *r = calloc(1, sizeof *r);
  const bool strided = ld != rows && cols > 1;
  if (r && strided) r->packed = malloc(rows * cols * es);
  if (!r || (strided && !r->packed)) {
    free(r);
    return tsr_comm_error(c, TESSERA_ERR_NOMEM, "Out of memory for a transfer.");
  }
  *r = (tsr_host_req_t){NULL, receive, r->packed, ptr, rows, cols, ld, es};
  if (strided && !receive) pack(r, false);
  char why[TSR_COMM_ERRMSG];
  const int rc = tsr_gloo_post(chan->g, receive, strided ? r->packed : ptr, rows * cols * es, peer,
                               (uint64_t)tag, &r->x, why, sizeof why);
  if (rc) {
    req_free(r);
    return failed(c, rc, why);
  }
  *out = r;
  return 0;
}

static int gloo_test(tessera_comm_t *c, tsr_host_req_t *r) {
  char why[TSR_COMM_ERRMSG];
  const int rc = tsr_gloo_test(r->x, why, sizeof why);
  if (rc == 0) return 0;
  if (rc == 1 && r->receive && r->packed) pack(r, true);
  req_free(r);
  return rc == 1 ? 1 : failed(c, rc, why);
}

static int gloo_cancel(tessera_comm_t *c, tsr_host_req_t *r, double wait_s) {
  (void)c, (void)wait_s;
  req_free(r); /* Gloo lets go of the buffer when its transfer is freed, at once */
  return 0;
}

static int gloo_tag_limit(const tessera_comm_t *c) {
  (void)c;
  return INT_MAX; /* slots are 64-bit: every int tag is one */
}

const tsr_host_ops_t *tsr_gloo_host(void) {
  static const tsr_host_ops_t ops = {
      .name = "Gloo",
      .open = gloo_open,
      .close = gloo_close,
      .multithreaded = gloo_multithreaded,
      .minmax = gloo_minmax,
      .share = gloo_share,
      .gather_all = gloo_gather_all,
      .run = gloo_run,
      .chan_open = gloo_chan_open,
      .chan_close = gloo_chan_close,
      .post = gloo_post,
      .test = gloo_test,
      .cancel = gloo_cancel,
      .tag_limit = gloo_tag_limit,
      .describe = tsr_gloo_version,
  };
  return &ops;
}
