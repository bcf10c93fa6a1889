/* tessera_queue_posv and tessera_queue_gesv on host memory (queue NULL) and, in builds with
 * simulated devices, on each of them (host memory behind a device's node, a queue token):
 * the cases of queue_cases.h, calls from several threads at once, and invalid arguments, each
 * refused with its LAPACK-style number and a message before anything runs.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "lu_common.h"
#include "queue_cases.h"

/* A copy with a page to spare: OpenBLAS's complex gemv kernels (in cheevd's reduction) read a
 * few hundred bytes past a matrix's last column, which faults where an allocator ends the
 * array at the end of its mapping (AddressSanitizer's large blocks). */
static void *host_put(const void *host, size_t bytes) {
  void *p = malloc(bytes + 4096);
  if (bytes) memcpy(p, host, bytes);
  return p;
}
static void host_get(void *host, const void *mem, size_t bytes) {
  if (bytes) memcpy(host, mem, bytes);
}
static void host_sync(void *queue) {
  (void)queue;
}

/* The host node, then each accelerator of a build with simulated devices (their memory is host
 * memory; any non-NULL queue stands for one of theirs). */
static int nodes(tessera_context_t *ctx, qc_node_t *out, int max) {
  static char token;
  int n = 0;
  out[n++] = (qc_node_t){TESSERA_HOST_NODE, NULL, host_put, host_get, free, host_sync};
  tessera_device_info_t info;
  for (int d = 0; n < max && tessera_device_info(ctx, TESSERA_DEVICE_SIM, d, &info) == 0; d++)
    out[n++] = (qc_node_t){info.memory_node, &token, host_put, host_get, free, host_sync};
  return n;
}

static void test_posv(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(32);
  qc_node_t nd[4];
  for (int i = 0, n = nodes(ctx, nd, 4); i < n; i++) {
    qc_posv_cases(ctx, &nd[i]);
    qc_posv_batch_cases(ctx, &nd[i]);
  }
  lc_finalize(ctx);
}

static void test_syevd(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(32);
  qc_node_t nd[4];
  for (int i = 0, n = nodes(ctx, nd, 4); i < n; i++) {
    qc_syevd_cases(ctx, &nd[i]);
    qc_transpose_cases(ctx, &nd[i]);
  }
  lc_finalize(ctx);
}

static void test_gesv(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(32);
  qc_node_t nd[4];
  for (int i = 0, n = nodes(ctx, nd, 4); i < n; i++) qc_gesv_cases(ctx, &nd[i]);
  lc_finalize(ctx);
}

/* Several threads solving on one node at once: each its own system, every one solved. */
typedef struct {
  tessera_context_t *ctx;
  int seed, failures;
} worker_t;

static void *solve_many(void *arg) {
  worker_t *w = arg;
  const int64_t n = 48, ldb = n;
  for (int it = 0; it < 20; it++) {
    mat_t m = lu_gen(TESSERA_F64, n, n, 1, (uint64_t)(w->seed * 100 + it));
    double b[48], x[48];
    for (int i = 0; i < n; i++) b[i] = x[i] = 1.0 + i % 5;
    zc_t bz[48];
    for (int i = 0; i < n; i++) bz[i] = b[i];
    int info = -1;
    int rc = tessera_queue_gesv(w->ctx, TESSERA_HOST_NODE, NULL, TESSERA_NOTRANS, TESSERA_F64, n, 1,
                                m.a, m.lda, x, ldb, &info);
    if (rc || info || !(op_resid(TESSERA_F64, TESSERA_NOTRANS, n, 1, m.full, x, ldb, bz) < 10))
      w->failures++;
    lu_mat_free(&m);
  }
  return NULL;
}

