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
#include <lapacke.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <tessera/tessera.h>

#include "../test_common.h"
#include "kernels/cpu/hb2st.h"
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

/* Flag letters, indexed like the loops below. */
static const char NTC[] = "NTC", UL[] = "UL", NU[] = "NU", LR[] = "LR";

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

/* Element i of p as (re, im), and its assignment (the imaginary part ignored when real). */
static void el_get(tessera_dtype_t dt, const void *p, size_t i, double *re, double *im) {
  const int c = tessera_dtype_is_complex(dt), one = is_single(dt);
  const size_t k = c ? 2 * i : i;
  *re = one ? ((const float *)p)[k] : ((const double *)p)[k];
  *im = !c ? 0.0 : one ? ((const float *)p)[k + 1] : ((const double *)p)[k + 1];
}

static void el_set(tessera_dtype_t dt, void *p, size_t i, double re, double im) {
  const int c = tessera_dtype_is_complex(dt);
  const double v[2] = {re, im};
  for (int q = 0; q <= c; q++) {
    if (is_single(dt))
      ((float *)p)[(c ? 2 * i : i) + q] = (float)v[q];
    else
      ((double *)p)[(c ? 2 * i : i) + q] = v[q];
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

/* Shapes a square tile. `hpd`: Hermitian (symmetric when real) with the real diagonal
 * n + |a_jj|, so positive definite. Otherwise off-diagonal entries scaled by 1/n and the real
 * diagonal 2 + |a_jj|: every triangle is well conditioned, with a unit diagonal too. */
static void shape(tessera_dtype_t dt, tile_t *t, int hpd) {
  const int n = t->rows;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      double re, im;
      const size_t k = (size_t)j * t->ld + (size_t)i;
      el_get(dt, t->h, k, &re, &im);
      if (i == j)
        el_set(dt, t->h, k, (hpd ? n : 2.0) + fabs(re), 0.0);
      else if (!hpd)
        el_set(dt, t->h, k, re / n, im / n);
      else if (i < j)
        el_set(dt, t->h, (size_t)i * t->ld + (size_t)j, re, -im);
    }
}

/* ---------------------------------------------------------------- running both kernels */

/* What a CUDA worker hands a kernel of `nt` buffers (pointers and leading dimensions unset). */
static tessera_exec_t gpu_exec(int nt) {
  tessera_exec_t ex = {.ndata = nt, .kind = TESSERA_DEVICE_CUDA, .stream = g.stream};
  ex.scratch = &g.scratch;
  ex.async = g.async;
  return ex;
}

typedef struct {
  int gpu; /* the GPU kernel's return, or its asynchronous status read as the runtime does */
  int cpu; /* the CPU kernel's return */
} outcome_t;

/* Runs `gpu` on device copies of the tiles and `cpu` on the host tiles (in place). When both
 * succeed, compares tile `out` (the `mask` triangle, 'L' or 'U', or all ld rows for 0) and
 * fails with `what` beyond the dtype's tolerance. */
/* As run_both, the results compared within `tol`; *rel receives their relative difference. */
static outcome_t run_within(tessera_kernel_fn gpu, tessera_kernel_fn cpu, void *args,
                            tessera_dtype_t dt, tile_t *t, int nt, int out, char mask,
                            const char *what, double tol, double *rel_out) {
  tessera_exec_t ex = gpu_exec(nt);
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
  if (o.gpu < 0)
    print_message("%s %s: the GPU kernel returned %d (CUDA: %s)\n", what, tessera_dtype_name(dt),
                  o.gpu, cudaGetErrorName(cudaGetLastError()));
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
        if ((mask == 'L' && i < (size_t)j) || (mask == 'U' && i > (size_t)j)) continue;
        double gr, gi, cr, ci;
        el_get(dt, dev_out, (size_t)j * c->ld + i, &gr, &gi);
        el_get(dt, c->h, (size_t)j * c->ld + i, &cr, &ci);
        err = fmax(err, hypot(gr - cr, gi - ci));
        big = fmax(big, hypot(cr, ci));
      }
    double rel = err / (big > 0 ? big : 1);
    if (rel_out) *rel_out = rel;
    if (!(rel <= tol))
      fail_msg("%s %s: relative difference %g (tolerance %g)", what, tessera_dtype_name(dt), rel,
               tol);
  }
  free(dev_out);
  return o;
}

static outcome_t run_both(tessera_kernel_fn gpu, tessera_kernel_fn cpu, void *args,
                          tessera_dtype_t dt, tile_t *t, int nt, int out, char mask,
                          const char *what) {
  return run_within(gpu, cpu, args, dt, t, nt, out, mask, what, tolerance(dt), NULL);
}

