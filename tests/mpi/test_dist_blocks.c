/* Views of blocks held in place over the processes (tessera_matrix_view_blocks), as a
 * framework's array sharded over a mesh of devices: each process allocates only the blocks it
 * owns, in arrays of its own. Tile potrf (both triangles), potrs with B another view of blocks
 * laid out otherwise, and logdet on column panels and 2D grids of blocks whose owners are uneven
 * and not block-cyclic, sizes that are not tile multiples, every dtype: the results written in
 * place into every process's arrays (put together over the processes) have the one-process
 * residuals, the arrays' padding rows stay untouched, and tessera_matrix_tile_owner gives each
 * tile its block's process; a matrix that is not positive definite gives LAPACK's info
 * everywhere. LU (getrf, getrs 'N' and 'T') on blocks that are column panels of different
 * processes with B one block of the last process; a singular matrix gives its info everywhere.
 * The same on tessera's own layout (tessera_matrix_fit: the Cholesky family on the fitted grid's
 * block-cyclic tiles of one triangle, LU on cyclic column panels), the results brought back into
 * the blocks (tessera_tile_lacpy); fit's and lacpy's bad arguments refused alike everywhere; the
 * cost model that decides whether the copy pays.
 * Owners tables that differ, a block's process passing it NULL, a memory node that does not exist,
 * block sizes that are not tile multiples: the same status and a message everywhere. Without a
 * communicator, a 2 x 2 grid of blocks of this process alone. */
/* ctest-label: mpi */
/* ctest-mpi-procs: 1 2 3 4 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../linalg/lu_common.h"
#include "linalg/loops/policy.h"
#include "mpi_common.h"
#include <tessera/distribution.h>

enum { MAXB = 16 }; /* blocks of a view at most */

/* A view's blocks: bm x bn of brows x bcols (the last row and column smaller), block k = bi + bj *
 * bm of process owner[k]; this process's own in a[k] (leading dimension ld, NaN padding),
 * NULL for the others. */
typedef struct {
  tessera_dtype_t dt;
  int64_t m, n, brows, bcols, ld, bm, bn;
  int owner[MAXB], node[MAXB];
  void *a[MAXB];
  tessera_matrix_t *X;
} blocks_t;

static int64_t rows_of(const blocks_t *b, int64_t bi) {
  const int64_t r = b->m - bi * b->brows;
  return r < b->brows ? r : b->brows;
}

static int64_t cols_of(const blocks_t *b, int64_t bj) {
  const int64_t c = b->n - bj * b->bcols;
  return c < b->bcols ? c : b->bcols;
}

/* The blocks of the m x n array src (leading dimension lds, the same on every process) whose
 * owners are pat[k] % the process count, copied into arrays of this process's own blocks with
 * `pad` rows of NaN below each, then viewed in tiles of mb x nb. */
static blocks_t make(tessera_dtype_t dt, int64_t m, int64_t n, int64_t brows, int64_t bcols,
                     int64_t pad, const int *pat, const void *src, int64_t lds, int64_t mb,
                     int64_t nb) {
  blocks_t b = {.dt = dt, .m = m, .n = n, .brows = brows, .bcols = bcols};
  b.bm = (m + brows - 1) / brows, b.bn = (n + bcols - 1) / bcols;
  b.ld = (m < brows ? m : brows) + pad;
  assert_true(b.bm * b.bn <= MAXB);
  for (int64_t bj = 0; bj < b.bn; bj++)
    for (int64_t bi = 0; bi < b.bm; bi++) {
      const int64_t k = bi + bj * b.bm, cols = cols_of(&b, bj);
      b.owner[k] = pat[k] % g_size;
      if (b.owner[k] != g_rank) continue;
      b.a[k] = lc_alloc(dt, (size_t)(b.ld * cols));
      lc_fill_nan(dt, b.a[k], (size_t)(b.ld * cols));
      for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < rows_of(&b, bi); i++)
          lc_set(dt, b.a[k], (size_t)(i + j * b.ld),
                 lc_get(dt, src, (size_t)(bi * brows + i + (bj * bcols + j) * lds)));
    }
  const int rc = tessera_matrix_view_blocks(g_ctx, g_comm, dt, m, n, mb, nb, brows, bcols, b.a,
                                            b.node, b.owner, b.ld, &b.X);
  if (rc) fail_msg("process %d: view_blocks = %d (%s)", g_rank, rc, tessera_last_error(g_ctx));
  for (int64_t j = 0; j * nb < n; j++) /* each tile on its block's process */
    for (int64_t i = 0; i * mb < m; i++) {
      const int want = b.owner[(i * mb / brows) + (j * nb / bcols) * b.bm];
      if (tessera_matrix_tile_owner(b.X, i, j) != want)
        fail_msg("tile (%lld, %lld) owned by %d, its block's process is %d", (long long)i,
                 (long long)j, tessera_matrix_tile_owner(b.X, i, j), want);
    }
  return b;
}

