/* The tile-task inserters (tasks.c): one per kernel, the tile loops' only way to insert. */
#ifndef TSR_LINALG_TASKS_H
#define TSR_LINALG_TASKS_H

#include "kernels/cpu/laed.h"
#include "kernels/eig.h"
#include "linalg/desc/desc.h"

/* Inserters: one task each, tagged (i, j, k) for traces. Flags and dimensions are those of the
 * operation as the operands present it (tiles of a view included); an operation whose written
 * operand carries Aᴴ is inserted as its conjugate transpose on the tiles themselves. Return 0 or
 * a negative status. Tasks go through the flow of the matrix they are given (A->flow), or the
 * flow `f` an inserter of bare handles takes: the flow of the matrix whose tiles they are (the
 * inserters of the eigensolver's host stages insert into their context's local flow). */
int tsr_task_potrf(const tessera_matrix_t *A, char uplo, int64_t k, int prio);
int tsr_task_trsm(const tessera_matrix_t *A, char side, char uplo, char trans, char diag,
                  tsr_scalar_t alpha, tsr_operand_t a, tsr_operand_t b, int m, int n,
                  const int tag[3], int prio);
int tsr_task_syrk(const tessera_matrix_t *C, int herk, char uplo, char trans, int n, int k,
                  tsr_scalar_t alpha, tsr_operand_t a, tsr_scalar_t beta, tsr_operand_t c,
                  const int tag[3], int prio);
int tsr_task_gemm(const tessera_matrix_t *C, tsr_operand_t a, tsr_operand_t b, int m, int n, int k,
                  tsr_scalar_t alpha, tsr_scalar_t beta, tsr_operand_t c, const int tag[3],
                  int prio);
/** gemm with beta 0 into the whole m x n tile w, which it writes without reading (a workspace's
 *  first task). */
int tsr_task_gemm_new(const tessera_matrix_t *C, tsr_operand_t a, tsr_operand_t b, int m, int n,
                      int k, tsr_scalar_t alpha, tessera_data_t *w, const int tag[3], int prio);
/** c = alpha a + beta c on m x n tiles (C gives the dtype and context). */
int tsr_task_geadd(const tessera_matrix_t *C, tessera_data_t *a, tsr_scalar_t alpha,
                   tsr_scalar_t beta, tessera_data_t *c, int m, int n, const int tag[3], int prio);
int tsr_task_trtri(const tessera_matrix_t *A, char uplo, char diag, int64_t k, int prio);
/** trtri on operand `a` holding an n x n triangle whose first row is global row `offset`. */
int tsr_task_trtri_on(const tessera_matrix_t *A, tsr_operand_t a, char uplo, char diag, int n,
                      int64_t offset, const int tag[3], int prio);
int tsr_task_lauum(const tessera_matrix_t *A, char uplo, int64_t k, int prio);
int tsr_task_trmm(const tessera_matrix_t *A, char side, char uplo, char trans, char diag,
                  tsr_scalar_t alpha, tsr_operand_t a, tsr_operand_t b, int m, int n,
                  const int tag[3], int prio);
int tsr_task_lacpy(tessera_dtype_t dtype, tsr_flow_t *f, tessera_data_t *src, tessera_data_t *dst,
                   int m, int n, const int tag[3], int prio);
/** The conjugate transpose of src's m x n block at (src_row, src_col) into dst's n x m block at
 *  (dst_row, dst_col), dst accessed with dst_mode. */
int tsr_task_transpose(tessera_dtype_t dtype, tsr_flow_t *f, tessera_data_t *src, int src_row,
                       int src_col, tessera_data_t *dst, int dst_row, int dst_col,
                       tessera_access_t dst_mode, int m, int n, const int tag[3], int prio);
/** dst's m x n block from row `row` as a block of an identity (ones where column - row == d),
 *  dst accessed with dst_mode. */
int tsr_task_identity(tessera_dtype_t dtype, tsr_flow_t *f, tessera_data_t *dst, int row,
                      tessera_access_t dst_mode, int m, int n, int d, const int tag[3], int prio);
