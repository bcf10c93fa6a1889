"""jax.vmap through tessera.jax (issue 50's batches): every routine over a leading batch axis (one
FFI call per device with the whole batch: the members one after another, or on one device and
one tile as one batched solve), eagerly and under jit, with an argument left unbatched, a member
that fails alone, vmap of jax.grad, and the calls inside a loop's body (lax.map, lax.scan), whose
aliased buffers XLA may give their own memory. Against numpy per member. Fixtures and helpers in
jax_support.py."""
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


def test_one_device_batch(devices):
    """On one device and one tile the Cholesky solves of the batch run as one batched call
    (tessera_queue_posv_batch); a member not positive definite gets its info alone."""
    mesh = make_mesh(devices[:1], "auto")
    a, b = batch("hpd"), np.random.default_rng(7).standard_normal((B, N))
    a[2, 3, 3] = -50.0
    f = jax.jit(jax.vmap(lambda a, b: tj.potrs(a, b, N, mesh, S, return_logdet=True,
                                               return_status=True)))
    x, ld, status = f(a, b)
    assert list(np.asarray(status)) == [0, 0, 4]
    near(x[:2], np.linalg.solve(a[:2], b[:2, :, None])[..., 0])
    near(ld[:2], np.linalg.slogdet(a[:2])[1])
    assert np.isnan(np.asarray(x)[2]).all() and np.isnan(np.asarray(ld)[2])
    c = jax.jit(jax.vmap(lambda a: tj.cholesky(a, N, mesh, S, lower=True)))(a[:2])
    near(c, np.linalg.cholesky(a[:2]))


def test_in_a_loop(devices):
    """The solve in a loop's body, over several devices and on one (the queued call)."""
    a, b = batch("hpd"), np.random.default_rng(9).standard_normal((B, N))
    want = np.linalg.solve(a, b[..., None])[..., 0]
    for mesh, tile in ((make_mesh(devices, "auto"), 4), (make_mesh(devices[:1], "auto"), N)):
        def one(ab):
            return tj.potrs(ab[0], ab[1], tile, mesh, S)
        near(jax.jit(lambda a, b: jax.lax.map(one, (a, b)))(a, b), want)

        def step(carry, ab):
            return carry + 1, one(ab)
        near(jax.jit(lambda a, b: jax.lax.scan(step, 0, (a, b))[1])(a, b), want)


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
    # jax's own, jitted: one compiled program rather than one compilation per operation run
    # eagerly
    near(got, np.asarray(jax.jit(jax.vmap(jax.grad(reference)))(a, b)))


def test_shardmap_form_batch(devices):
    """jax.vmap inside jax.shard_map of potrs_shardmap_ctx: each device's call holds the batch of
    its row blocks; statuses per member and device."""
    mesh = make_mesh(devices[:2], "auto")
    a, b = batch("hpd"), np.random.default_rng(13).standard_normal((B, N))
    a[1, 2, 2] = -40.0

    def body(a_, b_):
        return jax.vmap(lambda a1, b1: tj.potrs_shardmap_ctx(a1, b1, 4))(a_, b_)

    f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P(None, "x", None), P()),
                              out_specs=(P(), P(None, "x"))))
    x, status = f(a, b)
    assert np.asarray(status).shape == (B, 2)
    assert (np.asarray(status)[[0, 2]] == 0).all() and (np.asarray(status)[1] == 3).all()
    near(np.asarray(x)[[0, 2]], np.linalg.solve(a[[0, 2]], b[[0, 2], :, None])[..., 0])
    assert np.isnan(np.asarray(x)[1]).all()