static void expect_ok(outcome_t o) {
  assert_int_equal(o.gpu, 0);
  assert_int_equal(o.cpu, 0);
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
        tsr_gemm_args_t a = {dt, NTC[ta], "NTC" [tb], m, n, k, {0.75, 0.5 }, {-0.5, 0.25}, 0};
        /* The kernel binds the handle to the task's stream, whatever it was bound to. */
        if (tb == 1) cublasSetStream(g.scratch.cublas, NULL);
        char what[32];
        snprintf(what, sizeof what, "gemm %c%c", a.transa, a.transb);
        expect_ok(run_both(tsr_cuda_gemm, tsr_cpu_gemm, &a, dt, t, 3, 2, 0, what));
        free_tiles(t, 3);
      }
}

/* One stored shape (shape_of 0: N T, 1: T N) of a single-precision gemm and syrk / herk of dt in
 * arithmetic `math` on the GPU against the CPU's products in the dtype's own: within tol, and
 * where min_rel > 0 farther than it (the arithmetic asked is the one run). */
static void products_case(tessera_dtype_t dt, int math, int shape_of, int m, int n, int k,
                          double tol, double min_rel, uint64_t seed) {
  tt_rng_t r = tt_rng(seed);
  const int ta = shape_of, tb = 1 - shape_of;
  tile_t t[3] = {ta ? tile_random(dt, k, m, 3, &r) : tile_random(dt, m, k, 3, &r),
                 tb ? tile_random(dt, n, k, 5, &r) : tile_random(dt, k, n, 5, &r),
                 tile_random(dt, m, n, 7, &r)};
  tsr_gemm_args_t a = {dt, "NC"[ta], "NC" [tb], m, n, k, {0.75, 0 }, {-0.5, 0}, math};
  double rel = 0;
  char what[48];
  snprintf(what, sizeof what, "gemm %c%c math %d", a.transa, a.transb, math);
  expect_ok(run_within(tsr_cuda_gemm, tsr_cpu_gemm, &a, dt, t, 3, 2, 0, what, tol, &rel));
  if (min_rel > 0) assert_true(rel > min_rel);
  free_tiles(t, 3);
  const char uplo = UL[shape_of], trans = "NC"[shape_of];
  tile_t u[2] = {trans == 'N' ? tile_random(dt, n, k, 3, &r) : tile_random(dt, k, n, 3, &r),
                 tile_random(dt, n, n, 4, &r)};
  shape(dt, &u[1], 1);
  tsr_syrk_args_t s = {dt, uplo, trans, 1, n, k, {0.75, 0}, {-0.5, 0}, math};
  snprintf(what, sizeof what, "herk %c%c math %d", uplo, trans, math);
  expect_ok(run_within(tsr_cuda_syrk, tsr_cpu_syrk, &s, dt, u, 2, 1, uplo, what, tol, &rel));
  if (min_rel > 0) assert_true(rel > min_rel);
  free_tiles(u, 2);
}

/* Single-precision gemm and syrk / herk on tensor cores (TF32, BF16, FP16 inputs, f32
 * accumulation): within their inputs' rounding of the CPU's f32 products, and visibly not the
 * f32 products themselves. f32 in BF16 / FP16 rounds its operands into the workspace. Then f32
 * in TF32X3 (three TF32 products of hi + lo operands): within a small multiple of f32's
 * rounding, well inside what TF32 inputs alone give. Every stored shape, and with a workspace
 * that takes k in chunks (`room`: bytes of it the kernels see, 0 for all). */
static void tensor_products_with(size_t room, size_t split_room) {
  const int m = 64, n = 48, k = room ? 600 : 96;
  const double tol[4] = {0, 1e-2, 5e-2, 1e-2};
  const tessera_dtype_t single[2] = {TESSERA_F32, TESSERA_C64};
  const size_t whole = g.scratch.workspace_bytes;
  if (room) g.scratch.workspace_bytes = room;
  for (int math = TSR_MATH_TF32; math <= TSR_MATH_F16; math++)
    for (int d = 0; d < 2; d++)
      for (int shape_of = 0; shape_of < 2; shape_of++)
        products_case(single[d], math, shape_of, m, n, k, tol[math], 1e-6,
                      (uint64_t)(5000 + 100 * math + 10 * d + shape_of));
  if (split_room) g.scratch.workspace_bytes = split_room;
  for (int shape_of = 0; shape_of < 2; shape_of++)
    products_case(TESSERA_F32, TSR_MATH_TF32X3, shape_of, m, n, k, 2e-5, 0,
                  (uint64_t)(5500 + shape_of));
  g.scratch.workspace_bytes = whole;
}

static void tensor_core_products_near_cpu(void **state) {
  (void)state;
  NEED_GPU();
  tensor_products_with(0, 0);
  /* chunks of 256 columns of k: 16-bit operands, then three TF32 blocks of them */
  tensor_products_with((size_t)(64 + 48) * 2 * 300, (size_t)(64 + 48) * 12 * 300);
}

/* absum on f64 tiles (the harness copies every buffer in one dtype; the other dtypes' run in
 * test_posv_mixed on the GPU): a tile's row and column sums of moduli (part 0), its row sums
 * alone (part 'G'), and the row sums of a Hermitian diagonal tile from either stored triangle,
 * as the CPU's. */