/** C = alpha A B + beta C (kernel hemm) for the m x m tile A Hermitian in its `uplo` triangle,
 *  B and C m x n. */
int tsr_task_hemm(tsr_flow_t *f, tessera_dtype_t dtype, char uplo, tessera_data_t *A,
                  tessera_data_t *B, tessera_data_t *C, int m, int n, tsr_scalar_t alpha,
                  tsr_scalar_t beta, const int tag[3], int prio);
/** Yr += alpha S Xc and Yc += alpha Sᴴ Xr for the r x c tile S (kernel hemm_pair): an
 *  off-diagonal tile's two products in a Hermitian product, k columns. */
int tsr_task_hemm_pair(tsr_flow_t *f, tessera_dtype_t dtype, tessera_data_t *S, tessera_data_t *Xc,
                       tessera_data_t *Xr, tessera_data_t *Yr, tessera_data_t *Yc, int r, int c,
                       int k, tsr_scalar_t alpha, const int tag[3]);
/** The moduli of tile a (m x n) summed into rows (m doubles) and cols (n doubles), or with part
 *  'L' / 'U' those of the Hermitian diagonal tile stored in that triangle into rows alone (kernel
 *  absum; cols unused). */
int tsr_task_absum(tsr_flow_t *f, tessera_dtype_t dtype, tessera_data_t *a, int m, int n, char part,
                   tessera_data_t *rows, tessera_data_t *cols, const int tag[3]);

/** dst's m x n block at (row, col) (dtype `to`) = scale src (dtype `from`, m x n) in `to`'s
 *  precision (kernel convert), dst accessed with dst_mode. */
int tsr_task_convert(tsr_flow_t *f, tessera_dtype_t from, tessera_data_t *src, tessera_dtype_t to,
                     tessera_data_t *dst, int row, int col, tessera_access_t dst_mode, int m, int n,
                     double scale, const int tag[3], int prio);

/** A lacpy of src's m x n block at (src_row, src_col) into dst at row dst_row (dst_mode). */
/** A task on `data` (ndata handles, accessed as `mode` says) that computes nothing: their copies
 *  brought where the flow runs it ahead of the tasks that need them there (over processes, the
 *  transfers of the tiles it reads to the process of the tile it writes). */
int tsr_task_touch(tsr_flow_t *f, int ndata, tessera_data_t *const *data,
                   const tessera_access_t *mode, const int tag[3]);
int tsr_task_lacpy_block(tessera_dtype_t dtype, tsr_flow_t *f, tessera_data_t *src, int src_row,
                         int src_col, tessera_data_t *dst, int dst_row, tessera_access_t dst_mode,
                         int m, int n, const int tag[3], int prio);
/** tsr_task_lacpy_block into dst at (dst_row, dst_col). */
int tsr_task_lacpy_at(tessera_dtype_t dtype, tsr_flow_t *f, tessera_data_t *src, int src_row,
                      int src_col, tessera_data_t *dst, int dst_row, int dst_col,
                      tessera_access_t dst_mode, int m, int n, const int tag[3], int prio);
/** dst (k x k, written whole) = the unit lower ('L') or upper ('U') triangle of src's k x k block
 *  from row src_row, zeros in the other. */
int tsr_task_triangle(tessera_dtype_t dtype, tsr_flow_t *f, tessera_data_t *src, int src_row,
                      char uplo, tessera_data_t *dst, int k, const int tag[3], int prio);
/** The bulge chasing of the band ab (R, (kd + 1) x n) into d, e (W, n doubles each) and the
 *  reflectors v, tau (W), within `scope`. */
int tsr_task_hb2st(tessera_dtype_t dtype, tessera_context_t *ctx, tessera_data_t *ab,
                   tessera_data_t *d, tessera_data_t *e, tessera_data_t *v, tessera_data_t *tau,
                   int n, int kd, tessera_scope_t scope, const int tag[3]);
