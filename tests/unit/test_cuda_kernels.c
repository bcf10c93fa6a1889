/* The CUDA tile kernels (tsr_cuda_*) against their CPU twins (tsr_cpu_*), called directly with a
 * stream, library handles and a scratch made the way a CUDA worker makes them (no context, no
 * runtime): potrf, trsm, syrk / herk, gemm, lacpy, trtri, lauum and trmm for all four dtypes
 * and every flag combination, on tiles around 70 with leading dimensions above the rows; the
 * result tile (its triangle where the kernel writes one) and the padding rows must agree within
 * 1e-4 (f32, c64) or 1e-10 (f64, c128) relative to the largest CPU entry. potrf and trtri
 * report LAPACK's info through tessera_exec_t.async (non-SPD, NaN and zero pivots, with an
 * offset); invalid arguments fail before anything is enqueued. Skipped without a GPU.
 */
/* ctest-label: gpu */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <tessera/tessera.h>

#include "../test_common.h"
#include "kernels/kernels.h"

/* ---------------------------------------------------------------- the worker's environment */

static struct {
  int ok; /* a GPU is there and everything below was made */
  cudaStream_t stream;
  tessera_cuda_scratch_t scratch;
  tessera_async_status_t *async; /* pinned */
} g;

static int group_setup(void **state) {
  (void)state;
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
    (void)cudaGetLastError();
    return 0; /* every test skips */
  }
  cublasHandle_t blas = NULL;
  cusolverDnHandle_t solver = NULL;
  tessera_cuda_scratch_t *s = &g.scratch;
  s->workspace_bytes = (size_t)64 << 20;
  s->host_workspace_bytes = (size_t)4 << 20;
  if (cudaSetDevice(0) != cudaSuccess ||
      cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking) != cudaSuccess ||
      cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS ||
      cublasSetStream(blas, g.stream) != CUBLAS_STATUS_SUCCESS ||
      cusolverDnCreate(&solver) != CUSOLVER_STATUS_SUCCESS ||
      cusolverDnSetStream(solver, g.stream) != CUSOLVER_STATUS_SUCCESS ||
      cudaMalloc(&s->workspace, s->workspace_bytes) != cudaSuccess ||
      cudaHostAlloc(&s->host_workspace, s->host_workspace_bytes, cudaHostAllocDefault) !=
          cudaSuccess ||
      cudaMalloc((void **)&s->dev_info, sizeof(int)) != cudaSuccess ||
      cudaHostAlloc((void **)&g.async, sizeof *g.async, cudaHostAllocDefault) != cudaSuccess) {
    fprintf(stderr, "cuda setup failed: %s\n", cudaGetErrorString(cudaGetLastError()));
    return -1;
  }
  s->cublas = blas;
  s->cusolver = solver;
  g.ok = 1;
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  if (!g.ok) return 0;
  cudaFreeHost(g.async);
  cudaFree(g.scratch.dev_info);
  cudaFreeHost(g.scratch.host_workspace);
  cudaFree(g.scratch.workspace);
  cusolverDnDestroy(g.scratch.cusolver);
  cublasDestroy(g.scratch.cublas);
  cudaStreamDestroy(g.stream);
  return 0;
}

#define NEED_GPU()                                                                                 \
  do {                                                                                             \
    if (!g.ok) skip();                                                                             \
  } while (0)

/* ---------------------------------------------------------------- host tiles of any dtype */

static const tessera_dtype_t dtypes[] = {TESSERA_F32, TESSERA_F64, TESSERA_C64, TESSERA_C128};

static int is_single(tessera_dtype_t dt) {
  return dt == TESSERA_F32 || dt == TESSERA_C64;
}

static double tolerance(tessera_dtype_t dt) {
  return is_single(dt) ? 1e-4 : 1e-10;
}

/* Element i of p: (re, im). */
static void el_get(tessera_dtype_t dt, const void *p, size_t i, double *re, double *im) {
  const float *f = p;
  const double *d = p;
  int c = tessera_dtype_is_complex(dt);
  *re = is_single(dt) ? f[c ? 2 * i : i] : d[c ? 2 * i : i];
  *im = !c ? 0.0 : is_single(dt) ? f[2 * i + 1] : d[2 * i + 1];
}

