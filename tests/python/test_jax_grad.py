"""Derivatives through tessera.jax: potrs' x and log det, cho_solve's x, cholesky's factor,
potri's inverse, lu_solve's x (on a matrix, and on lu_factor's factors), lu_factor's factors
(order 2 in reverse too, and as jax's on Aᵀ), qr's Q and R, least_squares' x, gesvd's values and
vectors, polar's U_p and H, and syevd's eigenvalues and eigenvectors, forward and reverse (order
1; order 2 in reverse for potrs' log det, cholesky, potri and syevd's eigenvalues, both ways for
cho_solve: jax.test_util.check_grads against finite differences), and the gradients against
jax's own on the same inputs (jnp.linalg.solve, slogdet, inv and eigh of the Hermitian matrix the
read triangle holds; jax.scipy.linalg.cho_solve; jnp.linalg.cholesky), real and complex, both
triangles, complex64 too; jax.jacfwd, jax.jacrev and jax.hessian; the shardmap forms inside
jax.shard_map on 1D and 2 x 2 meshes. On a mesh of Auto axes; on one of Explicit axes the global
forms refuse to differentiate with a sentence. Fixtures and helpers in jax_support.py."""
import numpy as np
import pytest
from jax.test_util import check_grads

from jax_support import *  # noqa: F401,F403  (fixtures, helpers, jax, tj)
from jax_support import P, hpd, jax, jnp, jsl, make_mesh, rhs, tj

CASES = [(np.float64, False), (np.complex128, True)]  # each dtype, each triangle once
IDS = [f"{np.dtype(d).name}-{'lower' if lo else 'upper'}" for d, lo in CASES]


def hermitian_of(a, lower):
    """The Hermitian matrix whose `lower` (else upper) triangle a holds, its diagonal real."""
    t = jnp.tril(a, -1) if lower else jnp.triu(a, 1)
    return t + t.conj().T + jnp.diag(jnp.real(jnp.diagonal(a))).astype(a.dtype)


def reference_grad(f, argnums=0):
    """jax.grad of a reference built of jax's own functions, under jax.jit: one compiled program
    instead of one compilation per operation run eagerly. tessera's functions are differentiated
    eagerly (as check_grads does), the reference only supplies the values to compare with."""
    return jax.jit(jax.grad(f, argnums))


def skewed(a, lower, seed=7):
    """a with noise in the triangle potrs does not read (it must get no derivative)."""
    noise = np.random.default_rng(seed).standard_normal(a.shape)
    return a + (np.triu(noise, 1) if lower else np.tril(noise, -1)).astype(a.dtype)


@pytest.mark.parametrize("dtype,lower", CASES, ids=IDS)
def test_potrs_derivatives(dtype, lower, devices):
    mesh, n = make_mesh(devices, "auto"), 10
    a, b = skewed(hpd(n, dtype, seed=2), lower), rhs(n, dtype, k=2)

    def solve(a, b):
        return tj.potrs(a, b, 4, mesh, P("x", None), lower=lower)

    def logdet(a):
        return tj.potrs(a, b, 4, mesh, P("x", None), lower=lower, return_logdet=True)[1]

    # order 1 both ways; order 2 in reverse for the log det (the solve's second order is
    # cho_solve's, tested below both ways)
    check_grads(solve, (a, b), order=1, modes=["fwd", "rev"], atol=1e-5, rtol=1e-5)
    check_grads(logdet, (a,), order=2, modes=["rev"], atol=1e-5, rtol=1e-5)

    def loss(a, b):
        return jnp.sum(jnp.abs(solve(a, b)) ** 2) + logdet(a)

    def reference(a, b):
        h = hermitian_of(a, lower)
        return jnp.sum(jnp.abs(jnp.linalg.solve(h, b)) ** 2) + jnp.linalg.slogdet(h)[1]

    got, want = jax.grad(loss, (0, 1))(a, b), reference_grad(reference, (0, 1))(a, b)
    for g, w in zip(got, want):
        assert np.abs(np.asarray(g) - np.asarray(w)).max() < 1e-10


@pytest.mark.parametrize("dtype,lower", [(d, not lo) for d, lo in CASES],
                         ids=[f"{np.dtype(d).name}-{'upper' if lo else 'lower'}" for d, lo in CASES])
def test_cho_solve_derivatives(dtype, lower, devices):
    mesh, n = make_mesh(devices, "auto"), 10
    c, _ = tj.cho_factor(hpd(n, dtype, seed=3), 4, mesh, P("x", None), lower=lower)
    c, b = np.asarray(c), rhs(n, dtype, k=2)

    def solve(c, b):
        return tj.cho_solve((c, lower), b, 4, mesh, P("x", None))

    check_grads(solve, (c, b), order=2, modes=["fwd", "rev"], atol=1e-5, rtol=1e-5)
    got = jax.grad(lambda c, b: jnp.sum(jnp.abs(solve(c, b)) ** 2), (0, 1))(c, b)
    want = reference_grad(lambda c, b: jnp.sum(jnp.abs(jsl.cho_solve((c, lower), b)) ** 2),
                          (0, 1))(c, b)
    for g, w in zip(got, want):
        assert np.abs(np.asarray(g) - np.asarray(w)).max() < 1e-10


