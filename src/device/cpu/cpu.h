/* The CPU backend's one service beyond its table (cpu.c): the math library's thread count. */
#ifndef TSR_DEVICE_CPU_H
#define TSR_DEVICE_CPU_H

/** Sets the threads of OpenBLAS (process-wide; contexts keep it at one while open, each worker
 *  calling it single-threaded) to `threads` when positive, and returns the count it had: for a
 *  host kernel run on a caller's thread while its context's workers are idle (LAPACK's
 *  eigensolvers, whose BLAS calls then use the cores), which restores the count after. Without
 *  OpenBLAS's thread control, does nothing and returns 1. Thread safe. */
int tsr_cpu_blas_threads(int threads);

#endif
