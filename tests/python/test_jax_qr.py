"""tessera.jax.qr, least_squares and their shard_map forms (jaxmg 1.4's qr and least_squares)
against numpy.linalg.qr and jnp.linalg.lstsq, on the devices of test_jax.py (jax_support.py: 4
CPU devices unless jax has GPUs), on meshes of 1 and 4 devices and a 2 x 2 one.

Matrices: A = U diag(s) Vᴴ, M x N, with U and V random with orthonormal columns and singular
values s in [1, 5] (well conditioned), of every dtype. Checks, with tol = 100 * eps * max(M, N),
eps of A's precision: R upper triangular (exactly zero below the diagonal), ‖QᴴQ − I‖ and
‖A − QR‖ / ‖A‖ below tol, |R| as numpy's (Householder R is unique up to a unit factor per row),
x as jnp.linalg.lstsq's in double precision. Shapes: M a multiple of the devices and not (rows
padded), N = 1, M = N, wide (qr only), and N = 100 (QR's panels of 32 on CPUs: several panels);
one test reruns a sweep in a fresh process with TESSERA_TILE=3 (many panels per device)."""
import textwrap

from jax_support import *  # noqa: F401,F403  (fixtures, helpers, jax, tj)
from jax_support import _native  # noqa: F401

MESH2 = P("x", "y")


def matrix(m, n, dtype, seed=0):
    """U diag(s) Vᴴ (m x n): U, V with orthonormal columns, singular values in [1, 5]."""
    rng = np.random.default_rng(seed)
    k = min(m, n)
    u, _ = np.linalg.qr(randn(rng, (m, k), dtype))
    v, _ = np.linalg.qr(randn(rng, (n, k), dtype))
    return ((u * np.linspace(1, 5, k)) @ v.conj().T).astype(dtype)


def qr_tol(a):
    return tol(a.dtype, max(a.shape))


def check_qr(out, a, mode="reduced"):
    """out (qr's result for `mode`) is a QR factorization of a, as numpy's."""
    m, n = a.shape
    k = min(m, n)
    t = qr_tol(a)
    r = np.asarray(out if mode == "r" else out[1])
    assert r.dtype == a.dtype and r.shape == ((m if mode == "complete" else k), n)
    assert not np.tril(r, -1).any(), "R must be exactly zero below its diagonal"
    ref = np.linalg.qr(hi(a), mode="r")
    assert rel(np.abs(r[:k]), np.abs(ref[:k])) < t  # rows equal up to a unit factor
    if mode == "r":
        return
    q = np.asarray(out[0])
    assert q.dtype == a.dtype and q.shape == (m, m if mode == "complete" else k)
    qh = hi(q)
    assert np.linalg.norm(qh.conj().T @ qh - np.eye(q.shape[1])) < t
    assert rel(qh @ hi(r), a) < t


def lstsq_reference(a, b):
    return np.asarray(jnp.linalg.lstsq(jnp.asarray(hi(a)), jnp.asarray(hi(b)))[0])


def check_lstsq(x, a, b):
    x = np.asarray(x)
    assert x.dtype == a.dtype and x.shape == (a.shape[1],) + b.shape[1:]
    assert rel(x, lstsq_reference(a, b)) < qr_tol(a)


# ---------------------------------------------------------------- dtype x shape x devices

# (M, N): rows a multiple of 4 devices and not (37: padded, no tile multiple), N = 1, M = N,
# several QR panels (N = 100); each on one kind of mesh
SHAPES = [(16, 8, "explicit"), (37, 5, "auto"), (12, 12, "auto"), (9, 1, "explicit"),
          (203, 100, "explicit")]
