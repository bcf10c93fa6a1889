/* Workers of asynchronous devices (GPUs): one host thread per device, bound to it for its whole
 * life, keeping up to cfg.gpu_flights tasks in flight over cfg.gpu_queues queues. A task's inputs
 * are copied when it is launched, on the worker's copy queue (TESSERA_COPY_QUEUE=1, the
 * default: ahead of the kernels queued before it, the kernel's queue waiting on the copies'
 * events) or on the task's own queue right before its kernel (TESSERA_COPY_QUEUE=0); either
 * way the copies of one task overlap the kernels of others. A task is complete when the event
 * recorded after its kernel has passed, which is polled, never waited for with a device-wide
 * synchronisation; a task whose kernel deferred it (tessera_task_defer: work it started
 * elsewhere, a message say) is complete once it is also resumed, and keeps its flight and its
 * data until then. */
#include <limits.h>
#include <sched.h>
#include <stdio.h>

#include "runtime/base.h"
#include "runtime/context.h"
#include "runtime/replica.h"
#include "runtime/sched.h"
#include "runtime/task.h"
#include "runtime/worker.h"

/* Whether copies are timed for the trace: tracing on and the backend can time events. */
static bool timing_copies(const tsr_worker_t *w) {
  return w->ctx->tracing && w->be->event_create_timed && w->be->event_elapsed;
}

/* The time reference of timed copies: a timed event recorded and waited for, and tsr_now()
 * right after it. */
static int time_reference(tsr_worker_t *w) {
  const tsr_backend_t *be = w->be;
  int rc = be->event_create_timed(w->be_state, w->device, &w->time_ref);
  if (!rc) rc = be->event_record(w->be_state, w->time_ref, w->queues[0]);
  if (!rc) rc = be->event_sync(w->be_state, w->time_ref);
  w->time_ref_s = tsr_now();
  return rc;
}

/* Creates the queues, events and status slots of the worker (on its own thread). With copies
 * timed, the fill events are timed too and each has a start event. */
static int async_setup(tsr_worker_t *w) {
  const tsr_backend_t *be = w->be;
  const bool timed = timing_copies(w);
  int (*create)(void *, int, void **) = timed ? be->event_create_timed : be->event_create;
  int rc = 0;
  w->qscratch[0] = w->scratch;
  const int nq = w->ctx->cfg.gpu_queues;
  for (int q = 1; q < nq && !rc; q++) rc = tsr_worker_scratch_create(w, &w->qscratch[q]);
  for (int q = 0; q < nq && !rc; q++) rc = be->queue_create(w->be_state, w->device, &w->queues[q]);
  if (!rc && w->ctx->cfg.copy_queue > 0)
    rc = be->queue_create(w->be_state, w->device, &w->copy_queue);
  if (!rc && be->queue_create_urgent) {
    rc = be->queue_create_urgent(w->be_state, w->device, &w->urgent_queue);
    if (!rc) rc = tsr_worker_scratch_create(w, &w->urgent_scratch);
  }
  if (!rc && timed) rc = time_reference(w);
  tessera_async_status_t *slots =
      be->host_alloc ? be->host_alloc(w->be_state, sizeof *slots * (TSR_FLIGHTS + 1)) : NULL;
  if (!rc && !slots) rc = TESSERA_ERR_NOMEM;
  w->status_slots = slots; /* the flights move (poll swaps them), their slots with them */
  for (int f = 0; f < TSR_FLIGHTS + 1 && !rc; f++) {
    tsr_flight_t *fl = &w->flights[f];
    fl->status = &slots[f];
    rc = be->event_create(w->be_state, w->device, &fl->done);
    for (int i = 0; i < TESSERA_MAX_TASK_DATA && !rc; i++) {
      rc = create(w->be_state, w->device, &fl->fill[i]);
      if (!rc && timed) rc = create(w->be_state, w->device, &fl->copy_start[i]);
    }
  }
  return rc;
}

