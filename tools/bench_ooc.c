/* tessera CLI — `tessera bench potrf --out-of-core`: Cholesky of a matrix held once, as the tiles
 * of one triangle of a triangle-only descriptor (tessera_matrix_create_triangle), so its order
 * is bounded by half the full matrix, not by one or more full copies on the host.
 *
 * CPU tasks generate the stored tiles in place (the values gen_spd gives, so the matrix is the
 * other commands' one); tessera_tile_potrf is timed, each repetition on tiles generated anew
 * (untimed). The factor is checked without a second copy of A: b = A x0 with A regenerated one
 * block row at a time by a thread per core, x from tessera_tile_potrs (on a view of a host
 * vector), and the backward error
 *   ‖b − A x‖∞ / ((‖A‖∞ ‖x‖∞ + ‖b‖∞) n ε)
 * with A regenerated again. No baseline: cuSOLVER needs the full matrix in one GPU's memory. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "footprint.h"
#include "gen.h"
#include "residual.h"

/** Rows and columns of the blocks the check regenerates. */
enum { MV_ROWS = 256, MV_COLS = 256, MV_MAX_THREADS = 256 };

/* ---------------------------------------------------------------- generating the tiles */

/** Arguments of a tile-generating task: the tile's block of the n x n matrix. */
typedef struct {
  tessera_dtype_t dtype;
  int64_t n, i0, j0, rows, cols;
} fill_args_t;

static int fill_cpu(const tessera_exec_t *ex, void *args) {
  const fill_args_t *f = args;
  gen_spd_block(f->dtype, f->n, f->i0, f->j0, f->rows, f->cols, ex->ptr[0], (int64_t)ex->ld[0],
                GEN_SEED_A);
  return 0;
}

static const tessera_kernel_t fill_kernel = {.name = "gen_spd",
                                             .impl = {[TESSERA_DEVICE_CPU] = fill_cpu}};

/** Generates every stored tile of A (n x n, tiles nb) with one CPU task each (W access); waits. */
static int fill(tessera_context_t *ctx, tessera_matrix_t *A, tessera_dtype_t dtype, int64_t n) {
  const int64_t nb = tessera_matrix_tile_rows(A), nt = (n + nb - 1) / nb;
  int status = 0;
  for (int64_t j = 0; j < nt && !status; j++)
    for (int64_t i = 0; i < nt && !status; i++) {
      tessera_data_t *t = tessera_matrix_tile(A, i, j);
      if (!t) continue; /* the other triangle */
      fill_args_t a = {
          dtype, n, i * nb, j * nb, i == nt - 1 ? n - i * nb : nb, j == nt - 1 ? n - j * nb : nb};
      tessera_task_t task = {.kernel = &fill_kernel,
                             .args = &a,
                             .args_size = sizeof a,
                             .ndata = 1,
                             .data = {t},
                             .mode = {TESSERA_W},
                             .scope = tessera_scope_cpus(),
                             .tag = {(int)i, (int)j, 0},
                             .ntag = 2};
      status = tessera_task_insert(ctx, &task);
    }
  int w = tessera_wait_all(ctx);
  return status ? status : w;
}

/** Bytes of the tiles of one triangle of an n x n matrix of nb x nb tiles. */
static double triangle_bytes(tessera_dtype_t dtype, int64_t n, int64_t nb) {
  const int64_t nt = (n + nb - 1) / nb;
  double elems = 0;
  for (int64_t j = 0; j < nt; j++) {
    double cols = (double)(j == nt - 1 ? n - j * nb : nb);
    elems += cols * (double)(n - j * nb); /* tiles (j..nt-1, j) */
  }
  return elems * (double)tessera_dtype_size(dtype);
}

/** Where tiles of `bytes` in all went, from the device pools' free bytes before and after. */
static const char *home_of(double bytes, double before, double after) {
  double moved = before - after;
  return moved <= 0 ? "host" : moved >= bytes ? "gpus" : "mixed";
}

/* ---------------------------------------------------------------- the check: y = A x */

/** One product y = A x over the regenerated A, shared by the threads: block rows of MV_ROWS
 *  rows are taken in turn. Vectors are n (re, im) pairs of doubles. */
typedef struct {
  tessera_dtype_t dtype;
  int64_t n;
  const double *x;
  double *y;
  double *rowsum; /**< Σ_j |a_ij| per row, or NULL */
  atomic_llong next;
  atomic_int failed;
} matvec_t;

