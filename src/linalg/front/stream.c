/* Calls on one matrix on one device ordered on a caller's queue (tessera_queue_posv,
 * tessera_queue_gesv, tessera_queue_syevd, tessera_queue_transpose): the arguments checked as
 * LAPACK numbers them, then the whole-matrix kernel (kernels.h: posv, gesv, syevd, transpose) run
 * on the calling thread, its work enqueued on the caller's queue (runtime/inline.c). No tile, task
 * or worker: the device runs the calls in the queue's order while the caller goes on. */
#include <limits.h>

#include "kernels/eig.h"
#include "kernels/kernels.h"
#include "runtime/context.h"
#include "runtime/error.h"
#include "tessera/linalg.h"

/* What both calls take, with their argument numbers: the node and its queue (2, 3), the dtype,
 * the order n and nrhs (arguments d, d + 1, d + 2), A and its leading dimension (d + 3, d + 4),
 * B and its (d + 5, d + 6), B having `brows` rows, and the info (d + 7). Returns 0, or -argno
 * with a message. */
typedef struct {
  int node;
  void *queue;
  tessera_dtype_t dtype;
  int64_t n, nrhs;
  const void *a;
  int64_t lda;
  const void *b;
  int64_t ldb, brows;
  const int *info;
} call_t;

/* The node (argument 2) and its queue (3): 0, or -argno with a message. */
static int check_node(tessera_context_t *ctx, const char *f, int node, const void *queue) {
  if (node < 0 || node >= ctx->nnodes)
    return tsr_error(ctx, -2, "%s: memory node %d does not exist (the context has %d)", f, node,
                     ctx->nnodes);
  const bool device = node != TESSERA_HOST_NODE && ctx->nodes[node].be->async;
  if (device && !queue)
    return tsr_error(ctx, -3,
                     "%s: memory node %d is a device's, and its work needs one of that "
                     "device's queues, not NULL",
                     f, node);
  if (!device && queue)
    return tsr_error(ctx, -3,
                     "%s: memory node %d runs its calls to completion and takes no "
                     "queue: pass NULL",
                     f, node);
  return 0;
}

/* The argument numbers of a call's dtype, n, nrhs, A, lda, B, ldb and info. */
typedef struct {
  int dtype, n, nrhs, a, lda, b, ldb, info;
} argnos_t;

/* The numbers of a call whose dtype is argument d and the rest follow it in that order. */
static argnos_t argnos_from(int d) {
  return (argnos_t){d, d + 1, d + 2, d + 3, d + 4, d + 5, d + 6, d + 7};
}

static int check(tessera_context_t *ctx, const char *f, const call_t *c, argnos_t no) {
  const int rc = check_node(ctx, f, c->node, c->queue);
  if (rc) return rc;
  if (!tessera_dtype_size(c->dtype))
    return tsr_error(ctx, -no.dtype, "%s: argument %d = %d is not a dtype", f, no.dtype,
                     (int)c->dtype);
  const int64_t dims[2] = {c->n, c->nrhs};
  const int dim_no[2] = {no.n, no.nrhs};
  for (int i = 0; i < 2; i++)
    if (dims[i] < 0 || dims[i] > INT_MAX)
      return tsr_error(ctx, -dim_no[i], "%s: argument %d = %lld is out of range [0, %d]", f,
                       dim_no[i], (long long)dims[i], INT_MAX);
  const struct {
    const void *p;
    int64_t ld, rows;
    bool used;
    int argno, ldno;
  } arr[2] = {{c->a, c->lda, c->n, c->n > 0, no.a, no.lda},
              {c->b, c->ldb, c->brows, c->n > 0 && c->nrhs > 0, no.b, no.ldb}};
  for (int i = 0; i < 2; i++) {
    if (arr[i].used && !arr[i].p)
      return tsr_error(ctx, -arr[i].argno, "%s: argument %d is NULL", f, arr[i].argno);
    if (arr[i].ld < (arr[i].rows > 1 ? arr[i].rows : 1) || arr[i].ld > INT_MAX)
      return tsr_error(ctx, -arr[i].ldno,
                       "%s: argument %d (leading dimension) = %lld is not in [max(1, %lld), %d]", f,
                       arr[i].ldno, (long long)arr[i].ld, (long long)arr[i].rows, INT_MAX);
  }
  if (!c->info) return tsr_error(ctx, -no.info, "%s: argument %d (info) is NULL", f, no.info);
  return 0;
}

/* Runs `k` on the call's buffers {A, B, info[, logdet]}. */
static int run(tessera_context_t *ctx, const call_t *c, const tessera_kernel_t *k, void *args,
               double *logdet) {
  void *ptr[4] = {(void *)c->a, (void *)c->b, (void *)c->info, logdet};
  const size_t ld[4] = {(size_t)c->lda, (size_t)c->ldb, 1, 1};
  return tsr_run_inline(ctx, c->node, c->queue, k, args, logdet ? 4 : 3, ptr, ld);
}