static void test_threads(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(32);
  pthread_t t[4];
  worker_t w[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (worker_t){ctx, i + 1, 0};
    assert_int_equal(pthread_create(&t[i], NULL, solve_many, &w[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(w[i].failures, 0);
  }
  lc_finalize(ctx);
}

/* Each invalid argument alone: its number, a message, nothing written. */
static void test_arguments(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(32);
  double a[16] = {4, 0, 0, 0, 0, 4, 0, 0, 0, 0, 4, 0, 0, 0, 0, 4}, b[4] = {1, 1, 1, 1};
  int info = 77;
  char token;
  const int nn = tessera_memory_node_count(ctx);
  assert_int_equal(
      tessera_queue_posv(NULL, 0, NULL, 'L', 'L', TESSERA_F64, 4, 1, a, 4, b, 4, &info, NULL), -1);
#define POSV(expect, node, queue, uplo, side, dt, n, nrhs, pa, lda, pb, ldb, pinfo)                \
  do {                                                                                             \
    assert_int_equal(tessera_queue_posv(ctx, node, queue, uplo, side, dt, n, nrhs, pa, lda, pb,    \
                                        ldb, pinfo, NULL),                                         \
                     expect);                                                                      \
    lc_assert_error(ctx);                                                                          \
  } while (0)
  POSV(-2, -1, NULL, TESSERA_LOWER, TESSERA_LEFT, TESSERA_F64, 4, 1, a, 4, b, 4, &info);
  POSV(-2, nn, NULL, TESSERA_LOWER, TESSERA_LEFT, TESSERA_F64, 4, 1, a, 4, b, 4, &info);
  POSV(-3, 0, &token, TESSERA_LOWER, TESSERA_LEFT, TESSERA_F64, 4, 1, a, 4, b, 4, &info);
  POSV(-4, 0, NULL, (tessera_uplo_t)'X', TESSERA_LEFT, TESSERA_F64, 4, 1, a, 4, b, 4, &info);
  POSV(-5, 0, NULL, TESSERA_LOWER, (tessera_side_t)'X', TESSERA_F64, 4, 1, a, 4, b, 4, &info);
  POSV(-6, 0, NULL, TESSERA_LOWER, TESSERA_LEFT, (tessera_dtype_t)9, 4, 1, a, 4, b, 4, &info);
  POSV(-7, 0, NULL, TESSERA_LOWER, TESSERA_LEFT, TESSERA_F64, -1, 1, a, 4, b, 4, &info);
  POSV(-8, 0, NULL, TESSERA_LOWER, TESSERA_LEFT, TESSERA_F64, 4, -2, a, 4, b, 4, &info);
  POSV(-9, 0, NULL, TESSERA_LOWER, TESSERA_LEFT, TESSERA_F64, 4, 1, NULL, 4, b, 4, &info);
  POSV(-10, 0, NULL, TESSERA_LOWER, TESSERA_LEFT, TESSERA_F64, 4, 1, a, 3, b, 4, &info);
  POSV(-11, 0, NULL, TESSERA_LOWER, TESSERA_LEFT, TESSERA_F64, 4, 1, a, 4, NULL, 4, &info);
  POSV(-12, 0, NULL, TESSERA_LOWER, TESSERA_LEFT, TESSERA_F64, 4, 1, a, 4, b, 3, &info);
  POSV(-12, 0, NULL, TESSERA_LOWER, TESSERA_RIGHT, TESSERA_F64, 4, 2, a, 4, b, 1, &info);
  POSV(-13, 0, NULL, TESSERA_LOWER, TESSERA_LEFT, TESSERA_F64, 4, 1, a, 4, b, 4, NULL);
#undef POSV
  assert_int_equal(
      tessera_queue_gesv(ctx, 0, NULL, (tessera_op_t)'X', TESSERA_F64, 4, 1, a, 4, b, 4, &info),
      -4);
  assert_int_equal(
      tessera_queue_gesv(ctx, 0, NULL, TESSERA_NOTRANS, TESSERA_F64, 4, 1, a, 4, b, 2, &info), -11);
  assert_int_equal(
      tessera_queue_gesv(ctx, 0, NULL, TESSERA_NOTRANS, TESSERA_F64, 4, 1, a, 4, b, 4, NULL), -12);
  double w[4];
#define SYEVD(expect, job, uplo, dt, n, pa, lda, pw, work, bytes, pinfo)                           \
  do {                                                                                             \
    assert_int_equal(                                                                              \
        tessera_queue_syevd(ctx, 0, NULL, job, uplo, dt, n, pa, lda, pw, work, bytes, pinfo),      \
        expect);                                                                                   \
    lc_assert_error(ctx);                                                                          \
  } while (0)
  SYEVD(-4, (tessera_job_t)'X', TESSERA_LOWER, TESSERA_F64, 4, a, 4, w, NULL, 0, &info);
  SYEVD(-5, TESSERA_VECTORS, (tessera_uplo_t)'X', TESSERA_F64, 4, a, 4, w, NULL, 0, &info);
  SYEVD(-6, TESSERA_VECTORS, TESSERA_LOWER, (tessera_dtype_t)9, 4, a, 4, w, NULL, 0, &info);
  SYEVD(-7, TESSERA_VECTORS, TESSERA_LOWER, TESSERA_F64, -1, a, 4, w, NULL, 0, &info);
  SYEVD(-8, TESSERA_VECTORS, TESSERA_LOWER, TESSERA_F64, 4, NULL, 4, w, NULL, 0, &info);
  SYEVD(-9, TESSERA_VECTORS, TESSERA_LOWER, TESSERA_F64, 4, a, 3, w, NULL, 0, &info);
  SYEVD(-10, TESSERA_VECTORS, TESSERA_LOWER, TESSERA_F64, 4, a, 4, NULL, NULL, 0, &info);
  SYEVD(-11, TESSERA_VECTORS, TESSERA_LOWER, TESSERA_F64, 4, a, 4, w, NULL, 64, &info);
  SYEVD(-13, TESSERA_VECTORS, TESSERA_LOWER, TESSERA_F64, 4, a, 4, w, NULL, 0, NULL);
#undef SYEVD
  assert_int_equal(tessera_queue_syevd(ctx, 0, &token, TESSERA_VECTORS, TESSERA_LOWER, TESSERA_F64,
                                       4, a, 4, w, NULL, 0, &info),
                   -3);
  assert_int_equal(tessera_queue_transpose(ctx, 0, NULL, (tessera_dtype_t)9, 2, 2, a, 2, b, 2), -4);
  assert_int_equal(tessera_queue_transpose(ctx, 0, NULL, TESSERA_F64, -1, 2, a, 2, b, 2), -5);
  assert_int_equal(tessera_queue_transpose(ctx, 0, NULL, TESSERA_F64, 2, 2, NULL, 2, b, 2), -7);
  assert_int_equal(tessera_queue_transpose(ctx, 0, NULL, TESSERA_F64, 2, 2, a, 1, b, 2), -8);
  assert_int_equal(tessera_queue_transpose(ctx, 0, NULL, TESSERA_F64, 2, 2, a, 2, b, 1), -10);
  assert_true(tessera_queue_syevd_work_bytes(TESSERA_F64, 100) >= 4 * 100 * 100 * 8 &&
              tessera_queue_syevd_work_bytes((tessera_dtype_t)9, 100) == 0);
  lc_assert_error(ctx);
  /* nothing ran */
  assert_int_equal(info, 77);
  assert_true(a[0] == 4 && b[0] == 1);
  lc_finalize(ctx);
}

int main(void) {
  tt_watchdog(600);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_posv),      cmocka_unit_test(test_gesv),
      cmocka_unit_test(test_syevd),     cmocka_unit_test(test_threads),
      cmocka_unit_test(test_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