static void async_teardown(tsr_worker_t *w) {
  const tsr_backend_t *be = w->be;
  for (int f = 0; f < TSR_FLIGHTS + 1; f++) {
    tsr_flight_t *fl = &w->flights[f];
    if (fl->done) be->event_destroy(w->be_state, w->device, fl->done);
    for (int i = 0; i < TESSERA_MAX_TASK_DATA; i++) {
      if (fl->fill[i]) be->event_destroy(w->be_state, w->device, fl->fill[i]);
      if (fl->copy_start[i]) be->event_destroy(w->be_state, w->device, fl->copy_start[i]);
    }
  }
  if (w->time_ref) be->event_destroy(w->be_state, w->device, w->time_ref);
  if (w->status_slots) be->host_free(w->be_state, w->status_slots);
  w->status_slots = NULL;
  if (w->copy_queue) be->queue_destroy(w->be_state, w->device, w->copy_queue);
  if (w->urgent_queue) be->queue_destroy(w->be_state, w->device, w->urgent_queue);
  if (w->urgent_scratch) tsr_worker_scratch_destroy(w, w->urgent_scratch);
  w->urgent_queue = w->urgent_scratch = NULL;
  for (int q = 0; q < TSR_QUEUES; q++) {
    if (w->queues[q]) be->queue_destroy(w->be_state, w->device, w->queues[q]);
    if (q > 0 && w->qscratch[q]) tsr_worker_scratch_destroy(w, w->qscratch[q]);
  }
}

/* Ends the use of the replicas the flight acquired (the first n handles). */
static void release_data(tsr_worker_t *w, tsr_flight_t *fl, int n) {
  tsr_task_t *t = fl->task;
  for (int i = 0; i < n; i++) {
    tsr_data_unpin(t->data[i], w->node, fl->fill[i]);
    if (fl->src[i] >= 0) tsr_data_unpin(t->data[i], fl->src[i], NULL);
  }
}

/* A task alone on its device and refused memory for its next handle while it holds replicas of
 * its first ones: the pool may be free enough but in pieces around them, which nothing else will
 * free. Its copies are waited for, its replicas there unpinned and evicted (written home where
 * they were the last valid copy), and its handles acquired again from the first: the pool then
 * places them afresh, evicting what others left unpinned meanwhile (again every
 * TSR_NOMEM_RETRY_S while it waits). */
static void start_over(tsr_worker_t *w, tsr_flight_t *fl) {
  tsr_task_t *t = fl->task;
  for (int i = 0; i < fl->acquired; i++)
    if (fl->src[i] >= 0 && w->be->event_sync(w->be_state, fl->fill[i]) < 0)
      tsr_flow_fail(w->ctx, TESSERA_ERR_BACKEND);
  release_data(w, fl, fl->acquired);
  for (int i = 0; i < fl->acquired; i++) {
    const int rc = tsr_data_evict(t->data[i], w->node);
    if (rc) tsr_flow_fail(w->ctx, rc);
    fl->src[i] = -1;
  }
  fl->acquired = 0;
  fl->started_over = tsr_now();
}

/* Acquires the task's data from handle `fl->acquired` on and enqueues its kernel. Returns 0
 * (launched, or failed and recorded), or TESSERA_ERR_NOMEM to retry once memory is freed. */
static int launch(tsr_worker_t *w, tsr_flight_t *fl, bool last_chance) {
  tessera_context_t *ctx = w->ctx;
  tsr_task_t *t = fl->task;
  int rc = 0;
  while (!fl->skipped && fl->acquired < t->ndata && !rc) {
    int i = fl->acquired;
    void *copy_queue = w->copy_queue ? w->copy_queue : fl->queue;
    rc = tsr_data_acquire_async(t->data[i], w->node, (tessera_access_t)t->mode[i], fl->queue,
                                copy_queue, fl->fill[i], fl->copy_start[i], &fl->ex.ptr[i],
                                &fl->ex.ld[i], &fl->src[i]);
    if (!rc) {
      if (fl->src[i] >= 0) w->stats.bytes_in += tsr_data_bytes(t->data[i]);
      fl->acquired++;
    }
  }
  if (rc == TESSERA_ERR_NOMEM && !last_chance) return rc;
  /* The flow's status says why; wait_all turns it into the message (workers write none). */
  if (rc) tsr_flow_fail(ctx, rc);
  /* timed from the start of the enqueue: a kernel that enqueues many launches blocks here once
   * the device's launch queue is full, so most of its work can run before its call returns */
  fl->launched = tsr_now();
  if (!rc && !fl->skipped) {
    fl->run = (tsr_run_t){.task = t, .worker = w};
    fl->ex.task = &fl->run;
    rc = t->kernel->impl[w->kind](&fl->ex, t->args);
    if (rc) tsr_flow_fail(ctx, rc);
    fl->deferred = !rc && fl->run.deferred;
    fl->counted = !rc && !fl->deferred;
    if (fl->counted) tsr_worker_running_add(w, 1);
    fl->ex.task = NULL; /* the record moves with the flight: for the kernel's call only */
  }
  int e = w->be->event_record(w->be_state, fl->done, fl->queue);
  if (e) tsr_flow_fail(ctx, e);
  fl->running = true;
  return 0;
}

