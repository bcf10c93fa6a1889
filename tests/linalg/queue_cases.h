/* The cases of tessera_queue_posv, tessera_queue_gesv and tessera_queue_syevd, run on one memory
 * node through a small table of its memory operations (host memory; a GPU's in
 * tests/unit/test_cuda_queue.c): every dtype, both triangles, both sides, trans N / T / C,
 * orders 0, 1, 2 and above, 0 to 3 right-hand sides, leading dimensions above the rows; backward
 * errors and the log det against LAPACK's factor, infos for matrices not positive definite,
 * singular or holding a NaN; eigenvalues ascending, with vectors the residual and orthogonality,
 * without them the values against LAPACK's, the workspace given and not.
 * Header only; the including file includes cmocka and linalg_common.h / lu_common.h first.
 */
#ifndef TESSERA_QUEUE_CASES_H
#define TESSERA_QUEUE_CASES_H

/* A memory node and how a test moves bytes there and back. */
typedef struct {
  int node;
  void *queue;
  void *(*put)(const void *host, size_t bytes); /* a copy in the node's memory */
  void (*get)(void *host, const void *mem, size_t bytes);
  void (*drop)(void *mem);
  void (*sync)(void *queue); /* waits for the work enqueued on the queue */
} qc_node_t;

static const int64_t qc_orders[] = {0, 1, 2, 37, 70};
static const int64_t qc_nrhs[] = {0, 1, 3};
enum { QC_ORDERS = sizeof qc_orders / sizeof qc_orders[0], QC_NRHS = 3 };

/* The conjugate transpose of the rows x cols block x (ld) into y (ldy). */
static inline void qc_conj_t(tessera_dtype_t dt, int64_t rows, int64_t cols, const void *x,
                             int64_t ld, void *y, int64_t ldy) {
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++)
      lc_set(dt, y, (size_t)(j + i * ldy), conj(lc_get(dt, x, (size_t)(i + j * ld))));
}

/* One posv call on the node: a, b (ldb, brows x bcols) copied there and back. */
static inline int qc_posv(tessera_context_t *ctx, const qc_node_t *nd, tessera_uplo_t uplo,
                          tessera_side_t side, tessera_dtype_t dt, int64_t n, int64_t nrhs, void *a,
                          int64_t lda, void *b, int64_t ldb, int64_t bcols, int *info,
                          double *logdet) {
  const size_t es = lc_esize(dt), abytes = (size_t)(lda * n) * es,
               bbytes = (size_t)(ldb * bcols) * es;
  void *da = nd->put(a, abytes), *db = nd->put(b, bbytes), *di = nd->put(info, sizeof *info),
       *dl = nd->put(logdet, sizeof *logdet);
  int rc = tessera_queue_posv(ctx, nd->node, nd->queue, uplo, side, dt, n, nrhs, da, lda, db, ldb,
                              di, dl);
  nd->sync(nd->queue);
  nd->get(a, da, abytes);
  nd->get(b, db, bbytes);
  nd->get(info, di, sizeof *info);
  nd->get(logdet, dl, sizeof *logdet);
  nd->drop(da), nd->drop(db), nd->drop(di), nd->drop(dl);
  return rc;
}

static inline int qc_gesv(tessera_context_t *ctx, const qc_node_t *nd, tessera_op_t trans,
                          tessera_dtype_t dt, int64_t n, int64_t nrhs, void *a, int64_t lda,
                          void *b, int64_t ldb, int *info) {
  const size_t es = lc_esize(dt), abytes = (size_t)(lda * n) * es,
               bbytes = (size_t)(ldb * nrhs) * es;
  void *da = nd->put(a, abytes), *db = nd->put(b, bbytes), *di = nd->put(info, sizeof *info);
  int rc = tessera_queue_gesv(ctx, nd->node, nd->queue, trans, dt, n, nrhs, da, lda, db, ldb, di);
  nd->sync(nd->queue);
  nd->get(a, da, abytes);
  nd->get(b, db, bbytes);
  nd->get(info, di, sizeof *info);
  nd->drop(da), nd->drop(db), nd->drop(di);
  return rc;
}

