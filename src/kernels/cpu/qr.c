/* CPU tile kernels of the QR family (qr.h) on host memory through LAPACKE: geqrt and larft,
 * and qr_step (qr_step.c) onto lacpy, trmm, gemm and geadd. Each calls the routine of the dtype
 * from the operation's table, as cpu/blas3.c does; an invalid argument returns
 * TESSERA_ERR_KERNEL without touching the data.
 */
#include <lapacke.h>
#include <stdlib.h>

#include "kernels/blas3.h"
#include "kernels/copy.h"
#include "kernels/cpu/cpu_blas.h"
#include "kernels/qr.h"

/* ---------------------------------------------------------------- geqrt, larft, qr_step */

typedef lapack_int (*geqrt_fn)(lapack_int, lapack_int, lapack_int, void *, lapack_int, void *,
                               lapack_int, void *);
#define GEQRT(t)                                                                                   \
  static lapack_int t##geqrt(lapack_int m, lapack_int n, lapack_int nb, void *A, lapack_int lda,   \
                             void *T, lapack_int ldt, void *work) {                                \
    return LAPACKE_##t##geqrt_work(LAPACK_COL_MAJOR, m, n, nb, A, lda, T, ldt, work);              \
  }
GEQRT(s)
GEQRT(d)
GEQRT(c)
GEQRT(z)
static const geqrt_fn geqrt_of[TESSERA_NUM_DTYPES] = {sgeqrt, dgeqrt, cgeqrt, zgeqrt};

/* LAPACK's geqrt with one block of the whole width: T is k x k. The _work form: LAPACKE's
 * other form refuses a matrix holding NaN, which LAPACK itself carries through. */
int tsr_cpu_geqrt(const tessera_exec_t *ex, void *args) {
  const tsr_geqrt_args_t *a = args;
  tsr_cpu_operand_t A, T;
  const int rows = a->m - a->r0, k = rows < a->n ? rows : a->n;
  if (!tsr_dtype_valid(a->dtype) || a->r0 < 0 || rows < 0 || ex->ndata < 2 ||
      tsr_cpu_operand(ex, 0, a->m, a->n, &A) || tsr_cpu_operand(ex, 1, k, k, &T))
    return TESSERA_ERR_KERNEL;
  if (k == 0) return 0;
  const size_t es = tessera_dtype_size(a->dtype);
  void *work = malloc((size_t)k * (size_t)a->n * es);
  if (!work) return TESSERA_ERR_NOMEM;
  char *p = (char *)A.p + (size_t)a->r0 * es;
  const lapack_int info = geqrt_of[a->dtype](rows, a->n, k, p, A.ld, T.p, T.ld, work);
  free(work);
  return info < 0 ? TESSERA_ERR_KERNEL : 0;
}

typedef lapack_int (*larft_fn)(lapack_int, lapack_int, const void *, lapack_int, const void *,
                               void *, lapack_int);
#define LARFT(t)                                                                                   \
  static lapack_int t##larft(lapack_int n, lapack_int k, const void *V, lapack_int ldv,            \
                             const void *tau, void *T, lapack_int ldt) {                           \
    return LAPACKE_##t##larft_work(LAPACK_COL_MAJOR, 'F', 'C', n, k, V, ldv, tau, T, ldt);         \
  }
LARFT(s)
LARFT(d)
LARFT(c)
LARFT(z)
static const larft_fn larft_of[TESSERA_NUM_DTYPES] = {slarft, dlarft, clarft, zlarft};

int tsr_cpu_larft(const tessera_exec_t *ex, void *args) {
  const tsr_larft_args_t *a = args;
  tsr_cpu_operand_t V, tau, T;
  const int rows = a->m - a->r0;
  if (!tsr_dtype_valid(a->dtype) || a->r0 < 0 || a->kb < 0 || rows < a->kb || ex->ndata < 3 ||
      tsr_cpu_operand(ex, 0, a->m, a->kb, &V) || tsr_cpu_operand(ex, 1, a->kb, 1, &tau) ||
      tsr_cpu_operand(ex, 2, a->kb, a->kb, &T))
    return TESSERA_ERR_KERNEL;
  if (a->kb == 0) return 0;
  const char *v = (const char *)V.p + (size_t)a->r0 * tessera_dtype_size(a->dtype);
  return larft_of[a->dtype](rows, a->kb, v, V.ld, tau.p, T.p, T.ld) < 0 ? TESSERA_ERR_KERNEL : 0;
}

int tsr_cpu_qr_step(const tessera_exec_t *ex, void *args) {
  return tsr_qr_step(ex, args, tsr_cpu_lacpy, tsr_cpu_trmm, tsr_cpu_gemm, tsr_cpu_geadd);
}
