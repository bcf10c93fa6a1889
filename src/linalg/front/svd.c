/* The singular value decomposition by the polar decomposition and the eigensolver (QDWH-SVD,
 * Nakatsukasa and Higham 2013): for m >= n, A = U_p H (loops/polar.c), -H = V (-Σ) Vᴴ by the
 * Hermitian eigensolver (its ascending eigenvalues are the singular values descending, its
 * eigenvectors in that order), then U = U_p V and Vᴴ; for m < n the same on Aᴴ, whose factors
 * swap. Tile level on descriptors, and LAPACK-style through views (on a context over
 * processes, process 0's arrays dealt over the grid for the call). On one process whose scope
 * holds CPUs alone, LAPACK's gesdd where the policy has measured it faster (policy.c:
 * tsr_svd_lapack): on the caller's arrays, or on a host copy of the tiles. Every vector
 * (LAPACK-style, ALL_VECTORS): the economy ones, then their span's orthogonal complement. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/copy.h"
#include "kernels/dtype.h"
#include "kernels/eig.h"
#include "linalg/desc/desc.h"
#include "linalg/front/front.h"
#include "linalg/loops/loops.h"
#include "linalg/loops/policy.h"
#include "runtime/context.h"
#include "tessera/linalg.h"

int tsr_gesdd_status(tessera_context_t *ctx, const char *f, int rc, const int info[2]) {
  if (rc > 0) rc = tsr_error(ctx, TESSERA_ERR_KERNEL, "%s: LAPACK's gesdd failed", f);
  if (!rc && info[1])
    rc = tsr_error(ctx, info[1], "%s: A holds a NaN or an infinity in column %d", f, info[1]);
  if (!rc && info[0])
    rc = tsr_error(ctx, info[0],
                   "%s: the bidiagonal SVD did not converge (info %d: that many superdiagonals "
                   "did not reach zero)",
                   f, info[0]);
  return rc;
}

/* LAPACK's gesdd on host arrays (A destroyed; u and vt with VECTORS), on the calling thread
 * with the CPU workers' threads; info as the QDWH method's: a column holding a NaN or an
 * infinity, or the bidiagonal SVD's failure. */
static int lapack_arrays(tessera_context_t *ctx, const char *f, tessera_job_t job,
                         tessera_dtype_t dt, int64_t m, int64_t n, void *a, int64_t lda, void *s,
                         void *u, int64_t ldu, void *vt, int64_t ldvt) {
  const bool vectors = job != TESSERA_VALUES;
  const int64_t k = m < n ? m : n;
  const tsr_gesdd_args_t args = {.dtype = dt,
                                 .jobz = !vectors                     ? 'N'
                                         : job == TESSERA_ALL_VECTORS ? 'A'
                                                                      : 'S',
                                 .m = (int)m,
                                 .n = (int)n,
                                 .threads = tsr_eig_cpu_workers(ctx)};
  int info[2] = {0, 0};
  void *ptr[5] = {a, s, vectors ? u : NULL, vectors ? vt : NULL, info};
  const size_t ld[5] = {(size_t)lda, (size_t)(k > 0 ? k : 1), vectors ? (size_t)ldu : 1,
                        vectors ? (size_t)ldvt : 1, 2};
  const int rc =
      tsr_run_inline(ctx, TESSERA_HOST_NODE, NULL, &tsr_kernel_gesdd, (void *)&args, 5, ptr, ld);
  return tsr_gesdd_status(ctx, f, rc, info);
}

/* Every vector from the economy ones: the columns k .. big - 1 of U (tall, x = u, big = m) or
 * the rows k .. big - 1 of Vᴴ (wide, x = vt, big = n), x's first k columns (rows) holding the
 * economy vectors E. W = E (wide: Eᴴ) = Q R by geqrf; the complement is Q's last big - k
 * columns, Q [0; I] (wide: their conjugate transpose [0 I] Qᴴ, Q from the right): orthonormal
 * and orthogonal to E's span whatever E's rank. On a context over processes x is process 0's. */
