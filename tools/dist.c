/* `tessera potrf|potrs|posv|getrf|gesv|geqrf|gels --grid PxQ` under mpirun: the routine on tile
 * matrices dealt over the P x Q processes (LU and QR: column panels dealt over all P Q of them);
 * posv and gesv with --mixed P the mixed-precision solve. Every process writes its own tiles of
 * the generated matrix (the values gen_spd or gen_dense gives those positions) and the whole
 * right-hand side; the routine runs distributed, timed between two barriers; each process's
 * tiles of the result are summed onto process 0, which computes the residual against the whole
 * generated matrix and prints the one result (geqrf's and gels' checks are tools/qr_check.c's,
 * called by every process: geqrf's by probe vectors, Q applied on the distributed factors). */
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
#include "qr.h"
#include "residual.h"

typedef struct {
  tessera_comm_t *comm;
  tessera_grid_t grid;
  tessera_context_t *ctx;
  tessera_matrix_t *A, *B;
  int rank, nb;
  int64_t m, n, nrhs;           /* A m x n (m = n but for QR's --m), B brows x nrhs */
  int64_t brows;                /* max(m, n): B's rows (gels' B holds max(m, n)) */
  int64_t mb;                   /* rows of a tile: nb, or m for the column panels of LU and QR */
  bool panels;                  /* LU and QR: a general matrix in column panels */
  int *ipiv;                    /* LU: the pivots, on every process */
  void *tau;                    /* geqrf: the reflectors' scalars, on every process */
  bool unfinite;                /* QR: the check gave NaN or Inf (said on process 0) */
  tessera_mixed_result_t mixed; /* --mixed: what the solve did (the same on every process) */
} dist_run_t;

/* Whether the routine runs on a general matrix in column panels: LU and QR. */
static bool in_panels(cli_cmd_t routine) {
  return cli_is_lu(routine) || cli_is_qr(routine);
}

/* Whether the routine solves for right-hand sides (potrs, posv, gesv, gels); the others factor,
 * their factor gathered for the check. */
static bool has_rhs(cli_cmd_t routine) {
  return !cli_is_factor(routine) && routine != CMD_GEQRF;
}

/* The rows of A at order n: --m's (QR) where given, else n. */
static int64_t rows_of(const cli_opts_t *o, int64_t n) {
  return o->m >= 0 ? o->m : n;
}

/* Writes this process's tiles of the generated matrix into A's tiles (homed on the host). */
static void fill_own_tiles(const dist_run_t *d, tessera_dtype_t dtype) {
  const int64_t mt = (d->m + d->mb - 1) / d->mb, nt = (d->n + d->nb - 1) / d->nb;
  for (int64_t j = 0; j < nt; j++)
    for (int64_t i = 0; i < mt; i++) {
      if (tessera_matrix_tile_owner(d->A, i, j) != d->rank) continue;
      tessera_data_t *h = tessera_matrix_tile(d->A, i, j);
      const int64_t r = i < mt - 1 ? d->mb : d->m - i * d->mb;
      const int64_t c = j < nt - 1 ? d->nb : d->n - j * d->nb;
      const int64_t ld = (int64_t)tessera_data_ld(h);
      if (d->panels)
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
 * mixed-precision solve; gels' B holds the solution in its first n rows. */
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
    case CMD_GEQRF:
      rc = tessera_tile_geqrf(d->A, d->tau);
      break;
    case CMD_GELS:
      rc = tessera_tile_gels(d->A, d->B);
      break;
    default:
      rc = o->mixed >= 0 ? tessera_tile_posv_mixed(o->uplo, d->A, d->B, &opts, &d->mixed)
                         : tessera_tile_posv(o->uplo, d->A, d->B);
    }
  const int sync = tessera_comm_barrier(d->comm, NULL);
  *seconds = progress_now() - t0;
  return rc ? rc : sync;
}

/* Order above which a factorization's residual is not computed (QR's m x n: above as many
 * elements): the factor is gathered on process 0 (n^2 elements through host memory), and
 * potrf's residual costs O(n^3) there. */
enum { CHECK_MAX_FACTOR = 16384 };

/* Whether the factor of an m x n run is too large to be gathered for the check. */
static bool unchecked(const cli_opts_t *o, int64_t m, int64_t n) {
  return !has_rhs(o->routine) &&
         (double)m * (double)n > (double)CHECK_MAX_FACTOR * CHECK_MAX_FACTOR;
}

/* geqrf's and gels' checks (tools/qr_check.c), which every process calls: process 0 holds the
 * generated A and the result put together from the tiles (geqrf's factored A, gels' B), the
 * others none; geqrf's by probe vectors with Q applied on the distributed A (tau on every
 * process), gels' LAPACK's least-squares ratio. A NaN or an infinity is said on process 0
 * (d->unfinite). */
