"""tessera.jax.syevd and syevd_shardmap_ctx (jaxmg's syevd) against numpy.linalg.eigh, on the
devices of test_jax.py (jax_support.py: 4 CPU devices unless jax has GPUs), on meshes of 1 and 4
devices and a 2 x 2 one.

Matrices: A = Q diag(λ) Qᴴ with Q random unitary and λ evenly spread over [-1, 4] (eigenvalues
well separated, so that each eigenvector is unique up to a unit factor), of every dtype. Checks,
as the `tessera syevd` command's (below 10 passes), with ε A's precision's machine epsilon:
max |wᵢ − wᵢ(numpy)| / (‖A‖_F n ε), ‖A V − V diag(w)‖_F / (‖A‖_F n ε), ‖I − Vᴴ V‖_F / (n ε), and
each column of V numpy's up to a unit factor. Orders: a multiple of the devices and not (A
padded), n = 1, and n = 150 (three of the eigensolver's tiles of 64 on CPUs). Only A's lower
triangle is read: the strictly upper one holds NaN in some tests."""
from jax_support import *  # noqa: F401,F403  (fixtures, helpers, jax, tj)

MESH2 = P("x", "y")
THRESHOLD = 10


def matrix(n, dtype, seed=0, upper=None):
    """Q diag(λ) Qᴴ, λ evenly spread over [-1, 4]; with `upper`, that value in the strictly upper
    triangle (which syevd never reads)."""
    q, _ = np.linalg.qr(randn(np.random.default_rng(seed), (n, n), dtype))
    a = (q * np.linspace(-1, 4, n)) @ q.conj().T
    a = ((a + a.conj().T) / 2).astype(dtype)
    if upper is not None:
        a[np.triu_indices(n, 1)] = upper
    return a


def hermitian(a):
    """The Hermitian matrix whose lower triangle `a` holds, in double precision."""
    low = np.tril(hi(a))
    return low + np.tril(low, -1).conj().T


def eps(dtype):
    return np.finfo(dtype).eps


def check_values(w, a):
    """w: the eigenvalues of the Hermitian matrix whose lower triangle a holds, ascending, in
    a's real dtype, as numpy's."""
    n, h, w = a.shape[0], hermitian(a), np.asarray(w)
    assert w.dtype == np.finfo(a.dtype).dtype and w.shape == (n,)
    assert np.all(np.diff(w) >= 0), "eigenvalues must come in ascending order"
    scale = np.linalg.norm(h) * n * eps(a.dtype)
    assert np.abs(hi(w) - np.linalg.eigvalsh(h)).max() / scale < THRESHOLD


def check_eig(out, a):
    """out = (w, V) is an eigendecomposition of the Hermitian matrix whose lower triangle a holds,
    as numpy's."""
    w, v = map(np.asarray, out)
    n = a.shape[0]
    assert v.dtype == a.dtype and v.shape == (n, n)
    check_values(w, a)
    h, vh, e = hermitian(a), hi(v), eps(a.dtype)
    assert np.linalg.norm(h @ vh - vh * hi(w)) / (np.linalg.norm(h) * n * e) < THRESHOLD
    assert np.linalg.norm(vh.conj().T @ vh - np.eye(n)) / (n * e) < THRESHOLD
    _, ref = np.linalg.eigh(h)
    phase = np.sum(ref.conj() * vh, axis=0)  # each column's unit factor against numpy's
    assert np.allclose(np.abs(phase), 1, atol=tol(a.dtype, n))
    assert rel(vh, ref * phase) < tol(a.dtype, n)


# ------------------------------------------------------------------ dtype x order x devices

# orders: a multiple of 4 devices and not (13, 37: padded), n = 1, several tiles (150); each on
# one kind of mesh
ORDERS = [(16, "explicit"), (13, "auto"), (1, "explicit"), (37, "explicit"), (150, "auto")]
ORDER = pytest.mark.parametrize("n,kind", ORDERS, ids=[f"n{n}" for n, _ in ORDERS])
NDEV = pytest.mark.parametrize("ndev", [1, 4], ids=["1dev", "4dev"])


