/* Communicators over a key-value store (Gloo), in processes no MPI launcher started: every
 * collective on every element type (the reductions each type has), in place and not, send and
 * receive around a ring, a barrier, the same on a host queue, and NCCL-free device-less
 * communicators made one after another over one store. */
/* ctest-label: gloo */
/* ctest-gloo-procs: 2 4 */
#define _POSIX_C_SOURCE 200809L
#include <complex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "gloo_common.h"

enum { N = 37 };

static tessera_comm_t *g_comm;

static const tessera_comm_type_t types[] = {TESSERA_COMM_F32,  TESSERA_COMM_F64, TESSERA_COMM_C64,
                                            TESSERA_COMM_C128, TESSERA_COMM_I32, TESSERA_COMM_I64};

static size_t esize(tessera_comm_type_t t) {
  static const size_t s[] = {4, 8, 8, 16, 4, 8};
  return s[t];
}

static bool cplx(tessera_comm_type_t t) {
  return t == TESSERA_COMM_C64 || t == TESSERA_COMM_C128;
}

/* Element i of buf as a complex double. */
static double complex get(tessera_comm_type_t t, const void *buf, size_t i) {
  switch (t) {
  case TESSERA_COMM_F32:
    return ((const float *)buf)[i];
  case TESSERA_COMM_F64:
    return ((const double *)buf)[i];
  case TESSERA_COMM_C64:
    return ((const float complex *)buf)[i];
  case TESSERA_COMM_C128:
    return ((const double complex *)buf)[i];
  case TESSERA_COMM_I32:
    return ((const int32_t *)buf)[i];
  case TESSERA_COMM_I64:
    return (double)((const int64_t *)buf)[i];
  }
  return 0;
}

static void put(tessera_comm_type_t t, void *buf, size_t i, double complex v) {
  switch (t) {
  case TESSERA_COMM_F32:
    ((float *)buf)[i] = (float)creal(v);
    break;
  case TESSERA_COMM_F64:
    ((double *)buf)[i] = creal(v);
    break;
  case TESSERA_COMM_C64:
    ((float complex *)buf)[i] = (float complex)v;
    break;
  case TESSERA_COMM_C128:
    ((double complex *)buf)[i] = v;
    break;
  case TESSERA_COMM_I32:
    ((int32_t *)buf)[i] = (int32_t)creal(v);
    break;
  case TESSERA_COMM_I64:
    ((int64_t *)buf)[i] = (int64_t)creal(v);
    break;
  }
}

/* What process r contributes at i: small integers (exact in every type), complex ones with an
 * imaginary part. */
static double complex gen(tessera_comm_type_t t, int r, size_t i) {
  return (double)(r + 1 + (int)(i % 3)) + (cplx(t) ? I * (double)((i + (size_t)r) % 2) : 0);
}

static double complex reduce_all(tessera_comm_type_t t, tessera_reduce_t op, size_t i) {
  double complex v = gen(t, 0, i);
  for (int r = 1; r < g_size; r++) {
    const double complex x = gen(t, r, i);
    v = op == TESSERA_SUM    ? v + x
        : op == TESSERA_PROD ? v * x
        : op == TESSERA_MIN  ? (creal(x) < creal(v) ? x : v)
                             : (creal(x) > creal(v) ? x : v);
  }
  return v;
}

static void *filled(tessera_comm_type_t t, size_t n, int r) {
  void *b = malloc(n * esize(t));
  for (size_t i = 0; i < n; i++) put(t, b, i, gen(t, r, i));
  return b;
}

static void expect(tessera_comm_type_t t, const void *buf, size_t i, double complex want,
                   const char *what) {
  const double complex got = get(t, buf, i);
  if (cabs(got - want) > 1e-3 * (1 + cabs(want)))
    fail_msg("process %d: %s type %d element %zu: %g%+gi, want %g%+gi", g_rank, what, (int)t, i,
             creal(got), cimag(got), creal(want), cimag(want));
}

static void ok(int rc, const char *what) {
  if (rc) fail_msg("process %d: %s = %d (%s)", g_rank, what, rc, tessera_comm_last_error(g_comm));
}

