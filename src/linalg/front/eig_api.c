/* The Hermitian eigensolver's front doors (tessera/linalg.h: tessera_syevd, tessera_heevd,
 * tessera_tile_syevd): the arguments checked as LAPACK numbers them, then the solver on this
 * process (eig.c: tsr_eig_solve) or over processes (eig_dist.c: tsr_eig_lapack_processes); the
 * tile-level form in one stage on an accelerator from the tiles where they are (eig_one.c), in
 * two through a host copy of A, or for a distributed A through an array of process 0
 * (tsr_lapack_collect / tsr_lapack_deal). */
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/hb2st.h"
#include "linalg/front/front.h"
#include "tessera/linalg.h"

/* The checks of arguments 2 .. 7 that syevd and syevdx share (job, uplo, dtype, n, a, lda). */
static int matrix_args(tessera_context_t *ctx, const char *f, tessera_job_t job,
                       tessera_uplo_t uplo, tessera_dtype_t dt, int64_t n, const void *a,
                       int64_t lda) {
  int rc = tsr_arg_flag(ctx, f, 2, job, "NV");
  if (!rc) rc = tsr_arg_flag(ctx, f, 3, uplo, "LU");
  if (!rc) rc = tsr_arg_dtype(ctx, f, 4, dt);
  if (!rc && (n < 0 || n > INT_MAX / 2))
    rc = tsr_error(ctx, -5, "%s: argument 5 (n) = %lld is out of range [0, %d]", f, (long long)n,
                   INT_MAX / 2);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 6, a, n, n);
  if (!rc) rc = tsr_arg_ld(ctx, f, 7, lda, n);
  return rc;
}

static int syevd(tessera_context_t *ctx, const char *f, tessera_job_t job, tessera_uplo_t uplo,
                 tessera_dtype_t dt, int64_t n, void *a, int64_t lda, void *w) {
  if (!ctx) return -1;
  int rc = matrix_args(ctx, f, job, uplo, dt, n, a, lda);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 8, w, n, 1);
  if (tsr_context_flow(ctx)->distributed)
    return tsr_eig_lapack_processes(ctx, f, job, uplo, dt, n, a, lda, w, rc);
  return rc || n == 0 ? rc : tsr_eig_solve(ctx, f, job, uplo, dt, n, a, lda, w);
}

/* syevdx's range: il .. iu checked as arguments 8 and 9 (1 <= il <= iu <= n, or none: il 1 and
 * iu 0), *k the count. */
static int range_args(tessera_context_t *ctx, const char *f, int64_t n, int64_t il, int64_t iu,
                      int64_t *k) {
  *k = 0;
  if (il == 1 && iu == 0) return 0;
  if (il < 1 || il > n)
    return tsr_error(ctx, -8, "%s: argument 8 (il) = %lld is out of range [1, %lld]", f,
                     (long long)il, (long long)n);
  if (iu < il || iu > n)
    return tsr_error(ctx, -9, "%s: argument 9 (iu) = %lld is out of range [il, n] = [%lld, %lld]",
                     f, (long long)iu, (long long)il, (long long)n);
  *k = iu - il + 1;
  return 0;
}

/* The eigenvalues il .. iu (and their vectors) by the whole solve's eigenvalues into a scratch of
 * n; the vectors' range carried back alone on this process, taken from the whole result over
 * processes. */
static int syevdx(tessera_context_t *ctx, const char *f, tessera_job_t job, tessera_uplo_t uplo,
                  tessera_dtype_t dt, int64_t n, void *a, int64_t lda, int64_t il, int64_t iu,
                  void *w) {
  if (!ctx) return -1;
  int rc = matrix_args(ctx, f, job, uplo, dt, n, a, lda);
  int64_t k = 0;
  if (!rc) rc = range_args(ctx, f, n, il, iu, &k);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 10, w, k, 1);
  const bool distributed = tsr_context_flow(ctx)->distributed;
  if (distributed) {
    const int64_t values[2] = {il, iu};
    const int argno[2] = {8, 9};
    int64_t tile = 1;
    rc = tsr_lapack_agree(ctx, f, 2, values, argno, rc, &tile);
  }
  if (rc < 0 || n == 0 || k == 0) return rc; /* over processes: the same everywhere */
  const size_t rs = tsr_dtype_real_size(dt);
  char *all = malloc((size_t)(n > 0 ? n : 1) * rs);
  if (!all)
    rc = tsr_error(ctx, TESSERA_ERR_NOMEM, "%s: out of memory for %lld eigenvalues", f,
                   (long long)n);
  if (distributed) {
    rc = tsr_eig_lapack_processes(ctx, f, job, uplo, dt, n, a, lda, all, rc);
    if (rc >= 0 && a && job == TESSERA_VECTORS) tsr_eig_first_columns(dt, n, a, lda, il - 1, k);
  } else if (!rc) {
    rc = tsr_eig_solve_range(ctx, f, job, uplo, dt, n, a, lda, all, il - 1, k);
  }
  if (rc >= 0 && w && all) memcpy(w, all + (size_t)(il - 1) * rs, (size_t)k * rs);
  free(all);
  return rc;
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

int tessera_syevdx(tessera_context_t *ctx, tessera_job_t job, tessera_uplo_t uplo,
                   tessera_dtype_t dtype, int64_t n, void *a, int64_t lda, int64_t il, int64_t iu,
                   void *w) {
  return syevdx(ctx, "syevdx", job, uplo, dtype, n, a, lda, il, iu, w);
}

int tessera_heevdx(tessera_context_t *ctx, tessera_job_t job, tessera_uplo_t uplo,
                   tessera_dtype_t dtype, int64_t n, void *a, int64_t lda, int64_t il, int64_t iu,
                   void *w) {
  return syevdx(ctx, "heevdx", job, uplo, dtype, n, a, lda, il, iu, w);
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
