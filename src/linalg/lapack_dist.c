/* LAPACK-style calls on a context over processes (tessera_config_t.distributed): the arrays live
 * on process 0 (the root). A call compares its arguments across the processes, deals the part of
 * each array the routine reads (a triangle, or all of it) over the grid as a distributed matrix,
 * runs the tile-level routine distributed, and brings back the part it writes.
 *
 * Tiles move one by one between the root's array and their owners' tiles (their home memory on
 * the host), column-major, each in messages of at most CHUNK elements: the root walks every
 * tile, each other process the tiles it owns, in the same order, so the blocking sends and
 * receives pair up without a tag. Nothing is staged beyond one tile. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist.h"
#include "linalg/linalg.h"

enum { CHUNK = 1 << 24, ROOT = 0 };

/* The communicator of ctx when it is distributed, else NULL. */
static tessera_comm_t *comm_of(const tessera_context_t *ctx) {
  return tessera_context_comm(ctx);
}

bool tsr_lapack_holds_arrays(const tessera_context_t *ctx) {
  tessera_comm_t *c = comm_of(ctx);
  return !c || tessera_comm_rank(c) == ROOT;
}

int tsr_lapack_agree(tessera_context_t *ctx, const char *f, int k, const int64_t *values,
                     const int *argno, int rc, int64_t order, int64_t *tile) {
  tessera_comm_t *c = comm_of(ctx);
  *tile = tessera_tile_for(ctx, order);
  if (!c) return rc;
  enum { MAXK = 8 };
  char names[MAXK][16];
  const char *np[MAXK];
  if (k > MAXK) return tsr_error(ctx, TESSERA_ERR_STATE, "%s: too many arguments to compare", f);
  for (int i = 0; i < k; i++) {
    snprintf(names[i], sizeof names[i], "argument %d", argno[i]);
    np[i] = names[i];
  }
  const int s = tsr_dist_same(c, f, k, values, argno, np, rc < 0 ? -rc : 0);
  if (s) /* the process at fault keeps its own message */
    return s == rc ? rc : tsr_error(ctx, s, "%s", tessera_comm_last_error(c));
  int64_t lo = *tile;
  const int a = tessera_comm_allreduce(c, tile, &lo, 1, TESSERA_COMM_I64, TESSERA_MIN, NULL);
  if (a) return tsr_error(ctx, a, "%s: %s", f, tessera_comm_last_error(c));
  *tile = lo; /* one tile size on every process: the smallest any would choose */
  return 0;
}

int tsr_lapack_root_flag(tessera_context_t *ctx, int flag) {
  tessera_comm_t *c = comm_of(ctx);
  if (!c) return flag;
  int32_t mine = tessera_comm_rank(c) == ROOT ? flag : 0, out = mine;
  return tessera_comm_allreduce(c, &mine, &out, 1, TESSERA_COMM_I32, TESSERA_MAX, NULL) ? flag
                                                                                        : out;
}

int tsr_lapack_broadcast(tessera_context_t *ctx, void *buf, size_t bytes) {
  tessera_comm_t *c = comm_of(ctx);
  if (!c || !bytes) return 0;
  /* every dtype's scalar is a whole number of 32-bit words */
  const int rc = tessera_comm_broadcast(c, buf, bytes / 4, TESSERA_COMM_I32, ROOT, NULL);
  return rc ? tsr_error(ctx, rc, "%s", tessera_comm_last_error(c)) : 0;
}

/* Tile (i, j) is in part ('L': i >= j, 'U': i <= j, 0: every tile). */
static bool in_part(char part, int64_t i, int64_t j) {
  return part == 'L' ? i >= j : part == 'U' ? i <= j : true;
}

/* Copies rows x cols elements of es bytes between column-major arrays. */
static void copy2d(char *dst, int64_t ldd, const char *src, int64_t lds, int64_t rows, int64_t cols,
                   size_t es) {
  for (int64_t j = 0; j < cols; j++)
    memcpy(dst + (size_t)(j * ldd) * es, src + (size_t)(j * lds) * es, (size_t)rows * es);
}

