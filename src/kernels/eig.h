/* The eigensolver's tile kernels: the working copy of a Hermitian matrix (eig_prepare), bulge
 * chasing (hb2st, hb2st_steps) and its back-transformation (hb2st_apply), the tridiagonal
 * eigensolver (stedc) and the merges of tessera's divide and conquer (laed_rows, laed_roots,
 * laed_update, laed_values, laed_merge). Their tables, operation counts and size keys: eig.c; their
 * implementations: cpu/eig.c over cpu/hb2st.c, cpu/hb2st_apply.c and cpu/laed.c (the reduction's
 * and the merge's own code, with their layouts in cpu/hb2st.h and cpu/laed.h), cuda/eig.c over
 * cuda/hb2st.cu, cuda/laed.cu and cuda/householder.cu. Buffers and arguments as blas3.h
 * describes; "host only" kernels have a CPU implementation alone.
 */
#ifndef TSR_KERNELS_EIG_H
#define TSR_KERNELS_EIG_H

#include "kernels/cpu/laed.h"
#include "kernels/dtype.h"
#include "tessera/task.h"

/** hb2st: buffers {ab (R) (kd + 1) x n, d (W) n doubles, e (W) n - 1 doubles, v (W),
 *  tau (W)}. The Hermitian band ab (LAPACK's lower band storage, kd
 * subdiagonals) reduced to the real tridiagonal T (d, e) by bulge chasing, the reflectors of Q2 (ab
 * = Q2 T Q2ᴴ) into v and tau in cpu/hb2st.h's layout. */
typedef struct {
  tessera_dtype_t dtype;
  int n, kd;
} tsr_hb2st_args_t;

/** hb2st_steps (host only): buffers {the working band's blocks of columns (RW), `width` columns
 *  each (the last of a band may be narrower), consecutive: buffer i holds columns
 *  col0 + i width ..}, each ldw x its columns, leading dimension ldw, one allocation (their
 *  replicas in host memory, where they were registered). Steps first .. first + count - 1 of
 *  sweep `sweep` of a reduction of order n and bandwidth kd (cpu/hb2st.h) on that working band,
 *  their columns within the buffers'; they write reflector slots (sweep, first ..) of v and tau
 *  and read (sweep, first - 1): host arrays of hb2st's layout, passed as pointers (each slot is
 *  written by one task only and read, during the flow, only by the next step of its sweep, which
 *  the band's columns they share order after it). */
typedef struct {
  tessera_dtype_t dtype;
  int n, kd, ldw;
  int sweep, first, count;
  int col0, width;
  void *v, *tau;
} tsr_hb2st_steps_args_t;

/** hb2st_apply: buffers {v (R), tau (R), E (RW) n x m}. E = Q2 E with hb2st's reflectors of a
 *  band of order n and kd subdiagonals (v and tau as one-column handles of the layout's nv and
 *  ntau elements). CPUs and GPUs group the reflectors alike, in blocks of their own widths. */
typedef struct {
  tessera_dtype_t dtype;
  int n, kd, m;
} tsr_hb2st_apply_args_t;

/** stedc (host only): buffers {d (RW) n doubles, e (RW) n - 1 doubles[, z (W) n x n doubles]}.
 *  The eigenvalues of the real symmetric tridiagonal T (d, e) into d in ascending order, with
 *  `vectors` its eigenvectors into z (LAPACK's dstedc; dsterf without). Returns 0 or LAPACK's
 *  info > 0. */
typedef struct {
  int n, vectors;
  int threads;  /* BLAS threads for the call (run while the context's workers are idle) */
  int64_t rows; /* with vectors, z is n columns of `rows` rows (0: n): T's block of them at */
  int64_t row;  /* row `row`, the others zeroed (a leaf of the divide and conquer) */
} tsr_stedc_args_t;

/** eig_prepare (host only, no buffers): columns j0 .. j1 - 1 of the n x n Hermitian A's `uplo`
 *  triangle (host array a, lda) into the lower triangle of h (ldh; NULL: none, a scan only),
 *  conjugated from the upper,
 *  the diagonal's imaginary parts dropped; the largest modulus of those entries into *amax and
 *  the first of those columns (1-based) holding a NaN or an infinity into *bad (0: none). Tasks
 *  on disjoint column ranges write disjoint parts of h and their own *amax and *bad. */
typedef struct {
  tessera_dtype_t dtype;
  char uplo;
  int64_t n, lda, ldh, j0, j1;
  const void *a;
  void *h;
  double *amax;
  int64_t *bad;
} tsr_eig_prepare_args_t;