static int check_qr(const cli_opts_t *o, dist_run_t *d, void *b0, double *res, double *orth) {
  const bool qr = o->routine == CMD_GEQRF;
  const tessera_dtype_t dtype = o->dtype;
  const int64_t m = d->m, n = d->n, lda = m > 0 ? m : 1, ldb = d->brows > 0 ? d->brows : 1;
  qr_problem_t p = {.dtype = dtype, .m = m, .n = n, .ldb = d->brows, .b0 = b0, .tau = d->tau};
  p.nrhs = qr ? 0 : d->nrhs;
  void **x = qr ? &p.a : &p.b; /* the result, put together */
  int rc = 0;
  if (d->rank == 0) {
    p.a0 = cli_alloc(dtype, lda, n);
    *x = qr ? cli_alloc(dtype, lda, n) : cli_alloc(dtype, ldb, d->nrhs);
    rc = !p.a0 || !*x ? TESSERA_ERR_NOMEM : 0;
  }
  if (!rc)
    rc = qr ? assemble(d, d->A, dtype, p.a, m, n) : assemble(d, d->B, dtype, p.b, d->brows, p.nrhs);
  if (!rc && d->rank == 0) gen_dense(dtype, m, n, p.a0, lda, GEN_SEED_A);
  if (!rc) rc = qr ? qr_probe_geqrf(d->ctx, &p, d->A, res, orth) : qr_check_gels(d->ctx, &p, res);
  if (!rc && d->rank == 0) d->unfinite = qr_finite(o->routine, &p, *res, qr ? *orth : 0) != CLI_OK;
  free(p.a0);
  free(*x);
  return rc;
}

/* The residual on process 0 (others: 0), from the assembled result, and geqrf's orthogonality;
 * NaN when skipped. */
