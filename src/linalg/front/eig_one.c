/* The Hermitian eigensolver in one stage on one device (front.h: tsr_eig_one): A scanned for
 * NaN and infinities as the two stages scan it, then LAPACK's ?syevd / ?heevd on the calling
 * thread with the CPU workers' cores, or cuSOLVER's syevd as one task on the accelerator the
 * policy chose (A, w and the info moved there and back by the runtime, A pinned for the copies,
 * cuSOLVER's workspace a workspace handle that never comes home; with values alone A goes up
 * into an array of the device's that never comes home). On a descriptor's tiles
 * (tsr_eig_one_tiles) the tiles meet in one array in the device's memory, never on the host.
 * The call's seconds go to the context's history, which the policy reads (loops/policy.c:
 * tsr_eig_one_stage). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/eig.h"
#include "linalg/front/front.h"
#include "linalg/loops/loops.h"
#include "linalg/loops/tasks.h"
#include "runtime/context.h"
#include "tessera/linalg.h"

int tsr_eig_one_task(tessera_context_t *ctx, const tsr_syevd_args_t *args, tessera_data_t *a,
                     void *w, int *info, tessera_scope_t where) {
  const size_t rs = tsr_dtype_real_size(args->dtype), n = (size_t)args->n;
  tessera_data_t *h[3] = {NULL, NULL, NULL}; /* w, the info, the workspace */
  int rc = tessera_data_register(ctx, TESSERA_HOST_NODE, w, n, 1, n, rs, &h[0]);
  if (!rc) rc = tessera_data_register(ctx, TESSERA_HOST_NODE, info, 1, 1, 1, sizeof *info, &h[1]);
  if (!rc) rc = tessera_data_create_workspace(ctx, (args->work_bytes + 7) / 8, 1, 8, &h[2]);
  if (!rc) rc = tsr_task_syevd(args, ctx, a, h[0], h[1], h[2], where);
  if (!rc) rc = tessera_wait_all(ctx);
  for (int i = 0; i < 3; i++)
    if (h[i]) {
      const int r = tessera_data_release(ctx, h[i]);
      if (!rc) rc = r;
    }
  return rc;
}

bool tsr_eig_unsure(tessera_dtype_t dt, int64_t n, const void *w, int info) {
  const bool single = tsr_dtype_single(dt);
  for (int64_t i = 0; i < n && !info; i++)
    if (!isfinite(single ? ((const float *)w)[i] : ((const double *)w)[i])) return true;
  return info != 0;
}

/* A's tiles into the n x n column-major array `at` in node's memory, or (`out`) back: tasks on a
 * view of the array in A's column tiling, waited for; the view's release writes home whatever
 * its tasks left on another node. */
static int array_copy(tessera_matrix_t *A, int node, void *at, bool out) {
  tessera_context_t *ctx = A->ctx;
  const int64_t n = A->n, nb = A->nb < n ? A->nb : n;
  tessera_matrix_t *V = NULL;
  int rc = tessera_matrix_view_on(ctx, node, A->dtype, n, n, n, nb, at, n, &V);
  if (!rc) rc = out ? tsr_pxlacpy(V, A) : tsr_pxlacpy(A, V);
  const int waited = tessera_wait_all(ctx);
  if (!rc) rc = waited;
  if (V) {
    const int r = tessera_matrix_destroy(V);
    if (!rc) rc = r;
  }
  return rc;
}

/* A's tiles into a new n x n array (*h, the caller's to release) in the memory of the device of
 * `where` (*node). */
static int device_array(tessera_context_t *ctx, const char *f, tessera_matrix_t *A,
                        tessera_scope_t where, int *node, tessera_data_t **h) {
  if (tessera_scope_nodes(ctx, where, node, 1) < 1)
    return tsr_error(ctx, TESSERA_ERR_STATE, "%s: the one-stage solver's device has no memory", f);
  const size_t n = (size_t)A->n;
  const int rc = tessera_data_create_on(ctx, *node, n, n, tessera_dtype_size(A->dtype), h);
  return rc ? rc : array_copy(A, *node, tessera_data_ptr(*h), false);
}

/* The task on the device of `where` on the host array a (lda), pinned for its copies. With
 * vectors A is registered and comes home whole; with values alone the task works on a copy in
 * the device's memory that never comes home (cuSOLVER uses A's other triangle as scratch,
 * which LAPACK's contract leaves untouched). */
static int on_device(tessera_context_t *ctx, const char *f, const tsr_syevd_args_t *args, void *a,
                     int64_t lda, void *w, int *info, tessera_scope_t where) {
  const size_t es = tessera_dtype_size(args->dtype), n = (size_t)args->n;
  tessera_data_t *h = NULL;
  tessera_matrix_t *A = NULL;
  int node = -1;
  const bool pinned = tsr_host_pin(ctx, a, ((size_t)lda * (n - 1) + n) * es);
  int rc = 0;
  if (args->jobz != 'N') {
    rc = tessera_data_register(ctx, TESSERA_HOST_NODE, a, n, n, (size_t)lda, es, &h);
  } else {
    const int64_t nb = tessera_default_tile(ctx);
    rc = tessera_matrix_view_on(ctx, TESSERA_HOST_NODE, args->dtype, (int64_t)n, (int64_t)n,
                                (int64_t)n, nb < (int64_t)n ? nb : (int64_t)n, a, lda, &A);
    if (!rc) rc = device_array(ctx, f, A, where, &node, &h);
  }
  if (!rc) rc = tsr_eig_one_task(ctx, args, h, w, info, where);
  if (h) {
    const int r = tessera_data_release(ctx, h);
    if (!rc) rc = r;
  }
  if (A) {
    const int r = tessera_matrix_destroy(A);
    if (!rc) rc = r;
  }
  if (pinned) tsr_host_unpin(ctx, a);
  return rc;
}

