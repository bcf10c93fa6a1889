/* Distributed flows (dist.c): every process inserts the same task flow over tiles dealt to the
 * processes; the process owning the tile a task writes runs it, and the transfers its remote
 * reads need are inserted as tasks of their own (StarPU-MPI's model). For the algorithms layer:
 * it attaches a record to each tile of a distributed matrix and inserts through
 * tsr_dist_insert. */
#ifndef TSR_DISTRIBUTED_DIST_H
#define TSR_DISTRIBUTED_DIST_H

#include <stdbool.h>
#include <stdint.h>

#include "comm/transport.h"
#include "distributed/agree.h"
#include "runtime/flow.h"
#include "tessera/task.h"

/** A communicator's transfer engine (dist.c), its attachment (tsr_comm_attach). */
typedef struct tsr_dist tsr_dist_t;

/** The distribution's record of one tile, the same on every process. */
typedef struct {
  tsr_dist_t *d;
  int owner; /* rank holding the tile */
  int tag;   /* its transfers' tag: the same on every process */
  /* on the owner: the ranks holding the tile's current contents (a bit per rank); on the
   * others: whether this process holds them (or their receive is inserted) */
  uint8_t *sent;
  bool cached;
} tsr_dist_tile_t;

/** Records for `count` tiles of a matrix of context ctx (owner -1: set by the caller),
 *  numbered from the communicator's next tags; starts the communicator's transfer engine on
 *  first use (needs MPI_THREAD_MULTIPLE). When no distributed matrix of the communicator lives,
 *  the processes agree how tiles travel (dist.c); while one does, matrices of another context
 *  are refused. Every process makes its distributed matrices in the same order: a collective
 *  call. Free with tsr_dist_tiles_free. */
int tsr_dist_tiles(tessera_comm_t *c, tessera_context_t *ctx, size_t count,
                   tsr_dist_tile_t **tiles);
void tsr_dist_tiles_free(tsr_dist_tile_t *tiles);

/** Marks handle h as the distributed tile `t`. */
void tsr_dist_attach(tessera_data_t *h, tsr_dist_tile_t *t);

/** The record of h, or NULL for a handle of this process alone. */
tsr_dist_tile_t *tsr_dist_of(const tessera_data_t *h);

/** Inserts task `t` of a flow every process inserts alike. Without a distributed handle among
 *  its data it is tessera_task_insert. Else the owner of its first written distributed handle
 *  runs it; on that process a receive task comes first for every distributed handle it reads
 *  and does not hold, and on the owner of each such handle a send task (once per contents and
 *  destination); the other processes only note that the written tiles changed. Every written
 *  distributed handle must belong to the same process. Returns 0 or a negative status (on
 *  the context, tessera_last_error). */
int tsr_dist_insert(tessera_context_t *ctx, const tessera_task_t *t);

/** After the last task of the flow reading h has been inserted (on every process alike): a
 *  process holding a received copy of distributed tile h discards it once its readers finish
 *  (tessera_data_discard), and the owner forgets whom it sent the tile to, so a later reader
 *  receives it again. No-op for a handle of this process alone. Returns 0 or a negative
 *  status. */
int tsr_dist_flush(tessera_context_t *ctx, tessera_data_t *h);

/** A distributed flow (runtime/flow.h) over comm for context ctx: the table a distributed matrix
 *  inserts and flushes through. NULL when out of memory; free with its `destroy`. */
tsr_flow_t *tsr_dist_flow_create(tessera_context_t *ctx, tessera_comm_t *comm);

/** The rate (bytes/s) of a tile's transfer between two processes of c: over NCCL the fastest of
 *  this process's transfers of at least a MiB so far (a transfer's time counts from its
 *  posting, so one that waited for its peer reads slower), before any 25 GB/s (a PCIe link's);
 *  through the host 1.25 GB/s (a 10 Gb/s network's: a send there may end before its bytes
 *  arrive, so its time measures nothing). */
double tsr_dist_link(tessera_comm_t *c);

#endif