static void el_set(tessera_dtype_t dt, void *p, size_t i, double re, double im) {
  float *f = p;
  double *d = p;
  int c = tessera_dtype_is_complex(dt);
  if (is_single(dt)) {
    f[c ? 2 * i : i] = (float)re;
    if (c) f[2 * i + 1] = (float)im;
  } else {
    d[c ? 2 * i : i] = re;
    if (c) d[2 * i + 1] = im;
  }
}

/* A tile of a task: host data of ld x cols elements, `rows` of them meaningful. */
typedef struct {
  void *h;
  size_t ld;
  int rows, cols;
} tile_t;

static size_t tile_bytes(tessera_dtype_t dt, const tile_t *t) {
  return t->ld * (size_t)t->cols * tessera_dtype_size(dt);
}

/* A rows x cols tile with leading dimension rows + pad, uniform in [-1, 1) (both parts). */
static tile_t tile_random(tessera_dtype_t dt, int rows, int cols, int pad, tt_rng_t *r) {
  tile_t t = {NULL, (size_t)(rows + pad), rows, cols};
  t.h = malloc(tile_bytes(dt, &t));
  assert_non_null(t.h);
  for (size_t i = 0; i < t.ld * (size_t)cols; i++) el_set(dt, t.h, i, tt_uniform(r), tt_uniform(r));
  return t;
}

/* Scales the off-diagonal entries by 1/n and adds 2 to the real diagonal: every triangle is
 * then well conditioned, with a unit diagonal too. */
static void make_dominant(tessera_dtype_t dt, tile_t *t) {
  for (int j = 0; j < t->cols; j++)
    for (int i = 0; i < t->rows; i++) {
      double re, im;
      size_t k = (size_t)j * t->ld + (size_t)i;
      el_get(dt, t->h, k, &re, &im);
      if (i == j)
        el_set(dt, t->h, k, 2.0 + fabs(re), 0.0);
      else
        el_set(dt, t->h, k, re / t->rows, im / t->rows);
    }
}

/* Hermitian (symmetric when real) with the real diagonal n + |a_jj|: positive definite. */
static void make_hpd(tessera_dtype_t dt, tile_t *t) {
  for (int j = 0; j < t->cols; j++)
    for (int i = 0; i <= j; i++) {
      double re, im;
      el_get(dt, t->h, (size_t)j * t->ld + (size_t)i, &re, &im);
      if (i == j)
        el_set(dt, t->h, (size_t)j * t->ld + (size_t)i, t->rows + fabs(re), 0.0);
      else
        el_set(dt, t->h, (size_t)i * t->ld + (size_t)j, re, -im);
    }
}

/* ---------------------------------------------------------------- running both kernels */

typedef struct {
  int gpu; /* the GPU kernel's return, or its asynchronous status read as the runtime does */
  int cpu; /* the CPU kernel's return */
} outcome_t;

/* Runs `gpu` on device copies of the tiles and `cpu` on the host tiles (in place). When both
 * succeed, compares tile `out` (the `mask` triangle, 'L' or 'U', or all ld rows for 0) and
 * fails with `what` beyond the dtype's tolerance. */
