/* Tile kernels: one tile operation, all four dtypes, one implementation per device kind.
 *
 * The layer's umbrella header: the algorithms include it and find every kernel. Each family
 * keeps its kernels' argument structs, tables (tessera_kernel_t: implementations per device
 * kind, operation count, size key) and implementations' prototypes in one header, the tables in
 * the .c of the same name, and its implementations in cpu/ and cuda/ under the same name:
 *   blas3.h     gemm, syrk / herk, trsm, trmm, hemm, hemm_pair, geadd (tsr_math_t)
 *   cholesky.h  potrf, trtri, lauum, logdiag; posv (a whole solve)
 *   lu.h        getrf, laswp, lu_step; gesv (a whole solve)
 *   qr.h        geqrt, larft, qr_step
 *   eig.h       eig_prepare, hb2st, hb2st_steps, hb2st_apply, stedc, laed_*
 *   copy.h      lacpy, convert, absum, transpose, diagonal, triangle, identity, hefill
 */
#ifndef TSR_KERNELS_H
#define TSR_KERNELS_H

#include "kernels/blas3.h"
#include "kernels/cholesky.h"
#include "kernels/copy.h"
#include "kernels/eig.h"
#include "kernels/lu.h"
#include "kernels/qr.h"

#endif
