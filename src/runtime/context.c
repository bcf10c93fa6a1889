/* The context: its configuration checked and completed, backends, memory nodes, workers,
 * scheduler. */
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/attach.h"
#include "runtime/base.h"
#include "runtime/context.h"
#include "runtime/perfmodel.h"
#include "runtime/sched.h"
#include "runtime/task.h"
#include "runtime/worker.h"

void tessera_config_init(tessera_config_t *cfg) {
  if (!cfg) return;
  cfg->cpu_workers = -1;
  cfg->gpus = -1;
  cfg->sched = TESSERA_SCHED_AUTO;
  cfg->tile_size = -1;
  cfg->bind_workers = -1;
  cfg->trace_file = NULL;
  cfg->perfmodel_file = NULL;
  cfg->copy_queue = -1;
  cfg->gpu_queues = -1;
  cfg->gpu_flights = -1;
  cfg->gpu_mem_limit = -1;
  cfg->max_submitted = -1;
  cfg->trsm_inverse = -1;
  cfg->comm_timeout_s = -1;
  cfg->dist_transfers = TESSERA_TRANSFERS_AUTO;
  cfg->dist_layout = TESSERA_LAYOUTS_AUTO;
  cfg->eig_method = TESSERA_EIG_AUTO;
  cfg->svd_method = TESSERA_SVD_AUTO;
  cfg->distributed = -1;
  cfg->mpi_comm = NULL;
  cfg->comm_store = NULL;
  cfg->grid_p = -1;
  cfg->grid_q = -1;
}

/* Checks the configuration tessera_init resolved (tsr_settings_resolve: the environment read
 * there; tsr_settings_check: every numeric field within its row's bounds) and fills what is still
 * "auto" with the built-in defaults. */
static int resolve_config(tessera_context_t *ctx, const tessera_config_t *in,
                          const tsr_settings_extra_t *extra) {
  tessera_config_t c = *in;
  if (c.gpu_mem_limit == 0) {
    fprintf(stderr, "tessera: gpu_mem_limit = 0: a GPU pool needs bytes (-1 for auto).\n");
    return -2;
  }
  if (c.gpu_mem_limit > 0) ctx->gpu_mem_limit = (size_t)c.gpu_mem_limit;
  if (c.sched == TESSERA_SCHED_AUTO) c.sched = TESSERA_SCHED_COST;
  if (c.sched != TESSERA_SCHED_COST && c.sched != TESSERA_SCHED_LOCALITY) {
    fprintf(stderr, "tessera: unknown scheduler policy %d.\n", (int)c.sched);
    return -2;
  }
  if (c.dist_transfers == TESSERA_TRANSFERS_AUTO) c.dist_transfers = TESSERA_TRANSFERS_BEST;
  if (c.dist_transfers < TESSERA_TRANSFERS_BEST || c.dist_transfers > TESSERA_TRANSFERS_HOST) {
    fprintf(stderr, "tessera: dist_transfers = %d is not a tessera_transfers_t.\n",
            (int)c.dist_transfers);
    return -2;
  }
  if (c.eig_method == TESSERA_EIG_AUTO) c.eig_method = TESSERA_EIG_COST;
  if (c.eig_method < TESSERA_EIG_COST || c.eig_method > TESSERA_EIG_TWO) {
    fprintf(stderr, "tessera: eig_method = %d is not a tessera_eig_method_t.\n", (int)c.eig_method);
    return -2;
  }
  if (c.svd_method == TESSERA_SVD_AUTO) c.svd_method = TESSERA_SVD_COST;
  if (c.svd_method < TESSERA_SVD_COST || c.svd_method > TESSERA_SVD_QDWH) {
    fprintf(stderr, "tessera: svd_method = %d is not a tessera_svd_method_t.\n", (int)c.svd_method);
    return -2;
  }
  if (c.dist_layout == TESSERA_LAYOUTS_AUTO) c.dist_layout = TESSERA_LAYOUTS_COST;
  if (c.dist_layout < TESSERA_LAYOUTS_COST || c.dist_layout > TESSERA_LAYOUTS_GIVEN) {
    fprintf(stderr, "tessera: dist_layout = %d is not a tessera_layouts_t.\n", (int)c.dist_layout);
    return -2;
  }
  if (c.comm_timeout_s == 0 || !(c.comm_timeout_s < 1e9)) {
    fprintf(stderr,
            "tessera: comm_timeout_s = %g: a timeout is more than 0 seconds (-1 for "
            "auto).\n",
            c.comm_timeout_s);
    return -2;
  }
  if (c.bind_workers < 0) c.bind_workers = 0;
  if (c.copy_queue < 0) c.copy_queue = 1;
  if (c.gpu_queues < 0) c.gpu_queues = TESSERA_MAX_GPU_QUEUES;
  if (c.gpu_flights < 0) c.gpu_flights = TSR_FLIGHTS;
  if (c.gpu_flights < 2 || c.gpu_flights > TSR_FLIGHTS) {
    fprintf(stderr, "tessera: gpu_flights = %d is not in [2, %d].\n", c.gpu_flights, TSR_FLIGHTS);
    return -2;
  }
  if (c.max_submitted < 0) c.max_submitted = TESSERA_DEFAULT_MAX_SUBMITTED;
  if (c.max_submitted == 0) {
    fprintf(stderr, "tessera: max_submitted = 0: no task could be inserted (-1 for auto).\n");
    return -2;
  }
  ctx->window_low = c.max_submitted - c.max_submitted / 10;
  if (ctx->window_low >= c.max_submitted) ctx->window_low = c.max_submitted - 1;
  if (c.trace_file && *c.trace_file)
    snprintf(ctx->trace_path, sizeof ctx->trace_path, "%s", c.trace_file);
  if (c.perfmodel_file && *c.perfmodel_file) {
    if (strcmp(c.perfmodel_file, "none") != 0)
      snprintf(ctx->perfmodel_path, sizeof ctx->perfmodel_path, "%s", c.perfmodel_file);
  } else {
    tsr_perfmodel_default_path(ctx->perfmodel_path, sizeof ctx->perfmodel_path);
  }
  c.trace_file = ctx->trace_path[0] ? ctx->trace_path : NULL;
  c.perfmodel_file = ctx->perfmodel_path[0] ? ctx->perfmodel_path : "none";
  ctx->sim_devices = extra->sim_devices;
  ctx->cfg = c;
  return 0;
}