SHAPE = pytest.mark.parametrize("m,n,kind", SHAPES, ids=[f"{m}x{n}" for m, n, _ in SHAPES])
NDEV = pytest.mark.parametrize("ndev", [1, 4], ids=["1dev", "4dev"])
# Each shape on each device count in two dtypes, one real and one complex, rotating (every
# dtype meets every shape over the device counts): the panels' handling does not depend on it.
CASES = [(DTYPES[(i + d + k) % 4], m, n, kind, ndev) for i, (m, n, kind) in enumerate(SHAPES)
         for d, ndev in enumerate([1, 4]) for k in (0, 2)]
CASE = pytest.mark.parametrize(
    "dtype,m,n,kind,ndev", CASES,
    ids=[f"{np.dtype(dt).name}-{m}x{n}-{nd}dev" for dt, m, n, _, nd in CASES])


@CASE
def test_qr_matches_numpy(dtype, m, n, kind, ndev, devices):
    if ndev > len(devices):
        pytest.skip(f"needs {ndev} devices")
    mesh = mesh_of(devices, ndev, kind)
    a = matrix(m, n, dtype)
    q, r, status = tj.qr(a, 4, mesh, ROW, return_status=True)
    assert status.shape == () and status.dtype == np.int32 and int(status) == 0
    check_qr((q, r), a)


@CASE
def test_least_squares_matches_lstsq(dtype, m, n, kind, ndev, devices):
    if ndev > len(devices):
        pytest.skip(f"needs {ndev} devices")
    mesh = mesh_of(devices, ndev, kind)
    a = matrix(m, n, dtype)
    for k in (None, 3):
        b = rhs(m, dtype, k)
        x, status = tj.least_squares(a, b, 4, mesh, ROW, return_status=True)
        assert status.shape == () and status.dtype == np.int32 and int(status) == 0
        check_lstsq(x, a, b)


@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("m,n", [(21, 6), (8, 8), (6, 10)], ids=["tall", "square", "wide"])
def test_qr_modes(mode, m, n, devices):
    """jnp.linalg.qr's modes: reduced (Q M x K, R K x N), complete (Q M x M, R M x N), r (R
    alone); a wide A as jnp.linalg.qr takes it (K = M)."""
    mesh = mesh_of(devices, len(devices))
    for dtype in (np.float32, np.complex128):
        a = matrix(m, n, dtype, seed=2)
        out = tj.qr(a, 4, mesh, ROW, mode=mode)
        check_qr(out, a, mode)
        ref = jnp.linalg.qr(jnp.asarray(a), mode=mode)
        if mode == "r":
            assert out.shape == ref.shape
        else:
            assert out[0].shape == ref[0].shape and out[1].shape == ref[1].shape


@pytest.mark.parametrize("m,n", [(16, 8), (13, 5), (40, 12), (9, 9)])
def test_2d_mesh(m, n, devices):
    """A sharded P("x", "y") over 2 x 2 devices, rows and columns padded where they do not split
    evenly; Q and R laid out as A where they split evenly."""
    mesh = square_mesh(devices)
    for dtype in (np.float64, np.complex64):
        a = matrix(m, n, dtype, seed=3)
        for mode in ("reduced", "complete", "r"):
            out = tj.qr(a, 4, mesh, MESH2, mode=mode)
            check_qr(out, a, mode)
        q, r = tj.qr(put(a, mesh, MESH2) if m % 2 == 0 and n % 2 == 0 else a, 4, mesh, MESH2)
        if m % 2 == 0 and n % 2 == 0:
            assert sharded_like(q, mesh, MESH2) and sharded_like(r, mesh, MESH2)
        b = rhs(m, dtype, 2)
        x, status = tj.least_squares(a, b, 4, mesh, MESH2, return_status=True)
        assert int(status) == 0
        check_lstsq(x, a, b)


# ----------------------------------------------------------------- inside the user's shard_map


