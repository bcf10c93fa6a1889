/* In-process rendezvous: participants of one call meet under a key, the last one leads. */
#define _POSIX_C_SOURCE 200809L
#include "rendezvous.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tessera/types.h"

enum { GATHER, RUN, DONE };

struct tsr_rdv {
  int64_t run, site;
  int n, arrived, inside; /* expected, arrived, holding a reference */
  size_t bytes;           /* slot size */
  int phase, status;
  struct timespec deadline;
  pthread_cond_t cond;
  unsigned char *slots, *taken;
  unsigned char result[TSR_RDV_RESULT];
  tsr_rdv_t *next; /* in the table's open list while gathering */
};

int tsr_rdv_table_init(tsr_rdv_table_t *t, double timeout) {
  if (!(timeout > 0)) return -1;
  t->open = NULL;
  t->timeout = timeout;
  return pthread_mutex_init(&t->lock, NULL) ? -1 : 0;
}

void tsr_rdv_table_destroy(tsr_rdv_table_t *t) {
  pthread_mutex_destroy(&t->lock);
}

static void unlink_open(tsr_rdv_table_t *t, tsr_rdv_t *r) {
  for (tsr_rdv_t **p = &t->open; *p; p = &(*p)->next)
    if (*p == r) {
      *p = r->next;
      return;
    }
}

/* Ends the rendezvous with `status` before it ran (table lock held). */
static int fail(tsr_rdv_table_t *t, tsr_rdv_t *r, int status) {
  if (r->phase == GATHER) unlink_open(t, r);
  r->phase = DONE;
  r->status = status;
  pthread_cond_broadcast(&r->cond);
  return status;
}

static tsr_rdv_t *rdv_new(const tsr_rdv_table_t *t, int64_t run, int64_t site, int n,
                          size_t bytes) {
  tsr_rdv_t *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  *r = (tsr_rdv_t){.run = run, .site = site, .n = n, .bytes = bytes, .phase = GATHER};
  r->slots = calloc((size_t)n, bytes ? bytes : 1);
  r->taken = calloc((size_t)n, 1);
  pthread_condattr_t attr;
  int ok = r->slots && r->taken && !pthread_condattr_init(&attr);
  if (ok) {
    ok = !pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) && !pthread_cond_init(&r->cond, &attr);
    pthread_condattr_destroy(&attr);
  }
  if (!ok) {
    free(r->slots);
    free(r->taken);
    free(r);
    return NULL;
  }
  clock_gettime(CLOCK_MONOTONIC, &r->deadline);
  double s = (double)r->deadline.tv_sec + 1e-9 * (double)r->deadline.tv_nsec + t->timeout;
  r->deadline.tv_sec = (time_t)s;
  r->deadline.tv_nsec = (long)((s - (double)r->deadline.tv_sec) * 1e9);
  return r;
}

int tsr_rdv_join(tsr_rdv_table_t *t, int64_t run, int64_t site, int rank, int n, const void *slot,
                 size_t bytes, tsr_rdv_t **out) {
  *out = NULL;
  if (n < 1) return TESSERA_ERR_STATE;
  pthread_mutex_lock(&t->lock);
  tsr_rdv_t *r = t->open;
  while (r && (r->run != run || r->site != site)) r = r->next;
  if (!r) {
    r = rdv_new(t, run, site, n, bytes);
    if (!r) {
      pthread_mutex_unlock(&t->lock);
      return TESSERA_ERR_NOMEM;
    }
    r->next = t->open;
    t->open = r;
  }
  r->inside++;
  *out = r;
  int rc = 0;
  if (n != r->n || bytes != r->bytes || rank < 0 || rank >= r->n || r->taken[rank]) {
    rc = fail(t, r, TESSERA_ERR_STATE); /* participants that disagree: every one fails */
  } else {
    memcpy(r->slots + (size_t)rank * bytes, slot, bytes);
    r->taken[rank] = 1;
    if (++r->arrived == r->n) {
      unlink_open(t, r); /* a later call with the same key starts a new rendezvous */
      r->phase = RUN;
      rc = 1;
    }
  }
  while (!rc && r->phase == GATHER)
    if (pthread_cond_timedwait(&r->cond, &t->lock, &r->deadline) == ETIMEDOUT && r->phase == GATHER)
      fail(t, r, TESSERA_ERR_TIMEOUT);
  while (!rc && r->phase == RUN) pthread_cond_wait(&r->cond, &t->lock);
  if (!rc && r->arrived < r->n) rc = r->status; /* failed before it ran */
  pthread_mutex_unlock(&t->lock);
  return rc;
}

const void *tsr_rdv_slot(const tsr_rdv_t *r, int rank) {
  return r->slots + (size_t)rank * r->bytes;
}

void tsr_rdv_finish(tsr_rdv_table_t *t, tsr_rdv_t *r, int status, const void *result,
                    size_t bytes) {
  if (bytes > TSR_RDV_RESULT) bytes = TSR_RDV_RESULT;
  pthread_mutex_lock(&t->lock);
  r->status = status;
  if (result && bytes) memcpy(r->result, result, bytes);
  r->phase = DONE;
  pthread_cond_broadcast(&r->cond);
  pthread_mutex_unlock(&t->lock);
}

int tsr_rdv_status(const tsr_rdv_t *r) {
  return r->status;
}

const void *tsr_rdv_result(const tsr_rdv_t *r) {
  return r->result;
}

void tsr_rdv_leave(tsr_rdv_table_t *t, tsr_rdv_t *r) {
  if (!r) return;
  pthread_mutex_lock(&t->lock);
  if (r->phase == RUN) /* a leader that leaves without finishing fails its followers */
    fail(t, r, TESSERA_ERR_STATE);
  int last = --r->inside == 0;
  pthread_mutex_unlock(&t->lock);
  if (last) {
    pthread_cond_destroy(&r->cond);
    free(r->slots);
    free(r->taken);
    free(r);
  }
}
