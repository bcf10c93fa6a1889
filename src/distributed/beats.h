/* Heartbeats between the transfer engines of the processes (beats.c), so that a transfer's
 * timeout counts from the last sign of its peer's progress rather than from its posting: a
 * process busy in a long task keeps its peers' transfers waiting, a process that has stopped
 * (gone, or waiting itself) lets them fail after the communicator's timeout. Used by one thread
 * at a time (the engine's; open and close around it). */
#ifndef TSR_DISTRIBUTED_BEATS_H
#define TSR_DISTRIBUTED_BEATS_H

#include <stdbool.h>

#include "comm/transport.h"

typedef struct tsr_beats tsr_beats_t;

/** Starts the heartbeats of this process on `chan` under `tag` (a tag no other message of the
 *  channel uses), sent at most every `period` seconds; posts a receive for every peer. */
int tsr_beats_open(tessera_comm_t *c, tsr_host_chan_t *chan, int tag, double period,
                   tsr_beats_t **out);
/** Takes the beats that arrived (at most four times a period) and, when a period has passed
 *  since the last beat sent and `progressed(arg)` says this process progressed since it was
 *  last asked, sends every peer one. `progressed` is asked only then. */
void tsr_beats_poll(tsr_beats_t *b, bool (*progressed)(void *arg), void *arg);
/** When the last beat of `peer` arrived (tsr_now; the open's time before any). */
double tsr_beats_heard(const tsr_beats_t *b, int peer);
/** Cancels the receives, lets the last sends complete, frees. NULL: nothing. */
void tsr_beats_close(tsr_beats_t *b);

#endif
