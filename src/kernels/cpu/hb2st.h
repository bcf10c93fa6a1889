/* Stage 2 of the two-stage Hermitian (symmetric) eigensolver on CPUs: a band of kd sub-diagonals
 * reduced to a real symmetric tridiagonal T by bulge chasing (Haidar, Ltaief, Dongarra 2011; the
 * algorithm of LAPACK's ?sytrd_sb2st / ?hetrd_hb2st), and the back-transformation by its
 * orthogonal / unitary Q2 (A = Q2 T Q2ᴴ). All four dtypes; f32 and c64 compute in single
 * precision, d and e are doubles for every dtype.
 *
 * Band storage. The input is LAPACK's lower band storage: A(i, j) = ab[(i - j) + j * ldab] for
 * j <= i <= min(n - 1, j + kd), ldab >= kd + 1 (the upper triangle is implied, A Hermitian; the
 * imaginary parts of the diagonal are ignored). The reduction runs on a working band `w` of the
 * same form with more rows, ldw >= layout.ldw = 2 kd' (kd' = layout.kd, the effective bandwidth
 * min(kd, n - 1)), the rows below the band holding the bulges: A(i, j) = w[(i - j) + j * ldw] for
 * 0 <= i - j < 2 kd'. (Seen with leading dimension ldw - 1 the working band is a dense column-major
 * matrix, A(i, j) = w[i + j * (ldw - 1)], on which the steps call BLAS.)
 *
 * Sweeps and steps. Sweep s (0 <= s <= n - 2) makes column s tridiagonal; its step j works on the
 * rows and columns of block j, lo = s + 1 + j kd' .. hi = min(lo + kd' - 1, n - 1), and makes
 * reflector (s, j) = I - tau v vᴴ on those rows (LAPACK's larfg: Hᴴ x = beta e1, beta real):
 *  - step 0 (LAPACK's kernel type 1): the reflector annihilating A(s + 2 .. hi, s) and making
 *    A(s + 1, s) real, then the two-sided update Hᴴ A H of the diagonal block [lo, hi];
 *  - step j >= 1 (types 2 and 3): reflector (s, j - 1) applied from the right to the block
 *    A(lo .. hi, lo - kd' .. lo - 1) below it (the bulge), the reflector (s, j) annihilating the
 *    bulge's first column below its first row and applied from the left to the rest of the
 *    bulge, then the two-sided update of the diagonal block [lo, hi]. A block of a single row
 *    (the last one; every block j >= 1 when kd' = 1) gets no reflector (tau = 0): its entry is
 *    made real later, by the step 0 of sweep lo - kd'.
 * Steps of sweep s: tsr_hb2st_steps. Sequentially, sweeps in order and steps in order within a
 * sweep, they leave T's diagonal in w's row 0 and its sub-diagonal (real) in row 1.
 *
 * Dependencies (for running steps as tasks). Step (s, j) reads and writes, of the working band:
 *  - j = 0: column s, rows s + 1 .. hi, and columns lo .. hi, rows column .. hi;
 *  - j >= 1: columns lo - kd' .. lo - 1, rows lo .. hi, and columns lo .. hi, rows column .. hi;
 * so, in columns, [s, hi] for j = 0 and [lo - kd', hi] for j >= 1. It reads reflector (s, j - 1)
 * (j >= 1) and writes reflector (s, j). Hence step (s, j) must follow step (s, j - 1) (the same
 * sweep, in order) and step (s - 1, j + 1) (the sweep before, one block on: they share row hi
 * of columns lo - 1 .. hi); with those done it may run concurrently with step
 * (s - 1, j + 2) and later ones, which share only a column (of which (s, j) touches the diagonal
 * entry, (s - 1, j + 2) rows kd' below it). Where sweep s - 1 has fewer than j + 2 steps, (s, j)
 * follows its last. Steps never touch d, e or the input band.
 *
 * Reflectors. Slot (s, j) holds reflector (s, j): tau[s * steps + j] and its vector at
 * v[(s * steps + j) * kd'] .. + kd' - 1 (layout.steps, layout.kd), vector element r on row
 * lo + r; element 0 is 1 and stored, elements past the block's length are stored zeros. Sweeps
 * of fewer steps leave the slots past their last unused (never read). Q2 = H(0, 0) H(0, 1) ...
 * H(0, last) H(1, 0) ... H(n - 2, last), the product in the order the steps make them.
 *
 * Thread safety: every function works on its arguments only (no shared state); steps that the
 * dependencies allow may run at once on one band with separate `work`.
 */