@pytest.mark.parametrize("check_vma", [True, False], ids=["vma", "no-vma"])
@pytest.mark.parametrize("ndev", [1, 4], ids=["1dev", "4dev"])
def test_qr_shardmap_form(ndev, check_vma, devices):
    """Inside our own shard_map: q this device's rows of Q, r whole on every device, status
    (1,) per device; every mode, jitted and not, with the vma check (without it, one mode), on
    one real and one complex dtype in turn."""
    if ndev > len(devices):
        pytest.skip(f"needs {ndev} devices")
    mesh = mesh_of(devices, ndev)
    m, n = 6 * ndev, 5
    modes = (("reduced", True, np.float32), ("complete", False, np.complex128),
             ("r", True, np.float32), ("reduced", False, np.complex128))
    for mode, jit, dtype in modes if check_vma else modes[:1]:
        a = matrix(m, n, dtype, seed=4)
        outs = (P(), P()) if mode == "r" else (ROW, P(), P())
        g = jax.shard_map(lambda a_, mode=mode: tj.qr_shardmap_ctx(a_, 4, mode=mode), mesh=mesh,
                          in_specs=ROW, out_specs=outs, check_vma=check_vma)
        out = (jax.jit(g) if jit else g)(put(a, mesh, ROW))
        assert np.asarray(out[-1]).shape == (1,) and int(out[-1][0]) == 0
        check_qr(out[0] if mode == "r" else out[:2], a, mode)


@pytest.mark.parametrize("check_vma", [True, False], ids=["vma", "no-vma"])
@pytest.mark.parametrize("ndev", [1, 4], ids=["1dev", "4dev"])
def test_least_squares_shardmap_form(ndev, check_vma, devices):
    """b replicated or this device's rows, 1-D or 2-D; x whole on every device."""
    if ndev > len(devices):
        pytest.skip(f"needs {ndev} devices")
    mesh = mesh_of(devices, ndev)
    m, n = 6 * ndev, 4
    for dtype in (np.float64, np.complex64):
        a = matrix(m, n, dtype, seed=5)
        for k, b_rows in ((None, False), (2, True), (3, False)):
            b = rhs(m, dtype, k)
            bspec = P("x" if b_rows else None, *[None] * (b.ndim - 1))
            g = jax.jit(jax.shard_map(lambda a_, b_: tj.least_squares_shardmap_ctx(a_, b_, 4),
                                      mesh=mesh, in_specs=(ROW, bspec), out_specs=(P(), P()),
                                      check_vma=check_vma))
            x, status = g(put(a, mesh, ROW), put(b, mesh, bspec))
            assert int(status[0]) == 0
            check_lstsq(x, a, b)


def test_shardmap_forms_on_a_2d_mesh(devices):
    mesh = square_mesh(devices)
    a, b = matrix(16, 6, np.float64, seed=6), rhs(16, np.float64, 2)

    def body(a_, b_):
        q, r, st = tj.qr_shardmap_ctx(a_, 4)
        x, st2 = tj.least_squares_shardmap_ctx(a_, b_, 4)
        return q, r, x, st, st2

    q, r, x, st, st2 = jax.jit(jax.shard_map(
        body, mesh=mesh, in_specs=(MESH2, ROW), out_specs=(ROW, P(), P(), P(), P())))(
        put(a, mesh, MESH2), put(b, mesh, ROW))
    assert int(st[0]) == 0 and int(st2[0]) == 0
    check_qr((q, r), a)
    check_lstsq(x, a, b)


def test_jit_form(mesh, devices):
    """Inside jax.jit with mesh and in_specs given; on an Explicit mesh x keeps b's row layout
    when N splits evenly."""
    ndev = len(devices)
    a, b = matrix(8 * ndev, 4 * ndev, np.float64), rhs(8 * ndev, np.float64, 2)
    f = jax.jit(lambda a_, b_: (tj.qr(a_, 4, mesh, ROW),
                                tj.least_squares(a_, b_, 4, mesh, ROW, return_status=True)))
    (q, r), (x, status) = f(put(a, mesh, ROW), put(b, mesh, ROW))
    assert int(status) == 0
    check_qr((q, r), a)
    check_lstsq(x, a, b)
    if "Explicit" in str(mesh.axis_types):
        assert sharded_like(x, mesh, ROW), x.sharding


