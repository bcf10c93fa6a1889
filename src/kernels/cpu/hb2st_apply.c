/* The back-transformation of stage 2 (hb2st.c) on CPUs: E = Q2 E, Q2 the product of the bulge
 * chasing's reflectors in the order the steps made them.
 *
 * Grouping. Reflectors H(s, j), H(s + 1, j), ..., H(s + nb - 1, j) of consecutive sweeps at the
 * same step sit on rows shifted by one; for nb <= kd' + 1 the product of the sweeps s .. s + nb - 1
 * equals G(s, last) ... G(s, 1) G(s, 0), G(s, j) = H(s, j) H(s + 1, j) ... H(s + nb - 1, j): every
 * pair of reflectors that do not commute (H(s + a, j) and H(s + b, j + 1), b < a, which share a
 * row; reflectors of one sweep never do) keeps its order. Each G(s, j) is one block reflector
 * I - V T Vᴴ, V (kd' + nb - 1) x nb with the vectors on a staircase (column c from row c, zeros
 * elsewhere), T from larft and the product from larfb (trmm and gemm over E's rows of the group
 * and all m columns). Q2 E applies the groups of sweeps from the last, and within one the steps
 * from 0 up. Columns of E never mix: a block of columns gives what the whole would in them.
 */
#include <complex.h>
#include <lapacke.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/dtype.h"
#include "kernels/cpu/hb2st.h"

/** Sweeps per block reflector (at most kd'). */
#define TSR_HB2ST_APPLY_NB 32

/* E = Q2 E, group by group (nb sweeps a group); buf: one group's V ((kd' + nb - 1) x nb), T
 * (nb x nb), taus (nb) and larfb's work (m x nb). */
#define APPLY(p, T)                                                                                \
  static void p##_apply(const tsr_hb2st_layout_t *L, int nb, const void *vp, const void *taup,     \
                        int m, void *Ep, int lde, void *bufp) {                                    \
    const T *v = vp, *tau = taup;                                                                  \
    const int kd = L->kd, n = L->n;                                                                \
    T *E = Ep, *V = bufp, *Tm = V + (size_t)(kd + nb - 1) * (size_t)nb;                            \
    T *tg = Tm + (size_t)nb * (size_t)nb, *work = tg + nb;                                         \
    for (int S = (L->sweeps - 1) / nb * nb; S >= 0; S -= nb)                                       \
      for (int j = 0, steps = tsr_hb2st_steps(L, S); j < steps; j++) {                             \
        int k = 1; /* the sweeps of the group that have a step j */                                \
        while (k < nb && j < tsr_hb2st_steps(L, S + k)) k++;                                       \
        const int r0 = S + 1 + j * kd, last = S + k - 1 + (j + 1) * kd;                            \
        const int rows = (last < n - 1 ? last : n - 1) - r0 + 1;                                   \
        bool any = false;                                                                          \
        memset(V, 0, (size_t)rows *(size_t)k * sizeof *V);                                         \
        for (int c = 0; c < k; c++) {                                                              \
          const int64_t slot = tsr_hb2st_slot(L, S + c, j);                                        \
          const int len = kd < n - (r0 + c) ? kd : n - (r0 + c);                                   \
          memcpy(V + c + (size_t)c * (size_t)rows, v + slot * kd, (size_t)len * sizeof *V);        \
          tg[c] = tau[slot];                                                                       \
          any |= tg[c] != 0;                                                                       \
        }                                                                                          \
        if (!any) continue;                                                                        \
        LAPACKE_##p##larft_work(LAPACK_COL_MAJOR, 'F', 'C', rows, k, V, rows, tg, Tm, k);          \
        LAPACKE_##p##larfb_work(LAPACK_COL_MAJOR, 'L', 'N', 'F', 'C', rows, m, k, V, rows, Tm, k,  \
                                E + r0, lde, work, m);                                             \
      }                                                                                            \
  }
APPLY(s, float)
APPLY(d, double)
APPLY(c, float complex)
APPLY(z, double complex)

typedef void (*apply_fn)(const tsr_hb2st_layout_t *L, int nb, const void *v, const void *tau, int m,
                         void *E, int lde, void *buf);
static const apply_fn apply_of[TESSERA_NUM_DTYPES] = {s_apply, d_apply, c_apply, z_apply};

int tsr_hb2st_apply(tessera_dtype_t dtype, int n, int kd, const void *v, const void *tau, int m,
                    void *E, int lde) {
  tsr_hb2st_layout_t L;
  if (!tsr_dtype_valid(dtype) || tsr_hb2st_layout(n, kd, &L) || m < 0 || lde < (n > 1 ? n : 1) ||
      (n > 0 && m > 0 && !E) || (L.ntau > 0 && m > 0 && (!v || !tau)))
    return TESSERA_ERR_KERNEL;
  if (L.ntau == 0 || m == 0) return 0;
  const int nb = L.kd < TSR_HB2ST_APPLY_NB ? L.kd : TSR_HB2ST_APPLY_NB;
  /* V, T, the group's taus, larfb's work (m x nb) */
  const size_t elems = (size_t)(L.kd + nb - 1) * (size_t)nb + (size_t)nb * (size_t)nb + (size_t)nb +
                       (size_t)m * (size_t)nb;
  void *buf = malloc(elems * tessera_dtype_size(dtype));
  if (!buf) return TESSERA_ERR_NOMEM;
  apply_of[dtype](&L, nb, v, tau, m, E, lde, buf);
  free(buf);
  return 0;
}
