"""tessera.jax.lu_solve and lu_solve_shardmap_ctx (jaxmg's lu_solve: LU with partial pivoting
of a general square A sharded by rows) against jax.scipy.linalg.lu_solve(lu_factor(a), b), on
the same devices as test_jax.py (jax_support.py: 4 CPU devices unless jax has GPUs).

Matrices: A = U diag(s) Vᴴ with U, V random orthogonal / unitary and s in [1, 5] (condition
number <= 5, and no structure that would spare the pivoting), and the same with exact zeros on
the diagonal (a cyclic shift of rows by N/2 of a matrix with zeros at those places), which no
LU without pivoting could factor and whose pivots lie on another device. References are
computed in double precision from the same rounded A; the forward error and the backward error
||Ax - b|| / (||A|| ||x||) must stay below tol = 100 * eps * N, eps of A's precision.

The tile tessera picks on CPUs (128) leaves one or two panels per device at these N; one test
reruns the sweep in a fresh process with TESSERA_TILE=3 (four panels per device, a right-hand
side wider than a tile), where a hang would fail the test instead of stalling the suite."""
import functools
import textwrap

from jax_support import *  # noqa: F401,F403  (fixtures, helpers, jax, tj)
from jax_support import _native  # noqa: F401


def general(n, dtype, seed=0):
    """U diag(s) Vᴴ: random orthogonal (unitary) U and V, singular values in [1, 5]."""
    rng = np.random.default_rng(seed)
    u, _ = np.linalg.qr(randn(rng, (n, n), dtype))
    v, _ = np.linalg.qr(randn(rng, (n, n), dtype))
    s = np.linspace(1, 5, n)
    return ((u * s) @ v.conj().T).astype(dtype)


def zero_diagonal(n, dtype, seed=0):
    """A well-conditioned A with A[i, i] = 0 exactly for every i (n >= 2): rows of G shifted by
    n // 2, G = 2 I + a small random part that is zero where the diagonal of A comes from. Its
    first pivot, and many others, are rows of another device's shard."""
    h = n // 2
    rng = np.random.default_rng(seed)
    g = 2 * np.eye(n) + 0.5 * randn(rng, (n, n), dtype) / np.sqrt(n)
    rows = (np.arange(n) + h) % n  # A[i] = G[rows[i]]
    g[rows, np.arange(n)] = 0  # A[i, i] = G[rows[i], i]
    a = g[rows].astype(dtype)
    assert not np.diag(a).any()
    return a


MATRICES = {"general": general, "zero-diagonal": zero_diagonal}


def lu_reference(a, b):
    a, b = jnp.asarray(hi(a)), jnp.asarray(hi(b))
    return np.asarray(jsl.lu_solve(jsl.lu_factor(a), b))


def check_lu(x, a, b):
    x = np.asarray(x)
    assert x.shape == b.shape and x.dtype == a.dtype
    t = tol(a.dtype, a.shape[0])
    assert backward_error(a, x, b) < t
    assert rel(x, lu_reference(a, b)) < t


def lu(a, b, T_A, mesh, **kw):
    return tj.lu_solve(a, b, T_A, mesh, ROW, return_status=True, **kw)


# --------------------------------------------------------------- dtype x N x T_A x matrix

# N: multiples of 4 devices and not (padding), from 2 rows per device to two panels per device
# (N = 1000: shards of 250 rows, tiles of 125); each N on one kind of mesh.
SWEEP = [(8, "explicit"), (10, "auto"), (37, "explicit"), (64, "auto"), (203, "auto"),
         (1000, "explicit")]