@pytest.mark.parametrize("dtype,lower", CASES, ids=IDS)
def test_cholesky_derivatives(dtype, lower, devices):
    """Murray's rule: the factor's tangent from two triangular solves on it, forward and reverse,
    orders 1 and 2, and the gradient as jax's own cholesky's on the Hermitian matrix the read
    triangle holds."""
    mesh, n = make_mesh(devices, "auto"), 10
    a = skewed(hpd(n, dtype, seed=5), lower)

    def factor(a):
        return tj.cholesky(a, 4, mesh, P("x", None), lower=lower)

    check_grads(factor, (a,), order=1, modes=["fwd", "rev"], atol=1e-5, rtol=1e-5)
    if lower:  # order 2 once (the complex case)
        check_grads(factor, (a,), order=2, modes=["rev"], atol=1e-5, rtol=1e-5)
    w = jnp.asarray(np.random.default_rng(8).standard_normal((n, n)))

    def reference(a):  # jax's lower factor of the same matrix, as tessera's triangle
        f = jnp.linalg.cholesky(hermitian_of(a, lower))
        return f if lower else f.conj().T

    got = jax.grad(lambda a: jnp.sum(jnp.abs(factor(a)) ** 2 * w))(a)
    want = reference_grad(lambda a: jnp.sum(jnp.abs(reference(a)) ** 2 * w))(a)
    assert np.abs(np.asarray(got) - np.asarray(want)).max() < 1e-10


@pytest.mark.parametrize("dtype,lower", CASES, ids=IDS)
def test_potri_derivatives(dtype, lower, devices):
    """A⁻¹'s tangent −A⁻¹ dA A⁻¹: order 1 both ways, order 2 in reverse, the gradient as jax's
    inverse's of the Hermitian matrix the read triangle holds."""
    mesh, n = make_mesh(devices, "auto"), 8
    a = skewed(hpd(n, dtype, seed=12), lower)
    w = jnp.asarray(np.random.default_rng(13).standard_normal((n, n)))

    def inverse(a):
        return tj.potri(a, 4, mesh, P("x", None), lower=lower)

    check_grads(inverse, (a,), order=1, modes=["fwd", "rev"], atol=1e-5, rtol=1e-5)
    check_grads(inverse, (a,), order=2, modes=["rev"], atol=1e-5, rtol=1e-5)
    got = jax.grad(lambda a: jnp.sum(w * jnp.abs(inverse(a)) ** 2))(a)
    want = reference_grad(
        lambda a: jnp.sum(w * jnp.abs(jnp.linalg.inv(hermitian_of(a, lower))) ** 2))(a)
    assert np.abs(np.asarray(got) - np.asarray(want)).max() < 1e-10


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_syevd_derivatives(dtype, devices):
    """jax's eigh rule: the eigenvalues to order 2 in reverse (values alone: the tangent's
    eigenvectors from the vectors call), with the vectors order 1, and the gradients of a function
    that no eigenvector's phase changes (Σ c_i w_i + Σ |V_ij|⁴) as jax's eigh's of the Hermitian
    matrix of the lower triangle (the one syevd reads)."""
    mesh, n = make_mesh(devices, "auto"), 8
    q = np.linalg.qr(hpd(n, dtype, seed=6))[0]  # eigenvalues 1 .. n apart (finite differences)
    a = skewed((q * np.arange(1.0, n + 1)) @ q.conj().T, True)
    c = jnp.asarray(np.random.default_rng(9).standard_normal(n))

    def values(a):
        return tj.syevd(a, 4, mesh, P("x", None), return_eigenvectors=False)

    def both(a):
        w, v = tj.syevd(a, 4, mesh, P("x", None))
        return jnp.sum(c * w) + jnp.sum(jnp.abs(v) ** 4)

    def reference(a):
        w, v = jnp.linalg.eigh(hermitian_of(a, True))
        return jnp.sum(c * w) + jnp.sum(jnp.abs(v) ** 4)

    check_grads(values, (a,), order=2, modes=["rev"], atol=1e-5, rtol=1e-5)
    check_grads(both, (a,), order=1, modes=["fwd", "rev"], atol=1e-5, rtol=1e-5)
    got, want = jax.grad(both)(a), reference_grad(reference)(a)
    assert np.abs(np.asarray(got) - np.asarray(want)).max() < 1e-10


