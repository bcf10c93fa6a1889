/* Heartbeats of the transfer engine (see beats.h): one byte to every other process, on the
 * engine's own MPI channel under a tag no tile uses, each time a period has passed and this
 * process progressed; one receive posted per peer, reposted as each beat arrives. */
#include <stdlib.h>

#include "distributed/beats.h"
#include "runtime/base.h"

struct tsr_beats {
  tessera_comm_t *comm;
  tsr_host_chan_t *chan;
  int tag;
  double period, last_sent, last_polled;
  double *heard;              /* per peer: when its last beat came (the start at first) */
  tsr_host_req_t **in, **out; /* per peer: the posted receive, the send not yet complete */
  unsigned char *in_byte, out_byte;
};

/* Posts the receive of peer p's next beat. */
static int post_in(tsr_beats_t *b, int p) {
  return tsr_host_post(b->comm, b->chan, true, &b->in_byte[p], 1, 1, 1, 1, p, b->tag, &b->in[p]);
}

int tsr_beats_open(tessera_comm_t *c, tsr_host_chan_t *chan, int tag, double period,
                   tsr_beats_t **out) {
  *out = NULL;
  tsr_beats_t *b = calloc(1, sizeof *b);
  const size_t n = (size_t)c->size;
  if (b) {
    b->comm = c, b->chan = chan, b->tag = tag, b->period = period, b->out_byte = 1;
    b->heard = calloc(n, sizeof *b->heard);
    b->in = calloc(n, sizeof *b->in);
    b->out = calloc(n, sizeof *b->out);
    b->in_byte = calloc(n, 1);
  }
  if (!b || !b->heard || !b->in || !b->out || !b->in_byte) {
    tsr_beats_close(b);
    return tsr_comm_error(c, TESSERA_ERR_NOMEM, "Out of memory for the transfer heartbeats.");
  }
  const double now = tsr_now();
  int rc = 0;
  for (int p = 0; p < c->size && !rc; p++) {
    b->heard[p] = now;
    if (p != c->rank) rc = post_in(b, p);
  }
  if (rc) {
    tsr_beats_close(b);
    return rc;
  }
  *out = b;
  return 0;
}

void tsr_beats_poll(tsr_beats_t *b, bool (*progressed)(void *arg), void *arg) {
  const double now = tsr_now();
  if (now - b->last_polled < b->period / 4) return;
  b->last_polled = now;
  for (int p = 0; p < b->comm->size; p++) {
    if (p == b->comm->rank) continue;
    /* a beat arrived: heard now; the receive goes again (a failure breaks the communicator,
     * and the transfers then fail on their own) */
    const int got = b->in[p] ? tsr_host_test(b->comm, b->in[p]) : 0;
    if (got != 0) b->in[p] = NULL;
    if (got > 0) {
      b->heard[p] = now;
      (void)post_in(b, p);
    }
    if (b->out[p] && tsr_host_test(b->comm, b->out[p]) != 0) b->out[p] = NULL;
  }
  if (now - b->last_sent < b->period || !progressed(arg)) return;
  b->last_sent = now;
  for (int p = 0; p < b->comm->size; p++)
    if (p != b->comm->rank && !b->out[p])
      (void)tsr_host_post(b->comm, b->chan, false, &b->out_byte, 1, 1, 1, 1, p, b->tag, &b->out[p]);
}

double tsr_beats_heard(const tsr_beats_t *b, int peer) {
  return b && peer >= 0 && peer < b->comm->size ? b->heard[peer] : 0;
}

void tsr_beats_close(tsr_beats_t *b) {
  if (!b) return;
  for (int p = 0; b->in && b->out && p < b->comm->size; p++) {
    /* a receive never matched is cancelled; a beat's send completes at once (one byte, sent
     * eagerly) unless the transport is broken, where it is left to MPI */
    if (b->in[p]) (void)tsr_host_cancel(b->comm, b->in[p], 1.0);
    if (b->out[p]) {
      const double until = tsr_now() + 1.0;
      int done = 0;
      while ((done = tsr_host_test(b->comm, b->out[p])) == 0 && tsr_now() < until) {
      }
      if (done == 0) (void)tsr_host_cancel(b->comm, b->out[p], 1.0);
    }
  }
  free(b->heard);
  free(b->in);
  free(b->out);
  free(b->in_byte);
  free(b);
}