/* 2 Σ log Re l_jj of LAPACK's factor of a (uplo, lda). */
static inline double qc_logdet(tessera_dtype_t dt, tessera_uplo_t uplo, int64_t n, const void *a,
                               int64_t lda) {
  void *f = lc_dup(dt, a, (size_t)(lda * n));
  assert_int_equal(lc_lapack_potrf(dt, uplo, n, f, lda), 0);
  double s = 0;
  for (int64_t j = 0; j < n; j++) s += 2 * log(creal(lc_get(dt, f, (size_t)(j + j * lda))));
  free(f);
  return s;
}

/* Solves with an HPD matrix from both sides, then a NaN and a negative pivot. */
static inline void qc_posv_cases(tessera_context_t *ctx, const qc_node_t *nd) {
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int u = 0; u < 2; u++)
      for (int o = 0; o < QC_ORDERS; o++)
        for (int h = 0; h < QC_NRHS; h++) {
          const int64_t nrhs = qc_nrhs[h];
          const tessera_dtype_t dt = lc_dtypes[d];
          const tessera_uplo_t uplo = lc_uplos[u];
          const int64_t n = qc_orders[o], lda = n + 3, ldb = n + 2, ldr = nrhs + 1;
          tt_rng_t r = tt_rng((uint64_t)(1000 * d + 100 * u + 10 * o + nrhs));
          void *a0 = lc_alloc(dt, (size_t)(lda * (n + 1)));
          zc_t *full = lc_gen_hpd(dt, uplo, n, a0, lda, &r);
          void *b = lc_alloc(dt, (size_t)(ldb * (nrhs + 1)));
          lc_fill_random(dt, b, n, nrhs, ldb, &r);
          zc_t *bz = lc_promote(dt, n, nrhs, b, ldb);
          const double want = qc_logdet(dt, uplo, n, a0, lda);
          for (int s = 0; s < 2; s++) {
            const tessera_side_t side = s ? TESSERA_RIGHT : TESSERA_LEFT;
            void *a = lc_dup(dt, a0, (size_t)(lda * (n + 1)));
            /* right: X A = Bᴴ, whose solution is Xᴴ for A Hermitian */
            void *x = lc_alloc(dt, (size_t)(s ? ldr * (n + 1) : ldb * (nrhs + 1)));
            if (s)
              qc_conj_t(dt, n, nrhs, b, ldb, x, ldr);
            else
              memcpy(x, b, (size_t)(ldb * nrhs) * lc_esize(dt));
            int info = -7;
            double logdet = NAN;
            int rc = qc_posv(ctx, nd, uplo, side, dt, n, nrhs, a, lda, x, s ? ldr : ldb,
                             s ? n : nrhs, &info, &logdet);
            if (rc || info)
              fail_msg("queue_posv node %d %s %c side %c n %lld nrhs %lld: rc %d info %d: %s",
                       nd->node, lc_name(dt), (char)uplo, (char)side, (long long)n, (long long)nrhs,
                       rc, info, tessera_last_error(ctx));
            void *xl = x;
            if (s) {
              xl = lc_alloc(dt, (size_t)(ldb * (nrhs + 1)));
              qc_conj_t(dt, nrhs, n, x, ldr, xl, ldb);
            }
            const double res = lc_solve_resid(dt, n, nrhs, full, xl, ldb, bz);
            const double tol = (dt == TESSERA_F32 || dt == TESSERA_C64 ? 1e-4 : 1e-10) *
                               (fabs(want) > 1 ? fabs(want) : 1);
            if (!(res < 10) || !(fabs(logdet - want) <= tol))
              fail_msg("queue_posv node %d %s %c side %c n %lld nrhs %lld: backward error %g, "
                       "log det %.12g against %.12g",
                       nd->node, lc_name(dt), (char)uplo, (char)side, (long long)n, (long long)nrhs,
                       res, logdet, want);
            if (xl != x) free(xl);
            free(x);
            free(a);
          }
          if (n >= 2) { /* a NaN, then a negative pivot, at order k + 1 */
            const int64_t k = n / 2;
            for (int t = 0; t < 2; t++) {
              void *a = lc_dup(dt, a0, (size_t)(lda * (n + 1)));
              lc_set(dt, a, (size_t)(k + k * lda), t ? -1e3 * (double)n : NAN);
              void *x = lc_dup(dt, b, (size_t)(ldb * (nrhs + 1)));
              int info = -7;
              double logdet = 0;
              assert_int_equal(qc_posv(ctx, nd, uplo, TESSERA_LEFT, dt, n, nrhs, a, lda, x, ldb,
                                       nrhs, &info, &logdet),
                               0);
              if (info != k + 1)
                fail_msg("queue_posv node %d %s %c n %lld with %s at %lld: info %d", nd->node,
                         lc_name(dt), (char)uplo, (long long)n, t ? "a negative pivot" : "NaN",
                         (long long)k, info);
              free(x);
              free(a);
            }
          }
          free(a0), free(full), free(b), free(bz);
        }
}

