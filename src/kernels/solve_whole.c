/* The solves of the whole-matrix kernels posv and gesv once their factors are in place: one
 * code for every device kind, calling the kind's trsm and laswp kernels on the same buffers
 * through copies of the kernel's tessera_exec_t (as the recursive kernels do). */
#include "kernels/cholesky.h"
#include "kernels/lu.h"

/* Buffers 0 (the factor) and 1 (B) of `ex`, as the two operands of a trsm or laswp. */
static tessera_exec_t operands(const tessera_exec_t *ex) {
  tessera_exec_t e = *ex;
  e.ndata = 2;
  return e;
}

tsr_trsm_args_t tsr_potrs_whole_step(const tsr_posv_args_t *a, int second) {
  const int right = a->side == 'R' || a->side == 'r';
  const int lower = a->uplo == 'L' || a->uplo == 'l';
  const char conj = tsr_dtype_complex(a->dtype) ? 'C' : 'T';
  /* A = L Lᴴ: A X = B is L Y = B then Lᴴ X = Y; X A = B is Y Lᴴ = B then X L = Y.
   * A = Uᴴ U: A X = B is Uᴴ Y = B then U X = Y; X A = B is Y U = B then X Uᴴ = Y. */
  const char first = (lower != right) ? 'N' : conj;
  return (tsr_trsm_args_t){.dtype = a->dtype,
                           .side = right ? 'R' : 'L',
                           .uplo = lower ? 'L' : 'U',
                           .trans = second ? (first == 'N' ? conj : 'N') : first,
                           .diag = 'N',
                           .m = right ? a->nrhs : a->n,
                           .n = right ? a->n : a->nrhs,
                           .alpha = {1, 0}};
}

int tsr_potrs_whole(const tessera_exec_t *ex, const tsr_posv_args_t *a, tessera_kernel_fn trsm) {
  if (a->n == 0 || a->nrhs == 0) return 0;
  tessera_exec_t e = operands(ex);
  tsr_trsm_args_t t = tsr_potrs_whole_step(a, 0);
  int rc = trsm(&e, &t);
  t = tsr_potrs_whole_step(a, 1);
  return rc ? rc : trsm(&e, &t);
}

tessera_exec_t tsr_posv_member(const tessera_exec_t *ex, const tsr_posv_args_t *a, int i) {
  const size_t es = tessera_dtype_size(a->dtype);
  tessera_exec_t e = *ex;
  e.ptr[0] = (char *)ex->ptr[0] + (size_t)i * (size_t)a->stride_a * es;
  if (ex->ptr[1]) e.ptr[1] = (char *)ex->ptr[1] + (size_t)i * (size_t)a->stride_b * es;
  e.ptr[2] = (int *)ex->ptr[2] + i;
  if (ex->ndata > 3 && ex->ptr[3]) e.ptr[3] = (double *)ex->ptr[3] + i;
  return e;
}

int tsr_getrs_whole(const tessera_exec_t *ex, const tsr_gesv_args_t *a, tessera_kernel_fn laswp,
                    tessera_kernel_fn trsm) {
  if (a->n == 0 || a->nrhs == 0) return 0;
  if (ex->ndata < 4) return TESSERA_ERR_KERNEL;
  const int notrans = a->trans == 'N' || a->trans == 'n';
  const char op = notrans ? 'N' : tsr_dtype_complex(a->dtype) ? a->trans : 'T';
  tessera_exec_t p = *ex; /* {B, piv} for the interchanges */
  p.ptr[0] = ex->ptr[1];
  p.ld[0] = ex->ld[1];
  p.ptr[1] = ex->ptr[3];
  p.ld[1] = ex->ld[3];
  p.ndata = 2;
  tsr_laswp_args_t s = {.dtype = a->dtype, .m = a->n, .n = a->nrhs, .k = a->n, .incx = 1};
  tsr_trsm_args_t t = {
      .dtype = a->dtype, .side = 'L', .trans = op, .m = a->n, .n = a->nrhs, .alpha = {1, 0}};
  tessera_exec_t e = operands(ex);
  int rc;
  if (notrans) { /* P A = L U: A X = B is L U X = P B */
    rc = laswp(&p, &s);
    t.uplo = 'L', t.diag = 'U';
    if (!rc) rc = trsm(&e, &t);
    t.uplo = 'U', t.diag = 'N';
    if (!rc) rc = trsm(&e, &t);
  } else { /* op(A) = op(U) op(L) P: op(U) Y = B, op(L) Z = Y, X = Pᵀ Z */
    t.uplo = 'U', t.diag = 'N';
    rc = trsm(&e, &t);
    t.uplo = 'L', t.diag = 'U';
    if (!rc) rc = trsm(&e, &t);
    s.incx = -1;
    if (!rc) rc = laswp(&p, &s);
  }
  return rc;
}