@pytest.mark.parametrize("dtype", [np.complex128], ids=["complex128"])
def test_lu_solve_derivatives(dtype, devices):
    """lu_solve(a, b): orders 1 and 2, forward and reverse, and the gradient as jax's own solve's;
    under differentiation one factorization (lu_factor) and every solve on it (lu_factored, with
    A or Aᵀ), no second factorization. lu_solve((lu, piv), b, trans=0, 1, 2): in lu and b, orders
    1 and 2 both ways. lu_factor itself refuses to differentiate with a sentence."""
    mesh, n = make_mesh(devices, "auto"), 10
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((n, n)) + (1j * rng.standard_normal((n, n))
                                        if np.dtype(dtype).kind == "c" else 0)).astype(dtype)
    a = a + 3 * np.eye(n, dtype=dtype)
    b = rhs(n, dtype, k=2)

    def solve(a, b):
        return tj.lu_solve(a, b, 4, mesh, P("x", None))

    check_grads(solve, (a, b), order=1, modes=["fwd", "rev"], atol=1e-5, rtol=1e-5)
    check_grads(solve, (a, b), order=2, modes=["rev"], atol=1e-5, rtol=1e-5)

    def loss(a, b):
        return jnp.sum(jnp.abs(solve(a, b)) ** 2)

    got = jax.grad(loss, (0, 1))(a, b)
    want = reference_grad(lambda a, b: jnp.sum(jnp.abs(jnp.linalg.solve(a, b)) ** 2), (0, 1))(a, b)
    for g, w in zip(got, want):
        assert np.abs(np.asarray(g) - np.asarray(w)).max() < 1e-10
    text = jax.jit(jax.grad(loss, (0, 1))).lower(a, b).as_text()
    assert text.count("@tessera_lu_factor(") == 1 and "tessera_lu_solve" not in text
    assert "@tessera_lu_factored(" in text
    lu, piv = tj.lu_factor(a, 4, mesh, P("x", None))
    lu = np.asarray(lu)
    for trans in (0, 1, 2):
        def factored(lu, b):
            return tj.lu_solve((lu, piv), b, 4, mesh, P("x", None), trans=trans)

        check_grads(factored, (lu, b), order=1 if trans else 2, modes=["fwd", "rev"], atol=1e-5,
                    rtol=1e-5)
    # lu_factor's own rule: orders 1 both ways and 2 in reverse; as jax's on Aᵀ (lu = (L + U -
    # I)ᵀ of P Aᵀ = L U, jax.scipy's lu_factor(aᵀ)'s factors transposed, the same pivots here)
    def factors(a):
        return tj.lu_factor(a, 4, mesh, P("x", None))[0]

    check_grads(factors, (a,), order=1, modes=["fwd", "rev"], atol=1e-5, rtol=1e-5)
    check_grads(factors, (a,), order=2, modes=["rev"], atol=1e-5, rtol=1e-5)
    w = np.random.default_rng(8).standard_normal(a.shape)
    got = jax.grad(lambda a: jnp.sum(w * jnp.abs(factors(a)) ** 2))(a)
    want = reference_grad(lambda a: jnp.sum(w * jnp.abs(jsl.lu_factor(a.T)[0].T) ** 2))(a)
    assert np.abs(np.asarray(got) - np.asarray(want)).max() < 1e-10 * np.abs(np.asarray(want)).max()


@pytest.mark.parametrize("dtype,m,n", [(np.complex128, 8, 5)], ids=["complex128-tall"])
def test_qr_and_least_squares_derivatives(dtype, m, n, devices):
    """qr: jax's QR rule (M >= N), order 1 both ways for Q and R, order 2 for mode "r" (R alone,
    Q formed only under differentiation), and the gradient of a function no column's phase
    changes (Σ W ∘ |R|² + Σ |Q|⁴) as jnp.linalg.qr's; least_squares: x = R⁻¹ Qᴴ b's rule, orders 1
    and 2 both ways in a and b, the gradient as jnp.linalg.lstsq's. QR of a wide A refuses to
    differentiate with a sentence."""
    mesh = make_mesh(devices, "auto")
    rng = np.random.default_rng(11)
    a = (rng.standard_normal((m, n)) + (1j * rng.standard_normal((m, n))
                                        if np.dtype(dtype).kind == "c" else 0)).astype(dtype)
    b = rhs(m, dtype, k=2)
    w = rng.standard_normal((n, n))

    def qr(a, mode="reduced"):
        return tj.qr(a, 4, mesh, P("x", None), mode=mode)

    check_grads(qr, (a,), order=1, modes=["fwd", "rev"], atol=1e-5, rtol=1e-5)
    check_grads(lambda a: qr(a, "r"), (a,), order=2, modes=["rev"], atol=1e-5, rtol=1e-5)

    def invariant(q, r):
        return jnp.sum(w * jnp.abs(r) ** 2) + jnp.sum(jnp.abs(q) ** 4)

    got = jax.grad(lambda a: invariant(*qr(a)))(a)
    want = reference_grad(lambda a: invariant(*jnp.linalg.qr(a)))(a)
    assert np.abs(np.asarray(got) - np.asarray(want)).max() < 1e-10

    def lstsq(a, b):
        return tj.least_squares(a, b, 4, mesh, P("x", None))

    check_grads(lstsq, (a, b), order=1, modes=["fwd", "rev"], atol=1e-5, rtol=1e-5)
    check_grads(lstsq, (a, b), order=2, modes=["rev"], atol=1e-5, rtol=1e-5)
    got = jax.grad(lambda a, b: jnp.sum(jnp.abs(lstsq(a, b)) ** 2), (0, 1))(a, b)
    want = reference_grad(lambda a, b: jnp.sum(jnp.abs(jnp.linalg.lstsq(a, b)[0]) ** 2),
                          (0, 1))(a, b)
    for g, w_ in zip(got, want):
        assert np.abs(np.asarray(g) - np.asarray(w_)).max() < 1e-10
    if m > n:  # its transpose is wide
        with pytest.raises(NotImplementedError, match="tessera.jax.qr: the derivative of QR with"):
            jax.grad(lambda a: jnp.sum(jnp.abs(qr(a)[1])))(a.T.copy())


