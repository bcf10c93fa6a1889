/* The binding's state and its contexts; the tile of a call, asked of the library. */
#include "state.h"

#include <stdio.h>
#include <stdlib.h>

tsr_jax_state_t *tessera_jax_state_create(int64_t xla_left, char *err, size_t len) {
  /* the binding's variables, through the library's configuration table */
  double timeout = 0;
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  if (tessera_setting_number("TESSERA_JAX_TIMEOUT", &timeout, err, len) ||
      tessera_config_from_env(&cfg, err, len))
    return NULL;
  tsr_jax_state_t *s = calloc(1, sizeof *s);
  if (!s) {
    if (err && len) snprintf(err, len, "out of memory for the binding's state");
    return NULL;
  }
  s->timeout = timeout;
  if (tsr_rdv_table_init(&s->rdv, timeout)) {
    free(s);
    return NULL;
  }
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->idle, NULL);
  for (int p = 0; p < TESSERA_JAX_PLATFORMS; p++) pthread_mutex_init(&s->run[p], NULL);
  /* TESSERA_GPU_MEM_LIMIT where set (tessera_init takes it), else what XLA leaves */
  s->gpu_mem_limit = cfg.gpu_mem_limit < 0 && xla_left > 0 ? xla_left : -1;
  s->gpu_with_cpus = cfg.cpu_workers >= 0;
  return s;
}

/* Waits for the calls in progress (XLA may still run some when the interpreter exits), then
 * finalizes the contexts. The state itself is not freed: a call XLA starts later finds it closed
 * and fails cleanly instead of reading freed memory. */
void tessera_jax_state_destroy(tsr_jax_state_t *s) {
  if (!s) return;
  pthread_mutex_lock(&s->lock);
  s->closed = 1;
  while (s->active > 0) pthread_cond_wait(&s->idle, &s->lock);
  for (int p = 0; p < TESSERA_JAX_PLATFORMS; p++) {
    /* the context's flows end before the communicator they may use */
    (void)tessera_finalize(s->ctx[p]);
    if (s->comm[p] != s->world) (void)tessera_comm_destroy(s->comm[p]);
    s->comm[p] = NULL;
    s->ctx[p] = NULL;
    s->failed[p] = TESSERA_ERR_STATE;
    snprintf(s->errmsg[p], sizeof s->errmsg[p], "the binding was closed (interpreter exit)");
  }
  (void)tessera_comm_destroy(s->world);
  s->world = NULL;
  pthread_mutex_unlock(&s->lock);
}

int tsr_jax_enter(tsr_jax_state_t *s) {
  pthread_mutex_lock(&s->lock);
  int ok = !s->closed;
  if (ok) s->active++;
  pthread_mutex_unlock(&s->lock);
  return ok ? 0 : -1;
}

void tsr_jax_leave(tsr_jax_state_t *s) {
  pthread_mutex_lock(&s->lock);
  if (--s->active == 0) pthread_cond_broadcast(&s->idle);
  pthread_mutex_unlock(&s->lock);
}

int tsr_jax_context(tsr_jax_state_t *s, int platform, tessera_context_t **ctx) {
  *ctx = NULL;
  if (platform < 0 || platform >= TESSERA_JAX_PLATFORMS) return -2;
  pthread_mutex_lock(&s->lock);
  int rc = s->failed[platform];
  if (!rc && !s->ctx[platform]) {
    tessera_config_t cfg;
    tessera_config_init(&cfg);
    cfg.distributed = 0; /* each process's shards: JAX spans the processes, not the context */
    if (platform == TESSERA_JAX_CPU) {
      cfg.gpus = 0;
    } else {
      /* The matrix lives on the GPUs, which run every kernel (tsr_jax_hold's scope); the CPU
       * workers take only the kernels with a host implementation alone (the eigensolver's host
       * stages), unless TESSERA_CPU_WORKERS asks for CPUs to compute too. */
      cfg.gpu_mem_limit = s->gpu_mem_limit;
    }
    rc = tessera_init(&s->ctx[platform], &cfg);
    if (!rc && platform == TESSERA_JAX_CUDA &&
        tessera_device_count(s->ctx[platform], TESSERA_DEVICE_CUDA) == 0) {
      (void)tessera_finalize(s->ctx[platform]);
      s->ctx[platform] = NULL;
      rc = TESSERA_ERR_UNSUPPORTED;
      snprintf(s->errmsg[platform], sizeof s->errmsg[platform],
               "tessera found no GPU (built without CUDA, or no device visible)");
    } else if (rc) {
      snprintf(s->errmsg[platform], sizeof s->errmsg[platform],
               "tessera could not start a context for the %s: %s",
               platform == TESSERA_JAX_CPU ? "CPUs" : "GPUs", tessera_strerror(rc));
    }
    s->failed[platform] = rc;
  }
  *ctx = s->ctx[platform];
  pthread_mutex_unlock(&s->lock);
  return rc;
}

