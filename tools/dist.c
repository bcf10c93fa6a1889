/* `tessera potrf|potrs|posv|getrf|gesv --grid PxQ` under mpirun: the routine on tile matrices
 * dealt over the P x Q processes (LU: column panels dealt over all P Q of them). Every process
 * writes its own tiles of the generated matrix (the values gen_spd or gen_dense gives those
 * positions) and the whole right-hand side; the routine runs distributed, timed between two
 * barriers; each process's tiles of the result are summed onto process 0, which computes the
 * residual against the whole generated matrix and prints the one result. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gen.h"
#include "progress.h"
#include "residual.h"

typedef struct {
  tessera_comm_t *comm;
  tessera_grid_t grid;
  tessera_context_t *ctx;
  tessera_matrix_t *A, *B;
  int rank, nb;
  int64_t n, nrhs;
  int64_t mb; /* rows of a tile: nb, or n for LU's column panels */
  bool lu;
  int *ipiv; /* LU: the pivots, on every process */
} dist_run_t;

/* Writes this process's tiles of the generated matrix into A's tiles (homed on the host). */
static void fill_own_tiles(const dist_run_t *d, tessera_dtype_t dtype) {
  const int64_t mt = (d->n + d->mb - 1) / d->mb, nt = (d->n + d->nb - 1) / d->nb;
  for (int64_t j = 0; j < nt; j++)
    for (int64_t i = 0; i < mt; i++) {
      if (tessera_matrix_tile_owner(d->A, i, j) != d->rank) continue;
      tessera_data_t *h = tessera_matrix_tile(d->A, i, j);
      const int64_t r = i < mt - 1 ? d->mb : d->n - i * d->mb;
      const int64_t c = j < nt - 1 ? d->nb : d->n - j * d->nb;
      const int64_t ld = (int64_t)tessera_data_ld(h);
      if (d->lu)
        gen_dense_block(dtype, i * d->mb, j * d->nb, r, c, tessera_data_ptr(h), ld, GEN_SEED_A);
      else
        gen_spd_block(dtype, d->n, i * d->mb, j * d->nb, r, c, tessera_data_ptr(h), ld, GEN_SEED_A);
    }
}

/* X put together on process 0 (its tiles from every process, summed: each element has one
 * owner) in `out` (rows x cols); a failure's status. */
static int assemble(const dist_run_t *d, tessera_matrix_t *X, tessera_dtype_t dtype, void *out,
                    int64_t rows, int64_t cols) {
  const size_t count = (size_t)(rows * cols);
  void *mine = calloc(count ? count : 1, tessera_dtype_size(dtype));
  if (!mine) return TESSERA_ERR_NOMEM;
  int rc = tessera_matrix_export(X, mine, rows > 0 ? rows : 1);
  if (!rc)
    rc = tessera_comm_reduce(d->comm, mine, out, count, (tessera_comm_type_t)dtype, TESSERA_SUM, 0,
                             NULL);
  free(mine);
  return rc;
}

/* Runs the routine, timed; potrs factors first, untimed. */
static int run_routine(const cli_opts_t *o, const dist_run_t *d, double *seconds) {
  int rc = 0;
  if (o->routine == CMD_POTRS) rc = tessera_tile_potrf(o->uplo, d->A);
  if (!rc) rc = tessera_comm_barrier(d->comm, NULL);
  const double t0 = progress_now();
  if (!rc) switch (o->routine) {
    case CMD_POTRF:
      rc = tessera_tile_potrf(o->uplo, d->A);
      break;
    case CMD_POTRS:
      rc = tessera_tile_potrs(o->uplo, d->A, d->B);
      break;
    case CMD_GETRF:
      rc = tessera_tile_getrf(d->A, d->ipiv);
      break;
    case CMD_GESV:
      rc = tessera_tile_gesv(d->A, d->ipiv, d->B);
      break;
    default:
      rc = tessera_tile_posv(o->uplo, d->A, d->B);
    }
  const int sync = tessera_comm_barrier(d->comm, NULL);
  *seconds = progress_now() - t0;
  return rc ? rc : sync;
}

/* Orders above which a factorization's residual is not computed: the factor is gathered on
 * process 0 (n^2 elements through host memory), and potrf's residual costs O(n^3) there. */
enum { CHECK_MAX_FACTOR = 16384 };