/* tessera_queue_posv (batch < 0) and its batch, with each one's argument numbers. */
static int posv(tessera_context_t *ctx, const char *f, int node, void *queue, tessera_uplo_t uplo,
                tessera_side_t side, tessera_dtype_t dtype, int64_t n, int64_t nrhs, int64_t batch,
                void *a, int64_t lda, int64_t stride_a, void *b, int64_t ldb, int64_t stride_b,
                int *info, double *logdet) {
  const bool right = side == TESSERA_RIGHT, one = batch < 0;
  const call_t c = {node, queue, dtype, n, nrhs, a, lda, b, ldb, right ? nrhs : n, info};
  if (uplo != TESSERA_LOWER && uplo != TESSERA_UPPER)
    return tsr_error(ctx, -4, "%s: argument 4 (uplo) is not TESSERA_LOWER or TESSERA_UPPER", f);
  if (side != TESSERA_LEFT && !right)
    return tsr_error(ctx, -5, "%s: argument 5 (side) is not TESSERA_LEFT or TESSERA_RIGHT", f);
  const argnos_t batch_no = {6, 7, 8, 10, 11, 13, 14, 16};
  int rc = check(ctx, f, &c, one ? argnos_from(6) : batch_no);
  if (rc) return rc;
  if (!one) {
    const int64_t bcols = right ? n : nrhs;
    if (batch > INT_MAX)
      return tsr_error(ctx, -9, "%s: argument 9 (batch) = %lld is out of range [0, %d]", f,
                       (long long)batch, INT_MAX);
    if (batch > 1 && stride_a < lda * n)
      return tsr_error(ctx, -12, "%s: argument 12 (stride_a) = %lld is below lda * n = %lld", f,
                       (long long)stride_a, (long long)(lda * n));
    if (batch > 1 && nrhs > 0 && stride_b < ldb * bcols)
      return tsr_error(ctx, -15, "%s: argument 15 (stride_b) = %lld is below B's %lld elements", f,
                       (long long)stride_b, (long long)(ldb * bcols));
    if (batch == 0) return 0;
  }
  tsr_posv_args_t args = {.dtype = dtype,
                          .uplo = (char)uplo,
                          .side = (char)side,
                          .n = (int)n,
                          .nrhs = (int)nrhs,
                          .batch = one ? 1 : (int)batch,
                          .stride_a = stride_a,
                          .stride_b = stride_b};
  return run(ctx, &c, &tsr_kernel_posv, &args, logdet);
}

int tessera_queue_posv(tessera_context_t *ctx, int node, void *queue, tessera_uplo_t uplo,
                       tessera_side_t side, tessera_dtype_t dtype, int64_t n, int64_t nrhs, void *a,
                       int64_t lda, void *b, int64_t ldb, int *info, double *logdet) {
  if (!ctx) return -1;
  return posv(ctx, "queue_posv", node, queue, uplo, side, dtype, n, nrhs, -1, a, lda, 0, b, ldb, 0,
              info, logdet);
}

int tessera_queue_posv_batch(tessera_context_t *ctx, int node, void *queue, tessera_uplo_t uplo,
                             tessera_side_t side, tessera_dtype_t dtype, int64_t n, int64_t nrhs,
                             int64_t batch, void *a, int64_t lda, int64_t stride_a, void *b,
                             int64_t ldb, int64_t stride_b, int *info, double *logdet) {
  if (!ctx) return -1;
  if (batch < 0)
    return tsr_error(ctx, -9, "queue_posv_batch: argument 9 (batch) = %lld is negative",
                     (long long)batch);
  return posv(ctx, "queue_posv_batch", node, queue, uplo, side, dtype, n, nrhs, batch, a, lda,
              stride_a, b, ldb, stride_b, info, logdet);
}

int tessera_queue_gesv(tessera_context_t *ctx, int node, void *queue, tessera_op_t trans,
                       tessera_dtype_t dtype, int64_t n, int64_t nrhs, void *a, int64_t lda,
                       void *b, int64_t ldb, int *info) {
  static const char f[] = "queue_gesv";
  if (!ctx) return -1;
  const call_t c = {node, queue, dtype, n, nrhs, a, lda, b, ldb, n, info};
  if (trans != TESSERA_NOTRANS && trans != TESSERA_TRANS && trans != TESSERA_CONJTRANS)
    return tsr_error(ctx, -4,
                     "%s: argument 4 (trans) is not TESSERA_NOTRANS, TESSERA_TRANS or "
                     "TESSERA_CONJTRANS",
                     f);
  int rc = check(ctx, f, &c, argnos_from(5));
  if (rc) return rc;
  tsr_gesv_args_t args = {.dtype = dtype, .trans = (char)trans, .n = (int)n, .nrhs = (int)nrhs};
  return run(ctx, &c, &tsr_kernel_gesv, &args, NULL);
}