static void absum_matches_cpu(void **state) {
  (void)state;
  NEED_GPU();
  const int m = 70, n = 45;
  for (int p = 0; p < 4; p++)
    for (int out = 1; out < (p ? 2 : 3); out++) {
      const tessera_dtype_t dt = TESSERA_F64;
      const char part = "\0LUG"[p];
      tt_rng_t r = tt_rng((uint64_t)(7000 + 10 * out + p));
      const int rows = part == 'L' || part == 'U' ? n : m;
      tile_t t[3] = {tile_random(dt, rows, n, 3, &r), tile_random(TESSERA_F64, rows, 1, 5, &r),
                     tile_random(TESSERA_F64, n, 1, 7, &r)};
      tsr_absum_args_t a = {dt, rows, n, part};
      char what[32];
      snprintf(what, sizeof what, "absum part %d out %d", p, out);
      expect_ok(run_within(tsr_cuda_absum, tsr_cpu_absum, &a, TESSERA_F64, t, p ? 2 : 3, out, 0,
                           what, 1e-12, NULL));
      free_tiles(t, 3);
    }
}

/* hemm_pair (both products of a Hermitian matrix's off-diagonal tile, one task): each output as
 * the CPU's, every dtype, one and several columns. */
static void hemm_pair_matches_cpu(void **state) {
  (void)state;
  NEED_GPU();
  const int r = 70, c = 45;
  for (int d = 0; d < 4; d++)
    for (int k = 1; k <= 3; k += 2)
      for (int out = 3; out <= 4; out++) {
        const tessera_dtype_t dt = dtypes[d];
        tt_rng_t g = tt_rng((uint64_t)(9000 + 10 * d + k + 100 * out));
        tile_t t[5] = {tile_random(dt, r, c, 3, &g), tile_random(dt, c, k, 1, &g),
                       tile_random(dt, r, k, 2, &g), tile_random(dt, r, k, 4, &g),
                       tile_random(dt, c, k, 5, &g)};
        tsr_hemm_pair_args_t a = {dt, r, c, k, {0.75, dt == TESSERA_C64 || dt == TESSERA_C128}};
        expect_ok(run_both(tsr_cuda_hemm_pair, tsr_cpu_hemm_pair, &a, dt, t, 5, out, 0,
                           out == 3 ? "hemm_pair Yr" : "hemm_pair Yc"));
        free_tiles(t, 5);
      }
}

/* hemm (a diagonal tile's product from its stored triangle) as the CPU's: every dtype, both
 * triangles, one and several columns. */
static void hemm_matches_cpu(void **state) {
  (void)state;
  NEED_GPU();
  const int m = 70;
  for (int d = 0; d < 4; d++)
    for (int u = 0; u < 2; u++)
      for (int k = 1; k <= 3; k += 2) {
        const tessera_dtype_t dt = dtypes[d];
        tt_rng_t g = tt_rng((uint64_t)(9700 + 10 * d + u + 100 * k));
        tile_t t[3] = {tile_random(dt, m, m, 3, &g), tile_random(dt, m, k, 1, &g),
                       tile_random(dt, m, k, 2, &g)};
        shape(dt, &t[0], 1);
        tsr_hemm_args_t a = {dt, UL[u], m, k, {0.75, 0.5}, {-0.5, 0}};
        expect_ok(run_both(tsr_cuda_hemm, tsr_cpu_hemm, &a, dt, t, 3, 2, 0, "hemm"));
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
          shape(dt, &t[1], 1); /* a Hermitian C keeps herk's real diagonal meaningful */
          tsr_syrk_args_t a = {dt, UL[u], "NTC" [tr], herk, n, k, {0.75, 0.5 }, {-0.5, 0.25}, 0};
          char what[32];
          snprintf(what, sizeof what, "%s %c%c", herk ? "herk" : "syrk", a.uplo, a.trans);
          expect_ok(run_both(tsr_cuda_syrk, tsr_cpu_syrk, &a, dt, t, 2, 1, a.uplo, what));
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
      shape(dt, &t[0], 0);
      char what[32];
      snprintf(what, sizeof what, "%s %c%c%c%c", solve ? "trsm" : "trmm", LR[s], UL[u], NTC[tr],
               NU[dg]);
      outcome_t o;
      if (solve) {
        tsr_trsm_args_t a = {dt, LR[s], UL[u], NTC[tr], "NU" [dg], m, n, {0.75, -0.5 }, 0};
        o = run_both(tsr_cuda_trsm, tsr_cpu_trsm, &a, dt, t, 2, 1, 0, what);
      } else {
        tsr_trmm_args_t a = {dt, LR[s], UL[u], NTC[tr], "NU" [dg], m, n, {0.75, -0.5 }, 0};
        o = run_both(tsr_cuda_trmm, tsr_cpu_trmm, &a, dt, t, 2, 1, 0, what);
      }
      expect_ok(o);
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
    /* rows 7 .. 66 of columns 2 .. 51 into rows 3 .. 62 of columns 1 .. 50 */
    tsr_lacpy_args_t a = {
        .dtype = dt, .m = 60, .n = 50, .src_row = 7, .dst_row = 3, .src_col = 2, .dst_col = 1};
    expect_ok(run_both(tsr_cuda_lacpy, tsr_cpu_lacpy, &a, dt, t, 2, 1, 0, "lacpy"));
    free_tiles(t, 2);
  }
}

