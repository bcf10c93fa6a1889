/* The Hermitian eigensolver (syevd / heevd) in two stages, a driver of the stage loops of
 * loops/eig_stages.c (loops/eig_stages.h) and loops/stedc.c:
 *
 *   1. A (its triangle, made the lower one of a working copy by eig_prepare tasks, scaled as
 *      LAPACK scales it) to a band of nb subdiagonals (loops/he2hb.c: tile tasks, any device;
 *      tiles of nb on CPUs, wider with accelerators: loops/policy.c);
 *   2. the band to the real tridiagonal T by bulge chasing, a pipeline of tasks of a few steps
 *      on the CPU workers (loops/hb2st.c; inline on the calling thread in a context without
 *      them), then T's eigenvalues (and vectors): with vectors on a context with accelerators
 *      and CPU workers, the divide and conquer as tasks (loops/stedc.c), else LAPACK's stedc /
 * sterf, a host kernel run on the calling thread (runtime/inline.c);
 *   3. with vectors, T's eigenvectors Z carried back: Q2 Z by hb2st_apply tasks on column
 *      panels (CPU or GPU kernels), then Q1 (Q2 Z) by the QR's unmqr tasks on the first stage's
 *      reflectors (rows nb .. n - 1).
 *
 * tsr_eig_solve runs them on this process's array, unless the policy runs the call in one stage
 * on one device (eig_one.c: LAPACK's or cuSOLVER's syevd; loops/policy.c decides from each
 * method's measured seconds, which both record). tsr_eig_band_solve runs stages 2 and 3 on a
 * band made elsewhere, and with vectors stops before the back-transformations and exports Q2's
 * reflectors, which the form over processes applies to E's dealt columns (eig_dist.c). The front
 * doors are eig_api.c's. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/hb2st.h"
#include "kernels/cpu/laed.h"
#include "kernels/kernels.h"
#include "linalg/front/front.h"
#include "linalg/loops/eig_stages.h"
#include "linalg/loops/loops.h"
#include "linalg/loops/tasks.h"
#include "runtime/context.h"
#include "tessera/linalg.h"

/* LAPACK's scaling of heevd: the factor bringing the largest modulus amax into
 * [sqrt(safmin / eps), sqrt(eps / safmin)] of the dtype's real type, else 1. */
static double scaling(tessera_dtype_t dt, double amax) {
  const bool single = tsr_dtype_single(dt);
  const double safmin = single ? FLT_MIN : DBL_MIN, eps = single ? FLT_EPSILON : DBL_EPSILON;
  const double rmin = sqrt(safmin / eps), rmax = sqrt(eps / safmin);
  if (amax > 0 && amax < rmin) return rmin / amax;
  if (amax > rmax) return rmax / amax;
  return 1;
}

/* The lower triangle of h (n x n, ldh) times s. */
static void scale_lower(tessera_dtype_t dt, int64_t n, void *h, int64_t ldh, double s) {
  const size_t es = tessera_dtype_size(dt);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = j; i < n; i++) {
      char *p = (char *)h + tsr_eig_at(i, j, ldh) * es;
      const tsr_scalar_t v = tsr_scalar_load(dt, p, 0);
      tsr_scalar_store(dt, p, (tsr_scalar_t){s * v.re, s * v.im});
    }
}

/* w (n entries of the dtype's real type) = x / s. */
static void store_values(tessera_dtype_t dt, int64_t n, const double *x, double s, void *w) {
  for (int64_t i = 0; i < n; i++) tsr_eig_put_real(dt, w, i, x[i] / s);
}

/* E, the merges' q where they left it on device node b->enode, into an array of that device's
 * own (b->eh), which processes can read from there; q dropped without a copy home. Where the
 * device's pool has no room for that array, q goes home into b->h (its host memory) instead. */