/** laed_rows: buffers {Q (R) rows x n doubles, z (RW) n doubles}. z[c] for c in c0 .. c0 +
 *  count - 1 = Q's row r at column c, plus its row r + 1 with `two`: a merge's coupling vector
 *  (cpu/laed.h) from the last row of its first half and the first of its second (Q is block
 *  diagonal: in each column one of them is zero), or from one of those rows alone where Q's
 *  rows are held in parts (then a task per half, each over its half's columns). */
typedef struct {
  int64_t c0, count, r;
  int two;
} tsr_laed_rows_args_t;

/** laed_roots (host only, no buffers): the secular equation's roots j0 .. j1 - 1 of the plan,
 *  a host pointer (tsr_laed_roots; each range written by one task, read after a wait). */
typedef struct {
  tsr_laed_plan_t *plan;
  int64_t j0, j1;
} tsr_laed_roots_args_t;

/** laed_secular: buffers {the plan (RW) its bytes}. The secular equation's roots of the plan
 *  (k > 2) by tessera's own iteration (kernels/secular.h), on any device: root, origin and delta
 *  into the plan's arrays, a root that did not converge into its info (tsr_laed_secular's).
 *  `plan` repeats the plan's header; wsq = Σ w² over its weights (tsr_laed_wsq). */
typedef struct {
  tsr_laed_plan_t plan;
  double wsq;
} tsr_laed_secular_args_t;

/** laed_update (host only, no buffers): the values-only divide and conquer's merge on the
 *  block's two kept eigenvector rows, over indices i0 .. i1 - 1 of the plan (host pointers;
 *  each range written by one task, read after a wait): phase 0 Löwner's weights into wt
 *  (tsr_laed_weights), phase 1 those columns of u = q2 S (tsr_laed_row_product). */
typedef struct {
  tsr_laed_plan_t *plan;
  int phase;
  int64_t i0, i1;
  const double *q2;
  double *wt, *u;
} tsr_laed_update_args_t;

/** laed_values: buffers {the plan (R) its bytes, rows (RW) 2 m + 3 k doubles}. The values-only
 *  divide and conquer's merge (k > 2) on the block's two kept eigenvector rows, on any device:
 *  rows holds q2, the regrouped rows (2 x m, leading dimension 2), and receives after them
 *  Löwner's weights wt (k doubles, tsr_laed_weights) and u = q2[:, 0:k] S (2 x k, leading
 *  dimension 2, tsr_laed_row_product's). `plan` repeats the plan's header. */
typedef struct {
  tsr_laed_plan_t plan;
} tsr_laed_values_args_t;

/** laed_merge: buffers {Q (RW) rows x n doubles, the plan (R) its bytes, work (RW)
 *  tsr_laed_work_rows(r1 - r0, m) doubles (cpu/laed.h)}. The merge's plan carried out on rows
 *  r0 .. r1 - 1 (0 .. m: all) of the diagonal block of order m at column a, those rows at row
 *  `row` of Q's buffer (Q whole: row = a + r0; Q's rows in parts: within the part's);
 *  `plan` repeats the plan's header. */
typedef struct {
  tsr_laed_plan_t plan;
  int64_t a, row;
  int32_t r0, r1; /* (a task's arguments are at most 192 bytes) */
} tsr_laed_merge_args_t;

/** syevd (one stage, the whole matrix on one device): buffers {A (RW) n x n, w (W) n of the
 *  dtype's real type, info (W) one int[, work (RW) work_bytes on GPUs]}. The eigenvalues of the
 *  Hermitian A (its `uplo` triangle) into w in ascending order, with jobz 'V' its orthonormal
 *  eigenvectors over A (else A's `uplo` triangle is destroyed, as LAPACK's), *info LAPACK's (0,
 *  or > 0: the tridiagonal eigensolver did not converge): LAPACK's ?syevd / ?heevd on CPUs
 *  (with `threads` BLAS threads), cuSOLVER's Xsyevd on GPUs (its workspace in `work`, of
 *  tsr_syevd_work_bytes). With il > 0, eigenvalues il .. iu alone (1-based) by LAPACK's ?syevr /
 *  ?heevr or cuSOLVER's Xsyevdx (range 'I'): into w[0 .. iu - il], their vectors into A's first
 *  iu - il + 1 columns (the rest of A and of w undefined). */
typedef struct {
  tessera_dtype_t dtype;
  char jobz, uplo;
  int n;
  int il, iu; /* 0 and 0: all */
  int threads;
  size_t work_bytes;
} tsr_syevd_args_t;