static outcome_t run_both(tessera_kernel_fn gpu, tessera_kernel_fn cpu, void *args,
                          tessera_dtype_t dt, tile_t *t, int nt, int out, char mask,
                          const char *what) {
  tessera_exec_t ex = {.ndata = nt,
                       .kind = TESSERA_DEVICE_CUDA,
                       .stream = g.stream,
                       .scratch = &g.scratch,
                       .async = g.async};
  for (int b = 0; b < nt; b++) {
    assert_int_equal(cudaMalloc(&ex.ptr[b], tile_bytes(dt, &t[b])), cudaSuccess);
    assert_int_equal(cudaMemcpy(ex.ptr[b], t[b].h, tile_bytes(dt, &t[b]), cudaMemcpyHostToDevice),
                     cudaSuccess);
    ex.ld[b] = t[b].ld;
  }
  g.async->info = 0;
  g.async->offset = 0;
  outcome_t o = {gpu(&ex, args), 0};
  assert_int_equal(cudaStreamSynchronize(g.stream), cudaSuccess);
  if (o.gpu == 0 && g.async->info != 0)
    o.gpu = g.async->info > 0 ? (int)(g.async->offset + g.async->info) : TESSERA_ERR_KERNEL;
  void *dev_out = malloc(tile_bytes(dt, &t[out]));
  assert_non_null(dev_out);
  assert_int_equal(
      cudaMemcpy(dev_out, ex.ptr[out], tile_bytes(dt, &t[out]), cudaMemcpyDeviceToHost),
      cudaSuccess);
  for (int b = 0; b < nt; b++) cudaFree(ex.ptr[b]);

  tessera_exec_t hx = {.ndata = nt, .kind = TESSERA_DEVICE_CPU};
  for (int b = 0; b < nt; b++) hx.ptr[b] = t[b].h, hx.ld[b] = t[b].ld;
  o.cpu = cpu(&hx, args);

  if (o.gpu == 0 && o.cpu == 0) {
    double err = 0, big = 0;
    const tile_t *c = &t[out];
    for (int j = 0; j < c->cols; j++)
      for (size_t i = 0; i < c->ld; i++) {
        if ((mask == 'L' && i < (size_t)j) ||
            (mask == 'U' && (i > (size_t)j || i >= (size_t)c->rows)))
          continue;
        double gr, gi, cr, ci;
        el_get(dt, dev_out, (size_t)j * c->ld + i, &gr, &gi);
        el_get(dt, c->h, (size_t)j * c->ld + i, &cr, &ci);
        err = fmax(err, hypot(gr - cr, gi - ci));
        big = fmax(big, hypot(cr, ci));
      }
    double rel = err / (big > 0 ? big : 1);
    if (!(rel <= tolerance(dt)))
      fail_msg("%s %s: relative difference %g (tolerance %g)", what, tessera_dtype_name(dt), rel,
               tolerance(dt));
  }
  free(dev_out);
  return o;
}

static tsr_scalar_t scalar(double re, double im) {
  tsr_scalar_t s = {re, im};
  return s;
}

static void free_tiles(tile_t *t, int nt) {
  for (int b = 0; b < nt; b++) free(t[b].h);
}

/* ---------------------------------------------------------------- BLAS kernels */

static void gemm_matches_cpu(void **state) {
  (void)state;
  NEED_GPU();
  const int m = 70, n = 53, k = 37;
  for (int d = 0; d < 4; d++)
    for (int ta = 0; ta < 3; ta++)
      for (int tb = 0; tb < 3; tb++) {
        tessera_dtype_t dt = dtypes[d];
        tt_rng_t r = tt_rng((uint64_t)(100 * d + 10 * ta + tb));
        tile_t t[3] = {ta ? tile_random(dt, k, m, 3, &r) : tile_random(dt, m, k, 3, &r),
                       tb ? tile_random(dt, n, k, 5, &r) : tile_random(dt, k, n, 5, &r),
                       tile_random(dt, m, n, 7, &r)};
        tsr_gemm_args_t a = {dt, "NTC"[ta], "NTC"[tb],         m,
                             n,  k,         scalar(0.75, 0.5), scalar(-0.5, 0.25)};
        /* The kernel binds the handle to the task's stream, whatever it was bound to. */
        if (tb == 1) cublasSetStream(g.scratch.cublas, NULL);
        char what[32];
        snprintf(what, sizeof what, "gemm %c%c", a.transa, a.transb);
        outcome_t o = run_both(tsr_cuda_gemm, tsr_cpu_gemm, &a, dt, t, 3, 2, 0, what);
        assert_int_equal(o.gpu, 0);
        assert_int_equal(o.cpu, 0);
        free_tiles(t, 3);
      }
}

