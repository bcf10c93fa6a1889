/* Triangular inverse by recursive halving: for a lower triangle
 *
 *   [A11 0; A21 A22]⁻¹ = [X11 0; X21 X22],  X11 = A11⁻¹, X22 = A22⁻¹, X21 = -X22 A21 X11
 *
 * (upper: X12 = -X11 A12 X22): two half-size inverses and two triangular products, down to
 * `leaf` where the device's own trtri runs. The products run near gemm speed on GPUs, where
 * cuSOLVER's trtri of a whole tile does not.
 *
 * Device-independent: the calls go to the device kind's kernels on sub-blocks through copies of
 * the task's tessera_exec_t (on GPUs they queue in order on the task's stream). */
#include <stdbool.h>

#include "kernels/cholesky.h"

typedef struct {
  const tessera_exec_t *ex;
  tessera_kernel_fn leaf_fn, trmm;
  int leaf;
  size_t es;
} rec_t;

/* B = alpha op(T) B or alpha B op(T) with T the triangle at T (order nt), B m x n. */
static int product(const rec_t *r, const tsr_trtri_args_t *a, char side, double alpha, char *T,
                   char *B, size_t ld, int m, int n) {
  tessera_exec_t e = *r->ex;
  e.ndata = 2;
  e.ptr[0] = T, e.ld[0] = ld, e.ptr[1] = B, e.ld[1] = ld;
  tsr_trmm_args_t t = {.dtype = a->dtype,
                       .side = side,
                       .uplo = a->uplo,
                       .trans = 'N',
                       .diag = a->diag,
                       .m = m,
                       .n = n,
                       .alpha = {alpha, 0}};
  return r->trmm(&e, &t);
}

static int invert(const rec_t *r, const tsr_trtri_args_t *a, char *A, size_t ld, int n) {
  if (n <= r->leaf) {
    tessera_exec_t e = *r->ex;
    e.ndata = 1;
    e.ptr[0] = A, e.ld[0] = ld;
    tsr_trtri_args_t sub = *a;
    sub.n = n;
    return r->leaf_fn(&e, &sub);
  }
  const int n1 = tsr_half_order(n), n2 = n - n1;
  const bool lower = a->uplo == 'L' || a->uplo == 'l';
  char *A11 = A, *A22 = A + ((size_t)n1 + (size_t)n1 * ld) * r->es;
  int rc = invert(r, a, A11, ld, n1);
  if (!rc) rc = invert(r, a, A22, ld, n2);
  if (lower) { /* A21 (n2 x n1) = -X22 A21 X11 */
    char *A21 = A + (size_t)n1 * r->es;
    if (!rc) rc = product(r, a, 'R', 1, A11, A21, ld, n2, n1);
    if (!rc) rc = product(r, a, 'L', -1, A22, A21, ld, n2, n1);
  } else { /* A12 (n1 x n2) = -X11 A12 X22 */
    char *A12 = A + (size_t)n1 * ld * r->es;
    if (!rc) rc = product(r, a, 'R', 1, A22, A12, ld, n1, n2);
    if (!rc) rc = product(r, a, 'L', -1, A11, A12, ld, n1, n2);
  }
  return rc;
}

int tsr_trtri_blocked(const tessera_exec_t *ex, const tsr_trtri_args_t *a,
                      tessera_kernel_fn leaf_fn, tessera_kernel_fn trmm, int leaf) {
  rec_t r = {ex, leaf_fn, trmm, leaf < 16 ? 16 : leaf, tessera_dtype_size(a->dtype)};
  if (ex->ndata < 1 || !r.es) return leaf_fn(ex, (void *)a); /* let the leaf report the error */
  return invert(&r, a, ex->ptr[0], ex->ld[0], a->n);
}