static int complete(tessera_context_t *ctx, tessera_dtype_t dt, bool wide, int64_t big, int64_t k,
                    void *x, int64_t ldx) {
  const size_t es = tessera_dtype_size(dt);
  const bool holds = tsr_lapack_holds_arrays(ctx);
  char *w = holds ? malloc((size_t)(big * k) * es) : NULL;
  char *tau = holds ? malloc((size_t)k * es) : NULL;
  char *rest = holds ? (char *)x + (size_t)(wide ? k : k * ldx) * es : NULL;
  int rc = holds && (!w || !tau) ? tsr_error(ctx, TESSERA_ERR_NOMEM,
                                             "gesvd: out of memory for the vectors' completion")
                                 : 0;
  if (!rc && holds && wide) {
    tsr_transpose_args_t t = {.dtype = dt, .m = (int)k, .n = (int)big};
    rc = tsr_run_inline(ctx, TESSERA_HOST_NODE, NULL, &tsr_kernel_transpose, &t, 2,
                        (void *const[]){x, w}, (const size_t[]){(size_t)ldx, (size_t)big});
  } else if (!rc && holds) {
    for (int64_t j = 0; j < k; j++)
      memcpy(w + (size_t)(j * big) * es, (char *)x + (size_t)(j * ldx) * es, (size_t)big * es);
  }
  if (!rc && holds) { /* [0; I] (wide: [0 I]) */
    tsr_identity_args_t id = {.dtype = dt,
                              .m = (int)(wide ? big - k : big),
                              .n = (int)(wide ? big : big - k),
                              .d = (int)(wide ? k : -k)};
    rc = tsr_run_inline(ctx, TESSERA_HOST_NODE, NULL, &tsr_kernel_identity, &id, 1,
                        (void *const[]){rest}, (const size_t[]){(size_t)ldx});
  }
  if (tsr_context_flow(ctx)->distributed) rc = tsr_lapack_agreed(ctx, rc);
  if (!rc && k > 0) rc = tessera_geqrf(ctx, dt, big, k, w, big, tau);
  if (!rc && k > 0 && wide)
    rc = tessera_unmqr(ctx, TESSERA_RIGHT, TESSERA_CONJTRANS, dt, big - k, big, k, w, big, tau,
                       rest, ldx);
  else if (!rc && k > 0)
    rc = tessera_unmqr(ctx, TESSERA_LEFT, TESSERA_NOTRANS, dt, big, big - k, k, w, big, tau, rest,
                       ldx);
  free(w), free(tau);
  return rc;
}

/* The tile-level call by LAPACK's method: A's tiles (and U's, VT's) through host copies. */
static int lapack_tiles(tessera_job_t job, tessera_matrix_t *A, void *s, tessera_matrix_t *U,
                        tessera_matrix_t *VT) {
  tessera_context_t *ctx = A->ctx;
  const int64_t m = A->m, n = A->n, k = m < n ? m : n;
  const size_t es = tessera_dtype_size(A->dtype);
  const bool vectors = job == TESSERA_VECTORS;
  char *a = malloc((size_t)(m * n) * es);
  char *u = vectors ? malloc((size_t)(m * k) * es) : NULL;
  char *vt = vectors ? malloc((size_t)(k * n) * es) : NULL;
  int rc = !a || (vectors && (!u || !vt))
               ? tsr_error(ctx, TESSERA_ERR_NOMEM, "tile_gesvd: out of memory for a copy of A")
               : tessera_matrix_export(A, a, m);
  if (!rc) rc = lapack_arrays(ctx, "tile_gesvd", job, A->dtype, m, n, a, m, s, u, m, vt, k);
  if (!rc && vectors) rc = tessera_matrix_import(U, u, m);
  if (!rc && vectors) rc = tessera_matrix_import(VT, vt, k);
  free(a), free(u), free(vt);
  return rc;
}

