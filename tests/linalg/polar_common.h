/* The polar decomposition's checks (test_gepolar.c on one process, test_dist_gepolar.c over
 * processes): matrices of prescribed singular values, and a result's residual, orthogonality,
 * H's definiteness and U_p against LAPACK's SVD.
 * Header only; the including file includes cmocka and linalg_common.h first. */
#ifndef TESSERA_POLAR_COMMON_H
#define TESSERA_POLAR_COMMON_H

/* A context of lc_config's in tiles of `tile` whose SVD and polar decomposition take `method`
 * (QDWH, or LAPACK's gesdd). */
static inline tessera_context_t *pc_context(int tile, tessera_svd_method_t method) {
  tessera_config_t cfg;
  lc_config(tile, &cfg);
  cfg.svd_method = method;
  return lc_init(&cfg);
}

/* A random m x k matrix with orthonormal columns (double complex, ld m; real for `real`). */
static inline zc_t *pc_orthonormal(int64_t m, int64_t k, bool real, tt_rng_t *r) {
  /* a column of slack after q (see pc_check) */
  zc_t *q = lc_zalloc((size_t)(m * k + m)), *tau = lc_zalloc((size_t)k + 1);
  for (int64_t i = 0; i < m * k; i++) q[i] = lc_rand(real ? TESSERA_F64 : TESSERA_C128, r);
  if (k > 0) {
    assert_int_equal(LAPACKE_zgeqrf(LAPACK_COL_MAJOR, (int)m, (int)k, q, (int)m, tau), 0);
    assert_int_equal(LAPACKE_zungqr(LAPACK_COL_MAJOR, (int)m, (int)k, (int)k, q, (int)m, tau), 0);
  }
  free(tau);
  return q;
}

/* a (m x n, ld m, dtype dt) = W diag(s) Vᴴ, s[j] from 1 down to 1 / cond geometrically for
 * j < rank, 0 after (`repeat`: the first half of them 1); returns A as rounded. */
static inline zc_t *pc_prescribed(tessera_dtype_t dt, int64_t m, int64_t n, double cond,
                                  int64_t rank, bool repeat, void *a, tt_rng_t *r) {
  const bool real = !lc_is_complex(dt);
  zc_t *w = pc_orthonormal(m, n, real, r), *v = pc_orthonormal(n, n, real, r);
  zc_t *full = lc_zalloc((size_t)(m * n));
  for (int64_t j = 0; j < n; j++) {
    const double s = j >= rank ? 0
                     : repeat && j < rank / 2
                         ? 1
                         : pow(cond, rank > 1 ? -(double)j / (double)(rank - 1) : 0);
    for (int64_t i = 0; i < m; i++) w[i + j * m] *= s;
  }
  const zc_t one = 1, zero = 0;
  if (m > 0 && n > 0)
    cblas_zgemm(CblasColMajor, CblasNoTrans, CblasConjTrans, (int)m, (int)n, (int)n, &one, w,
                (int)m, v, (int)n, &zero, full, (int)m);
  for (int64_t i = 0; i < m * n; i++) {
    lc_set(dt, a, (size_t)i, full[i]);
    full[i] = lc_get(dt, a, (size_t)i);
  }
  free(w), free(v);
  return full;
}

/* The checks of one result: u (m x n) and h (n x n, or NULL) of the dtype against A (double
 * complex); `full_rank`: U_p orthonormal; `conditioned`: U_p compared with the SVD's. */
