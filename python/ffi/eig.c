/* The Hermitian eigensolver on the shards of a JAX call (operation syevd of the handler table,
 * flag EIGEN).
 *
 * tessera_syevd / tessera_heevd run LAPACK-style on host memory of one process, so the shards are
 * gathered: the leader copies each of its devices' blocks (row-major, from wherever they lie)
 * into one column-major n x n host copy of A, transposing as it goes, and the eigensolver reads
 * that copy's lower triangle (A's) on the process's context, its tile tasks on the call's
 * devices. With vectors, V (column-major) is transposed back into each device's block, in place
 * of its shard of A; every device receives the eigenvalues. Rows and columns past n are padding,
 * never read; a device's padding comes back as zeros.
 *
 * Across processes the solve runs once, on the process of mesh device 0 (the root): the
 * processes' copies, each holding only its own devices' blocks (zeros elsewhere), are summed
 * into the root's (adding zeros is exact), and the root broadcasts the eigenvalues and V. The
 * solve may outlast the communicator's timeout, which bounds how long a collective waits for a
 * process, so the processes beat meanwhile: the root solves on a thread of its own while its
 * leader joins the others in a one-element all-reduce every few milliseconds until it is done. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eig.h"

/* Most elements one collective moves (MPI counts in int). */
#define CHUNK ((size_t)1 << 30)

/* One call of the library's eigensolver, run on the root (on a thread of its own when other
 * processes wait for it). */
typedef struct {
  tessera_context_t *ctx;
  tessera_job_t job;
  tessera_dtype_t dtype;
  int64_t n;
  void *a, *w; /* A, column-major with leading dimension n; the eigenvalues */
  int rc;
  atomic_int done;
} solve_t;

typedef struct {
  uint64_t w[2];
} u128_t;

/* out (c x r, column-major, leading dimension ldo) = in (r x c, ldi) transposed, in blocks of
 * 64 x 64 so that both sides stay in cache. */
#define TRANSPOSE(T)                                                                               \
  for (int64_t j0 = 0; j0 < c; j0 += 64)                                                           \
    for (int64_t i0 = 0; i0 < r; i0 += 64)                                                         \
      for (int64_t j = j0; j < c && j < j0 + 64; j++)                                              \
        for (int64_t i = i0; i < r && i < i0 + 64; i++)                                            \
          ((T *)out)[(size_t)j + (size_t)i * (size_t)ldo] =                                        \
              ((const T *)in)[(size_t)i + (size_t)j * (size_t)ldi];

static void transpose(size_t es, int64_t r, int64_t c, const void *in, int64_t ldi, void *out,
                      int64_t ldo) {
  if (es == 4) {
    TRANSPOSE(uint32_t)
  } else if (es == 8) {
    TRANSPOSE(uint64_t)
  } else {
    TRANSPOSE(u128_t)
  }
}

/* Where a participant's block lies in A: its first row and column, and how many of its rows and
 * columns lie within n (none when the block is all padding). */
typedef struct {
  int64_t r0, c0, nr, nc;
} place_t;

static place_t place_of(const call_t *c, const part_t *p) {
  place_t at = {(p->rank / c->gcols) * p->rows, (p->rank % c->gcols) * p->cols, 0, 0};
  at.nr = p->n - at.r0 < p->rows ? p->n - at.r0 : p->rows;
  at.nc = p->n - at.c0 < p->cols ? p->n - at.c0 : p->cols;
  if (at.nr < 0 || at.nc < 0) at.nr = at.nc = 0;
  return at;
}

/* A participant's block into the host copy h (n x n, column-major). Read column-major, the
 * row-major block is Aᵀ's (cols x rows, leading dimension cols), so it goes in transposed. A
 * device's block is copied to the host (`stage`) first. */
static int gather(tessera_context_t *ctx, const call_t *c, const part_t *p, size_t es, void *stage,
                  void *h) {
  const place_t at = place_of(c, p);
  if (!at.nr || !at.nc) return 0;
  const void *src = p->a;
  if (p->node != TESSERA_HOST_NODE) {
    if (tessera_memory_copy(ctx, TESSERA_HOST_NODE, stage, p->node, p->a,
                            (size_t)(p->rows * p->cols) * es))
      return TESSERA_ERR_BACKEND;
    src = stage;
  }
  transpose(es, at.nc, at.nr, src, p->cols,
            (char *)h + ((size_t)at.r0 + (size_t)at.c0 * (size_t)p->n) * es, p->n);
  return 0;
}

/* The eigenvalues into a participant's W and, with vectors, its block of V (in h) into its
 * buffer of A, transposed back to row-major (through `stage` for a device, its padding zeros). */
static int scatter(tessera_context_t *ctx, const call_t *c, const part_t *p, size_t es, size_t rs,
                   void *stage, const void *h, const void *w) {
  if (tessera_memory_copy(ctx, p->node, p->w, TESSERA_HOST_NODE, w, (size_t)p->n * rs))
    return TESSERA_ERR_BACKEND;
  const place_t at = place_of(c, p);
  if (!p->vectors || !at.nr || !at.nc) return 0;
  const size_t bytes = (size_t)(p->rows * p->cols) * es;
  void *dst = p->node == TESSERA_HOST_NODE ? p->a : stage;
  if (dst == stage) memset(stage, 0, bytes);
  transpose(es, at.nr, at.nc, (const char *)h + ((size_t)at.r0 + (size_t)at.c0 * (size_t)p->n) * es,
            p->n, dst, p->cols);
  if (dst == stage && tessera_memory_copy(ctx, p->node, p->a, TESSERA_HOST_NODE, stage, bytes))
    return TESSERA_ERR_BACKEND;
  return 0;
}

