/* Device queries: the device a worker serves, memory nodes and their capacity, scopes' nodes,
 * and matrix views registered on a memory node. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../test_common.h"

static int record_device(const tessera_exec_t *ex, void *args) {
  int *out = *(int **)args;
  tessera_context_t *ctx = *(tessera_context_t **)((char *)args + sizeof(int *));
  tessera_device_kind_t kind = TESSERA_DEVICE_CUDA;
  out[0] = tessera_current_device(ctx, &kind);
  out[1] = (int)kind;
  out[2] = ex->device;
  return 0;
}

static const tessera_kernel_t record = {.name = "record",
                                        .impl = {[TESSERA_DEVICE_CPU] = record_device}};

static void current_device_of_workers_and_others(void **state) {
  (void)state;
  tessera_context_t *ctx = tt_cpu_context(2, TESSERA_SCHED_COST);
  int seen[3] = {-5, -5, -5};
  struct {
    int *out;
    tessera_context_t *ctx;
  } args = {seen, ctx};
  tessera_task_t t = {
      .kernel = &record, .args = &args, .args_size = sizeof args, .scope = tessera_scope_cpus()};
  assert_int_equal(tessera_task_insert(ctx, &t), 0);
  assert_int_equal(tessera_wait_all(ctx), 0);
  assert_int_equal(seen[0], 0);
  assert_int_equal(seen[1], TESSERA_DEVICE_CPU);
  assert_int_equal(seen[2], 0);
  tessera_device_kind_t kind = TESSERA_DEVICE_CUDA;
  assert_int_equal(tessera_current_device(ctx, &kind), -1); /* the calling thread is no worker */
  assert_int_equal(kind, TESSERA_DEVICE_CUDA);              /* and is left untouched */
  assert_int_equal(tessera_current_device(NULL, NULL), -1);
  assert_int_equal(tessera_finalize(ctx), 0);
}

static void memory_nodes_and_scopes(void **state) {
  (void)state;
  tessera_context_t *ctx = tt_cpu_context(2, TESSERA_SCHED_COST);
  int nodes = tessera_memory_node_count(ctx);
  assert_true(nodes >= 1);
  assert_true(tessera_memory_node_capacity(ctx, TESSERA_HOST_NODE) > 0);
  assert_int_equal(tessera_memory_node_capacity(ctx, nodes), 0);
  assert_int_equal(tessera_memory_node_capacity(ctx, -1), 0);
  int list[16];
  int gpus = tessera_accelerator_count(ctx);
  assert_int_equal(tessera_scope_nodes(ctx, tessera_scope_gpus(), list, 16), gpus);
  assert_int_equal(tessera_scope_nodes(ctx, tessera_scope_cpus(), list, 16), 0);
  assert_int_equal(nodes, 1 + gpus);
  assert_true(tessera_bandwidth(ctx, 0, 0) > 0);
  assert_true(tessera_bandwidth(ctx, 0, nodes) == 0);
  assert_true(tessera_run_on_device(ctx, gpus, NULL, NULL) < 0);
  assert_int_equal(tessera_finalize(ctx), 0);
}

static void matrix_view_on_a_node(void **state) {
  (void)state;
  tessera_context_t *ctx = tt_cpu_context(2, TESSERA_SCHED_COST);
  double a[6 * 5] = {0};
  tessera_matrix_t *A = NULL;
  assert_int_equal(
      tessera_matrix_view_on(ctx, TESSERA_HOST_NODE, TESSERA_F64, 5, 5, 2, 2, a, 6, &A), 0);
  assert_int_equal(tessera_matrix_rows(A), 5);
  assert_ptr_equal(tessera_data_ptr(tessera_matrix_tile(A, 1, 2)), &a[2 + 4 * 6]);
  assert_int_equal(tessera_data_ld(tessera_matrix_tile(A, 1, 2)), 6);
  assert_int_equal(tessera_matrix_destroy(A), 0);
  int nodes = tessera_memory_node_count(ctx);
  assert_int_equal(tessera_matrix_view_on(ctx, nodes, TESSERA_F64, 5, 5, 2, 2, a, 6, &A), -2);
  assert_int_equal(tessera_matrix_view_on(ctx, 0, (tessera_dtype_t)9, 5, 5, 2, 2, a, 6, &A), -3);
  assert_int_equal(tessera_matrix_view_on(ctx, 0, TESSERA_F64, 5, 5, 2, 2, NULL, 6, &A), -8);
  assert_int_equal(tessera_matrix_view_on(ctx, 0, TESSERA_F64, 5, 5, 2, 2, a, 4, &A), -9);
  assert_int_equal(tessera_matrix_view_on(ctx, 0, TESSERA_F64, 5, 5, 2, 2, a, 6, NULL), -10);
  assert_int_equal(tessera_matrix_view(ctx, TESSERA_F64, 5, 5, 2, 2, a, 4, &A), -8);
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, 5, 5, 0, 2, &A), -5);
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, 5, 5, 2, 2, NULL), -7);
  assert_int_equal(tessera_finalize(ctx), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(current_device_of_workers_and_others),
      cmocka_unit_test(memory_nodes_and_scopes),
      cmocka_unit_test(matrix_view_on_a_node),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