static int keep_on_device(tessera_context_t *ctx, int64_t n, tessera_data_t *q, tsr_eig_work_t *b) {
  const int tag[3] = {0, 0, 0};
  if (tessera_data_create_on(ctx, b->enode, (size_t)n, (size_t)n, sizeof(double), &b->eh)) {
    b->eh = NULL; /* no room beside q on the device: E home into b->h, dealt from there */
    return tessera_data_release(ctx, q);
  }
  int rc = tsr_task_lacpy_block(TESSERA_F64, tsr_context_local_flow(ctx), q, 0, 0, b->eh, 0,
                                TESSERA_W, (int)n, (int)n, tag, 0);
  const int dropped = tsr_data_drop(ctx, q);
  return rc ? rc : dropped;
}

/* E, the merges' Q in its parts of rows where they left them (on the call's accelerators), as
 * the back-transformations' column panels over those accelerators (b->E, a view of b->h whose
 * tiles copy tasks write from each part where it is: the first part's writes a tile, the
 * others' add their rows to it, the last where panel j's part j mod count is, so that the
 * panels end spread over the accelerators); the parts dropped without a copy home: E
 * goes home once, after Q1. */
static int panels_on_devices(tessera_context_t *ctx, int64_t n, const tsr_stedc_parts_t *q,
                             tsr_eig_work_t *b) {
  int rc = tessera_matrix_view(ctx, TESSERA_F64, n, n, n, tsr_eig_panel_columns(true, 0, n), b->h,
                               b->ldh, &b->E);
  for (int64_t j = 0; b->E && j < b->E->nt && !rc; j++)
    for (int i = 0; i < q->count && !rc; i++) {
      const int p = (int)((j + 1 + i) % q->count), tag[3] = {p, (int)j, 0};
      rc = tsr_task_lacpy_block(TESSERA_F64, b->E->flow, q->part[p], 0, (int)(j * b->E->nb),
                                tsr_tile(b->E, 0, j), (int)q->start[p], i ? TESSERA_RW : TESSERA_W,
                                (int)q->rows[p], tsr_tile_n(b->E, j), tag, 0);
    }
  for (int p = 0; p < q->count; p++) {
    const int dropped = tsr_data_drop(ctx, q->part[p]);
    if (!rc) rc = dropped;
  }
  return rc;
}

/* Stages 2 and 3 on the band: T, its eigenvalues into b->d (ascending), with vectors the
 * eigenvectors of the band into b->h. Returns 0, stedc's info > 0, or a negative status. */
