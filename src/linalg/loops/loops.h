/* The tile loops (potrf.c, trsm.c, blas3.c, potri.c, getrf.c, geqrf.c, copy.c, he2hb.c, hb2st.c,
 * hb2st_apply.c, hemm.c): each inserts the tasks of one whole operation on descriptors without
 * waiting; the front doors (tile.c, lapack.c, ...) call them. The tridiagonal divide and
 * conquer (stedc.c), the eigensolver's stages (eig_stages.c, eig_stages.h) and the polar
 * decomposition's iteration (polar.c) wait for theirs. */
#ifndef TSR_LINALG_LOOPS_H
#define TSR_LINALG_LOOPS_H

#include "linalg/loops/pivots.h"

/* Tile loops: insert the tasks of a whole operation without waiting. */
int tsr_pxpotrf(char uplo, tessera_matrix_t *A, const tessera_potrf_options_t *opts);
int tsr_pxtrsm(char side, char uplo, char trans, char diag, tsr_scalar_t alpha,
               const tessera_matrix_t *A, tessera_matrix_t *B);
int tsr_pxsyrk(int herk, char uplo, char trans, tsr_scalar_t alpha, const tessera_matrix_t *A,
               tsr_scalar_t beta, tessera_matrix_t *C);
int tsr_pxgemm(char transa, char transb, tsr_scalar_t alpha, const tessera_matrix_t *A,
               const tessera_matrix_t *B, tsr_scalar_t beta, tessera_matrix_t *C);
int tsr_pxpotrs(char uplo, const tessera_matrix_t *A, tessera_matrix_t *B);
int tsr_pxtrtri(char uplo, char diag, tessera_matrix_t *A);
int tsr_pxlauum(char uplo, tessera_matrix_t *A);
/** Inserts one task per diagonal tile adding log|A_kk(i,i)| into logs[k] (nt doubles, zeroed). */
int tsr_pxlogdiag(const tessera_matrix_t *A, double *logs);
/** B = A, of the same size and tile columns: the same tiles, or one of the two in column panels
 *  (tiles spanning its rows) and the other not. */
int tsr_pxlacpy(const tessera_matrix_t *A, tessera_matrix_t *B);
/** B = Aᴴ (B is A->n x A->m; any tilings of either): one transpose task per block where a tile
 *  of A meets the transpose of a tile of B. */
int tsr_pxtranspose(const tessera_matrix_t *A, tessera_matrix_t *B);
/** LU with partial pivoting of A (one tile row: column panels), pivots and info into P (made
 *  for min(m, n) in steps of A's nb). */
int tsr_pxgetrf(tessera_matrix_t *A, tsr_pivots_t *P);
/** op(A) X = B with getrf's factors (B in column panels of A->m rows). */
int tsr_pxgetrs(char trans, const tessera_matrix_t *A, const tsr_pivots_t *P, tessera_matrix_t *B);
/** The interchanges of P on every column panel of B, in order (incx 1) or reversed (-1). */
int tsr_pxlaswp(tessera_matrix_t *B, const tsr_pivots_t *P, int incx);
/** The priority of step k's task on column panel j of nt (getrf.c's order, which QR shares):
 *  the panel first, the next panel's update, then the other updates step by step. */
int tsr_panel_prio(int64_t nt, int64_t j, int64_t k);

/** The block reflectors of a Householder QR on column panels (geqrf.c): step k's T (kb x kb,
 *  its diagonal LAPACK's tau) for the kmin reflectors of a matrix in steps of nb columns.
 *  `band` (0 from tsr_qr_create): where nonzero, the matrix's rows from band + (k + 1) nb on are
 *  zero in panel k and every later panel before step k (a stacked [X; I] of band rows on top),
 *  so step k's reflectors, its factorization and its updates stop there. */
typedef struct {
  tessera_context_t *ctx;
  tsr_flow_t *flow; /* the reflectors' matrix's */
  int64_t kmin, nb, steps, band;
  tessera_data_t **T;
  void *set; /* the flow's record of the handles: step k's T owned by the process of the
                panel holding column k nb */
} tsr_qr_t;
/** The workspaces of the updates of a matrix's column panels by block reflectors of up to nb
 *  vectors: one nb x n_j handle per column panel j (distributed: panel j's process's). `row`:
 *  the panels' row that the reflectors' row 0 meets (0 from tsr_qr_work_create; the rows above
 *  it are left as they are). `identity` (false from tsr_qr_work_create): the panels hold [I; 0]
 *  when Q C begins, so step k (applied after every later one) leaves the columns left of k nb
 *  as they are (ungqr's saving: their rows from k nb on are zero). */
