/* A process that does not arrive, on communicators over a key-value store: the others' call
 * fails with TESSERA_ERR_TIMEOUT and a sentence after the communicator's bound (and well before
 * LIMIT_S, however loaded the machine) instead of waiting (one missing from a collective: the
 * communicator is then broken, later calls fail at once with TESSERA_ERR_STATE, and it can still be
 * destroyed; one that never makes its communicator: tessera_comm_create fails so). */
/* ctest-label: gloo */
/* ctest-gloo-procs: 2 3 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "gloo_common.h"

enum { BOUND_S = 2, LIMIT_S = 20 };

static void within_bound(double waited) {
  if (waited < BOUND_S - 0.1 || waited > LIMIT_S)
    fail_msg("process %d: the call failed after %.2f s, the bound is %d s", g_rank, waited,
             BOUND_S);
}

static void test_late_call(void **state) {
  (void)state;
  tessera_comm_t *c = gloo_comm(BOUND_S);
  const int last = g_size - 1;
  int64_t v = g_rank + 1, sum = 0;
  if (g_rank == last) { /* never calls: waits for the others to give up, then leaves */
    tt_sleep_us(2 * BOUND_S * 1000000);
    tessera_comm_destroy(c);
    return;
  }
  const double t0 = tt_now();
  const int rc = tessera_comm_allreduce(c, &v, &sum, 1, TESSERA_COMM_I64, TESSERA_SUM, NULL);
  within_bound(tt_now() - t0);
  assert_int_equal(rc, TESSERA_ERR_TIMEOUT);
  if (strlen(tessera_comm_last_error(c)) < 20) fail_msg("message: %s", tessera_comm_last_error(c));
  const double t1 = tt_now();
  assert_int_equal(tessera_comm_barrier(c, NULL), TESSERA_ERR_STATE);
  assert_true(tt_now() - t1 < 0.5);
  assert_int_equal(tessera_comm_destroy(c), 0);
}

static void test_missing_process(void **state) {
  (void)state;
  tessera_comm_store_t kv = gloo_store();
  if (g_rank == g_size - 1) return; /* never makes its communicator */
  char why[256] = "";
  tessera_comm_config_t cfg = {
      .store = &kv, .timeout_s = BOUND_S, .error = why, .error_len = sizeof why};
  tessera_comm_t *c = NULL;
  const double t0 = tt_now();
  const int rc = tessera_comm_create(&cfg, &c);
  within_bound(tt_now() - t0);
  assert_int_equal(rc, TESSERA_ERR_TIMEOUT);
  assert_null(c);
  if (strlen(why) < 20) fail_msg("message: %s", why);
}

static void test_invalid_store(void **state) {
  (void)state;
  tessera_comm_store_t kv = {.rank = 0, .size = 1};
  tessera_comm_config_t cfg = {.store = &kv};
  tessera_comm_t *c = NULL;
  assert_int_equal(tessera_comm_create(&cfg, &c), -1);
}

static int run(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_invalid_store),
                                     cmocka_unit_test(test_late_call),
                                     cmocka_unit_test(test_missing_process)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}

int main(int argc, char **argv) {
  return gloo_main(argc, argv, run, 60);
}
