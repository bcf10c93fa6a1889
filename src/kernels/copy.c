/* The kernel tables of the copies and conversions (copy.h): for each kernel, its
 * implementations per device kind, its operation count (none: they move data) and its size key
 * for the cost model. */
#include "kernels/copy.h"
#include "kernels/table.h"

/* Every kernel of the family counts no operations. */
static double no_flops(const void *args) {
  (void)args;
  return 0.0;
}
#define lacpy_flops no_flops
#define convert_flops no_flops
#define absum_flops no_flops
#define transpose_flops no_flops
#define diagonal_flops no_flops
#define triangle_flops no_flops
#define identity_flops no_flops
#define hefill_flops no_flops

static uint64_t lacpy_key(const void *args) {
  const tsr_lacpy_args_t *a = args;
  return tsr_size_key(a->dtype, 0, a->m, a->n, 0);
}

static uint64_t convert_key(const void *args) {
  const tsr_convert_args_t *a = args;
  return tsr_size_key(a->to, tsr_dtype_single(a->from), a->m, a->n, 0);
}

static uint64_t absum_key(const void *args) {
  const tsr_absum_args_t *a = args;
  return tsr_size_key(a->dtype, a->part != 0, a->m, a->n, 0);
}

static uint64_t transpose_key(const void *args) {
  const tsr_transpose_args_t *a = args;
  return tsr_size_key(a->dtype, 0, a->m, a->n, 0);
}

static uint64_t diagonal_key(const void *args) {
  const tsr_diagonal_args_t *a = args;
  return tsr_size_key(a->dtype, 0, a->n, 1, 0);
}

static uint64_t triangle_key(const void *args) {
  const tsr_triangle_args_t *a = args;
  return tsr_size_key(a->dtype, a->uplo == 'U', a->k, a->k, 0);
}

static uint64_t identity_key(const void *args) {
  const tsr_identity_args_t *a = args;
  return tsr_size_key(a->dtype, 0, a->m, a->n, 0);
}

static uint64_t hefill_key(const void *args) {
  const tsr_hefill_args_t *a = args;
  return tsr_size_key(a->dtype, 0, a->n, a->n, 0);
}

TSR_KERNEL_TABLE(lacpy, lacpy);
TSR_KERNEL_TABLE(convert, convert);
TSR_KERNEL_TABLE(absum, absum);
TSR_KERNEL_TABLE(transpose, transpose);
TSR_KERNEL_TABLE(diagonal, diagonal);
TSR_KERNEL_TABLE(triangle, triangle_copy);
TSR_KERNEL_TABLE(identity, identity);
TSR_KERNEL_TABLE(hefill, hefill);
