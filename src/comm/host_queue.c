/* Host queues: a thread per queue runs the queue's operations one after another, in the order
 * they were put, on the queue's own channel (so operations of different queues, and of
 * calls with no queue, never match each other). The ring of waiting operations grows as needed.
 * After a failure the queue still drains: later operations fail at once on the broken
 * communicator, and the first failure is what the next sync returns. */
#include <stdlib.h>
#include <string.h>

#include "comm/host_queue.h"

static void *queue_thread(void *arg) {
  tessera_comm_queue_t *q = arg;
  pthread_mutex_lock(&q->lock);
  for (;;) {
    while (q->head == q->tail && !q->stop) pthread_cond_wait(&q->cond, &q->lock);
    if (q->head == q->tail) break; /* stopping, and nothing left */
    tsr_coll_t op = q->ring[q->head % q->cap];
    q->head++;
    q->running = true;
    pthread_mutex_unlock(&q->lock);
    int rc = atomic_load(&q->comm->broken)
                 ? tsr_comm_error(q->comm, TESSERA_ERR_STATE,
                                  "An operation of a queue was not run: the communicator is "
                                  "broken by an earlier failure or timeout.")
                 : tsr_host_run(q->comm, q->chan, &op);
    pthread_mutex_lock(&q->lock);
    q->running = false;
    if (rc && !q->status) q->status = rc;
    pthread_cond_broadcast(&q->cond);
  }
  pthread_mutex_unlock(&q->lock);
  return NULL;
}

int tsr_host_queue_start(tessera_comm_queue_t *q) {
  q->cap = 16;
  q->ring = malloc(q->cap * sizeof *q->ring);
  if (!q->ring) return tsr_comm_error(q->comm, TESSERA_ERR_NOMEM, "Out of memory for a queue.");
  pthread_mutex_init(&q->lock, NULL);
  pthread_cond_init(&q->cond, NULL);
  if (pthread_create(&q->thread, NULL, queue_thread, q) != 0) {
    pthread_cond_destroy(&q->cond);
    pthread_mutex_destroy(&q->lock);
    free(q->ring);
    return tsr_comm_error(q->comm, TESSERA_ERR_NOMEM, "The queue's thread could not be started.");
  }
  return 0;
}

int tsr_host_queue_put(tessera_comm_queue_t *q, const tsr_coll_t *op) {
  pthread_mutex_lock(&q->lock);
  if (q->tail - q->head == q->cap) {
    tsr_coll_t *grown = malloc(2 * q->cap * sizeof *grown);
    if (!grown) {
      pthread_mutex_unlock(&q->lock);
      return tsr_comm_error(q->comm, TESSERA_ERR_NOMEM, "Out of memory for a queue.");
    }
    for (size_t i = q->head; i < q->tail; i++) grown[i % (2 * q->cap)] = q->ring[i % q->cap];
    free(q->ring);
    q->ring = grown;
    q->cap *= 2;
  }
  q->ring[q->tail % q->cap] = *op;
  q->tail++;
  pthread_cond_broadcast(&q->cond);
  pthread_mutex_unlock(&q->lock);
  return 0;
}

int tsr_host_queue_wait(tessera_comm_queue_t *q) {
  pthread_mutex_lock(&q->lock);
  while (q->head != q->tail || q->running) pthread_cond_wait(&q->cond, &q->lock);
  const int rc = q->status;
  q->status = 0;
  pthread_mutex_unlock(&q->lock);
  return rc;
}

int tsr_host_queue_stop(tessera_comm_queue_t *q) {
  const int rc = tsr_host_queue_wait(q);
  pthread_mutex_lock(&q->lock);
  q->stop = true;
  pthread_cond_broadcast(&q->cond);
  pthread_mutex_unlock(&q->lock);
  pthread_join(q->thread, NULL);
  pthread_cond_destroy(&q->cond);
  pthread_mutex_destroy(&q->lock);
  free(q->ring);
  return rc;
}
