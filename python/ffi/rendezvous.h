/* In-process rendezvous of the participants of one collective call.
 *
 * XLA runs a sharded computation's custom call once per device, each from its own thread. The
 * threads of one call meet here: each deposits a slot (its buffers, its device) under a key
 * (the execution's run id and the call site), the last to arrive becomes the leader, reads every
 * slot, runs the multi-device solve, and finishes the rendezvous with a status and a small result
 * that every participant then reads. A participant that does not arrive within the table's
 * timeout fails every participant that did, with TESSERA_ERR_TIMEOUT; a participant that joins
 * with another count, a slot size that differs or a rank already taken fails them too.
 */
#ifndef TSR_JAX_RENDEZVOUS_H
#define TSR_JAX_RENDEZVOUS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/** Bytes of the result a leader hands its followers. */
#define TSR_RDV_RESULT 64

typedef struct tsr_rdv tsr_rdv_t;

/** The rendezvous still gathering participants, by key. */
typedef struct {
  pthread_mutex_t lock;
  tsr_rdv_t *open;
  double timeout; /* seconds a participant waits for the others to arrive */
} tsr_rdv_table_t;

/** Initialises `t` with the arrival timeout `timeout` (seconds, > 0). Returns 0 or -1. */
int tsr_rdv_table_init(tsr_rdv_table_t *t, double timeout);
/** Destroys `t`; no rendezvous may be in progress. */
void tsr_rdv_table_destroy(tsr_rdv_table_t *t);

/** Joins rendezvous `key` (run, site) as participant `rank` of `n`, depositing `bytes` bytes
 *  of `slot`. Returns 1 to the leader (the last to arrive), which must call tsr_rdv_finish;
 *  0 to a follower once the leader has finished (the status and result are then in
 *  tsr_rdv_status / tsr_rdv_result); a negative status when the rendezvous failed (timeout,
 *  mismatched participants, out of memory). In every case but an out-of-memory failure
 *  `*out` receives the rendezvous, which the participant hands back with tsr_rdv_leave. */
int tsr_rdv_join(tsr_rdv_table_t *t, int64_t run, int64_t site, int rank, int n, const void *slot,
                 size_t bytes, tsr_rdv_t **out);

/** The slot participant `rank` deposited (leader only, before tsr_rdv_finish). */
const void *tsr_rdv_slot(const tsr_rdv_t *r, int rank);

/** Ends the leader's work: every follower wakes with `status` and a copy of `result`
 *  (at most TSR_RDV_RESULT bytes). */
void tsr_rdv_finish(tsr_rdv_table_t *t, tsr_rdv_t *r, int status, const void *result, size_t bytes);

/** The status the leader finished with (or the failure), and its result. */
int tsr_rdv_status(const tsr_rdv_t *r);
const void *tsr_rdv_result(const tsr_rdv_t *r);

/** Hands the rendezvous back; the last participant out frees it. A leader that leaves without
 *  finishing fails its followers with TESSERA_ERR_STATE. */
void tsr_rdv_leave(tsr_rdv_table_t *t, tsr_rdv_t *r);

#endif
