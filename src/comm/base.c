/* The communication layer's ground: operations' names, error messages, breaking a communicator,
 * waiting against its deadline, what a layer above attaches to it. The transports (mpi/, gloo/,
 * nccl/), the queues and the API (comm.c) all call these; this file calls none of them. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "comm/transport.h"
#include "runtime/base.h"

const char *tsr_coll_name(tsr_coll_kind_t k) {
  static const char *const names[] = {"A broadcast",   "An all-reduce",    "A reduce",
                                      "An all-gather", "A reduce-scatter", "A send",
                                      "A receive",     "A barrier"};
  return names[k];
}

int tsr_comm_error(tessera_comm_t *c, int status, const char *fmt, ...) {
  if (!c) return status;
  va_list ap;
  va_start(ap, fmt);
  pthread_mutex_lock(&c->err_lock);
  vsnprintf(c->errmsg, sizeof c->errmsg, fmt, ap);
  pthread_mutex_unlock(&c->err_lock);
  va_end(ap);
  return status;
}

int tsr_comm_break(tessera_comm_t *c, int status) {
  atomic_store(&c->broken, true);
  return status;
}

int tsr_comm_attach(tessera_comm_t *c, void *obj, void (*close)(void *obj)) {
  if (c->attached)
    return tsr_comm_error(c, TESSERA_ERR_STATE,
                          "The communicator already carries an attachment of a layer above.");
  c->attached = obj;
  c->attached_close = close;
  return 0;
}

int tsr_comm_wait(tessera_comm_t *c, int (*poll)(void *arg), void *arg, const char *what) {
  const double t0 = tsr_now();
  for (long polls = 0;; polls++) {
    const int done = poll(arg);
    if (done < 0) return tsr_comm_break(c, done);
    if (done) return 0;
    if (polls < 2000) continue;
    if (tsr_now() - t0 > c->timeout_s)
      return tsr_comm_break(
          c, tsr_comm_error(c, TESSERA_ERR_TIMEOUT,
                            "%s did not complete within %g s: a participant has not arrived (its "
                            "process may have stopped, failed, or be making other calls).",
                            what, c->timeout_s));
    nanosleep(&(struct timespec){0, 50000}, NULL);
  }
}