# ------------------------------------------------------------- failures: status and NaN


@pytest.mark.parametrize("form", ["global", "shardmap"])
@DTYPE
def test_rank_deficient_gives_lapack_info_and_nan(dtype, form, devices):
    """A zero column k: R(k + 1, k + 1) is exactly zero, status k + 1 and x all NaN, on every
    device; qr of the same A succeeds (QR has no failure) with that zero on R's diagonal."""
    mesh = mesh_of(devices, len(devices), "auto" if form == "global" else "explicit")
    m, n = 4 * len(devices) + 4, 6
    for k in (0, 3, n - 1):
        a = matrix(m, n, dtype)
        a[:, k] = 0
        b = rhs(m, dtype, 2)
        if form == "global":
            x, status = tj.least_squares(a, b, 4, mesh, ROW, return_status=True)
        else:
            x, status = jax.jit(jax.shard_map(
                lambda a_, b_: tj.least_squares_shardmap_ctx(a_, b_, 4), mesh=mesh,
                in_specs=(ROW, P()), out_specs=(P(), P("x"))))(put(a, mesh, ROW), b)
        assert (np.atleast_1d(np.asarray(status)) == k + 1).all(), (k, status)
        assert_all_nan(x)
        q, r, status = tj.qr(a, 4, mesh, ROW, return_status=True)
        assert int(status) == 0 and np.asarray(r)[k, k] == 0
        check_qr((q, r), a)
    assert "rank" in tj.status_message(3, op="least_squares")


def test_calls_after_a_failure_succeed(devices):
    mesh = mesh_of(devices, len(devices))
    a, b = matrix(20, 4, np.float64), rhs(20, np.float64)
    bad = a.copy()
    bad[:, 1] = 0
    for _ in range(2):
        x, status = tj.least_squares(bad, b, 2, mesh, ROW, return_status=True)
        assert int(status) == 2
        assert_all_nan(x)
        x, status = tj.least_squares(a, b, 2, mesh, ROW, return_status=True)
        assert int(status) == 0
        check_lstsq(x, a, b)


# ---------------------------------------------------------------- reuse, donation, returns


def test_inputs_unchanged_and_calls_repeatable(devices):
    mesh, ndev = mesh_of(devices, len(devices)), len(devices)
    a, b = matrix(4 * ndev, 3, np.complex64), rhs(4 * ndev, np.complex64)
    a_in, b_in = put(a, mesh, ROW), put(b, mesh, P())
    for f in (lambda: tj.qr(a_in, 2, mesh, ROW), lambda: tj.least_squares(a_in, b_in, 2)):
        first, second = f(), f()
        for x, y in zip(jax.tree.leaves(first), jax.tree.leaves(second)):
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
        np.testing.assert_array_equal(np.asarray(a_in), a)
        np.testing.assert_array_equal(np.asarray(b_in), b)
        assert not a_in.is_deleted() and not b_in.is_deleted()


def test_donate(devices):
    """qr gives A's buffer to Q (reduced, tall) or R (complete); least_squares gives b's to x
    when M = N, and never takes A's (no result has its shape)."""
    mesh, ndev = mesh_of(devices, len(devices)), len(devices)
    a = matrix(4 * ndev, 2 * ndev, np.float64)
    for mode in ("reduced", "complete"):
        a_in = put(a, mesh, ROW)
        check_qr(tj.qr(a_in, 2, mesh, ROW, mode=mode, donate=True), a, mode)
        assert a_in.is_deleted()
    sq, b = matrix(4 * ndev, 4 * ndev, np.float64), rhs(4 * ndev, np.float64, 2)
    a_in, b_in = put(sq, mesh, ROW), put(b, mesh, ROW)
    check_lstsq(tj.least_squares(a_in, b_in, 2, mesh, ROW, donate=True), sq, b)
    assert b_in.is_deleted() and not a_in.is_deleted()


