"""tessera.jax (jaxmg's potrs / potri / cholesky and their shard_map forms) against JAX's own
dense solvers, on a 1D mesh of the first (up to) 4 devices of jax.devices(): the GPUs when jax
has some, else 4 CPU devices forced through XLA_FLAGS before jax is imported. Every test takes
the `devices` fixture; nothing names a CPU.

Tolerances: random A are Hermitian with eigenvalues in [1, 5], references are computed in double
precision from the same rounded A, and the backward error ||Ax - b|| / (||A|| ||x||) and forward
errors ||x - x_ref|| / ||x_ref|| must stay below tol = 100 * eps * N (eps of A's precision; the
factor 100 covers the condition number <= 5 and the constant of Cholesky's error bound).

TESSERA_JAX_LEAK_CALLS: calls of the leak test (default 10000, ~1.2 ms each on 2 CPU cores)."""
import os

if "JAX_NUM_CPU_DEVICES" not in os.environ and \
        "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               " --xla_force_host_platform_device_count=4").strip()
os.environ.setdefault("TESSERA_PERFMODEL", "none")  # no kernel-time history written by tests

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

sys.path.append(str(Path(__file__).resolve().parents[2] / "python"))  # PYTHONPATH wins
tj = pytest.importorskip("tessera.jax")
from tessera import _native  # noqa: E402

try:
    _native.native()
except ImportError as e:  # libtessera_jax.so not built / not found
    pytest.skip(str(e), allow_module_level=True)

ROW = P("x", None)
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
FNS = ["potrs", "potri", "cholesky"]
UPLO = pytest.mark.parametrize("lower", [False, True], ids=["upper", "lower"])
DTYPE = pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)

# ------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def devices():
    """The first (up to) 4 devices: GPUs when jax has them, else the forced CPU devices."""
    devs = jax.devices()[:4]
    if devs[0].platform != "cpu" and "gpu" not in _native.native().platforms:
        pytest.fail("jax runs on GPUs but libtessera_jax was built without CUDA")
    return devs


def make_mesh(devices, kind):
    """'explicit': jax.make_mesh (Explicit axes in this jax); 'auto': Mesh(...) (Auto axes)."""
    if kind == "explicit":
        return jax.make_mesh((len(devices),), ("x",), devices=devices)
    return Mesh(np.array(devices), ("x",))


@pytest.fixture(params=["explicit", "auto"])
def mesh(request, devices):
    return make_mesh(devices, request.param)


# -------------------------------------------------------------------------------- helpers


def is_complex(dtype):
    return np.dtype(dtype).kind == "c"


def hi(x):
    """x in double precision (complex128 or float64), as numpy."""
    x = np.asarray(x)
    return x.astype(np.complex128 if is_complex(x.dtype) else np.float64)


def tol(dtype, n):
    return 100 * np.finfo(dtype).eps * n


