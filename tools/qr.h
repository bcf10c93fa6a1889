/* tessera CLI — the problem of `tessera geqrf|gels` and `tessera bench geqrf|gels` (tools/qr.c)
 * and its checks (tools/qr_check.c). Under --grid the arrays are process 0's (NULL elsewhere) and
 * every check that calls tessera is called by every process, its numbers computed on process 0. */
#ifndef TESSERA_TOOLS_QR_H
#define TESSERA_TOOLS_QR_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"

/** The problem of one run: A (m x n, lda m), B (max(m, n) x nrhs) for gels, their pristine
 *  copies, tau. */
typedef struct {
  tessera_dtype_t dtype;
  int64_t m, n, nrhs, ldb;
  void *a0, *a, *b0, *b, *tau;
} qr_problem_t;

/** Bytes of a rows x cols array of `dtype`, an empty one counted as 1 x 1. */
size_t qr_bytes(tessera_dtype_t dtype, int64_t rows, int64_t cols);

/** Floating-point operations of geqrf (LAPACK Working Note 41's leading terms) and of gels
 *  (geqrf, Qᴴ b, the triangular solve) on an m x n A with nrhs right-hand sides. */
double qr_flops(cli_cmd_t routine, tessera_dtype_t dtype, int64_t m, int64_t n, int64_t nrhs);

/** geqrf's residual ‖A − Q R‖_F / (‖A‖_F max(m, n) eps) and orthogonality ‖I − Qᴴ Q‖_F /
 *  (m eps), Q formed, from the factored p->a and tau. Returns 0 or a tessera status. */
int qr_check_geqrf(tessera_context_t *ctx, const qr_problem_t *p, double *res, double *orth);

/** bench geqrf's check by probe vectors (Q never formed): residual ‖A v − Q [R v; 0]‖₁ /
 *  (‖A‖₁ ‖v‖₁ max(m, n) eps), orthogonality ‖w − Qᴴ (Q w)‖₁ / (‖w‖₁ m eps); Q from p->a and
 *  p->tau, or from the descriptor A (the tile api's, p->a its export) when A is not NULL.
 *  Returns 0 or a tessera status. */
int qr_probe_geqrf(tessera_context_t *ctx, const qr_problem_t *p, tessera_matrix_t *A, double *res,
                   double *orth);

/** gels' LAPACK test ratio from the solution in p->b. Returns 0 or a tessera status. */
int qr_check_gels(tessera_context_t *ctx, const qr_problem_t *p, double *res);

/** Reports the failure `status` of `what` (the routine run on p): gels' info > 0, an exactly
 *  zero R(i, i), in a sentence of its own naming the command, else as cli_report. Returns
 *  CLI_FAILED. */
int qr_report(tessera_context_t *ctx, cli_progress_t *prog, cli_cmd_t routine,
              const qr_problem_t *p, const char *what, int status);

/** Whether a check's numbers are finite (orth: geqrf's orthogonality, 0 for gels): CLI_OK, or
 *  CLI_FAILED with a sentence saying where the NaN or infinity came from (the first column of A
 *  or b holding one, or an overflow). */
int qr_finite(cli_cmd_t routine, const qr_problem_t *p, double res, double orth);

/** gels, after a solve: warns when R is numerically singular, its smallest |R(i, i)| below
 *  max(m, n) eps times the largest (m >= n: R from the QR gels left in p->a; m < n: from the
 *  QR of a copy of Aᴴ, as gels factors). Returns 0 or a tessera status (of that QR). */
int qr_rank_warning(tessera_context_t *ctx, const qr_problem_t *p);

#endif
