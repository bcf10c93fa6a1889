/* The refinement of a mixed-precision solve (refine.c): the solve's state, ‖op(A)‖∞'s tasks and
 * the refinement loop, which the front doors (front/mixed.c) drive after the factor. */
#ifndef TSR_LINALG_LOOPS_REFINE_H
#define TSR_LINALG_LOOPS_REFINE_H

#include <stdbool.h>
#include <stdint.h>

#include "tessera/linalg.h"

/* The fallback's codes, as dsposv's negative iter. */
enum { TSR_MIXED_OVERFLOW = -2, TSR_MIXED_BROKE_DOWN = -3, TSR_MIXED_NO_CONVERGENCE = -31 };

typedef struct {
  tessera_context_t *ctx;
  tessera_dtype_t dt, lo; /* A's dtype and the factor's */
  char uplo;
  char trans; /* LU: op(A) X = B, 'N', 'T' or 'C' */
  int64_t n, nb;
  size_t es, les;
  tessera_matrix_t *A, *L; /* a view of A, and its low-precision copy factored */
  void *low;               /* n x nrhs of the factor's dtype: the solves' right-hand sides */
  int *ipiv;               /* LU (gesv): the factor's pivots; NULL: Cholesky (posv), A Hermitian */
  double mu;               /* the factor is that of mu A (a power of two) */
  tessera_comm_t *comm;    /* A's processes (distributed A), or NULL */
  tsr_flow_t *flow;        /* A's flow */
} tsr_mixed_t;

/** The solve's state for an n x n A of `dtype`, tiles nb wide: a Cholesky solve (uplo), or with
 *  ipiv an LU one of op(A) (trans); its factor's dtype f32, or c64 for a complex A. A, L, low
 *  and comm left for the caller. */
tsr_mixed_t tsr_mixed_state(tessera_context_t *ctx, tessera_dtype_t dtype, tessera_uplo_t uplo,
                            int *ipiv, tessera_op_t trans, int64_t n, int64_t nb);

/** The handles tsr_mixed_norm_begin takes: A's row tiles, and its column tiles for a transposed
 *  op(A). */
int64_t tsr_mixed_norm_handles(const tsr_mixed_t *m);
/** Inserts the tasks of ‖op(A)‖∞ of m->A (Hermitian in its uplo triangle, or general: uplo 0,
 *  with op m->trans): the row sums of op(A) into handles R (tsr_mixed_norm_handles(m) entries,
 *  NULL) over sums (2 n doubles, zeroed). Returns 0 or a negative status. */
int tsr_mixed_norm_begin(tsr_mixed_t *m, double *sums, tessera_data_t **R);
/** Releases R (waiting for its tasks; `rc` the status so far) and sets *anrm to the largest row
 *  sum (NaN kept; over processes the sums summed). Returns rc, else the first failure. */
int tsr_mixed_norm_end(tsr_mixed_t *m, double *sums, tessera_data_t **R, int rc, double *anrm);
/** ‖op(A)‖∞ now: tsr_mixed_norm_begin, its tasks waited for, then tsr_mixed_norm_end. */
int tsr_mixed_norm_now(tsr_mixed_t *m, double *sums, tessera_data_t **R, double *anrm);

/** Over m's processes (nothing for one): every process's count elements of dt at v summed, and
 *  the sum every process then holds the same, bit for bit (the flow's reduction), so that the
 *  refinement, which each process runs on its copy of the vectors, takes the same steps
 *  everywhere. Returns 0 or a negative status (message on the context). */
int tsr_mixed_sum(const tsr_mixed_t *m, void *v, size_t count, tessera_dtype_t dt);

/** dst (n x cols, ldd) = src (lds), elements of es bytes. */
void tsr_mixed_copy_columns(size_t es, int64_t n, int64_t cols, const void *src, int64_t lds,
                            void *dst, int64_t ldd);

/** The refinement of x (n x nrhs, ldx) from X = M⁻¹ B, B = b (ldb), against dsposv's criterion
 *  with cte = ‖op(A)‖∞ ε √n: 0 when every column converged within o->max_iter steps (res's
 *  iter and gmres_steps say how), TSR_MIXED_NO_CONVERGENCE, TSR_MIXED_OVERFLOW (a vector beyond
 *  the factor's range), or a negative status. */
int tsr_mixed_refine(tsr_mixed_t *m, const tessera_mixed_options_t *o, double cte, const void *b,
                     int64_t ldb, void *x, int64_t ldx, int64_t nrhs, tessera_mixed_result_t *res);

#endif