def test_return_forms_and_layouts(devices):
    mesh, ndev = mesh_of(devices, len(devices)), len(devices)
    m, n = 8 * ndev, 2 * ndev
    a, b = matrix(m, n, np.float64), rhs(m, np.float64, None)
    q, r = tj.qr(a, 2, mesh, ROW)
    assert sharded_like(q, mesh, ROW) and sharded_like(r, mesh, ROW)
    r_only = tj.qr(a, 2, mesh, ROW, mode="r")
    assert isinstance(r_only, jax.Array)
    np.testing.assert_allclose(np.asarray(r_only), np.asarray(r), rtol=1e-12, atol=1e-12)
    r_only, status = tj.qr(a, 2, mesh, ROW, mode="r", return_status=True)
    assert int(status) == 0
    x = tj.least_squares(a, b, 2, mesh, ROW)
    assert isinstance(x, jax.Array) and x.shape == (n,) and sharded_like(x, mesh, P())
    # mesh and in_specs read off a's sharding, or given as matrix_specs
    for kw in (dict(), dict(mesh=mesh, matrix_specs=ROW), dict(mesh=mesh, in_specs=(ROW,))):
        np.testing.assert_allclose(np.asarray(tj.least_squares(put(a, mesh, ROW), b, 2, **kw)),
                                   np.asarray(x), rtol=1e-12)
    # b sharded by rows: x by rows where N splits evenly, else whole
    x = tj.least_squares(a, put(b, mesh, P("x")), 2, mesh, ROW)
    assert sharded_like(x, mesh, P("x"))
    if ndev > 1:
        a3 = matrix(m, n + 1, np.float64)
        assert sharded_like(tj.least_squares(a3, put(b, mesh, P("x")), 2, mesh, ROW), mesh, P())
    # b of another dtype is cast to A's
    x = tj.least_squares(a.astype(np.complex128), b.astype(np.float32), 2, mesh, ROW)
    assert x.dtype == np.complex128
    # empty matrices
    q, r, status = tj.qr(np.zeros((5, 0)), 2, mesh, ROW, return_status=True)
    assert q.shape == (5, 0) and r.shape == (0, 0) and int(status) == 0
    x, status = tj.least_squares(np.zeros((3, 0)), np.ones(3), 2, mesh, ROW, return_status=True)
    assert x.shape == (0,) and int(status) == 0
    for name in ("qr", "least_squares", "qr_shardmap_ctx", "least_squares_shardmap_ctx"):
        assert name in tj.__all__ and callable(getattr(tj, name))


# ----------------------------------------------------------------------- argument errors

