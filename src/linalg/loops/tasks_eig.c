/* The inserters of the eigensolver's stages (tasks.h): the bulge chasing and its steps, the one
 * stage, Q2's application, the tridiagonal divide and conquer's leaves and merges, the working
 * copy, and the task that computes nothing (transfers brought ahead). */
#include "linalg/loops/tasks.h"

int tsr_task_hb2st(tessera_dtype_t dtype, tessera_context_t *ctx, tessera_data_t *ab,
                   tessera_data_t *d, tessera_data_t *e, tessera_data_t *v, tessera_data_t *tau,
                   int n, int kd, tessera_scope_t scope, const int tag[3]) {
  tsr_hb2st_args_t args = {.dtype = dtype, .n = n, .kd = kd};
  tessera_data_t *h[5] = {ab, d, e, v, tau};
  tessera_access_t md[5] = {TESSERA_R, TESSERA_W, TESSERA_W, TESSERA_W, TESSERA_W};
  return tsr_insert_in(tsr_context_local_flow(ctx), &tsr_kernel_hb2st, &args, sizeof args, 5, h, md,
                       scope, tag, 0);
}

int tsr_task_syevd(const tsr_syevd_args_t *args, tessera_context_t *ctx, tessera_data_t *a,
                   tessera_data_t *w, tessera_data_t *info, tessera_data_t *work,
                   tessera_scope_t scope) {
  tessera_data_t *h[4] = {a, w, info, work};
  tessera_access_t md[4] = {TESSERA_RW, TESSERA_W, TESSERA_W, TESSERA_RW};
  const int tag[3] = {0, 0, 0};
  return tsr_insert_in(tsr_context_local_flow(ctx), &tsr_kernel_syevd, args, sizeof *args,
                       work ? 4 : 3, h, md, scope, tag, 0);
}

int tsr_task_hb2st_apply(tessera_dtype_t dtype, tsr_flow_t *f, tessera_data_t *v,
                         tessera_data_t *tau, tessera_data_t *e, int n, int kd, int m,
                         tessera_scope_t scope, const int tag[3]) {
  tsr_hb2st_apply_args_t args = {.dtype = dtype, .n = n, .kd = kd, .m = m};
  tessera_data_t *h[3] = {v, tau, e};
  tessera_access_t md[3] = {TESSERA_R, TESSERA_R, TESSERA_RW};
  return tsr_insert_in(f, &tsr_kernel_hb2st_apply, &args, sizeof args, 3, h, md, scope, tag, 0);
}

int tsr_task_hb2st_steps(tessera_dtype_t dtype, tessera_context_t *ctx, tessera_data_t *const *cols,
                         int ncols, int col0, int width, int n, int kd, int ldw, int sweep,
                         int first, int count, void *v, void *tau, const int tag[3], int prio) {
  if (ncols < 1 || ncols > TESSERA_MAX_TASK_DATA)
    return tsr_error(ctx, TESSERA_ERR_STATE, "hb2st_steps: %d blocks of columns", ncols);
  tsr_hb2st_steps_args_t args = {.dtype = dtype,
                                 .n = n,
                                 .kd = kd,
                                 .ldw = ldw,
                                 .sweep = sweep,
                                 .first = first,
                                 .count = count,
                                 .col0 = col0,
                                 .width = width,
                                 .v = v,
                                 .tau = tau};
  tessera_access_t md[TESSERA_MAX_TASK_DATA];
  for (int i = 0; i < ncols; i++) md[i] = TESSERA_RW;
  return tsr_insert_host(tsr_context_local_flow(ctx), &tsr_kernel_hb2st_steps, &args, sizeof args,
                         ncols, cols, md, tag, prio);
}

int tsr_task_stedc(tessera_context_t *ctx, tessera_data_t *d, tessera_data_t *e, tessera_data_t *z,
                   int n, int64_t rows, int64_t row, const int tag[3], int prio) {
  tsr_stedc_args_t args = {.n = n, .vectors = 1, .threads = 1, .rows = rows, .row = row};
  tessera_data_t *h[3] = {d, e, z};
  tessera_access_t md[3] = {TESSERA_RW, TESSERA_RW, TESSERA_W};
  return tsr_insert_host(tsr_context_local_flow(ctx), &tsr_kernel_stedc, &args, sizeof args, 3, h,
                         md, tag, prio);
}