/* tessera_queue_posv_batch: QC_BATCH systems of each dtype, triangle, side, order and count of
 * right-hand sides, strides beyond the matrices, member 1 with a negative pivot and member 3 with
 * a NaN (orders >= 2): those get their infos, every other member its solve and log det; then
 * the batch's own arguments refused with their numbers. */
enum { QC_BATCH = 5 };
static inline void qc_posv_batch_cases(tessera_context_t *ctx, const qc_node_t *nd) {
  static const int64_t orders[] = {0, 1, 37};
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int u = 0; u < 2; u++)
      for (int o = 0; o < 3; o++)
        for (int h = 0; h < QC_NRHS; h++)
          for (int s = 0; s < 2; s++) {
            const tessera_dtype_t dt = lc_dtypes[d];
            const tessera_uplo_t uplo = lc_uplos[u];
            const tessera_side_t side = s ? TESSERA_RIGHT : TESSERA_LEFT;
            const int64_t n = orders[o], nrhs = qc_nrhs[h], lda = n + 1, ldx = (s ? nrhs : n) + 2;
            const int64_t sa = lda * n + 7, sx = ldx * (s ? n : nrhs) + 5, k = n / 2;
            const size_t es = lc_esize(dt);
            tt_rng_t r = tt_rng((uint64_t)(5000 + 1000 * d + 100 * u + 10 * o + 2 * h + s));
            char *a = lc_alloc(dt, (size_t)(sa * QC_BATCH + 1)),
                 *x = lc_alloc(dt, (size_t)(sx * QC_BATCH + 1));
            zc_t *full[QC_BATCH], *bz[QC_BATCH];
            double want[QC_BATCH], logdet[QC_BATCH];
            int info[QC_BATCH];
            for (int i = 0; i < QC_BATCH; i++) {
              char *ai = a + (size_t)(i * sa) * es, *xi = x + (size_t)(i * sx) * es;
              full[i] = lc_gen_hpd(dt, uplo, n, ai, lda, &r);
              want[i] = qc_logdet(dt, uplo, n, ai, lda);
              void *b = lc_alloc(dt, (size_t)(n * nrhs + 1));
              lc_fill_random(dt, b, n, nrhs, n, &r);
              bz[i] = lc_promote(dt, n, nrhs, b, n);
              if (s) /* right: X A = Bᴴ, whose solution is Xᴴ */
                qc_conj_t(dt, n, nrhs, b, n, xi, ldx);
              else
                for (int64_t j = 0; j < nrhs; j++)
                  memcpy(xi + (size_t)(j * ldx) * es, (char *)b + (size_t)(j * n) * es,
                         (size_t)n * es);
              free(b);
              if (n >= 2 && (i == 1 || i == 3))
                lc_set(dt, ai, (size_t)(k + k * lda), i == 1 ? -1e3 * (double)n : NAN);
              info[i] = -7;
              logdet[i] = NAN;
            }
            const size_t abytes = (size_t)(sa * QC_BATCH) * es,
                         xbytes = (size_t)(sx * QC_BATCH) * es;
            void *da = nd->put(a, abytes), *dx = nd->put(x, xbytes),
                 *di = nd->put(info, sizeof info), *dl = nd->put(logdet, sizeof logdet);
            const int rc =
                tessera_queue_posv_batch(ctx, nd->node, nd->queue, uplo, side, dt, n, nrhs,
                                         QC_BATCH, da, lda, sa, dx, ldx, sx, di, dl);
            nd->sync(nd->queue);
            nd->get(x, dx, xbytes);
            nd->get(info, di, sizeof info);
            nd->get(logdet, dl, sizeof logdet);
            nd->drop(da), nd->drop(dx), nd->drop(di), nd->drop(dl);
            if (rc)
              fail_msg("queue_posv_batch node %d: rc %d: %s", nd->node, rc,
                       tessera_last_error(ctx));
            for (int i = 0; i < QC_BATCH; i++) {
              const int bad = n >= 2 && (i == 1 || i == 3);
              if (info[i] != (bad ? k + 1 : 0))
                fail_msg("queue_posv_batch node %d %s %c side %c n %lld nrhs %lld member %d: info "
                         "%d",
                         nd->node, lc_name(dt), (char)uplo, (char)side, (long long)n,
                         (long long)nrhs, i, info[i]);
              if (!bad) {
                void *xl = lc_alloc(dt, (size_t)(n * nrhs + 1));
                const char *xi = x + (size_t)(i * sx) * es;
                if (s)
                  qc_conj_t(dt, nrhs, n, xi, ldx, xl, n);
                else
                  for (int64_t j = 0; j < nrhs; j++)
                    memcpy((char *)xl + (size_t)(j * n) * es, xi + (size_t)(j * ldx) * es,
                           (size_t)n * es);
                const double res = lc_solve_resid(dt, n, nrhs, full[i], xl, n, bz[i]);
                const double tol = (dt == TESSERA_F32 || dt == TESSERA_C64 ? 1e-4 : 1e-10) *
                                   (fabs(want[i]) > 1 ? fabs(want[i]) : 1);
                if (!(res < 10) || !(fabs(logdet[i] - want[i]) <= tol))
                  fail_msg("queue_posv_batch node %d %s %c side %c n %lld nrhs %lld member %d: "
                           "backward error %g, log det %.12g against %.12g",
                           nd->node, lc_name(dt), (char)uplo, (char)side, (long long)n,
                           (long long)nrhs, i, res, logdet[i], want[i]);
                free(xl);
              }
              free(full[i]), free(bz[i]);
            }
            free(a), free(x);
          }
  /* the batch's arguments: its count, and strides that would overlap the members */
  double a[4] = {1, 0, 0, 1}, b[2] = {1, 1}, l[2];
  int info[2];
  assert_int_equal(tessera_queue_posv_batch(ctx, nd->node, nd->queue, TESSERA_LOWER, TESSERA_LEFT,
                                            TESSERA_F64, 1, 1, -1, a, 1, 1, b, 1, 1, info, l),
                   -9);
  assert_int_equal(tessera_queue_posv_batch(ctx, nd->node, nd->queue, TESSERA_LOWER, TESSERA_LEFT,
                                            TESSERA_F64, 2, 1, 2, a, 2, 3, b, 2, 2, info, l),
                   -12);
  assert_int_equal(tessera_queue_posv_batch(ctx, nd->node, nd->queue, TESSERA_LOWER, TESSERA_LEFT,
                                            TESSERA_F64, 1, 1, 2, a, 1, 1, b, 2, 1, info, l),
                   -15);
  assert_int_equal(tessera_queue_posv_batch(ctx, nd->node, nd->queue, TESSERA_LOWER, TESSERA_LEFT,
                                            TESSERA_F64, 1, 1, 2, NULL, 1, 1, b, 1, 1, info, l),
                   -10);
}

