/* The Hermitian eigensolver's two-stage method as stage loops (eig_stages.c, stedc.c), which
 * front/eig.c drives: the band reduction and its back-transformation (Q1), the bulge chasing and
 * its back-transformation (Q2), the tridiagonal eigensolver on the calling thread (LAPACK's) or
 * as tasks (stedc.c, loops.h). Each inserts its tasks and waits for them; their device forms
 * are the policy's (policy.h: tsr_eig_gpu and what follows it). */
#ifndef TSR_LINALG_LOOPS_EIG_STAGES_H
#define TSR_LINALG_LOOPS_EIG_STAGES_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/cpu/hb2st.h"
#include "kernels/dtype.h"
#include "linalg/loops/loops.h"

/** The offset of entry (i, j) of a column-major host array of leading dimension ld. */
static inline size_t tsr_eig_at(int64_t i, int64_t j, int64_t ld) {
  return (size_t)i + (size_t)j * (size_t)ld;
}

/** w[i] = x in the dtype's real type (float for F32 and C64, else double). */
static inline void tsr_eig_put_real(tessera_dtype_t dt, void *w, int64_t i, double x) {
  if (tsr_dtype_single(dt))
    ((float *)w)[i] = (float)x;
  else
    ((double *)w)[i] = x;
}

/** The shape (*rows x *cols, contiguous, at least `count` elements of es bytes) of an array held
 *  as a matrix whose columns stay below 2^30 bytes, so that one transfer of a column counts its
 *  bytes in an int: Q2's reflectors, sent whole to the processes of E's panels. */
static inline void tsr_eig_array_shape(int64_t count, size_t es, size_t *rows, size_t *cols) {
  const size_t most = ((size_t)1 << 30) / es, c = count > 0 ? (size_t)count : 1;
  *rows = c < most ? c : most;
  *cols = (c + *rows - 1) / *rows;
}

/** The buffers of one call, freed together (tsr_eig_work_free), and where its stages run. */
typedef struct {
  bool gpu; /* the GPU forms: an accelerator holds the largest stage (tsr_eig_gpu) */
  tessera_data_t *vh, *tauh; /* Q2's reflectors on a device where a GPU chased (with defer,
                                arrays of tsr_eig_array_shape in node vnode's memory) */
  int vnode;
  tessera_scope_t scope; /* Q2's tasks: those accelerators, else the CPU workers */
  int workers;           /* the context's CPU workers (cpu_workers) */
  bool in_place;         /* h is A itself (GPU forms, vectors), not freed with the rest */
  bool pinned;           /* h pinned for the GPU forms' copies (tsr_host_pin) */
  bool defer;            /* the back-transformations run elsewhere (tsr_eig_solve's out) */
  bool values;           /* eigenvalues alone: with in_place, A's other triangle is LAPACK's to
                            keep, and the band reduction's diagonal tiles are copies */
  int64_t lo, cols;      /* with vectors, T's eigenvectors lo .. lo + cols - 1 carried back, into
                            h's first cols columns (all: 0 and n) */
  void *h;               /* n x n working copy (lower), then the eigenvectors */
  int64_t ldh;           /* its leading dimension */
  void *ab;              /* the band, (kd + 1) x n */
  double *d, *e;         /* T */
  double *z;             /* T's eigenvectors */
  void *v, *tau;         /* Q2's reflectors */
  tessera_matrix_t *E;   /* E = T's eigenvectors as one tile, from the merges to Q2, or NULL */
  tessera_data_t *eh;    /* with defer, E in a device's memory (node enode), or NULL */
  int enode;
} tsr_eig_work_t;

/** Frees what `b` holds (not h where in_place), unpinning and destroying as it says. */
void tsr_eig_work_free(tessera_context_t *ctx, tsr_eig_work_t *b);

/** Stage 1 on the working copy b->h, through a view of it (dropped afterwards: its contents are
 * not needed again): the band into b->ab (kd = nb subdiagonals: its diagonal blocks from A, the
 * blocks below them from the top of V's panels), the reflectors kept in H. With b->values and
 * b->in_place the view's diagonal tiles are workspace copies of A's: their products take whole
 * tiles (the upper triangle filled from the lower), which a full device pool would write home
 * into A's other triangle. */
int tsr_eig_reduce_to_band(tessera_context_t *ctx, tessera_dtype_t dt, int64_t n, int nb,
                           tsr_eig_work_t *b, tsr_he2hb_t *H);

/** E = Q1 E on rows nb .. n - 1 of b->h (E, n x m): the first stage's reflectors by unmqr
 * tasks. */
int tsr_eig_back_band(tessera_context_t *ctx, tessera_dtype_t dt, int64_t n, int64_t m, int nb,
                      tsr_eig_work_t *b, tsr_he2hb_t *H);

/** E = Q2 E (b->h, n x m) with the reflectors b->v, b->tau (lay): tasks on column panels of E
 * within b->scope where the context has CPU workers or the GPU forms run, else on this thread. */
int tsr_eig_back_tridiagonal(tessera_context_t *ctx, tessera_dtype_t dt, int64_t n, int64_t m,
                             int nb, tsr_eig_work_t *b, const tsr_hb2st_layout_t *lay, int workers);

/** The band b->ab to T (b->d, b->e) and Q2's reflectors (b->v, b->tau): on a GPU (gpu_chase)
 * in the GPU forms; else a pipeline of tasks of a few steps each on a working
 * band (loops/hb2st.c) where the context has CPU workers, else the sequential kernel on this
 * thread; the same result bit for bit on CPUs. */
int tsr_eig_to_tridiagonal(tessera_context_t *ctx, tessera_dtype_t dt, int64_t n, int nb,
                           tsr_eig_work_t *b, const tsr_hb2st_layout_t *lay, int workers);

/** T's eigenvalues (and vectors into z, leading dimension ldz) by LAPACK's stedc / sterf on this
 * thread: the workers are idle while it runs, and its BLAS calls take their cores. */
int tsr_eig_stedc_inline(tessera_context_t *ctx, tessera_job_t job, int64_t n, tsr_eig_work_t *b,
                         double *z, int64_t ldz, int workers);

#endif