@pytest.mark.parametrize("dtype,m,n", [(np.complex128, 8, 5), (np.float64, 4, 7)],
                         ids=["complex128-tall", "float64-wide"])
def test_gesvd_and_polar_derivatives(dtype, m, n, devices):
    """gesvd: jax's SVD rule, order 1 both ways on a function no singular pair's phase changes
    (Σ c_i s_i + Σ |U_ij|⁴ + Σ |Vh_ij|⁴), the values alone to order 2 in reverse, the gradient as
    jnp.linalg.svd's; polar (M >= N): U_p and H to order 1 both ways, U_p alone too, the gradient
    as jax.scipy.linalg.polar's (its SVD method). full_matrices of a non-square A refuses."""
    mesh = make_mesh(devices, "auto")
    rng = np.random.default_rng(13)
    a = (rng.standard_normal((m, n)) + (1j * rng.standard_normal((m, n))
                                        if np.dtype(dtype).kind == "c" else 0)).astype(dtype)
    c = rng.standard_normal(min(m, n))

    def invariant(s, u, vh):
        return jnp.sum(c * s) + jnp.sum(jnp.abs(u) ** 4) + jnp.sum(jnp.abs(vh) ** 4)

    def svd(a, **kw):
        return tj.gesvd(a, 4, mesh, P("x", None), **kw)

    def ours(a):
        return invariant(*svd(a))

    if m >= n:  # the wide A's rule: against jax's alone (a tall one's transposed)
        check_grads(ours, (a,), order=1, modes=["fwd", "rev"], atol=1e-5, rtol=1e-5)
        check_grads(lambda a: svd(a, compute_u=False, compute_vh=False), (a,), order=2,
                    modes=["rev"], atol=1e-5, rtol=1e-5)
    want = reference_grad(lambda a: (lambda u, s, vh: invariant(s, u, vh))(
        *jnp.linalg.svd(a, full_matrices=False)))(a)
    assert np.abs(np.asarray(jax.grad(ours)(a)) - np.asarray(want)).max() < 1e-10
    if m != n:
        with pytest.raises(NotImplementedError, match="tessera.jax.gesvd: the derivative of"):
            jax.grad(lambda a: jnp.sum(svd(a, full_matrices=True)[0]))(a)
    if m < n:
        return

    def polar(a, **kw):
        return tj.polar(a, 4, mesh, P("x", None), **kw)

    check_grads(polar, (a,), order=1, modes=["fwd", "rev"], atol=1e-5, rtol=1e-5)
    check_grads(lambda a: polar(a, compute_h=False), (a,), order=1, modes=["fwd", "rev"],
                atol=1e-5, rtol=1e-5)
    w1, w2 = rng.standard_normal((m, n)), rng.standard_normal((n, n))

    def weighted(u, h):
        return jnp.sum(w1 * jnp.real(u)) + jnp.sum(w2 * jnp.real(h))

    got = jax.grad(lambda a: weighted(*polar(a)))(a)
    want = reference_grad(lambda a: weighted(*jsl.polar(a, method="svd")))(a)
    assert np.abs(np.asarray(got) - np.asarray(want)).max() < 1e-10


def test_jacobians_and_hessian(devices):
    """jax.jacfwd of potrs' x in b (A⁻¹) and jax.jacrev of it in A, and jax.hessian
    of its log det (−A⁻¹ ⊗ A⁻¹ on a symmetric direction's entries), as jax's own on the same
    matrix, f64."""
    mesh, n, row = make_mesh(devices, "auto"), 4, P("x", None)
    a, b = hpd(n, np.float64, seed=9), rhs(n, np.float64, k=None)

    def solve(a, b):
        return tj.potrs(a, b, 2, mesh, row)

    def reference(a, b):
        return jnp.linalg.solve(jnp.triu(a) + jnp.triu(a, 1).T, b)

    for jac, arg in ((jax.jacfwd, 1), (jax.jacrev, 0)):  # each mode, each argument once
        got, want = jac(solve, arg)(a, b), jax.jit(jac(reference, arg))(a, b)
        assert np.abs(np.asarray(got) - np.asarray(want)).max() < 1e-10, (jac, arg)
    got = jax.hessian(lambda a: tj.potrs(a, b, 2, mesh, row, return_logdet=True)[1])(a)
    want = jax.jit(jax.hessian(lambda a: jnp.linalg.slogdet(jnp.triu(a) + jnp.triu(a, 1).T)[1]))(a)
    assert got.shape == (n, n, n, n)
    assert np.abs(np.asarray(got) - np.asarray(want)).max() < 1e-10


