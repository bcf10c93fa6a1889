/* Repeated calls keep memory flat: 1000 factor + solve calls through the LAPACK-style API (300
 * in quick mode) leave the heap in use where the first half of them left it, but for the task
 * objects the context pools. The heap in use is malloc's count of bytes allocated and not freed
 * (glibc's mallinfo2) or, in a sanitizer build, the sanitizer allocator's; the task objects made
 * are the context's count (internal: ctx->tasks_made). */
#define _POSIX_C_SOURCE 200809L
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
  size_t after_warmup = 0;
  long tasks_before = 0;
  for (int64_t c = 0; c < calls; c++) {
    memcpy(a, a0, sizeof *a * (size_t)(n * n));
    for (int64_t i = 0; i < n; i++) b[i] = 1;
    assert_int_equal(tessera_posv(ctx, TESSERA_LOWER, TESSERA_F64, n, 1, a, n, b, n), 0);
    if (c == calls / 2 - 1) {
      after_warmup = heap_live_bytes();
      tasks_before = ctx->tasks_made;
    }
  }
  /* The first half of the calls fills the context's caches. Over the second half the heap in use
   * grows by the task objects the context adds to its pool when more tasks are in flight than
   * before and by nothing else: an allocation of 16 bytes or more kept by every call would grow
   * it past the slack. */
  const int64_t measured = calls - calls / 2;
  const long tasks = ctx->tasks_made - tasks_before;
  const size_t slack = 1024, pooled = (size_t)tasks * task_bytes;
  const size_t end = heap_live_bytes();
  if (end > after_warmup + pooled + slack)
    fail_msg("the heap in use grew from %zu to %zu bytes over %lld calls, %zu of them for the %ld "
             "task objects made",
             after_warmup, end, (long long)measured, pooled, tasks);
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
