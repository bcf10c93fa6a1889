/* Ready-task priority queues: a binary heap, larger priority first, then insertion order. */
#include <stdlib.h>

#include "runtime/ready.h"
#include "runtime/runs_on.h"

int tsr_ready_init(tsr_ready_t *q) {
  q->n = 0;
  q->cap = 64;
  q->heap = malloc(sizeof *q->heap * (size_t)q->cap);
  q->sleeping = false;
  atomic_init(&q->load, 0.0);
  if (!q->heap) return TESSERA_ERR_NOMEM;
  pthread_mutex_init(&q->lock, NULL);
  pthread_cond_init(&q->cond, NULL);
  return 0;
}

void tsr_ready_add_load(tsr_ready_t *q, double x) {
  double old = atomic_load_explicit(&q->load, memory_order_relaxed);
  while (!atomic_compare_exchange_weak_explicit(&q->load, &old, old + x, memory_order_relaxed,
                                                memory_order_relaxed)) {
  }
}

void tsr_ready_wake(tsr_ready_t *q) {
  pthread_mutex_lock(&q->lock);
  if (q->sleeping) pthread_cond_signal(&q->cond);
  pthread_mutex_unlock(&q->lock);
}

void tsr_ready_destroy(tsr_ready_t *q) {
  free(q->heap);
  q->heap = NULL;
  pthread_mutex_destroy(&q->lock);
  pthread_cond_destroy(&q->cond);
}

static bool before(const tsr_task_t *a, const tsr_task_t *b) {
  return a->priority != b->priority ? a->priority > b->priority : a->seq < b->seq;
}

int tsr_ready_push_locked(tsr_ready_t *q, tsr_task_t *t) {
  if (q->n == q->cap) {
    tsr_task_t **h = realloc(q->heap, sizeof *h * (size_t)q->cap * 2);
    if (!h) return TESSERA_ERR_NOMEM;
    q->heap = h;
    q->cap *= 2;
  }
  int i = q->n;
  __atomic_store_n(&q->n, i + 1, __ATOMIC_RELAXED);
  while (i > 0) {
    int p = (i - 1) / 2;
    if (!before(t, q->heap[p])) break;
    q->heap[i] = q->heap[p];
    i = p;
  }
  q->heap[i] = t;
  return 0;
}

/* Removes entry i and restores the heap. */
static tsr_task_t *remove_at(tsr_ready_t *q, int i) {
  tsr_task_t *out = q->heap[i];
  __atomic_store_n(&q->n, q->n - 1, __ATOMIC_RELAXED);
  tsr_task_t *last = q->heap[q->n];
  if (i == q->n) return out;
  /* Sift the last element into slot i, up or down. */
  while (i > 0 && before(last, q->heap[(i - 1) / 2])) {
    q->heap[i] = q->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  for (;;) {
    int c = 2 * i + 1;
    if (c >= q->n) break;
    if (c + 1 < q->n && before(q->heap[c + 1], q->heap[c])) c++;
    if (!before(q->heap[c], last)) break;
    q->heap[i] = q->heap[c];
    i = c;
  }
  q->heap[i] = last;
  return out;
}

tsr_task_t *tsr_ready_pop_locked(tsr_ready_t *q) {
  return q->n ? remove_at(q, 0) : NULL;
}

tsr_task_t *tsr_ready_steal_locked(tsr_ready_t *q, tessera_device_kind_t kind, int accel) {
  int best = -1;
  for (int i = 0; i < q->n; i++)
    if (tsr_task_runs_on(q->heap[i], kind, accel) &&
        (best < 0 || before(q->heap[i], q->heap[best])))
      best = i;
  return best < 0 ? NULL : remove_at(q, best);
}
