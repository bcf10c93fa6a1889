/* One merge of the tridiagonal divide and conquer on the host (kernels/cpu/laed.h,
 * tsr_laed_merge_host): the product by halves of rows (the plan's groups, as the merges run it)
 * against the whole product (the same plan with every column counted as reaching both halves),
 * on a merge of order --m: each half's eigenvalues random and ascending, a random coupling
 * vector of norm sqrt 2, the halves' eigenvectors random in their diagonal blocks. Best of --reps;
 * the largest difference between the two results beside the times. OpenBLAS's threads as set
 * (OPENBLAS_NUM_THREADS).
 *
 *   ./build/bench/bench_laed_merge [--m 4000] [--reps 3]
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/cpu/laed.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *x, const void *y) {
  const double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* The best of `reps` merges of plan p on copies of qb (m x m) into out. */
static double best(const tsr_laed_plan_t *p, const double *qb, double *out, double *work,
                   int reps) {
  const int64_t m = p->m;
  double t = INFINITY;
  for (int r = 0; r < reps; r++) {
    memcpy(out, qb, (size_t)(m * m) * sizeof *out);
    const double t0 = now();
    tsr_laed_merge_host(p, 0, m, out, m, work);
    t = fmin(t, now() - t0);
  }
  return t;
}

int main(int argc, char **argv) {
  int64_t m = 4000;
  int reps = 3;
  for (int i = 1; i + 1 < argc; i += 2)
    if (!strcmp(argv[i], "--m"))
      m = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--reps"))
      reps = atoi(argv[i + 1]);
  if (m < 4 || reps < 1) {
    fprintf(stderr, "usage: bench_laed_merge [--m M >= 4] [--reps R >= 1]\n");
    return 2;
  }
  const int64_t n1 = m / 2;
  srand(7);
  double *d = malloc((size_t)m * sizeof *d), *z = malloc((size_t)m * sizeof *z), nz = 0;
  double *qb = calloc((size_t)(m * m), sizeof *qb), *a = malloc((size_t)(m * m) * sizeof *a);
  double *b = malloc((size_t)(m * m) * sizeof *b), *work = malloc((size_t)tsr_laed_work(m) * 8);
  if (!d || !z || !qb || !a || !b || !work) {
    fprintf(stderr, "bench_laed_merge: out of memory for m = %lld\n", (long long)m);
    return 1;
  }
  for (int64_t i = 0; i < m; i++) {
    d[i] = (double)rand() / RAND_MAX, z[i] = (double)rand() / RAND_MAX - 0.5;
    nz += z[i] * z[i];
  }
  for (int64_t i = 0; i < m; i++) z[i] /= sqrt(nz / 2);
  qsort(d, (size_t)n1, sizeof *d, by_value);
  qsort(d + n1, (size_t)(m - n1), sizeof *d, by_value);
  for (int64_t j = 0; j < m; j++)
    for (int64_t i = j < n1 ? 0 : n1; i < (j < n1 ? n1 : m); i++)
      qb[i + j * m] = (double)rand() / RAND_MAX - 0.5;
  tsr_laed_plan_t *p = tsr_laed_deflate(m, n1, d, z, 0.5);
  if (!p || tsr_laed_roots(p, 0, p->k)) {
    fprintf(stderr, "bench_laed_merge: the plan failed\n");
    return 1;
  }
  tsr_laed_finish(p);
  tsr_laed_plan_t *whole = malloc((size_t)p->bytes);
  if (!whole) return 1;
  memcpy(whole, p, (size_t)p->bytes);
  whole->k1 = 0, whole->k2 = whole->k;
  const double th = best(p, qb, a, work, reps), tw = best(whole, qb, b, work, reps);
  double diff = 0;
  for (int64_t i = 0; i < m * m; i++) diff = fmax(diff, fabs(a[i] - b[i]));
  printf("m %lld, k %lld (%lld of the first half's rows, %lld of both, %lld of the second's)\n",
         (long long)m, (long long)p->k, (long long)p->k1, (long long)p->k2,
         (long long)(p->k - p->k1 - p->k2));
  printf("%-22s %10s\n%-22s %10.4f\n%-22s %10.4f\n%-22s %10.2f\nlargest difference %.2e\n", "merge",
         "seconds", "by halves", th, "whole product", tw, "ratio (whole / halves)", tw / th, diff);
  free(p), free(whole), free(d), free(z), free(qb), free(a), free(b), free(work);
  return 0;
}
