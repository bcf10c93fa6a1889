/* The binding's state: one tessera context per platform, made at first use, and the rendezvous
 * table of the handlers. */
#ifndef TSR_JAX_STATE_H
#define TSR_JAX_STATE_H

#include <pthread.h>

#include "rendezvous.h"
#include "tessera/tessera.h"
#include "tessera_jax.h"

/* The measured seconds of the two ways a call small for its mesh can run (small.c): the
 * distributed routine on the shards (path 0) or one device per process (path 1), per shape
 * (operation, dtype, order, devices). The first call of each path is its warm-up (the pools'
 * first allocations, the libraries' handles) and is counted but not averaged. */
enum { TSR_JAX_PATHS = 2, TSR_JAX_SHAPES = 32 };
typedef struct {
  int64_t key[5];               /* op, dtype, n, ndev, batch; ndev 0: a free entry */
  int64_t calls[TSR_JAX_PATHS]; /* calls that took each path */
  double mean[TSR_JAX_PATHS];   /* running mean of the seconds of each but its first */
} tsr_jax_timing_t;

struct tsr_jax_state {
  pthread_mutex_t lock; /* creation of the contexts */
  tessera_context_t *ctx[TESSERA_JAX_PLATFORMS];
  int failed[TESSERA_JAX_PLATFORMS]; /* status of a creation that failed; it is not retried */
  char errmsg[TESSERA_JAX_PLATFORMS][256];
  pthread_mutex_t run[TESSERA_JAX_PLATFORMS]; /* one call at a time on a context */
  tsr_rdv_table_t rdv;
  int64_t gpu_mem_limit;
  int gpu_with_cpus;   /* TESSERA_CPU_WORKERS set: the GPU context's CPU workers compute too */
  int active;          /* handlers running (under lock) */
  int closed;          /* set by tessera_jax_state_destroy: later calls fail */
  pthread_cond_t idle; /* signalled when active drops to 0 */
  /* the processes of a JAX program that spans several (tessera_jax_processes) */
  int process, processes;                      /* jax's index of this process, and the count */
  double timeout;                              /* TESSERA_JAX_TIMEOUT */
  const tessera_comm_store_t *store;           /* how they met: NULL for MPI */
  tessera_comm_t *world;                       /* over them, on host buffers */
  tessera_comm_t *comm[TESSERA_JAX_PLATFORMS]; /* per platform (CPU: world), made at first use */
  int *rank_of;                                /* the communicators' rank of each process */
  /* per platform, under run[platform]: the shapes' timings, the next entry to reuse */
  tsr_jax_timing_t timing[TESSERA_JAX_PLATFORMS][TSR_JAX_SHAPES];
  int timing_next[TESSERA_JAX_PLATFORMS];
  int64_t one_device_calls; /* calls that ran on one device (under lock) */
};

/** A handler's entry: 0, or -1 when the state is closed (the call must not touch it further).
 *  Every successful entry is paired with tsr_jax_leave. */
int tsr_jax_enter(tsr_jax_state_t *s);
void tsr_jax_leave(tsr_jax_state_t *s);

/** The context of `platform`, made at the first call: 0, or a negative status (the message in
 *  s->errmsg[platform]). Thread safe. */
int tsr_jax_context(tsr_jax_state_t *s, int platform, tessera_context_t **ctx);

/** This process's index among the JAX program's processes, with `platform`'s communicator over
 *  them and each process's rank in it (NULL both before tessera_jax_processes made them). */
int tsr_jax_process(tsr_jax_state_t *s, int platform, tessera_comm_t **comm, const int **rank_of);

/** Holds `platform`'s context `ctx` for one run of tessera's routines, as each multi-device
 *  call of the handlers does: one run at a time on a context, its tasks on the run's devices
 *  (the GPUs of `gpus`, bit g: GPU g, and the CPU workers only when TESSERA_CPU_WORKERS asked
 *  for them; on the CPU platform, the CPU workers). Returns 0, or a negative status with
 *  nothing held (tessera_last_error says why). Every 0 is paired with tsr_jax_unhold. */
int tsr_jax_hold(tsr_jax_state_t *s, tessera_context_t *ctx, int platform, uint64_t gpus);
void tsr_jax_unhold(tsr_jax_state_t *s, tessera_context_t *ctx, int platform);

#endif