/* The whole matrix (leading dimension m) on every process: each process's blocks placed in
 * zeros, summed over the processes; the padding of this process's blocks is still NaN. */
static void *gather(const blocks_t *b) {
  const size_t count = (size_t)(b->m * b->n);
  void *out = lc_alloc(b->dt, count ? count : 1);
  for (int64_t bj = 0; bj < b->bn; bj++)
    for (int64_t bi = 0; bi < b->bm; bi++) {
      const void *blk = b->a[bi + bj * b->bm];
      if (!blk) continue;
      for (int64_t j = 0; j < cols_of(b, bj); j++)
        for (int64_t i = 0; i < b->ld; i++) {
          const zc_t v = lc_get(b->dt, blk, (size_t)(i + j * b->ld));
          if (i < rows_of(b, bi))
            lc_set(b->dt, out, (size_t)(bi * b->brows + i + (bj * b->bcols + j) * b->m), v);
          else if (!isnan(creal(v)))
            fail_msg("process %d: block (%lld, %lld) padding (%lld, %lld) written", g_rank,
                     (long long)bi, (long long)bj, (long long)i, (long long)j);
        }
    }
  const int rc = tessera_comm_allreduce(g_comm, out, out, count, (tessera_comm_type_t)b->dt,
                                        TESSERA_SUM, NULL);
  if (rc) fail_msg("allreduce: %d (%s)", rc, tessera_comm_last_error(g_comm));
  return out;
}

static void drop(blocks_t *b) {
  if (b->X) assert_int_equal(tessera_matrix_destroy(b->X), 0);
  for (int k = 0; k < MAXB; k++) free(b->a[k]);
  b->X = NULL;
}

/* A layout of blocks: their sizes in tiles (0: spanning the dimension) and the owners'
 * pattern. */
typedef struct {
  const char *name;
  int64_t brows, bcols; /* in tiles */
  int pat[MAXB];
} layout_t;

static const layout_t layouts[] = {
    {"panels, process 0 holding most", 0, 2, {0, 0, 1, 2, 3, 0}},
    {"panels of one tile, cyclic", 0, 1, {0, 1, 2, 3, 4, 5, 6, 7}},
    {"2D grid of blocks", 3, 2, {1, 0, 0, 3, 2, 1, 3, 0, 2}},
    {"2D grid of blocks, process 0 first", 2, 2, {0, 2, 1, 0, 3, 0, 1, 2, 0}},
};

/* potrf, potrs (B in one block column of 2-tile blocks, owned by the last process or by process
 * 0) and logdet on a view of an HPD matrix of order n in tiles of nb laid out as L. */
/* A copy of view X on tessera's layout (part `part`), its tiles on the fitted grid's owners. */
static tessera_matrix_t *fit(tessera_matrix_t *X, tessera_layout_t layout, char part) {
  tessera_matrix_t *F = NULL;
  const int rc = tessera_matrix_fit(X, layout, part, TESSERA_FIT_ALWAYS, &F);
  if (rc) fail_msg("process %d: matrix_fit = %d (%s)", g_rank, rc, tessera_last_error(g_ctx));
  const tessera_grid_t g =
      layout == TESSERA_LAYOUT_PANELS ? (tessera_grid_t){1, g_size} : tessera_grid_fitted(g_size);
  assert_int_equal(g.p * g.q, g_size);
  assert_true(layout == TESSERA_LAYOUT_PANELS || g.p >= g.q);
  for (int64_t j = 0; j < 4; j++) /* the first tiles of the part (-1: beyond the matrix) */
    for (int64_t i = 0; i < 4; i++)
      if ((part == 'L'   ? i >= j
           : part == 'U' ? i <= j
                         : true) &&
          tessera_matrix_tile_owner(F, i, j) >= 0 &&
          tessera_matrix_tile_owner(F, i, j) != tessera_grid_owner(g, i, j))
        fail_msg("fitted tile (%lld, %lld) owned by %d, the grid's owner is %d", (long long)i,
                 (long long)j, tessera_matrix_tile_owner(F, i, j), tessera_grid_owner(g, i, j));
  return F;
}

