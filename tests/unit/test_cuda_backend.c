/* The CUDA backend table, called directly (no context, no runtime): open with device clamping,
 * device descriptions, device and pinned memory, 2D copies host <-> device with leading
 * dimensions larger than the rows (synchronous and on a queue with events), peer copies between
 * GPUs 0 and 1, measured bandwidths, memory info, and a worker's start (bound to its device)
 * with the kernels' library handles made by the registry's hooks.
 * Every test is skipped on a machine without GPU.
 */
/* ctest-label: gpu */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include <tessera/tessera.h>

#include "../test_common.h"
#include "device/backend.h"

/* The backend opened once for every test, and its registry entry. */
static const tsr_backend_t *g_be;
static const tsr_backend_entry_t *g_entry;
static void *g_st;
static int g_n;

static int group_setup(void **state) {
  (void)state;
  int n = 0;
  const tsr_backend_entry_t *reg = tsr_backend_registry(&n);
  for (int i = 0; i < n; i++)
    if (strcmp(reg[i].backend()->name, "cuda") == 0) g_entry = &reg[i];
  if (!g_entry || !g_entry->scratch_create || !g_entry->scratch_destroy) return -1;
  g_be = g_entry->backend();
  if (!g_be || g_be->kind != TESSERA_DEVICE_CUDA) return -1;
  double t0 = tt_now();
  int rc = g_be->open(-1, &g_n, &g_st);
  if (rc != 0) {
    fprintf(stderr, "cuda open = %d\n", rc);
    return -1;
  }
  fprintf(stderr, "# cuda backend: %d device(s), open took %.3f s\n", g_n, tt_now() - t0);
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  if (g_be) g_be->close(g_st);
  return 0;
}

#define NEED_GPUS(k)                                                                               \
  do {                                                                                             \
    if (g_n < (k)) skip();                                                                         \
  } while (0)

/* ---------------------------------------------------------------- helpers */

/* Byte `k` of column `j` of the reference block. */
static unsigned char pattern(size_t j, size_t k, unsigned seed) {
  return (unsigned char)(j * 131u + k * 7u + seed * 29u + 1u);
}

/* A host block of ld x cols elements of elsize bytes: `rows` rows of pattern, padding 0xEE. */
static void fill(unsigned char *h, size_t ld, size_t rows, size_t cols, size_t elsize,
                 unsigned seed) {
  memset(h, 0xEE, ld * cols * elsize);
  for (size_t j = 0; j < cols; j++)
    for (size_t k = 0; k < rows * elsize; k++) h[j * ld * elsize + k] = pattern(j, k, seed);
}

/* Checks the `rows` rows of pattern and that the padding kept `pad`. */
static void check(const unsigned char *h, size_t ld, size_t rows, size_t cols, size_t elsize,
                  unsigned seed, unsigned char pad) {
  for (size_t j = 0; j < cols; j++) {
    for (size_t k = 0; k < ld * elsize; k++) {
      unsigned char want = k < rows * elsize ? pattern(j, k, seed) : pad;
      if (h[j * ld * elsize + k] != want)
        fail_msg("byte %zu of column %zu: %u, want %u", k, j, h[j * ld * elsize + k], want);
    }
  }
}

/* Host buffer: pinned from the backend or pageable from malloc. */
static void *host_buf(size_t bytes, int pinned) {
  void *p = pinned ? g_be->host_alloc(g_st, bytes) : malloc(bytes);
  assert_non_null(p);
  return p;
}
static void host_release(void *p, int pinned) {
  if (pinned)
    g_be->host_free(g_st, p);
  else
    free(p);
}

/* Waits for everything enqueued on `queue` of device `dev` through an event. */
static void drain(int dev, void *queue) {
  void *ev = NULL;
  assert_int_equal(g_be->event_create(g_st, dev, &ev), 0);
  assert_non_null(ev);
  assert_int_equal(g_be->event_record(g_st, ev, queue), 0);
  int q = g_be->event_query(g_st, ev);
  assert_true(q == 0 || q == 1);
  assert_int_equal(g_be->event_sync(g_st, ev), 0);
  assert_int_equal(g_be->event_query(g_st, ev), 1);
  assert_int_equal(g_be->queue_sync(g_st, queue), 0);
  g_be->event_destroy(g_st, dev, ev);
}

