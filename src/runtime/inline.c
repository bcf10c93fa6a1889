/* Kernels run on a caller's thread, enqueued on the caller's queue (tsr_run_inline): the path of
 * calls too small to pay for tasks, workers and waits. Each memory node keeps, from its first
 * such run, the scratch its kind's kernels are handed (as a worker's) and an event marking the
 * end of the last run's work: the scratch is shared by every run on the node, so a run on
 * another queue has that queue wait for the event (on the device, not the host) before its
 * kernels reuse the scratch. */
#include "runtime/context.h"
#include "runtime/error.h"

/* The node's scratch and event, made on the calling thread bound to its device. */
static int make(tessera_context_t *ctx, tsr_node_t *nd) {
  const tsr_backend_entry_t *e = ctx->backends[nd->be->kind].entry;
  int rc = e && e->scratch_create ? e->scratch_create(nd->device, &nd->inl.scratch) : 0;
  if (!rc && nd->be->async) rc = nd->be->event_create(nd->be_state, nd->device, &nd->inl.event);
  if (rc) {
    tsr_inline_close(ctx, nd);
    return tsr_error(ctx, rc, "%s %d: cannot make the state of kernels run on a caller's queue",
                     nd->be->name, nd->device);
  }
  nd->inl.made = true;
  return 0;
}

void tsr_inline_close(tessera_context_t *ctx, tsr_node_t *nd) {
  if (!nd->inl.scratch && !nd->inl.event) return;
  int prev = -1;
  const int bound = nd->be->enter && !nd->be->enter(nd->be_state, nd->device, &prev);
  const tsr_backend_entry_t *e = ctx->backends[nd->be->kind].entry;
  if (nd->inl.event) nd->be->event_destroy(nd->be_state, nd->device, nd->inl.event);
  if (nd->inl.scratch && e && e->scratch_destroy) e->scratch_destroy(nd->device, nd->inl.scratch);
  if (bound) nd->be->leave(nd->be_state, nd->device, prev);
  nd->inl.scratch = nd->inl.event = nd->inl.queue = NULL;
  nd->inl.made = false;
}

int tsr_run_inline(tessera_context_t *ctx, int node, void *queue, const tessera_kernel_t *k,
                   void *args, int ndata, void *const ptr[], const size_t ld[]) {
  if (node < 0 || node >= ctx->nnodes)
    return tsr_error(ctx, TESSERA_ERR_STATE, "memory node %d does not exist", node);
  tsr_node_t *nd = &ctx->nodes[node];
  const tsr_backend_t *be = nd->be;
  const tessera_kernel_fn fn = k->impl[be->kind];
  if (!fn)
    return tsr_error(ctx, TESSERA_ERR_NODEVICE, "%s has no kernel for %s devices", k->name,
                     be->name);
  const bool device = node != TESSERA_HOST_NODE && be->async;
  if (device != (queue != NULL))
    return tsr_error(ctx, TESSERA_ERR_STATE,
                     device ? "memory node %d is a device's: its work needs a queue of that device"
                            : "memory node %d is host memory: it takes no queue",
                     node);
  if (ndata < 0 || ndata > TESSERA_MAX_TASK_DATA)
    return tsr_error(ctx, TESSERA_ERR_STATE, "%d buffers for kernel %s", ndata, k->name);
  pthread_mutex_lock(&nd->inl.lock);
  int prev = -1;
  int rc = be->enter ? be->enter(nd->be_state, nd->device, &prev) : 0;
  const bool bound = be->enter && !rc;
  if (rc) rc = tsr_error(ctx, rc, "%s %d: cannot bind this thread to it", be->name, nd->device);
  if (!rc && !nd->inl.made) rc = make(ctx, nd);
  if (!rc && device && nd->inl.queue && nd->inl.queue != queue &&
      be->queue_wait_event(nd->be_state, queue, nd->inl.event))
    rc = tsr_error(ctx, TESSERA_ERR_BACKEND, "%s %d: a queue cannot wait for an event", be->name,
                   nd->device);
  if (!rc) {
    tessera_exec_t ex = {.ndata = ndata,
                         .kind = be->kind,
                         .device = nd->device < 0 ? 0 : nd->device,
                         .worker = -1,
                         .stream = queue,
                         .scratch = nd->inl.scratch};
    for (int i = 0; i < ndata; i++) {
      ex.ptr[i] = ptr[i];
      ex.ld[i] = ld[i];
    }
    rc = fn(&ex, args);
    if (rc < 0) rc = tsr_error(ctx, rc, "kernel %s failed on %s %d", k->name, be->name, nd->device);
    /* whatever the kernel enqueued before a failure used the scratch too */
    if (device) {
      const bool recorded = !be->event_record(nd->be_state, nd->inl.event, queue);
      nd->inl.queue = recorded ? queue : NULL;
      if (!recorded && !rc)
        rc = tsr_error(ctx, TESSERA_ERR_BACKEND, "%s %d: cannot record an event", be->name,
                       nd->device);
    }
  }
  if (bound) be->leave(nd->be_state, nd->device, prev);
  pthread_mutex_unlock(&nd->inl.lock);
  return rc;
}
