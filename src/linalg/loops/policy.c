/* The algorithms layer's device, size and precision choices (policy.h): the tile size of
 * LAPACK-style calls (from the order, the workers and the GPUs), the Cholesky panel method (per
 * call, else the context's configuration, else from the scope's devices), which accelerators
 * can hold a stage, the eigensolver's forms, tiles, panels, bulge-chasing tasks and tridiagonal
 * method, and the mixed-precision solves' factor precision, arithmetic, devices and factor
 * tiling. */
#include <stdlib.h>

#include "kernels/cpu/hb2st.h"
#include "kernels/cpu/laed.h"
#include "kernels/eig.h"
#include "kernels/table.h"
#include "linalg/desc/desc.h"
#include "linalg/loops/policy.h"
#include "runtime/context.h"
#include "runtime/perfmodel.h"

/* Order from which LAPACK-style calls use GPU-sized tiles (see tessera_tile_for). */
enum { GPU_TILE_MIN_N = 8192 };

/* Widest QR panel on GPUs: a panel's factorization is a chain of columns, so narrower panels
 * let the next one start while more of the trailing update is still running. */
enum { QR_GPU_PANEL_MAX = 1024 };

/* Rows per column from which a matrix is QR's tall case: on GPUs one panel, which the GPU's
 * geqrt factors by CholeskyQR2 where that is accurate. */
enum { QR_TALL_RATIO = 16 };

int tessera_default_tile(const tessera_context_t *ctx) {
  if (!ctx) return 0;
  const tessera_config_t *cfg = tessera_config(ctx);
  if (cfg->tile_size > 0) return cfg->tile_size;
  return tessera_accelerator_count(ctx) > 0 ? 2048 : 320;
}

int tessera_tile_for(const tessera_context_t *ctx, int64_t n) {
  if (!ctx) return 0;
  const tessera_config_t *cfg = tessera_config(ctx);
  if (cfg->tile_size > 0) return cfg->tile_size;
  const int gpus = tessera_accelerator_count(ctx);
  /* Below this order a call from the caller's (pageable) array costs more in copies to the GPUs
   * than it computes: tiles sized for the CPU workers let the cost model keep it there. */
  if (gpus > 0 && n >= GPU_TILE_MIN_N) {
    int64_t nb = n / (2 * gpus) / 256 * 256;
    return (int)(nb >= 2048 ? 2048 : nb >= 512 ? nb : 512);
  }
  const int workers = tessera_worker_count(ctx);
  int q = 1;
  while (q * q < workers) q++;
  int64_t nb = n / (4 * q) / 64 * 64;
  return (int)(nb < 128 ? 128 : nb > 1024 ? 1024 : nb);
}

int tessera_tile_for_devices(const tessera_context_t *ctx, int64_t n, int ndev, int lu) {
  if (!ctx) return 0;
  if (n < 1 || ndev < 1) return 1;
  const tessera_config_t *cfg = tessera_config(ctx);
  if (cfg->tile_size > 0) return cfg->tile_size;
  if (tessera_accelerator_count(ctx) == 0) return tessera_tile_for(ctx, n);
  if (ndev == 1 && n <= (lu ? TESSERA_ONE_PANEL_MAX : TESSERA_ONE_TILE_MAX)) return (int)n;
  int64_t nb = n / (int64_t)ndev / 256 * 256;
  return (int)(nb < 256 ? 256 : nb > 2048 ? 2048 : nb);
}

bool tsr_lu_inverts(const tessera_matrix_t *A) {
  return A->flow->size <= 1;
}