def randn(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if is_complex(dtype):
        x = (x + 1j * rng.standard_normal(shape)) / np.sqrt(2)
    return x


def hpd(n, dtype, seed=0):
    """A random Hermitian positive definite matrix with eigenvalues in [1, 5], both triangles."""
    m = randn(np.random.default_rng(seed), (n, n), dtype)
    a = m @ m.conj().T / n + np.eye(n)
    return ((a + a.conj().T) / 2).astype(dtype)


def diag(n, dtype):
    return np.diag(np.arange(1.0, n + 1)).astype(dtype)


def rhs(n, dtype, k=3, seed=1):
    return randn(np.random.default_rng(seed), (n,) if k is None else (n, k), dtype).astype(dtype)


def put(x, mesh, spec):
    return jax.device_put(x, NamedSharding(mesh, spec))


def rel(x, ref):
    x, ref = hi(x), hi(ref)
    return np.linalg.norm(x - ref) / np.linalg.norm(ref)


def backward_error(a, x, b):
    a, x, b = hi(a), hi(x), hi(b)
    return np.linalg.norm(a @ x - b) / (np.linalg.norm(a) * np.linalg.norm(x))


def reference(fn, a, b=None, lower=False):
    """JAX's answer in double precision: cho_solve, the factor (L, or U = Lᴴ), or inv."""
    a = jnp.asarray(hi(a))
    if fn == "potrs":
        return np.asarray(jsl.cho_solve(jsl.cho_factor(a, lower=lower), jnp.asarray(hi(b))))
    if fn == "potri":
        return np.asarray(jnp.linalg.inv(a))
    low = np.asarray(jnp.linalg.cholesky(a))
    return low if lower else low.conj().T


def check(fn, out, a, b=None, lower=False, triangle_only=False):
    """out (potrs: x; potri: A^-1, or with triangle_only its `lower`/upper triangle; cholesky:
    the factor) agrees with JAX's reference for A."""
    n, out, t = a.shape[0], np.asarray(out), tol(a.dtype, a.shape[0])
    assert out.dtype == a.dtype
    if fn == "potrs":
        assert out.shape == b.shape
        assert backward_error(a, out, b) < t
        assert rel(out, reference(fn, a, b, lower)) < t
        return
    assert out.shape == (n, n)
    if fn == "cholesky" or triangle_only:
        other = np.triu(out, 1) if lower else np.tril(out, -1)
        assert not other.any(), "the other triangle must be exactly zero"
    if fn == "potri" and triangle_only:
        out = tj.potri_symmetrize(out, lower)
    assert rel(out, reference(fn, a, b, lower)) < t


def run_global(fn, a, b, T_A, mesh, **kw):
    """(out, status) of the global form with mesh and in_specs given."""
    args = (a, b) if fn == "potrs" else (a,)
    return getattr(tj, fn)(*args, T_A, mesh, ROW, return_status=True, **kw)


def run_local(fn, mesh, a, b=None, T_A=4, b_rows=False, jit=True, return_logdet=False, **kw):
    """The *_shardmap_ctx form inside our own shard_map over `mesh` (jitted unless jit=False):
    A P('x', None), b replicated (row-sharded with b_rows); out_specs b's spec for x, P('x') for
    status and logdet. Arrays not yet placed are placed."""
    ctx = getattr(tj, fn + "_shardmap_ctx")
    bspec = P("x" if b_rows else None, *[None] * (np.ndim(b) - 1))
    a, b = (x if isinstance(x, jax.Array) else put(x, mesh, s) for x, s in ((a, ROW), (b, bspec)))
    if fn == "potrs":
        in_specs, args = (ROW, bspec), (a, b)
        out_specs = (bspec,) + (P("x"),) * (2 if return_logdet else 1)

        def body(a_, b_):
            return ctx(a_, b_, T_A, return_logdet=return_logdet, **kw)
    else:
        in_specs, args, out_specs = (ROW,), (a,), (ROW, P("x"))

        def body(a_):
            return ctx(a_, T_A, **kw)
    g = jax.shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=False)
    return (jax.jit(g) if jit else g)(*args)


def assert_all_nan(*xs):
    for x in xs:
        assert np.isnan(np.asarray(x)).all(), x


def sharded_like(x, mesh, spec):
    return x.sharding.is_equivalent_to(NamedSharding(mesh, spec), x.ndim)


# ------------------------------------------------------- every function x dtype x N x T_A

# N: multiples and non-multiples of 4 devices and of the tile, from 2 rows per device up; each
# N on one kind of mesh, so that both kinds see even and uneven N.
SWEEP = [(8, "explicit"), (10, "auto"), (37, "explicit"), (64, "auto"), (203, "auto"),
         (300, "explicit")]


