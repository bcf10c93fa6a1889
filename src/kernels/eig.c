/* The eigensolver's kernel tables (eig.h): for each kernel, its implementations per device kind
 * (host-only kernels: the CPU's alone), its operation count and its size key for the cost
 * model. */
#include "kernels/eig.h"
#include "kernels/table.h"

/* One pass over the columns' triangle entries. */
static double eig_prepare_flops(const void *args) {
  const tsr_eig_prepare_args_t *a = args;
  return (double)(a->j1 - a->j0) * (double)(a->n - (a->j0 + a->j1) / 2);
}

static uint64_t eig_prepare_key(const void *args) {
  const tsr_eig_prepare_args_t *a = args;
  return tsr_size_key(a->dtype, 0, a->n, a->j1 - a->j0, 0);
}

/* Bulge chasing: about 6 n² kd real operations (a two-sided update of a kd x kd block per kd
 * entries annihilated), complex four times as many. */
static double hb2st_flops(const void *args) {
  const tsr_hb2st_args_t *a = args;
  const double n = a->n, kd = a->kd;
  return tsr_op_count(a->dtype, 3 * n * n * kd, 3 * n * n * kd);
}

static uint64_t hb2st_key(const void *args) {
  const tsr_hb2st_args_t *a = args;
  return tsr_size_key(a->dtype, 0, a->n, a->kd, 0);
}

/* A step: the bulge's two rank-one updates of kd x kd (j >= 1) and the diagonal block's
 * two-sided update (hemv + her2), about 6 kd² multiplications and as many additions. */
static double hb2st_steps_flops(const void *args) {
  const tsr_hb2st_steps_args_t *a = args;
  const double kd = a->kd < a->n - 1 ? a->kd : a->n - 1, steps = a->count;
  return kd > 0 ? tsr_op_count(a->dtype, 6 * kd * kd * steps, 6 * kd * kd * steps) : 0.0;
}

static uint64_t hb2st_steps_key(const void *args) {
  const tsr_hb2st_steps_args_t *a = args;
  return tsr_size_key(a->dtype, 0, a->kd < a->n - 1 ? a->kd : a->n - 1, a->count, 0);
}

/* n² / kd reflectors of kd entries, each applied to m columns. */
static double hb2st_apply_flops(const void *args) {
  const tsr_hb2st_apply_args_t *a = args;
  const double n = a->n, m = a->m;
  return tsr_op_count(a->dtype, 2 * n * n * m, 2 * n * n * m);
}

static uint64_t hb2st_apply_key(const void *args) {
  const tsr_hb2st_apply_args_t *a = args;
  return tsr_size_key(a->dtype, 0, a->n, a->m, a->kd);
}

/* Divide and conquer: about 4/3 n³ for the merges' products with vectors, O(n²) without. */
static double stedc_flops(const void *args) {
  const tsr_stedc_args_t *a = args;
  const double n = a->n;
  return a->vectors ? 4 * n * n * n / 3 : 30 * n * n;
}

static uint64_t stedc_key(const void *args) {
  const tsr_stedc_args_t *a = args;
  return tsr_size_key(TESSERA_F64, a->vectors != 0, a->n, 0, 0);
}

static double laed_rows_flops(const void *args) {
  return (double)((const tsr_laed_rows_args_t *)args)->count;
}

static uint64_t laed_rows_key(const void *args) {
  return tsr_size_key(TESSERA_F64, 0, ((const tsr_laed_rows_args_t *)args)->count, 0, 0);
}

/* dlaed4: a few passes over the k poles per root. */
static double laed_roots_flops(const void *args) {
  const tsr_laed_roots_args_t *a = args;
  return 40.0 * (double)a->plan->k * (double)(a->j1 - a->j0);
}

static uint64_t laed_roots_key(const void *args) {
  const tsr_laed_roots_args_t *a = args;
  return tsr_size_key(TESSERA_F64, 0, a->plan->k, a->j1 - a->j0, 0);
}

/* tessera's iteration: about six passes over the k poles per root, a division and four more
 * operations per pole. */
static double laed_secular_flops(const void *args) {
  const tsr_laed_plan_t *p = &((const tsr_laed_secular_args_t *)args)->plan;
  return 30.0 * (double)p->k * (double)p->k;
}

static uint64_t laed_secular_key(const void *args) {
  return tsr_size_key(TESSERA_F64, 0, ((const tsr_laed_secular_args_t *)args)->plan.k, 0, 0);
}

/* Löwner's products (phase 0) or a column of S and its two sums (phase 1): a few flops per pole
 * for each index. */
static double laed_update_flops(const void *args) {
  const tsr_laed_update_args_t *a = args;
  return (a->phase ? 6.0 : 3.0) * (double)a->plan->k * (double)(a->i1 - a->i0);
}