double tsr_layout_seconds(const int *owner, int64_t mt, int64_t nt, int procs, int64_t steps,
                          const double *scale, double unit) {
  /* c[s * procs + p]: p's tiles updated up to step s (exclusive); then, from the last step
   * back, w[p] the tiles p updates at step k */
  double *c = calloc((size_t)(steps + 1) * (size_t)procs, sizeof *c);
  double *w = calloc((size_t)procs, sizeof *w);
  double t = 0;
  for (int64_t j = 0; c && w && j < nt; j++)
    for (int64_t i = 0; i < mt; i++) {
      const int p = owner[i + j * mt];
      int64_t s = mt == 1 ? j : i < j ? i : j;
      if (p < 0 || p >= procs) continue;
      c[(s < steps ? s : steps) * procs + p] += 1;
    }
  for (int64_t k = steps - 1; c && w && k >= 0; k--) {
    double most = 0;
    for (int p = 0; p < procs; p++) {
      w[p] += c[(k + 1) * procs + p];
      if (w[p] > most) most = w[p];
    }
    t += most * (scale ? scale[k] : 1) * unit;
  }
  free(c), free(w);
  return t;
}

bool tsr_fit_pays(double saved, double moving) {
  return saved > moving;
}

tessera_grid_t tessera_grid_fitted(int processes) {
  if (processes < 1) return (tessera_grid_t){0, 0};
  int q = 1; /* the largest divisor q <= sqrt(processes): p = processes / q >= q */
  for (int d = 1; (int64_t)d * d <= processes; d++)
    if (processes % d == 0) q = d;
  return (tessera_grid_t){processes / q, q};
}

int tessera_tile_for_lu(const tessera_context_t *ctx, int64_t m, int64_t n) {
  if (!ctx) return 0;
  const int64_t k = m < n ? m : n;
  if (tessera_config(ctx)->tile_size > 0 ||
      (tessera_accelerator_count(ctx) > 0 && k >= GPU_TILE_MIN_N))
    return tessera_tile_for(ctx, k);
  int64_t nb = k / (8 * (int64_t)(tessera_worker_count(ctx) > 0 ? tessera_worker_count(ctx) : 1));
  nb = nb / 64 * 64;
  return (int)(nb < 128 ? 128 : nb > 512 ? 512 : nb);
}

int tessera_tile_for_qr(const tessera_context_t *ctx, int64_t m, int64_t n) {
  if (!ctx) return 0;
  const int lu = tessera_tile_for_lu(ctx, m, n);
  if (tessera_config(ctx)->tile_size > 0) return lu;
  if (tessera_accelerator_count(ctx) > 0) {
    if (m >= QR_TALL_RATIO * n && n <= QR_GPU_PANEL_MAX) return n > 0 ? (int)n : 1;
    return lu < QR_GPU_PANEL_MAX ? lu : QR_GPU_PANEL_MAX;
  }
  /* a panel's geqrt runs on one worker: a tall matrix needs several panels for the others */
  const int64_t narrow = n / 8 > 32 ? n / 8 : 32;
  return (int)(narrow < lu ? narrow : lu);
}

/* The eigensolver's tile and band width: larger makes the band reduction's and the
 * back-transformations' products larger and the bulge chasing longer (it grows with the band).
 * Values alone on the GPUs have no back-transformation to feed: a narrower band shortens the
 * chase more than it slows the band reduction's products, up to the order where the band
 * reduction's n³ outgrows the chase's n² kd and a wider band pays again. */
enum {
  EIG_TILE = 128,
  EIG_GPU_VALUES_TILE = 64,
  EIG_GPU_VALUES_WIDE = 96,
  EIG_GPU_VALUES_WIDE_N = 24576
};

int tsr_eig_band(const tessera_context_t *ctx, tessera_job_t job, bool gpu, int64_t n) {
  const int given = tessera_config(ctx)->tile_size;
  const int64_t t = given > 0                        ? given
                    : job == TESSERA_VECTORS || !gpu ? EIG_TILE
                    : n < EIG_GPU_VALUES_WIDE_N      ? EIG_GPU_VALUES_TILE
                                                     : EIG_GPU_VALUES_WIDE;
  return (int)(n < 1 ? 1 : t < n ? t : n);
}

