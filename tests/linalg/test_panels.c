/* Matrices held in place as column panels in several arrays on several memory nodes
 * (tessera_matrix_view_panels): Cholesky factorization of every dtype and triangle, sizes
 * around tile boundaries, panels on the host and, where the build has them, on devices (filled
 * and read back with tessera_memory_copy), the last panel partial or past the matrix; argument
 * errors of view_panels, tessera_queue_sync and tessera_memory_copy.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "linalg_common.h"

enum { NB = 6, MAXP = 8 };

/* The panels of one matrix: host arrays, or device buffers held by tessera handles. */
typedef struct {
  int count;
  int64_t width, ld;
  void *ptr[MAXP];
  int node[MAXP];
  tessera_data_t *h[MAXP];
} panels_t;

/* Columns of the n that panel p of `width` columns holds (0 past the matrix). */
static int64_t panel_cols(int64_t n, int64_t width, int p) {
  int64_t left = n - p * width;
  return left < 0 ? 0 : left > width ? width : left;
}

/* Cuts the lda x n array `a` into panels of `width` columns, panel p on the host (even p, or
 * no device) or on a device node (filled by tessera_memory_copy). */
static void panels_make(tessera_context_t *ctx, tessera_dtype_t dt, const void *a, int64_t lda,
                        int64_t n, int64_t width, int count, panels_t *P) {
  *P = (panels_t){.count = count, .width = width, .ld = lda};
  int ndev = tessera_memory_node_count(ctx) - 1;
  size_t es = lc_esize(dt), bytes = (size_t)(lda * width) * es;
  for (int p = 0; p < count; p++) {
    size_t used = (size_t)(lda * panel_cols(n, width, p)) * es;
    P->node[p] = ndev > 0 && p % 2 ? 1 + p / 2 % ndev : TESSERA_HOST_NODE;
    if (P->node[p] == TESSERA_HOST_NODE) {
      P->ptr[p] = calloc(1, bytes + 1);
      memcpy(P->ptr[p], (const char *)a + (size_t)(p * width * lda) * es, used);
    } else {
      assert_int_equal(
          tessera_data_create_on(ctx, P->node[p], (size_t)lda, (size_t)width, es, &P->h[p]), 0);
      P->ptr[p] = tessera_data_ptr(P->h[p]);
      assert_int_equal(tessera_memory_copy(ctx, P->node[p], P->ptr[p], TESSERA_HOST_NODE,
                                           (const char *)a + (size_t)(p * width * lda) * es, used),
                       0);
    }
  }
}

/* Copies the panels back into `a` and frees them. */
static void panels_take(tessera_context_t *ctx, tessera_dtype_t dt, void *a, int64_t n,
                        panels_t *P) {
  size_t es = lc_esize(dt);
  for (int p = 0; p < P->count; p++) {
    size_t used = (size_t)(P->ld * panel_cols(n, P->width, p)) * es;
    char *dst = (char *)a + (size_t)(p * P->width * P->ld) * es;
    if (P->h[p]) {
      assert_int_equal(
          tessera_memory_copy(ctx, TESSERA_HOST_NODE, dst, P->node[p], P->ptr[p], used), 0);
      assert_int_equal(tessera_data_release(ctx, P->h[p]), 0);
    } else {
      memcpy(dst, P->ptr[p], used);
      free(P->ptr[p]);
    }
  }
}

/* potrf of a random HPD matrix held as panels of 2 tiles (3 panels: the last partial, or past
 * the matrix), against the factor's residual; log det against LAPACK's factor. */
static void potrf_case(tessera_context_t *ctx, tessera_dtype_t dt, tessera_uplo_t uplo, int64_t n,
                       uint64_t seed, void *arg) {
  (void)arg;
  tt_rng_t r = tt_rng(seed);
  int64_t lda = n + 3, width = 2 * NB;
  int count = (int)((n + width - 1) / width);
  if (count < 1) count = 1;
  if (count < MAXP && n % 2) count++; /* one panel past the matrix */
  void *a = lc_alloc(dt, (size_t)(lda * (count * width)));
  zc_t *full = lc_gen_hpd(dt, uplo, n, a, lda, &r);
  void *ref = lc_dup(dt, a, (size_t)(lda * n));
  panels_t P;
  panels_make(ctx, dt, a, lda, n, width, count, &P);
  tessera_matrix_t *A;
  assert_int_equal(
      tessera_matrix_view_panels(ctx, dt, n, n, NB, NB, width, count, P.ptr, P.node, lda, &A), 0);
  assert_int_equal(tessera_tile_potrf(uplo, A), 0);
  double logdet = 0;
  assert_int_equal(tessera_tile_logdet(uplo, A, &logdet), 0);
  assert_int_equal(tessera_matrix_destroy(A), 0);
  panels_take(ctx, dt, a, n, &P);
  double res = lc_potrf_resid(dt, uplo, n, full, a, lda);
  if (!(res < 10.0)) fail_msg("%s %c n=%lld: residual %g", lc_name(dt), uplo, (long long)n, res);
  assert_int_equal(lc_lapack_potrf(dt, uplo, n, ref, lda), 0);
  double want = 0;
  for (int64_t i = 0; i < n; i++) want += 2 * log(cabs(lc_get(dt, ref, (size_t)(i + i * lda))));
  if (!(fabs(logdet - want) <= 1e3 * lc_eps(dt) * (fabs(want) + 1)))
    fail_msg("%s n=%lld: log det %g, LAPACK's %g", lc_name(dt), (long long)n, logdet, want);
  free(a);
  free(ref);
  free(full);
}

