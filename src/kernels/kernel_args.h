/* Argument checks shared by the tile kernels of every device kind (cpu/, cuda/): flag letters,
 * operand shapes and LAPACK-style pivot infos (dtypes: kernels/dtype.h). Header only, no library
 * includes.
 */
#ifndef TSR_KERNEL_ARGS_H
#define TSR_KERNEL_ARGS_H

#include <limits.h>

#include "kernels/dtype.h"
#include "tessera/task.h"

/** Position of `c` (either case) in `letters` (upper case), or -1. */
static inline int tsr_letter(char c, const char *letters) {
  for (int i = 0; letters[i]; i++)
    if (c == letters[i] || c == letters[i] - 'A' + 'a') return i;
  return -1;
}

/** Position of the trans letter `c` in "NTC": 'C' on a real dtype is 'T'. -1 if invalid. */
static inline int tsr_op_index(char c, tessera_dtype_t dt) {
  int t = tsr_letter(c, "NTC");
  return (t == 2 && !tsr_dtype_complex(dt)) ? 1 : t;
}

/** Checks that buffer `i` of `ex` can hold a rows x cols block and returns the leading
 *  dimension to pass to a library (a leading dimension of 0, for an empty block, becomes 1).
 *  Returns -1 when the buffer is missing, a dimension is negative, or the leading dimension is
 *  below `rows` or beyond INT_MAX. */
static inline int tsr_operand_ld(const tessera_exec_t *ex, int i, int rows, int cols) {
  if (i >= ex->ndata || rows < 0 || cols < 0) return -1;
  size_t ld = ex->ld[i];
  if (ld < (size_t)rows || ld > INT_MAX) return -1;
  if (!ex->ptr[i] && rows > 0 && cols > 0) return -1;
  return ld > 0 ? (int)ld : 1;
}

/** Buffer i of ex from row `row` (elements of es bytes), as buffer `slot` of e: the sub-block the
 *  device-independent kernels hand the kind's own kernels. */
static inline void tsr_exec_rows(tessera_exec_t *e, int slot, const tessera_exec_t *ex, int i,
                                 int row, size_t es) {
  e->ptr[slot] = (char *)ex->ptr[i] + (size_t)row * es;
  e->ld[slot] = ex->ld[i];
}

/** LAPACK info for the 0-based pivot `j` of a tile whose first row is global row `offset`. */
static inline int tsr_pivot_info(int64_t offset, int64_t j) {
  int64_t info = offset + j + 1;
  return info > INT_MAX ? INT_MAX : (int)info;
}

#endif