/* Solves with a general matrix for each op, then a zero column and a NaN. */
static inline void qc_gesv_cases(tessera_context_t *ctx, const qc_node_t *nd) {
  static const tessera_op_t ops[3] = {TESSERA_NOTRANS, TESSERA_TRANS, TESSERA_CONJTRANS};
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int o = 0; o < QC_ORDERS; o++)
      for (int h = 0; h < QC_NRHS; h++) {
        const int64_t nrhs = qc_nrhs[h];
        const tessera_dtype_t dt = lc_dtypes[d];
        const int64_t n = qc_orders[o], ldb = n + 2;
        mat_t m = lu_gen(dt, n, n, 0, (uint64_t)(2000 + 100 * d + 10 * o + nrhs));
        tt_rng_t r = tt_rng((uint64_t)(3000 + 100 * d + 10 * o + nrhs));
        void *b = lc_alloc(dt, (size_t)(ldb * (nrhs + 1)));
        lc_fill_random(dt, b, n, nrhs, ldb, &r);
        zc_t *bz = lc_promote(dt, n, nrhs, b, ldb);
        for (int t = 0; t < 3; t++) {
          void *a = lc_dup(dt, m.a, (size_t)(m.lda * n)), *x = lc_dup(dt, b, (size_t)(ldb * nrhs));
          int info = -7;
          int rc = qc_gesv(ctx, nd, ops[t], dt, n, nrhs, a, m.lda, x, ldb, &info);
          const double res =
              rc || info ? INFINITY : op_resid(dt, ops[t], n, nrhs, m.full, x, ldb, bz);
          if (!(res < 10))
            fail_msg("queue_gesv node %d %s trans %c n %lld nrhs %lld: rc %d info %d backward "
                     "error %g: %s",
                     nd->node, lc_name(dt), (char)ops[t], (long long)n, (long long)nrhs, rc, info,
                     res, tessera_last_error(ctx));
          free(a), free(x);
        }
        if (n >= 2) { /* column k zero, then a NaN in it: info k + 1 */
          const int64_t k = n / 2;
          for (int t = 0; t < 2; t++) {
            void *a = lc_dup(dt, m.a, (size_t)(m.lda * n)),
                 *x = lc_dup(dt, b, (size_t)(ldb * nrhs));
            for (int64_t i = 0; i < n; i++) lc_set(dt, a, (size_t)(i + k * m.lda), 0.0);
            if (t) lc_set(dt, a, (size_t)(n - 1 + k * m.lda), NAN);
            int info = -7;
            assert_int_equal(
                qc_gesv(ctx, nd, TESSERA_NOTRANS, dt, n, nrhs, a, m.lda, x, ldb, &info), 0);
            if (info != k + 1)
              fail_msg("queue_gesv node %d %s n %lld with column %lld %s: info %d", nd->node,
                       lc_name(dt), (long long)n, (long long)k, t ? "holding a NaN" : "zero", info);
            free(a), free(x);
          }
        }
        lu_mat_free(&m);
        free(b), free(bz);
      }
}