@UPLO
@pytest.mark.parametrize("n,kind", SWEEP, ids=[f"N{n}-{k}" for n, k in SWEEP])
@DTYPE
@pytest.mark.parametrize("fn", FNS)
def test_global_form_matches_reference(fn, dtype, n, kind, lower, devices):
    mesh = make_mesh(devices, kind)
    rows = -(-n // len(devices))
    b = rhs(n, dtype)
    for a in (hpd(n, dtype), diag(n, dtype)):
        for T_A in (1, 3, rows + 5):  # a hint only: 1 up to larger than a shard
            out, status = run_global(fn, a, b, T_A, mesh, lower=lower)
            assert int(status) == 0
            check(fn, out, a, b, lower)


@UPLO
@DTYPE
@pytest.mark.parametrize("fn", FNS)
def test_shardmap_form_matches_reference(fn, dtype, lower, mesh, devices):
    n = 16 * len(devices)
    b = rhs(n, dtype)
    for a, T_A in ((hpd(n, dtype), 1), (diag(n, dtype), 16 + 5)):  # T_A up to > a shard
        outs = run_local(fn, mesh, a, b, T_A=T_A, lower=lower)
        assert np.asarray(outs[-1]).shape == (len(devices),)
        assert (np.asarray(outs[-1]) == 0).all()
        check(fn, outs[0], a, b, lower, triangle_only=True)


@pytest.mark.parametrize("rows", [2, 75])
@pytest.mark.parametrize("b_shape", ["1d", "2d"])
@pytest.mark.parametrize("b_rows", [False, True], ids=["b-replicated", "b-rows"])
def test_potrs_shardmap_b_layouts(b_rows, b_shape, rows, mesh, devices):
    n = rows * len(devices)
    a, b = hpd(n, np.float64), rhs(n, np.float64, None if b_shape == "1d" else 2)
    x, logdet, status = run_local("potrs", mesh, a, b, T_A=3, b_rows=b_rows, return_logdet=True)
    assert x.shape == b.shape and (np.asarray(status) == 0).all()
    check("potrs", x, a, b)
    ref = np.linalg.slogdet(a).logabsdet
    assert np.allclose(np.asarray(logdet), ref, rtol=tol(np.float64, n))


def test_shardmap_form_without_jit(mesh, devices):
    n = 4 * len(devices)
    a, b = hpd(n, np.complex128), rhs(n, np.complex128)
    x, status = run_local("potrs", mesh, a, b, jit=False)
    assert (np.asarray(status) == 0).all()
    check("potrs", x, a, b)


# ------------------------------------------------------------- failures: status and NaN


def _outputs(fn, form, a, mesh, lower):
    """(status as an int array, every returned array) of one call that may fail."""
    b = rhs(a.shape[0], a.dtype, 2)
    kw = dict(lower=lower, return_logdet=True) if fn == "potrs" else dict(lower=lower)
    outs = run_global(fn, a, b, 2, mesh, **kw) if form == "global" else \
        run_local(fn, mesh, a, b, T_A=2, **kw)
    return np.atleast_1d(np.asarray(outs[-1])), outs[:-1]


def fail_mesh(devices, form):
    """Failure and triangle tests: global forms on an Auto mesh, shard_map forms on an Explicit
    one (both kinds see the failure paths; the sweeps above cover both kinds anyway)."""
    return make_mesh(devices, "auto" if form == "global" else "explicit")


@UPLO
@pytest.mark.parametrize("form", ["global", "shardmap"])
@pytest.mark.parametrize("fn", FNS)
def test_not_positive_definite_gives_lapack_info_and_nan(fn, form, lower, devices):
    mesh, n = fail_mesh(devices, form), 4 * len(devices)
    for k in (0, n // 2 + 1, n - 1):
        for a in (diag(n, np.float64), hpd(n, np.float64)):
            a = a.copy()
            a[k, k] = -1  # the leading minor of order k + 1 is the first one not PD
            status, outs = _outputs(fn, form, a, mesh, lower)
            assert (status == k + 1).all(), (k, status)
            assert_all_nan(*outs)


@pytest.mark.parametrize("where", ["diagonal", "off-diagonal"])
@UPLO
@pytest.mark.parametrize("form", ["global", "shardmap"])
@pytest.mark.parametrize("fn", FNS)
def test_nan_in_read_triangle_gives_status_and_nan(fn, form, lower, where, devices):
    mesh, n = fail_mesh(devices, form), 4 * len(devices)
    a = hpd(n, np.complex128)
    i, j = (3, 3) if where == "diagonal" else (n - 2, 1)
    a[(i, j) if lower else (j, i)] = np.nan
    status, outs = _outputs(fn, form, a, mesh, lower)
    assert (status > 0).all(), status
    assert_all_nan(*outs)


# -------------------------------------------------------- only the chosen triangle is read


def with_garbage(a, lower):
    """a with large random values (and a NaN, an Inf) in the strict triangle not read."""
    g, n = a.copy(), a.shape[0]
    junk = 1e3 * randn(np.random.default_rng(7), (n, n), a.dtype)
    mask = np.triu(np.ones((n, n), bool), 1) if lower else np.tril(np.ones((n, n), bool), -1)
    g[mask] = junk[mask]
    g[(0, n - 1) if lower else (n - 1, 0)] = np.nan
    g[(1, n - 2) if lower else (n - 2, 1)] = np.inf
    return g


@UPLO
@pytest.mark.parametrize("form", ["global", "shardmap"])
@pytest.mark.parametrize("fn", FNS)
def test_other_triangle_is_never_read(fn, form, lower, devices):
    mesh, n = fail_mesh(devices, form), 8 * len(devices)
    a, b = hpd(n, np.complex128), rhs(n, np.complex128)
    if form == "global":
        out, status = run_global(fn, with_garbage(a, lower), b, 4, mesh, lower=lower)
    else:
        out, status = run_local(fn, mesh, with_garbage(a, lower), b, lower=lower)
    assert (np.asarray(status) == 0).all()
    check(fn, out, a, b, lower, triangle_only=form == "shardmap")


@pytest.mark.parametrize("form", ["global", "shardmap"])
@pytest.mark.parametrize("fn", FNS)
def test_jaxmg_0x_upper_entry_only_fails_the_upper_call(fn, form, devices):
    """jaxmg 0.x's case: diag(1..N) with A[0, 1] = 2 in the upper triangle."""
    mesh, n = fail_mesh(devices, form), 4 * len(devices)
    a = diag(n, np.float64)
    a[0, 1] = 2  # upper minor [[1, 2], [2, 2]] is indefinite: info 2
    status, outs = _outputs(fn, form, a, mesh, lower=False)
    assert (status > 0).all(), status
    assert_all_nan(*outs)
    status, outs = _outputs(fn, form, a, mesh, lower=True)
    assert (status == 0).all(), status
    d = np.arange(1.0, n + 1)
    if fn == "potrs":
        b = rhs(n, np.float64, 2)
        assert np.allclose(outs[0], b / d[:, None], rtol=1e-13)
        assert np.isclose(np.asarray(outs[1]).ravel()[0], np.log(d).sum(), rtol=1e-13)
    else:
        full = np.asarray(outs[0])
        want = np.diag(1 / d if fn == "potri" else np.sqrt(d))
        if fn == "potri" and form == "shardmap":
            full = tj.potri_symmetrize(full, lower=True)
        assert np.allclose(full, want, rtol=1e-13, atol=0)


# ------------------------------------------------------------------ jit form, in_specs forms


@pytest.mark.parametrize("fn", FNS)
def test_jit_form(fn, mesh, devices):
    """Inside jax.jit with mesh and in_specs given; on an Explicit mesh, where traced arrays
    carry their sharding, x keeps b's layout there too."""
    n = 8 * len(devices)
    a, b = hpd(n, np.float64), rhs(n, np.float64)
    f = getattr(tj, fn)
    g = jax.jit(lambda *x: f(*x, 4, mesh, ROW, return_status=True))
    for spec in (P(None, None), ROW)[:2 if fn == "potrs" else 1]:
        args = (put(a, mesh, ROW),) + ((put(b, mesh, spec),) if fn == "potrs" else ())
        out, status = g(*args)
        assert int(status) == 0
        check(fn, out, a, b)
        if fn == "potrs" and "Explicit" in str(mesh.axis_types):
            assert sharded_like(out, mesh, spec), out.sharding


def test_jit_without_mesh_reads_it_or_asks_for_it(mesh, devices):
    """Inside jit A may carry no concrete mesh: either the call works, or it raises a
    ValueError that says to pass mesh (not an error from JAX's internals)."""
    n = 8 * len(devices)
    a, b = hpd(n, np.float64), rhs(n, np.float64)
    try:
        x = jax.jit(lambda a_, b_: tj.potrs(a_, b_, 4))(put(a, mesh, ROW), put(b, mesh, P()))
    except ValueError as e:
        assert "tessera.jax.potrs" in str(e) and "pass mesh" in str(e), str(e)
        return
    check("potrs", x, a, b)


SPEC_FORMS = {
    "P": dict(in_specs=ROW),
    "1-tuple": dict(in_specs=(ROW,)),
    "jaxmg-0.x-pair": dict(in_specs=(ROW, P(None, None))),
    "matrix_specs": dict(matrix_specs=ROW),
    "inferred": dict(),
}


@pytest.mark.parametrize("form", list(SPEC_FORMS))
@pytest.mark.parametrize("fn", FNS)
def test_in_specs_forms(fn, form, mesh, devices):
    n = 4 * len(devices)
    a, b = hpd(n, np.float64), rhs(n, np.float64)
    kw = dict(SPEC_FORMS[form])
    if kw:
        kw["mesh"] = mesh
    args = (put(a, mesh, ROW),) + ((b,) if fn == "potrs" else ())
    out, status = getattr(tj, fn)(*args, 2, return_status=True, **kw)
    assert int(status) == 0
    check(fn, out, a, b)


# --------------------------------------------------------------------- b's shape and layout


@pytest.mark.parametrize("b_shape", ["1d", "2d"])
@pytest.mark.parametrize("b_rows,even", [(False, True), (False, False), (True, True)],
                         ids=["b-replicated", "b-replicated-N-uneven", "b-rows"])
def test_solution_comes_back_in_b_layout(b_rows, even, b_shape, mesh, devices):
    """A row-sharded b needs N divisible by the device count; x is laid out like b."""
    ndev = len(devices)
    n = 6 * ndev if even else 4 * ndev + 3
    a, b = hpd(n, np.float32), rhs(n, np.float32, None if b_shape == "1d" else 2)
    spec = P("x" if b_rows else None, *[None] * (b.ndim - 1))
    a_in = put(a, mesh, ROW) if n % ndev == 0 else a
    x = tj.potrs(a_in, put(b, mesh, spec), 3, mesh, ROW)
    assert x.shape == b.shape and x.dtype == b.dtype
    assert sharded_like(x, mesh, spec), x.sharding
    check("potrs", x, a, b)


# ---------------------------------------------------------------- reuse, donation, logdet


@pytest.mark.parametrize("fn", FNS)
def test_inputs_unchanged_and_calls_repeatable(fn, mesh, devices):
    n = 4 * len(devices)
    a, b = hpd(n, np.complex64), rhs(n, np.complex64)
    a_in, b_in = put(a, mesh, ROW), put(b, mesh, P())
    first, _ = run_global(fn, a_in, b_in, 2, mesh)
    second, _ = run_global(fn, a_in, b_in, 2, mesh)
    np.testing.assert_array_equal(np.asarray(first), np.asarray(second))
    np.testing.assert_array_equal(np.asarray(a_in), a)
    np.testing.assert_array_equal(np.asarray(b_in), b)
    assert not a_in.is_deleted() and not b_in.is_deleted()
    # the shard_map form, inside a jit that donates nothing, leaves its inputs alone too
    first, second = (run_local(fn, mesh, a_in, b_in, T_A=2)[0] for _ in range(2))
    np.testing.assert_array_equal(np.asarray(first), np.asarray(second))
    np.testing.assert_array_equal(np.asarray(a_in), a)
    np.testing.assert_array_equal(np.asarray(b_in), b)


@pytest.mark.parametrize("fn", FNS)
def test_donate(fn, mesh, devices):
    n = 4 * len(devices)
    a, b = hpd(n, np.float64), rhs(n, np.float64)
    a_in = put(a, mesh, ROW)
    out, status = run_global(fn, a_in, put(b, mesh, P()), 2, mesh, donate=True)
    assert int(status) == 0
    check(fn, out, a, b)
    assert a_in.is_deleted()  # A's buffer went to the call


@DTYPE
def test_logdet_matches_slogdet(dtype, devices):
    mesh, n = make_mesh(devices, "auto"), 37
    a, b = hpd(n, dtype), rhs(n, dtype)
    for lower in (False, True):
        x, logdet = tj.potrs(a, b, 5, mesh, ROW, return_logdet=True, lower=lower)
        sign, ref = jnp.linalg.slogdet(jnp.asarray(hi(a)))
        assert logdet.shape == () and logdet.dtype == np.finfo(dtype).dtype
        assert abs(float(logdet) - float(ref)) <= tol(dtype, n) * max(1.0, abs(float(ref)))
        check("potrs", x, a, b, lower)


def test_return_tuples(devices):
    mesh, n = make_mesh(devices, "auto"), 4 * len(devices)
    a, b = hpd(n, np.float64), rhs(n, np.float64)
    x = tj.potrs(a, b, 2, mesh, ROW)
    assert isinstance(x, jax.Array) and x.shape == b.shape
    for status in (False, True):
        for logdet in (False, True):
            out = tj.potrs(a, b, 2, mesh, ROW, return_status=status, return_logdet=logdet)
            if not (status or logdet):
                out = (out,)
            assert isinstance(out, tuple) and len(out) == 1 + status + logdet
            np.testing.assert_array_equal(np.asarray(out[0]), np.asarray(x))
            if logdet:
                assert out[1].shape == () and np.isfinite(out[1])
            if status:
                assert out[-1].shape == () and out[-1].dtype == np.int32 and int(out[-1]) == 0
    for fn in ("potri", "cholesky"):
        out = getattr(tj, fn)(a, 2, mesh, ROW)
        assert isinstance(out, jax.Array) and out.shape == (n, n)
        out = getattr(tj, fn)(a, 2, mesh, ROW, return_status=True)
        assert isinstance(out, tuple) and len(out) == 2 and int(out[1]) == 0


# ------------------------------------------------------------------------------------ errors

# id: (case(c) -> (a, T_A, mesh, in_specs[, kwargs]), exception, message regex), for every
# global function; c.a: a well-formed A, c.mesh: the 1D mesh, c.mesh2: a 2 x (ndev/2) mesh.
GLOBAL_ERRORS = {
    "non-square": (lambda c: (np.ones((c.n, c.n - 1)), 2, c.mesh, ROW), ValueError, "square"),
    "1-D a": (lambda c: (np.ones(c.n), 2, c.mesh, ROW), ValueError, "2-D"),
    "int32": (lambda c: (c.a.astype(np.int32), 2, c.mesh, ROW), TypeError, "int32"),
    "float16": (lambda c: (c.a.astype(np.float16), 2, c.mesh, ROW), TypeError, "float16"),
    "bfloat16": (lambda c: (jnp.asarray(c.a, jnp.bfloat16), 2, c.mesh, ROW), TypeError,
                 "bfloat16"),
    "T_A=0": (lambda c: (c.a, 0, c.mesh, ROW), ValueError, "T_A"),
    "T_A=-3": (lambda c: (c.a, -3, c.mesh, ROW), ValueError, "T_A"),
    "T_A=2.0": (lambda c: (c.a, 2.0, c.mesh, ROW), ValueError, "T_A"),
    "T_A=2.5": (lambda c: (c.a, 2.5, c.mesh, ROW), ValueError, "T_A"),
    "T_A='4'": (lambda c: (c.a, "4", c.mesh, ROW), ValueError, "T_A"),
    "P(None,x)": (lambda c: (c.a, 2, c.mesh, P(None, "x")), ValueError, "by rows"),
    "P(x,y) 2D mesh": (lambda c: (c.a, 2, c.mesh2, P("x", "y")), ValueError, "by rows"),
    "2D mesh": (lambda c: (c.a, 2, c.mesh2, ROW), ValueError, "1D mesh"),
    "axis not in mesh": (lambda c: (c.a, 2, c.mesh, P("y", None)), ValueError, "'y'"),
    "3-tuple in_specs": (lambda c: (c.a, 2, c.mesh, (ROW, P(None, None), P(None, None))),
                         ValueError, "in_specs"),
    "str in_specs": (lambda c: (c.a, 2, c.mesh, "x"), ValueError, "in_specs"),
    "unsharded jax array": (lambda c: (jnp.asarray(c.a), 2, None, None), ValueError,
                            "pass mesh and in_specs"),
    "mesh, no in_specs": (lambda c: (jnp.asarray(c.a), 2, c.mesh, None), ValueError, "in_specs"),
    "unsharded numpy array": (lambda c: (c.a, 2, None, None), ValueError, "mesh"),
    "inferred P(None,x)": (lambda c: (put(c.a, c.mesh, P(None, "x")), 2, None, None),
                           ValueError, "by rows"),
    "inferred P(x,y) 2D": (lambda c: (put(c.a, c.mesh2, P("x", "y")), 2, None, None),
                           ValueError, "by rows"),
    "pad=False, N uneven": (lambda c: (np.eye(c.n + 1), 2, c.mesh, ROW, {"pad": False}),
                            ValueError, "pad"),
}


class _Ctx:
    def __init__(self, devices):
        ndev = len(devices)
        self.n, self.mesh = 4 * ndev, make_mesh(devices, "explicit")
        self.a = hpd(self.n, np.float64)
        self.mesh2 = jax.make_mesh((2, ndev // 2), ("x", "y"), devices=devices) \
            if ndev >= 4 and ndev % 2 == 0 else None


@pytest.mark.parametrize("case", list(GLOBAL_ERRORS))
@pytest.mark.parametrize("fn", FNS)
def test_global_argument_errors(fn, case, devices):
    c = _Ctx(devices)
    if "2D" in case and c.mesh2 is None:
        pytest.skip("a 2D mesh with both axes > 1 needs 4 devices")
    if "uneven" in case and len(devices) == 1:
        pytest.skip("one device never pads: any N is one shard")
    make, exc, match = GLOBAL_ERRORS[case]
    a, T_A, mesh, spec, *kw = make(c)
    args = (a, np.ones(a.shape[0])) if fn == "potrs" else (a,)
    with pytest.raises(exc, match=rf"tessera\.jax\.{fn}: .*{match}"):
        getattr(tj, fn)(*args, T_A, mesh, spec, **(kw[0] if kw else {}))


RHS_ERRORS = {
    "b N-1 rows": (lambda n: np.ones(n - 1), ValueError, "b must be"),
    "b N+1 rows 2-D": (lambda n: np.ones((n + 1, 2)), ValueError, "b must be"),
    "b 3-D": (lambda n: np.ones((n, 1, 1)), ValueError, "b must be"),
    "b complex, A real": (lambda n: np.ones(n, np.complex128), TypeError, "does not cast"),
}


@pytest.mark.parametrize("case", list(RHS_ERRORS))
def test_potrs_rhs_errors(case, devices):
    c = _Ctx(devices)
    make_b, exc, match = RHS_ERRORS[case]
    with pytest.raises(exc, match=rf"tessera\.jax\.potrs: .*{match}"):
        tj.potrs(c.a, make_b(c.n), 2, c.mesh, ROW)


@pytest.mark.parametrize("in_jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("fn", FNS)
def test_shardmap_ctx_outside_shard_map(fn, in_jit, devices):
    c = _Ctx(devices)
    ctx = getattr(tj, fn + "_shardmap_ctx")
    call = (lambda a, b: ctx(a, b, 2)) if fn == "potrs" else (lambda a, b: ctx(a, 2))
    with pytest.raises(ValueError, match="inside jax.shard_map"):
        (jax.jit(call) if in_jit else call)(c.a, np.ones(c.n))


# id: (changes to a good potrs_shardmap_ctx call (c -> dict of a, b, T_A, mesh, kw), exception,
# message regex)
LOCAL_ERRORS = {
    "T_A=0": (lambda c: dict(T_A=0), ValueError, "T_A"),
    "T_A=1.5": (lambda c: dict(T_A=1.5), ValueError, "T_A"),
    "int32": (lambda c: dict(a=c.a.astype(np.int32)), TypeError, "int32"),
    "b N-1 rows": (lambda c: dict(b=np.ones(c.n - 1)), ValueError, "b must be"),
    "2D mesh": (lambda c: dict(mesh=c.mesh2), ValueError, "axis_name"),
    "2D mesh, axis_name": (lambda c: dict(mesh=c.mesh2, kw={"axis_name": "x"}), ValueError,
                           "1D mesh"),
}


@pytest.mark.parametrize("case", list(LOCAL_ERRORS))
def test_shardmap_ctx_argument_errors(case, devices):
    c = _Ctx(devices)
    if "2D" in case and c.mesh2 is None:
        pytest.skip("a 2D mesh with both axes > 1 needs 4 devices")
    change, exc, match = LOCAL_ERRORS[case]
    x = dict(dict(a=c.a, b=np.ones(c.n), T_A=2, mesh=c.mesh, kw={}), **change(c))
    f = jax.shard_map(lambda a_, b_: tj.potrs_shardmap_ctx(a_, b_, x["T_A"], **x["kw"])[1],
                      mesh=x["mesh"], in_specs=(ROW, P()), out_specs=P("x"), check_vma=False)
    with pytest.raises(exc, match=rf"tessera\.jax\.potrs_shardmap_ctx: .*{match}"):
        f(put(x["a"], x["mesh"], ROW), put(x["b"], x["mesh"], P()))


# ---------------------------------------------------------- potri_symmetrize, status_message


@UPLO
@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=["float64", "complex128"])
def test_potri_symmetrize(dtype, lower):
    up = np.array([[4, 1 + 2j, 3], [0, 5, -1j], [0, 0, 6]])
    up = up if is_complex(dtype) else up.real
    full = (up + np.triu(up, 1).conj().T).astype(dtype)
    half = np.tril(full) if lower else np.triu(full)
    half[(0, 2) if lower else (2, 0)] = 99  # only the named triangle counts
    out = tj.potri_symmetrize(jnp.asarray(half), lower=lower)
    np.testing.assert_array_equal(np.asarray(out), full)


def test_potri_symmetrize_on_row_sharded_array(mesh, devices):
    """What jaxmg users do with potri_shardmap_ctx's output: symmetrize it as it comes out."""
    n = 4 * len(devices)
    upper = np.triu(reference("potri", hpd(n, np.float64)))
    out = tj.potri_symmetrize(put(upper, mesh, ROW))
    np.testing.assert_array_equal(np.asarray(out), upper + np.triu(upper, 1).T)


@pytest.mark.parametrize("status", [0, 3, -1, -100, -106, -110])
def test_status_message(status):
    msg = tj.status_message(status)
    assert isinstance(msg, str) and msg.strip()
    assert status <= 0 or str(status) in msg  # info: the order of the minor
    assert status != -110 or "time" in msg


# --------------------------------------------------------------------------------------- leak


def _rss_and_fds():
    with open("/proc/self/statm") as f:
        rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    return rss, len(os.listdir("/proc/self/fd"))


def test_repeated_potrs_keeps_memory_and_descriptors_flat(devices):
    """Many potrs calls on a small matrix (N=32): RSS and the open file descriptors stay flat
    after a warm-up. The number of calls is TESSERA_JAX_LEAK_CALLS (default 10000, about
    1.2 ms a call on a 2-core CPU host; CI may shorten it, e.g. TESSERA_JAX_LEAK_CALLS=500).
    Slack: 4 MiB of RSS (a leak of 400 bytes a call shows over 10000 calls), 2 descriptors."""
    if not os.path.exists("/proc/self/statm"):
        pytest.skip("needs /proc")
    calls = int(os.environ.get("TESSERA_JAX_LEAK_CALLS", "10000"))
    mesh, n = make_mesh(devices, "explicit"), 32
    a, b = hpd(n, np.float64), rhs(n, np.float64, None)
    a_in, b_in = put(a, mesh, ROW), put(b, mesh, P())
    for _ in range(300):
        x = tj.potrs(a_in, b_in, 4).block_until_ready()
    rss0, fds0 = _rss_and_fds()
    for _ in range(calls):
        x = tj.potrs(a_in, b_in, 4).block_until_ready()
    rss1, fds1 = _rss_and_fds()
    check("potrs", x, a, b)
    assert rss1 - rss0 < 4 << 20, f"RSS grew {(rss1 - rss0) / 2**20:.1f} MiB in {calls} calls"
    assert fds1 - fds0 <= 2, f"open descriptors {fds0} -> {fds1}"