/* The priority a task must exceed to take the urgent lane: that of every task in flight; INT_MAX
 * when the lane is missing, in use, or nothing is in flight. */
static int urgent_bar(const tsr_worker_t *w) {
  if (!w->urgent_queue || !w->nflights) return INT_MAX;
  int bar = INT_MIN;
  for (int f = 0; f < w->nflights; f++) {
    if (w->flights[f].urgent) return INT_MAX;
    if (w->flights[f].task->priority > bar) bar = w->flights[f].task->priority;
  }
  return bar;
}

/* Whether task t goes on the urgent lane: the lane is free and t outranks every task in flight
 * (it would have run first had it been ready earlier). */
static bool is_urgent(const tsr_worker_t *w, const tsr_task_t *t) {
  const int bar = urgent_bar(w);
  return bar != INT_MAX && t->priority > bar;
}

/* Whether the task atop this worker's own queue would go on the urgent lane (the queue's lock
 * is taken only when the lane is free). */
static bool urgent_waiting(tsr_worker_t *w) {
  const int bar = urgent_bar(w);
  if (bar == INT_MAX) return false;
  pthread_mutex_lock(&w->ready.lock);
  const bool u = w->ready.n > 0 && w->ready.heap[0]->priority > bar;
  pthread_mutex_unlock(&w->ready.lock);
  return u;
}

static void start(tsr_worker_t *w, tsr_task_t *t) {
  const bool urgent = is_urgent(w, t);
  tsr_flight_t *fl = &w->flights[w->nflights++];
  fl->task = t;
  fl->urgent = urgent;
  w->stats.urgent += urgent;
  unsigned q = urgent ? 0 : w->next_queue++ % (unsigned)w->ctx->cfg.gpu_queues;
  fl->queue = urgent ? w->urgent_queue : w->queues[q];
  fl->acquired = 0;
  fl->alone_since = 0;
  fl->started_over = 0;
  fl->running = false;
  fl->deferred = false;
  fl->counted = false;
  fl->skipped = atomic_load_explicit(&w->ctx->flow_failed, memory_order_relaxed) &&
                !(t->kernel->flags & TESSERA_KERNEL_RUNS_AFTER_FAILURE);
  fl->status->info = 0; /* read at completion, whether the kernel ran or not */
  fl->status->offset = 0;
  for (int i = 0; i < TESSERA_MAX_TASK_DATA; i++) fl->src[i] = -1;
  fl->ex = (tessera_exec_t){.ndata = t->ndata,
                            .kind = w->kind,
                            .device = w->device,
                            .worker = w->id,
                            .stream = fl->queue,
                            .scratch = urgent ? w->urgent_scratch : w->qscratch[q],
                            .async = fl->status};
}

/* Adds the copies a finished flight made to the trace, on this worker's row: "copy in" from
 * the host, "copy peer" from another device. */
static void trace_copies(tsr_worker_t *w, const tsr_flight_t *fl) {
  for (int i = 0; i < fl->acquired; i++) {
    double from, to;
    if (fl->src[i] < 0 || !fl->copy_start[i]) continue;
    if (w->be->event_elapsed(w->be_state, w->time_ref, fl->copy_start[i], &from) ||
        w->be->event_elapsed(w->be_state, w->time_ref, fl->fill[i], &to))
      continue;
    const char *name = fl->src[i] == TESSERA_HOST_NODE ? "copy in" : "copy peer";
    tsr_trace_event(w, name, fl->task->tag, fl->task->ntag, w->time_ref_s + from,
                    w->time_ref_s + to, 1);
  }
}