static int drop(tessera_matrix_t *M, int rc) {
  const int d = M ? tsr_matrix_drop(M) : 0;
  return rc ? rc : d;
}

/* The tall case (A m x n, m >= n): s (descending, the dtype's real type), U (m x n) and VT
 * (n x n) unless NULL; A becomes U_p, and U where U is A (formed beside it, then copied in). */
static int tall(tessera_job_t job, tessera_matrix_t *A, void *s, tessera_matrix_t *U,
                tessera_matrix_t *VT) {
  const int64_t n = A->n;
  tessera_matrix_t *H = NULL, *V = NULL, *UA = NULL;
  int rc = tsr_matrix_like(A, n, n, false, &H);
  if (!rc && U == A) rc = tsr_matrix_like(A, A->m, n, false, &UA);
  if (!rc) rc = tsr_matrix_like(A, n, n, false, &V);
  if (!rc) rc = tsr_pxgepolar(A, H, NULL);
  if (!rc) rc = tsr_tile_finish(V, tsr_pxconvert(0, H, -1, V)); /* -H: descending */
  rc = drop(H, rc);
  if (!rc) rc = tessera_tile_syevd(job, TESSERA_LOWER, V, s);
  const tsr_scalar_t one = {1, 0}, zero = {0, 0};
  if (!rc && U) rc = tsr_tile_finish(U, tsr_pxgemm('N', 'N', one, A, V, zero, UA ? UA : U));
  if (!rc && UA) rc = tsr_tile_finish(A, tsr_pxlacpy(UA, A));
  if (!rc && VT) rc = tsr_tile_finish(VT, tsr_pxtranspose(V, VT));
  rc = drop(UA, drop(V, rc));
  /* σ = -λ, H's rounding errors' negative eigenvalues as 0 */
  const bool single = tsr_dtype_single(A->dtype);
  for (int64_t i = 0; i < n && !rc; i++) {
    const double v = single ? -(double)((float *)s)[i] : -((double *)s)[i];
    const double sigma = v > 0 ? v : 0;
    if (single)
      ((float *)s)[i] = (float)sigma;
    else
      ((double *)s)[i] = sigma;
  }
  return rc;
}

/* The decomposition of A, tall or wide, within the call's scope. */
static int factor(tessera_job_t job, tessera_matrix_t *A, void *s, tessera_matrix_t *U,
                  tessera_matrix_t *VT) {
  const int64_t m = A->m, n = A->n;
  const bool vectors = U != NULL;
  if (m >= n) return tall(job, A, s, U, VT);
  /* Aᴴ = U' Σ V'ᴴ: A = V' Σ U'ᴴ, so U = V' (VT' transposed) and Vᴴ = U'ᴴ */
  tessera_matrix_t *At = NULL, *Ut = NULL, *Vt = NULL;
  int rc = tsr_matrix_like(A, n, m, false, &At);
  if (!rc) rc = tsr_tile_finish(At, tsr_pxtranspose(A, At));
  if (!rc && vectors) rc = tsr_matrix_like(A, n, m, false, &Ut);
  if (!rc && vectors) rc = tsr_matrix_like(A, m, m, false, &Vt);
  if (!rc) rc = tall(job, At, s, Ut, Vt);
  if (!rc && vectors) rc = tsr_tile_finish(U, tsr_pxtranspose(Vt, U));
  if (!rc && vectors) rc = tsr_tile_finish(VT, tsr_pxtranspose(Ut, VT));
  return drop(At, drop(Ut, drop(Vt, rc)));
}

