/* What both methods of the Hermitian eigensolver share (front.h): A's triangle scanned for NaN
 * and infinities and its largest modulus found by tasks on the CPU workers (eig_prepare), copied
 * as it goes into the lower triangle of the two stages' working copy; what a call writes where
 * A holds a NaN; the CPU workers the host stages count on; an index range's columns moved to the
 * front. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "linalg/front/front.h"
#include "linalg/loops/eig_stages.h"
#include "linalg/loops/tasks.h"
#include "runtime/context.h"
#include "tessera/linalg.h"

int tsr_eig_cpu_workers(const tessera_context_t *ctx) {
  tessera_device_info_t cpu;
  return tessera_device_count(ctx, TESSERA_DEVICE_CPU) > 0 &&
                 tessera_device_info(ctx, TESSERA_DEVICE_CPU, 0, &cpu) == 0
             ? cpu.workers
             : 0;
}

/* Parts of the working copy per CPU worker: tasks of about equal triangles. */
enum { PREPARE_PARTS = 4 };

int64_t tsr_eig_prepare(tessera_context_t *ctx, tessera_dtype_t dt, char uplo, int64_t n,
                        const void *a, int64_t lda, void *h, int64_t ldh, int workers,
                        double *amax) {
  const int parts = workers > 0 ? PREPARE_PARTS * workers : 1;
  double *m = calloc((size_t)parts, sizeof *m);
  int64_t *bad = calloc((size_t)parts, sizeof *bad);
  int rc = !m || !bad ? tsr_error(ctx, TESSERA_ERR_NOMEM, "syevd: out of memory") : 0;
  const double area = (double)n * (double)(n + 1) / 2;
  for (int p = 0, j0 = 0; p < parts && !rc; p++) {
    /* j1: the columns from 0 hold (p + 1) / parts of the triangle, n (n + 1) / 2 - (n - j1)
     * (n - j1 + 1) / 2 entries */
    const double rest = area * (1 - (double)(p + 1) / parts);
    int64_t j1 = p + 1 == parts ? n : n - (int64_t)floor((sqrt(8 * rest + 1) - 1) / 2);
    if (j1 < j0) j1 = j0;
    tsr_eig_prepare_args_t pa = {.dtype = dt,
                                 .uplo = uplo,
                                 .n = n,
                                 .lda = lda,
                                 .ldh = ldh,
                                 .j0 = j0,
                                 .j1 = j1,
                                 .a = a,
                                 .h = h,
                                 .amax = &m[p],
                                 .bad = &bad[p]};
    const int tag[3] = {p, 0, 0};
    rc = workers > 0 ? tsr_task_eig_prepare(ctx, &pa, tag)
                     : tsr_run_inline(ctx, TESSERA_HOST_NODE, NULL, &tsr_kernel_eig_prepare, &pa, 0,
                                      NULL, NULL);
    j0 = (int)j1;
  }
  const int waited = workers > 0 ? tessera_wait_all(ctx) : 0;
  int64_t first = 0;
  *amax = 0;
  for (int p = 0; p < parts && !rc && !waited; p++) {
    *amax = fmax(*amax, m[p]);
    if (bad[p] && (!first || bad[p] < first)) first = bad[p];
  }
  free(m), free(bad);
  return rc ? rc : waited ? waited : first;
}

void tsr_eig_fill_nan(tessera_dtype_t dt, tessera_job_t job, char uplo, int64_t n, void *a,
                      int64_t lda, void *w) {
  const double q = NAN;
  for (int64_t i = 0; i < n; i++) tsr_eig_put_real(dt, w, i, q);
  const size_t es = tessera_dtype_size(dt);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++)
      if (job == TESSERA_VECTORS || (uplo == 'L' ? i >= j : i <= j))
        tsr_scalar_store(dt, (char *)a + tsr_eig_at(i, j, lda) * es, (tsr_scalar_t){q, q});
}

void tsr_eig_first_columns(tessera_dtype_t dt, int64_t n, void *a, int64_t lda, int64_t lo,
                           int64_t k) {
  const size_t es = tessera_dtype_size(dt);
  for (int64_t j = 0; j < k && lo > 0; j++)
    memmove((char *)a + tsr_eig_at(0, j, lda) * es, (char *)a + tsr_eig_at(0, lo + j, lda) * es,
            (size_t)n * es);
}