@pytest.mark.parametrize("n,kind", SWEEP, ids=[f"N{n}-{k}" for n, k in SWEEP])
@DTYPE
def test_matches_jax_lu_solve(dtype, n, kind, devices):
    mesh = make_mesh(devices, kind)
    rows = -(-n // len(devices))
    b = rhs(n, dtype)
    for make in MATRICES.values():
        a = make(n, dtype)
        for T_A in ((3, rows + 5) if n < 1000 else (5,)):  # a hint: N is no multiple of it
            x, status = lu(a, b, T_A, mesh)
            assert status.shape == () and status.dtype == np.int32 and int(status) == 0
            check_lu(x, a, b)


def test_pad_false_needs_even_shards(devices):
    mesh, ndev = make_mesh(devices, "auto"), len(devices)
    if ndev == 1:
        pytest.skip("one device never pads")
    a, b = general(4 * ndev, np.float64), rhs(4 * ndev, np.float64)
    x, status = lu(a, b, 2, mesh, pad=False)
    assert int(status) == 0
    check_lu(x, a, b)
    with pytest.raises(ValueError, match=r"tessera\.jax\.lu_solve: .*pad"):
        lu(general(4 * ndev + 1, np.float64), rhs(4 * ndev + 1, np.float64), 2, mesh, pad=False)


# ------------------------------------------------------------------ b's shape and layout


@pytest.mark.parametrize("b_shape", ["1d", "2d"])
@pytest.mark.parametrize("b_rows,even", [(False, True), (False, False), (True, True)],
                         ids=["b-replicated", "b-replicated-N-uneven", "b-rows"])
def test_solution_comes_back_in_b_layout(b_rows, even, b_shape, mesh, devices):
    ndev = len(devices)
    n = 6 * ndev if even else 4 * ndev + 3
    a, b = zero_diagonal(n, np.complex64), rhs(n, np.complex64, None if b_shape == "1d" else 2)
    spec = P("x" if b_rows else None, *[None] * (b.ndim - 1))
    a_in = put(a, mesh, ROW) if n % ndev == 0 else a
    x = tj.lu_solve(a_in, put(b, mesh, spec), 3, mesh, ROW)
    assert x.shape == b.shape and x.dtype == b.dtype
    assert sharded_like(x, mesh, spec), x.sharding
    check_lu(x, a, b)


def test_b_of_another_dtype_is_cast(devices):
    mesh, n = make_mesh(devices, "auto"), 4 * len(devices)
    a, b = general(n, np.complex128), rhs(n, np.float32)
    x = tj.lu_solve(a, b, 2, mesh, ROW)
    assert x.dtype == np.complex128
    check_lu(x, a, b.astype(np.complex128))


@pytest.mark.parametrize("k", [1, 7])
def test_shardmap_form(k, mesh, devices):
    """Inside our own shard_map: b replicated or this device's rows, 1-D or 2-D; x in b's form,
    the status (1,) on every device."""
    n = 16 * len(devices)
    for dtype in (np.float32, np.complex128):
        a = zero_diagonal(n, dtype)
        for b_rows in (False, True):
            b = rhs(n, dtype, None if k == 1 else k)
            x, status = run_local("lu_solve", mesh, a, b, T_A=3, b_rows=b_rows)
            assert np.asarray(status).shape == (len(devices),)
            assert (np.asarray(status) == 0).all()
            check_lu(x, a, b)


def test_shardmap_form_without_jit(mesh, devices):
    n = 4 * len(devices)
    a, b = general(n, np.float64), rhs(n, np.float64)
    x, status = run_local("lu_solve", mesh, a, b, jit=False)
    assert (np.asarray(status) == 0).all()
    check_lu(x, a, b)


def test_jit_form(mesh, devices):
    """Inside jax.jit with mesh and in_specs given; on an Explicit mesh x keeps b's layout."""
    n = 8 * len(devices)
    a, b = general(n, np.float64), rhs(n, np.float64)
    g = jax.jit(lambda a_, b_: tj.lu_solve(a_, b_, 4, mesh, ROW, return_status=True))
    for spec in (P(None, None), ROW):
        x, status = g(put(a, mesh, ROW), put(b, mesh, spec))
        assert int(status) == 0
        check_lu(x, a, b)
        if "Explicit" in str(mesh.axis_types):
            assert sharded_like(x, mesh, spec), x.sharding


# ------------------------------------------------------------- failures: status and NaN


def fail_mesh(devices, form):
    """Global form on an Auto mesh, shard_map form on an Explicit one (as test_jax.py)."""
    return make_mesh(devices, "auto" if form == "global" else "explicit")


def _lu_outputs(form, a, mesh):
    """(status as an int array, x) of one call that may fail."""
    b = rhs(a.shape[0], a.dtype, 2)
    if form == "global":
        x, status = lu(a, b, 2, mesh)
    else:
        x, status = run_local("lu_solve", mesh, a, b, T_A=2)
    return np.atleast_1d(np.asarray(status)), x


@pytest.mark.parametrize("form", ["global", "shardmap"])
@DTYPE
def test_singular_gives_lapack_info_and_nan(dtype, form, devices):
    """An exactly singular A: status is getrf's info (of Aᵀ, which tessera factors), x all
    NaN. diag(1..N) with a zero at k: info k + 1; a zero row k of a general A (a zero column
    of Aᵀ): info k + 1 too; the zero matrix: info 1."""
    mesh, n = fail_mesh(devices, form), 4 * len(devices)
    for k in (0, n // 2 + 1, n - 1):
        for a in (diag(n, dtype), general(n, dtype)):
            a = a.copy()
            if np.count_nonzero(a) == n:
                a[k, k] = 0
            else:
                a[k, :] = 0
            status, x = _lu_outputs(form, a, mesh)
            assert (status == k + 1).all(), (k, status)
            assert_all_nan(x)
    status, x = _lu_outputs(form, np.zeros((n, n), dtype), mesh)
    assert (status == 1).all(), status
    assert_all_nan(x)


@pytest.mark.parametrize("form", ["global", "shardmap"])
def test_nan_gives_status_and_nan(form, devices):
    """A NaN in row i of A is in column i of Aᵀ, the first such column: info i + 1, x all
    NaN, on every device, whatever device holds the NaN."""
    mesh, n = fail_mesh(devices, form), 4 * len(devices)
    for i, j in ((0, 0), (3, 3), (n - 1, 1), (1, n - 2), (n // 2, n // 2 + 1)):
        a = general(n, np.complex128)
        a[i, j] = np.nan
        status, x = _lu_outputs(form, a, mesh)
        assert (status == i + 1).all(), ((i, j), status)
        assert_all_nan(x)
    status, x = _lu_outputs(form, np.full((n, n), np.nan), mesh)
    assert (status == 1).all(), status
    assert_all_nan(x)


def test_calls_after_a_failure_succeed(devices):
    mesh, n = make_mesh(devices, "auto"), 4 * len(devices)
    a, b = general(n, np.float64), rhs(n, np.float64)
    bad = a.copy()
    bad[2] = np.nan
    for _ in range(3):
        x, status = lu(bad, b, 2, mesh)
        assert int(status) == 3
        assert_all_nan(x)
        x, status = lu(a, b, 2, mesh)
        assert int(status) == 0
        check_lu(x, a, b)


# ---------------------------------------------------------------- reuse, donation, returns


def test_inputs_unchanged_and_calls_repeatable(mesh, devices):
    n = 4 * len(devices)
    a, b = zero_diagonal(n, np.complex64), rhs(n, np.complex64)
    a_in, b_in = put(a, mesh, ROW), put(b, mesh, P())
    # the same result to rounding: a call small for its mesh may run on one device from one
    # call to the next (python/ffi/small.c), another order of the same operations
    same = functools.partial(np.testing.assert_allclose, rtol=tol(np.complex64, n), atol=0)
    first, _ = lu(a_in, b_in, 2, mesh)
    second, _ = lu(a_in, b_in, 2, mesh)
    same(np.asarray(first), np.asarray(second))
    np.testing.assert_array_equal(np.asarray(a_in), a)
    np.testing.assert_array_equal(np.asarray(b_in), b)
    assert not a_in.is_deleted() and not b_in.is_deleted()
    first, second = (run_local("lu_solve", mesh, a_in, b_in, T_A=2)[0] for _ in range(2))
    same(np.asarray(first), np.asarray(second))
    np.testing.assert_array_equal(np.asarray(a_in), a)
    np.testing.assert_array_equal(np.asarray(b_in), b)


@pytest.mark.parametrize("b_rows", [False, True], ids=["b-replicated", "b-rows"])
def test_donate(b_rows, mesh, devices):
    n = 4 * len(devices)
    a, b = general(n, np.float64), rhs(n, np.float64)
    a_in, b_in = put(a, mesh, ROW), put(b, mesh, ROW if b_rows else P())
    x, status = lu(a_in, b_in, 2, mesh, donate=True)
    assert int(status) == 0
    check_lu(x, a, b)
    assert a_in.is_deleted()  # A's buffer went to the call


def test_return_forms(devices):
    mesh, n = make_mesh(devices, "auto"), 4 * len(devices)
    a, b = general(n, np.float64), rhs(n, np.float64, None)
    x = tj.lu_solve(a, b, 2, mesh, ROW)
    assert isinstance(x, jax.Array) and x.shape == (n,)
    out = tj.lu_solve(a, b, 2, mesh, ROW, return_status=True)
    assert isinstance(out, tuple) and len(out) == 2
    # to rounding: the call may take one device from one call to the next (small.c)
    np.testing.assert_allclose(np.asarray(out[0]), np.asarray(x), rtol=tol(np.float64, n), atol=0)
    assert out[1].shape == () and out[1].dtype == np.int32 and int(out[1]) == 0
    # mesh and in_specs read off a's sharding, or given as matrix_specs
    for kw in (dict(), dict(mesh=mesh, matrix_specs=ROW), dict(mesh=mesh, in_specs=(ROW,))):
        np.testing.assert_allclose(np.asarray(tj.lu_solve(put(a, mesh, ROW), b, 2, **kw)),
                                   np.asarray(x), rtol=1e-12)
    empty = tj.lu_solve(np.zeros((0, 0)), np.zeros(0), 2, mesh, ROW, return_status=True)
    assert empty[0].shape == (0,) and int(empty[1]) == 0
    assert "lu_solve" in tj.__all__ and "lu_solve_shardmap_ctx" in tj.__all__


# ----------------------------------------------------------------------- argument errors

LU_ERRORS = {
    "non-square": (lambda n: (np.ones((n, n - 1)), np.ones(n)), ValueError, "square"),
    "int32 A": (lambda n: (np.eye(n, dtype=np.int32), np.ones(n)), TypeError, "int32"),
    "b N-1 rows": (lambda n: (np.eye(n), np.ones(n - 1)), ValueError, "b must be"),
    "b 3-D": (lambda n: (np.eye(n), np.ones((n, 1, 1))), ValueError, "b must be"),
    "b complex, A real": (lambda n: (np.eye(n), np.ones(n, np.complex64)), TypeError,
                          "does not cast"),
}


@pytest.mark.parametrize("case", list(LU_ERRORS))
def test_argument_errors(case, devices):
    mesh, n = make_mesh(devices, "explicit"), 4 * len(devices)
    make, exc, match = LU_ERRORS[case]
    a, b = make(n)
    with pytest.raises(exc, match=rf"tessera\.jax\.lu_solve: .*{match}"):
        tj.lu_solve(a, b, 2, mesh, ROW)


def test_2d_mesh_needs_both_axes_named(devices):
    if len(devices) < 4 or len(devices) % 2:
        pytest.skip("a 2D mesh with both axes > 1 needs 4 devices")
    n = 4 * len(devices)
    mesh2 = jax.make_mesh((2, len(devices) // 2), ("x", "y"), devices=devices)
    with pytest.raises(ValueError, match=r"tessera\.jax\.lu_solve: .*must have size 1"):
        tj.lu_solve(np.eye(n), np.ones(n), 2, mesh2, ROW)


def test_shardmap_ctx_outside_shard_map(devices):
    with pytest.raises(ValueError, match="inside jax.shard_map"):
        tj.lu_solve_shardmap_ctx(np.eye(8), np.ones(8), 2)


def test_status_message():
    assert "singular" in tj.status_message(7, op="lu_solve") and "7" in \
        tj.status_message(7, op="lu_solve")
    assert "positive definite" in tj.status_message(7)
    assert tj.status_message(0, op="lu_solve") == "success"


# ----------------------------------------- many panels per device, in a process of its own

PANELS = textwrap.dedent("""
    import numpy as np
    from jax_support import *  # 4 CPU devices; TESSERA_TILE=3 set by the parent
    from test_jax_lu import MATRICES, check_lu, lu, general
    mesh = make_mesh(jax.devices()[:4], "explicit")
    for dtype in DTYPES:
        for n in (48, 50):  # shards of 12 rows in tiles of 3; 50: padded to 4 x 15
            for make in MATRICES.values():
                a, b = make(n, dtype), rhs(n, dtype, 5)  # B: two column tiles
                x, status = lu(a, b, 4, mesh)
                assert int(status) == 0, (dtype, n, int(status))
                check_lu(x, a, b)
        a = general(48, dtype)
        x, status = run_local("lu_solve", mesh, a, rhs(48, dtype, 5), T_A=3, b_rows=True)
        assert (np.asarray(status) == 0).all()
        check_lu(x, a, rhs(48, dtype, 5))
        for i in (0, 13, 47):  # a NaN in a late panel of another device: its column's info
            bad = general(48, dtype)
            bad[i, 40] = np.nan
            x, status = lu(bad, rhs(48, dtype, 5), 4, mesh)
            assert int(status) == i + 1, (i, int(status))
            assert np.isnan(np.asarray(x)).all()
    print("ok")
""")


def test_many_panels_per_device_in_a_fresh_process(devices):
    if devices[0].platform != "cpu":
        pytest.skip("the fresh process runs on 4 CPU devices")
    run_with_tile_3(PANELS, "lu_solve")


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_mixed_precision_factor(dtype, devices):
    """lu_solve(mixed="s"): A factored in single precision, x refined to A's precision (the
    working precision's tolerance), padded and with a zero diagonal; an unknown precision is
    refused; a BF16 factor on tensor cores on GPUs, a negative status and NaN without."""
    mesh = make_mesh(devices, "explicit")
    n = 12 * len(devices) + 5
    b = rhs(n, dtype, 2)
    for make in MATRICES.values():
        a = make(n, dtype)
        x, status = lu(a, b, 3, mesh, mixed="s")
        assert int(status) == 0
        check_lu(x, a, b)
    with pytest.raises(ValueError, match="not a factor precision"):
        lu(a, b, 3, mesh, mixed="fp8")
    x, status = lu(a, b, 3, mesh, mixed="bf16")
    if devices[0].platform == "cpu":
        assert int(status) < 0
        assert_all_nan(x)
    else:
        assert int(status) == 0
        check_lu(x, a, b)


# ------------------------------------------------------- lu_factor and the factored lu_solve

FACTORED = [(8, "explicit"), (37, "auto")]


@pytest.mark.parametrize("n,kind", FACTORED, ids=[f"N{n}-{k}" for n, k in FACTORED])
@DTYPE
def test_factor_once_solve_many(dtype, n, kind, devices):
    """lu_factor's (lu, piv): A = tril(lu) (triu(lu, 1) + I) P (tessera's form: the factors of
    Aᵀ), and lu_solve on them for A x = b, Aᵀ x = b and Aᴴ x = b (trans 0, 1, 2), as
    jax.scipy.linalg.lu_solve's; on matrices whose pivots lie on other devices too."""
    mesh = make_mesh(devices, kind)
    b = rhs(n, dtype)
    for make in MATRICES.values():
        a = make(n, dtype)
        (lu, piv), status = tj.lu_factor(a, 4, mesh, ROW, return_status=True)
        assert int(status) == 0 and piv.shape == (n,) and piv.dtype == np.int32
        perm = np.arange(n)
        for i, p in enumerate(np.asarray(piv)):
            perm[[i, p - 1]] = perm[[p - 1, i]]
        lu_ = hi(lu)
        a_of = np.tril(lu_) @ (np.triu(lu_, 1) + np.eye(n)) @ np.eye(n)[perm]
        assert rel(a_of, a) < tol(dtype, n)
        for trans, op in ((0, a), (1, a.T), (2, a.conj().T)):
            x, status = tj.lu_solve((lu, piv), b, 4, mesh, ROW, trans=trans, return_status=True)
            assert int(status) == 0
            check_lu(x, op, b)


def test_factored_singular_and_argument_errors(devices):
    """A singular A: lu_factor's status is getrf's info, lu all NaN; a factorization's
    arguments checked with a sentence each."""
    mesh, n = make_mesh(devices, "auto"), 4 * len(devices)
    a = diag(n, np.float64)
    a[3, 3] = 0
    (lu, _), status = tj.lu_factor(a, 4, mesh, ROW, return_status=True)
    assert int(status) == 4
    assert_all_nan(lu)
    lu, piv = tj.lu_factor(general(n, np.float64), 4, mesh, ROW)
    b = rhs(n, np.float64)
    with pytest.raises(ValueError, match=r"lu_solve: trans must be 0"):
        tj.lu_solve((lu, piv), b, 4, mesh, ROW, trans=3)
    with pytest.raises(ValueError, match=r"lu_solve: piv has shape"):
        tj.lu_solve((lu, piv[:-1]), b, 4, mesh, ROW)
    with pytest.raises(TypeError, match=r"lu_solve: a factorization is lu_factor's"):
        tj.lu_solve((lu, piv, piv), b, 4, mesh, ROW)
    with pytest.raises(ValueError, match=r"lu_solve: mixed= and donate= apply to a matrix"):
        tj.lu_solve((lu, piv), b, 4, mesh, ROW, mixed="s")
    with pytest.raises(ValueError, match=r"lu_solve: trans applies to lu_factor's factors"):
        tj.lu_solve(general(n, np.float64), b, 4, mesh, ROW, trans=1)
    x, status = tj.lu_solve((lu, jnp.zeros(n, jnp.int32)), b, 4, mesh, ROW,  # not getrf's
                            return_status=True)
    assert int(status) < 0
    assert_all_nan(x)
    assert "lu_factor" in tj.__all__
