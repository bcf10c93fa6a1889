/* Calls small for their mesh (small.c): potrs, cholesky and lu_solve on a mesh of row blocks,
 * and syevd on one of one device or more, may run on one device of each process instead of the
 * distributed routine (syevd's: through host memory), when the measured seconds of both ways
 * say that one device is the quicker. */
#ifndef TSR_JAX_SMALL_H
#define TSR_JAX_SMALL_H

#include <stdbool.h>

#include "call.h"

/** The binding's policy for such a call: 0 for the distributed routine, 1 for one device, from
 *  the calls each way has taken (`calls`), the mean seconds of each but its first (`mean`) and
 *  the least seconds one device can take (`floor`: the operation's flops at the device's peak
 *  rate): the distributed routine until it has a measurement past its warm-up, and for good
 *  where one device could not be quicker even at its peak; else one device until it has a
 *  measurement, then whichever is quicker. */
int tsr_jax_path(const int64_t calls[TSR_JAX_PATHS], const double mean[TSR_JAX_PATHS],
                 double floor);

/** Whether the call may run on one device: potrs, cholesky or lu_solve, not mixed precision,
 *  on a mesh of several devices in row blocks (gcols 1), or syevd on a mesh of row blocks
 *  covering A without padding, each process holding as many of them (on CPUs) as every other.
 *  The same on every process. */
bool tsr_jax_small_eligible(const call_t *c, const part_t *p);

/** The way an eligible call runs (tsr_jax_path on its shape's timings in s, the processes'
 *  slowest measurements when the mesh spans several, so that every process takes the same
 *  way; syevd's as the context's eig_method says where it fixes one, TESSERA_EIG_METHOD=one
 *  one device, two the routine): 0 or 1, with `*entry` the timings to record it in; or a negative
 * status when the processes cannot be reached. The caller holds the context (tsr_jax_hold). */
int tsr_jax_small_choose(tsr_jax_state_t *s, tessera_context_t *ctx, const call_t *c,
                         const part_t *p, tsr_jax_timing_t **entry);

/** Adds `seconds`, the time of a call that took `path`, to its shape's timings. */
void tsr_jax_small_record(tsr_jax_timing_t *e, int path, double seconds);

/** Seconds of a monotonic clock. */
double tsr_jax_seconds(void);

/** The call on one device of each process (the leader's, the context held): A's shards
 *  gathered into one matrix there (device to device within the process, over the communicator
 *  between processes), tessera_queue_posv, tessera_queue_gesv or tessera_queue_syevd on it, and
 *  the result written into every device's shards as the distributed routine writes them (syevd's
 *  rows of V by tessera_queue_transpose; where its solve gives an info or a NaN eigenvalue, the
 *  call declines: the routine, which scans A, gives the status). Returns its status,
 *  agreed over the processes as the distributed routine's, and `*logdet` for potrs; or, with
 *  `*declined`, nothing done because some process had no memory for the whole matrix (the
 *  caller then runs the distributed routine). */
int tsr_jax_small_solve(tsr_jax_state_t *s, tessera_context_t *ctx, const call_t *c,
                        const part_t *p, int count, double *logdet, bool *declined);

/** A batch of potrs or cholesky calls (p[0].batch members, one process, no communicator), each
 *  member on one device: the members dealt in contiguous blocks over the process's GPUs (all on
 *  the first device on CPUs, or for fewer members than devices), each block's shards gathered
 *  onto its device (one strided copy per device and operand on that device's XLA stream), one
 *  batched tessera_queue_posv_batch there, the results written back into every device's
 *  shards; the GPUs work on their blocks at once. Member i's info (its NaN result left to the
 *  caller, as jax's) in status[i], its log det in logdet[i]. Returns 0 or a negative status;
 *  `*declined` with nothing done where a device had no memory for its block. */
int tsr_jax_small_batch(tsr_jax_state_t *s, tessera_context_t *ctx, const call_t *c,
                        const part_t *p, int count, int32_t *status, double *logdet,
                        bool *declined);

#endif