/** Element k of the block `blk` of `dtype` as (re, im). */
static inline void load(tessera_dtype_t dtype, const void *blk, size_t k, double *re, double *im) {
  switch (dtype) {
  case TESSERA_F32:
    *re = ((const float *)blk)[k], *im = 0;
    break;
  case TESSERA_F64:
    *re = ((const double *)blk)[k], *im = 0;
    break;
  case TESSERA_C64:
    *re = ((const float *)blk)[2 * k], *im = ((const float *)blk)[2 * k + 1];
    break;
  default: /* TESSERA_C128 */
    *re = ((const double *)blk)[2 * k], *im = ((const double *)blk)[2 * k + 1];
    break;
  }
}

/** y[0..rows) += B x[0..cols) and rowsum[0..rows) += |B| (when not NULL), B rows x cols. */
static void accumulate(tessera_dtype_t dtype, const void *blk, int64_t rows, int64_t cols,
                       const double *x, double *y, double *rowsum) {
  for (int64_t jj = 0; jj < cols; jj++) {
    const double xr = x[2 * jj], xi = x[2 * jj + 1];
    for (int64_t ii = 0; ii < rows; ii++) {
      double ar, ai;
      load(dtype, blk, (size_t)(ii + jj * rows), &ar, &ai);
      y[2 * ii] += ar * xr - ai * xi;
      y[2 * ii + 1] += ar * xi + ai * xr;
      if (rowsum) rowsum[ii] += ai == 0 ? fabs(ar) : sqrt(ar * ar + ai * ai);
    }
  }
}

static void *matvec_thread(void *arg) {
  matvec_t *m = arg;
  const int64_t n = m->n;
  void *blk = malloc((size_t)MV_ROWS * MV_COLS * tessera_dtype_size(m->dtype));
  if (!blk) {
    atomic_store(&m->failed, 1);
    return NULL;
  }
  for (;;) {
    const int64_t i0 = atomic_fetch_add(&m->next, MV_ROWS);
    if (i0 >= n) break;
    const int64_t rows = n - i0 < MV_ROWS ? n - i0 : MV_ROWS;
    for (int64_t j0 = 0; j0 < n; j0 += MV_COLS) {
      const int64_t cols = n - j0 < MV_COLS ? n - j0 : MV_COLS;
      gen_spd_block(m->dtype, n, i0, j0, rows, cols, blk, rows, GEN_SEED_A);
      accumulate(m->dtype, blk, rows, cols, m->x + 2 * j0, m->y + 2 * i0,
                 m->rowsum ? m->rowsum + i0 : NULL);
    }
  }
  free(blk);
  return NULL;
}

/** y = A x (and rowsum = row sums of |A| unless NULL), y and rowsum zeroed by the caller, on
 *  one thread per online core. Returns 0, or -1 (message printed) when memory or threads run
 *  out. */