int tsr_jax_hold(tsr_jax_state_t *s, tessera_context_t *ctx, int platform, uint64_t gpus) {
  pthread_mutex_lock(&s->run[platform]);
  const tessera_scope_t run =
      platform == TESSERA_JAX_CPU
          ? tessera_scope_cpus()
          : (tessera_scope_t){s->gpu_with_cpus ? 0u : 1u << TESSERA_DEVICE_CUDA, gpus};
  int rc = tessera_set_scope(ctx, run);
  if (rc < 0) tsr_jax_unhold(s, ctx, platform);
  return rc < 0 ? rc : 0;
}

void tsr_jax_unhold(tsr_jax_state_t *s, tessera_context_t *ctx, int platform) {
  (void)tessera_set_scope(ctx, tessera_scope_all());
  pthread_mutex_unlock(&s->run[platform]);
}

int tessera_jax_context_acquire(tsr_jax_state_t *s, int platform, uint64_t gpus,
                                tessera_context_t **ctx) {
  *ctx = NULL;
  if (!s || platform < 0 || platform >= TESSERA_JAX_PLATFORMS) return TESSERA_ERR_STATE;
  if (tsr_jax_enter(s)) return TESSERA_ERR_STATE;
  tessera_context_t *c;
  int rc = tsr_jax_context(s, platform, &c);
  if (!rc) rc = tsr_jax_hold(s, c, platform, gpus);
  if (rc) {
    tsr_jax_leave(s);
    return rc;
  }
  *ctx = c;
  return 0;
}

void tessera_jax_context_release(tsr_jax_state_t *s, int platform, tessera_context_t *ctx) {
  if (!s || !ctx || platform < 0 || platform >= TESSERA_JAX_PLATFORMS) return;
  tsr_jax_unhold(s, ctx, platform);
  tsr_jax_leave(s);
}

const char *tessera_jax_error(tsr_jax_state_t *s, int platform) {
  if (!s || platform < 0 || platform >= TESSERA_JAX_PLATFORMS) return "";
  pthread_mutex_lock(&s->lock);
  const char *m = s->errmsg[platform][0] || !s->ctx[platform]
                      ? s->errmsg[platform]
                      : tessera_last_error(s->ctx[platform]);
  pthread_mutex_unlock(&s->lock);
  return m;
}

int tsr_jax_process(tsr_jax_state_t *s, int platform, tessera_comm_t **comm, const int **rank_of) {
  pthread_mutex_lock(&s->lock);
  *comm = s->comm[platform];
  *rank_of = s->rank_of;
  const int process = s->process;
  pthread_mutex_unlock(&s->lock);
  return process;
}

/* A communicator over the processes, as they met (s->store or MPI), with `ndevices` GPUs of
 * this process as its device endpoints; the store's keys under `prefix`. */
static int make_comm(tsr_jax_state_t *s, int platform, int ndevices, const char *prefix,
                     tessera_comm_t **comm) {
  tessera_comm_store_t store;
  if (s->store) {
    store = *s->store;
    store.prefix = prefix;
  }
  tessera_comm_config_t cc = {.ndevices = ndevices,
                              .timeout_s = s->timeout,
                              .store = s->store ? &store : NULL,
                              .error = s->errmsg[platform],
                              .error_len = sizeof s->errmsg[platform]};
  return tessera_comm_create(&cc, comm);
}

