/* What tessera_last_error says: after a potrf, posv or potri returning info > 0 (the order and,
 * for a NaN, the word NaN), after every argument error of the descriptor calls in matrix.c, and
 * after a descriptor larger than the host (TESSERA_ERR_NOMEM before anything is allocated).
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_info_messages),
      cmocka_unit_test(test_strerror_sentences),
  };
  tt_watchdog(300);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