static void test_potrf_panels(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(NB);
  lc_sweep(ctx, NB, potrf_case, NULL);
  lc_finalize(ctx);
}

/* A matrix that is not positive definite reports LAPACK's info through panels too. */
static void test_info(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(NB);
  enum { N = 20 };
  double a[N * N] = {0};
  for (int i = 0; i < N; i++) a[i + i * N] = i == 13 ? -1.0 : 2.0;
  panels_t P;
  panels_make(ctx, TESSERA_F64, a, N, N, NB, (N + NB - 1) / NB, &P);
  tessera_matrix_t *A;
  assert_int_equal(
      tessera_matrix_view_panels(ctx, TESSERA_F64, N, N, NB, NB, NB, P.count, P.ptr, P.node, N, &A),
      0);
  assert_int_equal(tessera_tile_potrf(TESSERA_LOWER, A), 14);
  assert_int_equal(tessera_matrix_destroy(A), 0);
  panels_take(ctx, TESSERA_F64, a, N, &P);
  lc_finalize(ctx);
}

static void test_errors(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(NB);
  double x[64] = {0}, y = 0;
  void *p2[2] = {x, x + 32};
  int nodes[2] = {0, 0}, bad[2] = {0, 99};
  void *nulls[2] = {x, NULL};
  tessera_matrix_t *A = NULL;
  /* width not a multiple of the tile, panels that do not hold n, NULL panel, unknown node, lda */
  assert_int_equal(tessera_matrix_view_panels(ctx, TESSERA_F64, 4, 8, 2, 2, 3, 2, p2, nodes, 4, &A),
                   -7);
  lc_assert_error(ctx);
  assert_int_equal(tessera_matrix_view_panels(ctx, TESSERA_F64, 4, 9, 2, 2, 4, 2, p2, nodes, 4, &A),
                   -8);
  assert_int_equal(
      tessera_matrix_view_panels(ctx, TESSERA_F64, 4, 8, 2, 2, 4, 2, nulls, nodes, 4, &A), -9);
  assert_int_equal(tessera_matrix_view_panels(ctx, TESSERA_F64, 4, 8, 2, 2, 4, 2, p2, bad, 4, &A),
                   -10);
  assert_int_equal(tessera_matrix_view_panels(ctx, TESSERA_F64, 4, 8, 2, 2, 4, 2, p2, nodes, 3, &A),
                   -11);
  assert_int_equal(
      tessera_matrix_view_panels(ctx, TESSERA_F64, 4, 8, 2, 2, 4, 2, p2, nodes, 4, NULL), -12);
  assert_null(A);
  /* a NULL pointer is fine for a panel past the matrix */
  assert_int_equal(
      tessera_matrix_view_panels(ctx, TESSERA_F64, 4, 4, 2, 2, 4, 2, nulls, nodes, 4, &A), 0);
  assert_int_equal(tessera_matrix_destroy(A), 0);
  /* queue_sync: the host has no queue; unknown node; a device node needs a queue */
  assert_int_equal(tessera_queue_sync(ctx, TESSERA_HOST_NODE, NULL), 0);
  assert_int_equal(tessera_queue_sync(ctx, 99, NULL), -2);
  if (tessera_memory_node_count(ctx) > 1) assert_int_equal(tessera_queue_sync(ctx, 1, NULL), -3);
  /* memory_copy between host buffers, and its errors */
  x[0] = 42;
  assert_int_equal(tessera_memory_copy(ctx, 0, &y, 0, x, sizeof y), 0);
  assert_true(y == 42);
  assert_int_equal(tessera_memory_copy(ctx, 99, &y, 0, x, 8), -2);
  assert_int_equal(tessera_memory_copy(ctx, 0, NULL, 0, x, 8), -3);
  assert_int_equal(tessera_memory_copy(ctx, 0, &y, -1, x, 8), -4);
  assert_int_equal(tessera_memory_copy(ctx, 0, &y, 0, NULL, 8), -5);
  assert_int_equal(tessera_memory_copy(ctx, 0, NULL, 0, NULL, 0), 0);
  /* queue_copy: strided blocks between host buffers, and its errors */
  double src[6] = {1, 2, 3, 4, 5, 6}, dst[6] = {0};
  assert_int_equal(tessera_queue_copy(ctx, 0, dst, 3 * sizeof *dst, 0, src, 2 * sizeof *src,
                                      2 * sizeof *src, 2, NULL),
                   0);
  assert_true(dst[0] == 1 && dst[1] == 2 && dst[2] == 0 && dst[3] == 3 && dst[4] == 4);
  assert_int_equal(tessera_queue_copy(ctx, 0, dst, 8, 0, src, 16, 16, 2, NULL), -4);
  assert_int_equal(tessera_queue_copy(ctx, 0, dst, 16, 0, src, 8, 16, 2, NULL), -7);
  assert_int_equal(tessera_queue_copy(ctx, 0, dst, 0, 0, NULL, 0, 8, 1, NULL), -6);
  assert_int_equal(tessera_queue_copy(ctx, 0, dst, 0, 0, src, 0, 8, 1, &y), -10);
  if (tessera_memory_node_count(ctx) > 1)
    assert_int_equal(tessera_queue_copy(ctx, 1, dst, 0, 0, src, 0, 8, 1, NULL), -10);
  lc_finalize(ctx);
}

int main(void) {
  tt_watchdog(240);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_potrf_panels),
      cmocka_unit_test(test_info),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