static int solve_band(tessera_context_t *ctx, tessera_dtype_t dt, tessera_job_t job, int64_t n,
                      int nb, tsr_eig_work_t *b) {
  const int workers = b->workers;
  tsr_hb2st_layout_t lay;
  const size_t es = tessera_dtype_size(dt);
  if (tsr_hb2st_layout((int)n, nb, &lay))
    return tsr_error(ctx, TESSERA_ERR_STATE, "syevd: no bulge chasing for n = %lld, kd = %d",
                     (long long)n, nb);
  const bool on_gpu = b->gpu; /* gpu_chase's reflectors stay there */
  size_t vr, vc, tr, tc;
  tsr_eig_array_shape(on_gpu ? 1 : lay.nv + 1, es, &vr, &vc);
  tsr_eig_array_shape(on_gpu ? 1 : lay.ntau + 1, es, &tr, &tc);
  b->v = calloc(vr * vc, es);
  b->tau = calloc(tr * tc, es);
  /* T's eigenvectors straight into E where the dtype is the real double, else converted */
  const bool direct = dt == TESSERA_F64, all = b->lo == 0 && b->cols == n;
  if (job == TESSERA_VECTORS && !direct) b->z = malloc((size_t)(n * n) * sizeof *b->z);
  double *z = direct ? b->h : b->z;
  const int64_t ldz = direct ? b->ldh : n;
  if (!b->v || !b->tau || (job == TESSERA_VECTORS && !z))
    return tsr_error(ctx, TESSERA_ERR_NOMEM, "syevd: out of memory for the reflectors of n = %lld",
                     (long long)n);
  int rc = tsr_eig_to_tridiagonal(ctx, dt, n, nb, b, &lay, workers);
  if (rc) return rc < 0 ? rc : tsr_error(ctx, TESSERA_ERR_KERNEL, "syevd: bulge chasing failed");
  const int64_t leaf = tsr_eig_stedc_leaf(job, b->gpu, workers, n);
  if (leaf && job == TESSERA_VECTORS) {
    /* f64: E the merges' Q, which stays where the merges ran — no copy home and back before Q2
     * and Q1. On one accelerator E is one tile from the merges to Q1; on several, Q's rows in
     * parts over them, the merges of each part's rows on its own, and E's column panels copied
     * from the parts for Q2 and Q1 over them; with the back-transformations elsewhere, an array
     * of that device's own, which they deal. For some of Q's columns alone (a range), Q whole
     * on the host, its columns taken from there: neither parts nor a kept tile */
    tessera_data_t *qh = NULL;
    const int nodes = direct && all ? tessera_scope_nodes(ctx, b->scope, &b->enode, 1) : 0;
    if (b->gpu && nodes > 1 && !b->defer) { /* Q's rows in parts over the accelerators */
      tsr_stedc_parts_t parts;
      rc = tsr_stedc_dc_parts(ctx, n, b->d, b->e, z, ldz, leaf, &parts);
      if (!rc) rc = panels_on_devices(ctx, n, &parts, b);
    } else {
      if (nodes == 1 && !b->defer) {
        rc = tessera_matrix_view(ctx, dt, n, n, n, n, b->h, b->ldh, &b->E);
        if (rc) return rc;
        qh = tessera_matrix_tile(b->E, 0, 0);
      } else if (b->gpu && nodes == 1 && b->defer) {
        rc = tessera_data_register(ctx, TESSERA_HOST_NODE, b->h, (size_t)n, (size_t)n,
                                   (size_t)b->ldh, sizeof(double), &qh);
        if (rc) return rc;
      }
      rc = tsr_stedc_dc(ctx, n, b->d, b->e, z, ldz, leaf, qh);
      if (qh && !b->E) {
        const int kept = rc ? tsr_data_drop(ctx, qh) : keep_on_device(ctx, n, qh, b);
        if (!rc) rc = kept;
      }
    }
    if (rc > 0) return tsr_error(ctx, rc, "syevd: the tridiagonal eigensolver failed: info %d", rc);
  } else if (leaf) {
    rc = tsr_stedc_values(ctx, n, b->d, b->e, leaf);
    if (rc > 0) return tsr_error(ctx, rc, "syevd: the tridiagonal eigensolver failed: info %d", rc);
  } else {
    rc = tsr_eig_stedc_inline(ctx, job, n, b, z, ldz, workers);
  }
  if (rc || job != TESSERA_VECTORS) return rc;
  if (direct && !all) tsr_eig_first_columns(dt, n, b->h, b->ldh, b->lo, b->cols);
  for (int64_t j = 0; j < b->cols && !direct; j++) /* E = Z's columns in the dtype, then Q2 E */
    for (int64_t i = 0; i < n; i++)
      tsr_scalar_store(dt, (char *)b->h + tsr_eig_at(i, j, b->ldh) * es,
                       (tsr_scalar_t){b->z[tsr_eig_at(i, b->lo + j, n)], 0});
  return b->defer ? 0 : tsr_eig_back_tridiagonal(ctx, dt, n, b->cols, nb, b, &lay, workers);
}

/* Q2's reflectors and E into out, where they are (their handles taken from b). */
static int export_back(int64_t n, int nb, tsr_eig_work_t *b, tsr_eig_back_t *out) {
  tsr_hb2st_layout_t lay;
  if (tsr_hb2st_layout((int)n, nb, &lay)) return TESSERA_ERR_STATE;
  out->nb = nb, out->nv = lay.nv, out->ntau = lay.ntau;
  if (b->vh) {
    out->hv = b->vh, out->htau = b->tauh, out->node = b->vnode;
    out->v = tessera_data_ptr(b->vh), out->tau = tessera_data_ptr(b->tauh);
    b->vh = b->tauh = NULL;
  } else {
    out->v = b->v, out->tau = b->tau, out->node = TESSERA_HOST_NODE;
    b->v = b->tau = NULL;
  }
  if (b->eh) out->he = b->eh, out->e = tessera_data_ptr(b->eh), out->e_node = b->enode;
  b->eh = NULL;
  return 0;
}