#ifndef TSR_KERNELS_CPU_HB2ST_H
#define TSR_KERNELS_CPU_HB2ST_H

#include <stdint.h>

#include "tessera/types.h"

/** The sizes and strides of a reduction of order n and bandwidth kd. */
typedef struct {
  int n;         /**< the order */
  int kd;        /**< effective bandwidth kd': min(kd, n - 1), 0 when n <= 1 */
  int ldw;       /**< least leading dimension of the working band: max(1, 2 kd') */
  int steps;     /**< reflector slots per sweep: sweep 0's steps (kd' >= 2: ceil((n - 1) / kd'),
                      kd' = 1: min(2, n - 1), kd' = 0: 0) */
  int sweeps;    /**< sweeps that make reflectors: n - 1 when kd' >= 1, else 0 */
  int64_t ntau;  /**< reflector slots: sweeps * steps (entries of tau) */
  int64_t nv;    /**< entries of v: ntau * kd' */
  int64_t nwork; /**< tsr_hb2st's workspace, in elements of the dtype: ldw * n + kd' */
} tsr_hb2st_layout_t;

/** The layout of a reduction of order `n` and bandwidth `kd`. Returns 0, or TESSERA_ERR_KERNEL
 *  when n < 0, kd < 0 or 2 kd' overflows an int; `*lay` is then all zeros. */
int tsr_hb2st_layout(int n, int kd, tsr_hb2st_layout_t *lay);

/** Reflector slots of a reduction of order `n` and bandwidth `kd` (the entries of tau, in
 *  elements of the dtype), with the entries of v in `*nv` when nv is not NULL. Returns -1 when
 *  n < 0 or kd < 0. */
int64_t tsr_hb2st_reflectors(int n, int kd, int64_t *nv);

/** Workspace of tsr_hb2st in elements of `dtype`: the working band (ldw * n) and a step's
 *  scratch (kd'). Returns -1 for an invalid dtype, n < 0 or kd < 0. */
int64_t tsr_hb2st_work_size(tessera_dtype_t dtype, int n, int kd);

/** Steps of sweep `s` (0 <= s <= n - 2) of the layout: the blocks of rows s + 1 .. n - 1 of kd'
 *  rows (kd' >= 2), min(2, n - 1 - s) when kd' = 1 (steps past the second have nothing to do),
 *  0 when kd' = 0 or s is out of range. */
static inline int tsr_hb2st_steps(const tsr_hb2st_layout_t *lay, int s) {
  if (lay->kd < 1 || s < 0 || s > lay->n - 2) return 0;
  const int rows = lay->n - 1 - s;
  if (lay->kd == 1) return rows < 2 ? rows : 2;
  return (rows + lay->kd - 1) / lay->kd;
}

/** The columns of the working band step `j` of sweep `s` reads and writes (the file's
 *  comment): [s, hi] for j = 0, [lo - kd', hi] for j >= 1, into *first and *last. */
static inline void tsr_hb2st_columns(const tsr_hb2st_layout_t *lay, int s, int j, int *first,
                                     int *last) {
  const int lo = s + 1 + j * lay->kd;
  *first = j == 0 ? s : lo - lay->kd;
  *last = lo + lay->kd - 1 < lay->n - 1 ? lo + lay->kd - 1 : lay->n - 1;
}