/* The fitted copy F's part back into view X, F gone. */
static void unfit(tessera_matrix_t *F, tessera_matrix_t *X, const char *what) {
  const int rc = tessera_tile_lacpy(F, X);
  if (rc) fail_msg("%s: lacpy back = %d (%s)", what, rc, tessera_last_error(g_ctx));
  assert_int_equal(tessera_matrix_destroy(F), 0);
}

static void chol_case(tessera_dtype_t dt, tessera_uplo_t uplo, int64_t n, int64_t nb,
                      const layout_t *L, int64_t pad, unsigned seed, bool fitted) {
  const int64_t nrhs = 3;
  tt_rng_t r = tt_rng(seed); /* the same matrix on every process */
  void *a = lc_alloc(dt, (size_t)(n * n)), *rhs = lc_alloc(dt, (size_t)(n * nrhs));
  zc_t *full = lc_gen_hpd(dt, uplo, n, a, n, &r);
  lc_fill_random(dt, rhs, n, nrhs, n, &r);
  zc_t *bz = lc_promote(dt, n, nrhs, rhs, n);
  int last[MAXB];
  for (int k = 0; k < MAXB; k++) last[k] = seed % 2 ? g_size - 1 : 0;
  blocks_t A =
      make(dt, n, n, L->brows ? L->brows * nb : n, L->bcols * nb, pad, L->pat, a, n, nb, nb);
  blocks_t B = make(dt, n, nrhs, 2 * nb, nrhs, 1, last, rhs, n, nb, nb);
  char what[200];
  snprintf(what, sizeof what, "%d processes, %s%s, %s %c, n=%lld nb=%lld", g_size, L->name,
           fitted ? " fitted" : "", lc_name(dt), (char)uplo, (long long)n, (long long)nb);
  tessera_matrix_t *F = fitted ? fit(A.X, TESSERA_LAYOUT_TILES, (char)uplo) : A.X;
  int rc = tessera_tile_potrf(uplo, F);
  if (rc) fail_msg("%s: potrf = %d (%s)", what, rc, tessera_last_error(g_ctx));
  rc = tessera_tile_potrs(uplo, F, B.X);
  if (rc) fail_msg("%s: potrs = %d (%s)", what, rc, tessera_last_error(g_ctx));
  double logdet = NAN, ref = 0;
  rc = tessera_tile_logdet(uplo, F, &logdet);
  if (rc) fail_msg("%s: logdet = %d (%s)", what, rc, tessera_last_error(g_ctx));
  if (fitted) unfit(F, A.X, what);
  void *f = gather(&A), *x = gather(&B);
  const double rf = lc_potrf_resid(dt, uplo, n, full, f, n);
  const double rs = lc_solve_resid(dt, n, nrhs, full, x, n, bz);
  for (int64_t i = 0; i < n; i++) ref += 2 * log(creal(lc_get(dt, f, (size_t)(i + i * n))));
  if (!(rf < 10) || !(rs < 10)) fail_msg("%s: residuals %g (factor) %g (solve)", what, rf, rs);
  if (!(fabs(logdet - ref) <= 1e-10 * (1 + fabs(ref))))
    fail_msg("%s: logdet %.17g, the factor's diagonal gives %.17g", what, logdet, ref);
  drop(&A);
  drop(&B);
  free(f), free(x), free(a), free(rhs), free(full), free(bz);
}

static void test_cholesky(void **state) {
  (void)state;
  const int64_t sizes[] = {13, 24}, nb = 4;
  unsigned seed = 1;
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int u = 0; u < 2; u++)
      for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
        for (int s = 0; s < 2; s++, seed++) /* padding rows 0, 1 or 2; fitted on odd seeds */
          chol_case(lc_dtypes[d], lc_uplos[u], sizes[s], nb, &layouts[l], (int64_t)(seed % 3), seed,
                    seed % 2);
}

/* A negative pivot at 10 of a 2 x 2 grid of blocks: LAPACK's info on every process, both
 * triangles. */
