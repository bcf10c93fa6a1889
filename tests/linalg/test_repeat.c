/* Repeated calls keep memory flat: 1000 factor + solve calls through the LAPACK-style API. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "linalg_common.h"

/* Resident set size in bytes (Linux), 0 when unknown. */
static size_t rss_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long pages = 0, rss = 0;
  if (!f) return 0;
  if (fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
  fclose(f);
  return (size_t)rss * (size_t)sysconf(_SC_PAGESIZE);
}

static void repeated_calls_keep_memory_flat(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(16);
  const int64_t n = 70, calls = tt_quick() ? 300 : 1000;
  tt_rng_t r = tt_rng(5);
  double *a0 = lc_alloc(TESSERA_F64, (size_t)(n * n)), *a = lc_alloc(TESSERA_F64, (size_t)(n * n));
  double *b = lc_alloc(TESSERA_F64, (size_t)n);
  zc_t *full = lc_gen_hpd(TESSERA_F64, TESSERA_LOWER, n, a0, n, &r);
  size_t after_warmup = 0;
  for (int64_t c = 0; c < calls; c++) {
    memcpy(a, a0, sizeof *a * (size_t)(n * n));
    for (int64_t i = 0; i < n; i++) b[i] = 1;
    assert_int_equal(tessera_posv(ctx, TESSERA_LOWER, TESSERA_F64, n, 1, a, n, b, n), 0);
    /* Sanitizers keep freed memory in quarantine: resident size says nothing there. */
    if (c == calls / 10 && !TT_ASAN && !TT_TSAN) after_warmup = rss_bytes();
  }
  size_t end = rss_bytes();
  if (after_warmup && end > after_warmup + ((size_t)4 << 20))
    fail_msg("resident memory grew from %zu to %zu bytes over %lld calls", after_warmup, end,
             (long long)calls);
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
