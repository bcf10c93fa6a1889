/* tessera_data_discard: a workspace's replicas are freed once the tasks inserted before have
 * finished (and not before: they read the contents first); the next writer allocates it again;
 * handles with a home of the caller's are refused. Host memory freed comes back to the next
 * allocation of its size (the context's host cache). */
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

typedef struct {
  double value;  /* what `put` writes */
  double *seen;  /* where `take` copies what it reads */
  long sleep_us; /* how long `take` takes */
} args_t;

static int put(const tessera_exec_t *ex, void *a) {
  *(double *)ex->ptr[0] = ((args_t *)a)->value;
  return 0;
}
static int take(const tessera_exec_t *ex, void *a) {
  const args_t *x = a;
  tt_sleep_us(x->sleep_us);
  *x->seen = *(double *)ex->ptr[0];
  return 0;
}
static const tessera_kernel_t put_k = {.name = "test_put", .impl = {[TESSERA_DEVICE_CPU] = put}};
static const tessera_kernel_t take_k = {.name = "test_take", .impl = {[TESSERA_DEVICE_CPU] = take}};

static void insert(tessera_context_t *ctx, const tessera_kernel_t *k, args_t a, tessera_data_t *h,
                   tessera_access_t mode) {
  tessera_task_t t = {
      .kernel = k, .args = &a, .args_size = sizeof a, .ndata = 1, .data = {h}, .mode = {mode}};
  assert_int_equal(tessera_task_insert(ctx, &t), 0);
}

/* A slow reader still sees the contents the discard ends; after it, the memory is gone; a new
 * writer brings it back. */
static void test_discard_after_readers(void **state) {
  (void)state;
  tessera_context_t *ctx = tt_cpu_context(2, TESSERA_SCHED_COST);
  tessera_data_t *h = NULL;
  assert_int_equal(tessera_data_create_workspace(ctx, 4, 4, sizeof(double), &h), 0);
  double first = 0, second = 0;
  insert(ctx, &put_k, (args_t){.value = 7}, h, TESSERA_W);
  insert(ctx, &take_k, (args_t){.seen = &first, .sleep_us = 50000}, h, TESSERA_R);
  assert_int_equal(tessera_data_discard(ctx, h), 0);
  assert_int_equal(tessera_wait_all(ctx), 0);
  assert_true(first == 7);
  assert_null(tessera_data_ptr(h)); /* the host replica it lived in is freed */
  insert(ctx, &put_k, (args_t){.value = 9}, h, TESSERA_W);
  insert(ctx, &take_k, (args_t){.seen = &second}, h, TESSERA_R);
  assert_int_equal(tessera_wait_all(ctx), 0);
  assert_true(second == 9);
  assert_int_equal(tessera_data_discard(ctx, h), 0); /* twice in a row: nothing left to free */
  assert_int_equal(tessera_data_discard(ctx, h), 0);
  assert_int_equal(tessera_data_release(ctx, h), 0);
  assert_int_equal(tessera_finalize(ctx), 0);
}

/* Only workspaces: a handle homed on the caller's memory, or no handle, is refused. */
static void test_discard_refuses(void **state) {
  (void)state;
  tessera_context_t *ctx = tt_cpu_context(1, TESSERA_SCHED_COST);
  double home[4] = {0};
  tessera_data_t *h = NULL;
  assert_int_equal(tessera_data_register(ctx, TESSERA_HOST_NODE, home, 4, 1, 4, sizeof(double), &h),
                   0);
  assert_int_equal(tessera_data_discard(ctx, h), -2);
  assert_true(strlen(tessera_last_error(ctx)) > 0);
  assert_int_equal(tessera_data_discard(ctx, NULL), -2);
  assert_int_equal(tessera_data_discard(NULL, h), -1);
  assert_int_equal(tessera_data_release(ctx, h), 0);
  assert_int_equal(tessera_finalize(ctx), 0);
}

/* A workspace's host block, freed by a discard or a release, is the one a later workspace of its
 * size is given (no fresh pages to fault in); another size gets another block. */
static void test_freed_memory_comes_back(void **state) {
  (void)state;
  tessera_context_t *ctx = tt_cpu_context(1, TESSERA_SCHED_COST);
  tessera_data_t *h = NULL, *g = NULL, *other = NULL;
  assert_int_equal(tessera_data_create_workspace(ctx, 512, 512, sizeof(double), &h), 0);
  insert(ctx, &put_k, (args_t){.value = 1}, h, TESSERA_W);
  assert_int_equal(tessera_wait_all(ctx), 0);
  void *first = tessera_data_ptr(h);
  assert_non_null(first);
  assert_int_equal(tessera_data_discard(ctx, h), 0);
  assert_int_equal(tessera_wait_all(ctx), 0);
  insert(ctx, &put_k, (args_t){.value = 2}, h, TESSERA_W);
  assert_int_equal(tessera_wait_all(ctx), 0);
  assert_ptr_equal(tessera_data_ptr(h), first);
  assert_int_equal(tessera_data_release(ctx, h), 0);
  assert_int_equal(tessera_data_create_workspace(ctx, 256, 256, sizeof(double), &other), 0);
  assert_int_equal(tessera_data_create_workspace(ctx, 512, 512, sizeof(double), &g), 0);
  insert(ctx, &put_k, (args_t){.value = 3}, other, TESSERA_W);
  insert(ctx, &put_k, (args_t){.value = 4}, g, TESSERA_W);
  assert_int_equal(tessera_wait_all(ctx), 0);
  assert_ptr_equal(tessera_data_ptr(g), first);
  assert_ptr_not_equal(tessera_data_ptr(other), first);
  assert_true(*(double *)tessera_data_ptr(g) == 4);
  assert_int_equal(tessera_data_release(ctx, g), 0);
  assert_int_equal(tessera_data_release(ctx, other), 0);
  assert_int_equal(tessera_finalize(ctx), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_discard_after_readers),
                                     cmocka_unit_test(test_discard_refuses),
                                     cmocka_unit_test(test_freed_memory_comes_back)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