size_t tessera_queue_syevd_work_bytes(tessera_dtype_t dtype, int64_t n) {
  return tessera_dtype_size(dtype) && n >= 0 ? tsr_syevd_work_bytes(dtype, n) : 0;
}

int tessera_queue_syevd(tessera_context_t *ctx, int node, void *queue, tessera_job_t job,
                        tessera_uplo_t uplo, tessera_dtype_t dtype, int64_t n, void *a, int64_t lda,
                        void *w, void *work, size_t work_bytes, int *info) {
  static const char f[] = "queue_syevd";
  if (!ctx) return -1;
  int rc = check_node(ctx, f, node, queue);
  if (rc) return rc;
  if (job != TESSERA_VALUES && job != TESSERA_VECTORS)
    return tsr_error(ctx, -4, "%s: argument 4 (job) is not TESSERA_VALUES or TESSERA_VECTORS", f);
  if (uplo != TESSERA_LOWER && uplo != TESSERA_UPPER)
    return tsr_error(ctx, -5, "%s: argument 5 (uplo) is not TESSERA_LOWER or TESSERA_UPPER", f);
  if (!tessera_dtype_size(dtype))
    return tsr_error(ctx, -6, "%s: argument 6 = %d is not a dtype", f, (int)dtype);
  if (n < 0 || n > INT_MAX)
    return tsr_error(ctx, -7, "%s: argument 7 (n) = %lld is out of range [0, %d]", f, (long long)n,
                     INT_MAX);
  if (n > 0 && !a) return tsr_error(ctx, -8, "%s: argument 8 (a) is NULL", f);
  if (lda < (n > 1 ? n : 1) || lda > INT_MAX)
    return tsr_error(ctx, -9, "%s: argument 9 (lda) = %lld is not in [max(1, %lld), %d]", f,
                     (long long)lda, (long long)n, INT_MAX);
  if (n > 0 && !w) return tsr_error(ctx, -10, "%s: argument 10 (w) is NULL", f);
  if (work_bytes > 0 && !work)
    return tsr_error(ctx, -11, "%s: argument 11 (work) is NULL with %zu bytes of workspace", f,
                     work_bytes);
  if (!info) return tsr_error(ctx, -13, "%s: argument 13 (info) is NULL", f);
  tsr_syevd_args_t args = {.dtype = dtype,
                           .jobz = job == TESSERA_VECTORS ? 'V' : 'N',
                           .uplo = (char)uplo,
                           .n = (int)n,
                           .threads = 1,
                           .work_bytes = work ? work_bytes : 0};
  void *ptr[4] = {a, w, info, work};
  const size_t ld[4] = {(size_t)lda, (size_t)(n > 0 ? n : 1), 1, 1};
  return tsr_run_inline(ctx, node, queue, &tsr_kernel_syevd, &args, 4, ptr, ld);
}

int tessera_queue_transpose(tessera_context_t *ctx, int node, void *queue, tessera_dtype_t dtype,
                            int64_t m, int64_t n, const void *a, int64_t lda, void *b,
                            int64_t ldb) {
  static const char f[] = "queue_transpose";
  if (!ctx) return -1;
  int rc = check_node(ctx, f, node, queue);
  if (rc) return rc;
  if (!tessera_dtype_size(dtype))
    return tsr_error(ctx, -4, "%s: argument 4 = %d is not a dtype", f, (int)dtype);
  const int64_t dims[2] = {m, n};
  for (int i = 0; i < 2; i++)
    if (dims[i] < 0 || dims[i] > INT_MAX)
      return tsr_error(ctx, -(5 + i), "%s: argument %d = %lld is out of range [0, %d]", f, 5 + i,
                       (long long)dims[i], INT_MAX);
  const bool any = m > 0 && n > 0;
  if (any && !a) return tsr_error(ctx, -7, "%s: argument 7 (a) is NULL", f);
  if (lda < (m > 1 ? m : 1) || lda > INT_MAX)
    return tsr_error(ctx, -8, "%s: argument 8 (lda) = %lld is not in [max(1, %lld), %d]", f,
                     (long long)lda, (long long)m, INT_MAX);
  if (any && !b) return tsr_error(ctx, -9, "%s: argument 9 (b) is NULL", f);
  if (ldb < (n > 1 ? n : 1) || ldb > INT_MAX)
    return tsr_error(ctx, -10, "%s: argument 10 (ldb) = %lld is not in [max(1, %lld), %d]", f,
                     (long long)ldb, (long long)n, INT_MAX);
  if (!any) return 0;
  tsr_transpose_args_t args = {.dtype = dtype, .m = (int)m, .n = (int)n};
  void *ptr[2] = {(void *)a, b};
  const size_t ld[2] = {(size_t)lda, (size_t)ldb};
  return tsr_run_inline(ctx, node, queue, &tsr_kernel_transpose, &args, 2, ptr, ld);
}