static uint64_t laed_update_key(const void *args) {
  const tsr_laed_update_args_t *a = args;
  return tsr_size_key(TESSERA_F64, a->phase, a->plan->k, a->i1 - a->i0, 0);
}

/* Both of laed_update's phases over all k indices. */
static double laed_values_flops(const void *args) {
  const tsr_laed_plan_t *p = &((const tsr_laed_values_args_t *)args)->plan;
  return 9.0 * (double)p->k * (double)p->k;
}

static uint64_t laed_values_key(const void *args) {
  return tsr_size_key(TESSERA_F64, 0, ((const tsr_laed_values_args_t *)args)->plan.k, 0, 0);
}

/* The product of the task's rows of the regrouped vectors by the secular ones, by halves. */
static double laed_merge_flops(const void *args) {
  const tsr_laed_merge_args_t *a = args;
  return tsr_laed_product_flops(&a->plan, a->r0, a->r1);
}

static uint64_t laed_merge_key(const void *args) {
  const tsr_laed_merge_args_t *a = args;
  return tsr_size_key(TESSERA_F64, 0, a->plan.m, a->plan.k, a->r1 - a->r0);
}

/* LAPACK Working Note 41's syevd: the tridiagonal reduction (4/3 n³ real flops), with vectors
 * the back-transformation (2 n³) and about as much in the divide and conquer's products; complex
 * four times as many real operations. */
static double syevd_flops(const void *args) {
  const tsr_syevd_args_t *a = args;
  const double n = a->n, real = (a->jobz == 'V' ? 4.0 / 3 + 4.0 : 4.0 / 3) * n * n * n;
  return tsr_dtype_complex(a->dtype) ? 4 * real : real;
}

static uint64_t syevd_key(const void *args) {
  const tsr_syevd_args_t *a = args;
  return tsr_size_key(a->dtype, a->jobz == 'V', a->n, 0, 0);
}

/* gesdd's: the bidiagonal reduction (4 m n² − 4/3 n³ for m >= n), with vectors about as much
 * again for U and VT and the divide and conquer's products; complex four times as many. */
static double gesdd_flops(const void *args) {
  const tsr_gesdd_args_t *a = args;
  const double m = a->m > a->n ? a->m : a->n, n = a->m > a->n ? a->n : a->m;
  const double real = (a->jobz == 'S' ? 2.0 : 1.0) * (4 * m * n * n - 4.0 / 3 * n * n * n);
  return tsr_dtype_complex(a->dtype) ? 4 * real : real;
}

static uint64_t gesdd_key(const void *args) {
  const tsr_gesdd_args_t *a = args;
  return tsr_size_key(a->dtype, a->jobz == 'S', a->m, a->n, 0);
}

/* gesdd's with vectors and the two products U_p = W Vᴴ (2 m n²) and H = V Σ Vᴴ (2 n³). */
static double polar_gesdd_flops(const void *args) {
  const tsr_polar_gesdd_args_t *a = args;
  const double m = a->m, n = a->n;
  const double real =
      2 * (4 * m * n * n - 4.0 / 3 * n * n * n) + 2 * m * n * n + (a->want_h ? 2 * n * n * n : 0);
  return tsr_dtype_complex(a->dtype) ? 4 * real : real;
}

static uint64_t polar_gesdd_key(const void *args) {
  const tsr_polar_gesdd_args_t *a = args;
  return tsr_size_key(a->dtype, a->want_h, a->m, a->n, 0);
}

size_t tsr_syevd_work_bytes(tessera_dtype_t dtype, int64_t n) {
  const size_t un = (size_t)n, bytes = (4 * un * un + 256 * un) * tessera_dtype_size(dtype);
  return (bytes + ((size_t)1 << 16)) / 256 * 256 + 256;
}

TSR_HOST_KERNEL_TABLE(eig_prepare);
TSR_KERNEL_TABLE(hb2st, hb2st);
TSR_HOST_KERNEL_TABLE(hb2st_steps);
TSR_KERNEL_TABLE(hb2st_apply, hb2st_apply);
TSR_HOST_KERNEL_TABLE(stedc);
TSR_KERNEL_TABLE(laed_rows, laed_rows);
TSR_HOST_KERNEL_TABLE(laed_roots);
TSR_KERNEL_TABLE(laed_secular, laed_secular);
TSR_HOST_KERNEL_TABLE(laed_update);
TSR_KERNEL_TABLE(laed_values, laed_values);
TSR_KERNEL_TABLE(laed_merge, laed_merge);
TSR_KERNEL_TABLE(syevd, syevd);
TSR_HOST_KERNEL_TABLE(gesdd);
TSR_HOST_KERNEL_TABLE(polar_gesdd);
