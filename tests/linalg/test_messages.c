/* What tessera_last_error says: after a potrf, posv or potri returning info > 0 (the order and,
 * for a NaN, the word NaN), after every failure of the descriptor calls in matrix.c (each with a
 * message of its own), and after a descriptor larger than the host (TESSERA_ERR_NOMEM at once,
 * before anything is allocated).
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

enum { N = 20, TILE = 8 };

/* An N x N Hermitian positive definite matrix in the `uplo` triangle of a (leading dimension
 * N), with element (i, j) of that triangle then set to `v`. */
static void *spd_with(tessera_dtype_t dt, tessera_uplo_t uplo, int64_t i, int64_t j, zc_t v) {
  void *a = lc_alloc(dt, N * N);
  tt_rng_t r = tt_rng(7);
  free(lc_gen_hpd(dt, uplo, N, a, N, &r));
  if (!lc_in_tri(uplo, i, j)) {
    int64_t t = i;
    i = j;
    j = t;
  }
  lc_set(dt, a, (size_t)(i + j * N), v);
  return a;
}

/* Makes the last error a known text, so a call that leaves it alone is seen. */
static void set_known_error(tessera_context_t *ctx) {
  assert_int_equal(tessera_potrf(ctx, (tessera_uplo_t)'X', TESSERA_F64, 1, NULL, 1), -2);
  assert_non_null(strstr(tessera_last_error(ctx), "argument 2"));
}

/* The call returned `rc` and the last error now holds a text naming `word` (not the one
 * set_known_error left). */
static void assert_says(const tessera_context_t *ctx, int rc, int want, const char *word) {
  const char *e = tessera_last_error(ctx);
  if (rc != want) fail_msg("status %d, expected %d (%s)", rc, want, e);
  if (strstr(e, "potrf: argument 2") || !strstr(e, word))
    fail_msg("status %d: last error \"%s\" does not say \"%s\"", rc, e, word);
}

static void test_info_messages(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(TILE);
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int u = 0; u < 2; u++) {
      tessera_dtype_t dt = lc_dtypes[d];
      tessera_uplo_t uplo = lc_uplos[u];
      /* a negative pivot at order 6 */
      void *a = spd_with(dt, uplo, 5, 5, -1.0);
      set_known_error(ctx);
      assert_says(ctx, tessera_potrf(ctx, uplo, dt, N, a, N), 6, "order 6");
      assert_says(ctx, 6, 6, "not positive definite");
      free(a);
      /* the same through posv */
      a = spd_with(dt, uplo, 5, 5, -1.0);
      void *b = lc_alloc(dt, N);
      memset(b, 0, (size_t)N * lc_esize(dt));
      set_known_error(ctx);
      assert_says(ctx, tessera_posv(ctx, uplo, dt, N, 1, a, N, b, N), 6, "order 6");
      free(a);
      /* NaN on the diagonal at order 10, then off it (row 13, column 4): both named */
      a = spd_with(dt, uplo, 9, 9, NAN);
      set_known_error(ctx);
      assert_says(ctx, tessera_potrf(ctx, uplo, dt, N, a, N), 10, "NaN");
      free(a);
      a = spd_with(dt, uplo, 12, 3, NAN);
      set_known_error(ctx);
      int rc = tessera_potrf(ctx, uplo, dt, N, a, N);
      assert_true(rc > 0);
      assert_says(ctx, rc, rc, "NaN");
      free(a);
      /* potri of a factor with a zero on its diagonal (order 3) */
      a = spd_with(dt, uplo, 2, 2, 0.0);
      set_known_error(ctx);
      assert_says(ctx, tessera_potri(ctx, uplo, dt, N, a, N), 3, "singular");
      free(a);
      free(b);
    }
  lc_finalize(ctx);
}

/* tessera_strerror says what to do, not which formula the status follows. */
static void test_strerror_sentences(void **state) {
  (void)state;
  int codes[] = {1, 7, -1, -5};
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
    const char *s = tessera_strerror(codes[i]);
    assert_null(strstr(s, "-status"));
    assert_null(strstr(s, "order info"));
    assert_non_null(strstr(s, "tessera_last_error"));
  }
  assert_non_null(strstr(tessera_strerror(3), "NaN"));
}

/* The descriptor calls' failures: what each returns and a word its message holds. */
static const struct {
  int want;
  const char *word;
} matrix_cases[] = {
    {-2, "matrix_create"},
    {-3, "rows"},
    {-4, "columns"},
    {-5, "tile rows"},
    {-6, "tile columns"},
    {-7, "output"},
    {-7, "NULL"},
    {-8, "leading dimension"},
    {-2, "memory node"},
    {-8, "NULL"},
    {-9, "leading dimension"},
    {-5, "view_panels"},
    {-2, "matrix_import"},
    {-3, "leading dim"},
    {-2, "matrix_export"},
    {-3, "leading dim"},
    {TESSERA_ERR_NOMEM, "GiB of host memory"},
};