int tessera_tile_for_eig(tessera_context_t *ctx, tessera_job_t job, tessera_dtype_t dtype,
                         int64_t n) {
  if (!ctx) return 0;
  tessera_scope_t scope;
  return tsr_eig_band(ctx, job, tsr_eig_gpu(ctx, job, dtype, n, &scope), n);
}

/* The polar decomposition's tiles on accelerators: at most GPU_POLAR_TILE, at least
 * GPU_POLAR_TILE_MIN (smaller tiles would multiply its products' tasks). */
enum { GPU_POLAR_TILE = 2048, GPU_POLAR_TILE_MIN = 512 };

int tessera_tile_for_polar(const tessera_context_t *ctx, int64_t m, int64_t n) {
  if (!ctx) return 0;
  const tessera_config_t *cfg = tessera_config(ctx);
  if (cfg->tile_size > 0) return cfg->tile_size;
  const int gpus = tessera_accelerator_count(ctx);
  if (gpus == 0) return tessera_tile_for(ctx, m > n ? m : n);
  const int64_t nb = n / (4 * gpus) / 256 * 256;
  return (int)(nb > GPU_POLAR_TILE       ? GPU_POLAR_TILE
               : nb < GPU_POLAR_TILE_MIN ? GPU_POLAR_TILE_MIN
                                         : nb);
}

bool tsr_polar_gpu(tessera_context_t *ctx, tessera_dtype_t dt, int64_t m, int64_t n,
                   tessera_scope_t *scope) {
  const size_t mn = (size_t)m * (size_t)n, nn = (size_t)n * (size_t)n;
  const size_t bytes = (3 * mn + nn + 2 * (mn + nn)) * tessera_dtype_size(dt);
  const int gpus = tessera_accelerator_count(ctx);
  return tsr_fitting_accelerators(ctx, bytes / (size_t)(gpus > 0 ? gpus : 1), scope);
}

void tessera_potrf_options_init(tessera_potrf_options_t *opts) {
  if (opts) opts->trsm_inverse = -1;
}

int tsr_panel_inverse(tessera_context_t *ctx, const tessera_potrf_options_t *opts) {
  if (opts && opts->trsm_inverse >= 0) return opts->trsm_inverse > 0;
  const int given = tessera_config(ctx)->trsm_inverse;
  if (given >= 0) return given > 0;
  return tessera_scope_nodes(ctx, tessera_get_scope(ctx), NULL, 0) > 0;
}

bool tsr_fitting_accelerators(tessera_context_t *ctx, size_t bytes, tessera_scope_t *scope) {
  const tessera_scope_t all = tessera_get_scope(ctx);
  tessera_scope_t s = all;
  s.kinds =
      (all.kinds ? all.kinds : (1u << TESSERA_DEVICE_KINDS) - 1) & ~(1u << TESSERA_DEVICE_CPU);
  enum { MOST_NODES = 64 };
  int nodes[MOST_NODES];
  const int count = s.kinds ? tessera_scope_nodes(ctx, s, nodes, MOST_NODES) : 0;
  for (int i = 0; i < count && i < MOST_NODES; i++)
    if (tessera_memory_node_capacity(ctx, nodes[i]) >= bytes) {
      *scope = s;
      return true;
    }
  *scope = tessera_scope_cpus();
  return false;
}

/* Tiles of the band reduction on a band of kd: kd itself on CPUs, on GPUs the largest multiple
 * of kd up to EIG_GPU_TILE (the products' gemms large enough for a GPU). */
enum { EIG_GPU_TILE = 2048 };

int64_t tsr_eig_band_tile(bool gpu, int64_t n, int kd) {
  if (!gpu) return kd;
  const int64_t t = (n < EIG_GPU_TILE ? n : EIG_GPU_TILE) / kd * kd;
  return t > kd ? t : kd;
}

bool tsr_eig_band_dealt(bool gpu) {
  return !gpu;
}

/* Columns of E per task of the back-transformations: EIG_GPU_PANEL in the GPU forms (fewer,
 * wider products); on CPUs about APPLY_COLUMNS (wide for the block reflectors' gemms), the
 * panels a multiple of the CPU workers so that none finishes its last panel alone. */