/* Eigensolves of a random Hermitian matrix (its `uplo` triangle given, the other NaN): every
 * dtype and order, both triangles, with vectors and without, the workspace given and not. */
static inline void qc_syevd_cases(tessera_context_t *ctx, const qc_node_t *nd) {
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int o = 0; o < QC_ORDERS; o++)
      for (int c = 0; c < 8; c++) {
        const tessera_dtype_t dt = lc_dtypes[d];
        const tessera_uplo_t uplo = c & 1 ? TESSERA_UPPER : TESSERA_LOWER;
        const tessera_job_t job = c & 2 ? TESSERA_VALUES : TESSERA_VECTORS;
        const int given = c & 4;
        const int64_t n = qc_orders[o], lda = n + 3;
        const size_t es = lc_esize(dt), rs = dt == TESSERA_F32 || dt == TESSERA_C64 ? 4 : 8;
        tt_rng_t r = tt_rng((uint64_t)(5000 + 100 * d + 10 * o + c));
        void *a = lc_alloc(dt, (size_t)(lda * (n > 0 ? n : 1)));
        lc_fill_nan(dt, a, (size_t)(lda * (n > 0 ? n : 1)));
        zc_t *full = lc_zalloc((size_t)(n * n) + 1);
        for (int64_t j = 0; j < n; j++)
          for (int64_t i = j; i < n; i++) { /* A(i, j) of the lower triangle, its mirror above */
            const zc_t v = i == j ? creal(lc_rand(dt, &r)) : lc_rand(dt, &r);
            lc_set(dt, a, (size_t)(uplo == TESSERA_LOWER ? i + j * lda : j + i * lda),
                   uplo == TESSERA_LOWER ? v : conj(v));
            full[i + j * n] = uplo == TESSERA_LOWER ? lc_get(dt, a, (size_t)(i + j * lda))
                                                    : conj(lc_get(dt, a, (size_t)(j + i * lda)));
            full[j + i * n] = conj(full[i + j * n]);
          }
        const size_t abytes = (size_t)(lda * (n > 0 ? n : 1)) * es, wbytes = (size_t)(n + 1) * rs;
        const size_t kbytes = given ? tessera_queue_syevd_work_bytes(dt, n) : 0;
        void *work0 = given ? calloc(kbytes, 1) : NULL, *w = calloc((size_t)n + 1, rs);
        int info = -7;
        void *da = nd->put(a, abytes), *dw = nd->put(w, wbytes), *di = nd->put(&info, sizeof info),
             *dk = given ? nd->put(work0, kbytes) : NULL;
        const int rc = tessera_queue_syevd(ctx, nd->node, nd->queue, job, uplo, dt, n, da, lda, dw,
                                           dk, kbytes, di);
        nd->sync(nd->queue);
        nd->get(a, da, abytes), nd->get(w, dw, wbytes), nd->get(&info, di, sizeof info);
        nd->drop(da), nd->drop(dw), nd->drop(di);
        if (dk) nd->drop(dk);
        if (rc || info)
          fail_msg("queue_syevd node %d %s %c %c n %lld: rc %d info %d: %s", nd->node, lc_name(dt),
                   (char)uplo, (char)job, (long long)n, rc, info, tessera_last_error(ctx));
        double *lambda = calloc((size_t)n + 1, sizeof *lambda);
        for (int64_t i = 0; i < n; i++)
          lambda[i] = rs == 4 ? ((const float *)w)[i] : ((const double *)w)[i];
        for (int64_t i = 1; i < n; i++)
          if (!(lambda[i - 1] <= lambda[i]))
            fail_msg("queue_syevd %s n %lld: eigenvalues not ascending at %lld", lc_name(dt),
                     (long long)n, (long long)i);
        const double an = lc_norm_fro(full, (size_t)(n * n)), eps = lc_eps(dt);
        const double denom = (an > 0 ? an : 1) * (double)(n > 0 ? n : 1) * eps;
        double res = 0, orth = 0;
        if (job == TESSERA_VECTORS) {
          zc_t *v = lc_promote(dt, n, n, a, lda);
          lc_eig_vector_norms(n, full, v, lambda, &res, &orth);
          res /= denom, orth /= (double)(n > 0 ? n : 1) * eps;
          free(v);
        } else {
          res = lc_eig_value_error(n, full, lambda) / denom;
        }
        if (!(res < 10) || !(orth < 10))
          fail_msg("queue_syevd node %d %s %c %c n %lld: residual %g, orthogonality %g", nd->node,
                   lc_name(dt), (char)uplo, (char)job, (long long)n, res, orth);
        free(lambda), free(a), free(full), free(w), free(work0);
      }
}

