/* One block step of Householder QR on column panels (tsr_qr_step_args_t): the block reflector
 * Q = I - V T Vᴴ of a panel's geqrt applied to another column panel C, on its rows r0 .. m - 1:
 *
 *   W = Vᴴ C = V1ᴴ C1 + V2ᴴ C2      (V1 the unit lower kb x kb block at row r0, V2 the rows below)
 *   W = op(T) W                     (Tᴴ for Qᴴ C, T for Q C)
 *   C2 -= V2 W;  C1 -= V1 W
 *
 * The products with V1 are triangular products on a copy (lacpy, trmm), those with V2 gemms: on
 * a tall panel nearly all of the step's work. geqrf applies Qᴴ to each later panel; ungqr and
 * unmqr apply Q or Qᴴ to the columns they form or update.
 *
 * Device-independent: the device kind's own lacpy, trmm, gemm and geadd kernels, given as
 * function pointers, on sub-blocks through copies of the task's tessera_exec_t (as lu_step.c
 * does), queued in order on the task's stream on GPUs. */
#include "kernels/blas3.h"
#include "kernels/copy.h"
#include "kernels/kernel_args.h"
#include "kernels/qr.h"

/* Runs `fn` on the two blocks (buffer i from row ri, buffer j from row rj). */
static int pair(tessera_kernel_fn fn, void *args, const tessera_exec_t *ex, int i, int ri, int j,
                int rj, size_t es) {
  tessera_exec_t e = *ex;
  e.ndata = 2;
  tsr_exec_rows(&e, 0, ex, i, ri, es);
  tsr_exec_rows(&e, 1, ex, j, rj, es);
  return fn(&e, args);
}

enum { V = 0, C = 1, T = 2, W = 3 };

int tsr_qr_step_valid(const tessera_exec_t *ex, const tsr_qr_step_args_t *a) {
  const int t = tsr_op_index(a->trans, a->dtype);
  if (!tsr_dtype_valid(a->dtype) ||
      (t != 0 && t != 2 && !(t == 1 && !tsr_dtype_complex(a->dtype))) || ex->ndata < 4 ||
      a->r0 < 0 || a->kb < 0 || a->n < 0 || (int64_t)a->r0 + a->kb > a->m ||
      tsr_operand_ld(ex, V, a->m, a->kb) < 0 || a->c0 < 0 ||
      tsr_operand_ld(ex, C, a->m + a->c0, a->n) < 0 || tsr_operand_ld(ex, T, a->kb, a->kb) < 0 ||
      tsr_operand_ld(ex, W, a->kb, a->n) < 0)
    return -1;
  return a->kb > 0 && a->n > 0;
}

int tsr_qr_step(const tessera_exec_t *ex, const tsr_qr_step_args_t *a, tessera_kernel_fn lacpy,
                tessera_kernel_fn trmm, tessera_kernel_fn gemm, tessera_kernel_fn geadd) {
  const int valid = tsr_qr_step_valid(ex, a);
  if (valid <= 0) return valid < 0 ? TESSERA_ERR_KERNEL : 0;
  const size_t es = tessera_dtype_size(a->dtype);
  const int t = tsr_op_index(a->trans, a->dtype);
  const char conj = tsr_dtype_complex(a->dtype) ? 'C' : 'T';
  const int r1 = a->r0 + a->kb, below = a->m - r1;
  const tsr_scalar_t one = {1, 0}, mone = {-1, 0};
  /* W = C1 */
  tsr_lacpy_args_t cp = {.dtype = a->dtype, .m = a->kb, .n = a->n, .src_row = 0, .dst_row = 0};
  int rc = pair(lacpy, &cp, ex, C, a->c0 + a->r0, W, 0, es);
  /* W = V1ᴴ W */
  tsr_trsm_args_t tm = {.dtype = a->dtype,
                        .side = 'L',
                        .uplo = 'L',
                        .trans = conj,
                        .diag = 'U',
                        .m = a->kb,
                        .n = a->n,
                        .alpha = one};
  if (!rc) rc = pair(trmm, &tm, ex, V, a->r0, W, 0, es);
  /* W += V2ᴴ C2 */
  tessera_exec_t g3 = *ex;
  g3.ndata = 3;
  tsr_gemm_args_t g = {.dtype = a->dtype, .alpha = one, .beta = one};
  if (!rc && below > 0) {
    g.transa = conj, g.transb = 'N', g.m = a->kb, g.n = a->n, g.k = below;
    tsr_exec_rows(&g3, 0, ex, V, r1, es);
    tsr_exec_rows(&g3, 1, ex, C, a->c0 + r1, es);
    tsr_exec_rows(&g3, 2, ex, W, 0, es);
    rc = gemm(&g3, &g);
  }
  /* W = op(T) W: Tᴴ for Qᴴ C, T for Q C */
  tm.uplo = 'U', tm.diag = 'N', tm.trans = t == 0 ? 'N' : conj;
  if (!rc) rc = pair(trmm, &tm, ex, T, 0, W, 0, es);
  /* C2 -= V2 W */
  if (!rc && below > 0) {
    g.transa = 'N', g.transb = 'N', g.m = below, g.n = a->n, g.k = a->kb, g.alpha = mone;
    tsr_exec_rows(&g3, 0, ex, V, r1, es);
    tsr_exec_rows(&g3, 1, ex, W, 0, es);
    tsr_exec_rows(&g3, 2, ex, C, a->c0 + r1, es);
    rc = gemm(&g3, &g);
  }
  /* W = V1 W; C1 -= W */
  tm.uplo = 'L', tm.diag = 'U', tm.trans = 'N';
  if (!rc) rc = pair(trmm, &tm, ex, V, a->r0, W, 0, es);
  tsr_geadd_args_t ad = {.dtype = a->dtype, .m = a->kb, .n = a->n, .alpha = mone, .beta = one};
  if (!rc) rc = pair(geadd, &ad, ex, W, 0, C, a->c0 + a->r0, es);
  return rc;
}