enum { EIG_GPU_PANEL = 4096, APPLY_COLUMNS = 1024 };

int64_t tsr_eig_panel_columns(bool gpu, int workers, int64_t n) {
  if (gpu) return EIG_GPU_PANEL;
  const int64_t w = workers > 0 ? workers : 1;
  const int64_t panels = ((n + APPLY_COLUMNS - 1) / APPLY_COLUMNS + w - 1) / w * w;
  const int64_t cols = (n + panels - 1) / panels;
  return cols > 0 ? cols : 1;
}

/* The GPU forms (wide tiles and panels, the divide and conquer, Q2 on the accelerators) where an
 * accelerator of the context's scope can hold the largest stage's data. With vectors the
 * merges' Q and workspace (2 n² doubles and a chunk of columns) beside the GPU chase's
 * reflectors (n² of the dtype), or those reflectors beside E and a panel; stage 1's V is
 * workspace tiles, evicted to the host while the merges need the room. Values alone 3 n² of the
 * dtype (stage 1's working copy and V, or V beside the chase's reflectors). Else every stage
 * takes its CPU form, whose tiles fit any pool. */
bool tsr_eig_gpu(tessera_context_t *ctx, tessera_job_t job, tessera_dtype_t dt, int64_t n,
                 tessera_scope_t *scope) {
  const size_t nn = (size_t)n * (size_t)n, es = tessera_dtype_size(dt);
  const size_t merges = (nn + (size_t)tsr_laed_work(n)) * sizeof(double) + nn * es;
  const size_t q2 = (2 * nn + (size_t)n * (size_t)(n < EIG_GPU_PANEL ? n : EIG_GPU_PANEL)) * es;
  const size_t bytes = job == TESSERA_VECTORS ? (merges > q2 ? merges : q2) : 3 * nn * es;
  return tsr_fitting_accelerators(ctx, bytes, scope);
}

/* The accelerators of `scope` whose pools hold `bytes`, in device order, at most `most`: each as a
 * scope of that device alone into s[], its kind into kind[] where given. Returns their count. */
static int fitting_devices(tessera_context_t *ctx, tessera_scope_t scope, size_t bytes, int most,
                           tessera_scope_t *s, tessera_device_kind_t *kind) {
  int fit = 0;
  for (int k = 0; k < TESSERA_DEVICE_KINDS && fit < most; k++) {
    if (k == TESSERA_DEVICE_CPU || (scope.kinds && !(scope.kinds & (1u << k)))) continue;
    for (int i = 0; i < tessera_device_count(ctx, (tessera_device_kind_t)k) && i < 64 && fit < most;
         i++) {
      tessera_device_info_t d;
      if ((scope.gpu_mask && !(scope.gpu_mask & (1ull << i))) ||
          tessera_device_info(ctx, (tessera_device_kind_t)k, i, &d) ||
          tessera_memory_node_capacity(ctx, d.memory_node) < bytes)
        continue;
      if (kind) kind[fit] = (tessera_device_kind_t)k;
      s[fit++] = (tessera_scope_t){1u << k, 1ull << i};
    }
  }
  return fit;
}

/* The one stage's device: the first accelerator of the scope whose pool holds `bytes`, as a
 * scope of that device alone, with its kind; else the CPU workers. */
static tessera_scope_t one_device(tessera_context_t *ctx, size_t bytes,
                                  tessera_device_kind_t *kind) {
  tessera_scope_t s;
  if (fitting_devices(ctx, tessera_get_scope(ctx), bytes, 1, &s, kind) == 1) return s;
  *kind = TESSERA_DEVICE_CPU;
  return tessera_scope_cpus();
}

/* Two methods of one routine in the context's history: each method's entry of seconds per unit
 * of work by device kind and key, and its trial entry. A method's first call at a key goes to
 * its trial entry, not its own: that call also loads its libraries' kernels and makes their
 * handles and workspaces, and a mean holding it would keep a method that lost by it from being
 * tried again. */