void tsr_eig_back_free(tessera_context_t *ctx, tsr_eig_back_t *r) {
  if (r->hv || r->htau) {
    if (r->hv) (void)tessera_data_release(ctx, r->hv);
    if (r->htau) (void)tessera_data_release(ctx, r->htau);
  } else {
    free(r->v), free(r->tau);
  }
  if (r->he) (void)tessera_data_release(ctx, r->he);
  *r = (tsr_eig_back_t){0};
}

int64_t tsr_eig_working_copy(tessera_context_t *ctx, const char *f, tessera_job_t job,
                             tessera_uplo_t uplo, tessera_dtype_t dt, int64_t n, void *a,
                             int64_t lda, void *w, void *h, int64_t ldh, double *s) {
  double amax = 0;
  const int64_t bad =
      tsr_eig_prepare(ctx, dt, (char)uplo, n, a, lda, h, ldh, tsr_eig_cpu_workers(ctx), &amax);
  if (bad < 0) return bad;
  if (bad) {
    tsr_eig_fill_nan(dt, job, (char)uplo, n, a, lda, w);
    return tsr_error(ctx, (int)bad, "%s: A holds a NaN or an infinity in column %lld", f,
                     (long long)bad);
  }
  *s = scaling(dt, amax);
  if (*s != 1) scale_lower(dt, n, h, ldh, *s);
  return 0;
}

int tsr_eig_band_solve(tessera_context_t *ctx, tessera_job_t job, tessera_dtype_t dt, int64_t n,
                       int nb, void *ab, double s, void *a, int64_t lda, void *w,
                       tsr_eig_back_t *out) {
  tessera_scope_t scope;
  const bool gpu = tsr_eig_gpu(ctx, job, dt, n, &scope);
  tsr_eig_work_t b = {.gpu = gpu,
                      .scope = scope,
                      .workers = tsr_eig_cpu_workers(ctx),
                      .in_place = true,
                      .defer = job == TESSERA_VECTORS,
                      .cols = n,
                      .h = a,
                      .ldh = lda,
                      .ab = ab,
                      .d = calloc((size_t)n, sizeof(double)),
                      .e = calloc((size_t)n, sizeof(double))};
  if (!b.d || !b.e) {
    tsr_eig_work_free(ctx, &b);
    return tsr_error(ctx, TESSERA_ERR_NOMEM, "syevd: out of memory for T (n = %lld)", (long long)n);
  }
  const tessera_scope_t outer = tessera_get_scope(ctx);
  int rc = b.gpu ? tessera_set_scope(ctx, b.scope) : 0;
  if (!rc) rc = solve_band(ctx, dt, job, n, nb, &b);
  if (!rc && b.defer) rc = export_back(n, nb, &b, out);
  const int freed = (b.vh ? tessera_data_release(ctx, b.vh) : 0) |
                    (b.tauh ? tessera_data_release(ctx, b.tauh) : 0);
  if (!rc) rc = freed;
  (void)tessera_set_scope(ctx, outer);
  if (!rc) store_values(dt, n, b.d, s, w);
  tsr_eig_work_free(ctx, &b);
  return rc;
}

int tsr_eig_solve(tessera_context_t *ctx, const char *f, tessera_job_t job, tessera_uplo_t uplo,
                  tessera_dtype_t dt, int64_t n, void *a, int64_t lda, void *w) {
  return tsr_eig_solve_range(ctx, f, job, uplo, dt, n, a, lda, w, 0, n);
}