/* Completes the flights whose events have passed. Returns how many. */
static int poll(tsr_worker_t *w) {
  tessera_context_t *ctx = w->ctx;
  int done = 0;
  for (int f = 0; f < w->nflights;) {
    tsr_flight_t *fl = &w->flights[f];
    const bool waiting =
        fl->deferred && !atomic_load_explicit(&fl->task->resumed, memory_order_acquire);
    int q = fl->running && !waiting ? w->be->event_query(w->be_state, fl->done) : 0;
    if (q == 0) {
      f++;
      continue;
    }
    if (q < 0) tsr_flow_fail(ctx, q);
    if (fl->deferred && fl->task->resume_status) tsr_flow_fail(ctx, fl->task->resume_status);
    int info = fl->status->info;
    if (info) tsr_flow_fail(ctx, info > 0 ? (int)(fl->status->offset + info) : TESSERA_ERR_KERNEL);
    if (w->time_ref && q > 0) trace_copies(w, fl);
    if (fl->counted) tsr_worker_running_add(w, -1);
    fl->counted = false;
    release_data(w, fl, fl->acquired);
    double now = tsr_now(), t0 = fl->launched > w->last_done ? fl->launched : w->last_done;
    w->last_done = now;
    tsr_task_t *t = fl->task;
    bool measured = !fl->skipped && !fl->deferred && q > 0 && !info;
    /* Keep the flight's events and slot with it: swap with the last flight. */
    tsr_flight_t tmp = *fl;
    *fl = w->flights[--w->nflights];
    w->flights[w->nflights] = tmp;
    const size_t events = w->nevents;
    tsr_worker_finish(w, t, t0, now, measured);
    if (w->nevents > events) { /* traced: the kernel's own span and lane */
      w->events[events].launched = tmp.launched;
      w->events[events].lane = tmp.urgent ? 1 : 0;
    }
    done++;
  }
  return done;
}

void tsr_async_worker_loop(tsr_worker_t *w) {
  tessera_context_t *ctx = w->ctx;
  if (async_setup(w) != 0) {
    /* Without queues or events nothing can run here: every task given to this worker fails
     * its flow (and still completes, so nothing waits forever). */
    fprintf(stderr, "tessera: %s %d: cannot create queues and events\n", w->be->name, w->device);
    while (!atomic_load(&ctx->stop)) {
      tsr_task_t *t = tsr_worker_next_task(w);
      if (!t) continue;
      tsr_flow_fail(ctx, TESSERA_ERR_BACKEND);
      double now = tsr_now();
      tsr_worker_finish(w, t, now, now, false);
    }
    async_teardown(w);
    return;
  }
  double idle_from = tsr_now();
  const int flights = ctx->cfg.gpu_flights;
  while (!atomic_load(&ctx->stop)) {
    int progress = poll(w);
    tsr_flight_t *pending = NULL;
    for (int f = 0; f < w->nflights; f++)
      if (!w->flights[f].running) pending = &w->flights[f];
    if (pending) {
      /* Waiting for memory: retry after progress. Alone, only other devices' copies out of
       * this pool can still free memory (briefly); after a while the task fails. */
      bool alone = w->nflights == 1;
      if (!alone)
        pending->alone_since = 0;
      else if (pending->alone_since == 0)
        pending->alone_since = tsr_now();
      bool give_up = alone && tsr_now() - pending->alone_since > TSR_NOMEM_WAIT_S;
      if (alone && !give_up && pending->acquired > 0 &&
          tsr_now() - pending->started_over > TSR_NOMEM_RETRY_S)
        start_over(w, pending);
      if (launch(w, pending, give_up) == 0 || progress) continue;
    } else if (w->nflights < flights || (w->nflights == flights && urgent_waiting(w))) {
      tsr_task_t *t = w->nflights ? ctx->sched->pop(ctx, w) : tsr_worker_next_task(w);
      if (t) {
        if (!w->nflights) w->stats.idle_s += tsr_now() - idle_from;
        start(w, t);
        launch(w, &w->flights[w->nflights - 1], false);
        continue;
      }
      if (!w->nflights) continue;
    }
    if (!progress) sched_yield();
    if (!w->nflights) idle_from = tsr_now();
  }
  async_teardown(w);
}
