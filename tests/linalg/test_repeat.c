/* Repeated calls keep memory flat: 1000 factor + solve calls through the LAPACK-style API (300
 * in quick mode) do not grow the heap in use, but for the task objects the context pools, in
 * every quarter of their second half: a call that keeps memory grows each quarter, while a
 * cache that grows once, late (a list's capacity under a scheduling of the workers seen once),
 * grows one. The heap in use is malloc's count of bytes allocated and not freed
 * (glibc's mallinfo2) or, in a sanitizer build, the sanitizer allocator's; the task objects made
 * are the context's count (internal: ctx->tasks_made). */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "linalg_common.h"
#include "runtime/context.h"
#include "runtime/task.h"

#if TT_ASAN || TT_TSAN
/* The sanitizers' allocator replaces malloc: its count of the bytes allocated and not yet freed
 * (memory in quarantine excluded). */
size_t __sanitizer_get_current_allocated_bytes(void);
static size_t heap_live_bytes(void) {
  return __sanitizer_get_current_allocated_bytes();
}
/* What it counts for a task object: its size. */
static const size_t task_bytes = sizeof(tsr_task_t);
#else
#include <malloc.h>
/* Bytes allocated by malloc and not yet freed, over every arena (the worker threads' too) and
 * the chunks malloc maps on their own. */
static size_t heap_live_bytes(void) {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}
/* What it counts for a task object: malloc's chunk, the size and a word rounded up to 16 bytes. */
static const size_t task_bytes = (sizeof(tsr_task_t) + sizeof(size_t) + 15) / 16 * 16;
#endif

static void repeated_calls_keep_memory_flat(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(16);
  const int64_t n = 70, calls = tt_quick() ? 300 : 1000;
  tt_rng_t r = tt_rng(5);
  double *a0 = lc_alloc(TESSERA_F64, (size_t)(n * n)), *a = lc_alloc(TESSERA_F64, (size_t)(n * n));
  double *b = lc_alloc(TESSERA_F64, (size_t)n);
  zc_t *full = lc_gen_hpd(TESSERA_F64, TESSERA_LOWER, n, a0, n, &r);
  /* The first half of the calls fills the context's caches; the second half is measured in
   * quarters, each quarter's growth less the task objects the context added to its pool (when
   * more tasks are in flight than before). An allocation of 16 bytes or more kept by every call
   * grows every quarter by at least 16 bytes a call; the smallest quarter's growth is held to
   * half that. */
  enum { QUARTERS = 4 };
  const int64_t first = calls / 2, per = (calls - first) / QUARTERS;
  size_t heap[QUARTERS + 1] = {0};
  long tasks[QUARTERS + 1] = {0};
  for (int64_t c = 0; c < first + QUARTERS * per; c++) {
    if (c >= first && (c - first) % per == 0) {
      heap[(c - first) / per] = heap_live_bytes();
      tasks[(c - first) / per] = ctx->tasks_made;
    }
    memcpy(a, a0, sizeof *a * (size_t)(n * n));
    for (int64_t i = 0; i < n; i++) b[i] = 1;
    assert_int_equal(tessera_posv(ctx, TESSERA_LOWER, TESSERA_F64, n, 1, a, n, b, n), 0);
  }
  heap[QUARTERS] = heap_live_bytes();
  tasks[QUARTERS] = ctx->tasks_made;
  long least = LONG_MAX;
  for (int q = 0; q < QUARTERS; q++) {
    const long grown =
        (long)heap[q + 1] - (long)heap[q] - (tasks[q + 1] - tasks[q]) * (long)task_bytes;
    if (grown < least) least = grown;
  }
  if (least * 2 >= 16 * per)
    fail_msg("the heap in use grew in every quarter of the last %lld calls, by %ld bytes or more "
             "beyond the task objects the context pooled (from %zu to %zu bytes)",
             (long long)(QUARTERS * per), least, heap[0], heap[QUARTERS]);
  zc_t *bz = lc_zalloc((size_t)n);
  for (int64_t i = 0; i < n; i++) bz[i] = 1;
  assert_true(lc_solve_resid(TESSERA_F64, n, 1, full, b, n, bz) < 10);
  free(bz);
  free(full);
  free(a0);
  free(a);
  free(b);
  lc_finalize(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(repeated_calls_keep_memory_flat),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
