/* tessera — dense linear algebra on a task runtime across CPU cores and GPUs.
 *
 * One include for the whole public API:
 *   types.h    status codes, dtypes, BLAS flags
 *   context.h  creating and ending a context; configuration and environment
 *   device.h   devices, memory nodes, scopes
 *   data.h     data handles (user memory registered in place, or tessera's)
 *   task.h     kernels and task insertion with Read / Write / ReadWrite access
 *   matrix.h   tiled matrix descriptors
 *   linalg.h   Cholesky factor / solve, trsm, syrk / herk, gemm (LAPACK-style and tile-level)
 *   trace.h    counters and Chrome traces
 */
#ifndef TESSERA_TESSERA_H
#define TESSERA_TESSERA_H

#include "tessera/types.h"
#include "tessera/context.h"
#include "tessera/device.h"
#include "tessera/data.h"
#include "tessera/task.h"
#include "tessera/matrix.h"
#include "tessera/linalg.h"
#include "tessera/comm.h"
#include "tessera/distribution.h"
#include "tessera/trace.h"

#define TESSERA_VERSION_MAJOR 0
#define TESSERA_VERSION_MINOR 1
#define TESSERA_VERSION_PATCH 0

#endif