@pytest.mark.parametrize("dtype", [np.complex64])
def test_single_precision_gradients(dtype, devices):
    """Single precision (complex64: the single-precision kernels and the complex conventions at
    once; float64 above has the real ones): gradients through potrs (x and log det), lu_solve,
    syevd (values and vectors, phase-invariant), qr (phase-invariant) and gesvd's values as jax's
    own in the same precision, within its rounding (the double-precision tests above check the
    rules to order 2 against finite differences). Each gradient under jax.jit: one program
    compiled, not every operation of the rules apart."""
    mesh, n, row = make_mesh(devices, "auto"), 8, P("x", None)
    a, b = hpd(n, dtype, seed=4), rhs(n, dtype, k=2)
    g = a + np.triu(rhs(n, dtype, n, seed=3), 1).astype(dtype)
    t = rhs(n, dtype, 5, seed=5)
    w = np.random.default_rng(6).standard_normal((5, 5)).astype(np.float32)
    pairs = (  # (tessera's, jax's) scalar functions of one matrix argument
        (lambda a: jnp.sum(jnp.abs(tj.potrs(a, b, 4, mesh, row, return_logdet=True)[0]) ** 2)
         + tj.potrs(a, b, 4, mesh, row, return_logdet=True)[1],
         lambda a: jnp.sum(jnp.abs(jnp.linalg.solve(hermitian_of(a, False), b)) ** 2)
         + jnp.linalg.slogdet(hermitian_of(a, False))[1], a),
        (lambda g: jnp.sum(jnp.abs(tj.lu_solve(g, b, 4, mesh, row)) ** 2),
         lambda g: jnp.sum(jnp.abs(jnp.linalg.solve(g, b)) ** 2), g),
        (lambda a: (lambda w_, v: jnp.sum(w_ ** 3) + jnp.sum(jnp.abs(v[:, 0]) ** 2 * jnp.arange(n)))(
            *tj.syevd(a, 4, mesh, row)),
         lambda a: (lambda w_, v: jnp.sum(w_ ** 3) + jnp.sum(jnp.abs(v[:, 0]) ** 2 * jnp.arange(n)))(
            *jnp.linalg.eigh(hermitian_of(a, True))), a),
        (lambda t: (lambda q, r: jnp.sum(w * jnp.abs(r) ** 2) + jnp.sum(jnp.abs(q) ** 4))(
            *tj.qr(t, 4, mesh, row)),
         lambda t: (lambda q, r: jnp.sum(w * jnp.abs(r) ** 2) + jnp.sum(jnp.abs(q) ** 4))(
            *jnp.linalg.qr(t)), t),
        (lambda t: jnp.sum(tj.gesvd(t, 4, mesh, row, compute_u=False, compute_vh=False) ** 2
                           * jnp.arange(5)),
         lambda t: jnp.sum(jnp.linalg.svd(t, compute_uv=False) ** 2 * jnp.arange(5)), t))
    for ours, theirs, x in pairs:
        got, want = np.asarray(jax.jit(jax.grad(ours))(x)), np.asarray(reference_grad(theirs)(x))
        assert got.dtype == want.dtype == np.dtype(dtype)
        assert np.abs(got - want).max() < 2e-3 * max(1, np.abs(want).max()), (ours, theirs)


def test_grad_under_jit_reuses_one_factor(devices):
    """jax.grad of logdet(A) + bᵀA⁻¹b inside jit (the Gaussian process case): the factor made once
    under differentiation, every solve of the rules on it; the value and gradient as jax's."""
    mesh, n, dtype = make_mesh(devices, "auto"), 12, np.float64
    a, b = hpd(n, dtype, seed=4), rhs(n, dtype, k=None)

    @jax.jit
    def objective(a):
        x, ld = tj.potrs(a, b, 4, mesh, P("x", None), return_logdet=True)
        return ld + b @ x

    def reference(a):
        h = hermitian_of(a, False)
        return jnp.linalg.slogdet(h)[1] + b @ jnp.linalg.solve(h, b)

    assert abs(float(objective(a)) - float(reference(a))) < 1e-10
    assert np.abs(np.asarray(jax.grad(objective)(a) - reference_grad(reference)(a))).max() < 1e-10
    text = jax.jit(jax.grad(objective)).lower(a).as_text()
    # one factorization under differentiation (no potrs, which would factor again), its solves
    assert text.count("tessera_cholesky") == 1 and "tessera_potrs" not in text
    assert "tessera_cho_solve" in text


