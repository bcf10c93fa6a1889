/* The Hermitian eigensolver's front doors (tessera/linalg.h: tessera_syevd, tessera_heevd,
 * tessera_tile_syevd): the arguments checked as LAPACK numbers them, then the solver on this
 * process (eig.c: tsr_eig_solve) or over processes (eig_dist.c: tsr_eig_lapack_processes); the
 * tile-level form in one stage on an accelerator from the tiles where they are (eig_one.c), in
 * two through a host copy of A, or for a distributed A through an array of process 0
 * (tsr_lapack_collect / tsr_lapack_deal). */
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>

#include "kernels/cpu/hb2st.h"
#include "linalg/front/front.h"
#include "tessera/linalg.h"

static int syevd(tessera_context_t *ctx, const char *f, tessera_job_t job, tessera_uplo_t uplo,
                 tessera_dtype_t dt, int64_t n, void *a, int64_t lda, void *w) {
  if (!ctx) return -1;
  int rc = tsr_arg_flag(ctx, f, 2, job, "NV");
  if (!rc) rc = tsr_arg_flag(ctx, f, 3, uplo, "LU");
  if (!rc) rc = tsr_arg_dtype(ctx, f, 4, dt);
  if (!rc && (n < 0 || n > INT_MAX / 2))
    rc = tsr_error(ctx, -5, "%s: argument 5 (n) = %lld is out of range [0, %d]", f, (long long)n,
                   INT_MAX / 2);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 6, a, n, n);
  if (!rc) rc = tsr_arg_ld(ctx, f, 7, lda, n);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 8, w, n, 1);
  if (tsr_context_flow(ctx)->distributed)
    return tsr_eig_lapack_processes(ctx, f, job, uplo, dt, n, a, lda, w, rc);
  return rc || n == 0 ? rc : tsr_eig_solve(ctx, f, job, uplo, dt, n, a, lda, w);
}

int tessera_tile_syevd(tessera_job_t job, tessera_uplo_t uplo, tessera_matrix_t *A, void *w) {
  if (!A) return -3;
  tessera_context_t *ctx = A->ctx;
  const char *f = "tile_syevd";
  int rc = tsr_arg_flag(ctx, f, 1, job, "NV");
  if (!rc) rc = tsr_arg_flag(ctx, f, 2, uplo, "LU");
  if (!rc && (A->m != A->n || A->n > INT_MAX / 2))
    rc = tsr_error(ctx, -3, "%s: A is %lld x %lld; it must be square, of order at most %d", f,
                   (long long)A->m, (long long)A->n, INT_MAX / 2);
  if (!rc && A->n > 0 && !w) rc = tsr_error(ctx, -4, "%s: argument 4 (w) is NULL", f);
  const int64_t n = A->n;
  if (A->flow->distributed) return tsr_eig_tile_processes(ctx, f, job, uplo, A, w, rc);
  if (rc || n == 0) return rc;
  /* one stage on an accelerator: the tiles meet in its memory */
  tessera_scope_t where;
  size_t work = 0;
  if (tsr_eig_one_stage(ctx, job, A->dtype, n, &where, &work) && work > 0) {
    bool unsure = false;
    rc = tsr_eig_one_tiles(ctx, f, job, uplo, A, w, where, work, &unsure);
    if (rc || !unsure) return rc;
  }
  /* through a host copy: the band and the tridiagonal stages run on the host (and a solve left
   * unsure above, which the host path's scan names) */
  void *h = malloc((size_t)(n * n) * tessera_dtype_size(A->dtype));
  if (!h) return tsr_error(ctx, TESSERA_ERR_NOMEM, "%s: out of memory for a copy of A", f);
  rc = tessera_matrix_export(A, h, n);
  if (!rc) rc = tsr_eig_solve(ctx, f, job, uplo, A->dtype, n, h, n, w);
  if (rc >= 0 && (rc > 0 || job == TESSERA_VECTORS)) { /* the vectors, or NaN where A had one */
    const int s = tessera_matrix_import(A, h, n);
    if (!rc) rc = s;
  }
  free(h);
  return rc;
}

int tessera_syevd(tessera_context_t *ctx, tessera_job_t job, tessera_uplo_t uplo,
                  tessera_dtype_t dtype, int64_t n, void *a, int64_t lda, void *w) {
  return syevd(ctx, "syevd", job, uplo, dtype, n, a, lda, w);
}

int tessera_heevd(tessera_context_t *ctx, tessera_job_t job, tessera_uplo_t uplo,
                  tessera_dtype_t dtype, int64_t n, void *a, int64_t lda, void *w) {
  return syevd(ctx, "heevd", job, uplo, dtype, n, a, lda, w);
}

double tsr_eig_host_bytes(tessera_context_t *ctx, tessera_job_t job, tessera_dtype_t dt,
                          int64_t n) {
  tessera_scope_t scope;
  const bool gpu = tsr_eig_gpu(ctx, job, dt, n, &scope), vectors = job == TESSERA_VECTORS;
  const int nb = tsr_eig_band(ctx, job, gpu, n);
  tsr_hb2st_layout_t lay;
  if (n == 0 || tsr_hb2st_layout((int)n, nb, &lay)) return 0;
  const double es = (double)tessera_dtype_size(dt), nn = (double)n * (double)n;
  /* the band, its blocks' copies home, T; stage 1's V (host tiles in the CPU forms, evicted to
   * the host from a full pool in the GPU forms) */
  double b = (double)n * (3 * nb + 1) * es + 2.0 * (double)n * sizeof(double) + nn * es;
  if (!(gpu && vectors)) b += (double)n * (double)(n % 32 ? n : n + 8) * es; /* the working copy */
  if (!gpu) /* the chase's reflectors and working band on the host */
    b += ((double)lay.nv + (double)lay.ntau + (double)lay.ldw * (double)n) * es;
  if (vectors && dt != TESSERA_F64) b += nn * sizeof(double); /* T's eigenvectors */
  return b;
}

double tessera_syevd_host_bytes(tessera_context_t *ctx, tessera_job_t job, tessera_dtype_t dtype,
                                int64_t n) {
  const char *f = "syevd_host_bytes";
  if (!ctx) return -1;
  int rc = tsr_arg_flag(ctx, f, 2, job, "NV");
  if (!rc) rc = tsr_arg_dtype(ctx, f, 3, dtype);
  if (!rc && (n < 0 || n > INT_MAX / 2))
    rc = tsr_error(ctx, -4, "%s: argument 4 (n) = %lld is out of range [0, %d]", f, (long long)n,
                   INT_MAX / 2);
  return rc ? rc : tsr_eig_host_bytes(ctx, job, dtype, n);
}