/* One worker per CPU core given (on the host's node), then one per device node (GPUs). Without
 * a count given, the cores this process runs on, less one per GPU: its part of them when
 * `sharers` processes run on the same cores (the first cores % sharers of them, by `index`, take
 * one more). */
static int make_workers(tessera_context_t *ctx, int sharers, int index) {
  const tsr_node_t *host = &ctx->nodes[TESSERA_HOST_NODE];
  tessera_device_info_t info;
  host->be->info(host->be_state, 0, &info);
  const int all = info.workers > 0 ? info.workers : 1, ndev = ctx->nnodes - 1;
  if (sharers < 1 || index < 0 || index >= sharers) sharers = 1, index = 0;
  const int part = all / sharers, extra = all % sharers;
  int cores = part + (index < extra), first = index * part + (index < extra ? index : extra);
  if (cores < 1) cores = 1, first = index % all; /* more processes than cores: one each */
  int ncpu = ctx->cfg.cpu_workers >= 0 ? ctx->cfg.cpu_workers
                                       : (cores > ndev ? cores - ndev : (ndev ? 0 : 1));
  if (ncpu > TSR_MAX_WORKERS) ncpu = TSR_MAX_WORKERS;
  ctx->cfg.cpu_workers = ncpu;
  ctx->cfg.gpus = ndev;
  if (ncpu + ndev == 0)
    return tsr_error(ctx, -2, "no workers: cpu_workers is 0 and no GPU is in use");
  ctx->workers = tsr_zalloc_aligned((size_t)(ncpu + ndev) * sizeof *ctx->workers);
  if (!ctx->workers) return tsr_error(ctx, TESSERA_ERR_NOMEM, "out of memory for workers");
  for (int i = 0; i < ncpu + ndev; i++) {
    tsr_worker_t *w = &ctx->workers[i];
    const tsr_node_t *nd = &ctx->nodes[i < ncpu ? 0 : 1 + i - ncpu];
    tessera_device_info_t di = info;
    if (i >= ncpu) nd->be->info(nd->be_state, nd->device, &di);
    w->id = i;
    w->kind = nd->be->kind;
    w->device = i < ncpu ? 0 : nd->device;
    w->node = i < ncpu ? TESSERA_HOST_NODE : 1 + i - ncpu;
    w->core = ctx->cfg.bind_workers ? (first + i % cores) % all : -1;
    w->gflops = di.gflops > 0 ? di.gflops : 1;
    w->be = nd->be;
    w->be_state = nd->be_state;
    w->entry = ctx->backends[nd->be->kind].entry;
    w->ctx = ctx;
    if (tsr_ready_init(&w->ready)) return tsr_error(ctx, TESSERA_ERR_NOMEM, "out of memory");
    ctx->nworkers = i + 1;
  }
  return 0;
}

