/* Agreement across the processes of a collective call (agree.c), the one module every layer
 * above uses to make all processes end a call alike: the same arguments (compared, with each
 * process's own checks folded in), the same status, the smallest of a value. Each is a
 * collective call over the communicator, made by every process in the same order. */
#ifndef TSR_DISTRIBUTED_AGREE_H
#define TSR_DISTRIBUTED_AGREE_H

#include <stddef.h>
#include <stdint.h>

#include "comm/transport.h"
#include "tessera/context.h"

/** Compares k values of a collective call's arguments across the processes of c (the lowest and
 *  highest of each in one pair of all-reduces), folding in `bad`, this process's first invalid
 *  argument (0: none): the same status everywhere, -pos[i] for the first value that differs
 *  (named names[i] in the message on c), else minus the first invalid argument any process
 *  has. At most 12 values. */
int tsr_dist_same(tessera_comm_t *c, const char *call, int k, const int64_t *values, const int *pos,
                  const char *const *names, int bad);

/** tsr_dist_same with this process's own checks as a status `rc` (0 or -argno, its message on
 *  ctx) and the outcome on ctx: 0, or the same status on every process, the process at fault
 *  keeping its own message and the others taking the communicator's. */
int tsr_dist_same_on(tessera_context_t *ctx, tessera_comm_t *c, const char *call, int k,
                     const int64_t *values, const int *pos, const char *const *names, int rc);

/** The same status on every process of c: the lowest negative status any has, else the lowest
 *  positive one (LAPACK's first failing minor), else 0. */
int tsr_dist_agree(tessera_comm_t *c, int status);

/** tsr_dist_agree for a status found on some processes only (a check of this process's own
 *  resources): the processes that did not find it take `why` as their message on ctx. */
int tsr_dist_agree_on(tessera_context_t *ctx, tessera_comm_t *c, int status, const char *why);

/** v (count values of type t) becomes its reduction `op` over the processes of c, the same bits
 *  on every process: a floating-point sum or product, which each process may round in its own
 *  order, is process 0's, broadcast. 0, or the communicator's failure. */
int tsr_dist_allreduce(tessera_comm_t *c, void *v, size_t count, tessera_comm_type_t t,
                       tessera_reduce_t op);

/** bytes at buf (a whole number of 32-bit words) on every process of c become process root's,
 *  in messages of at most 2^28 words; a process passing NULL takes them and drops them.
 *  0, or the communicator's failure. */
int tsr_dist_broadcast(tessera_comm_t *c, void *buf, size_t bytes, int root);

/** *value becomes the smallest any process of c holds. 0, or the communicator's failure with
 *  its message on ctx, prefixed by `call`. */
int tsr_dist_min(tessera_context_t *ctx, tessera_comm_t *c, const char *call, int64_t *value);

#endif
