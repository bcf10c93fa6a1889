"""jax.vmap through tessera.jax (issue 50's batches): every routine over a leading batch axis,
each member solved by the routine's call in turn (the handlers' FFI calls batch sequentially),
eagerly and under jit, with an argument left unbatched, a member that fails alone, and vmap of
jax.grad. Against numpy per member. Fixtures and helpers in jax_support.py."""
import numpy as np

from jax_support import *  # noqa: F401,F403  (fixtures, helpers, jax, tj)
from jax_support import P, hpd, jax, jnp, make_mesh, tj

B, N = 3, 10
S = P("x", None)


def batch(kind, dtype=np.float64):
    """B matrices of order N: Hermitian positive definite ('hpd') or general nonsingular."""
    if kind == "hpd":
        return np.stack([hpd(N, dtype, seed=s) for s in range(B)])
    rng = np.random.default_rng(11)
    return (rng.standard_normal((B, N, N)) + N * np.eye(N)).astype(dtype)


def near(got, want, scale=1e-10):
    assert np.abs(np.asarray(got) - want).max() < scale, np.abs(np.asarray(got) - want).max()


def test_solves_and_factors(devices):
    """Under jit (the other tests call vmap eagerly)."""
    mesh = make_mesh(devices, "auto")
    a, g = batch("hpd"), batch("general")
    b = np.random.default_rng(3).standard_normal((B, N))
    wrap = jax.jit
    x = wrap(jax.vmap(lambda a, b: tj.potrs(a, b, 4, mesh, S)))(a, b)
    near(x, np.linalg.solve(a, b[..., None])[..., 0])
    x = wrap(jax.vmap(lambda a: tj.potrs(a, b[0], 4, mesh, S), in_axes=0))(a)  # b unbatched
    near(x, np.linalg.solve(a, b[0]))
    x = wrap(jax.vmap(lambda g, b: tj.lu_solve(g, b, 4, mesh, S)))(g, b)
    near(x, np.linalg.solve(g, b[..., None])[..., 0])
    c = wrap(jax.vmap(lambda a: tj.cholesky(a, 4, mesh, S, lower=True)))(a)
    near(c, np.linalg.cholesky(a))
    x = wrap(jax.vmap(lambda c, b: tj.cho_solve((c, True), b, 4, mesh, S)))(c, b)
    near(x, np.linalg.solve(a, b[..., None])[..., 0])
    near(wrap(jax.vmap(lambda a: tj.potri(a, 4, mesh, S)))(a), np.linalg.inv(a))


def test_spectral_and_qr(devices):
    mesh = make_mesh(devices, "auto")
    a, g = batch("hpd", np.complex128), batch("general")
    w, v = jax.vmap(lambda a: tj.syevd(a, 4, mesh, S))(a)
    near(w, np.linalg.eigvalsh(a))
    near(np.asarray(v) * np.asarray(w)[:, None, :], a @ np.asarray(v))
    q, r = jax.vmap(lambda g: tj.qr(g, 4, mesh, S))(g)
    near(np.asarray(q) @ np.asarray(r), g)


def test_a_failing_member_fails_alone(devices):
    """A member that is not positive definite gets its LAPACK info and NaN; the others solve."""
    mesh = make_mesh(devices, "auto")
    a = batch("hpd")
    a[1, 4, 4] = -100.0
    b = np.ones((B, N))
    x, status = jax.vmap(lambda a, b: tj.potrs(a, b, 4, mesh, S, return_status=True))(a, b)
    assert list(np.asarray(status)) == [0, 5, 0]
    assert np.isnan(np.asarray(x)[1]).all()
    near(np.asarray(x)[[0, 2]], np.linalg.solve(a[[0, 2]], b[[0, 2], :, None])[..., 0])


def test_vmap_of_grad(devices):
    """The Gaussian-process objective's gradient for each member, as jax's own."""
    mesh = make_mesh(devices, "auto")
    a, b = batch("hpd"), np.random.default_rng(5).standard_normal((B, N))

    def objective(a, b):
        x, ld = tj.potrs(a, b, 4, mesh, S, return_logdet=True)
        return ld + b @ x

    def reference(a, b):  # the Hermitian matrix potrs reads (its upper triangle)
        t = jnp.triu(a, 1)
        h = t + t.T + jnp.diag(jnp.diagonal(a))
        return jnp.linalg.slogdet(h)[1] + b @ jnp.linalg.solve(h, b)

    got = jax.jit(jax.vmap(jax.grad(objective)))(a, b)
    near(got, np.asarray(jax.vmap(jax.grad(reference))(a, b)))