int tsr_task_laed_rows(tessera_context_t *ctx, tessera_data_t *q, tessera_data_t *z,
                       const tsr_laed_rows_args_t *args, tessera_scope_t scope, const int tag[3]) {
  tessera_data_t *h[2] = {q, z};
  tessera_access_t md[2] = {TESSERA_R, TESSERA_RW};
  return tsr_insert_in(tsr_context_local_flow(ctx), &tsr_kernel_laed_rows, args, sizeof *args, 2, h,
                       md, scope, tag, 0);
}

int tsr_task_laed_roots(tessera_context_t *ctx, tsr_laed_plan_t *plan, int64_t j0, int64_t j1,
                        const int tag[3]) {
  tsr_laed_roots_args_t args = {.plan = plan, .j0 = j0, .j1 = j1};
  return tsr_insert_host(tsr_context_local_flow(ctx), &tsr_kernel_laed_roots, &args, sizeof args, 0,
                         NULL, NULL, tag, 0);
}

int tsr_task_laed_secular(tessera_context_t *ctx, tessera_data_t *plan,
                          const tsr_laed_plan_t *header, double wsq, tessera_scope_t scope,
                          const int tag[3]) {
  tsr_laed_secular_args_t args = {.plan = *header, .wsq = wsq};
  tessera_data_t *h[1] = {plan};
  tessera_access_t md[1] = {TESSERA_RW};
  return tsr_insert_in(tsr_context_local_flow(ctx), &tsr_kernel_laed_secular, &args, sizeof args, 1,
                       h, md, scope, tag, 0);
}

int tsr_task_laed_update(tessera_context_t *ctx, const tsr_laed_update_args_t *args,
                         const int tag[3]) {
  return tsr_insert_host(tsr_context_local_flow(ctx), &tsr_kernel_laed_update, args, sizeof *args,
                         0, NULL, NULL, tag, 0);
}

int tsr_task_laed_values(tessera_context_t *ctx, tessera_data_t *plan, tessera_data_t *rows,
                         const tsr_laed_plan_t *header, tessera_scope_t scope, const int tag[3]) {
  tsr_laed_values_args_t args = {.plan = *header};
  tessera_data_t *h[2] = {plan, rows};
  tessera_access_t md[2] = {TESSERA_R, TESSERA_RW};
  return tsr_insert_in(tsr_context_local_flow(ctx), &tsr_kernel_laed_values, &args, sizeof args, 2,
                       h, md, scope, tag, 0);
}

int tsr_task_laed_merge(tessera_context_t *ctx, tessera_data_t *q, tessera_data_t *plan,
                        tessera_data_t *work, const tsr_laed_merge_args_t *args,
                        tessera_scope_t scope, const int tag[3]) {
  tessera_data_t *h[3] = {q, plan, work};
  tessera_access_t md[3] = {TESSERA_RW, TESSERA_R, TESSERA_RW};
  return tsr_insert_in(tsr_context_local_flow(ctx), &tsr_kernel_laed_merge, args, sizeof *args, 3,
                       h, md, scope, tag, 0);
}

int tsr_task_eig_prepare(tessera_context_t *ctx, const tsr_eig_prepare_args_t *args,
                         const int tag[3]) {
  return tsr_insert_host(tsr_context_local_flow(ctx), &tsr_kernel_eig_prepare, args, sizeof *args,
                         0, NULL, NULL, tag, 0);
}

/* A task that reads or writes its data and computes nothing: brings copies where its scope and
 * the flow place it ahead of the tasks that use them (over processes: the tiles' transfers). */
static int nothing(const tessera_exec_t *ex, void *args) {
  (void)ex, (void)args;
  return 0;
}

static const tessera_kernel_t touch = {.name = "touch",
                                       .impl = {[TESSERA_DEVICE_CPU] = nothing,
                                                [TESSERA_DEVICE_CUDA] = nothing,
                                                [TESSERA_DEVICE_SIM] = nothing}};

int tsr_task_touch(tsr_flow_t *f, int ndata, tessera_data_t *const *data,
                   const tessera_access_t *mode, const int tag[3]) {
  return tsr_insert_in(f, &touch, NULL, 0, ndata, data, mode, tessera_scope_all(), tag, 0);
}