static void syrk_herk_match_cpu(void **state) {
  (void)state;
  NEED_GPU();
  const int n = 70, k = 37;
  for (int d = 0; d < 4; d++)
    for (int u = 0; u < 2; u++)
      for (int tr = 0; tr < 3; tr++)
        for (int herk = 0; herk < 2; herk++) {
          tessera_dtype_t dt = dtypes[d];
          tt_rng_t r = tt_rng((uint64_t)(1000 + 100 * d + 10 * u + 2 * tr + herk));
          tile_t t[2] = {tr ? tile_random(dt, k, n, 3, &r) : tile_random(dt, n, k, 3, &r),
                         tile_random(dt, n, n, 4, &r)};
          make_hpd(dt, &t[1]); /* a Hermitian C keeps herk's real diagonal meaningful */
          tsr_syrk_args_t a = {dt, "UL"[u], "NTC"[tr],         herk,
                               n,  k,       scalar(0.75, 0.5), scalar(-0.5, 0.25)};
          char what[32];
          snprintf(what, sizeof what, "%s %c%c", herk ? "herk" : "syrk", a.uplo, a.trans);
          outcome_t o = run_both(tsr_cuda_syrk, tsr_cpu_syrk, &a, dt, t, 2, 1, a.uplo, what);
          assert_int_equal(o.gpu, 0);
          assert_int_equal(o.cpu, 0);
          free_tiles(t, 2);
        }
}

/* trsm (solve) or trmm in all 24 flag combinations. */
static void check_triangular(int solve) {
  const int m = 70, n = 53;
  for (int d = 0; d < 4; d++)
    for (int combo = 0; combo < 24; combo++) {
      const int s = combo & 1, u = (combo >> 1) & 1, dg = (combo >> 2) & 1, tr = combo >> 3;
      tessera_dtype_t dt = dtypes[d];
      tt_rng_t r = tt_rng((uint64_t)(2000 + 100 * d + combo + 50 * solve));
      const int na = s ? n : m;
      tile_t t[2] = {tile_random(dt, na, na, 3, &r), tile_random(dt, m, n, 6, &r)};
      make_dominant(dt, &t[0]);
      char what[32];
      snprintf(what, sizeof what, "%s %c%c%c%c", solve ? "trsm" : "trmm", "LR"[s], "UL"[u],
               "NTC"[tr], "NU"[dg]);
      outcome_t o;
      if (solve) {
        tsr_trsm_args_t a = {dt, "LR"[s], "UL"[u], "NTC"[tr], "NU"[dg], m, n, scalar(0.75, -0.5)};
        o = run_both(tsr_cuda_trsm, tsr_cpu_trsm, &a, dt, t, 2, 1, 0, what);
      } else {
        tsr_trmm_args_t a = {dt, "LR"[s], "UL"[u], "NTC"[tr], "NU"[dg], m, n, scalar(0.75, -0.5)};
        o = run_both(tsr_cuda_trmm, tsr_cpu_trmm, &a, dt, t, 2, 1, 0, what);
      }
      assert_int_equal(o.gpu, 0);
      assert_int_equal(o.cpu, 0);
      free_tiles(t, 2);
    }
}

static void trsm_matches_cpu(void **state) {
  (void)state;
  NEED_GPU();
  check_triangular(1);
}

static void trmm_matches_cpu(void **state) {
  (void)state;
  NEED_GPU();
  check_triangular(0);
}

static void lacpy_matches_cpu(void **state) {
  (void)state;
  NEED_GPU();
  for (int d = 0; d < 4; d++) {
    tessera_dtype_t dt = dtypes[d];
    tt_rng_t r = tt_rng((uint64_t)(3000 + d));
    tile_t t[2] = {tile_random(dt, 70, 53, 3, &r), tile_random(dt, 70, 53, 9, &r)};
    tsr_lacpy_args_t a = {dt, 70, 53};
    outcome_t o = run_both(tsr_cuda_lacpy, tsr_cpu_lacpy, &a, dt, t, 2, 1, 0, "lacpy");
    assert_int_equal(o.gpu, 0);
    assert_int_equal(o.cpu, 0);
    free_tiles(t, 2);
  }
}

/* ---------------------------------------------------------------- LAPACK kernels */

static void potrf_matches_cpu(void **state) {
  (void)state;
  NEED_GPU();
  const int n = 70;
  for (int d = 0; d < 4; d++)
    for (int u = 0; u < 2; u++) {
      tessera_dtype_t dt = dtypes[d];
      tt_rng_t r = tt_rng((uint64_t)(4000 + 10 * d + u));
      tile_t t = tile_random(dt, n, n, 5, &r);
      make_hpd(dt, &t);
      tsr_potrf_args_t a = {dt, "UL"[u], n, 140};
      outcome_t o = run_both(tsr_cuda_potrf, tsr_cpu_potrf, &a, dt, &t, 1, 0, a.uplo, "potrf");
      assert_int_equal(o.gpu, 0);
      assert_int_equal(o.cpu, 0);
      free(t.h);
    }
}