def test_explicit_mesh_refuses_with_a_sentence(devices):
    mesh, n = make_mesh(devices, "explicit"), 8
    a, b = hpd(n, np.float64), rhs(n, np.float64, k=None)
    with pytest.raises(NotImplementedError, match="Explicit axes"):
        jax.grad(lambda a: jnp.sum(tj.potrs(a, b, 4, mesh, P("x", None))))(a)
    with pytest.raises(NotImplementedError, match="tessera.jax.cholesky: .*Explicit axes"):
        jax.grad(lambda a: jnp.sum(tj.cholesky(a, 4, mesh, P("x", None))))(a)
    with pytest.raises(NotImplementedError, match="tessera.jax.lu_solve: .*Explicit axes"):
        jax.grad(lambda a: jnp.sum(tj.lu_solve(a, b, 4, mesh, P("x", None))))(a)
    with pytest.raises(NotImplementedError, match="tessera.jax.qr: .*Explicit axes"):
        jax.grad(lambda a: jnp.sum(tj.qr(a, 4, mesh, P("x", None))[1]))(a)
    with pytest.raises(NotImplementedError, match="tessera.jax.gesvd: .*Explicit axes"):
        jax.grad(lambda a: jnp.sum(tj.gesvd(a, 4, mesh, P("x", None))[0]))(a)
    with pytest.raises(NotImplementedError, match="tessera.jax.least_squares: .*Explicit axes"):
        jax.grad(lambda a: jnp.sum(tj.least_squares(a, b, 4, mesh, P("x", None))))(a)


