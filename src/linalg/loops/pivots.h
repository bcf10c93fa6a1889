/* The pivots of an LU factorization (getrf.c): their handles, checks and LAPACK's ipiv. */
#ifndef TSR_LINALG_PIVOTS_H
#define TSR_LINALG_PIVOTS_H

#include <stdbool.h>
#include "linalg/desc/desc.h"

/** The pivots of an LU factorization (getrf.c): one handle per step of nb columns, each holding
 *  the step's info (int) and its kb pivots relative to its first row r0 = k nb. For a
 *  distributed matrix the handles are distributed too: step k's belongs to the process owning
 *  the panel of column k nb, which factors it; the others receive it where they read it. */
typedef struct {
  tessera_context_t *ctx;
  tsr_flow_t *flow;           /* the matrix's */
  int64_t m, kmin, nb, steps; /* m: the rows the pivots may name */
  tessera_data_t **h;
  tessera_data_t **inv; /* a factorization's: step k's L_kk⁻¹ (workspace), or NULL */
  void *set;            /* the flow's record of the handles */
} tsr_pivots_t;

/** Pivots of step k: min(nb, kmin - k nb). */
static inline int64_t tsr_pivots_count(const tsr_pivots_t *P, int64_t k) {
  const int64_t left = P->kmin - k * P->nb;
  return left < P->nb ? left : P->nb;
}
/** Makes the pivot handles of a factorization of A's m rows and min(m, n) = kmin in steps of
 *  nb columns (each step's handle as kernels.h's TSR_PIV_INTS lays it out), and for a
 *  factorization (`factor`) the workspace handles of its L_kk⁻¹, distributed as A is: a
 *  collective call when A is distributed. */
int tsr_pivots_create(const tessera_matrix_t *A, int64_t kmin, int64_t nb, bool factor,
                      tsr_pivots_t *P);
void tsr_pivots_destroy(tsr_pivots_t *P);
/** -argno with a message unless every ipiv[i] (i < kmin) is in [i + 1, m], as getrf leaves it. */
int tsr_pivots_check(tessera_context_t *ctx, const char *f, int argno, const int *ipiv,
                     int64_t kmin, int64_t m);
/** Fills the handles (before any task uses them) from LAPACK's 1-based ipiv (each process
 *  the handles it owns). */
int tsr_pivots_import(tsr_pivots_t *P, const int *ipiv);
/** Waits for the handles and writes LAPACK's ipiv from them (distributed: the whole ipiv on
 *  every process, a collective call). Returns the factorization's info (the first step's
 *  reported column, made global), or a negative status: the same on every process. */
int tsr_pivots_export(tsr_pivots_t *P, int *ipiv);

#endif
