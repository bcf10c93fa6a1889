/* What the device kernels of the CUDA tile kernels (cholesky.cu, lu.cu, copy.cu, qr.cu) share:
 * the threads of a one-block launch and the complex element types, each internal to the file
 * that includes it. */
#ifndef TSR_KERNELS_CUDA_DEVICE_CUH
#define TSR_KERNELS_CUDA_DEVICE_CUH

namespace {

/* Threads of the scans and of the kernels that give a column a thread block. */
constexpr int kScanThreads = 256;

/* The elements of c64 and c128, moved and conjugated as pairs of reals. */
struct c64_t {
  float re, im;
};
struct c128_t {
  double re, im;
};

} // namespace

#endif