/* transpose (a block at an offset into another at an offset), identity (a block of rows with
 * the diagonal shifted) and diagonal: what QR's tile-level routines copy with. */
static void copy_kernels_match_cpu(void **state) {
  (void)state;
  NEED_GPU();
  for (int d = 0; d < 4; d++) {
    tessera_dtype_t dt = dtypes[d];
    tt_rng_t r = tt_rng((uint64_t)(3100 + d));
    tile_t t[2] = {tile_random(dt, 40, 30, 2, &r), tile_random(dt, 35, 45, 1, &r)};
    tsr_transpose_args_t ta = {dt, 20, 25, 5, 3, 4, 7}; /* A(5.., 3..) 20 x 25 into B(4.., 7..) */
    expect_ok(run_both(tsr_cuda_transpose, tsr_cpu_transpose, &ta, dt, t, 2, 1, 0, "transpose"));
    free_tiles(t, 2);
    tile_t e[1] = {tile_random(dt, 50, 20, 3, &r)};
    tsr_identity_args_t ia = {dt, 30, 20, 9, -4}; /* rows 9 .. 38, ones where c - r == -4 */
    expect_ok(run_both(tsr_cuda_identity, tsr_cpu_identity, &ia, dt, e, 1, 0, 0, "identity"));
    free_tiles(e, 1);
    tile_t g[2] = {tile_random(dt, 30, 24, 5, &r), tile_random(dt, 24, 1, 0, &r)};
    tsr_diagonal_args_t da = {dt, 24, 6}; /* the diagonal of the block from row 6 */
    expect_ok(run_both(tsr_cuda_diagonal, tsr_cpu_diagonal, &da, dt, g, 2, 1, 0, "diagonal"));
    free_tiles(g, 2);
    for (int u = 0; u < 2; u++) { /* a 21 x 21 triangle from row 4, into a whole 21 x 21 tile */
      tile_t q[2] = {tile_random(dt, 30, 21, 2, &r), tile_random(dt, 21, 21, 0, &r)};
      tsr_triangle_args_t qa = {dt, u ? 'U' : 'L', 21, 4};
      expect_ok(
          run_both(tsr_cuda_triangle_copy, tsr_cpu_triangle_copy, &qa, dt, q, 2, 1, 0, "triangle"));
      free_tiles(q, 2);
    }
    tile_t f[1] = {tile_random(dt, 33, 33, 3, &r)};
    tsr_hefill_args_t fa = {dt, 33};
    expect_ok(run_both(tsr_cuda_hefill, tsr_cpu_hefill, &fa, dt, f, 1, 0, 0, "hefill"));
    free_tiles(f, 1);
  }
}

/* ---------------------------------------------------------------- LAPACK kernels */

/* potrf's info on failing pivots: entries (i, j) set to v, with the mirror (j, i) when
 * mirrored; `want` is the info before the offset. */
static void potrf_info_matches_cpu(void **state) {
  (void)state;
  NEED_GPU();
  const int n = 70;
  const int64_t offset = 140;
  const struct {
    int i, j, mirrored;
    double v;
    int want;
  } cases[][2] = {
      {{30, 30, 0, -1000.0, 31}, {.i = -1}},           /* not positive definite */
      {{12, 12, 0, NAN, 13}, {.i = -1}},               /* NaN pivot */
      {{40, 7, 1, NAN, 41}, {.i = -1}},                /* NaN off the diagonal reaches pivot 40 */
      {{20, 20, 0, -1000.0, 21}, {50, 50, 0, NAN, 0}}, /* a NaN after the failure is ignored */
      {{0, 0, 0, NAN, 1}, {.i = -1}},                  /* the first pivot */
      {{69, 69, 0, NAN, 70}, {.i = -1}},               /* the last pivot */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int d = 0; d < 8; d++) {
      const tessera_dtype_t dt = dtypes[d / 2];
      tt_rng_t r = tt_rng((uint64_t)(5000 + 100 * c + d));
      tile_t t = tile_random(dt, n, n, 5, &r);
      shape(dt, &t, 1);
      for (int e = 0; e < 2 && cases[c][e].i >= 0; e++) {
        const size_t i = (size_t)cases[c][e].i, j = (size_t)cases[c][e].j;
        el_set(dt, t.h, j * t.ld + i, cases[c][e].v, 0.0);
        if (cases[c][e].mirrored) el_set(dt, t.h, i * t.ld + j, cases[c][e].v, 0.0);
      }
      tsr_potrf_args_t a = {dt, UL[d % 2], n, offset, 0};
      outcome_t o = run_both(tsr_cuda_potrf, tsr_cpu_potrf, &a, dt, &t, 1, 0, a.uplo, "potrf");
      if (o.cpu != offset + cases[c][0].want || o.gpu != o.cpu)
        fail_msg("potrf %s uplo %c case %zu: gpu %d cpu %d, expected %lld", tessera_dtype_name(dt),
                 a.uplo, c, o.gpu, o.cpu, (long long)(offset + cases[c][0].want));
      free(t.h);
    }
}

