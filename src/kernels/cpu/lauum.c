/* lauum on the CPU by recursive halving onto syrk/herk and trmm (LAPACK's own blocking):
 *   upper, A = U Uᴴ:  A11 = lauum(U11) + U12 U12ᴴ;  A12 = U12 U22ᴴ;  A22 = lauum(U22)
 *   lower, A = Lᴴ L:  A11 = lauum(L11) + L21ᴴ L21;  A21 = L22ᴴ L21;  A22 = lauum(L22)
 * down to 1 x 1 tiles, where the product is |a|². OpenBLAS 0.3.21's own clauum / zlauum read
 * one element past the end of the tile (its last zero-length dot product), which faults when
 * the tile ends an allocation; this path touches nothing outside the triangle. */
#include <stdbool.h>

#include "kernels/kernel_args.h"

static void set_abs2(tessera_dtype_t dt, void *p) {
  tsr_scalar_t v = tsr_scalar_load(dt, p, 0);
  double m = v.re * v.re + v.im * v.im;
  if (dt == TESSERA_F32 || dt == TESSERA_C64) {
    float *f = p;
    f[0] = (float)m;
    if (dt == TESSERA_C64) f[1] = 0;
  } else {
    double *d = p;
    d[0] = m;
    if (dt == TESSERA_C128) d[1] = 0;
  }
}

static int lauum(const tessera_exec_t *ex, tessera_dtype_t dt, bool upper, int n, char *A,
                 size_t lda) {
  if (n == 1) {
    set_abs2(dt, A);
    return 0;
  }
  const size_t es = tessera_dtype_size(dt);
  const int n1 = n / 2, n2 = n - n1;
  char *A22 = A + ((size_t)n1 + (size_t)n1 * lda) * es;
  char *off = upper ? A + (size_t)n1 * lda * es : A + (size_t)n1 * es; /* U12 or L21 */
  int rc = lauum(ex, dt, upper, n1, A, lda);
  tessera_exec_t e = *ex;
  e.ndata = 2;
  /* A11 += U12 U12ᴴ (upper) or L21ᴴ L21 (lower) */
  tsr_syrk_args_t s = {.dtype = dt,
                       .uplo = upper ? 'U' : 'L',
                       .trans = upper ? 'N' : 'C',
                       .herk = 1,
                       .n = n1,
                       .k = n2,
                       .alpha = {1, 0},
                       .beta = {1, 0}};
  e.ptr[0] = off, e.ld[0] = lda, e.ptr[1] = A, e.ld[1] = lda;
  if (!rc) rc = tsr_cpu_syrk(&e, &s);
  /* A12 = U12 U22ᴴ (upper) or A21 = L22ᴴ L21 (lower) */
  tsr_trmm_args_t t = {.dtype = dt,
                       .side = upper ? 'R' : 'L',
                       .uplo = upper ? 'U' : 'L',
                       .trans = 'C',
                       .diag = 'N',
                       .m = upper ? n1 : n2,
                       .n = upper ? n2 : n1,
                       .alpha = {1, 0}};
  e.ptr[0] = A22, e.ld[0] = lda, e.ptr[1] = off, e.ld[1] = lda;
  if (!rc) rc = tsr_cpu_trmm(&e, &t);
  if (!rc) rc = lauum(ex, dt, upper, n2, A22, lda);
  return rc;
}

int tsr_cpu_lauum(const tessera_exec_t *ex, void *args) {
  const tsr_lauum_args_t *a = args;
  int u = tsr_letter(a->uplo, "UL");
  int lda = tsr_operand_ld(ex, 0, a->n, a->n);
  if (!tsr_dtype_valid(a->dtype) || u < 0 || lda < 0) return TESSERA_ERR_KERNEL;
  if (a->n == 0) return 0;
  return lauum(ex, a->dtype, u == 0, a->n, ex->ptr[0], (size_t)lda);
}
