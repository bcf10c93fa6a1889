/* 2D block-cyclic distribution (tessera/distribution.h): NUMROC, and scatter / gather between a
 * LAPACK-style array on one process and every process's ScaLAPACK-style local array, over the
 * communicator's host operations.
 *
 * The root walks the processes in rank order; each process's part moves as its local array,
 * column chunks of at most CHUNK elements at a time (so no message exceeds what one operation
 * carries and the staging buffer stays bounded). Before anything moves, every process's
 * arguments are compared (one all-reduce of their lowest and highest values) together with the
 * outcome of its local checks, so a mismatch or a bad argument fails on every process alike
 * instead of leaving the others waiting. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comm/transport.h"
#include "distributed/agree.h"
#include "tessera/distribution.h"

enum { CHUNK = 1 << 24 }; /* elements a message carries at most */

int64_t tessera_numroc(int64_t n, int64_t nb, int coord, int nprocs) {
  if (n < 0 || nb < 1 || nprocs < 1 || coord < 0 || coord >= nprocs) return 0;
  const int64_t blocks = n / nb, extra = blocks % nprocs;
  int64_t rows = blocks / nprocs * nb;
  if (coord < extra)
    rows += nb;
  else if (coord == extra)
    rows += n % nb;
  return rows;
}

/* One call's arguments, and the shape of the calling process's part. */
typedef struct {
  tessera_comm_t *comm;
  tessera_grid_t grid;
  tessera_dtype_t dtype;
  int64_t m, n, mb, nb;
  int root;
  char *a;
  int64_t lda;
  char *local;
  int64_t lld;
  size_t es;
} layout_t;

/* Positions of the arguments in the calls, for the statuses. */
enum { AT_GRID = 2, AT_DTYPE, AT_M, AT_N, AT_MB, AT_NB, AT_ROOT, AT_A, AT_LDA, AT_LOCAL, AT_LLD };

/* The first invalid argument of this process's call (its position), or 0. */
static int local_check(const layout_t *L, int rank, int size) {
  if (L->grid.p < 1 || L->grid.q < 1 || (int64_t)L->grid.p * L->grid.q != size) return AT_GRID;
  if ((int)L->dtype < 0 || L->dtype >= TESSERA_NUM_DTYPES) return AT_DTYPE;
  if (L->m < 0) return AT_M;
  if (L->n < 0) return AT_N;
  if (L->mb < 1) return AT_MB;
  if (L->nb < 1) return AT_NB;
  if (L->root < 0 || L->root >= size) return AT_ROOT;
  if (rank == L->root && !L->a && L->m > 0 && L->n > 0) return AT_A;
  if (rank == L->root && L->lda < (L->m > 1 ? L->m : 1)) return AT_LDA;
  int row, col;
  tessera_grid_coords(L->grid, rank, &row, &col);
  const int64_t lr = tessera_numroc(L->m, L->mb, row, L->grid.p);
  const int64_t lc = tessera_numroc(L->n, L->nb, col, L->grid.q);
  if (!L->local && lr > 0 && lc > 0) return AT_LOCAL;
  if (L->lld < (lr > 1 ? lr : 1)) return AT_LLD;
  return 0;
}

static const char *const arg_names[] = {
    "the grid's rows", "the grid's columns", "the dtype", "m", "n", "mb", "nb", "the root"};

/* Compares a scatter's or gather's arguments across the processes, with each one's own checks. */
static int agree(const layout_t *L, const char *call) {
  tessera_comm_t *c = L->comm;
  const int64_t v[] = {L->grid.p, L->grid.q, L->dtype, L->m, L->n, L->mb, L->nb, L->root};
  const int pos[] = {AT_GRID, AT_GRID, AT_DTYPE, AT_M, AT_N, AT_MB, AT_NB, AT_ROOT};
  const int bad = local_check(L, tessera_comm_rank(c), tessera_comm_size(c));
  return tsr_dist_same(c, call, 8, v, pos, arg_names, bad);
}

/* Copies the columns [j0, j0 + cols) of the local part of grid cell (row, col), whose local array
 * has lr rows, between the global array L->a (to_global) and `buf` (leading dimension lr). */
static void move_columns(const layout_t *L, int row, int col, int64_t lr, int64_t j0, int64_t cols,
                         char *buf, int to_global) {
  for (int64_t jl = j0; jl < j0 + cols; jl++) {
    const int64_t j = (jl / L->nb * L->grid.q + col) * L->nb + jl % L->nb;
    for (int64_t il = 0; il < lr; il += L->mb) {
      const int64_t i = (il / L->mb * L->grid.p + row) * L->mb;
      const int64_t rows = lr - il < L->mb ? lr - il : L->mb;
      char *g = L->a + (size_t)(i + j * L->lda) * L->es;
      char *b = buf + (size_t)(il + (jl - j0) * lr) * L->es;
      if (to_global)
        memcpy(g, b, (size_t)rows * L->es);
      else
        memcpy(b, g, (size_t)rows * L->es);
    }
  }
}