/* Conjugate transposes of random blocks, leading dimensions above their rows: exact. */
static inline void qc_transpose_cases(tessera_context_t *ctx, const qc_node_t *nd) {
  static const int64_t shapes[4][2] = {{0, 3}, {1, 1}, {5, 7}, {70, 37}};
  for (int d = 0; d < TESSERA_NUM_DTYPES; d++)
    for (int s = 0; s < 4; s++) {
      const tessera_dtype_t dt = lc_dtypes[d];
      const int64_t m = shapes[s][0], n = shapes[s][1], lda = m + 1, ldb = n + 2;
      const size_t es = lc_esize(dt), abytes = (size_t)(lda * n) * es,
                   bbytes = (size_t)(ldb * (m > 0 ? m : 1)) * es;
      tt_rng_t r = tt_rng((uint64_t)(6000 + 10 * d + s));
      void *a = lc_alloc(dt, (size_t)(lda * n)), *b = lc_alloc(dt, (size_t)(ldb * (m > 0 ? m : 1)));
      lc_fill_random(dt, a, m, n, lda, &r);
      void *da = nd->put(a, abytes), *db = nd->put(b, bbytes);
      const int rc = tessera_queue_transpose(ctx, nd->node, nd->queue, dt, m, n, da, lda, db, ldb);
      nd->sync(nd->queue);
      nd->get(b, db, bbytes);
      nd->drop(da), nd->drop(db);
      if (rc)
        fail_msg("queue_transpose %s %lld x %lld: %d", lc_name(dt), (long long)m, (long long)n, rc);
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++)
          if (lc_get(dt, b, (size_t)(j + i * ldb)) != conj(lc_get(dt, a, (size_t)(i + j * lda))))
            fail_msg("queue_transpose %s %lld x %lld: B(%lld, %lld) is not conj(A(%lld, %lld))",
                     lc_name(dt), (long long)m, (long long)n, (long long)j, (long long)i,
                     (long long)i, (long long)j);
      free(a), free(b);
    }
}

#endif
