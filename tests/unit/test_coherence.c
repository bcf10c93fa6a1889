/* Replica coherence state machine on several memory nodes (pure function of the states). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "runtime/base.h"
#include "runtime/coherence.h"

enum { I = TSR_INVALID, S = TSR_SHARED, O = TSR_OWNED };

static void expect_plan(const uint8_t *before, int nnodes, int node, tessera_access_t mode,
                        int want_src, const uint8_t *want_after) {
  uint8_t after[TSR_MAX_NODES];
  int src = -2;
  assert_int_equal(tsr_coherence_plan(before, nnodes, node, mode, &src, after), 0);
  assert_int_equal(src, want_src);
  assert_memory_equal(after, want_after, (size_t)nnodes);
}

static void read_valid_replica_copies_nothing(void **state) {
  (void)state;
  const uint8_t b[3] = {S, S, I};
  expect_plan(b, 3, 1, TESSERA_R, -1, b);
}

static void read_takes_from_owner_and_shares(void **state) {
  (void)state;
  const uint8_t b[4] = {I, I, O, I}, a[4] = {I, S, S, I};
  expect_plan(b, 4, 1, TESSERA_R, 2, a);
}

static void read_prefers_device_over_host_when_shared(void **state) {
  (void)state;
  const uint8_t b[3] = {S, I, S}, a[3] = {S, S, S};
  expect_plan(b, 3, 1, TESSERA_R, 2, a);
}

static void write_invalidates_others_without_copy(void **state) {
  (void)state;
  const uint8_t b[3] = {S, S, S}, a[3] = {I, I, O};
  expect_plan(b, 3, 2, TESSERA_W, -1, a);
}

static void readwrite_copies_then_owns(void **state) {
  (void)state;
  const uint8_t b[3] = {O, I, I}, a[3] = {I, O, I};
  expect_plan(b, 3, 1, TESSERA_RW, 0, a);
}

static void readwrite_on_owner_keeps_owner(void **state) {
  (void)state;
  const uint8_t b[2] = {I, O}, a[2] = {I, O};
  expect_plan(b, 2, 1, TESSERA_RW, -1, a);
}

static void read_with_no_valid_replica_fails(void **state) {
  (void)state;
  const uint8_t b[3] = {I, I, I};
  uint8_t after[3];
  int src;
  assert_int_equal(tsr_coherence_plan(b, 3, 0, TESSERA_R, &src, after), -1);
}

/* A random walk over accesses keeps the invariants: the accessed node is valid afterwards,
 * at most one Owned replica, and an Owned replica is the only valid one. */
static void random_walk_keeps_invariants(void **state) {
  (void)state;
  uint8_t st[TSR_MAX_NODES] = {O};
  unsigned seed = 12345;
  for (int step = 0; step < 100000; step++) {
    seed = seed * 1103515245u + 12345u;
    int node = (int)(seed >> 16) % 5;
    tessera_access_t mode = (tessera_access_t)(1 + (seed >> 8) % 3);
    uint8_t after[TSR_MAX_NODES];
    int src;
    assert_int_equal(tsr_coherence_plan(st, 5, node, mode, &src, after), 0);
    assert_true(after[node] != I);
    if (src >= 0) assert_true(st[src] != I && src != node);
    int owned = 0, valid = 0;
    for (int i = 0; i < 5; i++) owned += after[i] == O, valid += after[i] != I;
    assert_true(owned <= 1);
    if (owned) assert_int_equal(valid, 1);
    for (int i = 0; i < 5; i++) st[i] = after[i];
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(read_valid_replica_copies_nothing),
      cmocka_unit_test(read_takes_from_owner_and_shares),
      cmocka_unit_test(read_prefers_device_over_host_when_shared),
      cmocka_unit_test(write_invalidates_others_without_copy),
      cmocka_unit_test(readwrite_copies_then_owns),
      cmocka_unit_test(readwrite_on_owner_keeps_owner),
      cmocka_unit_test(read_with_no_valid_replica_fails),
      cmocka_unit_test(random_walk_keeps_invariants),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
