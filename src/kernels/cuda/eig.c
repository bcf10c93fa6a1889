/* CUDA kernel of the eigensolver's second back-transformation: E = Q2 E, Q2 the product of the
 * bulge chasing's reflectors (cpu/hb2st.h), as block reflectors applied by batched gemms.
 *
 * Groups. As on CPUs (cpu/hb2st_apply.c), the reflectors of nb consecutive sweeps S .. S + nb - 1
 * at one step j form one block reflector G(S, j) = I - V T Vᴴ on rows S + 1 + j kd onwards
 * (V a staircase of kd + nb - 1 rows, nb <= kd), and Q2 E applies the groups of sweeps from the
 * last, within one the steps from 0 up.
 *
 * Wavefronts. Count the sweep groups from the last, i = 0, 1, ...: a group applied before group
 * (i, j) that shares a row with it is (i, j') with j' < j or (i', j') with i' < i and j' <= j,
 * and one applied after it that shares a row is (i, j') with j' > j or (i', j') with i' > i and
 * j' >= j. So every group sharing rows with (i, j) lies on the right side of the wavefront
 * t = i + j, and the groups of one wavefront, whose rows are disjoint (nb + kd apart), are
 * applied at once. Each wavefront's groups of full size (nb sweeps, kd + nb - 1 rows) form
 * strided batches; the few at the matrix's end go one by one. A batch is staged (V and tau from
 * the device copies of v and tau), T formed from the Gram matrix VᴴV
 * (tsr_cuda_larft_batched) and folded into Z = T Vᴴ, then applied by two batched gemms, each a
 * pass over E_b:
 *   W = Z E_b;  E_b -= V W.
 *
 * Alignment: each member's V and E_b start one row above the staircase (PAD), a row of zeros in V:
 * kd + nb rows and E_b's first row S + j kd, multiples of nb where kd is one (the GPU forms'
 * bands), so that cuBLAS takes its aligned paths. That row is a gap of the wavefront (the member
 * before ends a row above it), which the zero row leaves as it is.
 *
 * Workspace: the worker's scratch, holding for each member of a batch V, G (then Z), T, tau
 * and W;
 * batches larger than it fits are split, and E's columns are taken in chunks narrow enough for a
 * few dozen members, a batch's V and T made once for all of them (wavefronts outside, chunks
 * inside: columns never mix, so each gets the wavefronts in order). */
#include <stdbool.h>
#include <stddef.h>

#include "kernels/cpu/hb2st.h"
#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/eig.h"

/* Sweeps per block reflector (at most kd'): wide gemms, a staircase of at most 1.5 x the useful
 * flops at kd = 128. */
enum { APPLY_SWEEPS = 64, MIN_BATCH = 32, ALIGN = 256, PAD = 1 };

static size_t aligned(size_t bytes) {
  return (bytes + ALIGN - 1) / ALIGN * ALIGN;
}

/* One call's constants and workspace regions (byte offsets per member, in the order V, G / Z,
 * T, tau, W). */
typedef struct {
  const tessera_exec_t *ex;
  cublasHandle_t h;
  tessera_dtype_t dt;
  tsr_hb2st_layout_t L;
  int nb, R, cap, mc;
  size_t es;
  const void *v, *tau;
} plan_t;

enum { REGIONS = 5 };

/* Elements of each of a member's regions (V, G / Z, T, tau, W) for column chunks of mc: G is
 * k x k, Z = T Vᴴ k x R in its place. */
static void member_sizes(int nb, int R, int mc, size_t sizes[REGIONS]) {
  const size_t k = (size_t)nb;
  sizes[0] = sizes[1] = (size_t)(R + PAD) * k, sizes[2] = k * k, sizes[3] = k;
  sizes[4] = k * (size_t)mc;
}

/* Workspace bytes of one member, each region aligned. */
static size_t member_bytes(size_t es, int nb, int R, int mc) {
  size_t sizes[REGIONS], total = 0;
  member_sizes(nb, R, mc, sizes);
  for (int i = 0; i < REGIONS; i++) total += aligned(sizes[i] * es);
  return total;
}