int tsr_eig_solve_range(tessera_context_t *ctx, const char *f, tessera_job_t job,
                        tessera_uplo_t uplo, tessera_dtype_t dt, int64_t n, void *a, int64_t lda,
                        void *w, int64_t lo, int64_t k) {
  tessera_scope_t where;
  size_t work = 0;
  if (tsr_eig_one_stage_range(ctx, job, dt, n, k, &where, &work))
    return tsr_eig_one_range(ctx, f, job, uplo, dt, n, a, lda, w, where, work, lo, k);
  const double t0 = tsr_now();
  const size_t es = tessera_dtype_size(dt);
  tessera_scope_t scope;
  const bool gpu = tsr_eig_gpu(ctx, job, dt, n, &scope);
  const int nb = tsr_eig_band(ctx, job, gpu, n);
  /* the GPU forms work in A itself, with vectors (its eigenvectors overwrite it: no n² copy in
   * and out) and values alone from its lower triangle (which LAPACK's destroy; the band
   * reduction keeps A's other triangle off the devices: eig_stages.h's `values`). From an upper
   * triangle the lower must stay as it was: a working copy. The CPU forms' working copy has
   * columns not a multiple of 32 elements apart: column strides of a power of two put a block's
   * rows of every column in the same cache sets */
  const bool in_place = gpu && (job == TESSERA_VECTORS || uplo == TESSERA_LOWER);
  const int64_t ldh = in_place ? lda : n % 32 ? n : n + 8;
  tsr_eig_work_t b = {.gpu = gpu,
                      .scope = scope,
                      .workers = tsr_eig_cpu_workers(ctx),
                      .in_place = in_place,
                      .values = job != TESSERA_VECTORS,
                      .lo = lo,
                      .cols = k,
                      .h = in_place ? a : malloc((size_t)(ldh * n) * es),
                      .ldh = ldh,
                      .ab = calloc((size_t)(n * (nb + 1)), es),
                      .d = calloc((size_t)n, sizeof(double)),
                      .e = calloc((size_t)n, sizeof(double))};
  if (!b.h || !b.ab || !b.d || !b.e) {
    tsr_eig_work_free(ctx, &b);
    return tsr_error(ctx, TESSERA_ERR_NOMEM, "%s: out of memory for a copy of A (n = %lld)", f,
                     (long long)n);
  }
  /* the GPU forms copy A to the accelerator (with vectors, and back, in blocks several times):
   * at the link's speed only from pinned memory. A working copy, freshly allocated, is not
   * pinned: its pages would be made for the pinning (docs/decisions.md) */
  b.pinned = in_place && tsr_host_pin(ctx, b.h, (size_t)(ldh * (n - 1) + n) * es);
  double s = 1;
  const int64_t bad = tsr_eig_working_copy(ctx, f, job, uplo, dt, n, a, lda, w, b.h, b.ldh, &s);
  if (bad) {
    tsr_eig_work_free(ctx, &b);
    return (int)bad;
  }
  /* the GPU forms' stages within the call's accelerators: a CPU worker taking one of the tile
   * stages' gemms (the band reduction, Q1) would move its tiles to the host and back. The host
   * stages' kernels run on the CPU workers whatever the scope. */
  const tessera_scope_t outer = tessera_get_scope(ctx);
  tsr_he2hb_t H = {0};
  int rc = b.gpu ? tessera_set_scope(ctx, b.scope) : 0;
  if (!rc) rc = tsr_eig_reduce_to_band(ctx, dt, n, nb, &b, &H);
  if (!rc) rc = solve_band(ctx, dt, job, n, nb, &b);
  const int freed = (b.vh ? tessera_data_release(ctx, b.vh) : 0) |
                    (b.tauh ? tessera_data_release(ctx, b.tauh) : 0);
  if (!rc) rc = freed;
  if (!rc && job == TESSERA_VECTORS) rc = tsr_eig_back_band(ctx, dt, n, k, nb, &b, &H);
  (void)tessera_set_scope(ctx, outer);
  tsr_he2hb_destroy(&H);
  if (!rc) {
    store_values(dt, n, b.d, s, w);
    for (int64_t j = 0; j < k && job == TESSERA_VECTORS && !b.in_place; j++)
      memcpy((char *)a + tsr_eig_at(0, j, lda) * es, (char *)b.h + tsr_eig_at(0, j, b.ldh) * es,
             (size_t)n * es);
  }
  tsr_eig_work_free(ctx, &b);
  if (!rc) tsr_eig_measured_range(ctx, false, where, job, dt, n, k, tsr_now() - t0);
  return rc;
}