@NDEV
@ORDER
@DTYPE
def test_syevd_matches_eigh(dtype, n, kind, ndev, devices):
    if ndev > len(devices):
        pytest.skip(f"needs {ndev} devices")
    mesh = mesh_of(devices, ndev, kind)
    a = matrix(n, dtype)
    w, v, status = tj.syevd(a, 4, mesh, ROW, return_status=True)
    assert status.shape == () and status.dtype == np.int32 and int(status) == 0
    check_eig((w, v), a)
    if n % ndev == 0:
        assert sharded_like(v, mesh, ROW) and sharded_like(w, mesh, P())


@pytest.mark.parametrize("form", ["global", "shardmap"])
@DTYPE
def test_values_only(dtype, form, devices):
    """return_eigenvectors=False: the eigenvalues alone, the same as with the vectors."""
    mesh = mesh_of(devices, len(devices))
    n = 6 * len(devices)
    a = matrix(n, dtype, seed=1)
    if form == "global":
        w, status = tj.syevd(a, 4, mesh, ROW, return_eigenvectors=False, return_status=True)
        assert isinstance(tj.syevd(a, 4, mesh, ROW, return_eigenvectors=False), jax.Array)
    else:
        w, status = jax.jit(jax.shard_map(
            lambda a_: tj.syevd_shardmap_ctx(a_, 4, return_eigenvectors=False), mesh=mesh,
            in_specs=ROW, out_specs=(P(), P("x"))))(put(a, mesh, ROW))
    assert (np.atleast_1d(np.asarray(status)) == 0).all()
    check_values(w, a)
    w_vectors, _ = tj.syevd(a, 4, mesh, ROW)
    np.testing.assert_allclose(np.asarray(w), np.asarray(w_vectors), rtol=0,
                               atol=THRESHOLD * n * eps(dtype) * np.linalg.norm(hi(a)))


@pytest.mark.parametrize("n", [16, 13, 9, 40])
def test_2d_mesh(n, devices):
    """A sharded P("x", "y") over 2 x 2 devices, padded where N is odd; V laid out as A where N
    splits evenly."""
    mesh = square_mesh(devices)
    for dtype in (np.float64, np.complex64):
        a = matrix(n, dtype, seed=3)
        w, v = tj.syevd(put(a, mesh, MESH2) if n % 2 == 0 else a, 4, mesh, MESH2)
        check_eig((w, v), a)
        if n % 2 == 0:
            assert sharded_like(v, mesh, MESH2)
        w2, status = tj.syevd(a, 4, mesh, MESH2, return_eigenvectors=False, return_status=True)
        assert int(status) == 0
        check_values(w2, a)


def test_reads_only_the_lower_triangle(devices):
    """NaN in the strictly upper triangle is never read (as jaxmg's and jnp.linalg.eigh's), on a
    1D and a 2D mesh."""
    meshes = [(mesh_of(devices, len(devices)), ROW)]
    if len(devices) == 4:
        meshes.append((square_mesh(devices), MESH2))
    for mesh, spec in meshes:
        for dtype in (np.float32, np.complex128):
            a = matrix(10, dtype, seed=4, upper=np.nan)
            w, v, status = tj.syevd(a, 4, mesh, spec, return_status=True)
            assert int(status) == 0
            check_eig((w, v), a)


# ----------------------------------------------------------------- inside the user's shard_map