typedef struct {
  const char *mean[2], *trial[2];
} methods_t;

/* The eigensolver's (0: two stages, 1: one), the SVD's and the polar decomposition's (0: QDWH,
 * 1: through LAPACK's gesdd), in seconds per n³ (the others': per max(m, n) min(m, n)²). */
static const methods_t EIG = {{"syevd:two_stage", "syevd:one_stage"},
                              {"syevd:two_stage_trial", "syevd:one_stage_trial"}};
static const methods_t SVD = {{"gesvd:qdwh", "gesvd:lapack"},
                              {"gesvd:qdwh_trial", "gesvd:lapack_trial"}};
static const methods_t POLAR = {{"gepolar:qdwh", "gepolar:lapack"},
                                {"gepolar:qdwh_trial", "gepolar:lapack_trial"}};

/* A method's mean at its key (a negative value where not measured), and how many calls it holds
 * there, its trial's included. */
static double method_rate(tessera_context_t *ctx, const methods_t *M, int which,
                          tessera_device_kind_t kind, uint64_t key, long *calls) {
  *calls = tsr_perfmodel_count(ctx->perfmodel, M->mean[which], kind, key) +
           tsr_perfmodel_count(ctx->perfmodel, M->trial[which], kind, key);
  return tsr_perfmodel_predict(ctx->perfmodel, NULL, M->mean[which], kind, key);
}

/* Whether method 1 is the one to run: the quicker once both have a mean, until then the one with
 * fewer calls (they take turns). */
static bool method_pick(tessera_context_t *ctx, const methods_t *M,
                        const tessera_device_kind_t kind[2], const uint64_t key[2]) {
  long calls[2];
  const double r0 = method_rate(ctx, M, 0, kind[0], key[0], &calls[0]);
  const double r1 = method_rate(ctx, M, 1, kind[1], key[1], &calls[1]);
  if (r0 < 0 || r1 < 0) return calls[1] <= calls[0];
  return r1 <= r0;
}

static void method_record(tessera_context_t *ctx, const methods_t *M, int which,
                          tessera_device_kind_t kind, uint64_t key, double per_unit) {
  const bool trial = tsr_perfmodel_count(ctx->perfmodel, M->trial[which], kind, key) == 0;
  tsr_perfmodel_record(ctx->perfmodel, trial ? M->trial[which] : M->mean[which], kind, key,
                       per_unit, 1);
}

static int octave_of(int64_t n) {
  int octave = 0;
  while (octave < 62 && (INT64_C(2) << octave) <= n) octave++;
  return octave;
}

/* The kind of a scope's accelerators (none: the CPUs) and its memory nodes' count. */
static tessera_device_kind_t scope_kind(tessera_context_t *ctx, tessera_scope_t s, int *count) {
  int nodes[64];
  *count = tessera_scope_nodes(ctx, s, nodes, 64);
  for (int k = 0; k<TESSERA_DEVICE_KINDS && * count> 0; k++)
    if (k != TESSERA_DEVICE_CPU && (!s.kinds || (s.kinds & (1u << k))) &&
        tessera_device_count(ctx, (tessera_device_kind_t)k) > 0)
      return (tessera_device_kind_t)k;
  return TESSERA_DEVICE_CPU;
}

/* The kind and key of an eigensolver method at n: the kind of the one stage's device, or of the
 * scope's accelerators (none: the CPUs), with the dtype, job, n's octave and their count; for k
 * of the n pairs (k < n, a range) a variant of its own and k's octave. */
