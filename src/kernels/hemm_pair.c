/* The two products of an off-diagonal tile S (r x c) of a Hermitian matrix stored in one
 * triangle: Yr += alpha S Xc (the tile's own block row) and Yc += alpha Sᴴ Xr (its mirror's),
 * in one task and one pass over S: on blocks of `chunk` columns, each block's two products run
 * back to back while it is in cache (the whole tile at once where the device reads memory at its
 * own rate). A product with the Hermitian matrix then reads each off-diagonal tile once.
 *
 * Device-independent: the calls go to the device kind's gemm on sub-blocks through copies of the
 * task's tessera_exec_t. */
#include "kernels/blas3.h"
#include "kernels/kernel_args.h"

int tsr_hemm_pair(const tessera_exec_t *ex, const tsr_hemm_pair_args_t *a, tessera_kernel_fn gemm,
                  int chunk) {
  const size_t es = tessera_dtype_size(a->dtype);
  if (!es || ex->ndata < 5 || a->r < 0 || a->c < 0 || a->k < 0 || chunk < 1)
    return TESSERA_ERR_KERNEL;
  const int ls = tsr_operand_ld(ex, 0, a->r, a->c), lxc = tsr_operand_ld(ex, 1, a->c, a->k);
  const int lxr = tsr_operand_ld(ex, 2, a->r, a->k), lyr = tsr_operand_ld(ex, 3, a->r, a->k);
  const int lyc = tsr_operand_ld(ex, 4, a->c, a->k);
  if (ls < 0 || lxc < 0 || lxr < 0 || lyr < 0 || lyc < 0) return TESSERA_ERR_KERNEL;
  const char ct = tsr_dtype_complex(a->dtype) ? 'C' : 'T';
  char *S = ex->ptr[0], *Xc = ex->ptr[1], *Yc = ex->ptr[4];
  tessera_exec_t e = *ex;
  e.ndata = 3;
  int rc = 0;
  for (int j = 0; j < a->c && a->r > 0 && a->k > 0 && !rc; j += chunk) {
    const int w = a->c - j < chunk ? a->c - j : chunk;
    char *Sj = S + (size_t)j * (size_t)ls * es;
    /* Yr += alpha S(:, j..) Xc(j.., :) */
    tsr_gemm_args_t g = {a->dtype, 'N', 'N', a->r, a->k, w, a->alpha, {1, 0}, 0};
    e.ptr[0] = Sj, e.ld[0] = (size_t)ls;
    e.ptr[1] = Xc + (size_t)j * es, e.ld[1] = (size_t)lxc;
    e.ptr[2] = ex->ptr[3], e.ld[2] = (size_t)lyr;
    rc = gemm(&e, &g);
    /* Yc(j.., :) += alpha S(:, j..)ᴴ Xr */
    tsr_gemm_args_t h = {a->dtype, ct, 'N', w, a->k, a->r, a->alpha, {1, 0}, 0};
    e.ptr[1] = ex->ptr[2], e.ld[1] = (size_t)lxr;
    e.ptr[2] = Yc + (size_t)j * es, e.ld[2] = (size_t)lyc;
    if (!rc) rc = gemm(&e, &h);
  }
  return rc;
}