/* The residual on process 0 (others: 0), from the assembled result; NaN when skipped. */
static int check(const cli_opts_t *o, const dist_run_t *d, tessera_dtype_t dtype, const void *b0,
                 double *residual) {
  const int factor = cli_is_factor(o->routine);
  const int64_t n = d->n, ld = n > 0 ? n : 1, cols = factor ? n : d->nrhs;
  if (factor && n > CHECK_MAX_FACTOR) {
    if (d->rank == 0)
      fprintf(stderr,
              "tessera: the residual of %s is not computed above n = %d (the factor would be "
              "gathered on one process); use %s\n",
              cli_cmd_name(o->routine), CHECK_MAX_FACTOR, d->lu ? "gesv" : "posv");
    *residual = NAN;
    return 0;
  }
  void *x = d->rank == 0 ? cli_alloc(dtype, ld, cols) : NULL;
  void *a0 = d->rank == 0 ? cli_alloc(dtype, ld, n) : NULL;
  int rc = d->rank == 0 && (!x || !a0) ? TESSERA_ERR_NOMEM : 0;
  if (!rc) rc = assemble(d, factor ? d->A : d->B, dtype, x, n, cols);
  *residual = 0;
  if (!rc && d->rank == 0) {
    if (d->lu)
      gen_dense(dtype, n, n, a0, ld, GEN_SEED_A);
    else
      gen_spd(dtype, n, a0, ld, GEN_SEED_A);
    *residual = o->routine == CMD_POTRF ? residual_potrf(dtype, o->uplo, n, a0, ld, x, ld)
                : o->routine == CMD_GETRF
                    ? residual_getrf(dtype, n, a0, ld, x, ld, d->ipiv)
                    : residual_solve(dtype, n, d->nrhs, a0, ld, x, ld, b0, ld);
  }
  free(x);
  free(a0);
  return rc;
}

int cli_solve_distributed(const cli_opts_t *o) {
  if (o->input || o->rhs || o->output) {
    fprintf(stderr, "tessera: --grid runs on generated matrices (no --input, --rhs, --output)\n");
    return CLI_USAGE;
  }
  dist_run_t d = {0};
  int rc = cli_context(o, &d.ctx); /* its communicator spans the processes and their GPUs */
  if (rc != CLI_OK) return rc;
  d.comm = tessera_context_comm(d.ctx);
  d.grid = tessera_context_grid(d.ctx);
  d.rank = tessera_comm_rank(d.comm);
  const tessera_dtype_t dtype = o->dtype;
  d.n = o->sizes[0];
  d.nrhs = o->nrhs;
  d.lu = cli_is_lu(o->routine);
  d.nb = o->tile > 0 ? o->tile
         : d.lu      ? (int)tessera_tile_for_lu(d.ctx, d.n, d.n)
                     : tessera_tile_for(d.ctx, d.n);
  d.mb = d.lu ? (d.n > 1 ? d.n : 1) : d.nb;
  if (d.lu) /* column panels, dealt over every process */
    d.grid = (tessera_grid_t){1, d.grid.p * d.grid.q};
  void *b0 = NULL;
  int st = d.lu && !(d.ipiv = calloc((size_t)(d.n > 0 ? d.n : 1), sizeof *d.ipiv))
               ? TESSERA_ERR_NOMEM
               : tessera_matrix_create_distributed(d.ctx, d.comm, d.grid, dtype, d.n, d.n, d.mb,
                                                   d.nb, &d.A);
  if (!st && !cli_is_factor(o->routine)) {
    b0 = cli_alloc(dtype, d.n > 0 ? d.n : 1, d.nrhs);
    st = b0 ? tessera_matrix_create_distributed(d.ctx, d.comm, d.grid, dtype, d.n, d.nrhs, d.mb,
                                                d.nb, &d.B)
            : TESSERA_ERR_NOMEM;
    if (!st) gen_dense(dtype, d.n, d.nrhs, b0, d.n > 0 ? d.n : 1, GEN_SEED_B);
    if (!st) st = tessera_matrix_import(d.B, b0, d.n > 0 ? d.n : 1);
  }
  if (!st) fill_own_tiles(&d, dtype);
  double seconds = 0, residual = 0;
  if (!st) st = run_routine(o, &d, &seconds);
  if (!st) st = check(o, &d, dtype, b0, &residual);
  if (st) {
    fprintf(stderr, "tessera: process %d: %s failed: %s (%s)\n", d.rank, cli_cmd_name(o->routine),
            tessera_strerror(st), tessera_last_error(d.ctx));
    rc = CLI_FAILED;
  } else if (d.rank == 0) {
    cli_result_t r;
    cli_result_init(&r, o, d.ctx);
    r.dtype = dtype;
    r.n = d.n;
    r.nrhs = cli_is_factor(o->routine) ? 0 : d.nrhs;
    r.tile = d.nb;
    r.seconds = seconds;
    r.gflops = seconds > 0 ? cli_flops(o->routine, dtype, d.n, d.nrhs) / seconds * 1e-9 : 0;
    r.residual = residual;
    r.api = "grid";
    if (!o->json)
      printf("distributed over a %dx%d grid of processes%s (each: %d workers)\n", d.grid.p,
             d.grid.q, d.lu ? ", in column panels" : "", tessera_worker_count(d.ctx));
    cli_print_header(o, NULL, NULL);
    cli_print_result(o, &r);
  }
  tessera_matrix_destroy(d.B);
  tessera_matrix_destroy(d.A);
  free(d.ipiv);
  free(b0);
  return cli_finish(d.ctx, rc);
}