static inline void pc_check(tessera_dtype_t dt, int64_t m, int64_t n, const zc_t *A, const void *u,
                            const void *h, bool full_rank, bool conditioned) {
  const double eps = lc_eps(dt), big = (double)(m > n ? m : n);
  if (m == 0 || n == 0) return;
  zc_t *U = lc_promote(dt, m, n, u, m);
  if (full_rank && n > 0) { /* ‖UᴴU - I‖_F / (n eps) */
    zc_t *G = lc_zalloc((size_t)(n * n));
    const zc_t one = 1, zero = 0;
    cblas_zgemm(CblasColMajor, CblasConjTrans, CblasNoTrans, (int)n, (int)n, (int)m, &one, U,
                (int)m, U, (int)m, &zero, G, (int)n);
    for (int64_t i = 0; i < n; i++) G[i + i * n] -= 1;
    const double orth = lc_norm_fro(G, (size_t)(n * n)) / ((double)n * eps);
    if (!(orth < 30))
      fail_msg("%s %lld x %lld: orthogonality %g", lc_name(dt), (long long)m, (long long)n, orth);
    free(G);
  }
  if (h) {
    zc_t *H = lc_promote(dt, n, n, h, n), *R = lc_zalloc((size_t)(m * n));
    for (int64_t j = 0; j < n; j++) /* Hermitian, exactly (it is formed as (W + Wᴴ) / 2) */
      for (int64_t i = 0; i < n; i++)
        if (H[i + j * n] != conj(H[j + i * n]))
          fail_msg("%s: H(%lld, %lld) is not conj(H(%lld, %lld))", lc_name(dt), (long long)i,
                   (long long)j, (long long)j, (long long)i);
    const zc_t one = 1, mone = -1;
    for (int64_t i = 0; i < m * n; i++) R[i] = A[i];
    cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)n, &mone, U, (int)m,
                H, (int)n, &one, R, (int)m);
    const double an = lc_norm_fro(A, (size_t)(m * n)),
                 resid = lc_norm_fro(R, (size_t)(m * n)) / ((an > 0 ? an : 1) * big * eps);
    if (!(resid < 10))
      fail_msg("%s %lld x %lld: residual %g", lc_name(dt), (long long)m, (long long)n, resid);
    double *ev = malloc((size_t)(n + 1) * sizeof *ev), hn = 0;
    zc_t *Hs = lc_zalloc((size_t)(n * n + n)); /* with slack, as below */
    for (int64_t i = 0; i < n * n; i++) hn = fmax(hn, cabs(H[i])), Hs[i] = H[i];
    assert_int_equal(LAPACKE_zheev(LAPACK_COL_MAJOR, 'N', 'L', (int)n, Hs, (int)n, ev), 0);
    free(Hs);
    if (n > 0 && !(ev[0] >= -10 * big * eps * hn))
      fail_msg("%s %lld x %lld: H has the eigenvalue %g (‖H‖_max %g)", lc_name(dt), (long long)m,
               (long long)n, ev[0], hn);
    free(ev), free(H), free(R);
  }
  if (conditioned && n > 0) { /* U_p = W Vᴴ from LAPACK's SVD */
    /* a column of slack after each array LAPACK works on: OpenBLAS 0.3.21's zgemv kernel reads
     * past a matrix's end */
    zc_t *a = lc_zalloc((size_t)(m * n + m)), *w = lc_zalloc((size_t)(m * n + m)),
         *vt = lc_zalloc((size_t)(n * n + n)), *ref = lc_zalloc((size_t)(m * n));
    double *s = malloc((size_t)n * sizeof *s), *sup = malloc((size_t)n * sizeof *sup);
    for (int64_t i = 0; i < m * n; i++) a[i] = A[i];
    assert_int_equal(LAPACKE_zgesvd(LAPACK_COL_MAJOR, 'S', 'S', (int)m, (int)n, a, (int)m, s, w,
                                    (int)m, vt, (int)n, sup),
                     0);
    const zc_t one = 1, zero = 0;
    cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)n, &one, w, (int)m,
                vt, (int)n, &zero, ref, (int)m);
    for (int64_t i = 0; i < m * n; i++) ref[i] -= U[i];
    const double err = lc_norm_fro(ref, (size_t)(m * n)) /
                       ((double)n * big * eps * s[0] / (s[n - 1] > 0 ? s[n - 1] : 1));
    if (!(err < 10))
      fail_msg("%s %lld x %lld: U_p against the SVD's %g", lc_name(dt), (long long)m, (long long)n,
               err);
    free(a), free(w), free(vt), free(ref), free(s), free(sup);
  }
  free(U);
}

#endif