static void test_not_positive_definite(void **state) {
  (void)state;
  const int64_t n = 16, nb = 4, bad = 9;
  const int pat[] = {1, 0, 0, 1};
  for (int u = 0; u < 2; u++) {
    tt_rng_t r = tt_rng(7);
    double *a = malloc((size_t)(n * n) * sizeof *a);
    free(lc_gen_hpd(TESSERA_F64, lc_uplos[u], n, a, n, &r));
    a[bad + bad * n] = -1;
    blocks_t A = make(TESSERA_F64, n, n, 8, 8, 0, pat, a, n, nb, nb);
    const int rc = tessera_tile_potrf(lc_uplos[u], A.X);
    if (rc != bad + 1)
      fail_msg("process %d: potrf %c of a matrix not positive definite at %lld: %d", g_rank,
               (char)lc_uplos[u], (long long)bad + 1, rc);
    drop(&A);
    free(a);
  }
}

/* getrf, getrs 'N' and 'T' on a view of column panels (blocks spanning the rows, two nb x nb
 * tiles wide) owned in reverse order, B one block of the last process; the factors written in
 * place have getrf's residual, the solutions op(A)'s backward error; then a singular matrix. */
static void test_lu(void **state) {
  (void)state;
  const int64_t nb = 4, nrhs = 2;
  const int64_t sizes[] = {13, 20};
  int pat[MAXB], last[MAXB];
  for (int k = 0; k < MAXB; k++) last[k] = g_size - 1;
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int s = 0; s < 2; s++) {
      const bool fitted = (d + s) % 2; /* on tessera's column panels, half of the cases */
      const tessera_dtype_t dt = lc_dtypes[d];
      const int64_t n = sizes[s], bn = (n + 2 * nb - 1) / (2 * nb);
      for (int64_t k = 0; k < bn; k++) pat[k] = (int)(bn - 1 - k + s);
      mat_t x = lu_gen(dt, n, n, s, (uint64_t)(10 + d * 2 + s));
      const int64_t mb = nb; /* square tiles: LU works on panels copied from them */
      blocks_t A = make(dt, n, n, n, 2 * nb, 1, pat, x.a, x.lda, mb, nb);
      int *ipiv = calloc((size_t)n + 1, sizeof *ipiv);
      char what[120];
      snprintf(what, sizeof what, "%d processes, %s n=%lld%s", g_size, lc_name(dt), (long long)n,
               fitted ? " fitted" : "");
      tessera_matrix_t *F = fitted ? fit(A.X, TESSERA_LAYOUT_PANELS, 0) : A.X;
      int rc = tessera_tile_getrf(F, ipiv);
      if (rc) fail_msg("%s: getrf = %d (%s)", what, rc, tessera_last_error(g_ctx));
      if (fitted) { /* the factors into the blocks, and the solves on a fresh fitted copy */
        unfit(F, A.X, what);
        F = fit(A.X, TESSERA_LAYOUT_PANELS, 0);
      }
      void *f = gather(&A);
      mat_t fx = x;
      fx.lda = n; /* the gathered factors' leading dimension */
      const double res = lu_resid(&fx, f, ipiv);
      if (!(res < 10)) fail_msg("%s: getrf residual %g", what, res);
      const tessera_op_t ops[2] = {TESSERA_NOTRANS, TESSERA_TRANS};
      for (int t = 0; t < 2; t++) {
        mat_t b = lu_gen(dt, n, nrhs, 0, (uint64_t)(100 + d * 4 + s * 2 + t));
        blocks_t B = make(dt, n, nrhs, n, nrhs, 2, last, b.a, b.lda, mb, nrhs);
        rc = tessera_tile_getrs(ops[t], F, ipiv, B.X);
        if (rc)
          fail_msg("%s: getrs %c = %d (%s)", what, (char)ops[t], rc, tessera_last_error(g_ctx));
        void *y = gather(&B);
        const double rr = op_resid(dt, ops[t], n, nrhs, x.full, y, n, b.full);
        if (!(rr < 20)) fail_msg("%s: getrs %c backward error %g", what, (char)ops[t], rr);
        drop(&B);
        free(y);
        lu_mat_free(&b);
      }
      if (fitted) assert_int_equal(tessera_matrix_destroy(F), 0);
      drop(&A);
      /* column 5 zero: U(6, 6) is exactly zero */
      for (int64_t i = 0; i < n; i++) lc_set(dt, x.a, (size_t)(i + 5 * x.lda), 0.0);
      A = make(dt, n, n, n, 2 * nb, 0, pat, x.a, x.lda, mb, nb);
      rc = tessera_tile_getrf(A.X, ipiv);
      if (rc != 6) fail_msg("process %d: %s: getrf of a singular matrix = %d", g_rank, what, rc);
      drop(&A);
      free(f), free(ipiv);
      lu_mat_free(&x);
    }
}

