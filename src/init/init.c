/* tessera_init and tessera_finalize: the runtime's context, and for a context over processes
 * (tessera_config_t.distributed) its communicator and process grid, kept in the runtime's slot
 * for the layers above. The communicator spans the context's GPUs, so the distributed flows of
 * the context move tiles between processes over NCCL where they can. */
#define _GNU_SOURCE
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "distributed/agree.h"
#include "distributed/span.h"
#include "runtime/attach.h"
#include "tessera/tessera.h"

/* The squarest grid of `size` processes: P <= Q, P the largest divisor up to the square root. */
static tessera_grid_t squarest(int size) {
  int p = (int)sqrt((double)size);
  while (p > 1 && size % p) p--;
  return (tessera_grid_t){p, size / p};
}

/* What tells which processes share cores: the host's name and the cores a process may run on.
 * A whole number of int64 elements, for the collectives API. */
typedef struct {
  char host[64];
  cpu_set_t cores;
} place_t;
_Static_assert(sizeof(place_t) % sizeof(int64_t) == 0, "place_t travels as int64 elements");

static void place_of(place_t *me) {
  memset(me, 0, sizeof *me);
  if (gethostname(me->host, sizeof me->host - 1) != 0) me->host[0] = '\0';
  if (sched_getaffinity(0, sizeof me->cores, &me->cores) != 0) CPU_ZERO(&me->cores);
}

/* The processes of `comm` that run on this process's cores (the same host, the same set of
 * cores: processes bound to cores of their own share none): how many, this one among them, and
 * this one's place among them by rank (a collective call). Gloo's and MPI's communicators alike
 * answer through the collectives API. */
static int core_sharers(tessera_comm_t *comm, int *sharers, int *index) {
  const int size = tessera_comm_size(comm), rank = tessera_comm_rank(comm);
  place_t me, *all = calloc((size_t)size, sizeof *all);
  if (!all) return TESSERA_ERR_NOMEM;
  place_of(&me);
  const int rc =
      tessera_comm_allgather(comm, &me, all, sizeof me / sizeof(int64_t), TESSERA_COMM_I64, NULL);
  *sharers = 0, *index = 0;
  for (int r = 0; !rc && r < size; r++)
    if (memcmp(&all[r], &me, sizeof me) == 0) {
      if (r < rank) ++*index;
      ++*sharers;
    }
  free(all);
  if (rc) fprintf(stderr, "tessera: %s\n", tessera_comm_last_error(comm));
  return rc;
}

/* Makes the communicator and grid of a distributed context, and tells how many of its processes
 * share this one's cores (core_sharers); a failure's status, with a message on stderr. */