/* Moves part of A between the root's array `a` and the owners' tiles: scatter when to_tiles. */
static int move(tessera_matrix_t *A, char *a, int64_t lda, char part, bool to_tiles) {
  tessera_comm_t *c = A->comm;
  const int rank = tessera_comm_rank(c);
  const size_t es = tessera_dtype_size(A->dtype);
  const tessera_comm_type_t type = (tessera_comm_type_t)A->dtype;
  /* a message holds at most max(CHUNK, mb) elements of one tile */
  const int64_t most = A->mb * A->nb < (CHUNK > A->mb ? CHUNK : A->mb) ? A->mb * A->nb
                       : CHUNK > A->mb                                 ? CHUNK
                                                                       : A->mb;
  char *buf = NULL;
  int rc = 0;
  for (int64_t j = 0; j < A->nt && !rc; j++)
    for (int64_t i = 0; i < A->mt && !rc; i++) {
      const int owner = tessera_grid_owner(A->grid, i, j);
      if (!in_part(part, i, j) || (rank != ROOT && rank != owner)) continue;
      tessera_data_t *h = tsr_tile(A, i, j);
      const int64_t rows = tsr_tile_m(A, i), cols = tsr_tile_n(A, j);
      if (owner == rank && !to_tiles) rc = tessera_data_sync(A->ctx, h);
      char *t = owner == rank ? tessera_data_ptr(h) : NULL;
      const int64_t ld = owner == rank ? (int64_t)tessera_data_ld(h) : rows;
      char *g = rank == ROOT ? a + (size_t)(i * A->mb + j * A->nb * lda) * es : NULL;
      if (!rc && owner == ROOT && rank == ROOT) {
        if (to_tiles)
          copy2d(t, ld, g, lda, rows, cols, es);
        else
          copy2d(g, lda, t, ld, rows, cols, es);
        continue;
      }
      const int64_t step = rows >= CHUNK ? 1 : CHUNK / rows;
      if (!buf && !(buf = malloc((size_t)most * es)))
        return tsr_error(A->ctx, TESSERA_ERR_NOMEM, "out of memory for a tile's staging");
      for (int64_t j0 = 0; j0 < cols && !rc; j0 += step) {
        const int64_t w = cols - j0 < step ? cols - j0 : step;
        const size_t count = (size_t)(rows * w);
        if (rank == ROOT) { /* the array's columns through the staging buffer */
          char *gj = g + (size_t)(j0 * lda) * es;
          if (to_tiles) copy2d(buf, rows, gj, lda, rows, w, es);
          rc = to_tiles ? tessera_comm_send(c, buf, count, type, owner, NULL)
                        : tessera_comm_recv(c, buf, count, type, owner, NULL);
          if (!rc && !to_tiles) copy2d(gj, lda, buf, rows, rows, w, es);
        } else { /* the tile's columns, in place when they are contiguous */
          char *tj = t + (size_t)(j0 * ld) * es, *p = ld == rows ? tj : buf;
          if (!to_tiles && p == buf) copy2d(buf, rows, tj, ld, rows, w, es);
          rc = to_tiles ? tessera_comm_recv(c, p, count, type, ROOT, NULL)
                        : tessera_comm_send(c, p, count, type, ROOT, NULL);
          if (!rc && to_tiles && p == buf) copy2d(tj, ld, buf, rows, rows, w, es);
        }
      }
    }
  free(buf);
  if (rc > 0) return rc;
  return rc ? tsr_error(A->ctx, rc, "moving tiles %s process %d: %s", to_tiles ? "from" : "to",
                        ROOT, tessera_comm_last_error(c))
            : 0;
}

int tsr_lapack_scatter(tessera_context_t *ctx, tessera_dtype_t dtype, int64_t m, int64_t n,
                       int64_t nb, const void *a, int64_t lda, char part, bool in,
                       tessera_matrix_t **out) {
  int rc = tessera_matrix_create_distributed(ctx, comm_of(ctx), tessera_context_grid(ctx), dtype, m,
                                             n, nb, nb, out);
  if (rc || !in) return rc;
  rc = tsr_dist_agree((*out)->comm, move(*out, (char *)(uintptr_t)a, lda, part, true));
  if (rc) {
    tessera_matrix_destroy(*out);
    *out = NULL;
  }
  return rc;
}

int tsr_lapack_gather(tessera_matrix_t *A, void *a, int64_t lda, char part) {
  return tsr_dist_agree(A->comm, move(A, a, lda, part, false));
}