@pytest.mark.parametrize("check_vma", [True, False], ids=["vma", "no-vma"])
@pytest.mark.parametrize("ndev", [1, 4], ids=["1dev", "4dev"])
def test_shardmap_form(ndev, check_vma, devices):
    """Inside our own shard_map: w whole on every device, v this device's rows of V, status (1,)
    per device; jitted and not, with and without the vectors."""
    if ndev > len(devices):
        pytest.skip(f"needs {ndev} devices")
    mesh = mesh_of(devices, ndev)
    n = 5 * ndev
    for dtype in (np.float32, np.complex128):
        a = matrix(n, dtype, seed=5)
        for vectors, jit in ((True, True), (True, False), (False, True)):
            outs = (P(), ROW, P("x")) if vectors else (P(), P("x"))
            g = jax.shard_map(lambda a_: tj.syevd_shardmap_ctx(a_, 4, return_eigenvectors=vectors),
                              mesh=mesh, in_specs=ROW, out_specs=outs, check_vma=check_vma)
            out = (jax.jit(g) if jit else g)(put(a, mesh, ROW))
            assert np.asarray(out[-1]).shape == (ndev,) and (np.asarray(out[-1]) == 0).all()
            if vectors:
                check_eig(out[:2], a)
            else:
                check_values(out[0], a)


def test_shardmap_form_on_a_2d_mesh(devices):
    mesh = square_mesh(devices)
    a = matrix(12, np.float64, seed=6)
    w, v, st = jax.jit(jax.shard_map(lambda a_: tj.syevd_shardmap_ctx(a_, 4), mesh=mesh,
                                     in_specs=MESH2, out_specs=(P(), MESH2, P())))(
        put(a, mesh, MESH2))
    assert int(st[0]) == 0
    check_eig((w, v), a)


def test_jit_form(mesh, devices):
    """Inside jax.jit with mesh and in_specs given, on Explicit and Auto meshes."""
    n = 8 * len(devices)
    a = matrix(n, np.float64, seed=7)
    f = jax.jit(lambda a_: tj.syevd(a_, 4, mesh, ROW, return_status=True))
    w, v, status = f(put(a, mesh, ROW))
    assert int(status) == 0
    check_eig((w, v), a)
    w2 = jax.jit(lambda a_: tj.syevd(a_, 4, mesh, ROW, return_eigenvectors=False))(a)
    check_values(w2, a)


# ------------------------------------------------------------- failures: status and NaN


@pytest.mark.parametrize("form", ["global", "shardmap"])
@DTYPE
def test_nan_gives_its_column_and_nan(dtype, form, devices):
    """A NaN (or an infinity) at (i, j) of the lower triangle: status j + 1, the first column of
    the lower triangle holding one, on every device; w and V all NaN."""
    mesh = mesh_of(devices, len(devices), "auto" if form == "global" else "explicit")
    n = 4 * len(devices) + 4
    for (i, j), bad in (((0, 0), np.nan), ((n - 1, 3), np.inf), ((5, 5), np.nan)):
        a = matrix(n, dtype, seed=8)
        a[i, j] = bad
        a[n - 1, n - 2] = np.nan  # a later column too: the first counts
        if form == "global":
            w, v, status = tj.syevd(a, 4, mesh, ROW, return_status=True)
        else:
            w, v, status = jax.jit(jax.shard_map(
                lambda a_: tj.syevd_shardmap_ctx(a_, 4), mesh=mesh, in_specs=ROW,
                out_specs=(P(), ROW, P("x"))))(put(a, mesh, ROW))
        assert (np.atleast_1d(np.asarray(status)) == j + 1).all(), ((i, j), status)
        assert_all_nan(w, v)
    assert "NaN" in tj.status_message(3, op="syevd")


def test_calls_after_a_failure_succeed(devices):
    mesh = mesh_of(devices, len(devices))
    a = matrix(12, np.float64, seed=9)
    bad = a.copy()
    bad[7, 2] = np.nan
    for _ in range(2):
        w, v, status = tj.syevd(bad, 2, mesh, ROW, return_status=True)
        assert int(status) == 3
        assert_all_nan(w, v)
        w, v, status = tj.syevd(a, 2, mesh, ROW, return_status=True)
        assert int(status) == 0
        check_eig((w, v), a)


# ---------------------------------------------------------------- reuse, donation, returns


