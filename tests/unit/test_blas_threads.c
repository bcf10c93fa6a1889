/* Contexts alive at once stay independent of each other's lifetimes: OpenBLAS's thread count
 * (one per process) is one while any context is open and comes back to the caller's value when
 * the last one closes, whichever closes first. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <tessera/tessera.h>

#include "../test_common.h"

#ifdef TESSERA_HAVE_OPENBLAS_THREADS
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

static tessera_context_t *open_context(void) {
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  cfg.cpu_workers = 1;
  cfg.gpus = 0; /* a GPU's pool goes to the first context: the CPU backend is what is tested */
  tessera_context_t *ctx = NULL;
  assert_int_equal(tessera_init(&ctx, &cfg), 0);
  return ctx;
}

/* Opens two contexts, closes them in the order given, checking the thread count throughout. */
static void overlap(int first_closes_first) {
  openblas_set_num_threads(2);
  int caller = openblas_get_num_threads();
  if (caller < 2) skip(); /* this OpenBLAS runs one thread only: nothing to tell apart */
  tessera_context_t *a = open_context();
  assert_int_equal(openblas_get_num_threads(), 1);
  tessera_context_t *b = open_context();
  assert_int_equal(openblas_get_num_threads(), 1);
  assert_int_equal(tessera_finalize(first_closes_first ? a : b), 0);
  assert_int_equal(openblas_get_num_threads(), 1); /* the other context still runs */
  assert_int_equal(tessera_finalize(first_closes_first ? b : a), 0);
  assert_int_equal(openblas_get_num_threads(), caller);
}

static void test_first_opened_closes_first(void **state) {
  (void)state;
  overlap(1);
}

static void test_last_opened_closes_first(void **state) {
  (void)state;
  overlap(0);
}
#else
static void test_first_opened_closes_first(void **state) {
  (void)state;
  skip(); /* no OpenBLAS thread control in this build */
}
static void test_last_opened_closes_first(void **state) {
  (void)state;
  skip();
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_first_opened_closes_first),
      cmocka_unit_test(test_last_opened_closes_first),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