/* Failing pivots: (index, value) pairs set on the diagonal or, mirrored, off it. */
typedef struct {
  int i, j;     /* entry (and its mirror) to set */
  double value; /* NaN or a large negative number */
  int i2, j2;   /* a second entry, or -1 */
  double value2;
  int want; /* expected info before the offset */
} bad_pivot_t;

static void potrf_info_matches_cpu(void **state) {
  (void)state;
  NEED_GPU();
  const int n = 70;
  const int64_t offset = 140;
  const bad_pivot_t cases[] = {
      {30, 30, -1000.0, -1, -1, 0.0, 31}, /* not positive definite */
      {12, 12, NAN, -1, -1, 0.0, 13},     /* NaN pivot */
      {40, 7, NAN, -1, -1, 0.0, 41},      /* NaN off the diagonal reaches pivot 40 */
      {20, 20, -1000.0, 50, 50, NAN, 21}, /* a NaN after the failure is not reported */
      {0, 0, NAN, -1, -1, 0.0, 1},        /* the first pivot */
      {69, 69, NAN, -1, -1, 0.0, 70},     /* the last pivot */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int d = 0; d < 4; d++)
      for (int u = 0; u < 2; u++) {
        tessera_dtype_t dt = dtypes[d];
        tt_rng_t r = tt_rng((uint64_t)(5000 + 100 * c + 10 * d + u));
        tile_t t = tile_random(dt, n, n, 5, &r);
        make_hpd(dt, &t);
        const bad_pivot_t *b = &cases[c];
        el_set(dt, t.h, (size_t)b->j * t.ld + (size_t)b->i, b->value, 0.0);
        el_set(dt, t.h, (size_t)b->i * t.ld + (size_t)b->j, b->value, 0.0);
        if (b->i2 >= 0) el_set(dt, t.h, (size_t)b->j2 * t.ld + (size_t)b->i2, b->value2, 0.0);
        tsr_potrf_args_t a = {dt, "UL"[u], n, offset};
        outcome_t o = run_both(tsr_cuda_potrf, tsr_cpu_potrf, &a, dt, &t, 1, 0, a.uplo, "potrf");
        if (o.cpu != offset + b->want || o.gpu != o.cpu)
          fail_msg("potrf %s uplo %c case %zu: gpu %d cpu %d, expected %lld",
                   tessera_dtype_name(dt), a.uplo, c, o.gpu, o.cpu, (long long)(offset + b->want));
        free(t.h);
      }
}

static void trtri_matches_cpu(void **state) {
  (void)state;
  NEED_GPU();
  const int n = 70;
  for (int d = 0; d < 4; d++)
    for (int u = 0; u < 2; u++)
      for (int dg = 0; dg < 2; dg++) {
        tessera_dtype_t dt = dtypes[d];
        tt_rng_t r = tt_rng((uint64_t)(6000 + 10 * d + 2 * u + dg));
        tile_t t = tile_random(dt, n, n, 6, &r);
        make_dominant(dt, &t);
        tsr_trtri_args_t a = {dt, "UL"[u], "NU"[dg], n, 70};
        outcome_t o = run_both(tsr_cuda_trtri, tsr_cpu_trtri, &a, dt, &t, 1, 0, a.uplo, "trtri");
        assert_int_equal(o.gpu, 0);
        assert_int_equal(o.cpu, 0);
        /* an exactly zero pivot (non-unit diagonal only) */
        if (!dg) {
          free(t.h);
          t = tile_random(dt, n, n, 6, &r);
          make_dominant(dt, &t);
          el_set(dt, t.h, (size_t)25 * t.ld + 25, 0.0, 0.0);
          o = run_both(tsr_cuda_trtri, tsr_cpu_trtri, &a, dt, &t, 1, 0, a.uplo, "trtri");
          assert_int_equal(o.cpu, 70 + 26);
          assert_int_equal(o.gpu, o.cpu);
        }
        free(t.h);
      }
}