int tsr_eig_one(tessera_context_t *ctx, const char *f, tessera_job_t job, tessera_uplo_t uplo,
                tessera_dtype_t dt, int64_t n, void *a, int64_t lda, void *w, tessera_scope_t where,
                size_t work_bytes) {
  return tsr_eig_one_range(ctx, f, job, uplo, dt, n, a, lda, w, where, work_bytes, 0, n);
}

int tsr_eig_one_range(tessera_context_t *ctx, const char *f, tessera_job_t job, tessera_uplo_t uplo,
                      tessera_dtype_t dt, int64_t n, void *a, int64_t lda, void *w,
                      tessera_scope_t where, size_t work_bytes, int64_t lo, int64_t k) {
  const double t0 = tsr_now();
  const bool all = lo == 0 && k == n;
  const int workers = tsr_eig_cpu_workers(ctx);
  const bool device = work_bytes > 0;
  /* LAPACK on the host with vectors, which overwrite A whole: an upper triangle reflected into
   * the lower one as the scan reads it (each task reads upper entries and writes lower ones of
   * its own columns), and the lower one solved (LAPACK's upper path is the slower) */
  const bool turn = !device && job == TESSERA_VECTORS && uplo == TESSERA_UPPER;
  double amax = 0;
  const int64_t bad = tsr_eig_prepare(ctx, dt, (char)uplo, n, a, lda, turn ? a : NULL,
                                      turn ? lda : 0, workers, &amax);
  if (bad < 0) return (int)bad;
  if (bad) {
    tsr_eig_fill_nan(dt, job, (char)uplo, n, a, lda, w);
    return tsr_error(ctx, (int)bad, "%s: A holds a NaN or an infinity in column %lld", f,
                     (long long)bad);
  }
  tsr_syevd_args_t args = tsr_eig_one_args(job, turn ? TESSERA_LOWER : uplo, dt, n, work_bytes);
  args.threads = !device && workers > 1 ? workers : 1;
  if (!all) args.il = (int)lo + 1, args.iu = (int)(lo + k); /* ?syevr, Xsyevdx */
  int info = 0, rc;
  if (device) {
    rc = on_device(ctx, f, &args, a, lda, w, &info, where);
  } else {
    void *ptr[3] = {a, w, &info};
    const size_t ld[3] = {(size_t)lda, (size_t)n, 1};
    rc = tsr_run_inline(ctx, TESSERA_HOST_NODE, NULL, &tsr_kernel_syevd, (void *)&args, 3, ptr, ld);
    if (rc > 0) rc = tsr_error(ctx, TESSERA_ERR_KERNEL, "%s: LAPACK's syevd failed", f);
  }
  if (rc) return rc;
  if (info > 0)
    return tsr_error(ctx, info,
                     "%s: the tridiagonal eigensolver did not converge (info %d: that many "
                     "off-diagonal elements did not reach zero)",
                     f, info);
  if (!all) { /* the range's values from w's front to w[lo ..] */
    const size_t rs = tsr_dtype_real_size(dt);
    memmove((char *)w + (size_t)lo * rs, w, (size_t)k * rs);
  }
  tsr_eig_measured_range(ctx, true, where, job, dt, n, k, tsr_now() - t0);
  return 0;
}

int tsr_eig_one_tiles(tessera_context_t *ctx, const char *f, tessera_job_t job, tessera_uplo_t uplo,
                      tessera_matrix_t *A, void *w, tessera_scope_t where, size_t work_bytes,
                      bool *unsure) {
  const double t0 = tsr_now();
  const tessera_dtype_t dt = A->dtype;
  const int64_t n = A->n;
  *unsure = false;
  const tsr_syevd_args_t args = tsr_eig_one_args(job, uplo, dt, n, work_bytes);
  int info = 0, node = -1;
  tessera_data_t *h = NULL; /* the array */
  int rc = device_array(ctx, f, A, where, &node, &h);
  if (!rc) rc = tsr_eig_one_task(ctx, &args, h, w, &info, where);
  if (!rc) *unsure = tsr_eig_unsure(dt, n, w, info);
  if (!rc && !*unsure && job == TESSERA_VECTORS)
    rc = array_copy(A, node, tessera_data_ptr(h), true);
  if (h) {
    const int r = tessera_data_release(ctx, h);
    if (!rc) rc = r;
  }
  if (!rc && !*unsure) tsr_eig_measured(ctx, true, where, job, dt, n, tsr_now() - t0);
  return rc;
}