/* C_b = alpha op(A_b) op(B_b) + beta C_b for b < count, strides in elements. */
static int gemm_batch(const plan_t *p, char ta, char tb, int m, int n, int k, double alpha,
                      const void *A, long long lda, long long sa, const void *B, long long ldb,
                      long long sb, double beta, void *C, long long ldc, long long sc, int count) {
  const tsr_cuda_scalar_t al = tsr_cuda_scalar(p->dt, (tsr_scalar_t){alpha, 0});
  const tsr_cuda_scalar_t be = tsr_cuda_scalar(p->dt, (tsr_scalar_t){beta, 0});
  const cudaDataType type = tsr_cuda_type(p->dt);
  const int oa = tsr_op_index(ta, p->dt), ob = tsr_op_index(tb, p->dt);
  const cublasStatus_t st = cublasGemmStridedBatchedEx(
      p->h, tsr_cuda_op(oa), tsr_cuda_op(ob), m, n, k, &al, A, type, (int)lda, sa, B, type,
      (int)ldb, sb, &be, C, type, (int)ldc, sc, count,
      tsr_dtype_single(p->dt) ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
  return st == CUBLAS_STATUS_SUCCESS ? 0 : TESSERA_ERR_KERNEL;
}

/* Applies `count` groups (at most p->cap) of k sweeps and `rows` rows, the first of sweeps from
 * s0 at step j0 and each next nb sweeps and one step on, to the m columns of E: V and T made
 * once, then the products on column chunks of p->mc. */
static int apply_batch(const plan_t *p, int s0, int j0, int count, int k, int rows, char *E,
                       int lde, int m) {
  const tessera_cuda_scratch_t *s = tsr_cuda_scratch(p->ex);
  char *at[REGIONS], *w = s->workspace;
  long long stride[REGIONS];
  size_t sizes[REGIONS];
  member_sizes(p->nb, p->R, p->mc, sizes);
  for (int i = 0; i < REGIONS; i++) {
    at[i] = w;
    stride[i] = (long long)(aligned(sizes[i] * p->es) / p->es);
    w += aligned(sizes[i] * p->es) * (size_t)count;
  }
  /* the strides are whole elements: every region's size is a multiple of the element size */
  const long long ldv = p->R + PAD, nb = p->nb, row_step = (long long)p->nb + p->L.kd;
  const int padded = rows + PAD;
  const tsr_cuda_hb2st_batch_t b = {.n = p->L.n,
                                    .kd = p->L.kd,
                                    .steps = p->L.steps,
                                    .s0 = s0,
                                    .j0 = j0,
                                    .sweeps_apart = p->nb,
                                    .count = count,
                                    .k = k,
                                    .rows = padded,
                                    .pad = PAD,
                                    .ldv = ldv,
                                    .stride_v = stride[0],
                                    .stride_tau = stride[3]};
  const char c = tsr_dtype_complex(p->dt) ? 'C' : 'T';
  char *Eb = E + (size_t)(s0 + 1 - PAD + (int64_t)j0 * p->L.kd) * p->es;
  if (tsr_cuda_hb2st_stage(p->dt, &b, p->v, p->tau, at[0], at[3], p->ex->stream))
    return TESSERA_ERR_KERNEL;
  int rc = gemm_batch(p, c, 'N', k, k, padded, 1, at[0], ldv, stride[0], at[0], ldv, stride[0], 0,
                      at[1], nb, stride[1], count);
  if (!rc && tsr_cuda_larft_batched(p->dt, at[1], (size_t)nb, stride[1], at[3], stride[3], k, k,
                                    at[2], (size_t)nb, stride[2], count, p->ex->stream))
    rc = TESSERA_ERR_KERNEL;
  if (!rc) /* Z = T Vᴴ over G */
    rc = gemm_batch(p, 'N', c, k, padded, k, 1, at[2], nb, stride[2], at[0], ldv, stride[0], 0,
                    at[1], nb, stride[1], count);
  for (int c0 = 0; c0 < m && !rc; c0 += p->mc) {
    const int mc = m - c0 < p->mc ? m - c0 : p->mc;
    char *Ec = Eb + (size_t)c0 * (size_t)lde * p->es;
    rc = gemm_batch(p, 'N', 'N', k, mc, padded, 1, at[1], nb, stride[1], Ec, lde, row_step, 0,
                    at[4], nb, stride[4], count);
    if (!rc)
      rc = gemm_batch(p, 'N', 'N', padded, mc, k, -1, at[0], ldv, stride[0], at[4], nb, stride[4],
                      1, Ec, lde, row_step, count);
  }
  return rc;
}

/* The groups of wavefront t (module comment) on the m columns of E: runs of full groups as
 * batches of at most p->cap, the others alone. */
static int wavefront(const plan_t *p, int t, char *E, int lde, int m) {
  const int nb = p->nb, kd = p->L.kd, n = p->L.n, groups = (p->L.sweeps + nb - 1) / nb;
  int run_s = -1, run_j = 0, run = 0, rc = 0;
  for (int g = groups - 1 - t > 0 ? groups - 1 - t : 0; g <= groups && !rc; g++) {
    bool full = false, any = false;
    int k = 0, rows = 0, S = g * nb, j = t - (groups - 1 - g);
    if (g < groups && j < tsr_hb2st_steps(&p->L, S)) {
      any = true;
      k = 1; /* the group's sweeps that have a step j */
      while (k < nb && S + k < p->L.sweeps && j < tsr_hb2st_steps(&p->L, S + k)) k++;
      const int r0 = S + 1 + j * kd, last = S + k - 1 + (j + 1) * kd;
      rows = (last < n - 1 ? last : n - 1) - r0 + 1;
      full = k == nb && rows == p->R;
    }
    if (run && (!full || run == p->cap)) { /* flush the run */
      rc = apply_batch(p, run_s, run_j, run, nb, p->R, E, lde, m);
      run = 0;
    }
    if (rc || !any) continue;
    if (full) {
      if (!run) run_s = S, run_j = j;
      run++;
    } else {
      rc = apply_batch(p, S, j, 1, k, rows, E, lde, m);
    }
  }
  return rc;
}

int tsr_cuda_hb2st_apply(const tessera_exec_t *ex, void *args) {
  const tsr_hb2st_apply_args_t *a = args;
  plan_t p = {.ex = ex, .dt = a->dtype, .v = ex->ptr[0], .tau = ex->ptr[1]};
  if (!tsr_dtype_valid(a->dtype) || tsr_hb2st_layout(a->n, a->kd, &p.L) || a->m < 0)
    return TESSERA_ERR_KERNEL;
  const int lde = tsr_operand_ld(ex, 2, a->n, a->m);
  const tessera_cuda_scratch_t *s = tsr_cuda_scratch(ex);
  p.h = tsr_cuda_blas(ex);
  if (lde < 0 || !s || !p.h) return TESSERA_ERR_KERNEL;
  if (p.L.ntau == 0 || a->m == 0) return 0;
  p.es = tessera_dtype_size(a->dtype);
  p.nb = p.L.kd < APPLY_SWEEPS ? p.L.kd : APPLY_SWEEPS;
  p.R = p.L.kd + p.nb - 1;
  /* the widest column chunk (halving from m) for which MIN_BATCH members fit, or the largest
   * batch a wavefront has, if fewer */
  const int most = p.L.n / (p.nb + p.L.kd) + 1, want = most < MIN_BATCH ? most : MIN_BATCH;
  p.mc = a->m;
  while (p.mc > 1 && member_bytes(p.es, p.nb, p.R, p.mc) * (size_t)want > s->workspace_bytes)
    p.mc = (p.mc + 1) / 2;
  const size_t per = member_bytes(p.es, p.nb, p.R, p.mc);
  p.cap = per > s->workspace_bytes ? 0 : (int)(s->workspace_bytes / per);
  if (p.cap < 1) return TESSERA_ERR_KERNEL;
  if (p.cap > most) p.cap = most;
  const int groups = (p.L.sweeps + p.nb - 1) / p.nb, waves = groups + p.L.steps;
  int rc = 0;
  for (int t = 0; t < waves && !rc; t++) rc = wavefront(&p, t, (char *)ex->ptr[2], lde, a->m);
  return rc;
}

/* The tridiagonal divide and conquer's merges (cpu/laed.h) on a GPU: the rows of the coupling
 * vector, the values-only merge's two rows (laed.cu), and a merge: rotations, regrouping and the
 * weights (laed.cu), the product u = q2[:, 0:k] S into the block's first k columns (free once
 * regrouped) by cuBLAS, by halves of rows (cpu/laed.h's groups), a chunk of S's columns at a time,
 * each chunk formed just before, then the columns placed. */
int tsr_cuda_laed_rows(const tessera_exec_t *ex, void *args) {
  const tsr_laed_rows_args_t *a = args;
  if (ex->ndata < 2 || a->c0 < 0 || a->count < 1 || a->r < 0) return TESSERA_ERR_KERNEL;
  return tsr_cuda_laed_rows_enqueue(ex->ptr[0], ex->ld[0], a->c0, a->count, a->r, a->two,
                                    ex->ptr[1], ex->stream)
             ? TESSERA_ERR_KERNEL
             : 0;
}

int tsr_cuda_laed_secular(const tessera_exec_t *ex, void *args) {
  const tsr_laed_secular_args_t *a = args;
  const tsr_laed_plan_t *h = &a->plan;
  if (ex->ndata < 1 || h->k <= 2) return TESSERA_ERR_KERNEL;
  char *plan = ex->ptr[0];
  return tsr_cuda_laed_secular_enqueue(h->k, (const double *)(plan + h->dlamda),
                                       (const double *)(plan + h->w), h->rho, a->wsq,
                                       (double *)(plan + h->root), (int *)(plan + h->origin),
                                       (double *)(plan + h->delta),
                                       (int *)(plan + offsetof(tsr_laed_plan_t, info)), ex->stream)
             ? TESSERA_ERR_KERNEL
             : 0;
}

int tsr_cuda_laed_values(const tessera_exec_t *ex, void *args) {
  const tsr_laed_plan_t *h = &((const tsr_laed_values_args_t *)args)->plan;
  if (ex->ndata < 2 || h->k <= 2) return TESSERA_ERR_KERNEL;
  const char *plan = ex->ptr[0];
  double *q2 = ex->ptr[1], *wt = q2 + 2 * h->m;
  return tsr_cuda_laed_values_enqueue(
             h->k, (const double *)(plan + h->dlamda), (const double *)(plan + h->w),
             (const int *)(plan + h->origin), (const double *)(plan + h->delta),
             (const int *)(plan + h->perm), q2, wt, wt + h->k, ex->stream)
             ? TESSERA_ERR_KERNEL
             : 0;
}

int tsr_cuda_laed_merge(const tessera_exec_t *ex, void *args) {
  const tsr_laed_merge_args_t *a = args;
  const tsr_laed_plan_t *h = &a->plan;
  cublasHandle_t blas = tsr_cuda_blas(ex);
  if (ex->ndata < 3 || a->a < 0 || a->row < 0 || a->r0 < 0 || a->r1 <= a->r0 || a->r1 > h->m ||
      !blas)
    return TESSERA_ERR_KERNEL;
  const char *plan = ex->ptr[1];
  double *work = ex->ptr[2];
  const long long m = h->m, k = h->k, rows = a->r1 - a->r0;
  const tsr_cuda_laed_t p = {.q = (double *)ex->ptr[0] + (size_t)a->a * ex->ld[0] + (size_t)a->row,
                             .ld = ex->ld[0],
                             .rows = rows,
                             .m = m,
                             .k = k,
                             .nrot = h->nrot,
                             .rot = (const double *)(plan + h->rot),
                             .dlamda = (const double *)(plan + h->dlamda),
                             .w = (const double *)(plan + h->w),
                             .delta = (const double *)(plan + h->delta),
                             .vec2 = (const double *)(plan + h->vec2),
                             .src = (const int *)(plan + h->src),
                             .perm = (const int *)(plan + h->perm),
                             .origin = (const int *)(plan + h->origin),
                             .out = (const int *)(plan + h->out),
                             .q2 = work,
                             .wt = work + rows * m,
                             .s = work + rows * m + m};
  if (tsr_cuda_laed_prepare(&p, ex->stream)) return TESSERA_ERR_KERNEL;
  const double one = 1, zero = 0;
  tsr_laed_half_t hv[2];
  tsr_laed_halves(h, a->r0, a->r1, hv);
  for (long long j0 = 0; j0 < k; j0 += TSR_LAED_COLUMNS) {
    const long long j1 = j0 + TSR_LAED_COLUMNS < k ? j0 + TSR_LAED_COLUMNS : k;
    if (tsr_cuda_laed_vectors(&p, j0, j1, ex->stream)) return TESSERA_ERR_KERNEL;
    for (int b = 0; b < 2; b++) { /* each half's rows times the columns that reach them */
      double *u = p.q + (size_t)j0 * p.ld + hv[b].row;
      const bool ok =
          hv[b].rows == 0 ? true
          : hv[b].inner > 0
              ? cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)hv[b].rows, (int)(j1 - j0),
                            (int)hv[b].inner, &one, p.q2 + hv[b].col * rows + hv[b].row, (int)rows,
                            p.s + hv[b].col, (int)k, &zero, u, (int)p.ld) == CUBLAS_STATUS_SUCCESS
              : cudaMemset2DAsync(u, p.ld * sizeof *u, 0, (size_t)hv[b].rows * sizeof *u,
                                  (size_t)(j1 - j0), ex->stream) == cudaSuccess;
      if (!ok) return TESSERA_ERR_KERNEL;
    }
  }
  return tsr_cuda_laed_place(&p, ex->stream) ? TESSERA_ERR_KERNEL : 0;
}