/* potrf, trtri (both diagonals) and lauum on both triangles of well-conditioned tiles (a
 * factor's diagonal is real, as LAPACK's lauum assumes); trtri also on a zero pivot. */
static void lapack_kernels_match_cpu(void **state) {
  (void)state;
  NEED_GPU();
  const int n = 70;
  for (int d = 0; d < 4; d++)
    /* potrf L, U; trtri without a unit diagonal (v = 2, 3 would be the unit-diagonal case,
     * where cuSOLVER rewrites the unreferenced diagonal: not compared); lauum. */
    for (int v = 0; v < 8; v++) {
      if (v == 2 || v == 3) continue;
      const tessera_dtype_t dt = dtypes[d];
      const int u = v & 1, dg = v < 4;
      tt_rng_t r = tt_rng((uint64_t)(4000 + 10 * d + v));
      tile_t t = tile_random(dt, n, n, 5, &r);
      shape(dt, &t, v < 2);
      tsr_potrf_args_t pa = {dt, UL[u], n, 140, 0};
      tsr_trtri_args_t ta = {dt, UL[u], NU[dg], n, 70};
      tsr_lauum_args_t la = {dt, UL[u], n};
      if (v < 2)
        expect_ok(run_both(tsr_cuda_potrf, tsr_cpu_potrf, &pa, dt, &t, 1, 0, UL[u], "potrf"));
      else if (v < 6)
        expect_ok(run_both(tsr_cuda_trtri, tsr_cpu_trtri, &ta, dt, &t, 1, 0, UL[u], "trtri"));
      else
        expect_ok(run_both(tsr_cuda_lauum, tsr_cpu_lauum, &la, dt, &t, 1, 0, UL[u], "lauum"));
      if (v == 4 || v == 5) {
        /* An exactly zero pivot in the inverse just computed: info 26 after the offset. */
        el_set(dt, t.h, (size_t)25 * t.ld + 25, 0.0, 0.0);
        outcome_t o = run_both(tsr_cuda_trtri, tsr_cpu_trtri, &ta, dt, &t, 1, 0, UL[u], "trtri");
        assert_int_equal(o.cpu, 70 + 26);
        assert_int_equal(o.gpu, o.cpu);
      }
      free(t.h);
    }
}

/* Copies of tiles t[0 .. nt) (run_both works on the host tiles in place). */
static void copy_tiles(tessera_dtype_t dt, const tile_t *t, tile_t *out, int nt) {
  for (int b = 0; b < nt; b++) {
    out[b] = t[b];
    out[b].h = malloc(tile_bytes(dt, &t[b]));
    assert_non_null(out[b].h);
    memcpy(out[b].h, t[b].h, tile_bytes(dt, &t[b]));
  }
}

/* QR's kernels on a panel of m rows from row r0, n columns: geqrt's factors and T, larft's T
 * from the CPU's vectors and tau (with a workspace of larft_bytes when not 0, scaled from 8-byte
 * elements to the dtype's, so that T is formed by halves), and qr_step (Qᴴ C, Q C) on an m x nc
 * panel. */
