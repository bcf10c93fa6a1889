/* `tessera potrf|potrs|posv --grid PxQ` under mpirun: the routine on tile matrices dealt over
 * the P x Q processes. Every process writes its own tiles of the generated matrix (the values
 * gen_spd gives those positions) and the whole right-hand side; the routine runs distributed,
 * timed between two barriers; each process's tiles of the result are summed onto process 0,
 * which computes the residual against the whole generated matrix and prints the one result. */
#include <math.h>
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
} dist_run_t;

/* Writes this process's tiles of the generated matrix into A's tiles (homed on the host). */
static void fill_own_tiles(const dist_run_t *d, tessera_dtype_t dtype) {
  const int64_t mt = (d->n + d->nb - 1) / d->nb, nt = mt; /* tiles per dimension */
  for (int64_t j = 0; j < nt; j++)
    for (int64_t i = 0; i < mt; i++) {
      if (tessera_matrix_tile_owner(d->A, i, j) != d->rank) continue;
      tessera_data_t *h = tessera_matrix_tile(d->A, i, j);
      const int64_t r = i < mt - 1 ? d->nb : d->n - i * d->nb;
      const int64_t c = j < nt - 1 ? d->nb : d->n - j * d->nb;
      gen_spd_block(dtype, d->n, i * d->nb, j * d->nb, r, c, tessera_data_ptr(h),
                    (int64_t)tessera_data_ld(h), GEN_SEED_A);
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
  if (!rc)
    rc = o->routine == CMD_POTRF   ? tessera_tile_potrf(o->uplo, d->A)
         : o->routine == CMD_POTRS ? tessera_tile_potrs(o->uplo, d->A, d->B)
                                   : tessera_tile_posv(o->uplo, d->A, d->B);
  const int sync = tessera_comm_barrier(d->comm, NULL);
  *seconds = progress_now() - t0;
  return rc ? rc : sync;
}

/* Orders above which potrf's residual (O(n^3) on process 0, the factor gathered there) is not
 * computed. */
enum { CHECK_MAX_POTRF = 16384 };

/* The residual on process 0 (others: 0), from the assembled result; NaN when skipped. */
static int check(const cli_opts_t *o, const dist_run_t *d, tessera_dtype_t dtype, const void *b0,
                 double *residual) {
  const int64_t n = d->n, ld = n > 0 ? n : 1, cols = o->routine == CMD_POTRF ? n : d->nrhs;
  if (o->routine == CMD_POTRF && n > CHECK_MAX_POTRF) {
    if (d->rank == 0)
      fprintf(stderr,
              "tessera: the residual of potrf is not computed above n = %d (it would take "
              "O(n^3) on one process); use posv\n",
              CHECK_MAX_POTRF);
    *residual = NAN;
    return 0;
  }
  void *x = d->rank == 0 ? cli_alloc(dtype, ld, cols) : NULL;
  void *a0 = d->rank == 0 ? cli_alloc(dtype, ld, n) : NULL;
  int rc = d->rank == 0 && (!x || !a0) ? TESSERA_ERR_NOMEM : 0;
  if (!rc) rc = assemble(d, o->routine == CMD_POTRF ? d->A : d->B, dtype, x, n, cols);
  *residual = 0;
  if (!rc && d->rank == 0) {
    gen_spd(dtype, n, a0, ld, GEN_SEED_A);
    *residual = o->routine == CMD_POTRF ? residual_potrf(dtype, o->uplo, n, a0, ld, x, ld)
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
  d.nb = o->tile > 0 ? o->tile : tessera_tile_for(d.ctx, d.n);
  void *b0 = NULL;
  int st =
      tessera_matrix_create_distributed(d.ctx, d.comm, d.grid, dtype, d.n, d.n, d.nb, d.nb, &d.A);
  if (!st && o->routine != CMD_POTRF) {
    b0 = cli_alloc(dtype, d.n > 0 ? d.n : 1, d.nrhs);
    st = b0 ? tessera_matrix_create_distributed(d.ctx, d.comm, d.grid, dtype, d.n, d.nrhs, d.nb,
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
    r.nrhs = o->routine == CMD_POTRF ? 0 : d.nrhs;
    r.tile = d.nb;
    r.seconds = seconds;
    r.gflops = seconds > 0 ? cli_flops(o->routine, dtype, d.n, d.nrhs) / seconds * 1e-9 : 0;
    r.residual = residual;
    r.api = "grid";
    if (!o->json)
      printf("distributed over a %dx%d grid of processes (each: %d workers)\n", d.grid.p, d.grid.q,
             tessera_worker_count(d.ctx));
    cli_print_header(o, NULL, NULL);
    cli_print_result(o, &r);
  }
  tessera_matrix_destroy(d.B);
  tessera_matrix_destroy(d.A);
  free(b0);
  return cli_finish(d.ctx, rc);
}
