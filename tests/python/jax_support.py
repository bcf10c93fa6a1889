"""Shared by the tessera.jax tests (test_jax.py, test_jax_api.py): the device setup (4 CPU
devices forced through XLA_FLAGS before jax is imported, unless GPUs are there), the `devices`
and `mesh` fixtures, matrix generators and the checks against JAX's own solvers. Importing it
skips the importing module when jax or libtessera_jax.so is missing."""
import os


def _xla_flag(flag):
    """flag (--option=value) appended to XLA_FLAGS unless they name its option already."""
    if flag.split("=")[0] not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + flag).strip()


if "JAX_NUM_CPU_DEVICES" not in os.environ:
    _xla_flag("--xla_force_host_platform_device_count=4")
# The tests' programs are small and most are compiled once: XLA's optimization passes cost more
# than they save there (a test's own XLA_FLAGS level wins).
_xla_flag("--xla_backend_optimization_level=0")
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


def mesh_of(devices, ndev, kind="explicit"):
    """A 1D mesh over the first ndev devices (make_mesh's kinds)."""
    return make_mesh(devices[:ndev], kind)


def square_mesh(devices):
    """A 2 x 2 mesh ("x", "y") over 4 devices; skips the test where there are fewer."""
    if len(devices) != 4:
        pytest.skip("a 2 x 2 mesh needs 4 devices")
    return jax.make_mesh((2, 2), ("x", "y"), devices=devices)


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


def run_local(fn, mesh, a, b=None, T_A=4, b_rows=False, jit=True, return_logdet=False,
              check_vma=True, status_spec=P("x"), **kw):
    """The *_shardmap_ctx form inside our own shard_map over `mesh` (jitted unless jit=False;
    check_vma as jax.shard_map's, on by default): A P('x', None), b (potrs, lu_solve)
    replicated (row-sharded with b_rows); out_specs b's spec for x, status_spec for status and
    logdet (P('x'): one per device; P(): the same on every device). Arrays not yet placed are
    placed."""
    ctx = getattr(tj, fn + "_shardmap_ctx")
    bspec = P("x" if b_rows else None, *[None] * (np.ndim(b) - 1))
    a, b = (x if isinstance(x, jax.Array) else put(x, mesh, s) for x, s in ((a, ROW), (b, bspec)))
    if fn in ("potrs", "lu_solve"):
        in_specs, args = (ROW, bspec), (a, b)
        out_specs = (bspec,) + (status_spec,) * (2 if return_logdet else 1)
        if fn == "potrs":
            kw = dict(kw, return_logdet=return_logdet)

        def body(a_, b_):
            return ctx(a_, b_, T_A, **kw)
    else:
        in_specs, args, out_specs = (ROW,), (a,), (ROW, status_spec)

        def body(a_):
            return ctx(a_, T_A, **kw)
    g = jax.shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                      check_vma=check_vma)
    return (jax.jit(g) if jit else g)(*args)


def check_argument_error(case, fn, make, kw, exc, match, devices):
    """tessera.jax.<fn>(*make(n), T_A, mesh, spec, **kw) raises `exc` with a message naming the
    function and matching `match`, on a mesh over every device (n = 4 per device; kw may give
    T_A, default 2, and spec, default ROW). A case named "... uneven" is skipped on one device,
    which never pads."""
    if "uneven" in case and len(devices) == 1:
        pytest.skip("one device never pads")
    mesh, n = mesh_of(devices, len(devices)), 4 * len(devices)
    kw = dict(kw)
    T_A, spec = kw.pop("T_A", 2), kw.pop("spec", ROW)
    with pytest.raises(exc, match=rf"tessera\.jax\.{fn}: .*{match}"):
        getattr(tj, fn)(*make(n), T_A, mesh, spec, **kw)


def assert_all_nan(*xs):
    for x in xs:
        assert np.isnan(np.asarray(x)).all(), x


def sharded_like(x, mesh, spec):
    return x.sharding.is_equivalent_to(NamedSharding(mesh, spec), x.ndim)


# ------------------------------------------------------- every function x dtype x N x T_A

# N: multiples and non-multiples of 4 devices and of the tile, from 2 rows per device up; each
# N on one kind of mesh, so that both kinds see even and uneven N.


def run_with_tile_3(script, what):
    """Runs `script` in a fresh Python on 4 CPU devices with TESSERA_TILE=3 (many panels per
    device), this folder and the package on its path; fails unless it ends printing "ok" within
    300 s (`what`: the routine, for the message of a hang)."""
    import subprocess
    here = Path(__file__).resolve().parent
    env = dict(os.environ, TESSERA_TILE="3", JAX_PLATFORMS="cpu",
               PYTHONPATH=os.pathsep.join([str(here), str(here.parents[1] / "python"),
                                           os.environ.get("PYTHONPATH", "")]))
    try:
        p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           env=env, cwd=here, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what} with many panels did not finish within 300 s (a hang)")
    assert p.returncode == 0 and p.stdout.strip().endswith("ok"), p.stdout + p.stderr[-4000:]