/** gesdd (the SVD in one call on the host: LAPACK's divide and conquer): buffers {A (RW) m x n
 *  (destroyed), s (W) min(m, n) of the dtype's real type, U (W) m x min(m, n), VT (W)
 *  min(m, n) x n (jobz 'A': m x m and n x n; neither read nor written with jobz 'N'), info (W) two
 * ints}. info[1] is the first column of A (1-based) holding a NaN or an infinity, 0 if none (then
 * nothing else is written); info[0] LAPACK's (0, or > 0: the bidiagonal SVD did not converge). s
 * descending; U's columns and VT's rows the singular vectors (jobz 'S', or 'A' all of them).
 * LAPACK's ?gesdd with `threads` BLAS threads. */
typedef struct {
  tessera_dtype_t dtype;
  char jobz;
  int m, n;
  int threads;
} tsr_gesdd_args_t;

/** polar_gesdd (the polar decomposition through LAPACK's SVD on the host): buffers {A (RW)
 *  m x n, m >= n, H (W) n x n (not written without want_h), info (W) two ints as gesdd's}.
 *  A = W Σ Vᴴ by ?gesdd, then U_p = W Vᴴ over A and H = V Σ Vᴴ (nothing written where info[1]
 *  names a NaN column). */
typedef struct {
  tessera_dtype_t dtype;
  int m, n;
  bool want_h;
  int threads;
} tsr_polar_gesdd_args_t;

/** Bytes of the GPU workspace syevd takes at order n: what cuSOLVER's Xsyevd asks (about
 *  4 n² + 136 n elements of the dtype, with vectors or without), with room to spare; where it
 *  asks for more the CUDA kernel takes it from CUDA's stream-ordered allocator. */
size_t tsr_syevd_work_bytes(tessera_dtype_t dtype, int64_t n);

/** The kernels (eig.c). */
extern const tessera_kernel_t tsr_kernel_eig_prepare;
extern const tessera_kernel_t tsr_kernel_hb2st;
extern const tessera_kernel_t tsr_kernel_hb2st_steps;
extern const tessera_kernel_t tsr_kernel_hb2st_apply;
extern const tessera_kernel_t tsr_kernel_stedc;
extern const tessera_kernel_t tsr_kernel_laed_rows;
extern const tessera_kernel_t tsr_kernel_laed_roots;
extern const tessera_kernel_t tsr_kernel_laed_secular;
extern const tessera_kernel_t tsr_kernel_laed_update;
extern const tessera_kernel_t tsr_kernel_laed_values;
extern const tessera_kernel_t tsr_kernel_laed_merge;
extern const tessera_kernel_t tsr_kernel_syevd;
extern const tessera_kernel_t tsr_kernel_gesdd;
extern const tessera_kernel_t tsr_kernel_polar_gesdd;

/* CPU implementations (cpu/eig.c). */
int tsr_cpu_eig_prepare(const tessera_exec_t *ex, void *args);
int tsr_cpu_hb2st(const tessera_exec_t *ex, void *args);
int tsr_cpu_hb2st_steps(const tessera_exec_t *ex, void *args);
int tsr_cpu_hb2st_apply(const tessera_exec_t *ex, void *args);
int tsr_cpu_stedc(const tessera_exec_t *ex, void *args);
int tsr_cpu_laed_rows(const tessera_exec_t *ex, void *args);
int tsr_cpu_laed_roots(const tessera_exec_t *ex, void *args);
int tsr_cpu_laed_secular(const tessera_exec_t *ex, void *args);
int tsr_cpu_laed_update(const tessera_exec_t *ex, void *args);
int tsr_cpu_laed_values(const tessera_exec_t *ex, void *args);
int tsr_cpu_laed_merge(const tessera_exec_t *ex, void *args);
int tsr_cpu_syevd(const tessera_exec_t *ex, void *args);       /* cpu/syevd.c */
int tsr_cpu_gesdd(const tessera_exec_t *ex, void *args);       /* cpu/gesdd.c */
int tsr_cpu_polar_gesdd(const tessera_exec_t *ex, void *args); /* cpu/gesdd.c */

#ifdef TESSERA_HAVE_CUDA
/* CUDA implementations (cuda/eig.c): enqueue on ex->stream with the handles in ex->scratch
 * (tessera_cuda_scratch_t). */
int tsr_cuda_hb2st(const tessera_exec_t *ex, void *args);
int tsr_cuda_hb2st_apply(const tessera_exec_t *ex, void *args);
int tsr_cuda_laed_rows(const tessera_exec_t *ex, void *args);
int tsr_cuda_laed_secular(const tessera_exec_t *ex, void *args);
int tsr_cuda_laed_values(const tessera_exec_t *ex, void *args);
int tsr_cuda_laed_merge(const tessera_exec_t *ex, void *args);
int tsr_cuda_syevd(const tessera_exec_t *ex, void *args); /* cuda/syevd.c */
#endif

#endif