/* view_blocks expecting status `want` on every process (with a message), nothing made. */
static void refused(int64_t m, int64_t n, int64_t brows, int64_t bcols, void *const *a,
                    const int *nodes, const int *owners, int64_t lda, int want, const char *what) {
  tessera_matrix_t *X = NULL;
  const int rc = tessera_matrix_view_blocks(g_ctx, g_comm, TESSERA_F64, m, n, 4, 4, brows, bcols, a,
                                            nodes, owners, lda, &X);
  if (rc != want)
    fail_msg("process %d: %s: status %d, expected %d (%s)", g_rank, what, rc, want,
             rc ? tessera_last_error(g_ctx) : "");
  assert_null(X);
  lc_assert_error(g_ctx);
}

static void test_mismatch(void **state) {
  (void)state;
  const int64_t n = 16;
  double *blk[4];
  for (int k = 0; k < 4; k++) blk[k] = calloc((size_t)(n * 8), sizeof(double));
  void *a[4] = {blk[0], blk[1], blk[2], blk[3]};
  int nodes[4] = {0, 0, 0, 0}, owners[4];
  for (int k = 0; k < 4; k++) owners[k] = k % g_size;
  if (g_size > 1) { /* process 0 deals the blocks otherwise */
    int other[4];
    for (int k = 0; k < 4; k++) other[k] = g_rank == 0 ? (k + 1) % g_size : owners[k];
    refused(n, n, 8, 8, a, nodes, other, 8, -12, "owners that differ");
  }
  int beyond[4] = {0, 0, 0, g_size};
  refused(n, n, 8, 8, a, nodes, beyond, 8, -12, "an owner beyond the processes");
  /* every process passes NULL for one block it owns (block 0 on process 0, the others' own) */
  void *holes[4] = {a[0], a[1], a[2], a[3]};
  for (int k = 0; k < 4; k++)
    if (owners[k] == g_rank) {
      holes[k] = NULL;
      break;
    }
  refused(n, n, 8, 8, holes, nodes, owners, 8, -10, "a NULL block on every process");
  int bad_nodes[4] = {0, 0, 0, 0};
  for (int k = 0; k < 4; k++) bad_nodes[k] = owners[k] == g_rank ? 7 : 0;
  refused(n, n, 8, 8, a, bad_nodes, owners, 8, -11, "memory node 7 on every process");
  refused(n, n, 6, 8, a, nodes, owners, 8, -8, "blocks of 6 rows in tiles of 4");
  refused(n, n, 8, 6, a, nodes, owners, 8, -9, "blocks of 6 columns in tiles of 4");
  refused(n, n, 8, 8, a, nodes, owners, 7, -13, "lda 7 for blocks of 8 rows");
  for (int k = 0; k < 4; k++) free(blk[k]);
}

/* matrix_fit and tile_lacpy refusing bad arguments: the same status on every process, a
 * message, nothing made. */
