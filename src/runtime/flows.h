/* What the distributed flows (src/distributed/) need of the runtime, and nothing more: a record on
 * a data handle the runtime carries without reading, a handle's shape, whether a context makes
 * progress (flows.c), and tasks chained in insertion order (task.h's tsr_task_insert_chained). */
#ifndef TSR_RUNTIME_FLOWS_H
#define TSR_RUNTIME_FLOWS_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/task.h"
#include "tessera/context.h"
#include "tessera/data.h"

/** Sets / gets the record the layers above attach to handle h (NULL: none). */
void tsr_data_set_record(tessera_data_t *h, void *record);
void *tsr_data_record(const tessera_data_t *h);

/** The rows, columns and element size h was made with. */
void tsr_data_shape(const tessera_data_t *h, size_t *rows, size_t *cols, size_t *elsize);

/** A count that moves whenever ctx's tasks are inserted or finish; *running: whether one of its
 *  workers is running a kernel now. Any thread. */
long tsr_context_progress(const tessera_context_t *ctx, bool *running);

#endif