ERRORS = {
    "wide A": ("least_squares", lambda n: (np.ones((n, n + 1)), np.ones(n)), {}, ValueError,
               "M >= N"),
    "1-D A": ("qr", lambda n: (np.ones(n),), {}, ValueError, "2-D"),
    "int32 A": ("qr", lambda n: (np.ones((n, 2), np.int32),), {}, TypeError, "int32"),
    "T_A=0": ("qr", lambda n: (np.ones((n, 2)),), {"T_A": 0}, ValueError, "T_A"),
    "mode raw": ("qr", lambda n: (np.ones((n, 2)),), {"mode": "raw"}, ValueError, "mode"),
    "columns sharded": ("qr", lambda n: (np.ones((n, 2)),), {"spec": P(None, "x")}, ValueError,
                        "by rows"),
    "axis not in mesh": ("least_squares", lambda n: (np.ones((n, 2)), np.ones(n)),
                         {"spec": P("y", None)}, ValueError, "'y'"),
    "b M-1 rows": ("least_squares", lambda n: (np.ones((n, 2)), np.ones(n - 1)), {}, ValueError,
                   "b must be"),
    "b 3-D": ("least_squares", lambda n: (np.ones((n, 2)), np.ones((n, 1, 1))), {}, ValueError,
              "b must be"),
    "b complex, A real": ("least_squares",
                          lambda n: (np.ones((n, 2)), np.ones(n, np.complex64)), {}, TypeError,
                          "does not cast"),
    "pad=False, M uneven": ("qr", lambda n: (np.ones((n + 1, 2)),), {"pad": False}, ValueError,
                            "pad"),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_argument_errors(case, devices):
    check_argument_error(case, *ERRORS[case], devices)


def test_2d_mesh_with_rows_only_spec_is_refused(devices):
    mesh = square_mesh(devices)
    with pytest.raises(ValueError, match=r"tessera\.jax\.qr: .*must have size 1"):
        tj.qr(np.ones((8, 4)), 2, mesh, ROW)


def test_shardmap_forms_outside_and_global_forms_inside_shard_map(devices):
    mesh = mesh_of(devices, len(devices))
    with pytest.raises(ValueError, match="inside jax.shard_map"):
        tj.qr_shardmap_ctx(np.ones((8, 2)), 2)
    with pytest.raises(ValueError, match="inside jax.shard_map"):
        tj.least_squares_shardmap_ctx(np.ones((8, 2)), np.ones(8), 2)
    with pytest.raises(ValueError, match=r"tessera\.jax\.qr: called inside jax.shard_map"):
        jax.shard_map(lambda a_: tj.qr(a_, 2, mesh, ROW), mesh=mesh, in_specs=ROW,
                      out_specs=(ROW, P()))(put(np.ones((8, 2)), mesh, ROW))
    with pytest.raises(ValueError, match=r"least_squares_shardmap_ctx: .*M >= N"):
        wide = np.ones((4 * len(devices), 8 * len(devices)))  # blocks of 4 x 8 * devices
        jax.shard_map(lambda a_: tj.least_squares_shardmap_ctx(a_, jnp.ones(wide.shape[0]), 2),
                      mesh=mesh, in_specs=ROW, out_specs=(P(), P()))(put(wide, mesh, ROW))


# ----------------------------------------- many panels per device, in a process of its own

PANELS = textwrap.dedent("""
    import numpy as np
    from jax_support import *  # 4 CPU devices; TESSERA_TILE=3 set by the parent
    from test_jax_qr import check_lstsq, check_qr, matrix
    mesh = make_mesh(jax.devices()[:4], "explicit")
    mesh2 = jax.make_mesh((2, 2), ("x", "y"), devices=jax.devices()[:4])
    # panels of 3; rows padded; square: each shape on two dtypes, every dtype on one or two
    shapes = {(48, 20): (np.float32, np.complex128), (50, 13): (np.float64, np.complex64),
              (17, 17): (np.complex64, np.float64)}
    for (m, n), dtypes in shapes.items():
        for dtype in dtypes:
            a, b = matrix(m, n, dtype), rhs(m, dtype, 5)
            for mesh_, spec in ((mesh, P("x", None)), (mesh2, P("x", "y"))):
                check_qr(tj.qr(a, 4, mesh_, spec, mode="complete"), a, "complete")
                x, status = tj.least_squares(a, b, 4, mesh_, spec, return_status=True)
                assert int(status) == 0, (dtype, m, n, int(status))
                check_lstsq(x, a, b)
            bad = a.copy()
            bad[:, n - 2] = 0  # a zero column in a late panel
            x, status = tj.least_squares(bad, b, 4, mesh, P("x", None), return_status=True)
            assert int(status) == n - 1, (m, n, int(status))
            assert np.isnan(np.asarray(x)).all()
    print("ok")
""")


def test_many_panels_per_device_in_a_fresh_process(devices):
    if devices[0].platform != "cpu":
        pytest.skip("the fresh process runs on 4 CPU devices")
    run_with_tile_3(PANELS, "QR")