int tessera_tile_gesvd(tessera_job_t job, tessera_matrix_t *A, void *s, tessera_matrix_t *U,
                       tessera_matrix_t *VT) {
  const char *f = "tile_gesvd";
  if (!A) return tsr_error(NULL, -2, "%s: argument 2 (A) is NULL", f);
  tessera_context_t *ctx = A->ctx;
  const int64_t m = A->m, n = A->n, k = m < n ? m : n;
  const bool vectors = job == TESSERA_VECTORS;
  int rc = job == TESSERA_ALL_VECTORS
               ? tsr_error(ctx, -1,
                           "%s: every vector (ALL_VECTORS) is tessera_gesvd's; at tile level U "
                           "and VT hold the economy vectors (VECTORS)",
                           f)
               : tsr_arg_flag(ctx, f, 1, job, "NV");
  const tessera_matrix_t *ops[3] = {A, vectors ? U : NULL, vectors ? VT : NULL};
  if (!rc && vectors && (!U || !VT))
    rc = tsr_error(ctx, !U ? -4 : -5, "%s: with vectors, U and VT are needed", f);
  if (!rc) rc = tsr_check_tiling(ops, (const int[]){2, 4, 5}, vectors ? 3 : 1, f);
  if (!rc && vectors && (U->m != m || U->n != k))
    rc = tsr_error(ctx, -4, "%s: U is %lld x %lld; it must be %lld x %lld (m x min(m, n))", f,
                   (long long)U->m, (long long)U->n, (long long)m, (long long)k);
  if (!rc && vectors && (VT->m != k || VT->n != n))
    rc = tsr_error(ctx, -5, "%s: VT is %lld x %lld; it must be %lld x %lld (min(m, n) x n)", f,
                   (long long)VT->m, (long long)VT->n, (long long)k, (long long)n);
  if (!rc && vectors && (VT == A || VT == U))
    rc = tsr_error(ctx, -5, "%s: VT must be a matrix of its own (U may be A itself)", f);
  if (!rc && vectors && (U->comm != A->comm || VT->comm != A->comm))
    rc = tsr_error(ctx, -4, "%s: U, VT and A are not of one communicator", f);
  if (!rc && k > 0 && !s) rc = tsr_error(ctx, -3, "%s: argument 3 (s) is NULL", f);
  if (!rc && m + n > INT32_MAX)
    rc = tsr_error(ctx, -2, "%s: m + n = %lld is beyond the QR steps' 2^31 - 1", f,
                   (long long)(m + n));
  if (!rc) rc = tsr_check_stored(A, 0, 2, f);
  rc = tsr_matrix_agree(A, rc);
  if (rc || k == 0) return rc;
  const bool one = !A->flow->distributed,
             lapack = one && tsr_svd_lapack(ctx, false, job, A->dtype, m, n);
  const double t0 = tsr_now();
  if (lapack) {
    rc = lapack_tiles(job, A, s, vectors ? U : NULL, vectors ? VT : NULL);
    if (!rc) tsr_svd_measured(ctx, false, true, job, A->dtype, m, n, tsr_now() - t0);
    return rc;
  }
  /* within the accelerators that hold the polar decomposition, its copies and products: a CPU
   * worker taking a transpose or U's product would move whole tiles to the host and back (the
   * eigensolver chooses its own devices) */
  const tessera_scope_t outer = tessera_get_scope(ctx);
  tessera_scope_t where;
  if (tsr_polar_gpu(ctx, A->dtype, m > n ? m : n, k, &where)) rc = tessera_set_scope(ctx, where);
  if (!rc) rc = factor(job, A, s, vectors ? U : NULL, vectors ? VT : NULL);
  const int back = tessera_set_scope(ctx, outer);
  if (!rc && !back && one) tsr_svd_measured(ctx, false, false, job, A->dtype, m, n, tsr_now() - t0);
  return tsr_matrix_agree(A, rc ? rc : back);
}