/** Slot of reflector (s, j): its index in tau; its vector starts at v + slot * kd'. */
static inline int64_t tsr_hb2st_slot(const tsr_hb2st_layout_t *lay, int s, int j) {
  return (int64_t)s * lay->steps + j;
}

/** Copies the lower band `ab` (n x n, bandwidth kd, leading dimension ldab >= kd + 1) into the
 *  working band `w` (leading dimension ldw >= layout.ldw): rows 0 .. kd' of each column from ab
 *  (entries below row n - 1 and the diagonal's imaginary parts as zeros), the rows below as
 *  zeros. Returns 0, or TESSERA_ERR_KERNEL for an invalid argument (nothing written). */
int tsr_hb2st_load(tessera_dtype_t dtype, int n, int kd, const void *ab, int ldab, void *w,
                   int ldw);

/** Runs step `step` of sweep `sweep` on the working band `w` (see the file's comment for what
 *  it reads and writes and what it must wait for): writes reflector slot (sweep, step) of v and
 *  tau (arrays of the layout's nv and ntau elements) and, for step >= 1, reads slot
 *  (sweep, step - 1). `work` is scratch of kd' elements of the dtype. Returns 0, or
 *  TESSERA_ERR_KERNEL for an invalid argument (sweep outside 0 .. n - 2, step outside
 *  0 .. tsr_hb2st_steps - 1, ldw below the layout's, a NULL pointer; nothing written). */
int tsr_hb2st_step(tessera_dtype_t dtype, int n, int kd, void *w, int ldw, int sweep, int step,
                   void *v, void *tau, void *work);

/** Reads T from the working band `w` after every step: d[i] = Re A(i, i) (n entries) and
 *  e[i] = Re A(i + 1, i) (n - 1 entries; zeros when kd = 0). d and e are doubles for every
 *  dtype. Returns 0, or TESSERA_ERR_KERNEL for an invalid argument. */
int tsr_hb2st_extract(tessera_dtype_t dtype, int n, int kd, const void *w, int ldw, double *d,
                      double *e);

/** The whole reduction, sequentially: the band `ab` (lower band storage, see tsr_hb2st_load;
 *  not modified) becomes T (d: n doubles, e: n - 1 doubles) and the reflectors of Q2 (v, tau:
 *  the layout's nv and ntau elements of the dtype; NULL allowed when those are 0), A = Q2 T Q2ᴴ.
 *  `work`: NULL (allocated here) or tsr_hb2st_work_size elements of the dtype. Returns 0,
 *  TESSERA_ERR_KERNEL for an invalid argument (nothing written), or TESSERA_ERR_NOMEM. A NaN
 *  in the band spreads NaNs into d and e (and the reflectors), never a failure or a hang. */
int tsr_hb2st(tessera_dtype_t dtype, int n, int kd, const void *ab, int ldab, double *d, double *e,
              void *v, void *tau, void *work);

/** E = Q2 E for the n x m column-major E (leading dimension lde >= max(1, n)), Q2 the product of
 *  the reflectors v, tau of a reduction of order n and bandwidth kd (tsr_hb2st, or its steps):
 *  T's eigenvectors in E become the band's. Columns are independent: a block of E's columns gets
 *  what the whole would in those columns (to rounding: BLAS may round otherwise for another m),
 *  so tasks may split E by columns. The reflectors of nb = min(kd', 32) consecutive sweeps at one
 *  step (rows shifted by one) are applied as one block reflector, LAPACK's larft and larfb on a
 *  (kd' + nb - 1) x nb V (hb2st_apply.c), groups of sweeps from the last, steps from the first.
 *  Allocates (kd' + 2 nb + m) nb elements. Returns 0, TESSERA_ERR_KERNEL for an invalid argument
 *  (E untouched) or TESSERA_ERR_NOMEM. */
int tsr_hb2st_apply(tessera_dtype_t dtype, int n, int kd, const void *v, const void *tau, int m,
                    void *E, int lde);

#endif