/* Runs failing call i of matrix_cases; M is a 4 x 4 descriptor, a a 4 x 4 array. */
static int matrix_case(size_t i, tessera_context_t *ctx, tessera_matrix_t *M, double *a) {
  tessera_matrix_t *A = NULL;
  const tessera_dtype_t d = TESSERA_F64;
  void *panel[1] = {a};
  int nodes[1] = {TESSERA_HOST_NODE}, bad_node = tessera_memory_node_count(ctx);
  int64_t huge = INT64_C(1) << 30; /* 2^60 tiles of 1 x 1: a tile list beyond any host */
  switch (i) {
  case 0:
    return tessera_matrix_create(ctx, (tessera_dtype_t)9, 4, 4, 2, 2, &A);
  case 1:
    return tessera_matrix_create(ctx, d, -1, 4, 2, 2, &A);
  case 2:
    return tessera_matrix_create(ctx, d, 4, -1, 2, 2, &A);
  case 3:
    return tessera_matrix_create(ctx, d, 4, 4, 0, 2, &A);
  case 4:
    return tessera_matrix_create(ctx, d, 4, 4, 2, 0, &A);
  case 5:
    return tessera_matrix_create(ctx, d, 4, 4, 2, 2, NULL);
  case 6:
    return tessera_matrix_view(ctx, d, 4, 4, 2, 2, NULL, 4, &A);
  case 7:
    return tessera_matrix_view(ctx, d, 4, 4, 2, 2, a, 3, &A);
  case 8:
    return tessera_matrix_view_on(ctx, bad_node, d, 4, 4, 2, 2, a, 4, &A);
  case 9:
    return tessera_matrix_view_on(ctx, 0, d, 4, 4, 2, 2, NULL, 4, &A);
  case 10:
    return tessera_matrix_view_on(ctx, 0, d, 4, 4, 2, 2, a, 3, &A);
  case 11:
    return tessera_matrix_view_panels(ctx, d, 4, 4, 0, 2, 4, 1, panel, nodes, 4, &A);
  case 12:
    return tessera_matrix_import(M, NULL, 4);
  case 13:
    return tessera_matrix_import(M, a, 3);
  case 14:
    return tessera_matrix_export(M, NULL, 4);
  case 15:
    return tessera_matrix_export(M, a, 3);
  default:
    return tessera_matrix_create(ctx, d, huge, huge, 1, 1, &A);
  }
}

/* Every negative status of the descriptor calls sets its own message (matrix.c). */
static void test_matrix_messages(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(TILE);
  double a[16] = {0};
  tessera_matrix_t *M = NULL;
  assert_int_equal(tessera_matrix_create(ctx, TESSERA_F64, 4, 4, 2, 2, &M), 0);
  for (size_t i = 0; i < sizeof matrix_cases / sizeof matrix_cases[0]; i++) {
    set_known_error(ctx);
    assert_says(ctx, matrix_case(i, ctx, M, a), matrix_cases[i].want, matrix_cases[i].word);
  }
  assert_int_equal(tessera_matrix_destroy(M), 0);
  lc_finalize(ctx);
}

/* A descriptor larger than the host fails at once with TESSERA_ERR_NOMEM and a message, full or
 * triangle-only, instead of allocating what the kernel overcommits. */
static void test_larger_than_the_host(void **state) {
  (void)state;
  tessera_context_t *ctx = lc_context(TILE);
  tessera_matrix_t *A = NULL;
  int64_t n = 1000000; /* 7450 GiB in f64 */
  double t0 = tt_now();
  set_known_error(ctx);
  assert_says(ctx, tessera_matrix_create(ctx, TESSERA_F64, n, n, 1024, 1024, &A), TESSERA_ERR_NOMEM,
              "GiB of host memory");
  set_known_error(ctx);
  assert_says(ctx, tessera_matrix_create_triangle(ctx, TESSERA_F64, TESSERA_LOWER, n, 1024, &A),
              TESSERA_ERR_NOMEM, "GiB of host memory");
  set_known_error(ctx);
  assert_says(ctx, tessera_matrix_create_triangle(ctx, TESSERA_C128, TESSERA_UPPER, n, 512, &A),
              TESSERA_ERR_NOMEM, "this host has");
  assert_null(A);
  assert_true(tt_now() - t0 < 5.0);
  /* what fits is still made */
  assert_int_equal(tessera_matrix_create_triangle(ctx, TESSERA_F64, TESSERA_UPPER, 300, 64, &A), 0);
  assert_int_equal(tessera_matrix_destroy(A), 0);
  lc_finalize(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_info_messages),
      cmocka_unit_test(test_strerror_sentences),
      cmocka_unit_test(test_matrix_messages),
      cmocka_unit_test(test_larger_than_the_host),
  };
  tt_watchdog(300);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