typedef struct {
  tessera_context_t *ctx;
  bool identity;
  int64_t count, row;
  tsr_flow_t *flow;
  tessera_data_t **W;
  void *set; /* the flow's record of the handles */
} tsr_qr_work_t;
/** The reduction of a Hermitian matrix to a band of kd subdiagonals (he2hb.c): its reflectors,
 *  step k's in column panel k of V ((n - kd) x ceil((n - kd) / kd) kd, panels of kd: row r of
 *  V is row r + kd of A; R_k, the band's block below the diagonal, on top of panel k; over
 *  processes V's panels dealt over them) with their T in Q, and the workspaces of the two-sided
 *  updates (a V and a W tile per tile row, a kd x kd product and a kd x kd triangle; over
 *  processes each W tile's partial product on every process, summed on the tile's). */
typedef struct {
  tessera_matrix_t *V;
  tsr_qr_t Q;
  int64_t nt;
  int kd, procs;
  tessera_data_t **v, **w; /* nt each */
  tessera_data_t **part;   /* over processes: process p's part of w[i] at i procs + p */
  tessera_data_t *m, *t;
  void *set; /* the workspaces' records in A's flow */
} tsr_he2hb_t;
/** Makes H for the n x n A in square tiles that kd divides (a collective call over a
 *  distributed A's processes). */
int tsr_he2hb_create(const tessera_matrix_t *A, int kd, tsr_he2hb_t *H);
void tsr_he2hb_destroy(tsr_he2hb_t *H);
/** Reduces the Hermitian A (its lower triangle) to a band of H->kd subdiagonals,
 *  Q1ᴴ A Q1 with Q1 = diag(I_kd, H->V's reflectors): the band's kd x kd diagonal blocks in A
 *  (their lower triangles), its blocks below them (R_k, upper) on top of V's panels. A's diagonal
 *  tiles are made whole (both triangles) first. */
int tsr_pxhe2hb(tessera_matrix_t *A, tsr_he2hb_t *H);

/** E = Q2 E for the bulge chasing's reflectors v, tau (host handles) of a band of order E->m and
 *  kd subdiagonals: one task per column panel of E (its columns are independent), within
 *  `scope` (each task reads the whole of v). */
int tsr_pxhb2st_apply(tessera_matrix_t *E, int kd, tessera_data_t *v, tessera_data_t *tau,
                      tessera_scope_t scope);

/** The bulge chasing's working band (kernels/cpu/hb2st.h: ldw x n, loaded by tsr_hb2st_load)
 *  registered for its tasks (hb2st.c): `count` host handles of `width` consecutive columns (the
 *  last narrower), tasks of `group` steps of one sweep. */
typedef struct {
  tessera_context_t *ctx;
  tessera_dtype_t dtype;
  int n, kd, ldw; /* the reduction's order and bandwidth (as given), the band's ld */
  int group, width, count;
  tessera_data_t **cols;
} tsr_hb2st_band_t;
/** Registers the working band w (host memory, leading dimension ldw) of a reduction of order n
 *  and bandwidth kd for tasks of `group` steps (nothing when there are no sweeps). */
int tsr_hb2st_band_create(tessera_context_t *ctx, tessera_dtype_t dtype, int n, int kd, void *w,
                          int ldw, int group, tsr_hb2st_band_t *B);
/** Waits for the band's tasks and releases its handles; returns the first failing release. */
int tsr_hb2st_band_destroy(tsr_hb2st_band_t *B);
/** The bulge chasing on B's band: every step of every sweep, in tasks of B->group steps (host
 *  kernels), reflectors into the host arrays v and tau of hb2st's layout (pointers the tasks
 *  write until the flow is over). The result is tsr_hb2st's, bit for bit. */
int tsr_pxhb2st(tsr_hb2st_band_t *B, void *v, void *tau);