/* Every collective on every type, without a queue or on `q`. */
static void all_collectives(tessera_comm_queue_t *q) {
  for (size_t k = 0; k < sizeof types / sizeof *types; k++) {
    const tessera_comm_type_t t = types[k];
    for (int op = TESSERA_SUM; op <= TESSERA_MAX; op++) {
      if (cplx(t) && op >= TESSERA_MIN) continue;
      void *s = filled(t, N, g_rank), *r = malloc(N * esize(t)), *in = filled(t, N, g_rank);
      ok(tessera_comm_allreduce(g_comm, s, r, N, t, op, q), "allreduce");
      ok(tessera_comm_allreduce(g_comm, in, in, N, t, op, q), "allreduce in place");
      const int root = g_size - 1;
      void *red = malloc(N * esize(t));
      ok(tessera_comm_reduce(g_comm, s, g_rank == root ? red : NULL, N, t, op, root, q), "reduce");
      void *rs = filled(t, N * (size_t)g_size, g_rank), *rso = malloc(N * esize(t));
      ok(tessera_comm_reduce_scatter(g_comm, rs, rso, N, t, op, q), "reduce_scatter");
      if (q) ok(tessera_comm_queue_sync(q), "sync");
      for (size_t i = 0; i < N; i++) {
        expect(t, r, i, reduce_all(t, op, i), "allreduce");
        expect(t, in, i, reduce_all(t, op, i), "allreduce in place");
        if (g_rank == root) expect(t, red, i, reduce_all(t, op, i), "reduce");
        expect(t, rso, i, reduce_all(t, op, (size_t)g_rank * N + i), "reduce_scatter");
      }
      free(s), free(r), free(in), free(red), free(rs), free(rso);
    }
    void *b = filled(t, N, g_rank), *all = malloc(N * (size_t)g_size * esize(t));
    ok(tessera_comm_broadcast(g_comm, b, N, t, g_size / 2, q), "broadcast");
    void *mine = filled(t, N, g_rank);
    ok(tessera_comm_allgather(g_comm, mine, all, N, t, q), "allgather");
    /* a ring: even ranks send first, odd ones receive first (sends may wait for receives) */
    void *got = malloc(N * esize(t));
    const int next = (g_rank + 1) % g_size, prev = (g_rank + g_size - 1) % g_size;
    if (g_size > 1 && g_rank % 2 == 0) ok(tessera_comm_send(g_comm, mine, N, t, next, q), "send");
    if (g_size > 1) ok(tessera_comm_recv(g_comm, got, N, t, prev, q), "recv");
    if (g_size > 1 && g_rank % 2 == 1) ok(tessera_comm_send(g_comm, mine, N, t, next, q), "send");
    ok(tessera_comm_barrier(g_comm, q), "barrier");
    if (q) ok(tessera_comm_queue_sync(q), "sync");
    for (size_t i = 0; i < N; i++) {
      expect(t, b, i, gen(t, g_size / 2, i), "broadcast");
      for (int p = 0; p < g_size; p++) expect(t, all, (size_t)p * N + i, gen(t, p, i), "allgather");
      if (g_size > 1) expect(t, got, i, gen(t, prev, i), "recv");
    }
    free(b), free(all), free(mine), free(got);
  }
}

static void test_collectives(void **state) {
  (void)state;
  all_collectives(NULL);
}

static void test_queues(void **state) {
  (void)state;
  tessera_comm_queue_t *q1 = NULL, *q2 = NULL;
  ok(tessera_comm_queue_create(g_comm, 0, NULL, &q1), "queue_create");
  ok(tessera_comm_queue_create(g_comm, 0, NULL, &q2), "queue_create");
  all_collectives(q1);
  /* two queues at once: their operations never match each other's */
  int64_t a = g_rank, b = 10 * g_rank, sa = 0, sb = 0;
  ok(tessera_comm_allreduce(g_comm, &a, &sa, 1, TESSERA_COMM_I64, TESSERA_SUM, q2), "allreduce");
  ok(tessera_comm_allreduce(g_comm, &b, &sb, 1, TESSERA_COMM_I64, TESSERA_SUM, q1), "allreduce");
  ok(tessera_comm_queue_destroy(q1), "queue_destroy");
  ok(tessera_comm_queue_destroy(q2), "queue_destroy");
  assert_int_equal(sa, (int64_t)g_size * (g_size - 1) / 2);
  assert_int_equal(sb, 10 * (int64_t)g_size * (g_size - 1) / 2);
}

static void test_describe(void **state) {
  (void)state;
  char line[512];
  assert_int_equal(tessera_comm_describe(line, sizeof line), 1);
  if (!strstr(line, "Gloo ")) fail_msg("tessera_comm_describe: %s", line);
  assert_int_equal(tessera_comm_rank(g_comm), g_rank);
  assert_int_equal(tessera_comm_size(g_comm), g_size);
}

static int setup(void **state) {
  (void)state;
  g_comm = gloo_comm(10);
  return g_comm ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  return tessera_comm_destroy(g_comm);
}

static int run(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_describe),
                                     cmocka_unit_test(test_collectives),
                                     cmocka_unit_test(test_queues)};
  return cmocka_run_group_tests(tests, setup, teardown);
}

int main(int argc, char **argv) {
  return gloo_main(argc, argv, run, 60);
}
