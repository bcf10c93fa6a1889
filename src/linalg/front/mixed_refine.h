/* The refinement of a mixed-precision solve (mixed_refine.c) and the solve's state it works on,
 * which the entry points and the factor (mixed.c) set up. */
#ifndef TSR_LINALG_FRONT_MIXED_REFINE_H
#define TSR_LINALG_FRONT_MIXED_REFINE_H

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
} tsr_mixed_t;

/** Over m's processes (nothing for one): every process's count elements of dt at v summed, and
 *  the sum every process then holds the same, bit for bit (process 0's), so that the
 *  refinement, which each process runs on its copy of the vectors, takes the same steps
 *  everywhere. Returns 0 or a negative status (message on the context). */
int tsr_mixed_agree(const tsr_mixed_t *m, void *v, size_t count, tessera_dtype_t dt);

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