int tessera_gesvd(tessera_context_t *ctx, tessera_job_t job, tessera_dtype_t dtype, int64_t m,
                  int64_t n, void *a, int64_t lda, void *s, void *u, int64_t ldu, void *vt,
                  int64_t ldvt) {
  if (!ctx) return -1;
  const char *f = "gesvd";
  const int64_t k = m < n ? m : n;
  const bool vectors = job != TESSERA_VALUES, all = job == TESSERA_ALL_VECTORS;
  int rc = tsr_arg_flag(ctx, f, 2, job, "NVA");
  if (!rc) rc = tsr_arg_dtype(ctx, f, 3, dtype);
  if (!rc) rc = tsr_arg_dim(ctx, f, 4, m);
  if (!rc) rc = tsr_arg_dim(ctx, f, 5, n);
  if (!rc) rc = tsr_arg_ptr(ctx, f, 6, a, m, n);
  if (!rc) rc = tsr_arg_ld(ctx, f, 7, lda, m);
  if (!rc && vectors) rc = tsr_arg_ptr(ctx, f, 9, u, m, all ? m : k);
  if (!rc && vectors) rc = tsr_arg_ld(ctx, f, 10, ldu, m);
  if (!rc && vectors) rc = tsr_arg_ptr(ctx, f, 11, vt, all ? n : k, n);
  if (!rc && vectors) rc = tsr_arg_ld(ctx, f, 12, ldvt, all ? n : k);
  if (!rc && k > 0 && !s && tsr_lapack_holds_arrays(ctx))
    rc = tsr_error(ctx, -8, "%s: argument 8 (s) is NULL", f);
  /* LAPACK's method on the caller's arrays themselves (one process, CPUs) */
  if (!rc && k > 0 && !tsr_context_flow(ctx)->distributed &&
      tsr_svd_lapack(ctx, false, job, dtype, m, n)) {
    const double t0 = tsr_now();
    rc = lapack_arrays(ctx, f, job, dtype, m, n, a, lda, s, u, ldu, vt, ldvt);
    if (!rc) tsr_svd_measured(ctx, false, true, job, dtype, m, n, tsr_now() - t0);
    return rc;
  }
  tsr_views_t vs;
  rc = tsr_views_begin(&vs, ctx, f, rc, 4, (const int64_t[]){job, dtype, m, n},
                       (const int[]){2, 3, 4, 5}, tessera_tile_for_polar(ctx, m > n ? m : n, k));
  /* s on every process: the caller's where given (process 0 gives it), else this call's */
  void *sv = s;
  if (!rc && k > 0 && !s) sv = calloc((size_t)k, tsr_dtype_real_size(dtype));
  if (!rc && k > 0 && !sv) rc = tsr_error(ctx, TESSERA_ERR_NOMEM, "%s: out of memory for s", f);
  if (vs.dist) rc = tsr_lapack_agreed(ctx, rc);
  /* the economy vectors: U's first k columns, Vᴴ's first k rows */
  if (!rc && k > 0) rc = tsr_views_add(&vs, dtype, m, n, a, lda, 0, TSR_IN | TSR_OUT);
  if (!rc && k > 0 && vectors) rc = tsr_views_add(&vs, dtype, m, k, u, ldu, 0, TSR_OUT);
  if (!rc && k > 0 && vectors) rc = tsr_views_add(&vs, dtype, k, n, vt, ldvt, 0, TSR_OUT);
  if (!rc && k > 0)
    rc = tessera_tile_gesvd(vectors ? TESSERA_VECTORS : TESSERA_VALUES, vs.v[0], sv,
                            vectors ? vs.v[1] : NULL, vectors ? vs.v[2] : NULL);
  if (sv != s) free(sv);
  rc = tsr_views_release(&vs, rc);
  if (vs.dist && all && m != n) rc = tsr_lapack_agreed(ctx, rc);
  if (!rc && all && m != n)
    rc = complete(ctx, dtype, m<n, m> n ? m : n, k, m > n ? u : vt, m > n ? ldu : ldvt);
  return rc;
}