/* Copies `cols` columns of lr rows between the local array (from column j0) and buf. */
static void move_local(const layout_t *L, int64_t lr, int64_t j0, int64_t cols, char *buf,
                       int to_local) {
  for (int64_t jl = 0; jl < cols; jl++) {
    char *loc = L->local + (size_t)((j0 + jl) * L->lld) * L->es;
    char *b = buf + (size_t)(jl * lr) * L->es;
    memcpy(to_local ? loc : b, to_local ? b : loc, (size_t)lr * L->es);
  }
}

/* Moves every process's part between the root's array and the local arrays: scatter when
 * `scatter`, else gather. */
static int exchange(const layout_t *L, int scatter) {
  tessera_comm_t *c = L->comm;
  const int rank = tessera_comm_rank(c), size = tessera_comm_size(c);
  const tessera_comm_type_t type = (tessera_comm_type_t)L->dtype;
  char *buf = NULL;
  int rc = 0;
  for (int p = 0; p < size && rc == 0; p++) {
    if (rank != L->root && rank != p) continue;
    int row, col;
    tessera_grid_coords(L->grid, p, &row, &col);
    const int64_t lr = tessera_numroc(L->m, L->mb, row, L->grid.p);
    const int64_t lc = tessera_numroc(L->n, L->nb, col, L->grid.q);
    if (lr == 0 || lc == 0) continue;
    const int64_t step = lr >= CHUNK ? 1 : CHUNK / lr;
    if (!buf) buf = malloc((size_t)(lr * (step < lc ? step : lc)) * L->es);
    if (!buf) return tsr_comm_error(c, TESSERA_ERR_NOMEM, "Out of memory for a staging buffer.");
    for (int64_t j0 = 0; j0 < lc && rc == 0; j0 += step) {
      const int64_t cols = lc - j0 < step ? lc - j0 : step;
      const size_t count = (size_t)(lr * cols);
      if (rank == L->root && scatter) move_columns(L, row, col, lr, j0, cols, buf, 0);
      if (rank == L->root && !scatter && p != rank) {
        rc = tessera_comm_recv(c, buf, count, type, p, NULL);
      } else if (rank != L->root && scatter) {
        rc = tessera_comm_recv(c, buf, count, type, L->root, NULL);
      } else if (rank == L->root && scatter && p != rank) {
        rc = tessera_comm_send(c, buf, count, type, p, NULL);
      } else if (rank != L->root && !scatter) {
        move_local(L, lr, j0, cols, buf, 0);
        rc = tessera_comm_send(c, buf, count, type, L->root, NULL);
      } else if (!scatter) {
        move_local(L, lr, j0, cols, buf, 0); /* the root's own part */
      }
      if (rc == 0 && scatter && p == rank) move_local(L, lr, j0, cols, buf, 1);
      if (rc == 0 && !scatter && rank == L->root) move_columns(L, row, col, lr, j0, cols, buf, 1);
    }
    /* the buffer was sized for the first part it staged; parts differ by at most one block */
    free(buf);
    buf = NULL;
  }
  free(buf);
  return rc;
}

static int scatter_or_gather(const layout_t *L, int scatter) {
  if (!L->comm) return -1;
  int rc = agree(L, scatter ? "tessera_scatter_2d" : "tessera_gather_2d");
  return rc ? rc : exchange(L, scatter);
}

int tessera_scatter_2d(tessera_comm_t *comm, tessera_grid_t grid, tessera_dtype_t dtype, int64_t m,
                       int64_t n, int64_t mb, int64_t nb, int root, const void *a, int64_t lda,
                       void *local, int64_t lld) {
  const layout_t L = {
      comm, grid, dtype, m, n, mb, nb, root, (char *)a, lda, local, lld, tessera_dtype_size(dtype)};
  return scatter_or_gather(&L, 1);
}

int tessera_gather_2d(tessera_comm_t *comm, tessera_grid_t grid, tessera_dtype_t dtype, int64_t m,
                      int64_t n, int64_t mb, int64_t nb, int root, void *a, int64_t lda,
                      const void *local, int64_t lld) {
  const layout_t L = {
      comm, grid, dtype, m, n, mb, nb, root, a, lda, (char *)local, lld, tessera_dtype_size(dtype)};
  return scatter_or_gather(&L, 0);
}