/* host (ld rows+3) -> device `dev` (ld ldd) -> host (ld rows+7), synchronous or on a queue. */
static void roundtrip(int dev, size_t rows, size_t cols, size_t ldd, size_t elsize, int pinned,
                      int async) {
  size_t lds = rows + 3, ldh = rows + 7;
  unsigned char *src = host_buf(lds * cols * elsize, pinned);
  unsigned char *dst = host_buf(ldh * cols * elsize, pinned);
  fill(src, lds, rows, cols, elsize, (unsigned)(rows + cols));
  memset(dst, 0xAB, ldh * cols * elsize);
  void *d = g_be->alloc(g_st, dev, ldd * cols * elsize);
  assert_non_null(d);
  void *q = NULL;
  if (async) {
    assert_int_equal(g_be->queue_create(g_st, dev, &q), 0);
    assert_non_null(q);
  }
  assert_int_equal(g_be->copy2d(g_st, dev, d, ldd, -1, src, lds, rows, cols, elsize, q), 0);
  assert_int_equal(g_be->copy2d(g_st, -1, dst, ldh, dev, d, ldd, rows, cols, elsize, q), 0);
  if (async) {
    drain(dev, q);
    g_be->queue_destroy(g_st, dev, q);
  }
  check(dst, ldh, rows, cols, elsize, (unsigned)(rows + cols), 0xAB);
  g_be->free(g_st, dev, d);
  host_release(src, pinned);
  host_release(dst, pinned);
}

/* ---------------------------------------------------------------- tests */

static void test_open_clamps(void **state) {
  (void)state;
  NEED_GPUS(1);
  void *st = NULL;
  int n = -1;
  assert_int_equal(g_be->open(0, &n, &st), 0);
  assert_int_equal(n, 0);
  g_be->close(st);
  /* A second state while the first is open: peer access is already enabled, which is fine. */
  st = NULL;
  n = -1;
  assert_int_equal(g_be->open(1, &n, &st), 0);
  assert_int_equal(n, 1);
  assert_true(g_be->bandwidth(st, 0, -1) > 0);
  assert_true(g_be->bandwidth(st, 1, -1) == 0);
  g_be->close(st);
}

static void test_info(void **state) {
  (void)state;
  NEED_GPUS(1);
  for (int d = 0; d < g_n; d++) {
    tessera_device_info_t info;
    assert_int_equal(g_be->info(g_st, d, &info), 0);
    assert_int_equal(info.kind, TESSERA_DEVICE_CUDA);
    assert_int_equal(info.index, d);
    assert_int_equal(info.workers, 1);
    assert_true(info.memory_bytes > 0);
    assert_true(info.gflops > 0);
    assert_true(strlen(info.name) > 0 && strlen(info.name) < sizeof info.name);
    fprintf(stderr, "# GPU %d: %s, %.1f GiB, %.0f GFLOP/s nominal\n", d, info.name,
            (double)info.memory_bytes / (1 << 30), info.gflops);
  }
  tessera_device_info_t info;
  assert_true(g_be->info(g_st, g_n, &info) < 0);
  assert_true(g_be->info(g_st, -1, &info) < 0);
}

static void test_alloc_free(void **state) {
  (void)state;
  NEED_GPUS(1);
  for (int d = 0; d < g_n; d++) {
    void *p = g_be->alloc(g_st, d, 1 << 20);
    assert_non_null(p);
    g_be->free(g_st, d, p);
    /* A failed allocation returns NULL and leaves no error behind. */
    assert_null(g_be->alloc(g_st, d, (size_t)1 << 52));
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    p = g_be->alloc(g_st, d, 4096);
    assert_non_null(p);
    g_be->free(g_st, d, p);
    g_be->free(g_st, d, NULL);
  }
  assert_null(g_be->alloc(g_st, g_n, 64));
}

static void test_host_alloc(void **state) {
  (void)state;
  NEED_GPUS(1);
  unsigned char *p = g_be->host_alloc(g_st, 3 << 20);
  assert_non_null(p);
  memset(p, 0x5A, 3 << 20);
  assert_int_equal(p[(3 << 20) - 1], 0x5A);
  g_be->host_free(g_st, p);
  g_be->host_free(g_st, NULL);
}

/* The caller's memory pinned in place: copies from and to it, a second pin of the same range
 * refused without leaving an error behind, and the memory pageable again after the unpin. */
static void test_host_register(void **state) {
  (void)state;
  NEED_GPUS(1);
  /* whole pages each: pinning works on pages, and a page pinned twice is refused */
  const size_t rows = 512, cols = 17, bytes = rows * cols * 8;
  unsigned char *src = aligned_alloc(4096, bytes), *dst = aligned_alloc(4096, bytes);
  assert_non_null(src);
  assert_non_null(dst);
  fill(src, rows, rows, cols, 8, 7);
  memset(dst, 0, bytes);
  assert_int_equal(g_be->host_register(g_st, src, bytes), 0);
  assert_int_equal(g_be->host_register(g_st, dst, bytes), 0);
  assert_int_equal(g_be->host_register(g_st, src, bytes), -1);
  assert_int_equal(g_be->host_register(g_st, NULL, bytes), -1);
  void *d = g_be->alloc(g_st, 0, bytes);
  assert_non_null(d);
  assert_int_equal(g_be->copy2d(g_st, 0, d, rows, -1, src, rows, rows, cols, 8, NULL), 0);
  assert_int_equal(g_be->copy2d(g_st, -1, dst, rows, 0, d, rows, rows, cols, 8, NULL), 0);
  check(dst, rows, rows, cols, 8, 7, 0);
  g_be->host_unregister(g_st, src);
  g_be->host_unregister(g_st, dst);
  assert_int_equal(g_be->host_register(g_st, src, bytes), 0); /* pageable again: pins anew */
  g_be->host_unregister(g_st, src);
  g_be->free(g_st, 0, d);
  free(src), free(dst);
}