static void qr_kernels_on(int m, int n, int r0, int nc, size_t larft_bytes) {
  const int k = n;
  for (int d = 0; d < 4; d++) {
    const tessera_dtype_t dt = dtypes[d];
    tt_rng_t r = tt_rng((uint64_t)(7000 + d));
    tile_t t[4] = {tile_random(dt, m, n, 3, &r), tile_random(dt, k, k, 1, &r),
                   tile_random(dt, m, nc, 2, &r), tile_random(dt, k, nc, 0, &r)};
    tsr_geqrt_args_t ga = {dt, m, n, r0, 1};
    tile_t c[2];
    copy_tiles(dt, t, c, 2);
    expect_ok(run_both(tsr_cuda_geqrt, tsr_cpu_geqrt, &ga, dt, c, 2, 0, 0, "geqrt factors"));
    free_tiles(c, 2);
    copy_tiles(dt, t, c, 2);
    expect_ok(run_both(tsr_cuda_geqrt, tsr_cpu_geqrt, &ga, dt, c, 2, 1, 'U', "geqrt T"));
    /* t[0], t[1]: the CPU's factors and T from here on */
    assert_int_equal(tsr_cpu_geqrt(&(tessera_exec_t){.ndata = 2,
                                                     .kind = TESSERA_DEVICE_CPU,
                                                     .ptr = {t[0].h, t[1].h},
                                                     .ld = {t[0].ld, t[1].ld}},
                                   &ga),
                     0);
    tile_t tau = {malloc((size_t)k * tessera_dtype_size(dt)), (size_t)k, k, 1};
    for (int i = 0; i < k; i++) {
      double re, im;
      el_get(dt, t[1].h, (size_t)i * t[1].ld + (size_t)i, &re, &im);
      el_set(dt, tau.h, (size_t)i, re, im);
    }
    tile_t lt[3] = {t[0], tau, tile_random(dt, k, k, 1, &r)};
    tile_t lc[3];
    copy_tiles(dt, lt, lc, 3);
    tsr_larft_args_t la = {dt, m, r0, k};
    const size_t whole = g.scratch.workspace_bytes;
    if (larft_bytes) g.scratch.workspace_bytes = larft_bytes * tessera_dtype_size(dt) / 8;
    const outcome_t lo = run_both(tsr_cuda_larft, tsr_cpu_larft, &la, dt, lc, 3, 2, 'U', "larft");
    g.scratch.workspace_bytes = whole;
    expect_ok(lo);
    free_tiles(lc, 3);
    free(lt[2].h);
    for (int q = 0; q < 2; q++) {
      tsr_qr_step_args_t qa = {dt, q ? 'N' : 'C', m, nc, r0, k, 0};
      const tile_t order[4] = {t[0], t[2], t[1], t[3]}; /* the kernel's V, C, T, W */
      tile_t qc[4];
      copy_tiles(dt, order, qc, 4);
      expect_ok(run_both(tsr_cuda_qr_step, tsr_cpu_qr_step, &qa, dt, qc, 4, 1, 0, "qr_step"));
      free_tiles(qc, 4);
    }
    free(tau.h);
    free_tiles(t, 4);
  }
}

/* One diagonal block of T (24 columns), several joined level by level (100 columns), T by
 * halves in a small workspace, and a panel factored recursively (300 columns). */
static void qr_kernels_match_cpu(void **state) {
  (void)state;
  NEED_GPU();
  qr_kernels_on(90, 24, 10, 17, 0);
  qr_kernels_on(300, 100, 7, 33, 0);
  qr_kernels_on(300, 100, 7, 33, 100 << 10); /* larft's T by halves */
  qr_kernels_on(700, 300, 5, 40, 0);         /* a recursive panel */
  qr_kernels_on(2000, 100, 3, 20, 0);        /* a tall panel: CholeskyQR2 on real dtypes */
  qr_kernels_on(4000, 8, 3, 5, 0);           /* a tall panel near orthogonal: one pass */
}

/* The eigensolver's Q2 on a GPU (batched block reflectors, wavefronts) against the CPU's
 * (hb2st_apply): reflectors of a random band's bulge chasing, applied to a random E; bands
 * narrower than the GPU's groups, between them and wider. */
static void hb2st_apply_matches_cpu(void **state) {
  (void)state;
  NEED_GPU();
  static const int shapes[][3] = {{157, 8, 33}, {300, 70, 41}, {260, 130, 20}, {2, 1, 3}};
  tt_rng_t r = tt_rng(11);
  for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++)
    for (size_t q = 0; q < sizeof shapes / sizeof *shapes; q++) {
      const tessera_dtype_t dt = dtypes[d];
      const int n = shapes[q][0], kd = shapes[q][1], m = shapes[q][2];
      int64_t nv = 0;
      const int64_t ntau = tsr_hb2st_reflectors(n, kd, &nv);
      tile_t ab = tile_random(dt, kd + 1, n, 0, &r),
             t[3] = {tile_random(dt, (int)nv + 1, 1, 0, &r),
                     tile_random(dt, (int)ntau + 1, 1, 0, &r), tile_random(dt, n, m, 3, &r)};
      double *de = malloc(2 * (size_t)n * sizeof *de);
      assert_non_null(de);
      assert_int_equal(tsr_hb2st(dt, n, kd, ab.h, kd + 1, de, de + n, t[0].h, t[1].h, NULL), 0);
      tsr_hb2st_apply_args_t a = {.dtype = dt, .n = n, .kd = kd, .m = m};
      expect_ok(
          run_both(tsr_cuda_hb2st_apply, tsr_cpu_hb2st_apply, &a, dt, t, 3, 2, 0, "hb2st_apply"));
      free(de);
      free(ab.h);
      free_tiles(t, 3);
    }
}

/* The bulge chasing on a GPU (hb2st.cu: one cooperative launch, sweeps spread over the thread
 * blocks) against the CPU's sequential reduction, every dtype: T's eigenvalues within 1e-12
 * (double) or 1e-4 (single) of the band's largest modulus times n, for bands of 1, 3, 64, 130 and
 * 1000 subdiagonals (the last with its vectors in global scratch). */
