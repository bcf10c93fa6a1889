"""tessera.jax.polar, gesvd and their shardmap forms (jaxmg 1.4's polar and gesvd) against
numpy.linalg.svd, on the devices of test_jax.py (jax_support.py: 4 CPU devices unless jax has
GPUs), on meshes of 1 and 4 devices and a 2 x 2 one.

Matrices: random, of every dtype; tall, square and wide; shapes that split over the mesh and
shapes that are padded; n = 1. Checks, with ε A's precision's machine epsilon and K = min(M, N):
‖A − U_p H‖_F / (‖A‖_F max(M, N) ε), ‖A − U diag(s) Vᴴ‖_F likewise, ‖I − Uᴴ U‖_F / (K ε) (and
V's), H Hermitian, max |sᵢ − sᵢ(numpy)| / (‖A‖_2 max(M, N) ε), all below 10."""
from jax_support import *  # noqa: F401,F403  (fixtures, helpers, jax, tj)

MESH2 = P("x", "y")
THRESHOLD = 10


def matrix(m, n, dtype, seed=0):
    return randn(np.random.default_rng(seed), (m, n), dtype).astype(dtype)


def eps(dtype):
    return np.finfo(dtype).eps


def layout(devices, kind):
    """(mesh, spec) of a case: "1dev", "4dev" (1D) or "2x2"."""
    if kind == "2x2":
        return square_mesh(devices), MESH2
    ndev = 1 if kind == "1dev" else 4
    if ndev > len(devices):
        pytest.skip(f"needs {ndev} devices")
    return mesh_of(devices, ndev), ROW


def placed(a, mesh, spec):
    """a sharded as spec where it splits evenly over the mesh, else a host array."""
    even = all(ax is None or a.shape[i] % mesh.shape[ax] == 0 for i, ax in enumerate(spec))
    return put(a, mesh, spec) if even else a


def check_orthonormal(x, k, dtype):
    x = hi(x)
    assert np.linalg.norm(x.conj().T @ x - np.eye(k)) / (k * eps(dtype)) < THRESHOLD


def check_polar(u, h, a):
    m, n = a.shape
    e = eps(a.dtype)
    assert u.shape == (m, n) and h.shape == (n, n) and u.dtype == a.dtype
    uh, hh, ah = hi(u), hi(h), hi(a)
    assert np.linalg.norm(ah - uh @ hh) / (np.linalg.norm(ah) * max(m, n) * e) < THRESHOLD
    assert np.linalg.norm(hh - hh.conj().T) <= THRESHOLD * n * e * np.linalg.norm(hh)
    assert np.linalg.eigvalsh((hh + hh.conj().T) / 2).min() > -THRESHOLD * n * e * \
        np.linalg.norm(ah, 2)
    check_orthonormal(uh, n, a.dtype)


def check_values(s, a):
    m, n = a.shape
    s = np.asarray(s)
    assert s.dtype == np.finfo(a.dtype).dtype and s.shape == (min(m, n),)
    assert np.all(np.diff(s) <= 0), "singular values must come in descending order"
    ref = np.linalg.svd(hi(a), compute_uv=False)
    scale = (ref[0] if ref.size else 1) * max(m, n) * eps(a.dtype)
    assert np.abs(hi(s) - ref).max(initial=0) / scale < THRESHOLD


def check_svd(s, u, vh, a):
    m, n = a.shape
    k = min(m, n)
    check_values(s, a)
    assert u.dtype == a.dtype and vh.dtype == a.dtype
    uh, vhh = hi(u), hi(vh)
    assert uh.shape[0] == m and vhh.shape[1] == n
    r = (uh[:, :k] * hi(s)) @ vhh[:k]
    assert np.linalg.norm(hi(a) - r) / (np.linalg.norm(hi(a)) * max(m, n) * eps(a.dtype)) < \
        THRESHOLD
    check_orthonormal(uh, uh.shape[1], a.dtype)
    check_orthonormal(vhh.conj().T, vhh.shape[0], a.dtype)


# ------------------------------------------------------------------ dtype x shape x layout

CASES = [((16, 16), "4dev"), ((37, 13), "2x2"), ((29, 29), "1dev"), ((13, 37), "4dev"),
         ((1, 1), "4dev"), ((48, 12), "4dev")]
CASE = pytest.mark.parametrize("shape,kind", CASES,
                               ids=[f"{m}x{n}-{k}" for (m, n), k in CASES])


