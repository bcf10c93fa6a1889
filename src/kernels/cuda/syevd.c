/* The one-stage Hermitian eigensolver on a GPU (eig.h: syevd): cuSOLVER's Xsyevd on the whole
 * matrix (its heevd for complex dtypes), or Xsyevdx (range I) for eigenvalues il .. iu alone, its
 * device workspace the task's `work` buffer, its host workspace the worker's pinned one, the info
 * written on the device into the task's info buffer. Enqueued on the task's stream; nothing waits
 * (Xsyevdx returns its count of eigenvalues to the host, which is iu - il + 1 by index). */
#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/eig.h"

int tsr_cuda_syevd(const tessera_exec_t *ex, void *args) {
  const tsr_syevd_args_t *a = args;
  const int u = tsr_letter(a->uplo, "UL");
  if (!tsr_dtype_valid(a->dtype) || u < 0 || (a->jobz != 'V' && a->jobz != 'N') || a->n < 0 ||
      (a->il != 0 && (a->il < 1 || a->iu < a->il || a->iu > a->n)) || ex->ndata < 4)
    return TESSERA_ERR_KERNEL;
  const int lda = tsr_operand_ld(ex, 0, a->n, a->n);
  cusolverDnHandle_t h = tsr_cuda_solver(ex);
  const tessera_cuda_scratch_t *s = tsr_cuda_scratch(ex);
  if (lda < 0 || !h || !s) return TESSERA_ERR_KERNEL;
  cudaStream_t stream = ex->stream;
  int *info = ex->ptr[2];
  if (a->n == 0) return tsr_cuda_enqueued(cudaMemsetAsync(info, 0, sizeof *info, stream));
  const cudaDataType type = tsr_cuda_type(a->dtype);
  const cudaDataType real = tsr_dtype_single(a->dtype) ? CUDA_R_32F : CUDA_R_64F;
  const cusolverEigMode_t jobz =
      a->jobz == 'V' ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const cublasFillMode_t uplo = tsr_cuda_fill(u);
  cusolverDnParams_t params = NULL;
  if (cusolverDnCreateParams(&params) != CUSOLVER_STATUS_SUCCESS) return TESSERA_ERR_KERNEL;
  size_t dev_bytes = 0, host_bytes = 0;
  /* the bounds of a range by value, unused by index (zero bytes: 0 in either precision) */
  const bool range = a->il > 0;
  double bound[2] = {0, 0};
  int64_t found = 0;
  void *A = ex->ptr[0], *W = ex->ptr[1];
  int rc =
      (range ? cusolverDnXsyevdx_bufferSize(h, params, jobz, CUSOLVER_EIG_RANGE_I, uplo, a->n, type,
                                            A, lda, &bound[0], &bound[1], a->il, a->iu, &found,
                                            real, W, type, &dev_bytes, &host_bytes)
             : cusolverDnXsyevd_bufferSize(h, params, jobz, uplo, a->n, type, A, lda, real, W, type,
                                           &dev_bytes, &host_bytes)) == CUSOLVER_STATUS_SUCCESS
          ? 0
          : TESSERA_ERR_KERNEL;
  if (!rc && (host_bytes > s->host_workspace_bytes || (host_bytes > 0 && !s->host_workspace)))
    rc = TESSERA_ERR_KERNEL;
  /* the workspace the front sized (tsr_syevd_work_bytes), else one from CUDA's stream-ordered
   * allocator, freed in order after the call */
  void *work = ex->ptr[3];
  if (!rc && dev_bytes > a->work_bytes)
    rc = tsr_cuda_enqueued(cudaMallocAsync(&work, dev_bytes, stream));
  if (!rc && (range ? cusolverDnXsyevdx(h, params, jobz, CUSOLVER_EIG_RANGE_I, uplo, a->n, type, A,
                                        lda, &bound[0], &bound[1], a->il, a->iu, &found, real, W,
                                        type, work, dev_bytes, s->host_workspace, host_bytes, info)
                    : cusolverDnXsyevd(h, params, jobz, uplo, a->n, type, A, lda, real, W, type,
                                       work, dev_bytes, s->host_workspace, host_bytes, info)) !=
                 CUSOLVER_STATUS_SUCCESS)
    rc = TESSERA_ERR_KERNEL;
  if (work != ex->ptr[3]) {
    const int f = tsr_cuda_enqueued(cudaFreeAsync(work, stream));
    if (!rc) rc = f;
  }
  cusolverDnDestroyParams(params);
  return rc;
}
