/* lauum by recursive halving onto herk and trmm (LAPACK's own blocking):
 *   upper, A = U Uᴴ:  A11 = lauum(U11) + U12 U12ᴴ;  A12 = U12 U22ᴴ;  A22 = lauum(U22)
 *   lower, A = Lᴴ L:  A11 = lauum(L11) + L21ᴴ L21;  A21 = L22ᴴ L21;  A22 = lauum(L22)
 * down to `leaf`, where the device's own lauum runs. Nothing outside the triangle is touched.
 *
 * Device-independent: the calls go to the device kind's kernels, given as function pointers, on
 * sub-blocks through copies of the task's tessera_exec_t (on GPUs they queue in order on the
 * task's stream). */
#include "kernels/cholesky.h"

typedef struct {
  const tessera_exec_t *ex;
  tessera_kernel_fn leaf_fn, herk, trmm;
  int leaf;
  size_t es;
} rec_t;

static int lauum(const rec_t *r, const tsr_lauum_args_t *a, char *A, size_t lda, int n) {
  tessera_exec_t e = *r->ex;
  if (n <= r->leaf) {
    e.ndata = 1;
    e.ptr[0] = A, e.ld[0] = lda;
    tsr_lauum_args_t sub = *a;
    sub.n = n;
    return r->leaf_fn(&e, &sub);
  }
  const bool upper = a->uplo == 'U' || a->uplo == 'u';
  const int n1 = tsr_half_order(n), n2 = n - n1;
  char *A22 = A + ((size_t)n1 + (size_t)n1 * lda) * r->es;
  char *off = upper ? A + (size_t)n1 * lda * r->es : A + (size_t)n1 * r->es; /* U12 or L21 */
  int rc = lauum(r, a, A, lda, n1);
  e.ndata = 2;
  /* A11 += U12 U12ᴴ (upper) or L21ᴴ L21 (lower) */
  tsr_syrk_args_t s = {.dtype = a->dtype,
                       .uplo = upper ? 'U' : 'L',
                       .trans = upper ? 'N' : 'C',
                       .herk = 1,
                       .n = n1,
                       .k = n2,
                       .alpha = {1, 0},
                       .beta = {1, 0}};
  e.ptr[0] = off, e.ld[0] = lda, e.ptr[1] = A, e.ld[1] = lda;
  if (!rc) rc = r->herk(&e, &s);
  /* A12 = U12 U22ᴴ (upper) or A21 = L22ᴴ L21 (lower) */
  tsr_trmm_args_t t = {.dtype = a->dtype,
                       .side = upper ? 'R' : 'L',
                       .uplo = upper ? 'U' : 'L',
                       .trans = 'C',
                       .diag = 'N',
                       .m = upper ? n1 : n2,
                       .n = upper ? n2 : n1,
                       .alpha = {1, 0}};
  e.ptr[0] = A22, e.ld[0] = lda, e.ptr[1] = off, e.ld[1] = lda;
  if (!rc) rc = r->trmm(&e, &t);
  if (!rc) rc = lauum(r, a, A22, lda, n2);
  return rc;
}

int tsr_lauum_blocked(const tessera_exec_t *ex, const tsr_lauum_args_t *a,
                      tessera_kernel_fn leaf_fn, tessera_kernel_fn herk, tessera_kernel_fn trmm,
                      int leaf) {
  rec_t r = {ex, leaf_fn, herk, trmm, leaf < 1 ? 1 : leaf, tessera_dtype_size(a->dtype)};
  if (ex->ndata < 1 || !r.es || a->n <= 0) return leaf_fn(ex, (void *)a); /* the leaf checks */
  return lauum(&r, a, ex->ptr[0], ex->ld[0], a->n);
}