/** Makes the T handles of kmin reflectors in steps of nb of the column panels of V (its dtype,
 *  context and, distributed, its panels' processes): a collective call for a distributed V. */
int tsr_qr_create(const tessera_matrix_t *V, int64_t kmin, int64_t nb, tsr_qr_t *Q);
void tsr_qr_destroy(tsr_qr_t *Q);
/** Makes the workspaces of C's column panels for reflectors in steps of nb. */
int tsr_qr_work_create(const tessera_matrix_t *C, int64_t nb, tsr_qr_work_t *w);
void tsr_qr_work_destroy(tsr_qr_work_t *w);
/** Householder QR of A (one tile row: column panels): R and the vectors in A, T into Q (made
 *  for min(m, n) in steps of A's nb), the trailing updates through `w` (A's). */
int tsr_pxgeqrf(tessera_matrix_t *A, tsr_qr_t *Q, tsr_qr_work_t *w);
/** Fills Q's T from the vectors in A's column panels and LAPACK's tau (host memory: kmin
 *  elements; read by the flow: keep it until the flow is over). */
int tsr_pxlarft(const tessera_matrix_t *A, const void *tau, tsr_qr_t *Q);
/** C = Qᴴ C (trans 'C') or Q C ('N') with the reflectors of A's panels and Q's T, C in column
 *  panels of A's rows, the updates through w (C's). */
int tsr_pxunmqr(char trans, const tessera_matrix_t *A, const tsr_qr_t *Q, tessera_matrix_t *C,
                tsr_qr_work_t *w);
/** Two buffers of block reflectors of two QR steps each (tsr_pxunmqr_pairs): the vectors of
 *  both steps side by side (m x 2 nb, made zero), their T (2 nb x 2 nb) and tau (the two steps'
 *  and both). Pairs alternate between them: a pair's copies wait for the pair two before. */
typedef struct {
  tessera_context_t *ctx;
  tessera_data_t *v[2], *t[2], *tau[2][3];
} tsr_qr_pairs_t;
/** Makes P for the reflectors of A's panels and Q (a local flow's). */
int tsr_qr_pairs_create(const tessera_matrix_t *A, const tsr_qr_t *Q, tsr_qr_pairs_t *P);
/** Releases P's buffers (each release waits for its tasks). */
void tsr_qr_pairs_destroy(tsr_qr_pairs_t *P);
/** tsr_pxunmqr by block reflectors of two steps each: wider products (inner dimension 2 nb)
 *  and half the passes over C. w's workspaces of 2 nb rows (tsr_qr_work_create with 2 nb);
 *  the pairs' buffers P's. A local flow's matrices. */
int tsr_pxunmqr_pairs(char trans, const tessera_matrix_t *A, const tsr_qr_t *Q, tessera_matrix_t *C,
                      tsr_qr_work_t *w, tsr_qr_pairs_t *P);
/** op(R) X = B(0 .. n - 1) with R the upper triangle of the first n columns of A's column panels
 *  (a geqrf's R): backward substitution for trans 'N', forward for 'C', on every column panel of
 *  B (A's rows). */
int tsr_pxqr_solve(const tessera_matrix_t *A, int64_t n, char trans, tessera_matrix_t *B);
/** The first i (1-based, i <= n) with R(i, i) of A's column panels exactly zero, else 0: waits
 *  for A's panels (distributed: each process looks at its own, then the lowest on every process,
 *  a collective call). */
int tsr_qr_zero_diagonal(const tessera_matrix_t *A, int64_t n);
/** Rows `from` .. m - 1 of C's column panels become those of the identity (`ones`: C(i, j) = 1
 *  where i == j, else 0; from 0, C = [I; 0]) or zeros. */
int tsr_pxidentity_rows(tessera_matrix_t *C, int64_t from, bool ones);
/** Waits for Q's T handles and writes LAPACK's tau (kmin elements of dtype) from them
 *  (distributed: every process the whole tau, a collective call). */
int tsr_qr_tau(const tsr_qr_t *Q, tessera_dtype_t dtype, void *tau);

/** L (dtype of its own; A's tiling, or one tile) = scale A tile by tile in L's precision (kernel
 *  convert): the tiles of A's lower ('L') or upper ('U') triangle, or all (0). */