/* Learns each process's rank in the world communicator (under s->lock). */
static int ranks(tsr_jax_state_t *s) {
  char *why = s->errmsg[TESSERA_JAX_CPU];
  const size_t len = sizeof s->errmsg[TESSERA_JAX_CPU];
  const int size = tessera_comm_size(s->world);
  if (size != s->processes) {
    snprintf(why, len,
             "MPI's world has %d processes but the JAX program %d: launch one process of the "
             "program per MPI rank",
             size, s->processes);
    return TESSERA_ERR_STATE;
  }
  int32_t *all = malloc((size_t)size * sizeof *all);
  s->rank_of = malloc((size_t)size * sizeof *s->rank_of);
  const int32_t mine = s->process;
  int rc = all && s->rank_of ? 0 : TESSERA_ERR_NOMEM;
  if (!rc && (rc = tessera_comm_allgather(s->world, &mine, all, 1, TESSERA_COMM_I32, NULL)) != 0)
    snprintf(why, len, "%s", tessera_comm_last_error(s->world));
  for (int p = 0; !rc && p < size; p++) s->rank_of[p] = -1;
  for (int r = 0; !rc && r < size; r++) {
    if (all[r] < 0 || all[r] >= size || s->rank_of[all[r]] >= 0) {
      snprintf(why, len, "two processes call themselves process %d of the JAX program", all[r]);
      rc = TESSERA_ERR_STATE;
    } else {
      s->rank_of[all[r]] = r;
    }
  }
  free(all);
  return rc;
}

int tessera_jax_processes(tsr_jax_state_t *s, int process, int processes,
                          const tessera_comm_store_t *store) {
  if (!s) return TESSERA_ERR_STATE;
  if (processes < 2 || process < 0 || process >= processes) return -3;
  pthread_mutex_lock(&s->lock);
  int rc = 0;
  if (s->closed || s->world) {
    snprintf(s->errmsg[TESSERA_JAX_CPU], sizeof s->errmsg[TESSERA_JAX_CPU],
             s->closed ? "the binding was closed" : "the processes were joined already");
    rc = TESSERA_ERR_STATE;
  }
  if (!rc) {
    s->process = process;
    s->processes = processes;
    s->store = store;
    rc = make_comm(s, TESSERA_JAX_CPU, 0, store ? store->prefix : NULL, &s->world);
  }
  if (!rc && (rc = ranks(s)) != 0) {
    (void)tessera_comm_destroy(s->world);
    s->world = NULL;
    free(s->rank_of);
    s->rank_of = NULL;
  }
  pthread_mutex_unlock(&s->lock);
  return rc;
}

int tessera_jax_join(tsr_jax_state_t *s, int platform) {
  if (!s || platform < 0 || platform >= TESSERA_JAX_PLATFORMS) return TESSERA_ERR_STATE;
  tessera_context_t *ctx;
  int rc = tsr_jax_context(s, platform, &ctx);
  if (rc) return rc;
  pthread_mutex_lock(&s->lock);
  if (!s->world) {
    snprintf(s->errmsg[platform], sizeof s->errmsg[platform],
             "the binding has not joined the program's processes");
    rc = TESSERA_ERR_STATE;
  } else if (!s->comm[platform] && platform == TESSERA_JAX_CPU) {
    s->comm[platform] = s->world;
  } else if (!s->comm[platform]) {
    /* the context's GPUs (CUDA device i is tessera's GPU i, as the handlers read ordinals) */
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%s/gpus", s->store ? s->store->prefix : "");
    rc = make_comm(s, platform, tessera_device_count(ctx, TESSERA_DEVICE_CUDA), prefix,
                   &s->comm[platform]);
  }
  pthread_mutex_unlock(&s->lock);
  return rc;
}

int64_t tessera_jax_one_device_calls(tsr_jax_state_t *s) {
  if (!s) return 0;
  pthread_mutex_lock(&s->lock);
  const int64_t n = s->one_device_calls;
  pthread_mutex_unlock(&s->lock);
  return n;
}

int tessera_jax_cuda_built(void) {
#ifdef TESSERA_HAVE_CUDA
  return 1;
#else
  return 0;
#endif
}

int tessera_jax_tile(tsr_jax_state_t *s, int platform, int64_t n, int ndev, int lu) {
  if (!s) return -1;
  tessera_context_t *ctx;
  int rc = tsr_jax_context(s, platform, &ctx);
  if (rc) return rc;
  /* the library's policy for a matrix resident on the devices */
  return tessera_tile_for_devices(ctx, n, ndev, lu);
}