static uint64_t eig_span(tessera_context_t *ctx, bool one, tessera_scope_t where, tessera_job_t job,
                         tessera_dtype_t dt, int64_t n, int64_t k, tessera_device_kind_t *kind) {
  int count;
  *kind = scope_kind(ctx, one ? where : tessera_get_scope(ctx), &count);
  const unsigned range = k < n ? 2u : 0u; /* a range: its own variant, k's octave beside n's */
  return tsr_size_key(dt, (job == TESSERA_VECTORS) | range, octave_of(n), count > 0 ? count : 1,
                      range ? octave_of(k) : 0);
}

bool tsr_eig_one_stage(tessera_context_t *ctx, tessera_job_t job, tessera_dtype_t dt, int64_t n,
                       tessera_scope_t *where, size_t *work_bytes) {
  return tsr_eig_one_stage_range(ctx, job, dt, n, n, where, work_bytes);
}

bool tsr_eig_one_stage_range(tessera_context_t *ctx, tessera_job_t job, tessera_dtype_t dt,
                             int64_t n, int64_t k, tessera_scope_t *where, size_t *work_bytes) {
  const size_t work = tsr_syevd_work_bytes(dt, n);
  const size_t bytes = (size_t)n * (size_t)n * tessera_dtype_size(dt) + work + 16 * (size_t)n;
  tessera_device_kind_t kind;
  *where = one_device(ctx, bytes, &kind);
  *work_bytes = kind == TESSERA_DEVICE_CPU ? 0 : work;
  const tessera_eig_method_t m = tessera_config(ctx)->eig_method;
  if (m != TESSERA_EIG_COST) return m == TESSERA_EIG_ONE;
  tessera_device_kind_t kinds[2];
  const uint64_t keys[2] = {eig_span(ctx, false, *where, job, dt, n, k, &kinds[0]),
                            eig_span(ctx, true, *where, job, dt, n, k, &kinds[1])};
  return method_pick(ctx, &EIG, kinds, keys);
}

void tsr_eig_measured(tessera_context_t *ctx, bool one, tessera_scope_t where, tessera_job_t job,
                      tessera_dtype_t dt, int64_t n, double seconds) {
  tsr_eig_measured_range(ctx, one, where, job, dt, n, n, seconds);
}

void tsr_eig_measured_range(tessera_context_t *ctx, bool one, tessera_scope_t where,
                            tessera_job_t job, tessera_dtype_t dt, int64_t n, int64_t k,
                            double seconds) {
  if (n < 1 || k < 1 || !(seconds > 0)) return;
  tessera_device_kind_t kind;
  const uint64_t key = eig_span(ctx, one, where, job, dt, n, k, &kind);
  method_record(ctx, &EIG, one, kind, key, seconds / ((double)n * (double)n * (double)n));
}

/* The SVD's key: dtype, job and the octaves of its long and short sides, on the CPUs. */
static uint64_t svd_key(tessera_job_t job, tessera_dtype_t dt, int64_t m, int64_t n) {
  const int64_t big = m > n ? m : n, small = m > n ? n : m;
  return tsr_size_key(dt, job != TESSERA_VALUES, octave_of(big), octave_of(small), 1);
}

bool tsr_svd_lapack(tessera_context_t *ctx, bool polar, tessera_job_t job, tessera_dtype_t dt,
                    int64_t m, int64_t n) {
  const tessera_svd_method_t method = tessera_config(ctx)->svd_method;
  if (method != TESSERA_SVD_COST) return method == TESSERA_SVD_LAPACK;
  int count;
  if (scope_kind(ctx, tessera_get_scope(ctx), &count) != TESSERA_DEVICE_CPU) return false;
  const tessera_device_kind_t kinds[2] = {TESSERA_DEVICE_CPU, TESSERA_DEVICE_CPU};
  const uint64_t key = svd_key(job, dt, m, n), keys[2] = {key, key};
  return method_pick(ctx, polar ? &POLAR : &SVD, kinds, keys);
}