static int check(const cli_opts_t *o, dist_run_t *d, tessera_dtype_t dtype, void *b0,
                 double *residual, double *orth) {
  const int factor = !has_rhs(o->routine);
  const int64_t n = d->n, ld = n > 0 ? n : 1, cols = factor ? n : d->nrhs;
  *orth = NAN;
  if (unchecked(o, d->m, n)) {
    if (d->rank == 0)
      fprintf(stderr,
              "tessera: the residual of %s is not computed above %d x %d elements (the factor "
              "would be gathered on one process); use %s\n",
              cli_cmd_name(o->routine), CHECK_MAX_FACTOR, CHECK_MAX_FACTOR,
              cli_is_qr(o->routine) ? "gels"
              : d->panels           ? "gesv"
                                    : "posv");
    *residual = NAN;
    return 0;
  }
  if (cli_is_qr(o->routine)) return check_qr(o, d, b0, residual, orth);
  void *x = d->rank == 0 ? cli_alloc(dtype, ld, cols) : NULL;
  void *a0 = d->rank == 0 ? cli_alloc(dtype, ld, n) : NULL;
  int rc = d->rank == 0 && (!x || !a0) ? TESSERA_ERR_NOMEM : 0;
  if (!rc) rc = assemble(d, factor ? d->A : d->B, dtype, x, n, cols);
  *residual = 0;
  if (!rc && d->rank == 0) {
    if (d->panels)
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

/* The tiles of an m x n A: nb x nb on the grid, or for LU and QR column panels of nb columns
 * (tessera_tile_for_lu's width, tessera_tile_for_qr's) dealt over every process (a 1 x P Q grid)
 * in tiles of mb = m rows. */
static void shape(const cli_opts_t *o, tessera_context_t *ctx, int64_t m, int64_t n,
                  tessera_grid_t *grid, int *nb, int64_t *mb) {
  const bool panels = in_panels(o->routine);
  *nb = o->tile > 0             ? o->tile
        : cli_is_qr(o->routine) ? tessera_tile_for_qr(ctx, m, n)
        : cli_is_lu(o->routine) ? (int)tessera_tile_for_lu(ctx, n, n)
                                : tessera_tile_for(ctx, n);
  *mb = panels ? (m > 1 ? m : 1) : *nb;
  if (panels) *grid = (tessera_grid_t){1, grid->p * grid->q};
}

/* B's tile rows: A's, or in column panels all of its max(m, n) rows. */
static int64_t b_tile_rows(const dist_run_t *d) {
  return d->panels ? (d->brows > 1 ? d->brows : 1) : d->mb;
}

/* The processes of one host, for the footprint they hold together. */
typedef struct {
  const cli_opts_t *o;
  tessera_context_t *ctx;
  tessera_grid_t grid; /* the context's grid (LU deals panels over all its processes) */
  const int *ranks;
  int nranks;
} host_footprint_t;

/* What the processes of a host hold at once at order n with nrhs right-hand sides (QR: A of
 * --m's rows where given): each its tiles of A (and B), the whole right-hand side, the pivots or
 * tau, and for the residual the result put together on every process (gels: also its share of
 * A, which the check's products deal again); process 0 also the whole generated A, the result and
 * the residual's work arrays. */
static void host_footprint(const void *arg, int64_t n, int64_t nrhs, cli_footprint_t *f) {
  const host_footprint_t *h = arg;
  const cli_opts_t *o = h->o;
  const tessera_dtype_t dt = o->dtype;
  tessera_grid_t grid = h->grid;
  int nb;
  int64_t mb;
  const int64_t m = rows_of(o, n), brows = m > n ? m : n, kmin = m < n ? m : n;
  shape(o, h->ctx, m, n, &grid, &nb, &mb);
  const bool factor = !has_rhs(o->routine), qr = cli_is_qr(o->routine);
  const int64_t k = factor ? 0 : nrhs, rrows = factor ? m : brows, rcols = factor ? n : k;
  const int64_t bmb = in_panels(o->routine) ? (brows > 1 ? brows : 1) : mb;
  const double work = o->routine == CMD_GEQRF ? 2.0 * (double)m + (double)n /* the probes */
                      : qr                    ? (double)(m + n) * (double)k
                                              : (double)n * (double)(factor ? 2 : k);
  const bool checked = !unchecked(o, m, n);
  for (int i = 0; i < h->nranks; i++) {
    int row, col;
    tessera_grid_coords(grid, h->ranks[i], &row, &col);
    const double a =
        cli_array_bytes(dt, tessera_numroc(m, mb, row, grid.p), tessera_numroc(n, nb, col, grid.q));
    cli_footprint_add(f, "their tiles of A:", a);
    cli_footprint_add(f, "their tiles of B and the whole B on each:",
                      cli_array_bytes(dt, tessera_numroc(brows, bmb, row, grid.p),
                                      tessera_numroc(k, nb, col, grid.q)) +
                          cli_array_bytes(dt, brows, k));
    if (cli_is_lu(o->routine)) cli_footprint_add(f, "the pivots:", (double)n * sizeof(int));
    if (o->routine == CMD_GEQRF) cli_footprint_add(f, "tau:", cli_array_bytes(dt, kmin, 1));
    if (checked)
      cli_footprint_add(f, "the result put together for the residual on each:",
                        cli_array_bytes(dt, rrows, rcols));
    if (checked && o->routine == CMD_GELS)
      cli_footprint_add(f, "their tiles of A again for the residual's products:", a);
    if (checked && h->ranks[i] == 0)
      cli_footprint_add(f, "the whole A, the result and the residual's work on process 0:",
                        cli_array_bytes(dt, m, n) + cli_array_bytes(dt, rrows, rcols) +
                            work * (double)tessera_dtype_size(dt));
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
    char subject[160], rows[48] = "", where[96];
    if (d->m != d->n) snprintf(rows, sizeof rows, "m = %lld, ", (long long)d->m);
    snprintf(subject, sizeof subject, "%s with %sn = %lld (%s) on a %dx%d grid",
             cli_cmd_name(o->routine), rows, (long long)d->n, tessera_dtype_name(o->dtype),
             tessera_context_grid(d->ctx).p, tessera_context_grid(d->ctx).q);
    strcpy(where, " on the host of ");
    name_ranks(ranks, nranks, where + strlen(where), sizeof where - strlen(where));
    const host_footprint_t h = {o, d->ctx, tessera_context_grid(d->ctx), ranks, nranks};
    refuse = cli_check_footprint_rhs(host_footprint, &h, d->n, has_rhs(o->routine) ? o->nrhs : 0,
                                     "--n", "--nrhs", subject, where, "that host", mem,
                                     ranks[0] != d->rank) != CLI_OK;
    st = tessera_comm_allreduce(d->comm, &refuse, &refuse, 1, TESSERA_COMM_I32, TESSERA_MAX, NULL);
  }
  free(all);
  free(ranks);
  if (st)
    fprintf(stderr, "tessera: process %d: the processes could not compare their memory: %s\n",
            d->rank, tessera_strerror(st));
  return st || refuse ? CLI_FAILED : CLI_OK;
}

/* LU's pivots or geqrf's tau, on every process: 0 or TESSERA_ERR_NOMEM. */
static int alloc_pivots_or_tau(const cli_opts_t *o, dist_run_t *d) {
  if (cli_is_lu(o->routine) && !(d->ipiv = calloc((size_t)(d->n > 0 ? d->n : 1), sizeof *d->ipiv)))
    return TESSERA_ERR_NOMEM;
  if (o->routine == CMD_GEQRF &&
      !(d->tau = malloc(qr_bytes(o->dtype, d->m < d->n ? d->m : d->n, 1))))
    return TESSERA_ERR_NOMEM;
  return 0;
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
  d.m = rows_of(o, d.n);
  d.brows = d.m > d.n ? d.m : d.n;
  d.nrhs = o->nrhs;
  d.panels = in_panels(o->routine);
  shape(o, d.ctx, d.m, d.n, &d.grid, &d.nb, &d.mb);
  if (check_memory(o, &d)) return cli_finish(d.ctx, CLI_FAILED);
  void *b0 = NULL;
  const int64_t ldb = d.brows > 0 ? d.brows : 1;
  int st = alloc_pivots_or_tau(o, &d);
  if (!st)
    st =
        tessera_matrix_create_distributed(d.ctx, d.comm, d.grid, dtype, d.m, d.n, d.mb, d.nb, &d.A);
  if (!st && has_rhs(o->routine)) {
    b0 = cli_alloc(dtype, ldb, d.nrhs);
    st = b0 ? tessera_matrix_create_distributed(d.ctx, d.comm, d.grid, dtype, d.brows, d.nrhs,
                                                b_tile_rows(&d), d.nb, &d.B)
            : TESSERA_ERR_NOMEM;
    if (!st) gen_dense(dtype, d.brows, d.nrhs, b0, ldb, GEN_SEED_B);
    if (!st) st = tessera_matrix_import(d.B, b0, ldb);
  }
  if (!st) fill_own_tiles(&d, dtype);
  double seconds = 0, residual = 0, orth = NAN;
  if (!st) st = run_routine(o, &d, &seconds);
  if (!st) st = check(o, &d, dtype, b0, &residual, &orth);
  if (st) {
    fprintf(stderr, "tessera: process %d: %s failed: %s (%s)\n", d.rank, cli_cmd_name(o->routine),
            tessera_strerror(st), tessera_last_error(d.ctx));
    rc = CLI_FAILED;
  } else if (d.unfinite) {
    rc = CLI_FAILED; /* process 0's check said where the NaN came from */
  } else if (d.rank == 0) {
    const bool qr = cli_is_qr(o->routine);
    cli_result_t r;
    cli_result_init(&r, o, d.ctx);
    r.dtype = dtype;
    r.m = qr ? d.m : 0;
    r.n = d.n;
    r.nrhs = has_rhs(o->routine) ? d.nrhs : 0;
    r.tile = d.nb;
    r.seconds = seconds;
    const double flops = qr ? qr_flops(o->routine, dtype, d.m, d.n, r.nrhs)
                            : cli_flops(o->routine, dtype, d.n, d.nrhs);
    r.gflops = seconds > 0 ? flops / seconds * 1e-9 : 0;
    r.residual = residual;
    if (o->routine == CMD_GEQRF) r.orthogonality = orth;
    r.api = "grid";
    if (o->mixed >= 0) {
      r.factor = cli_factor_name(dtype, d.mixed.factor);
      r.iterations = d.mixed.iter;
    }
    if (!o->json)
      printf("distributed over a %dx%d grid of processes%s (each: %d workers)\n", d.grid.p,
             d.grid.q, d.panels ? ", in column panels" : "", tessera_worker_count(d.ctx));
    cli_print_header(o, NULL, NULL);
    cli_print_result(o, &r);
  }
  tessera_matrix_destroy(d.B);
  tessera_matrix_destroy(d.A);
  free(d.ipiv);
  free(d.tau);
  free(b0);
  return cli_finish(d.ctx, rc);
}

int cli_local_or_grid(const cli_opts_t *o, int (*local)(const cli_opts_t *)) {
  tessera_config_t cfg;
  tessera_config_init(&cfg);
  char why[256] = "";
  if (!o->grid_p && tessera_config_from_env(&cfg, why, sizeof why) != 0) {
    fprintf(stderr, "tessera: %s\n", why);
    return CLI_FAILED;
  }
  if (!o->grid_p && cfg.distributed == 1) { /* TESSERA_GRID's grid, resolved by tessera_init */
    cli_opts_t env = *o;
    env.grid_p = env.grid_q = -1;
    return cli_solve_distributed(&env);
  }
  return o->grid_p ? cli_solve_distributed(o) : local(o);
}