static int matvec(tessera_dtype_t dtype, int64_t n, const double *x, double *y, double *rowsum) {
  matvec_t m = {.dtype = dtype, .n = n, .x = x, .y = y, .rowsum = rowsum};
  atomic_init(&m.next, 0);
  atomic_init(&m.failed, 0);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int nthreads = cores < 1 ? 1 : cores > MV_MAX_THREADS ? MV_MAX_THREADS : (int)cores;
  pthread_t threads[MV_MAX_THREADS];
  int started = 0;
  while (started < nthreads && pthread_create(&threads[started], NULL, matvec_thread, &m) == 0)
    started++;
  if (started == 0) matvec_thread(&m); /* no thread could start: this one does it all */
  for (int t = 0; t < started; t++) pthread_join(threads[t], NULL);
  if (atomic_load(&m.failed) && atomic_load(&m.next) < n) {
    fprintf(stderr, "tessera: out of memory regenerating the matrix for the residual\n");
    return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------- one size */

/** The check's vectors, n (re, im) pairs of doubles each, and the dtype arrays exchanged with
 *  the descriptor of the right-hand side. */
typedef struct {
  double *x0, *b, *x, *ax, *rowsum;
  void *bt, *xt; /**< b rounded to the dtype; the solution as exported */
} check_vectors_t;

static void free_vectors(check_vectors_t *v) {
  double *d[5] = {v->x0, v->b, v->x, v->ax, v->rowsum};
  for (int i = 0; i < 5; i++) free(d[i]);
  free(v->bt);
  free(v->xt);
}

/** Dtype array of n elements read as (re, im) pairs into `out`. */
static void to_pairs(tessera_dtype_t dtype, int64_t n, const void *a, double *out) {
  for (int64_t i = 0; i < n; i++) load(dtype, a, (size_t)i, &out[2 * i], &out[2 * i + 1]);
}

/** Largest modulus of n (re, im) pairs. */
static double norm_inf(int64_t n, const double *v) {
  double best = 0;
  for (int64_t i = 0; i < n; i++) {
    double m = hypot(v[2 * i], v[2 * i + 1]);
    if (!(m <= best)) best = m; /* NaN propagates */
  }
  return best;
}

/** The backward error of tessera_tile_potrs with the factor in A, for b = A x0 (see the top of
 *  this file). Returns CLI_OK with *residual set, or CLI_FAILED (message printed). */
static int check(tessera_context_t *ctx, const cli_opts_t *o, tessera_matrix_t *A, int64_t n,
                 cli_progress_t *prog, double *residual) {
  const tessera_dtype_t dt = o->dtype;
  const int64_t ld = n > 0 ? n : 1;
  check_vectors_t v = {0};
  size_t pair = 2 * sizeof(double) * (size_t)ld;
  int rc = CLI_OK, status;
  if (!(v.x0 = calloc(1, pair)) || !(v.b = calloc(1, pair)) || !(v.x = calloc(1, pair)) ||
      !(v.ax = calloc(1, pair)) || !(v.rowsum = calloc((size_t)ld, sizeof(double)))) {
    fprintf(stderr, "tessera: out of memory for the residual's vectors (n = %lld)\n", (long long)n);
    rc = CLI_FAILED;
  }
  if (rc == CLI_OK && (!(v.bt = cli_alloc(dt, ld, 1)) || !(v.xt = cli_alloc(dt, ld, 1))))
    rc = CLI_FAILED;
  if (rc == CLI_OK) { /* b = A x0, with x0 and b as the dtype holds them */
    progress_phase(prog, "residual: b = A x0, n=%lld", (long long)n);
    gen_dense(dt, n, 1, v.xt, ld, GEN_SEED_V);
    to_pairs(dt, n, v.xt, v.x0);
    if (matvec(dt, n, v.x0, v.b, v.rowsum)) rc = CLI_FAILED;
    for (int64_t i = 0; i < n; i++) elem_set(dt, v.bt, (size_t)i, v.b[2 * i], v.b[2 * i + 1]);
    to_pairs(dt, n, v.bt, v.b);
  }
  tessera_matrix_t *B = NULL;
  if (rc == CLI_OK) {
    progress_phase(prog, "residual: tessera tile potrs, n=%lld", (long long)n);
    /* B views xt (b, then x) in place: homed on the host, the array holds x on return */
    const int64_t nb = tessera_matrix_tile_rows(A);
    memcpy(v.xt, v.bt, (size_t)n * tessera_dtype_size(dt));
    if ((status = tessera_matrix_view(ctx, dt, n, 1, nb, nb, v.xt, ld, &B)))
      rc = cli_report(ctx, prog, "right-hand side", status);
    else if ((status = tessera_tile_potrs(o->uplo, A, B)))
      rc = cli_report(ctx, prog, "tile potrs", status);
  }
  if (B && (status = tessera_matrix_destroy(B)) && rc == CLI_OK)
    rc = cli_report(ctx, prog, "matrix destroy", status);
  if (rc == CLI_OK) { /* r = b − A x */
    progress_phase(prog, "residual: b - A x, n=%lld", (long long)n);
    to_pairs(dt, n, v.xt, v.x);
    if (matvec(dt, n, v.x, v.ax, NULL)) rc = CLI_FAILED;
  }
  if (rc == CLI_OK) {
    double anorm = 0;
    for (int64_t i = 0; i < n; i++)
      if (!(v.rowsum[i] <= anorm)) anorm = v.rowsum[i];
    for (int64_t i = 0; i < 2 * n; i++) v.ax[i] = v.b[i] - v.ax[i];
    double rnorm = norm_inf(n, v.ax), den = anorm * norm_inf(n, v.x) + norm_inf(n, v.b);
    den *= (double)n * residual_eps(dt);
    *residual = rnorm == 0 ? 0 : den > 0 ? rnorm / den : INFINITY;
  }
  progress_phase(prog, NULL);
  free_vectors(&v);
  return rc;
}

/** Creates the descriptor, times o->reps factorizations of freshly generated tiles, checks the
 *  last and prints the result line. */
static int bench_size(tessera_context_t *ctx, const cli_opts_t *o, int64_t n,
                      cli_progress_t *prog) {
  const int tile = tessera_tile_for(ctx, n);
  const double bytes = triangle_bytes(o->dtype, n, tile);
  cli_result_t r;
  cli_result_init(&r, o, ctx);
  r.n = n;
  r.tile = tile;
  r.api = "ooc";
  r.seconds = INFINITY;
  tessera_matrix_t *A = NULL;
  progress_phase(prog, "creating the triangle n=%lld (%.2f GiB)", (long long)n,
                 bytes / 1073741824.0);
  const double before = cli_device_available(ctx);
  int status = tessera_matrix_create_triangle(ctx, o->dtype, o->uplo, n, tile, &A);
  int rc = status ? cli_report(ctx, prog, "matrix create", status) : CLI_OK;
  r.home = home_of(bytes, before, cli_device_available(ctx));
  if (rc == CLI_OK && !o->json) {
    progress_phase(prog, NULL);
    printf("# n=%lld: %lld tiles of %d, %.3g GiB, homed on the %s\n", (long long)n,
           (long long)((n + tile - 1) / tile * ((n + tile - 1) / tile + 1) / 2), tile,
           bytes / 1073741824.0, strcmp(r.home, "gpus") ? r.home : "GPUs");
  }
  for (int rep = 0; rep < o->reps && rc == CLI_OK; rep++) {
    progress_phase(prog, "generating n=%lld rep %d/%d", (long long)n, rep + 1, o->reps);
    if ((status = fill(ctx, A, o->dtype, n))) {
      rc = cli_report(ctx, prog, "generate the matrix", status);
      break;
    }
    progress_phase(prog, "tessera tile potrf n=%lld rep %d/%d", (long long)n, rep + 1, o->reps);
    double t0 = progress_now();
    status = tessera_tile_potrf(o->uplo, A);
    double t = progress_now() - t0;
    if (status) rc = cli_report(ctx, prog, "tile potrf", status);
    r.seconds = fmin(r.seconds, t);
  }
  if (rc == CLI_OK) rc = check(ctx, o, A, n, prog, &r.residual);
  if (rc == CLI_OK) {
    double flops = cli_flops(CMD_POTRF, o->dtype, n, 0);
    r.gflops = r.seconds > 0 ? flops * 1e-9 / r.seconds : 0;
    cli_print_result(o, &r);
  }
  progress_phase(prog, NULL);
  if (A && (status = tessera_matrix_destroy(A)) && rc == CLI_OK)
    rc = cli_report(ctx, prog, "matrix destroy", status);
  return rc;
}

/** The footprint of one size: the tiles of the triangle where they are placed in host memory,
 *  and the check's vectors (`arg`: the bench_ooc_footprint_t). */
typedef struct {
  const cli_opts_t *o;
  tessera_context_t *ctx;
} bench_ooc_footprint_t;

static void ooc_footprint(const void *arg, int64_t n, cli_footprint_t *f) {
  const bench_ooc_footprint_t *b = arg;
  const double tiles = triangle_bytes(b->o->dtype, n, tessera_tile_for(b->ctx, n));
  cli_footprint_add(f, "the tiles of one triangle of A:", cli_descriptor_host_bytes(b->ctx, tiles));
  cli_footprint_add(f, "the residual's vectors:",
                    (double)n * (9 * sizeof(double) + 2 * tessera_dtype_size(b->o->dtype)));
}

/** Number of CPU workers of the context. */
static int cpu_workers(const tessera_context_t *ctx) {
  tessera_device_info_t cpu = {.workers = 0};
  if (tessera_device_count(ctx, TESSERA_DEVICE_CPU) < 1 ||
      tessera_device_info(ctx, TESSERA_DEVICE_CPU, 0, &cpu) != 0)
    return 0;
  return cpu.workers;
}

int cli_bench_ooc(const cli_opts_t *o) {
  tessera_context_t *ctx;
  if (cli_context(o, &ctx)) return CLI_FAILED;
  if (cpu_workers(ctx) < 1) {
    fprintf(stderr, "tessera: bench --out-of-core generates the matrix with CPU tasks, and this "
                    "context has no CPU worker (every core serves a GPU, or --workers 0): give "
                    "it some with --workers N\n");
    return cli_finish(ctx, CLI_FAILED);
  }
  const bench_ooc_footprint_t fp = {o, ctx};
  for (int i = 0; i < o->nsizes; i++)
    if (cli_bench_check_footprint(o, ooc_footprint, &fp, o->sizes[i]))
      return cli_finish(ctx, CLI_FAILED);
  if (!o->json)
    printf("# potrf %s, uplo %c, out of core: tessera (%d workers, %d GPUs) on a triangle-only "
           "descriptor (the matrix's only copy), generated by CPU tasks before each run "
           "(untimed), best of %d; residual: backward error of tile potrs, A regenerated\n",
           tessera_dtype_name(o->dtype), (char)o->uplo, tessera_worker_count(ctx),
           tessera_accelerator_count(ctx), o->reps);
  cli_print_header(o, NULL, NULL);
  cli_progress_t prog;
  progress_init(&prog);
  int rc = CLI_OK;
  for (int i = 0; i < o->nsizes && rc == CLI_OK; i++) rc = bench_size(ctx, o, o->sizes[i], &prog);
  progress_end(&prog);
  return cli_finish(ctx, rc);
}