void tsr_svd_measured(tessera_context_t *ctx, bool polar, bool lapack, tessera_job_t job,
                      tessera_dtype_t dt, int64_t m, int64_t n, double seconds) {
  int count;
  if (m < 1 || n < 1 || !(seconds > 0) ||
      scope_kind(ctx, tessera_get_scope(ctx), &count) != TESSERA_DEVICE_CPU)
    return;
  const double big = (double)(m > n ? m : n), small = (double)(m > n ? n : m);
  method_record(ctx, polar ? &POLAR : &SVD, lapack, TESSERA_DEVICE_CPU, svd_key(job, dt, m, n),
                seconds / (big * small * small));
}

/* Steps per task of the bulge chasing. A step is about 12 kd'^2 flops of level-2 BLAS, a few
 * microseconds at kd' = 64, against a runtime cost of about a microsecond per task: tasks of at
 * least 4 steps of kd' = 64, more for narrower bands (docs/benchmarks.md has the group sizes
 * tried). But sweeps start 2 G steps apart (task (s + 1, 0) follows (s, 1)), so about n / (2 kd' G)
 * sweeps are in flight at the start, half that midway: G <= n / (8 kd' workers) keeps every worker
 * fed. */
enum { TASK_WORK = 4 * 64 * 64 };

int tsr_hb2st_group(int n, int kd, int workers) {
  tsr_hb2st_layout_t L;
  if (tsr_hb2st_layout(n, kd, &L) || L.kd < 1) return 2;
  const int64_t k2 = (int64_t)L.kd * L.kd;
  int64_t g = (TASK_WORK + k2 - 1) / k2;
  const int64_t fed = n / (8 * (int64_t)L.kd * (workers > 1 ? workers : 1));
  if (g > fed) g = fed;
  return (int)(g < 2 ? 2 : g > 64 ? 64 : g);
}

/* Rows of the divide and conquer's leaves where the merges may run on accelerators: a leaf per
 * CPU worker or more at the orders GPUs take. Without vectors: the order from which the
 * divide and conquer on the CPU workers (O(n²) in tasks) replaces dsterf (O(n²) on one core),
 * and its leaves (dstedc with vectors on each, whose rows it keeps). */
enum { STEDC_LEAF = 512, STEDC_VALUES_MIN = 4096, STEDC_VALUES_LEAF = 128 };

int64_t tsr_eig_stedc_leaf(tessera_job_t job, bool gpu, int workers, int64_t n) {
  if (job == TESSERA_VECTORS && workers > 0 && gpu) return STEDC_LEAF;
  if (job == TESSERA_VALUES && workers > 1 && n >= STEDC_VALUES_MIN) return STEDC_VALUES_LEAF;
  return 0;
}

/* With vectors, the accelerators where one of them can hold Q and the merges' workspace (about
 * 2 n² doubles; Q stays there between merges), else the CPU workers (Q on the host). Values
 * alone, the accelerators where one has room for a merge's plan and kept rows: the roots and
 * the rows' products are O(k²) each and independent over the k indices, which a GPU's threads
 * take all at once. */
bool tsr_stedc_merges_scope(tessera_context_t *ctx, bool vectors, int64_t n,
                            tessera_scope_t *scope) {
  const size_t doubles = vectors ? (size_t)(n * n + tsr_laed_work(n)) : (size_t)(8 * n);
  return tsr_fitting_accelerators(ctx, doubles * sizeof(double), scope);
}

int tsr_stedc_parts(tessera_context_t *ctx, tessera_scope_t scope, int64_t n, int most,
                    tessera_scope_t *part) {
  int count = 0;
  for (int parts = 2; parts <= most; parts *= 2) {
    const int64_t rows = (n + parts - 1) / parts;
    const size_t bytes = (size_t)(rows * n + tsr_laed_work_rows(rows, n)) * sizeof(double);
    tessera_scope_t s[64];
    if (fitting_devices(ctx, scope, bytes, parts, s, NULL) < parts) break;
    for (int p = 0; p < parts; p++) part[p] = s[p];
    count = parts;
  }
  if (count < 2) part[0] = scope;
  return count < 2 ? 1 : count;
}