@CASE
@DTYPE
def test_matches_numpy(dtype, shape, kind, devices):
    mesh, spec = layout(devices, kind)
    a = matrix(*shape, dtype)
    x = placed(a, mesh, spec)
    if shape[0] >= shape[1]:
        u, h, status = tj.polar(x, 4, mesh, spec, return_status=True)
        assert status.shape == () and int(status) == 0
        check_polar(np.asarray(u), np.asarray(h), a)
        if x is not a:
            assert sharded_like(u, mesh, spec) and sharded_like(h, mesh, spec)
    s, u, vh, status = tj.gesvd(x, 4, mesh, spec, return_status=True)
    assert int(status) == 0
    check_svd(s, u, vh, a)
    assert sharded_like(s, mesh, P()) or len(devices) == 1


@pytest.mark.parametrize("shape", [(20, 8), (8, 20), (12, 12)])
def test_flags_and_full_matrices(shape, devices):
    """compute_h, compute_u / compute_vh (values alone when neither), full_matrices (a unitary U
    or V completing the economy one)."""
    mesh = mesh_of(devices, len(devices))
    a = matrix(*shape, np.complex128, seed=2)
    m, n = shape
    if m >= n:
        u = tj.polar(a, 4, mesh, ROW, compute_h=False)
        check_polar(np.asarray(u), np.asarray(tj.polar(a, 4, mesh, ROW)[1]), a)
    s = tj.gesvd(a, 4, mesh, ROW, compute_u=False, compute_vh=False)
    check_values(s, a)
    s2, u = tj.gesvd(a, 4, mesh, ROW, compute_vh=False)
    s3, vh = tj.gesvd(a, 4, mesh, ROW, compute_u=False)
    assert u.shape == (m, min(m, n)) and vh.shape == (min(m, n), n)
    np.testing.assert_allclose(np.asarray(s), np.asarray(s2), atol=1e-12 * np.asarray(s)[0])
    s, u, vh = tj.gesvd(a, 4, mesh, ROW, full_matrices=True)
    assert u.shape == (m, m) and vh.shape == (n, n)
    check_svd(s, u, vh, a)


def test_jit_form(mesh, devices):
    """Inside jax.jit with mesh and in_specs given, on Explicit and Auto meshes."""
    a = matrix(8 * len(devices), 6, np.float64, seed=3)
    u, h = jax.jit(lambda a_: tj.polar(a_, 4, mesh, ROW))(put(a, mesh, ROW))
    check_polar(np.asarray(u), np.asarray(h), a)
    s, u, vh = jax.jit(lambda a_: tj.gesvd(a_, 4, mesh, ROW))(a)
    check_svd(s, u, vh, a)


# ----------------------------------------------------------------- inside the user's shard_map


@pytest.mark.parametrize("kind", ["4dev", "2x2"])
def test_shardmap_forms(kind, devices):
    mesh, spec = layout(devices, kind)
    a = matrix(24, 8, np.float32, seed=4)
    col = P("x") if spec == ROW else P(("x", "y"))
    u, h, st = jax.jit(jax.shard_map(lambda a_: tj.polar_shardmap_ctx(a_, 4), mesh=mesh,
                                     in_specs=spec, out_specs=(spec, spec, col)))(
        put(a, mesh, spec))
    assert (np.asarray(st) == 0).all()
    check_polar(np.asarray(u), np.asarray(h), a)
    s, u, vh, st = jax.jit(jax.shard_map(lambda a_: tj.gesvd_shardmap_ctx(a_, 4), mesh=mesh,
                                         in_specs=spec, out_specs=(P(), spec, spec, col)))(
        put(a, mesh, spec))
    assert (np.asarray(st) == 0).all()
    check_svd(s, u, vh, a)
    s, st = jax.shard_map(lambda a_: tj.gesvd_shardmap_ctx(a_, 4, compute_u=False,
                                                           compute_vh=False),
                          mesh=mesh, in_specs=spec, out_specs=(P(), col))(put(a, mesh, spec))
    check_values(s, a)
    # derivatives, on either mesh as the global forms' (the values, U's and H's moduli: no
    # column's phase changes them)
    a = matrix(24, 8, np.float64, seed=4)
    w = np.random.default_rng(2).standard_normal((24, 8))

    def values(a):
        return jax.shard_map(lambda a_: tj.gesvd_shardmap_ctx(a_, 4, compute_u=False,
                                                              compute_vh=False)[0],
                             mesh=mesh, in_specs=spec, out_specs=P())(a)

    def svd_loss(a):
        s, u, _, _ = jax.shard_map(lambda a_: tj.gesvd_shardmap_ctx(a_, 4), mesh=mesh,
                                   in_specs=spec, out_specs=(P(), spec, spec, col))(a)
        return jnp.sum(s ** 2 * jnp.arange(8)) + jnp.sum(w * jnp.abs(u) ** 4)

    def polar_loss(a):
        u, h, _ = jax.shard_map(lambda a_: tj.polar_shardmap_ctx(a_, 4), mesh=mesh,
                                in_specs=spec, out_specs=(spec, spec, col))(a)
        return jnp.sum(w * u) + jnp.sum(h[:, :4] ** 2)

    gmesh = mesh_of(devices, len(devices), "auto")

    def svd_global(a):
        s, u, _ = tj.gesvd(a, 4, gmesh, ROW)
        return jnp.sum(s ** 2 * jnp.arange(8)) + jnp.sum(w * jnp.abs(u) ** 4)

    def polar_global(a):
        u, h = tj.polar(a, 4, gmesh, ROW)
        return jnp.sum(w * u) + jnp.sum(h[:, :4] ** 2)

    def values_global(a):
        return tj.gesvd(a, 4, gmesh, ROW, compute_u=False, compute_vh=False)

    for local, glob in ((lambda a: jnp.sum(values(a) * jnp.arange(8)),
                         lambda a: jnp.sum(values_global(a) * jnp.arange(8))),
                        (svd_loss, svd_global), (polar_loss, polar_global)):
        got = np.asarray(jax.jit(jax.grad(local))(put(a, mesh, spec)))
        want = np.asarray(jax.grad(glob)(a))
        assert np.abs(got - want).max() < 1e-9 * max(1, np.abs(want).max())