static void lauum_matches_cpu(void **state) {
  (void)state;
  NEED_GPU();
  const int n = 70;
  for (int d = 0; d < 4; d++)
    for (int u = 0; u < 2; u++) {
      tessera_dtype_t dt = dtypes[d];
      tt_rng_t r = tt_rng((uint64_t)(7000 + 10 * d + u));
      tile_t t = tile_random(dt, n, n, 4, &r);
      make_dominant(dt, &t); /* a factor's diagonal is real, as LAPACK's lauum assumes */
      tsr_lauum_args_t a = {dt, "UL"[u], n};
      outcome_t o = run_both(tsr_cuda_lauum, tsr_cpu_lauum, &a, dt, &t, 1, 0, a.uplo, "lauum");
      assert_int_equal(o.gpu, 0);
      assert_int_equal(o.cpu, 0);
      free(t.h);
    }
}

/* ---------------------------------------------------------------- invalid arguments */

static void invalid_arguments_fail_before_enqueuing(void **state) {
  (void)state;
  NEED_GPU();
  double *d = NULL;
  assert_int_equal(cudaMalloc((void **)&d, 16 * 16 * sizeof(double)), cudaSuccess);
  tessera_exec_t ex = {.ptr = {d, d, d},
                       .ld = {16, 16, 16},
                       .ndata = 3,
                       .kind = TESSERA_DEVICE_CUDA,
                       .stream = g.stream,
                       .scratch = &g.scratch,
                       .async = g.async};
  tsr_potrf_args_t p = {TESSERA_F64, 'X', 8, 0};
  assert_int_equal(tsr_cuda_potrf(&ex, &p), TESSERA_ERR_KERNEL); /* uplo */
  p.uplo = 'L';
  p.n = 17;
  assert_int_equal(tsr_cuda_potrf(&ex, &p), TESSERA_ERR_KERNEL); /* ld below n */
  p.n = 8;
  p.dtype = (tessera_dtype_t)7;
  assert_int_equal(tsr_cuda_potrf(&ex, &p), TESSERA_ERR_KERNEL); /* dtype */
  tsr_gemm_args_t gm = {TESSERA_F64, 'N', 'Q', 4, 4, 4, scalar(1, 0), scalar(0, 0)};
  assert_int_equal(tsr_cuda_gemm(&ex, &gm), TESSERA_ERR_KERNEL); /* trans */
  tsr_trmm_args_t tm = {TESSERA_F64, 'L', 'L', 'N', 'X', 4, 4, scalar(1, 0)};
  assert_int_equal(tsr_cuda_trmm(&ex, &tm), TESSERA_ERR_KERNEL); /* diag */
  tsr_lauum_args_t la = {TESSERA_F64, 'L', 4};
  ex.scratch = NULL;
  assert_int_equal(tsr_cuda_lauum(&ex, &la), TESSERA_ERR_KERNEL); /* no handles */
  ex.scratch = &g.scratch;
  ex.ndata = 1;
  tsr_lacpy_args_t lc = {TESSERA_F64, 4, 4};
  assert_int_equal(tsr_cuda_lacpy(&ex, &lc), TESSERA_ERR_KERNEL); /* missing buffer */
  tsr_trtri_args_t tt = {TESSERA_F64, 'L', 'N', 4, 0};
  ex.async = NULL;
  assert_int_equal(tsr_cuda_trtri(&ex, &tt), TESSERA_ERR_KERNEL); /* no status slot */
  assert_int_equal(cudaStreamSynchronize(g.stream), cudaSuccess);
  cudaFree(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gemm_matches_cpu),
      cmocka_unit_test(syrk_herk_match_cpu),
      cmocka_unit_test(trsm_matches_cpu),
      cmocka_unit_test(trmm_matches_cpu),
      cmocka_unit_test(lacpy_matches_cpu),
      cmocka_unit_test(potrf_matches_cpu),
      cmocka_unit_test(potrf_info_matches_cpu),
      cmocka_unit_test(trtri_matches_cpu),
      cmocka_unit_test(lauum_matches_cpu),
      cmocka_unit_test(invalid_arguments_fail_before_enqueuing),
  };
  tt_watchdog(240);
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