static void test_copy_sync(void **state) {
  (void)state;
  NEED_GPUS(1);
  for (int d = 0; d < g_n; d++) {
    for (int pinned = 0; pinned < 2; pinned++) {
      roundtrip(d, 37, 19, 40, 8, pinned, 0);  /* 2D both ways */
      roundtrip(d, 37, 19, 37, 16, pinned, 0); /* contiguous on the device */
      roundtrip(d, 300, 1, 301, 4, pinned, 0); /* one column */
    }
  }
}

static void test_copy_async(void **state) {
  (void)state;
  NEED_GPUS(1);
  for (int d = 0; d < g_n; d++) {
    for (int pinned = 0; pinned < 2; pinned++) {
      roundtrip(d, 37, 19, 40, 8, pinned, 1);
      roundtrip(d, 512, 64, 512, 16, pinned, 1);
      roundtrip(d, 1000, 300, 1024, 8, pinned, 1);
    }
  }
}

static void test_copy_args(void **state) {
  (void)state;
  NEED_GPUS(1);
  double h[16] = {0};
  void *d = g_be->alloc(g_st, 0, sizeof h);
  assert_non_null(d);
  /* Nothing to copy. */
  assert_int_equal(g_be->copy2d(g_st, 0, d, 4, -1, h, 4, 0, 4, 8, NULL), 0);
  assert_int_equal(g_be->copy2d(g_st, 0, d, 4, -1, h, 4, 4, 0, 8, NULL), 0);
  /* Leading dimension below the rows, device out of range. */
  assert_int_equal(g_be->copy2d(g_st, 0, d, 3, -1, h, 4, 4, 4, 8, NULL), TESSERA_ERR_BACKEND);
  assert_int_equal(g_be->copy2d(g_st, g_n, d, 4, -1, h, 4, 4, 4, 8, NULL), TESSERA_ERR_BACKEND);
  g_be->free(g_st, 0, d);
}

/* host -> GPU a -> GPU b -> host, with different leading dimensions on each side. */
static void peer_roundtrip(int a, int b, size_t rows, size_t cols, size_t lda, size_t ldb,
                           int async) {
  const size_t elsize = 8, ldh = rows + 1;
  unsigned char *src = host_buf(ldh * cols * elsize, 1);
  unsigned char *dst = host_buf(ldh * cols * elsize, 1);
  fill(src, ldh, rows, cols, elsize, 3);
  memset(dst, 0xCD, ldh * cols * elsize);
  void *da = g_be->alloc(g_st, a, lda * cols * elsize);
  void *db = g_be->alloc(g_st, b, ldb * cols * elsize);
  assert_non_null(da);
  assert_non_null(db);
  if (!async) {
    assert_int_equal(g_be->copy2d(g_st, a, da, lda, -1, src, ldh, rows, cols, elsize, NULL), 0);
    assert_int_equal(g_be->copy2d(g_st, b, db, ldb, a, da, lda, rows, cols, elsize, NULL), 0);
    assert_int_equal(g_be->copy2d(g_st, -1, dst, ldh, b, db, ldb, rows, cols, elsize, NULL), 0);
  } else {
    void *qa = NULL, *qb = NULL, *ev = NULL;
    assert_int_equal(g_be->queue_create(g_st, a, &qa), 0);
    assert_int_equal(g_be->queue_create(g_st, b, &qb), 0);
    assert_int_equal(g_be->event_create(g_st, a, &ev), 0);
    assert_int_equal(g_be->copy2d(g_st, a, da, lda, -1, src, ldh, rows, cols, elsize, qa), 0);
    assert_int_equal(g_be->event_record(g_st, ev, qa), 0);
    /* Queue b, on another GPU, orders after the event of queue a. */
    assert_int_equal(g_be->queue_wait_event(g_st, qb, ev), 0);
    assert_int_equal(g_be->copy2d(g_st, b, db, ldb, a, da, lda, rows, cols, elsize, qb), 0);
    assert_int_equal(g_be->copy2d(g_st, -1, dst, ldh, b, db, ldb, rows, cols, elsize, qb), 0);
    drain(b, qb);
    g_be->event_destroy(g_st, a, ev);
    g_be->queue_destroy(g_st, a, qa);
    g_be->queue_destroy(g_st, b, qb);
  }
  check(dst, ldh, rows, cols, elsize, 3, 0xCD);
  g_be->free(g_st, a, da);
  g_be->free(g_st, b, db);
  host_release(src, 1);
  host_release(dst, 1);
}