def test_inputs_unchanged_calls_repeatable_and_donate(devices):
    mesh, n = mesh_of(devices, len(devices)), 4 * len(devices)
    a = matrix(n, np.complex64, seed=10)
    a_in = put(a, mesh, ROW)
    # repeated calls may take another method (the policy tries each): both decompositions hold
    first, second = tj.syevd(a_in, 2), tj.syevd(a_in, 2)
    check_eig(first, a)
    check_eig(second, a)
    np.testing.assert_array_equal(np.asarray(a_in), a)
    assert not a_in.is_deleted()
    tj.syevd(a_in, 2, return_eigenvectors=False, donate=True)  # no result of A's shape
    assert not a_in.is_deleted()
    check_eig(tj.syevd(a_in, 2, donate=True), a)
    assert a_in.is_deleted()


def test_return_forms(devices):
    mesh = mesh_of(devices, len(devices))
    a = matrix(8, np.float64, seed=11)
    w = tj.syevd(a, 2, mesh, ROW, return_eigenvectors=False)
    assert isinstance(w, jax.Array) and w.shape == (8,)
    w, v = tj.syevd(a, 2, mesh, ROW)
    # mesh and in_specs read off a's sharding, or given as matrix_specs or a 1-tuple (each call
    # may take another method: the same decomposition to rounding)
    for kw in (dict(), dict(mesh=mesh, matrix_specs=ROW), dict(mesh=mesh, in_specs=(ROW,))):
        w2, v2 = tj.syevd(put(a, mesh, ROW), 2, **kw)
        np.testing.assert_allclose(np.asarray(w2), np.asarray(w), rtol=1e-12, atol=1e-12)
        check_eig((w2, v2), a)
    w, v, status = tj.syevd(np.zeros((0, 0), np.complex64), 2, mesh, ROW, return_status=True)
    assert w.shape == (0,) and w.dtype == np.float32 and v.shape == (0, 0) and int(status) == 0
    for name in ("syevd", "syevd_shardmap_ctx"):
        assert name in tj.__all__ and callable(getattr(tj, name))


# ----------------------------------------------------------------------- argument errors

ERRORS = {
    "not square": (lambda n: (np.ones((n, n + 1)),), {}, ValueError, "square"),
    "1-D A": (lambda n: (np.ones(n),), {}, ValueError, "2-D"),
    "int32 A": (lambda n: (np.eye(n, dtype=np.int32),), {}, TypeError, "int32"),
    "T_A=0": (lambda n: (np.eye(n),), {"T_A": 0}, ValueError, "T_A"),
    "vectors not a bool": (lambda n: (np.eye(n),), {"return_eigenvectors": "yes"}, TypeError,
                           "return_eigenvectors"),
    "columns sharded": (lambda n: (np.eye(n),), {"spec": P(None, "x")}, ValueError, "by rows"),
    "axis not in mesh": (lambda n: (np.eye(n),), {"spec": P("y", None)}, ValueError, "'y'"),
    "pad=False, N uneven": (lambda n: (np.eye(n + 1),), {"pad": False}, ValueError, "pad"),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_argument_errors(case, devices):
    check_argument_error(case, "syevd", *ERRORS[case], devices)


def test_forms_called_in_the_wrong_place(devices):
    mesh = mesh_of(devices, len(devices))
    n = 4 * len(devices)
    with pytest.raises(ValueError, match="inside jax.shard_map"):
        tj.syevd_shardmap_ctx(np.eye(n), 2)
    with pytest.raises(ValueError, match=r"tessera\.jax\.syevd: called inside jax.shard_map"):
        jax.shard_map(lambda a_: tj.syevd(a_, 2, mesh, ROW), mesh=mesh, in_specs=ROW,
                      out_specs=(P(), ROW))(put(np.eye(n), mesh, ROW))
    if len(devices) > 1:
        with pytest.raises(ValueError, match=r"syevd_shardmap_ctx: .*not a square one"):
            jax.shard_map(lambda a_: tj.syevd_shardmap_ctx(a_, 2), mesh=mesh, in_specs=ROW,
                          out_specs=(P(), ROW, P()))(put(np.ones((n, 2 * n)), mesh, ROW))
