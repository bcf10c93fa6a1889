/* The loop of CPU workers: each task's data made valid on the host by synchronous copies, its
 * kernel run on the worker's thread. */
#include "runtime/base.h"
#include "runtime/context.h"
#include "runtime/replica.h"
#include "runtime/sched.h"
#include "runtime/task.h"
#include "runtime/worker.h"

/* Runs one task on worker `w`: makes its data valid on the worker's node, runs the kernel
 * (unless the flow already failed), records time, then completes it. */
static void execute(tsr_worker_t *w, tsr_task_t *t) {
  tessera_context_t *ctx = w->ctx;
  double t0 = tsr_now();
  bool skipped = atomic_load_explicit(&ctx->flow_failed, memory_order_relaxed) &&
                 !(t->kernel->flags & TESSERA_KERNEL_RUNS_AFTER_FAILURE);
  int rc = 0;
  if (!skipped) {
    tessera_exec_t ex = {.ndata = t->ndata,
                         .kind = w->kind,
                         .device = w->device,
                         .worker = w->id,
                         .stream = NULL,
                         .scratch = w->scratch};
    tsr_run_t run = {.task = t, .worker = w};
    ex.task = &run;
    for (int i = 0; i < t->ndata && !rc; i++) {
      bool had = tsr_data_valid_on(t->data[i], w->node);
      rc = tsr_data_acquire(t->data[i], w->node, (tessera_access_t)t->mode[i], &ex.ptr[i],
                            &ex.ld[i]);
      if (!had && (t->mode[i] & TESSERA_R)) w->stats.bytes_in += tsr_data_bytes(t->data[i]);
    }
    /* what the accounting of a deferred task needs, read before the kernel hands it off */
    const char *name = t->kernel->name;
    int tag[3] = {t->tag[0], t->tag[1], t->tag[2]}, ntag = t->ntag;
    if (!rc) {
      tsr_worker_running_add(w, 1);
      rc = t->kernel->impl[w->kind](&ex, t->args);
      tsr_worker_running_add(w, -1);
    }
    if (rc) tsr_flow_fail(ctx, rc);
    if (!rc && run.deferred) { /* tessera_task_resume completes it: t is not ours any more */
      tsr_worker_deferred(w, name, tag, ntag, t0, tsr_now());
      return;
    }
  }
  tsr_worker_finish(w, t, t0, tsr_now(), !skipped && !rc);
}

void tsr_cpu_worker_loop(tsr_worker_t *w) {
  tessera_context_t *ctx = w->ctx;
  double idle_from = tsr_now();
  while (!atomic_load(&ctx->stop)) {
    tsr_task_t *t = tsr_worker_next_task(w);
    if (!t) continue;
    w->stats.idle_s += tsr_now() - idle_from;
    execute(w, t);
    idle_from = tsr_now();
  }
}
