/* Agreement across the processes of a collective call (see agree.h). */
#include <stdbool.h>
#include <string.h>

#include "distributed/agree.h"
#include "tessera/distribution.h"
#include "runtime/error.h"

int tsr_dist_same(tessera_comm_t *c, const char *call, int k, const int64_t *values, const int *pos,
                  const char *const *names, int bad) {
  enum { MAXV = 12 };
  int64_t v[MAXV + 1], lo[MAXV + 1], hi[MAXV + 1];
  if (k > MAXV)
    return tsr_comm_error(c, TESSERA_ERR_STATE, "%s: too many arguments to compare", call);
  memcpy(v, values, (size_t)k * sizeof *v);
  v[k] = bad ? bad : 99;
  int rc = tessera_comm_allreduce(c, v, lo, (size_t)k + 1, TESSERA_COMM_I64, TESSERA_MIN, NULL);
  if (rc == 0)
    rc = tessera_comm_allreduce(c, v, hi, (size_t)k + 1, TESSERA_COMM_I64, TESSERA_MAX, NULL);
  if (rc) return rc;
  for (int i = 0; i < k; i++)
    if (lo[i] != hi[i])
      return tsr_comm_error(c, -pos[i],
                            "%s: %s differs across the processes (from %lld to %lld); every "
                            "process must pass the same.",
                            call, names[i], (long long)lo[i], (long long)hi[i]);
  if (lo[k] != 99)
    return tsr_comm_error(c, -(int)lo[k], "%s: argument %d is invalid on %s.", call, (int)lo[k],
                          bad == lo[k] ? "this process" : "another process");
  return 0;
}

int tsr_dist_same_on(tessera_context_t *ctx, tessera_comm_t *c, const char *call, int k,
                     const int64_t *values, const int *pos, const char *const *names, int rc) {
  const int s = tsr_dist_same(c, call, k, values, pos, names, rc < 0 ? -rc : 0);
  if (!s) return 0;
  return s == rc ? rc : tsr_error(ctx, s, "%s", tessera_comm_last_error(c));
}

/* *status becomes the agreed one: the lowest negative status, else the lowest positive one, as
 * one minimum over an encoding. 0 or the communicator's failure. */
static int agree(tessera_comm_t *c, int *status) {
  const long big = 1L << 40;
  long lo = 0, hi = 0;
  const int rc = tsr_host_minmax(c, *status ? *status : big, &lo, &hi);
  if (!rc) *status = lo == big ? 0 : (int)lo;
  return rc;
}

int tsr_dist_agree(tessera_comm_t *c, int status) {
  const int rc = agree(c, &status);
  return rc ? rc : status;
}

int tsr_dist_agree_on(tessera_context_t *ctx, tessera_comm_t *c, int status, const char *why) {
  const int s = tsr_dist_agree(c, status);
  return s && !status ? tsr_error(ctx, s, "%s", why) : s;
}

int tsr_dist_min(tessera_context_t *ctx, tessera_comm_t *c, const char *call, int64_t *value) {
  int64_t lo = *value;
  const int a = tessera_comm_allreduce(c, value, &lo, 1, TESSERA_COMM_I64, TESSERA_MIN, NULL);
  if (a) return tsr_error(ctx, a, "%s: %s", call, tessera_comm_last_error(c));
  *value = lo;
  return 0;
}

int tessera_agree(tessera_comm_t *comm, int *status) {
  if (!comm) return -1;
  if (!status) return -2;
  return agree(comm, status);
}

int tessera_agree_values(tessera_comm_t *comm, int count, const int64_t *values, int *differs,
                         int *status) {
  enum { MAXV = 16 };
  if (!comm) return -1;
  if (count < 0 || count > MAXV) return -2;
  if (count && !values) return -3;
  if (!differs) return -4;
  if (!status) return -5;
  /* one all-reduce: the highest of each value and of its negation (the lowest), and of the
   * negated status (the lowest status) */
  int64_t v[2 * MAXV + 1];
  for (int i = 0; i < count; i++) v[i] = values[i], v[count + i] = -values[i];
  v[2 * count] = *status < 0 ? -(int64_t)*status : 0;
  const int rc = tessera_comm_allreduce(comm, v, v, (size_t)(2 * count + 1), TESSERA_COMM_I64,
                                        TESSERA_MAX, NULL);
  if (rc) return rc;
  *differs = -1;
  for (int i = 0; i < count && *differs < 0; i++)
    if (v[i] != -v[count + i]) *differs = i;
  if (v[2 * count] > 0) *status = (int)-v[2 * count];
  return 0;
}

int tsr_dist_allreduce(tessera_comm_t *c, void *v, size_t count, tessera_comm_type_t t,
                       tessera_reduce_t op) {
  if (count == 0) return 0;
  int rc = tessera_comm_allreduce(c, v, v, count, t, op, NULL);
  const bool exact =
      t == TESSERA_COMM_I32 || t == TESSERA_COMM_I64 || op == TESSERA_MIN || op == TESSERA_MAX;
  if (!rc && !exact) rc = tessera_comm_broadcast(c, v, count, t, 0, NULL);
  return rc;
}

int tsr_dist_broadcast(tessera_comm_t *c, void *buf, size_t bytes, int root) {
  /* a process without a buffer takes the words in pieces and drops them */
  enum { PIECE = 4096 };
  const size_t most = (size_t)1 << 28;
  int32_t piece[PIECE];
  int rc = 0;
  const size_t words = bytes / 4, step = buf ? most : PIECE;
  for (size_t at = 0; at < words && !rc; at += step) {
    const size_t k = words - at < step ? words - at : step;
    rc = tessera_comm_broadcast(c, buf ? (int32_t *)buf + at : piece, k, TESSERA_COMM_I32, root,
                                NULL);
  }
  return rc;
}
