/* Triangular solve by recursive halving: op(A) is cut into two diagonal blocks and one
 * off-diagonal block; two half-size solves and one product replace the whole solve, down to
 * `leaf` where the library's trsm runs. Most flops then run in gemm, which BLAS libraries make
 * far faster than trsm.
 *
 * Device-independent: the recursion calls a device kind's own trsm and gemm kernels, given as
 * function pointers, on sub-blocks through a copy of the task's tessera_exec_t, so the same code
 * serves CPUs and GPUs (where the calls queue in order on the task's stream). */
#include <stdbool.h>

#include "kernels/blas3.h"

/* One solve on the block A (order na, leading dimension lda) and B (m x n, ldb). */
typedef struct {
  const tessera_exec_t *ex;
  tessera_kernel_fn trsm, gemm;
  int leaf;
  size_t es;
} rec_t;

static int solve(const rec_t *r, tsr_trsm_args_t a, char *A, size_t lda, char *B, size_t ldb);

/* B_dst = alpha' B_dst - (product of the off-diagonal block S with the solved block X). */
static int update(const rec_t *r, const tsr_trsm_args_t *a, char *S, size_t lds, char *X,
                  size_t ldx, char *C, size_t ldc, int nsolved, int nleft, tsr_scalar_t beta) {
  const bool left = a->side == 'L' || a->side == 'l';
  const char sop = (a->trans == 'N' || a->trans == 'n') ? 'N' : a->trans;
  tessera_exec_t e = *r->ex;
  e.ndata = 3;
  tsr_gemm_args_t g = {.dtype = a->dtype, .alpha = {-1, 0}, .beta = beta, .math = a->math};
  if (left) { /* C (nleft x n) -= op(S) (nleft x nsolved) X (nsolved x n) */
    g.transa = sop, g.transb = 'N', g.m = nleft, g.n = a->n, g.k = nsolved;
    e.ptr[0] = S, e.ld[0] = lds, e.ptr[1] = X, e.ld[1] = ldx;
  } else { /* C (m x nleft) -= X (m x nsolved) op(S) (nsolved x nleft) */
    g.transa = 'N', g.transb = sop, g.m = a->m, g.n = nleft, g.k = nsolved;
    e.ptr[0] = X, e.ld[0] = ldx, e.ptr[1] = S, e.ld[1] = lds;
  }
  e.ptr[2] = C, e.ld[2] = ldc;
  return r->gemm(&e, &g);
}

static int solve(const rec_t *r, tsr_trsm_args_t a, char *A, size_t lda, char *B, size_t ldb) {
  const bool left = a.side == 'L' || a.side == 'l';
  const bool lower = a.uplo == 'L' || a.uplo == 'l';
  const int na = left ? a.m : a.n;
  if (na <= r->leaf || (left ? a.n : a.m) == 0) {
    tessera_exec_t e = *r->ex;
    e.ndata = 2;
    e.ptr[0] = A, e.ld[0] = lda, e.ptr[1] = B, e.ld[1] = ldb;
    return r->trsm(&e, &a);
  }
  const int n1 = tsr_half_order(na), n2 = na - n1;
  const size_t es = r->es;
  char *A22 = A + ((size_t)n1 + (size_t)n1 * lda) * es;
  char *S = lower ? A + (size_t)n1 * es : A + (size_t)n1 * lda * es; /* A21 or A12 */
  char *B2 = left ? B + (size_t)n1 * es : B + (size_t)n1 * ldb * es;
  /* op(A) lower: left solves run top-down, right solves bottom-up; upper the other way. */
  const bool op_lower = lower == (a.trans == 'N' || a.trans == 'n');
  const bool first_is_1 = left ? op_lower : !op_lower;
  tsr_trsm_args_t a1 = a, a2 = a;
  if (left)
    a1.m = n1, a2.m = n2;
  else
    a1.n = n1, a2.n = n2;
  tsr_trsm_args_t *af = first_is_1 ? &a1 : &a2, *as = first_is_1 ? &a2 : &a1;
  char *Af = first_is_1 ? A : A22, *As = first_is_1 ? A22 : A;
  char *Bf = first_is_1 ? B : B2, *Bs = first_is_1 ? B2 : B;
  const int nf = first_is_1 ? n1 : n2, ns = first_is_1 ? n2 : n1;
  int rc = solve(r, *af, Af, lda, Bf, ldb);
  if (!rc) rc = update(r, &a, S, lda, Bf, ldb, Bs, ldb, nf, ns, a.alpha);
  as->alpha = (tsr_scalar_t){1, 0};
  if (!rc) rc = solve(r, *as, As, lda, Bs, ldb);
  return rc;
}

int tsr_trsm_blocked(const tessera_exec_t *ex, void *args, tessera_kernel_fn trsm,
                     tessera_kernel_fn gemm, int leaf) {
  const tsr_trsm_args_t *a = args;
  size_t es = tessera_dtype_size(a->dtype);
  if (ex->ndata < 2 || !es) return trsm(ex, args); /* let the leaf report the error */
  if ((a->side == 'L' || a->side == 'l' ? a->n : a->m) <= TSR_TRSM_NARROW) return trsm(ex, args);
  rec_t r = {ex, trsm, gemm, leaf, es};
  return solve(&r, *a, ex->ptr[0], ex->ld[0], ex->ptr[1], ex->ld[1]);
}
