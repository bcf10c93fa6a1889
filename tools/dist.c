/* `tessera potrf|potrs|posv|getrf|gesv --grid PxQ` under mpirun: the routine on tile matrices
 * dealt over the P x Q processes (LU: column panels dealt over all P Q of them); posv and gesv
 * with --mixed P the mixed-precision solve. Every process
 * writes its own tiles of the generated matrix (the values gen_spd or gen_dense gives those
 * positions) and the whole right-hand side; the routine runs distributed, timed between two
 * barriers; each process's tiles of the result are summed onto process 0, which computes the
 * residual against the whole generated matrix and prints the one result. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "footprint.h"
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
  int *ipiv;                    /* LU: the pivots, on every process */
  tessera_mixed_result_t mixed; /* --mixed: what the solve did (the same on every process) */
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

/* Runs the routine, timed; potrs factors first, untimed; posv and gesv with --mixed the
 * mixed-precision solve. */
static int run_routine(const cli_opts_t *o, dist_run_t *d, double *seconds) {
  int rc = 0;
  tessera_mixed_options_t opts;
  tessera_mixed_options_init(&opts);
  opts.factor = (tessera_factor_t)o->mixed;
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
      rc = o->mixed >= 0 ? tessera_tile_gesv_mixed(d->A, d->ipiv, d->B, &opts, &d->mixed)
                         : tessera_tile_gesv(d->A, d->ipiv, d->B);
      break;
    default:
      rc = o->mixed >= 0 ? tessera_tile_posv_mixed(o->uplo, d->A, d->B, &opts, &d->mixed)
                         : tessera_tile_posv(o->uplo, d->A, d->B);
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

/* The tiles of order n: nb x nb on the grid, or for LU column panels of nb columns dealt over
 * every process (a 1 x P Q grid) in tiles of mb = n rows. */
static void shape(const cli_opts_t *o, tessera_context_t *ctx, int64_t n, tessera_grid_t *grid,
                  int *nb, int64_t *mb) {
  const bool lu = cli_is_lu(o->routine);
  *nb = o->tile > 0 ? o->tile : lu ? (int)tessera_tile_for_lu(ctx, n, n) : tessera_tile_for(ctx, n);
  *mb = lu ? (n > 1 ? n : 1) : *nb;
  if (lu) *grid = (tessera_grid_t){1, grid->p * grid->q};
}

/* The processes of one host, for the footprint they hold together. */
typedef struct {
  const cli_opts_t *o;
  tessera_context_t *ctx;
  tessera_grid_t grid; /* the context's grid (LU deals panels over all its processes) */
  const int *ranks;
  int nranks;
} host_footprint_t;

/* What the processes of a host hold at once at order n with nrhs right-hand sides: each its
 * tiles of A (and B), the whole right-hand side, the pivots, and for the residual the result put
 * together on every process; process 0 also the whole generated A, the result and the
 * residual's work arrays. */
static void host_footprint(const void *arg, int64_t n, int64_t nrhs, cli_footprint_t *f) {
  const host_footprint_t *h = arg;
  const cli_opts_t *o = h->o;
  tessera_grid_t grid = h->grid;
  int nb;
  int64_t mb;
  shape(o, h->ctx, n, &grid, &nb, &mb);
  const int factor = cli_is_factor(o->routine);
  const int64_t k = factor ? 0 : nrhs, cols = factor ? n : k;
  const bool checked = !(factor && n > CHECK_MAX_FACTOR);
  for (int i = 0; i < h->nranks; i++) {
    int row, col;
    tessera_grid_coords(grid, h->ranks[i], &row, &col);
    const int64_t rows = tessera_numroc(n, mb, row, grid.p);
    cli_footprint_add(f, "their tiles of A:",
                      cli_array_bytes(o->dtype, rows, tessera_numroc(n, nb, col, grid.q)));
    cli_footprint_add(f, "their tiles of B and the whole B on each:",
                      cli_array_bytes(o->dtype, rows, tessera_numroc(k, nb, col, grid.q)) +
                          cli_array_bytes(o->dtype, n, k));
    if (cli_is_lu(o->routine)) cli_footprint_add(f, "the pivots:", (double)n * sizeof(int));
    if (checked)
      cli_footprint_add(f, "the result put together for the residual on each:",
                        cli_array_bytes(o->dtype, n, cols));
    if (checked && h->ranks[i] == 0)
      cli_footprint_add(f, "the whole A, the result and the residual's work on process 0:",
                        cli_array_bytes(o->dtype, n, n + cols + (factor ? 2 : k)));
  }
}

/* A hash of this host's name, the same in every process on it. */
static int64_t host_id(void) {
  char name[256] = "";
  gethostname(name, sizeof name - 1);
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (const char *c = name; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
  return (int64_t)(h >> 1);
}

/* "processes 0, 1 and 2" (the first few) into buf. */
static void name_ranks(const int *ranks, int n, char *buf, size_t len) {
  size_t used = (size_t)snprintf(buf, len, "process%s", n > 1 ? "es" : "");
  for (int i = 0; i < n && i < 4 && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%s%d",
                             i == 0       ? " "
                             : i == n - 1 ? " and "
                                          : ", ",
                             ranks[i]);
  if (n > 4 && used < len) snprintf(buf + used, len - used, " and %d more", n - 4);
}

/* Refuses, on every process and before any array is made, a run whose processes on one host hold
 * more than that host's memory: each learns every process's host and memory, checks its own
 * host, and all agree on the verdict (the lowest process of a host that lacks memory says why).
 * Returns CLI_OK, or CLI_FAILED on every process. */
static int check_memory(const cli_opts_t *o, const dist_run_t *d) {
  const int size = tessera_comm_size(d->comm);
  const cli_memory_t here = cli_memory_here();
  const int64_t mine[3] = {host_id(), (int64_t)here.available, (int64_t)here.total};
  int64_t *all = malloc(3 * sizeof *all * (size_t)size);
  int *ranks = malloc(sizeof *ranks * (size_t)size);
  int st = all && ranks ? tessera_comm_allgather(d->comm, mine, all, 3, TESSERA_COMM_I64, NULL)
                        : TESSERA_ERR_NOMEM;
  int refuse = 0, nranks = 0;
  if (!st) {
    cli_memory_t mem = here;
    for (int r = 0; r < size; r++) /* this host's processes, and the least memory they see */
      if (all[3 * r] == mine[0]) {
        ranks[nranks++] = r;
        if (all[3 * r + 1] < mem.available) mem.available = (double)all[3 * r + 1];
      }
    char subject[128], where[96];
    snprintf(subject, sizeof subject, "%s with n = %lld (%s) on a %dx%d grid",
             cli_cmd_name(o->routine), (long long)d->n, tessera_dtype_name(o->dtype),
             tessera_context_grid(d->ctx).p, tessera_context_grid(d->ctx).q);
    strcpy(where, " on the host of ");
    name_ranks(ranks, nranks, where + strlen(where), sizeof where - strlen(where));
    const host_footprint_t h = {o, d->ctx, tessera_context_grid(d->ctx), ranks, nranks};
    refuse = cli_check_footprint_rhs(
                 host_footprint, &h, d->n, cli_is_factor(o->routine) ? 0 : o->nrhs, "--n", "--nrhs",
                 subject, where, "that host", mem, ranks[0] != d->rank) != CLI_OK;
    st = tessera_comm_allreduce(d->comm, &refuse, &refuse, 1, TESSERA_COMM_I32, TESSERA_MAX, NULL);
  }
  free(all);
  free(ranks);
  if (st)
    fprintf(stderr, "tessera: process %d: the processes could not compare their memory: %s\n",
            d->rank, tessera_strerror(st));
  return st || refuse ? CLI_FAILED : CLI_OK;
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
  shape(o, d.ctx, d.n, &d.grid, &d.nb, &d.mb);
  if (check_memory(o, &d)) return cli_finish(d.ctx, CLI_FAILED);
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
    if (o->mixed >= 0) {
      r.factor = cli_factor_name(dtype, d.mixed.factor);
      r.iterations = d.mixed.iter;
    }
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