/* The bulge chasing on a GPU (hb2st.cu): the working band, the waits' counters and the blocks'
 * scratch in the worker's workspace. */
int tsr_cuda_hb2st(const tessera_exec_t *ex, void *args) {
  const tsr_hb2st_args_t *a = args;
  tsr_hb2st_layout_t L;
  const tessera_cuda_scratch_t *s = tsr_cuda_scratch(ex);
  if (!s || ex->ndata < 5 || tsr_hb2st_layout(a->n, a->kd, &L) || !tsr_dtype_valid(a->dtype))
    return TESSERA_ERR_KERNEL;
  if (a->n == 0) return 0;
  const size_t es = tessera_dtype_size(a->dtype);
  const int blocks = tsr_cuda_hb2st_blocks(a->dtype, L.kd, L.sweeps);
  const size_t wb = aligned((size_t)L.ldw * (size_t)a->n * es);
  const size_t pb = aligned((size_t)a->n * sizeof(int));
  const size_t sb =
      aligned((size_t)(blocks > 0 ? blocks : 1) * 5 * (size_t)(L.kd > 0 ? L.kd : 1) * es);
  if (blocks < 1 || wb + pb + sb > s->workspace_bytes) return TESSERA_ERR_KERNEL;
  char *ws = s->workspace;
  const tsr_cuda_hb2st_t p = {.n = a->n,
                              .kd = L.kd,
                              .blocks = blocks,
                              .ab = ex->ptr[0],
                              .ldab = ex->ld[0],
                              .w = ws,
                              .ldw = (size_t)L.ldw,
                              .v = ex->ptr[3],
                              .tau = ex->ptr[4],
                              .scratch = ws + wb + pb,
                              .progress = (int *)(ws + wb),
                              .d = ex->ptr[1],
                              .e = ex->ptr[2]};
  return tsr_cuda_hb2st_run(a->dtype, &p, ex->stream) ? TESSERA_ERR_KERNEL : 0;
}