@pytest.mark.parametrize("dtype,lower", CASES, ids=IDS)
def test_shardmap_forms_derivatives(dtype, lower, devices):
    """potrs_shardmap_ctx (x and the log det), cholesky_shardmap_ctx,
    potri_shardmap_ctx, lu_solve_shardmap_ctx, syevd_shardmap_ctx (its eigenvalues), and (complex
    case) qr_shardmap_ctx (reduced and mode "r") and least_squares_shardmap_ctx inside
    jax.shard_map on a 1D mesh: orders 1 both ways (2 in reverse for the log det), and the
    gradients of Σ|x|² + log det, of lu_solve's and least squares' Σ|x|², of a function of the
    eigenvalues and of the first eigenvector's moduli, and of a phase-invariant function of Q and
    R as jax's own (a 2 x 2 mesh: the next test)."""
    mesh, n = make_mesh(devices[:2], "auto"), 8
    a, b = skewed(hpd(n, dtype, seed=4), lower), rhs(n, dtype, k=2)
    row = P("x", None)

    def smap(body, in_specs, out_specs):  # made once and jitted: each form compiles once
        return jax.jit(jax.shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=out_specs))

    solve = smap(lambda a_, b_: tj.potrs_shardmap_ctx(a_, b_, 4, lower=lower)[0], (row, P()), P())
    logdet_of = smap(lambda a_: tj.potrs_shardmap_ctx(a_, b, 4, lower=lower,
                                                      return_logdet=True)[1], (row,), P())

    def logdet(a):
        return logdet_of(a)[0]

    factor = smap(lambda a_: tj.cholesky_shardmap_ctx(a_, 4, lower=lower)[0], (row,), row)
    inverse = smap(lambda a_: tj.potri_shardmap_ctx(a_, 4, lower=lower)[0], (row,), row)
    g = a + np.triu(rhs(n, dtype, n, seed=3), 1).astype(dtype)  # general: lu_solve's A
    lu = smap(lambda g_, b_: tj.lu_solve_shardmap_ctx(g_, b_, 4)[0], (row, row), row)

    for f, args in ((solve, (a, b)), (factor, (a,)), (inverse, (a,)), (lu, (g, b))):
        check_grads(f, args, order=1, modes=["fwd", "rev"], atol=1e-5, rtol=1e-5)
    eig_of = smap(lambda a_: tj.syevd_shardmap_ctx(a_, 4), (row,), (P(), row, P()))

    def eig(a):  # syevd reads the lower triangle: on a Hermitian a, the spectrum's gradient
        w, v, _ = eig_of(a)
        return jnp.sum(w ** 3) + jnp.sum(jnp.abs(v[:, 0]) ** 2 * jnp.arange(n))

    h = np.asarray(hermitian_of(a, lower))
    check_grads(smap(lambda a_: tj.syevd_shardmap_ctx(a_, 4)[0], (row,), P()),
                (h,), order=1, modes=["fwd", "rev"], atol=1e-5, rtol=1e-5)
    def eig_reference(a):  # on the Hermitian matrix of the lower triangle, as tessera reads it
        w, v = jnp.linalg.eigh(hermitian_of(a, True))
        return jnp.sum(w ** 3) + jnp.sum(jnp.abs(v[:, 0]) ** 2 * jnp.arange(n))

    want = reference_grad(eig_reference)(h)
    assert np.abs(np.asarray(jax.grad(eig)(h)) - np.asarray(want)).max() < 1e-8
    if lower:  # qr_shardmap_ctx and least_squares_shardmap_ctx, once (complex), M > N
        t = (np.random.default_rng(5).standard_normal((n, 5)) + 1j).astype(dtype)

        qr_of = {mode: smap(lambda t_, mode=mode: tj.qr_shardmap_ctx(t_, 4, mode=mode), (row,),
                            (row, P(), P()) if mode == "reduced" else (P(), P()))
                 for mode in ("reduced", "r")}

        def qr(t, mode="reduced"):
            return qr_of[mode](t)[:-1]

        lstsq = smap(lambda t_, b_: tj.least_squares_shardmap_ctx(t_, b_, 4)[0], (row, row), P())

        check_grads(qr, (t,), order=1, modes=["fwd", "rev"], atol=1e-5, rtol=1e-5)
        check_grads(lstsq, (t, b), order=1, modes=["fwd", "rev"], atol=1e-5, rtol=1e-5)
        w = np.random.default_rng(6).standard_normal((5, 5))

        def invariant(q, r):  # no column's phase changes it
            return jnp.sum(w * jnp.abs(r) ** 2) + jnp.sum(jnp.abs(q) ** 4)

        got = jax.grad(lambda t: invariant(*qr(t)))(t)
        want = reference_grad(lambda t: invariant(*jnp.linalg.qr(t)))(t)
        assert np.abs(np.asarray(got) - np.asarray(want)).max() < 1e-10
        got = jax.grad(lambda t: jnp.sum(w[0] * jnp.abs(qr(t, "r")[0][0]) ** 2))(t)  # R alone
        want = reference_grad(lambda t: jnp.sum(w[0] * jnp.abs(jnp.linalg.qr(t)[1][0]) ** 2))(t)
        assert np.abs(np.asarray(got) - np.asarray(want)).max() < 1e-10
        got = jax.grad(lambda t: jnp.sum(jnp.abs(lstsq(t, b)) ** 2))(t)
        want = reference_grad(lambda t: jnp.sum(jnp.abs(jnp.linalg.lstsq(t, b)[0]) ** 2))(t)
        assert np.abs(np.asarray(got) - np.asarray(want)).max() < 1e-10
    got = jax.grad(lambda g, b: jnp.sum(jnp.abs(lu(g, b)) ** 2), (0, 1))(g, b)
    want = reference_grad(lambda g, b: jnp.sum(jnp.abs(jnp.linalg.solve(g, b)) ** 2), (0, 1))(g, b)
    for gg, w in zip(got, want):  # relative: an ill-conditioned g makes them large
        assert np.abs(np.asarray(gg) - np.asarray(w)).max() < 1e-12 * np.abs(np.asarray(w)).max()
    check_grads(logdet, (a,), order=2, modes=["rev"], atol=1e-5, rtol=1e-5)

    def loss(a, b):
        return jnp.sum(jnp.abs(solve(a, b)) ** 2) + logdet(a)

    def reference(a, b):
        h = hermitian_of(a, lower)
        return jnp.sum(jnp.abs(jnp.linalg.solve(h, b)) ** 2) + jnp.linalg.slogdet(h)[1]

    got, want = jax.grad(loss, (0, 1))(a, b), reference_grad(reference, (0, 1))(a, b)
    for g, w in zip(got, want):
        assert np.abs(np.asarray(g) - np.asarray(w)).max() < 1e-10