static void test_copy_peer(void **state) {
  (void)state;
  NEED_GPUS(2);
  for (int async = 0; async < 2; async++) {
    peer_roundtrip(0, 1, 45, 33, 48, 50, async);       /* 2D peer */
    peer_roundtrip(1, 0, 45, 33, 45, 45, async);       /* contiguous peer */
    peer_roundtrip(0, 1, 2048, 64, 2048, 2056, async); /* a tile-like block */
  }
}

static void test_bandwidth(void **state) {
  (void)state;
  NEED_GPUS(1);
  for (int dst = -1; dst < g_n; dst++) {
    for (int src = -1; src < g_n; src++) {
      if (dst < 0 && src < 0) continue;
      double bw = g_be->bandwidth(g_st, dst, src);
      fprintf(stderr, "# bandwidth %2d <- %2d: %8.1f GB/s\n", dst, src, bw / 1e9);
      assert_true(bw > 0);
    }
  }
  assert_true(g_be->bandwidth(g_st, g_n, -1) == 0);
  assert_true(g_be->bandwidth(g_st, -2, 0) == 0);
}

static void test_mem_info(void **state) {
  (void)state;
  NEED_GPUS(1);
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
  for (int d = 0; d < g_n; d++) {
    size_t fr = 0, total = 0;
    assert_int_equal(g_be->mem_info(g_st, d, &fr, &total), 0);
    assert_true(total > 0);
    assert_true(fr > 0 && fr <= total);
    tessera_device_info_t info;
    assert_int_equal(g_be->info(g_st, d, &info), 0);
    assert_true(total <= info.memory_bytes);
    /* Callable from any thread: the caller's current device is left as it was. */
    int cur = -1;
    assert_int_equal(cudaGetDevice(&cur), cudaSuccess);
    assert_int_equal(cur, 0);
  }
  size_t fr, total;
  assert_true(g_be->mem_info(g_st, g_n, &fr, &total) < 0);
}

typedef struct {
  int dev, rc;
  int current;
} worker_arg_t;

/* What a GPU worker does: start, make its kernels' scratch, enqueue on its own queue, free. */
static void *worker_body(void *p) {
  worker_arg_t *w = p;
  void *scratch = NULL;
  w->rc = g_be->worker_start(g_st, w->dev);
  if (!w->rc) w->rc = g_entry->scratch_create(w->dev, &scratch);
  if (w->rc) return NULL;
  if (cudaGetDevice(&w->current) != cudaSuccess) w->current = -1;
  const tessera_cuda_scratch_t *x = scratch;
  if (!x || !x->cublas || !x->cusolver || !x->workspace || !x->workspace_bytes ||
      !x->host_workspace || !x->host_workspace_bytes || !x->dev_info)
    w->rc = -1;
  void *q = NULL;
  if (!w->rc) w->rc = g_be->queue_create(g_st, w->dev, &q);
  int zero = 0;
  if (!w->rc)
    w->rc = g_be->copy2d(g_st, w->dev, x->dev_info, 1, -1, &zero, 1, 1, 1, sizeof zero, q);
  if (!w->rc) w->rc = g_be->queue_sync(g_st, q);
  if (q) g_be->queue_destroy(g_st, w->dev, q);
  g_entry->scratch_destroy(w->dev, scratch);
  return NULL;
}

static void test_worker(void **state) {
  (void)state;
  NEED_GPUS(1);
  /* On the calling thread. */
  worker_arg_t w = {.dev = g_n - 1, .rc = -1, .current = -1};
  worker_body(&w);
  assert_int_equal(w.rc, 0);
  assert_int_equal(w.current, g_n - 1);
  /* On a thread of its own. */
  worker_arg_t t = {.dev = 0, .rc = -1, .current = -1};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, worker_body, &t), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_int_equal(t.rc, 0);
  assert_int_equal(t.current, 0);
  assert_true(g_be->worker_start(g_st, g_n) < 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_open_clamps),   cmocka_unit_test(test_info),
      cmocka_unit_test(test_alloc_free),    cmocka_unit_test(test_host_alloc),
      cmocka_unit_test(test_host_register), cmocka_unit_test(test_copy_sync),
      cmocka_unit_test(test_copy_async),    cmocka_unit_test(test_copy_args),
      cmocka_unit_test(test_copy_peer),     cmocka_unit_test(test_bandwidth),
      cmocka_unit_test(test_mem_info),      cmocka_unit_test(test_worker),
  };
  tt_watchdog(300);
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
