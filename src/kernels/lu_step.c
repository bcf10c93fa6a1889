/* One block step of LU on column panels (tsr_lu_step_args_t): a triangular solve with the
 * panel's diagonal block and a product with the part of the panel above or below it, on rows of
 * B. getrf updates a column panel with it (with the panel's row interchanges first, and its
 * solve a product with the inverse of L11 the panel's getrf made: GPUs run a kb x kb trsm at a
 * fraction of their gemm rate, trmm near it); getrs runs its four substitutions with it.
 *
 * Device-independent: calls the device kind's own laswp, trsm, trmm and gemm kernels, given as
 * function pointers, on sub-blocks through copies of the task's tessera_exec_t (as
 * trsm_blocked.c does), so the same code serves CPUs and GPUs, where the calls queue in order
 * on the task's stream. */
#include <stdbool.h>
#include <stdlib.h>

#include "kernels/kernel_args.h"
#include "kernels/lu.h"

/* B1 = op(T)⁻¹ B1: T the kb x kb diagonal block of A at row r0, B1 the rows r0 .. r0 + kb of B;
 * with getrf's T⁻¹ (buffer 3: lower, notrans), B1 = T⁻¹ B1. */
static int solve(const tessera_exec_t *ex, const tsr_lu_step_args_t *a, tessera_kernel_fn trsm,
                 tessera_kernel_fn trmm, size_t es) {
  const bool lower = a->uplo == 'L', inverse = ex->ndata > 3;
  tessera_exec_t e = *ex;
  e.ndata = 2;
  tsr_exec_rows(&e, 0, ex, inverse ? 3 : 0, inverse ? 0 : a->r0, es);
  tsr_exec_rows(&e, 1, ex, 1, a->r0, es);
  tsr_trsm_args_t t = {.dtype = a->dtype,
                       .side = 'L',
                       .uplo = a->uplo,
                       .trans = a->trans,
                       .diag = lower ? 'U' : 'N',
                       .m = a->kb,
                       .n = a->n,
                       .alpha = {1, 0}};
  return (inverse ? trmm : trsm)(&e, &t);
}

/* The product with the off-diagonal part S of the panel (rows r0 + kb .. m for L, 0 .. r0 for
 * U), `rows` rows: trans 'N' takes B_S -= S B1, 'T' / 'C' takes B1 -= op(S) B_S. */
static int product(const tessera_exec_t *ex, const tsr_lu_step_args_t *a, tessera_kernel_fn gemm,
                   size_t es) {
  const bool lower = a->uplo == 'L', notrans = a->trans == 'N';
  const int s0 = lower ? a->r0 + a->kb : 0, rows = lower ? a->m - s0 : a->r0;
  if (rows <= 0 || a->n == 0 || a->kb == 0) return 0;
  tessera_exec_t e = *ex;
  e.ndata = 3;
  tsr_exec_rows(&e, 0, ex, 0, s0, es);
  tsr_gemm_args_t g = {
      .dtype = a->dtype, .alpha = {-1, 0}, .beta = {1, 0}, .n = a->n, .math = a->math};
  if (notrans) { /* B_S (rows x n) -= S (rows x kb) B1 (kb x n) */
    g.transa = 'N', g.transb = 'N', g.m = rows, g.k = a->kb;
    tsr_exec_rows(&e, 1, ex, 1, a->r0, es);
    tsr_exec_rows(&e, 2, ex, 1, s0, es);
  } else { /* B1 (kb x n) -= op(S) (kb x rows) B_S (rows x n) */
    g.transa = a->trans, g.transb = 'N', g.m = a->kb, g.k = rows;
    tsr_exec_rows(&e, 1, ex, 1, s0, es);
    tsr_exec_rows(&e, 2, ex, 1, a->r0, es);
  }
  return gemm(&e, &g);
}

int tsr_lu_step(const tessera_exec_t *ex, const tsr_lu_step_args_t *a, tessera_kernel_fn laswp,
                tessera_kernel_fn trsm, tessera_kernel_fn trmm, tessera_kernel_fn gemm) {
  const size_t es = tessera_dtype_size(a->dtype);
  const int u = tsr_letter(a->uplo, "UL"), t = tsr_op_index(a->trans, a->dtype);
  if (!es || u < 0 || t < 0 || ex->ndata < 2 || a->r0 < 0 || a->kb < 0 || a->n < 0 ||
      (int64_t)a->r0 + a->kb > a->m || tsr_operand_ld(ex, 0, a->m, a->kb) < 0 ||
      tsr_operand_ld(ex, 1, a->m, a->n) < 0 ||
      (ex->ndata > 3 && tsr_operand_ld(ex, 3, a->kb, a->kb) < 0))
    return TESSERA_ERR_KERNEL;
  if (a->kb == 0 || a->n == 0) return 0;
  tsr_lu_step_args_t s = *a;
  s.uplo = "UL"[u];
  s.trans = "NTC"[t];
  int rc = 0;
  if (ex->ndata > 2) { /* the panel's interchanges, on B's rows from r0 */
    if (s.uplo != 'L' || s.trans != 'N') return TESSERA_ERR_KERNEL;
    tessera_exec_t e = *ex;
    e.ndata = 2;
    e.ptr[0] = ex->ptr[1], e.ld[0] = ex->ld[1];
    e.ptr[1] = ex->ptr[2], e.ld[1] = ex->ld[2];
    tsr_laswp_args_t l = {
        .dtype = a->dtype, .m = a->m, .n = a->n, .r0 = a->r0, .k = a->kb, .incx = 1};
    rc = laswp(&e, &l);
  }
  if (s.trans == 'N') {
    if (!rc) rc = solve(ex, &s, trsm, trmm, es);
    if (!rc) rc = product(ex, &s, gemm, es);
  } else {
    if (!rc) rc = product(ex, &s, gemm, es);
    if (!rc) rc = solve(ex, &s, trsm, trmm, es);
  }
  return rc;
}

int tsr_lu_swaps(int *piv, int k, int rows) {
  int *count = piv + 1 + k, *dst = count + 1, *src = dst + 2 * k;
  *count = -1;
  if (k <= 0) return *count = 0, 0;
  /* content[r]: the row whose element row r holds after the interchanges so far */
  int *content = malloc((size_t)rows * sizeof *content);
  if (!content) return -1;
  for (int r = 0; r < rows; r++) content[r] = r;
  for (int i = 0; i < k; i++) {
    const int p = piv[1 + i] - 1, t = content[i];
    content[i] = content[p];
    content[p] = t;
  }
  int c = 0;
  for (int r = 0; r < k; r++)
    if (content[r] != r) dst[c] = r, src[c++] = content[r];
  for (int i = 0; i < k; i++) { /* the rows below the first k, each once */
    const int p = piv[1 + i] - 1;
    if (p >= k && content[p] != p) {
      dst[c] = p, src[c++] = content[p];
      content[p] = p;
    }
  }
  free(content);
  *count = c;
  return 0;
}
