/* Device memory pool: first-fit blocks in one slab, large ones from the top, coalescing,
 * exhaustion. Runs on host memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "runtime/pool.h"

#define SLAB (1 << 20)

static void fills_and_reports_exhaustion(void **state) {
  (void)state;
  static char slab[SLAB];
  tsr_pool_t p;
  assert_int_equal(tsr_pool_init(&p, slab, SLAB), 0);
  void *blocks[16];
  for (int i = 0; i < 16; i++) {
    blocks[i] = tsr_pool_alloc(&p, SLAB / 16);
    assert_non_null(blocks[i]);
    assert_true((char *)blocks[i] >= slab && (char *)blocks[i] + SLAB / 16 <= slab + SLAB);
    assert_int_equal(((uintptr_t)blocks[i] - (uintptr_t)slab) % 256, 0);
  }
  assert_null(tsr_pool_alloc(&p, 1));
  assert_int_equal(p.used, SLAB);
  for (int i = 0; i < 16; i += 2) assert_int_equal(tsr_pool_free(&p, blocks[i], SLAB / 16), 0);
  assert_int_equal(tsr_pool_largest(&p), SLAB / 16); /* holes do not merge across used blocks */
  assert_null(tsr_pool_alloc(&p, SLAB / 8));
  for (int i = 1; i < 16; i += 2) assert_int_equal(tsr_pool_free(&p, blocks[i], SLAB / 16), 0);
  assert_int_equal(tsr_pool_largest(&p), SLAB); /* everything coalesced again */
  assert_int_equal(p.n, 1);
  assert_int_equal(p.used, 0);
  tsr_pool_destroy(&p);
}

/* Random allocations and frees never overlap, stay inside the slab and always coalesce back to
 * one extent. */
static void random_blocks_never_overlap(void **state) {
  (void)state;
  static char slab[SLAB];
  tsr_pool_t p;
  assert_int_equal(tsr_pool_init(&p, slab, SLAB), 0);
  enum { N = 64 };
  char *ptr[N] = {0};
  size_t len[N] = {0};
  unsigned seed = 7;
  for (int step = 0; step < 20000; step++) {
    seed = seed * 1103515245u + 12345u;
    int k = (int)(seed >> 16) % N;
    if (ptr[k]) {
      assert_int_equal(tsr_pool_free(&p, ptr[k], len[k]), 0);
      ptr[k] = NULL;
      continue;
    }
    len[k] = 1 + (seed >> 4) % 40000;
    ptr[k] = tsr_pool_alloc(&p, len[k]);
    if (!ptr[k]) continue;
    if (ptr[k] < slab || ptr[k] + len[k] > slab + SLAB)
      fail_msg("step %d: block %d at offset %td, %zu bytes, leaves the slab", step, k,
               ptr[k] - slab, len[k]);
    for (int j = 0; j < N; j++)
      if (j != k && ptr[j] && ptr[k] < ptr[j] + len[j] && ptr[j] < ptr[k] + len[k])
        fail_msg("step %d: block %d at offset %td, %zu bytes, overlaps block %d at %td, %zu bytes",
                 step, k, ptr[k] - slab, len[k], j, ptr[j] - slab, len[j]);
  }
  for (int k = 0; k < N; k++)
    if (ptr[k]) assert_int_equal(tsr_pool_free(&p, ptr[k], len[k]), 0);
  assert_int_equal(p.n, 1);
  assert_int_equal(tsr_pool_largest(&p), SLAB);
  tsr_pool_destroy(&p);
}

/* Blocks of a sixteenth of the slab or more come from the top of the highest extent holding
 * them, smaller ones from the bottom: small blocks freed between large ones leave the large
 * room whole. */
static void large_blocks_from_the_top(void **state) {
  (void)state;
  static char slab[SLAB];
  tsr_pool_t p;
  assert_int_equal(tsr_pool_init(&p, slab, SLAB), 0);
  char *small = tsr_pool_alloc(&p, 1024), *big = tsr_pool_alloc(&p, SLAB / 4);
  assert_ptr_equal(small, slab);
  assert_ptr_equal(big, slab + SLAB - SLAB / 4);
  char *tiles[8];
  for (int i = 0; i < 8; i++) assert_non_null(tiles[i] = tsr_pool_alloc(&p, SLAB / 32));
  assert_true(tiles[7] + SLAB / 32 <= big); /* small blocks stacked from the bottom */
  char *big2 = tsr_pool_alloc(&p, SLAB / 4);
  assert_ptr_equal(big2, big - SLAB / 4); /* the next large block just below the first */
  for (int i = 0; i < 8; i += 2) assert_int_equal(tsr_pool_free(&p, tiles[i], SLAB / 32), 0);
  /* the holes are too small; the room between the tiles and big2 holds a third */
  char *big3 = tsr_pool_alloc(&p, SLAB / 8);
  assert_ptr_equal(big3, big2 - SLAB / 8);
  assert_null(tsr_pool_alloc(&p, SLAB / 4));
  tsr_pool_destroy(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fills_and_reports_exhaustion),
      cmocka_unit_test(random_blocks_never_overlap),
      cmocka_unit_test(large_blocks_from_the_top),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