int tsr_pxconvert(char part, const tessera_matrix_t *A, double scale, tessera_matrix_t *L);

/** Inserts the tasks adding the row sums of moduli of A (Hermitian in its `uplo` triangle, or
 *  general: uplo 0) into R[i], a handle of m_i doubles per block row of A (kernel absum); for a
 *  general A with C not NULL, also its column sums into C[j] (n_j doubles per block column). */
int tsr_pxabsum(char uplo, const tessera_matrix_t *A, tessera_data_t **R, tessera_data_t **C);

/** C = alpha A B + beta C for A Hermitian in its `uplo` triangle (B, C: A's row tiling; none a
 *  view of a conjugate transpose) by hemm and hemm_pair tasks (hemm.c). */
int tsr_pxhemm(char uplo, const tessera_matrix_t *A, tsr_scalar_t alpha, const tessera_matrix_t *B,
               tsr_scalar_t beta, tessera_matrix_t *C);

/** The eigenvalues (into d, ascending) and eigenvectors (into q, n x n, leading dimension ldq) of
 *  the symmetric tridiagonal matrix of diagonal d and subdiagonal e (n - 1 entries) by divide
 *  and conquer as tasks (stedc.c), leaves of at most `leaf` rows; the context needs CPU workers
 *  (the leaves and the secular equations run there). qh: NULL, or a handle of q (n x n doubles,
 *  home q, ld ldq, no replica newer than its home) that the merges then use and leave where
 *  they last wrote it (a GPU), for the caller's next tasks on it. Returns 0, LAPACK's info > 0
 *  (a root or a leaf did not converge: its block as dstedc reports it), or a negative status. */
int tsr_stedc_dc(tessera_context_t *ctx, int64_t n, double *d, double *e, double *q, int64_t ldq,
                 int64_t leaf, tessera_data_t *qh);

/** Q's rows in parts as tsr_stedc_dc_parts leaves them: handles registered over rows start[p]
 *  .. start[p] + rows[p] - 1 of q (all n columns), each where the merges last wrote it. */
enum { TSR_STEDC_PARTS = 8 };
typedef struct {
  int count;
  tessera_data_t *part[TSR_STEDC_PARTS];
  int64_t start[TSR_STEDC_PARTS], rows[TSR_STEDC_PARTS];
} tsr_stedc_parts_t;

/** tsr_stedc_dc with Q's rows in parts, one per accelerator of the merges' scope that holds its
 *  share (loops/policy.h: tsr_stedc_parts; one part, Q whole, where that is all): each merge
 *  within a part's rows runs on its accelerator, each spanning parts as a task per part on its
 *  rows, so the two halves' merges run apart. The parts are left where the merges last wrote
 *  them, into *out, for the caller to read and release or drop (none on a failure). */
int tsr_stedc_dc_parts(tessera_context_t *ctx, int64_t n, double *d, double *e, double *q,
                       int64_t ldq, int64_t leaf, tsr_stedc_parts_t *out);

/** The eigenvalues alone (into d, ascending) of the same tridiagonal by the same divide and
 *  conquer, each block keeping only its eigenvectors' first and last rows (the coupling vectors
 *  of the merges above it): the secular equations and the rows' products by tasks on the CPU
 *  workers, O(n²) in all, where dsterf's O(n²) runs on one core. Returns as tsr_stedc_dc. */
int tsr_stedc_values(tessera_context_t *ctx, int64_t n, double *d, double *e, int64_t leaf);

/** QDWH's weights (a, b, c) for an iterate whose singular values lie in [*l, 1], and the lower
 *  bound after the step into *l (polar.c). */
void tsr_qdwh_weights(double *l, double *a, double *b, double *c);
/** The polar decomposition A = U_p H of A (m x n, m >= n, square tiles) by QDWH (polar.c): U_p
 *  into A, H into H (n x n, A's tiles) unless NULL; waits. Returns 0; a column (1-based) where A
 *  holds a NaN or an infinity (A and H untouched); n + 1 where the iteration met a non-finite
 *  value; or a negative status. *steps (unless NULL): the steps run (at most 10). */
int tsr_pxgepolar(tessera_matrix_t *A, tessera_matrix_t *H, int *steps);

#endif
