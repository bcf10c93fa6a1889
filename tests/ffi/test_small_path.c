/* The JAX binding's choice for a call small for its mesh (python/ffi/small.c, tsr_jax_path):
 * the distributed routine until its warm-up and one measurement are in; then one device, unless
 * one device at its peak rate could not beat the distributed routine's mean, in which case the
 * distributed routine for good; once both are measured, the quicker.
 */
/* ctest-label: unit */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../test_common.h"
#include "small.h"

static int path(int64_t dist_calls, int64_t one_calls, double dist_mean, double one_mean,
                double floor) {
  const int64_t calls[TSR_JAX_PATHS] = {dist_calls, one_calls};
  const double mean[TSR_JAX_PATHS] = {dist_mean, one_mean};
  return tsr_jax_path(calls, mean, floor);
}

static void test_distributed_first(void **state) {
  (void)state;
  assert_int_equal(path(0, 0, 0, 0, 0), 0);
  assert_int_equal(path(1, 0, 0, 0, 0), 0); /* its warm-up only */
}

static void test_one_device_tried_where_it_could_win(void **state) {
  (void)state;
  assert_int_equal(path(2, 0, 5e-3, 0, 4e-4), 1);
  assert_int_equal(path(2, 1, 5e-3, 0, 4e-4), 1); /* its warm-up only */
}

static void test_one_device_never_tried_where_its_peak_loses(void **state) {
  (void)state;
  assert_int_equal(path(2, 0, 1.0, 0, 1.56), 0);
  assert_int_equal(path(9, 0, 1.0, 0, 1.0), 0);
}

static void test_the_quicker_once_both_are_measured(void **state) {
  (void)state;
  assert_int_equal(path(2, 2, 5e-3, 3e-3, 4e-4), 1);
  assert_int_equal(path(2, 2, 5e-3, 6e-3, 4e-4), 0);
  assert_int_equal(path(3, 7, 5e-3, 5e-3, 4e-4), 0); /* a tie keeps the distributed routine */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_distributed_first),
      cmocka_unit_test(test_one_device_tried_where_it_could_win),
      cmocka_unit_test(test_one_device_never_tried_where_its_peak_loses),
      cmocka_unit_test(test_the_quicker_once_both_are_measured),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