static void context_free(tessera_context_t *ctx) {
  for (int i = 0; i < ctx->nworkers; i++) {
    tsr_ready_destroy(&ctx->workers[i].ready);
    free(ctx->workers[i].events);
  }
  tsr_task_pool_free(ctx);
  free(ctx->workers);
  tsr_nodes_close(ctx);
  tsr_perfmodel_destroy(ctx->perfmodel);
  pthread_mutex_destroy(&ctx->wait_lock);
  pthread_cond_destroy(&ctx->wait_cond);
  pthread_mutex_destroy(&ctx->alloc_lock);
  free(ctx);
}

int tsr_context_create(tessera_context_t **out, const tessera_config_t *cfg,
                       const tsr_settings_extra_t *extra) {
  if (!out) return -1;
  *out = NULL;
  tessera_context_t *ctx = tsr_zalloc_aligned(sizeof *ctx);
  if (!ctx) return TESSERA_ERR_NOMEM;
  pthread_mutex_init(&ctx->wait_lock, NULL);
  pthread_cond_init(&ctx->wait_cond, NULL);
  pthread_mutex_init(&ctx->alloc_lock, NULL);
  ctx->t0 = tsr_now();
  tsr_flow_local_init(ctx, &ctx->local_flow);
  ctx->flow = &ctx->local_flow;
  tsr_run_kernel_init(&ctx->run_kernel);
  int rc = resolve_config(ctx, cfg, extra);
  if (!rc) rc = tsr_nodes_open(ctx);
  if (rc) {
    if (ctx->errmsg[0] && rc != TESSERA_ERR_ENV) fprintf(stderr, "tessera: %s\n", ctx->errmsg);
    context_free(ctx);
    return rc;
  }
  *out = ctx;
  return 0;
}

int tsr_context_start(tessera_context_t *ctx, int sharers, int index) {
  int rc = make_workers(ctx, sharers, index);
  if (!rc) {
    ctx->sched = ctx->cfg.sched == TESSERA_SCHED_LOCALITY ? tsr_sched_locality() : tsr_sched_cost();
    ctx->perfmodel = tsr_perfmodel_create();
    if (!ctx->perfmodel) rc = TESSERA_ERR_NOMEM;
  }
  if (!rc && ctx->perfmodel_path[0]) (void)tsr_perfmodel_load(ctx->perfmodel, ctx->perfmodel_path);
  ctx->tracing = ctx->trace_path[0] != 0;
  if (!rc) rc = tsr_workers_start(ctx);
  if (rc) {
    if (ctx->errmsg[0]) fprintf(stderr, "tessera: %s\n", ctx->errmsg);
    if (atomic_load(&ctx->started)) tsr_workers_stop(ctx);
    atomic_store(&ctx->started, 0); /* tsr_context_destroy only frees it */
  }
  return rc;
}

int tsr_context_destroy(tessera_context_t *ctx) {
  if (!ctx) return 0;
  if (!atomic_load(&ctx->started)) { /* never started, or failed to: nothing ran */
    context_free(ctx);
    return 0;
  }
  int status = tessera_wait_all(ctx);
  while (atomic_load(&ctx->resuming) > 0) sched_yield(); /* deferred tasks' resumes leaving */
  tsr_workers_stop(ctx);
  if (ctx->tracing && tessera_trace_write(ctx, ctx->trace_path) != 0) {
    fprintf(stderr, "tessera: cannot write the trace to %s\n", ctx->trace_path);
    if (!status) status = TESSERA_ERR_IO;
  }
  if (ctx->perfmodel_path[0]) (void)tsr_perfmodel_save(ctx->perfmodel, ctx->perfmodel_path);
  context_free(ctx);
  return status;
}

void **tsr_context_slot(tessera_context_t *ctx) {
  return &ctx->upper;
}
tessera_config_t *tsr_context_cfg(tessera_context_t *ctx) {
  return &ctx->cfg;
}

const tessera_config_t *tessera_config(const tessera_context_t *ctx) {
  return ctx ? &ctx->cfg : NULL;
}
int tessera_worker_count(const tessera_context_t *ctx) {
  return ctx ? ctx->nworkers : 0;
}