static void test_fit_refused(void **state) {
  (void)state;
  const int64_t n = 16, nb = 4;
  int pat[MAXB] = {0, 1, 2, 3};
  double *a = calloc((size_t)(n * n), sizeof *a);
  blocks_t A = make(TESSERA_F64, n, n, n, 2 * nb, 0, pat, a, n, nb, nb);
  blocks_t R = make(TESSERA_F64, n, 8, n, 2 * nb, 0, pat, a, n, nb, nb); /* 16 x 8 */
  blocks_t P = make(TESSERA_F64, n, n, n, 2 * nb, 0, pat, a, n, n, nb);  /* column panels */
  blocks_t T = make(TESSERA_F64, n, n, 8, 8, 0, pat, a, n, 8, nb);       /* 8 x 4 tiles */
  tessera_matrix_t *F = NULL, *L = NULL;
  assert_int_equal(tessera_matrix_create(g_ctx, TESSERA_F64, n, n, nb, nb, &L), 0);
  const struct {
    tessera_matrix_t *X;
    int layout;
    char part;
    int want;
    const char *what;
  } cases[] = {
      {L, TESSERA_LAYOUT_TILES, 0, -1, "a matrix of this process alone"},
      {A.X, 7, 0, -2, "layout 7"},
      {A.X, TESSERA_LAYOUT_TILES, 'X', -3, "part 'X'"},
      {A.X, TESSERA_LAYOUT_PANELS, 'L', -3, "a triangle in column panels"},
      {R.X, TESSERA_LAYOUT_TILES, 'U', -3, "a triangle of a 16 x 8 matrix"},
      {T.X, TESSERA_LAYOUT_TILES, 0, -1, "square tiles from 8 x 4 tiles"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const int rc = tessera_matrix_fit(cases[c].X, (tessera_layout_t)cases[c].layout, cases[c].part,
                                      TESSERA_FIT_ALWAYS, &F);
    if (rc != cases[c].want)
      fail_msg("process %d: matrix_fit of %s = %d, expected %d", g_rank, cases[c].what, rc,
               cases[c].want);
    assert_null(F);
    lc_assert_error(g_ctx);
  }
  assert_int_equal(tessera_matrix_fit(A.X, TESSERA_LAYOUT_TILES, 0, (tessera_fit_t)9, &F), -4);
  lc_assert_error(g_ctx);
  assert_int_equal(tessera_matrix_fit(A.X, TESSERA_LAYOUT_TILES, 0, TESSERA_FIT_ALWAYS, NULL), -5);
  assert_int_equal(tessera_matrix_fit(NULL, TESSERA_LAYOUT_TILES, 0, TESSERA_FIT_ALWAYS, &F), -1);
  /* lacpy: sizes that differ, operands of this process and distributed, NULL */
  assert_int_equal(tessera_tile_lacpy(A.X, R.X), -2);
  lc_assert_error(g_ctx);
  assert_int_equal(tessera_tile_lacpy(A.X, L), -2);
  lc_assert_error(g_ctx);
  assert_int_equal(tessera_tile_lacpy(NULL, A.X), -1);
  /* a panels' copy and a tiles' copy of one matrix meet; panels are made from 8 x 4 tiles */
  assert_int_equal(tessera_tile_lacpy(P.X, A.X), 0);
  assert_int_equal(tessera_matrix_fit(T.X, TESSERA_LAYOUT_PANELS, 0, TESSERA_FIT_ALWAYS, &F), 0);
  assert_int_equal(tessera_tile_lacpy(F, T.X), 0);
  assert_int_equal(tessera_matrix_destroy(F), 0);
  assert_int_equal(tessera_matrix_destroy(L), 0);
  drop(&A), drop(&R), drop(&P), drop(&T);
  free(a);
}

/* The cost model behind TESSERA_FIT_AUTO: a step lasts as long as its busiest process's updates,
 * so block-cyclic owners beat blocks of columns, for tiles and for panels; a matrix already on
 * tessera's layout is its own fit (nothing moves, nothing is saved). */
static void test_fit_model(void **state) {
  (void)state;
  /* one process, panels 0, 1, 2: updated at steps before their index, 2 + 1 + 0 */
  const int one[3] = {0, 0, 0};
  assert_true(tsr_layout_seconds(one, 1, 3, 1, 3, NULL, 1) == 3);
  /* 8 x 8 tiles of a lower triangle over 2 processes: blocks of 4 columns against the fitted
   * 2 x 1 grid's rows; panels of 8 in blocks of 4 against cyclic ones */
  int blocks[64], cyclic[64], pblocks[8], pcyclic[8];
  for (int j = 0; j < 8; j++) {
    for (int i = 0; i < 8; i++) {
      blocks[i + 8 * j] = i < j ? -1 : j / 4;
      cyclic[i + 8 * j] = i < j ? -1 : tessera_grid_owner(tessera_grid_fitted(2), i, j);
    }
    pblocks[j] = j / 4;
    pcyclic[j] = j % 2;
  }
  const double tb = tsr_layout_seconds(blocks, 8, 8, 2, 8, NULL, 1);
  const double tc = tsr_layout_seconds(cyclic, 8, 8, 2, 8, NULL, 1);
  assert_true(tc < tb);
  const double scale[8] = {8, 7, 6, 5, 4, 3, 2, 1};
  assert_true(tsr_layout_seconds(pcyclic, 1, 8, 2, 8, scale, 1) <
              tsr_layout_seconds(pblocks, 1, 8, 2, 8, scale, 1));
  assert_true(tsr_fit_pays(tb - tc, (tb - tc) / 2));
  assert_false(tsr_fit_pays(0, 0));
  /* blocks of one tile owned as the fitted grid deals them: no copy */
  const int64_t n = 16, nb = 4;
  int pat[MAXB];
  const tessera_grid_t g = tessera_grid_fitted(g_size);
  for (int bj = 0; bj < 4; bj++)
    for (int bi = 0; bi < 4; bi++) pat[bi + 4 * bj] = tessera_grid_owner(g, bi, bj);
  double *a = calloc((size_t)(n * n), sizeof *a);
  blocks_t A = make(TESSERA_F64, n, n, nb, nb, 0, pat, a, n, nb, nb);
  tessera_matrix_t *F = NULL;
  const tessera_fit_t whens[2] = {TESSERA_FIT_AUTO, TESSERA_FIT_AUTO_BACK};
  for (int w = 0; w < 2; w++) {
    assert_int_equal(tessera_matrix_fit(A.X, TESSERA_LAYOUT_TILES, 'L', whens[w], &F), 0);
    assert_ptr_equal(F, A.X);
  }
  drop(&A);
  free(a);
}

/* comm NULL: a 2 x 2 grid of blocks of this process alone, owners NULL; potrf's residual. */
static void test_no_comm(void **state) {
  (void)state;
  const int64_t n = 13, nb = 4, b = 8, ld = 9;
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int u = 0; u < 2; u++) {
      const tessera_dtype_t dt = lc_dtypes[d];
      tt_rng_t r = tt_rng((unsigned)(300 + d * 2 + u));
      void *a = lc_alloc(dt, (size_t)(n * n)), *blk[4];
      zc_t *full = lc_gen_hpd(dt, lc_uplos[u], n, a, n, &r);
      int nodes[4] = {0, 0, 0, 0};
      for (int bj = 0; bj < 2; bj++)
        for (int bi = 0; bi < 2; bi++) {
          blk[bi + 2 * bj] = lc_alloc(dt, (size_t)(ld * b));
          for (int64_t j = bj * b; j < n && j < (bj + 1) * b; j++)
            for (int64_t i = bi * b; i < n && i < (bi + 1) * b; i++)
              lc_set(dt, blk[bi + 2 * bj], (size_t)(i - bi * b + (j - bj * b) * ld),
                     lc_get(dt, a, (size_t)(i + j * n)));
        }
      tessera_matrix_t *A = NULL;
      int rc =
          tessera_matrix_view_blocks(g_ctx, NULL, dt, n, n, nb, nb, b, b, blk, nodes, NULL, ld, &A);
      if (rc) fail_msg("view_blocks without comm = %d (%s)", rc, tessera_last_error(g_ctx));
      assert_int_equal(tessera_matrix_tile_owner(A, 0, 0), -1);
      rc = tessera_tile_potrf(lc_uplos[u], A);
      if (rc) fail_msg("potrf = %d (%s)", rc, tessera_last_error(g_ctx));
      assert_int_equal(tessera_matrix_destroy(A), 0);
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++)
          lc_set(dt, a, (size_t)(i + j * n),
                 lc_get(dt, blk[i / b + 2 * (j / b)], (size_t)(i % b + (j % b) * ld)));
      const double res = lc_potrf_resid(dt, lc_uplos[u], n, full, a, n);
      if (!(res < 10))
        fail_msg("%s %c without comm: potrf residual %g", lc_name(dt), (char)lc_uplos[u], res);
      /* a block size that is not a tile multiple, alone too */
      assert_int_equal(
          tessera_matrix_view_blocks(g_ctx, NULL, dt, n, n, nb, nb, 6, b, blk, nodes, NULL, ld, &A),
          -8);
      for (int k = 0; k < 4; k++) free(blk[k]);
      free(a), free(full);
    }
}

int main(int argc, char **argv) {
  if (mpi_start(&argc, &argv)) return 2;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cholesky),    cmocka_unit_test(test_not_positive_definite),
      cmocka_unit_test(test_lu),          cmocka_unit_test(test_mismatch),
      cmocka_unit_test(test_fit_refused), cmocka_unit_test(test_fit_model),
      cmocka_unit_test(test_no_comm)};
  return mpi_finish(cmocka_run_group_tests(tests, cpu_group_setup, cpu_group_teardown));
}
