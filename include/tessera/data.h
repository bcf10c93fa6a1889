/* tessera — data handles.
 *
 * A data handle stands for one buffer: a 2D block of `rows` x `cols` elements of `elsize`
 * bytes, column-major with leading dimension `ld` (a plain buffer is rows = bytes, cols = 1,
 * elsize = 1). It has a home memory node and one replica per memory node, each Invalid,
 * Shared or Owned. A task reading the handle makes a replica valid where it runs; a task
 * writing it invalidates the others. Memory the user already has (host or device) is
 * registered in place: no copy is made, and the home replica is that memory.
 */
#ifndef TESSERA_DATA_H
#define TESSERA_DATA_H

#include "tessera/context.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque data handle. */
typedef struct tessera_data tessera_data_t;

/** Registers user memory in place as a handle homed on memory node `node`.
 *  @param ptr     first element (may be NULL only when rows or cols is 0)
 *  @param rows    elements per column
 *  @param cols    number of columns
 *  @param ld      distance in elements between columns (>= rows)
 *  @param elsize  bytes per element (> 0)
 *  @param out     receives the handle
 *  @return 0 or a negative status (message in tessera_last_error).
 *  Not thread safe against concurrent insertion on the same context. */
TESSERA_API int tessera_data_register(tessera_context_t *ctx, int node, void *ptr, size_t rows,
                                      size_t cols, size_t ld, size_t elsize, tessera_data_t **out);

/** Creates a handle whose home memory is allocated by tessera on the host (pinned where a
 *  GPU backend is present), contiguous with ld = rows. The contents start undefined; the
 *  first task touching it should write it. */
TESSERA_API int tessera_data_create(tessera_context_t *ctx, size_t rows, size_t cols, size_t elsize,
                                    tessera_data_t **out);

/** Creates a handle homed on memory node `node` (0: host, as tessera_data_create; a device
 *  node: memory from that device's pool, evicting unused replicas if needed), contiguous. */
TESSERA_API int tessera_data_create_on(tessera_context_t *ctx, int node, size_t rows, size_t cols,
                                       size_t elsize, tessera_data_t **out);

/** Creates a workspace handle: scratch memory with no home allocated, for intermediate results
 *  of a flow (an algorithm's temporary tiles). The first task touching it, which must write it
 *  (its contents start undefined), gets its replica allocated on the memory node where it runs,
 *  from that node's pool; later tasks copy it between nodes as any handle's. It is copied to the
 *  host only when evicted from a full device pool as its last valid copy, or when the caller
 *  syncs it; tessera_data_release frees it without copying it back.
 *  @return 0 or a negative status (message in tessera_last_error).
 *  Not thread safe against concurrent insertion on the same context. */
TESSERA_API int tessera_data_create_workspace(tessera_context_t *ctx, size_t rows, size_t cols,
                                              size_t elsize, tessera_data_t **out);

/** Ends the contents of workspace handle `h` without waiting: once the tasks inserted so far on
 *  it have finished, its replicas are freed (their memory returns to the host or to the
 *  devices' pools) and its contents are undefined; the next task must write it (and allocates
 *  it again where it runs). For a tile whose last reader has been inserted (Chameleon's flush
 *  after last use). Needs no worker of any kind.
 *  @return 0; -2 for a NULL handle, one of another context or one that is not a workspace;
 *          TESSERA_ERR_NOMEM. Not thread safe against concurrent insertion on the context. */
TESSERA_API int tessera_data_discard(tessera_context_t *ctx, tessera_data_t *h);

/** Waits for every task inserted so far that uses `h`, writes back the latest contents to the
 *  home node (not for a workspace handle), and frees the handle (and memory tessera allocated
 *  for it). NULL is a no-op. Returns 0 or a negative status. */
TESSERA_API int tessera_data_release(tessera_context_t *ctx, tessera_data_t *h);

/** Waits for every task inserted so far that uses `h` and makes the home replica current, so
 *  the caller may read the home memory. Returns a status of the whole flow, not of this
 *  handle's tasks alone: the first failure (see tessera_wait_all) any task of the context
 *  recorded since the last tessera_wait_all, which a failure of another handle's task still
 *  running may also set; 0 when none has so far. Unlike tessera_wait_all it neither waits for
 *  other tasks nor resets the flow's status. A failing copy to the home node returns its own
 *  status. */
TESSERA_API int tessera_data_sync(tessera_context_t *ctx, tessera_data_t *h);

/** Home pointer of the handle (valid to read after tessera_data_sync). */
TESSERA_API void *tessera_data_ptr(const tessera_data_t *h);

/** Leading dimension (elements) of the home replica. */
TESSERA_API size_t tessera_data_ld(const tessera_data_t *h);

#ifdef __cplusplus
}
#endif
#endif