/* The root's reduce (sum) of `count` elements of buf in place, or its broadcast of them, in
 * chunks MPI can count. 0, or TESSERA_ERR_TIMEOUT when the processes cannot be reached. */
static int move(const call_t *c, int broadcast, void *buf, size_t count, tessera_comm_type_t type,
                size_t es, int root) {
  const int mine = c->rank_of[c->process] == root;
  for (size_t at = 0; at < count; at += CHUNK) {
    const size_t k = count - at < CHUNK ? count - at : CHUNK;
    char *b = (char *)buf + at * es;
    if (broadcast
            ? tessera_comm_broadcast(c->comm, b, k, type, root, NULL)
            : tessera_comm_reduce(c->comm, b, mine ? b : NULL, k, type, TESSERA_SUM, root, NULL)) {
      fprintf(stderr, "tessera.jax: %s\n", tessera_comm_last_error(c->comm));
      return TESSERA_ERR_TIMEOUT;
    }
  }
  return 0;
}

static void *solver(void *arg) {
  solve_t *s = arg;
  const int complex = s->dtype == TESSERA_C64 || s->dtype == TESSERA_C128;
  s->rc = (complex ? tessera_heevd : tessera_syevd)(s->ctx, s->job, TESSERA_LOWER, s->dtype, s->n,
                                                    s->a, s->n, s->w);
  atomic_store(&s->done, 1);
  return NULL;
}

/* The solve on the root, the other processes beating with it until it is done: the root's
 * status (0 elsewhere), or TESSERA_ERR_TIMEOUT when the processes lost each other. */
static int solve(const call_t *c, solve_t *s, int root) {
  if (!c->comm) return solver(s), s->rc;
  const int mine = c->rank_of[c->process] == root;
  pthread_t thread;
  const int threaded = mine && pthread_create(&thread, NULL, solver, s) == 0;
  if (mine && !threaded) solver(s); /* no thread: the others wait as long as the timeout lets */
  int rc = 0;
  for (int64_t done = 0; !done;) {
    done = atomic_load(&s->done); /* 0 but on the root once its solve has returned */
    if (tessera_comm_allreduce(c->comm, &done, &done, 1, TESSERA_COMM_I64, TESSERA_MAX, NULL)) {
      fprintf(stderr, "tessera.jax: %s\n", tessera_comm_last_error(c->comm));
      rc = TESSERA_ERR_TIMEOUT;
      break;
    }
    if (!done && mine) nanosleep(&(struct timespec){.tv_nsec = 5000000}, NULL);
  }
  if (threaded) pthread_join(thread, NULL);
  return rc ? rc : mine ? s->rc : 0;
}

int tsr_jax_eig(tessera_context_t *ctx, const call_t *c, const part_t *p, int count) {
  const int64_t n = p[0].n;
  const tessera_dtype_t dt = (tessera_dtype_t)p[0].dtype;
  const tessera_dtype_t real = dt == TESSERA_F32 || dt == TESSERA_C64 ? TESSERA_F32 : TESSERA_F64;
  const size_t es = tessera_dtype_size(dt), rs = tessera_dtype_size(real);
  const int root = c->comm ? c->rank_of[c->owners[0]] : 0;
  if (n < 1) return 0; /* the same n on every process (handlers.c's same_op) */
  int on_device = 0;
  for (int i = 0; i < count; i++) on_device |= p[i].node != TESSERA_HOST_NODE;
  solve_t s = {.ctx = ctx,
               .job = p[0].vectors ? TESSERA_VECTORS : TESSERA_VALUES,
               .dtype = dt,
               .n = n,
               .a = calloc((size_t)(n * n), es),
               .w = malloc((size_t)n * rs)};
  atomic_init(&s.done, 0);
  void *stage = on_device ? malloc((size_t)(p[0].rows * p[0].cols) * es) : NULL;
  int rc = !s.a || !s.w || (on_device && !stage) ? TESSERA_ERR_NOMEM : 0;
  if (rc)
    fprintf(stderr, "tessera.jax: out of memory for a copy of A (order %lld)\n", (long long)n);
  for (int i = 0; i < count && !rc; i++) rc = gather(ctx, c, &p[i], es, stage, s.a);
  if (rc == TESSERA_ERR_BACKEND) fprintf(stderr, "tessera.jax: %s\n", tessera_last_error(ctx));
  rc = tsr_jax_agree(c, rc);
  if (!rc && c->comm) rc = move(c, 0, s.a, (size_t)(n * n), (tessera_comm_type_t)dt, es, root);
  if (!rc) {
    rc = solve(c, &s, root);
    if (rc < 0 && rc != TESSERA_ERR_TIMEOUT)
      fprintf(stderr, "tessera.jax: %s\n", tessera_last_error(ctx));
    if (rc != TESSERA_ERR_TIMEOUT) rc = tsr_jax_agree(c, rc);
  }
  if (!rc && c->comm) {
    rc = move(c, 1, s.w, (size_t)n, (tessera_comm_type_t)real, rs, root);
    if (!rc && p[0].vectors)
      rc = move(c, 1, s.a, (size_t)(n * n), (tessera_comm_type_t)dt, es, root);
  }
  for (int i = 0; i < count && !rc; i++)
    if ((rc = scatter(ctx, c, &p[i], es, rs, stage, s.a, s.w)) != 0)
      fprintf(stderr, "tessera.jax: %s\n", tessera_last_error(ctx));
  free(stage);
  free(s.a);
  free(s.w);
  return rc == TESSERA_ERR_TIMEOUT ? rc : tsr_jax_agree(c, rc);
}