static void hb2st_matches_cpu(void **state) {
  (void)state;
  NEED_GPU();
  static const int shapes[][2] = {{2, 1}, {157, 3}, {300, 64}, {400, 130}, {1500, 1000}};
  tt_rng_t r = tt_rng(12);
  for (int q = 0; q < 4; q++)
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
      const tessera_dtype_t dt = dtypes[q];
      const int n = shapes[k][0], kd = shapes[k][1];
      int64_t nv = 0;
      const int64_t ntau = tsr_hb2st_reflectors(n, kd, &nv);
      tile_t ab = tile_random(dt, kd + 1, n, 0, &r),
             t[5] = {ab,
                     {NULL, (size_t)n, n, 1},
                     {NULL, (size_t)n, n, 1},
                     tile_random(dt, (int)nv + 1, 1, 0, &r),
                     tile_random(dt, (int)ntau + 1, 1, 0, &r)};
      double *de = calloc(4 * (size_t)n, sizeof *de);
      assert_non_null(de);
      tsr_hb2st_args_t a = {.dtype = dt, .n = n, .kd = kd};
      tessera_exec_t ex = gpu_exec(5);
      const size_t es = tessera_dtype_size(dt);
      const size_t bytes[5] = {tile_bytes(dt, &ab), (size_t)n * 8, (size_t)n * 8,
                               ((size_t)nv + 1) * es, ((size_t)ntau + 1) * es};
      for (int b = 0; b < 5; b++) {
        assert_int_equal(cudaMalloc(&ex.ptr[b], bytes[b]), cudaSuccess);
        ex.ld[b] = b == 0 ? ab.ld : b < 3 ? (size_t)n : bytes[b] / es;
      }
      assert_int_equal(cudaMemcpy(ex.ptr[0], ab.h, bytes[0], cudaMemcpyHostToDevice), cudaSuccess);
      assert_int_equal(tsr_cuda_hb2st(&ex, &a), 0);
      assert_int_equal(cudaStreamSynchronize(g.stream), cudaSuccess);
      assert_int_equal(cudaMemcpy(de + 2 * n, ex.ptr[1], (size_t)n * 8, cudaMemcpyDeviceToHost),
                       cudaSuccess);
      assert_int_equal(cudaMemcpy(de + 3 * n, ex.ptr[2], (size_t)n * 8, cudaMemcpyDeviceToHost),
                       cudaSuccess);
      for (int b = 0; b < 5; b++) cudaFree(ex.ptr[b]);
      assert_int_equal(tsr_hb2st(dt, n, kd, ab.h, kd + 1, de, de + n, t[3].h, t[4].h, NULL), 0);
      /* T is unique up to the signs of e only in exact arithmetic: compare the spectra */
      double big = 0, err = 0;
      for (size_t i = 0; i < (size_t)(kd + 1) * (size_t)n; i++) {
        double re, im;
        el_get(dt, ab.h, i, &re, &im);
        big = fmax(big, hypot(re, im));
      }
      assert_int_equal(LAPACKE_dsterf(n, de, de + n), 0);
      assert_int_equal(LAPACKE_dsterf(n, de + 2 * n, de + 3 * n), 0);
      for (int i = 0; i < n; i++) err = fmax(err, fabs(de[i] - de[2 * n + i]));
      const double tol = (tsr_dtype_single(dt) ? 1e-4 : 1e-12) * big * n;
      if (!(err <= tol))
        fail_msg("hb2st %s n %d kd %d: eigenvalues of T differ by %g (tolerance %g)",
                 tessera_dtype_name(dt), n, kd, err, tol);
      free(de);
      free_tiles(t, 1);
      free_tiles(t + 3, 2);
    }
}

/* trtri above the order cuSOLVER runs whole (recursive halving onto trmm): both triangles,
 * every dtype, and the info of a zero pivot deep in the second half. */
static void trtri_recursive_matches_cpu(void **state) {
  (void)state;
  NEED_GPU();
  const int n = 600;
  for (int d = 0; d < 4; d++)
    for (int u = 0; u < 2; u++) {
      const tessera_dtype_t dt = dtypes[d];
      tt_rng_t r = tt_rng((uint64_t)(5000 + 10 * d + u));
      tile_t t = tile_random(dt, n, n, 3, &r);
      shape(dt, &t, 0);
      tile_t t0 = t;
      t0.h = malloc(tile_bytes(dt, &t));
      assert_non_null(t0.h);
      memcpy(t0.h, t.h, tile_bytes(dt, &t));
      tsr_trtri_args_t ta = {dt, UL[u], 'N', n, 1000};
      expect_ok(run_both(tsr_cuda_trtri, tsr_cpu_trtri, &ta, dt, &t, 1, 0, UL[u], "trtri n=600"));
      el_set(dt, t0.h, (size_t)450 * t0.ld + 450, 0.0, 0.0);
      outcome_t o = run_both(tsr_cuda_trtri, tsr_cpu_trtri, &ta, dt, &t0, 1, 0, UL[u], "trtri");
      assert_int_equal(o.cpu, 1000 + 451);
      assert_int_equal(o.gpu, o.cpu);
      free(t.h);
      free(t0.h);
    }
}