/** The one-stage eigensolver (syevd's args) on a (RW, n x n): eigenvalues into w, info into info
 *  (W), with `work` (RW, NULL: none) the GPU's workspace, within `scope` (one device). */
int tsr_task_syevd(const tsr_syevd_args_t *args, tessera_context_t *ctx, tessera_data_t *a,
                   tessera_data_t *w, tessera_data_t *info, tessera_data_t *work,
                   tessera_scope_t scope);
/** e (n x m, RW) = Q2 e with the bulge chasing's reflectors v, tau (R) of a band of order n and
 *  kd subdiagonals, within `scope`, in flow f (e's: over processes, v and tau are each
 *  process's own copies, registered on it). */
int tsr_task_hb2st_apply(tessera_dtype_t dtype, tsr_flow_t *f, tessera_data_t *v,
                         tessera_data_t *tau, tessera_data_t *e, int n, int kd, int m,
                         tessera_scope_t scope, const int tag[3]);
/** Steps first .. first + count - 1 of sweep `sweep` of the bulge chasing of a band of order n
 *  and kd subdiagonals on its working band (leading dimension ldw), given as `ncols` handles of
 *  consecutive blocks of `width` columns from column col0 (RW), the reflectors' host arrays v and
 *  tau by pointer (a host kernel: kernels.h's tsr_hb2st_steps_args_t). */
int tsr_task_hb2st_steps(tessera_dtype_t dtype, tessera_context_t *ctx, tessera_data_t *const *cols,
                         int ncols, int col0, int width, int n, int kd, int ldw, int sweep,
                         int first, int count, void *v, void *tau, const int tag[3], int prio);
/** The strictly upper triangle of the n x n tile a from its lower, conjugated. */
/* The tridiagonal divide and conquer (loops/stedc.c): a leaf's eigenproblem (LAPACK's dstedc on
 * d, e of order n into z), a merge's coupling vector, roots and execution (cpu/laed.h); the
 * tasks on Q within `scope`. The leaf's z: n columns of `rows` rows, its block at row `row`, the
 * rest zeroed. */
/* The eigensolver's working copy of A, a range of columns (kernels.h's eig_prepare). */
int tsr_task_eig_prepare(tessera_context_t *ctx, const tsr_eig_prepare_args_t *args,
                         const int tag[3]);
int tsr_task_stedc(tessera_context_t *ctx, tessera_data_t *d, tessera_data_t *e, tessera_data_t *z,
                   int n, int64_t rows, int64_t row, const int tag[3], int prio);
int tsr_task_laed_rows(tessera_context_t *ctx, tessera_data_t *q, tessera_data_t *z,
                       const tsr_laed_rows_args_t *args, tessera_scope_t scope, const int tag[3]);
int tsr_task_laed_roots(tessera_context_t *ctx, tsr_laed_plan_t *plan, int64_t j0, int64_t j1,
                        const int tag[3]);
int tsr_task_laed_secular(tessera_context_t *ctx, tessera_data_t *plan,
                          const tsr_laed_plan_t *header, double wsq, tessera_scope_t scope,
                          const int tag[3]);
int tsr_task_laed_update(tessera_context_t *ctx, const tsr_laed_update_args_t *args,
                         const int tag[3]);
int tsr_task_laed_values(tessera_context_t *ctx, tessera_data_t *plan, tessera_data_t *rows,
                         const tsr_laed_plan_t *header, tessera_scope_t scope, const int tag[3]);
int tsr_task_laed_merge(tessera_context_t *ctx, tessera_data_t *q, tessera_data_t *plan,
                        tessera_data_t *work, const tsr_laed_merge_args_t *args,
                        tessera_scope_t scope, const int tag[3]);
int tsr_task_hefill(tessera_dtype_t dtype, tsr_flow_t *f, tessera_data_t *a, int n,
                    const int tag[3], int prio);
/** The diagonal of A's n x n block from row `row` into d (n x 1). */
int tsr_task_diagonal(tessera_dtype_t dtype, tsr_flow_t *f, tessera_data_t *A, int row,
                      tessera_data_t *d, int n, const int tag[3], int prio);