/* Orders from which AUTO factors a Cholesky and an LU solve on the GPUs of a context that has
 * them: below, the refinement's fixed costs outweigh what the factor saves
 * (docs/benchmarks.md). */
enum { AUTO_GPU_CHOLESKY = 16384, AUTO_GPU_LU = 32768 };

/* AUTO resolved by device and matrix (docs/decisions.md): on CPUs alone, single precision for
 * f64 and c128 (twice f64's rate); with GPUs, from the orders above, a Cholesky factor on FP16
 * tensor cores (A scaled into FP16's range; three more bits than BF16, so fewer refinement
 * steps) and an LU factor in single precision on TF32X3 products (an LU on 16-bit inputs leaves
 * the refinement too much to do on general matrices), else the working precision. */
tessera_factor_t tsr_mixed_precision(tessera_context_t *ctx, tessera_dtype_t dt, bool lu, int64_t n,
                                     const tessera_mixed_options_t *o) {
  if (o->factor != TESSERA_FACTOR_AUTO) return o->factor;
  const bool single = tsr_dtype_single(dt);
  if (tessera_accelerator_count(ctx) == 0)
    return single ? TESSERA_FACTOR_WORKING : TESSERA_FACTOR_SINGLE;
  if (n < (lu ? AUTO_GPU_LU : AUTO_GPU_CHOLESKY) || (lu && single)) return TESSERA_FACTOR_WORKING;
  return lu ? TESSERA_FACTOR_SINGLE : TESSERA_FACTOR_HALF;
}

/* The product arithmetic of each factor precision on tensor cores (0: none); a single-precision
 * LU's products on GPUs in three TF32 products of split operands (the Cholesky factor's stay in
 * f32: docs/decisions.md). */
static const int math_of[6] = {[TESSERA_FACTOR_TF32] = TSR_MATH_TF32,
                               [TESSERA_FACTOR_BF16] = TSR_MATH_BF16,
                               [TESSERA_FACTOR_HALF] = TSR_MATH_F16};

int tsr_mixed_math(tessera_factor_t f, bool lu) {
  return f == TESSERA_FACTOR_SINGLE && lu ? TSR_MATH_TF32X3 : math_of[f];
}

/* On a context with accelerators every task of the solve runs on them: the conversion where A's
 * tiles would otherwise stay (the host), A's copies there for the residuals; A's tiles reach
 * them at the link's speed only from pinned memory. */
bool tsr_mixed_on_accelerators(tessera_context_t *ctx) {
  return tessera_accelerator_count(ctx) > 0;
}

/* A Cholesky factor on tensor cores of one accelerator as one tile there (the copy and its
 * factor, 2 n² of the factor's dtype, fitting it), which its kernel factors by recursive halving
 * on the tensor cores without the tile loop's task per block. */
bool tsr_mixed_one_tile(tessera_context_t *ctx, tessera_factor_t f, bool lu, bool distributed,
                        int64_t n, size_t les) {
  tessera_scope_t fit;
  return !lu && !distributed && tsr_mixed_math(f, lu) && tessera_accelerator_count(ctx) == 1 &&
         tsr_fitting_accelerators(ctx, 2 * (size_t)n * (size_t)n * les, &fit);
}

/* A routine's intermediate results follow its operand's distribution. */
int tsr_matrix_like(const tessera_matrix_t *A, int64_t m, int64_t n, bool panels,
                    tessera_matrix_t **out) {
  const int64_t mb = panels ? (m > 0 ? m : 1) : A->mb;
  if (!A->comm) return tsr_matrix_create_workspace(A->ctx, A->dtype, m, n, mb, A->nb, out);
  const int procs = tessera_comm_size(A->comm);
  const tessera_grid_t g = panels          ? (tessera_grid_t){1, procs}
                           : A->grid.p > 0 ? A->grid
                                           : tessera_grid_fitted(procs);
  return tessera_matrix_create_distributed(A->ctx, A->comm, g, A->dtype, m, n, mb, A->nb, out);
}