static int distribute(tessera_context_t *ctx, const tessera_config_t *given, int p, int q,
                      int *sharers, int *index) {
  char why[256] = "";
  /* tiles that travel through host memory alone need no device endpoints (NCCL's) */
  const bool host = given->dist_transfers == TESSERA_TRANSFERS_HOST;
  tessera_comm_config_t cc = {.mpi_comm = given->mpi_comm,
                              .store = given->comm_store,
                              .ndevices = host ? 0 : tessera_device_count(ctx, TESSERA_DEVICE_CUDA),
                              .timeout_s = given->comm_timeout_s > 0 ? given->comm_timeout_s : 0,
                              .error = why,
                              .error_len = sizeof why};
  tessera_comm_t *comm = NULL;
  int rc = tessera_comm_create(&cc, &comm);
  if (rc) {
    fprintf(stderr, "tessera: the context's communicator: %s\n", why);
    return rc;
  }
  /* tiles move from threads of tessera's own: refused here rather than at every call after */
  long lo = 0, hi = 0;
  rc = tsr_host_minmax(comm, tsr_host_multithreaded(comm), &lo, &hi);
  if (rc) {
    fprintf(stderr, "tessera: %s\n", tessera_comm_last_error(comm));
  } else if (!lo) {
    if (tessera_comm_rank(comm) == 0) /* the same on every process: said once */
      fprintf(stderr, "tessera: a distributed context moves tiles from threads of its own, which "
                      "needs MPI_THREAD_MULTIPLE: initialise MPI with MPI_Init_thread(&argc, "
                      "&argv, MPI_THREAD_MULTIPLE, &provided) rather than MPI_Init, or let "
                      "tessera_init start MPI (an MPI built with thread support).\n");
    rc = TESSERA_ERR_UNSUPPORTED;
  }
  if (!rc) rc = core_sharers(comm, sharers, index);
  if (rc) {
    tessera_comm_destroy(comm);
    return rc;
  }
  const int size = tessera_comm_size(comm);
  const tessera_grid_t grid = p > 0 ? (tessera_grid_t){p, q} : squarest(size);
  const int bad = (int64_t)grid.p * grid.q != size ? 2 : 0;
  const int64_t v[] = {grid.p, grid.q};
  rc = tsr_dist_same(comm, "tessera_init", 2, v, (const int[]){2, 2},
                     (const char *const[]){"the grid's rows", "the grid's columns"}, bad);
  if (rc) {
    if (bad && tessera_comm_rank(comm) == 0) /* the same on every process: said once */
      fprintf(stderr,
              "tessera: a %d x %d process grid for %d processes: P x Q must be the number "
              "of processes.\n",
              grid.p, grid.q, size);
    else if (!bad)
      fprintf(stderr, "tessera: %s\n", tessera_comm_last_error(comm));
    tessera_comm_destroy(comm);
    return rc < 0 && rc > TESSERA_ERR_NOMEM ? -2 : rc;
  }
  if ((rc = tsr_context_span(ctx, comm, grid)) != 0) {
    tessera_comm_destroy(comm);
    return rc;
  }
  tessera_config_t *cfg = tsr_context_cfg(ctx);
  cfg->distributed = 1;
  cfg->grid_p = grid.p;
  cfg->grid_q = grid.q;
  return 0;
}

int tessera_init(tessera_context_t **out, const tessera_config_t *cfg) {
  if (!out) return -1;
  *out = NULL;
  /* the environment, read once: every TESSERA_* variable through the configuration table */
  tessera_config_t given;
  tsr_settings_extra_t extra;
  char why[256] = "";
  int rc = tsr_settings_resolve(cfg, &given, &extra, why, sizeof why);
  if (!rc) rc = tsr_settings_check(&given, why, sizeof why); /* the fields given, by one bound */
  if (rc) {
    fprintf(stderr, "tessera: %s\n", why);
    return rc;
  }
  const int p = given.grid_p, q = given.grid_q;
  if ((p < 0) != (q < 0) || (p == 0 || q == 0)) {
    fprintf(stderr, "tessera: grid_p = %d and grid_q = %d: give both (positive) or neither (-1).\n",
            p, q);
    return -2;
  }
  const int want =
      given.distributed < 0 ? given.mpi_comm || given.comm_store || p > 0 : given.distributed;
  tessera_context_t *ctx = NULL;
  rc = tsr_context_create(&ctx, &given, &extra);
  if (rc) return rc;
  tessera_config_t *c = tsr_context_cfg(ctx);
  c->distributed = want ? 1 : 0;
  c->grid_p = c->grid_q = want ? p : 0;
  int sharers = 1, index = 0; /* the processes on this one's cores, known once it spans them */
  if (want) rc = distribute(ctx, &given, p, q, &sharers, &index);
  if (!rc) rc = tsr_context_start(ctx, sharers, index);
  if (rc) {
    (void)tessera_comm_destroy(tsr_context_unspan(ctx));
    (void)tsr_context_destroy(ctx);
    return rc;
  }
  *out = ctx;
  return 0;
}

int tessera_finalize(tessera_context_t *ctx) {
  if (!ctx) return 0;
  int status = tessera_wait_all(ctx);
  /* its flows are done: the tile channel on the context's GPUs can close */
  tessera_comm_t *comm = tsr_context_unspan(ctx);
  if (comm) {
    const int c = tessera_comm_destroy(comm);
    if (!status) status = c;
  }
  const int s = tsr_context_destroy(ctx);
  return status ? status : s;
}
