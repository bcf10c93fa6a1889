/* Cholesky factorization by recursive halving: for a lower triangle
 *
 *   A11 = L11 L11ᴴ,  L21 = A21 L11⁻ᴴ,  A22 -= L21 L21ᴴ,  A22 = L22 L22ᴴ
 *
 * (upper: U12 = U11⁻ᴴ A12, A22 -= U12ᴴ U12), down to `leaf` where the device's own potrf runs.
 * The update of A22 is halved again (its two diagonal blocks updated recursively, the
 * off-diagonal block by one product), so that no product computes the triangle A22 does not
 * store. All but the leaves' flops then run in products, in the task's arithmetic
 * (tsr_potrf_args_t.math): on GPUs tensor cores, which a library's potrf of a whole tile
 * does not use.
 *
 * Device-independent: the calls go to the device kind's kernels on sub-blocks through copies of
 * the task's tessera_exec_t (on GPUs they queue in order on the task's stream). A leaf that
 * finds a non-positive pivot either returns the info (a device that knows it at once) or leaves
 * that pivot NaN for a scan of the diagonal after the whole factorization (a device that learns
 * it later): the blocks factored before it are complete, and nothing after it writes its
 * diagonal. */
#include <stdbool.h>

#include "kernels/cholesky.h"

typedef struct {
  const tessera_exec_t *ex;
  const tsr_potrf_args_t *a;
  tessera_kernel_fn leaf_fn, trsm, herk, gemm;
  int leaf;
  bool lower;
  size_t es, ld;
} rec_t;

/* Element (i, j) of the block at p. */
static char *at(const rec_t *r, char *p, int i, int j) {
  return p + ((size_t)i + (size_t)j * r->ld) * r->es;
}

/* C (order n, the stored triangle) -= S Sᴴ (lower: S n x k) or Sᴴ S (upper: S k x n). */
static int update(const rec_t *r, char *S, char *C, int n, int k) {
  tessera_exec_t e = *r->ex;
  if (n <= r->leaf) {
    tsr_syrk_args_t s = {.dtype = r->a->dtype,
                         .uplo = r->lower ? 'L' : 'U',
                         .trans = r->lower ? 'N' : 'C',
                         .herk = 1,
                         .n = n,
                         .k = k,
                         .alpha = {-1, 0},
                         .beta = {1, 0},
                         .math = r->a->math};
    e.ndata = 2;
    e.ptr[0] = S, e.ld[0] = r->ld, e.ptr[1] = C, e.ld[1] = r->ld;
    return r->herk(&e, &s);
  }
  const int n1 = tsr_half_order(n), n2 = n - n1;
  char *S2 = r->lower ? at(r, S, n1, 0) : at(r, S, 0, n1);
  int rc = update(r, S, C, n1, k);
  /* lower: C21 (n2 x n1) -= S2 S1ᴴ; upper: C12 (n1 x n2) -= S1ᴴ S2 */
  tsr_gemm_args_t g = {.dtype = r->a->dtype,
                       .transa = r->lower ? 'N' : 'C',
                       .transb = r->lower ? 'C' : 'N',
                       .m = r->lower ? n2 : n1,
                       .n = r->lower ? n1 : n2,
                       .k = k,
                       .alpha = {-1, 0},
                       .beta = {1, 0},
                       .math = r->a->math};
  e.ndata = 3;
  e.ptr[0] = r->lower ? S2 : S, e.ptr[1] = r->lower ? S : S2;
  e.ptr[2] = r->lower ? at(r, C, n1, 0) : at(r, C, 0, n1);
  e.ld[0] = e.ld[1] = e.ld[2] = r->ld;
  if (!rc) rc = r->gemm(&e, &g);
  if (!rc) rc = update(r, S2, at(r, C, n1, n1), n2, k);
  return rc;
}

/* Factors the diagonal block at A (order n) whose first row is row `off` of the tile. */
static int factor(const rec_t *r, char *A, int n, int64_t off) {
  tessera_exec_t e = *r->ex;
  if (n <= r->leaf) {
    tsr_potrf_args_t sub = *r->a;
    sub.n = n;
    sub.offset = r->a->offset + off;
    e.ndata = 1;
    e.ptr[0] = A, e.ld[0] = r->ld;
    return r->leaf_fn(&e, &sub);
  }
  const int n1 = tsr_half_order(n), n2 = n - n1;
  char *S = r->lower ? at(r, A, n1, 0) : at(r, A, 0, n1); /* A21 or A12 */
  int rc = factor(r, A, n1, off);
  if (rc) return rc;
  /* lower: A21 = A21 L11⁻ᴴ; upper: A12 = U11⁻ᴴ A12 */
  tsr_trsm_args_t t = {.dtype = r->a->dtype,
                       .side = r->lower ? 'R' : 'L',
                       .uplo = r->lower ? 'L' : 'U',
                       .trans = 'C',
                       .diag = 'N',
                       .m = r->lower ? n2 : n1,
                       .n = r->lower ? n1 : n2,
                       .alpha = {1, 0},
                       .math = r->a->math};
  e.ndata = 2;
  e.ptr[0] = A, e.ptr[1] = S, e.ld[0] = e.ld[1] = r->ld;
  rc = r->trsm(&e, &t);
  if (!rc) rc = update(r, S, at(r, A, n1, n1), n2, n1);
  if (!rc) rc = factor(r, at(r, A, n1, n1), n2, off + n1);
  return rc;
}

int tsr_potrf_blocked(const tessera_exec_t *ex, const tsr_potrf_args_t *a,
                      tessera_kernel_fn leaf_fn, tessera_kernel_fn trsm, tessera_kernel_fn herk,
                      tessera_kernel_fn gemm, int leaf) {
  const size_t es = tessera_dtype_size(a->dtype);
  if (ex->ndata < 1 || !es || (a->uplo != 'L' && a->uplo != 'U'))
    return leaf_fn(ex, (void *)a); /* let the leaf report the error */
  rec_t r = {.ex = ex,
             .a = a,
             .leaf_fn = leaf_fn,
             .trsm = trsm,
             .herk = herk,
             .gemm = gemm,
             .leaf = leaf < 16 ? 16 : leaf,
             .lower = a->uplo == 'L',
             .es = es,
             .ld = ex->ld[0]};
  return factor(&r, ex->ptr[0], a->n, 0);
}