/** A lacpy of the m x n block at row src_row of src into dst at row dst_row, dst accessed
 *  with dst_mode (TESSERA_RW where the copy fills part of it). */
int tsr_task_lacpy_rows(tessera_dtype_t dtype, tsr_flow_t *f, tessera_data_t *src, int src_row,
                        tessera_data_t *dst, int dst_row, tessera_access_t dst_mode, int m, int n,
                        const int tag[3], int prio);

/** getrf of column panel k of A (one tile row) from row k nb, its pivots and info into `piv`,
 *  the inverse of its unit lower diagonal block into `inv` when not NULL. */
int tsr_task_getrf(const tessera_matrix_t *A, int64_t k, tessera_data_t *piv, tessera_data_t *inv,
                   int prio);
/** The interchanges of `piv` (k of them, relative to row r0) on the n columns of the column
 *  panel `tile` of A (A->m rows), in order (incx 1) or reversed (-1). */
int tsr_task_laswp(const tessera_matrix_t *A, tessera_data_t *tile, tessera_data_t *piv, int n,
                   int r0, int k, int incx, const int tag[3], int prio);
/** An lu_step (kernels.h) with the column panel `panel` of B->m rows on the column panel `b`
 *  (n columns), with the interchanges `piv` first when it is not NULL, the product with
 *  getrf's `inv` (when it and piv are not NULL) for its solve. */
int tsr_task_lu_step(const tessera_matrix_t *B, char uplo, char trans, tessera_data_t *panel,
                     tessera_data_t *b, tessera_data_t *piv, tessera_data_t *inv, int n, int r0,
                     int kb, const int tag[3], int prio);

/** geqrt of column panel k of A (one tile row) from row k nb to row `rows`, its T into `t`. */
int tsr_task_geqrt(const tessera_matrix_t *A, int64_t k, int64_t rows, tessera_data_t *t, int prio);
/** larft of column panel k of A (kb vectors from row k nb) with `tau` (kb x 1), into `t`. */
int tsr_task_larft(const tessera_matrix_t *A, int64_t k, tessera_data_t *tau, tessera_data_t *t,
                   int kb, int prio);
/** larft of the kb vectors of the column panel v (m rows) from row r0, with `tau` (kb x 1), into
 *  `t`, by a task of flow f. */
int tsr_task_larft_on(tessera_dtype_t dtype, tsr_flow_t *f, tessera_data_t *v, int m, int r0,
                      tessera_data_t *tau, tessera_data_t *t, int kb, const int tag[3], int prio);
/** A qr_step (kernels.h) with the reflector of column panel `panel` (kb vectors from row r0 to
 *  row `rows`, its T `t`) on the column panel `c` (n columns) of B, the panel's rows meeting c's
 *  from row c0, through workspace `w`. */
int tsr_task_qr_step(const tessera_matrix_t *B, char trans, tessera_data_t *panel,
                     tessera_data_t *c, tessera_data_t *t, tessera_data_t *w, int rows, int n,
                     int r0, int kb, int c0, const int tag[3], int prio);

/* What the inserter files share (tasks.c, tasks_eig.c): a task of kernel k within `scope` (its
 * zero value: the context's); one of a kernel with a host implementation alone
 * (HOST_KERNEL_TABLE), on the CPU workers whatever the context's scope, which may hold the
 * accelerators alone (the JAX binding's GPU calls). */
int tsr_insert_in(tsr_flow_t *f, const tessera_kernel_t *k, const void *args, size_t size,
                  int ndata, tessera_data_t *const *data, const tessera_access_t *mode,
                  tessera_scope_t scope, const int tag[3], int prio);
int tsr_insert_host(tsr_flow_t *f, const tessera_kernel_t *k, const void *args, size_t size,
                    int ndata, tessera_data_t *const *data, const tessera_access_t *mode,
                    const int tag[3], int prio);

#endif
