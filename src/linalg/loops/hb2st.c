/* The second stage of the eigensolver, bulge chasing (kernels/cpu/hb2st.h), as a pipeline of
 * tasks on the CPU workers (as PLASMA's and MAGMA's): sweep s + 1 runs behind sweep s.
 *
 * A task runs `group` consecutive steps of one sweep (hb2st_steps, a host kernel). The working
 * band is registered as handles of `width` consecutive columns each, and a task declares RW on
 * every handle holding a column its steps touch (step (s, j): columns [s, hi] for j = 0,
 * [lo - kd', hi] for j >= 1). Tasks are inserted sweep by sweep, steps in order: a legal
 * sequential order (the driver's). Two tasks touching a common column share a handle, so the
 * runtime runs them in that order; tasks sharing no handle touch disjoint columns and commute:
 * the result is the driver's, bit for bit (every step the same operations on the same values).
 *
 * Overlap. Task (s + 1, g) (steps gG .. gG + G - 1) must follow task (s, g + 1), which holds step
 * (s, gG + G) (hb2st.h: step (s + 1, j) follows (s, j + 1)). Its last column, s + 1 + (g + 1) G
 * kd', is (G - 1) kd' columns before the first of task (s, g + 2), s + 1 + ((g + 2) G - 1) kd':
 * with width <= (G - 1) kd' they hold no handle in common, and sweep s + 1 runs its group g
 * alongside sweep s's group g + 2 (each sweep two groups behind the one before). A task's columns,
 * (G + 1) kd' at most, span at most 7 handles of width >= (G + 1) kd' / 6. Hence
 * width = ceil((G + 1) kd' / 6), within both bounds for G >= 2.
 *
 * The reflectors go to the kernel by pointer: slot (s, j) is written by the task running step
 * (s, j) alone, and read during the flow only by step (s, j + 1), in the same task or the next of
 * its sweep, which shares its columns and so runs after it. */
#include <stdlib.h>

#include "kernels/cpu/hb2st.h"
#include "linalg/loops/loops.h"
#include "linalg/loops/tasks.h"

int tsr_hb2st_band_create(tessera_context_t *ctx, tessera_dtype_t dtype, int n, int kd, void *w,
                          int ldw, int group, tsr_hb2st_band_t *B) {
  tsr_hb2st_layout_t L;
  *B = (tsr_hb2st_band_t){.ctx = ctx, .dtype = dtype, .n = n, .kd = kd, .ldw = ldw};
  if (tsr_hb2st_layout(n, kd, &L) || ldw < L.ldw || group < 1 || (n > 0 && !w))
    return tsr_error(ctx, TESSERA_ERR_STATE,
                     "bulge chasing: invalid band (n = %d, kd = %d, ldw = %d, group %d)", n, kd,
                     ldw, group);
  if (L.sweeps == 0) return 0; /* nothing to chase */
  const size_t es = tessera_dtype_size(dtype);
  const int64_t width = ((int64_t)(group + 1) * L.kd + 5) / 6;
  B->group = group;
  B->width = (int)(width < n ? width : n);
  B->count = (n + B->width - 1) / B->width;
  B->cols = calloc((size_t)B->count, sizeof *B->cols);
  if (!B->cols) return tsr_error(ctx, TESSERA_ERR_NOMEM, "bulge chasing: out of memory");
  int rc = 0;
  for (int i = 0; i < B->count && !rc; i++) {
    const int c0 = i * B->width, nc = n - c0 < B->width ? n - c0 : B->width;
    rc = tessera_data_register(ctx, TESSERA_HOST_NODE, (char *)w + (size_t)c0 * (size_t)ldw * es,
                               (size_t)ldw, (size_t)nc, (size_t)ldw, es, &B->cols[i]);
  }
  if (rc) (void)tsr_hb2st_band_destroy(B);
  return rc;
}

int tsr_hb2st_band_destroy(tsr_hb2st_band_t *B) {
  int rc = 0;
  for (int i = 0; i < B->count && B->cols; i++)
    if (B->cols[i]) {
      const int s = tessera_data_release(B->ctx, B->cols[i]);
      if (!rc) rc = s;
    }
  free(B->cols);
  B->cols = NULL;
  B->count = 0;
  return rc;
}

int tsr_pxhb2st(tsr_hb2st_band_t *B, void *v, void *tau) {
  tsr_hb2st_layout_t L;
  if (!B->cols || tsr_hb2st_layout(B->n, B->kd, &L)) return 0;
  int rc = 0;
  for (int s = 0; s < L.sweeps && !rc; s++) {
    const int steps = tsr_hb2st_steps(&L, s);
    for (int j = 0; j < steps && !rc; j += B->group) {
      const int count = steps - j < B->group ? steps - j : B->group;
      int first, last, c;
      tsr_hb2st_columns(&L, s, j, &first, &c);
      tsr_hb2st_columns(&L, s, j + count - 1, &c, &last);
      const int b0 = first / B->width, b1 = last / B->width, tag[3] = {s, j, 0};
      rc = tsr_task_hb2st_steps(B->dtype, B->ctx, B->cols + b0, b1 - b0 + 1, b0 * B->width,
                                B->width, B->n, B->kd, B->ldw, s, j, count, v, tau, tag, 0);
    }
  }
  return rc;
}
