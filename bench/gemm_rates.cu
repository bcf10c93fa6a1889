/* cuBLAS's gemm rates on one GPU by operand storage and compute type: f64; f32 operands in f32's
 * own arithmetic and with each fast compute type (TF32, BF16, FP16 inputs, f32 accumulation);
 * BF16 and FP16 operands with f32 accumulation. C = A Bᵀ, n x n x n, best of 3 after a warm-up,
 * CUDA events. What a factor held in f32 can reach on tensor cores, against one held in BF16 or
 * FP16.
 *
 *   nvcc -O2 -arch=sm_90 bench/gemm_rates.cu -lcublas -o /tmp/gemm_rates && /tmp/gemm_rates
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cstdio>
static float run(cublasHandle_t h, int n, cudaDataType ta, cudaDataType tc, cublasComputeType_t ct,
                 void *A, void *B, void *C) {
  float one = 1, zero = 0;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cublasStatus_t st = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &one, A, ta, n, B, ta, n,
                                   &zero, C, tc, n, ct, CUBLAS_GEMM_DEFAULT);
  cudaDeviceSynchronize();
  float best = 1e9;
  for (int r = 0; r < 3; r++) {
    cudaEventRecord(e0);
    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &one, A, ta, n, B, ta, n, &zero, C, tc, n,
                 ct, CUBLAS_GEMM_DEFAULT);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    if (ms < best) best = ms;
  }
  return st == CUBLAS_STATUS_SUCCESS ? 2.0 * n * n * (double)n / (best * 1e-3) * 1e-12 : -1;
}
int main() {
  cublasHandle_t h;
  cublasCreate(&h);
  size_t n = 16384;
  void *A, *B, *C;
  cudaMalloc(&A, n * n * 4);
  cudaMalloc(&B, n * n * 4);
  cudaMalloc(&C, n * n * 4);
  cudaMemset(A, 0, n * n * 4);
  cudaMemset(B, 0, n * n * 4);
  for (int s = 4096; s <= 16384; s *= 2) {
    printf("n %d: f64 %.0f | f32: own %.0f tf32 %.0f fast16bf %.0f fast16f %.0f | bf16 in f32 out "
           "%.0f | f16 in f32 out %.0f | bf16 in out %.0f TF/s\n",
           s, run(h, s, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, A, B, C),
           run(h, s, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, A, B, C),
           run(h, s, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, A, B, C),
           run(h, s, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_16BF, A, B, C),
           run(h, s, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_16F, A, B, C),
           run(h, s, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, A, B, C),
           run(h, s, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, A, B, C),
           run(h, s, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, A, B, C));
  }
  return 0;
}