def test_shardmap_forms_derivatives_2d(devices):
    """On a 2 x 2 mesh, A in blocks: potrs_shardmap_ctx's x forward and reverse against finite
    differences, and the gradients through potrs_shardmap_ctx (Σ|x|² + log det),
    cholesky_shardmap_ctx, potri_shardmap_ctx, lu_solve_shardmap_ctx and syevd_shardmap_ctx as
    jax's own (complex, the upper triangle), and through qr_shardmap_ctx and
    least_squares_shardmap_ctx (gesvd's and polar's: test_jax_svd.py)."""
    if len(devices) < 4:
        pytest.skip("a 2 x 2 mesh needs 4 devices")
    grid, n, lower = jax.sharding.Mesh(np.array(devices[:4]).reshape(2, 2), ("x", "y")), 8, False
    dtype, blk = np.complex128, P("x", "y")
    a, b = skewed(hpd(n, dtype, seed=4), lower), rhs(n, dtype, k=2)
    w = jnp.asarray(np.random.default_rng(8).standard_normal((n, n)))

    def smap(body, in_specs, out_specs):  # made once and jitted: each form compiles once
        return jax.jit(jax.shard_map(body, mesh=grid, in_specs=in_specs, out_specs=out_specs))

    solve = smap(lambda a_, b_: tj.potrs_shardmap_ctx(a_, b_, 4, lower=lower)[0], (blk, P()), P())
    both = smap(lambda a_, b_: tj.potrs_shardmap_ctx(a_, b_, 4, lower=lower, return_logdet=True),
                (blk, P()), (P(), P(), P()))

    def loss(a, b):
        x, logdet, _ = both(a, b)
        return jnp.sum(jnp.abs(x) ** 2) + logdet[0]

    def reference(a, b):
        h = hermitian_of(a, lower)
        return jnp.sum(jnp.abs(jnp.linalg.solve(h, b)) ** 2) + jnp.linalg.slogdet(h)[1]

    check_grads(solve, (a, b), order=1, modes=["fwd", "rev"], atol=1e-5, rtol=1e-5)
    for got, want in zip(jax.grad(loss, (0, 1))(a, b), reference_grad(reference, (0, 1))(a, b)):
        assert np.abs(np.asarray(got) - np.asarray(want)).max() < 1e-10

    factor = smap(lambda a_: tj.cholesky_shardmap_ctx(a_, 4, lower=lower)[0], (blk,), blk)
    inverse = smap(lambda a_: tj.potri_shardmap_ctx(a_, 4, lower=lower)[0], (blk,), blk)

    pairs = ((factor, lambda a: jnp.linalg.cholesky(hermitian_of(a, lower)).conj().T),
             (inverse, lambda a: jnp.triu(jnp.linalg.inv(hermitian_of(a, lower)))))
    for ours, theirs in pairs:  # under one jit: the blocks' layout stays inside it
        got = jax.jit(jax.grad(lambda a: jnp.sum(w * jnp.abs(ours(a)) ** 2)))(a)
        want = reference_grad(lambda a: jnp.sum(w * jnp.abs(theirs(a)) ** 2))(a)
        assert np.abs(np.asarray(got) - np.asarray(want)).max() < 1e-10

    g = a + np.triu(rhs(n, dtype, n, seed=3), 1).astype(dtype)  # general: lu_solve's A

    lu = smap(lambda g_, b_: tj.lu_solve_shardmap_ctx(g_, b_, 4)[0], (blk, P()), P())

    got = jax.grad(lambda g, b: jnp.sum(jnp.abs(lu(g, b)) ** 2), (0, 1))(g, b)
    want = reference_grad(lambda g, b: jnp.sum(jnp.abs(jnp.linalg.solve(g, b)) ** 2), (0, 1))(g, b)
    for gg, ww in zip(got, want):
        assert np.abs(np.asarray(gg) - np.asarray(ww)).max() < 1e-12 * np.abs(np.asarray(ww)).max()

    eig_of = smap(lambda a_: tj.syevd_shardmap_ctx(a_, 4), (blk,), (P(), blk, P()))

    def eig(a):  # syevd reads the lower triangle
        ev, v, _ = eig_of(a)
        return jnp.sum(ev ** 3) + jnp.sum(jnp.abs(v[:, 0]) ** 2 * jnp.arange(n))

    def eig_reference(a):
        ev, v = jnp.linalg.eigh(hermitian_of(a, True))
        return jnp.sum(ev ** 3) + jnp.sum(jnp.abs(v[:, 0]) ** 2 * jnp.arange(n))

    h = np.asarray(hermitian_of(a, lower))
    want = reference_grad(eig_reference)(h)
    assert np.abs(np.asarray(jax.jit(jax.grad(eig))(h)) - np.asarray(want)).max() < 1e-8
    t = (np.random.default_rng(5).standard_normal((n, 4)) + 1j).astype(dtype)  # M > N: blocks 4 x 2
    qr_2d = smap(lambda t_: tj.qr_shardmap_ctx(t_, 2)[:2], (blk,), (P("x"), P()))
    lstsq_2d = smap(lambda t_, b_: tj.least_squares_shardmap_ctx(t_, b_, 2)[0], (blk, P()), P())
    v = np.random.default_rng(6).standard_normal((4, 4))

    def invariant(q, r):  # no column's phase changes it
        return jnp.sum(v * jnp.abs(r) ** 2) + jnp.sum(jnp.abs(q) ** 4)

    got = jax.jit(jax.grad(lambda t: invariant(*qr_2d(t))))(t)
    want = reference_grad(lambda t: invariant(*jnp.linalg.qr(t)))(t)
    assert np.abs(np.asarray(got) - np.asarray(want)).max() < 1e-10
    got = jax.jit(jax.grad(lambda t: jnp.sum(jnp.abs(lstsq_2d(t, b)) ** 2)))(t)
    want = reference_grad(lambda t: jnp.sum(jnp.abs(jnp.linalg.lstsq(t, b)[0]) ** 2))(t)
    assert np.abs(np.asarray(got) - np.asarray(want)).max() < 1e-10