/* potrf with tensor-core products (recursive halving above the leaf): within the products'
 * rounding of the CPU's f32 potrf, both triangles, f32 and c64; a non-positive or NaN pivot in
 * a later leaf reported as the CPU reports it. */
static void potrf_tensor_near_cpu(void **state) {
  (void)state;
  NEED_GPU();
  const int n = 4400; /* two leaves of the recursion */
  const tessera_dtype_t single[2] = {TESSERA_F32, TESSERA_C64};
  for (int math = TSR_MATH_TF32; math <= TSR_MATH_BF16; math++)
    for (int d = 0; d < 4; d++) {
      const tessera_dtype_t dt = single[d / 2];
      const char uplo = UL[d % 2];
      tt_rng_t r = tt_rng((uint64_t)(7000 + 10 * math + d));
      tile_t t = tile_random(dt, n, n, 3, &r);
      shape(dt, &t, 1);
      tsr_potrf_args_t a = {dt, uplo, n, 100, math};
      double rel = 0;
      expect_ok(run_within(tsr_cuda_potrf, tsr_cpu_potrf, &a, dt, &t, 1, 0, uplo, "potrf tensor",
                           math == TSR_MATH_TF32 ? 1e-2 : 5e-2, &rel));
      free(t.h);
      const int at[2] = {1700, 4399};
      t = tile_random(dt, n, n, 3, &r);
      shape(dt, &t, 1);
      el_set(dt, t.h, (size_t)at[d % 2] * (t.ld + 1), d / 2 ? NAN : -1e6, 0.0);
      outcome_t o = run_both(tsr_cuda_potrf, tsr_cpu_potrf, &a, dt, &t, 1, 0, uplo, "potrf info");
      assert_int_equal(o.cpu, 100 + at[d % 2] + 1);
      assert_int_equal(o.gpu, o.cpu);
      free(t.h);
    }
}

/* ---------------------------------------------------------------- invalid arguments */

static void invalid_arguments_fail_before_enqueuing(void **state) {
  (void)state;
  NEED_GPU();
  double *d = NULL;
  assert_int_equal(cudaMalloc((void **)&d, 16 * 16 * sizeof(double)), cudaSuccess);
  tessera_exec_t ex = gpu_exec(3);
  for (int b = 0; b < 3; b++) ex.ptr[b] = d, ex.ld[b] = 16;
  tsr_potrf_args_t p = {TESSERA_F64, 'X', 8, 0, 0};
  assert_int_equal(tsr_cuda_potrf(&ex, &p), TESSERA_ERR_KERNEL); /* uplo */
  p.uplo = 'L';
  p.n = 17;
  assert_int_equal(tsr_cuda_potrf(&ex, &p), TESSERA_ERR_KERNEL); /* ld below n */
  p.n = 8;
  p.dtype = (tessera_dtype_t)7;
  assert_int_equal(tsr_cuda_potrf(&ex, &p), TESSERA_ERR_KERNEL); /* dtype */
  tsr_gemm_args_t gm = {TESSERA_F64, 'N', 'Q', 4, 4, 4, {1, 0}, {0, 0}, 0};
  assert_int_equal(tsr_cuda_gemm(&ex, &gm), TESSERA_ERR_KERNEL); /* trans */
  tsr_trmm_args_t tm = {TESSERA_F64, 'L', 'L', 'N', 'X', 4, 4, {1, 0}, 0};
  assert_int_equal(tsr_cuda_trmm(&ex, &tm), TESSERA_ERR_KERNEL); /* diag */
  tsr_lauum_args_t la = {TESSERA_F64, 'L', 4};
  ex.scratch = NULL;
  assert_int_equal(tsr_cuda_lauum(&ex, &la), TESSERA_ERR_KERNEL); /* no handles */
  ex.scratch = &g.scratch;
  ex.ndata = 1;
  tsr_lacpy_args_t lc = {.dtype = TESSERA_F64, .m = 4, .n = 4};
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
      cmocka_unit_test(tensor_core_products_near_cpu),
      cmocka_unit_test(absum_matches_cpu),
      cmocka_unit_test(trsm_matches_cpu),
      cmocka_unit_test(trmm_matches_cpu),
      cmocka_unit_test(lacpy_matches_cpu),
      cmocka_unit_test(copy_kernels_match_cpu),
      cmocka_unit_test(lapack_kernels_match_cpu),
      cmocka_unit_test(trtri_recursive_matches_cpu),
      cmocka_unit_test(qr_kernels_match_cpu),
      cmocka_unit_test(hb2st_apply_matches_cpu),
      cmocka_unit_test(hb2st_matches_cpu),
      cmocka_unit_test(potrf_info_matches_cpu),
      cmocka_unit_test(potrf_tensor_near_cpu),
      cmocka_unit_test(hemm_pair_matches_cpu),
      cmocka_unit_test(hemm_matches_cpu),
      cmocka_unit_test(invalid_arguments_fail_before_enqueuing),
  };
  tt_watchdog(240);
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