# ------------------------------------------------------------- failures: status and NaN


@pytest.mark.parametrize("form", ["global", "shardmap"])
def test_nan_gives_its_column_and_nan(form, devices):
    """A NaN or an infinity in column j: status j + 1 on every device, the results all NaN; a
    call after it succeeds."""
    mesh = mesh_of(devices, len(devices))
    for dtype, (i, j), bad in ((np.float64, (3, 2), np.nan), (np.complex64, (0, 5), np.inf)):
        a = matrix(16, 8, dtype, seed=5)
        a[i, j] = bad
        if form == "global":
            u, h, st = tj.polar(a, 4, mesh, ROW, return_status=True)
            s, u2, vh, st2 = tj.gesvd(a, 4, mesh, ROW, return_status=True)
            assert int(st) == j + 1 and int(st2) == j + 1
            assert_all_nan(u, h, s, u2, vh)
        else:
            u, h, st = jax.jit(jax.shard_map(lambda a_: tj.polar_shardmap_ctx(a_, 4), mesh=mesh,
                                             in_specs=ROW, out_specs=(ROW, ROW, P("x"))))(
                put(a, mesh, ROW))
            assert (np.asarray(st) == j + 1).all()
            assert_all_nan(u, h)
    assert "NaN" in tj.status_message(3, op="gesvd")
    good = matrix(16, 6, np.float64, seed=6)
    check_polar(*map(np.asarray, tj.polar(good, 4, mesh, ROW)), good)


def test_argument_errors(devices):
    mesh = mesh_of(devices, len(devices))
    with pytest.raises(ValueError, match="M >= N"):
        tj.polar(matrix(4, 8, np.float64), 4, mesh, ROW)
    with pytest.raises(TypeError, match="compute_h must be a Python bool"):
        tj.polar(matrix(8, 4, np.float64), 4, mesh, ROW, compute_h=1)
    with pytest.raises(TypeError, match="full_matrices must be a Python bool"):
        tj.gesvd(matrix(8, 4, np.float64), 4, mesh, ROW, full_matrices=None)
    with pytest.raises(TypeError, match="not supported"):
        tj.gesvd(np.zeros((4, 4), np.int32), 4, mesh, ROW)
    with pytest.raises(ValueError, match="T_A"):
        tj.gesvd(matrix(8, 4, np.float64), 0, mesh, ROW)
    if len(devices) == 4:
        with pytest.raises(ValueError, match="M >= N"):
            jax.shard_map(lambda a_: tj.polar_shardmap_ctx(a_, 4), mesh=mesh, in_specs=ROW,
                          out_specs=(ROW, ROW, P("x")))(put(matrix(8, 12, np.float64), mesh, ROW))
        with pytest.raises(ValueError, match="full_matrices=True"):
            jax.shard_map(lambda a_: tj.gesvd_shardmap_ctx(a_, 4, full_matrices=True), mesh=mesh,
                          in_specs=ROW, out_specs=(P(), ROW, ROW, P("x")))(
                put(matrix(16, 4, np.float64), mesh, ROW))


def test_empty(devices):
    mesh = mesh_of(devices, len(devices))
    s, u, vh = tj.gesvd(np.zeros((0, 0), np.float64), 4, mesh, ROW)
    assert s.shape == (0,) and u.shape == (0, 0) and vh.shape == (0, 0)
    u, h = tj.polar(np.zeros((4 * len(devices), 0), np.float32), 4, mesh, ROW)
    assert u.shape == (4 * len(devices), 0) and h.shape == (0, 0)
