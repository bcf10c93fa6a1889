/* Flows (flow.c): how the tile loops insert their tasks and let go of the tiles they read,
 * whatever processes a matrix spans. A matrix carries its flow, chosen where it is made: a
 * matrix of one process the local flow of its context (insertion is tessera_task_insert, there
 * is nothing to let go, a status is its own), a distributed matrix a flow of the distributed
 * layer (src/distributed/) over its communicator. The loops call only what this header declares, so
 * a call on a one-process matrix never enters distributed code; the distributed layer fills
 * the same table. */
#ifndef TSR_RUNTIME_FLOW_H
#define TSR_RUNTIME_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tessera/comm.h"
#include "tessera/task.h"

typedef struct tsr_flow tsr_flow_t;

/** What a flow does. Every entry but `owner` is a collective call on a distributed flow: every
 *  process makes it, in the same order. Statuses are 0 or negative, with a message on the
 *  flow's context. */
typedef struct {
  /** Inserts task t (every process inserts alike; the owner of its written tile runs it). */
  int (*insert)(tsr_flow_t *f, const tessera_task_t *t);
  /** After the last task reading h is inserted: a copy of h received from another process goes
   *  once its readers finish, and its owner forgets whom it sent h to. */
  int (*flush)(tsr_flow_t *f, tessera_data_t *h);
  /** The same status on every process: the lowest negative any has, else the lowest positive
   *  (LAPACK's first failing minor), else 0. */
  int (*agree)(tsr_flow_t *f, int status);
  /** Compares k values of a collective call's arguments across the processes, with this
   *  process's own checks `rc` (0 or -argno, its message on the context) folded in: 0, or the
   *  same status everywhere, -pos[i] for the first value that differs (named names[i]). */
  int (*same)(tsr_flow_t *f, const char *call, int k, const int64_t *values, const int *pos,
              const char *const *names, int rc);
  /** Makes the count handles h[0 .. count) tiles of the flow, h[i] belonging to process
   *  owner[i] (its tasks run there; a NULL h[i] is skipped); *set is what
   *  tsr_flow_ops_t.forget releases once the handles are released. */
  int (*adopt)(tsr_flow_t *f, size_t count, tessera_data_t *const *h, const int *owner, void **set);
  void (*forget)(tsr_flow_t *f, void *set);
  /** The process owning h, -1 for a handle of this process alone. Any thread. */
  int (*owner)(const tsr_flow_t *f, const tessera_data_t *h);
  /** buf (count values of `type`) becomes the reduction `op` over the processes. */
  int (*allreduce)(tsr_flow_t *f, void *buf, size_t count, tessera_comm_type_t type,
                   tessera_reduce_t op);
  /** bytes at buf on every process become process `root`'s. */
  int (*broadcast)(tsr_flow_t *f, void *buf, size_t bytes, int root);
  /** The rate (bytes/s) at which a tile moves between two of the processes: measured where the
   *  transport allows (the fastest transfer so far), else a prior by how the tiles travel;
   *  INFINITY for a flow of one process (nothing moves). */
  double (*link)(const tsr_flow_t *f);
  /** Frees the flow (a flow its maker allocated; no-op for a context's local flow). */
  void (*destroy)(tsr_flow_t *f);
} tsr_flow_ops_t;

struct tsr_flow {
  const tsr_flow_ops_t *ops;
  tessera_context_t *ctx;
  int rank, size;   /* this process among the flow's processes, and their count */
  bool distributed; /* a flow over processes (even one), not a context's local flow */
};

/** Makes *f the local flow of ctx (the context's own, made with it). */
void tsr_flow_local_init(tessera_context_t *ctx, tsr_flow_t *f);

/** The flow of ctx's own tasks, on this process alone (lives with the context). */
tsr_flow_t *tsr_context_local_flow(tessera_context_t *ctx);

/** The flow over the processes ctx spans (tessera_config_t.distributed; set by the layers
 *  above when they make the context), else its local flow. */
tsr_flow_t *tsr_context_flow(const tessera_context_t *ctx);
void tsr_context_set_flow(tessera_context_t *ctx, tsr_flow_t *f);

static inline int tsr_flow_insert(tsr_flow_t *f, const tessera_task_t *t) {
  return f->ops->insert(f, t);
}
static inline int tsr_flow_flush(tsr_flow_t *f, tessera_data_t *h) {
  return f->ops->flush(f, h);
}
static inline int tsr_flow_agree(tsr_flow_t *f, int status) {
  return f->ops->agree(f, status);
}
static inline int tsr_flow_owner(const tsr_flow_t *f, const tessera_data_t *h) {
  return f->ops->owner(f, h);
}
/** Whether this process runs the tasks that write h. */
static inline bool tsr_flow_mine(const tsr_flow_t *f, const tessera_data_t *h) {
  const int o = f->ops->owner(f, h);
  return o < 0 || o == f->rank;
}
/** Whether a handle of process `owner` (-1: this process's alone) is this process's. */
static inline bool tsr_flow_is_mine(const tsr_flow_t *f, int owner) {
  return owner < 0 || owner == f->rank;
}

/** A workspace handle (tessera_data_create_workspace: no home, it lives where its first writer
 *  runs) of rows x cols elements of es bytes, a tile of flow f owned by process `owner`.
 *  Collective on a distributed flow. Free it with tsr_flow_workspace_free. */
int tsr_flow_workspace(tsr_flow_t *f, int owner, size_t rows, size_t cols, size_t es,
                       tessera_data_t **w, void **set);
/** After w's last reader is inserted: its received copies go, it is released (waiting for its
 *  tasks) and forgotten by the flow. Returns `rc`, else the first failure. */
int tsr_flow_workspace_free(tsr_flow_t *f, tessera_data_t *w, void *set, int rc);

#endif
