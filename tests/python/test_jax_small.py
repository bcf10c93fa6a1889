"""tessera.jax's calls small for their mesh (python/ffi/small.c): potrs, cholesky and lu_solve on
a 1D mesh of 2 and 4 devices run the distributed routine until it is measured, then on one
device, then whichever was quicker. Repeated calls of one shape take both ways; each result,
status and NaN is the same either way. The one-device calls are counted by the binding
(tessera_jax_one_device_calls), which changes nothing."""
import numpy as np
import pytest

from jax_support import (ROW, _native, assert_all_nan, check, devices, hpd, jax,  # noqa: F401
                         mesh_of, rhs, run_global, tj, tol)

# Each case its own order (odd, not a multiple of the tile 4), so that no other test of the
# process has measured its shape: calls 1 and 2 then run the distributed routine, 3 and 4 one
# device.
ORDERS = iter(range(41, 1000, 2))
FNS = ["potrs", "cholesky", "lu_solve"]
DTYPES = [np.float64, np.complex64]


def one_device_calls():
    return _native.native().one_device_calls()


def call(fn, a, b, mesh, lower=False):
    """(result, status as an int array) of one call, global form, tile 4."""
    if fn == "lu_solve":
        out, status = tj.lu_solve(a, b, 4, mesh, ROW, return_status=True)
    else:
        out, status = run_global(fn, a, b, 4, mesh, lower=lower)
    return out, np.atleast_1d(np.asarray(status))


def four_calls(fn, a, b, mesh, lower=False):
    """[(result, status, whether it ran on one device)] of 4 calls of a fresh shape: the first
    two distributed, the next two on one device."""
    out = []
    for _ in range(4):
        before = one_device_calls()
        x, status = call(fn, a, b, mesh, lower)
        jax.block_until_ready(x)
        out.append((x, status, one_device_calls() - before))
    assert [o[2] for o in out] == [0, 0, 1, 1], "the ways the calls took"
    return out


def fresh(devices, ndev, dtype):
    """(n, mesh, A Hermitian positive definite, b) of a shape no call has measured, on a mesh
    of ndev devices (the test skipped where there are fewer)."""
    if len(devices) < ndev:
        pytest.skip(f"{ndev} devices needed")
    n = next(ORDERS)
    return n, mesh_of(devices, ndev), hpd(n, dtype), rhs(n, dtype)


def check_lu(x, a, b):
    a, x, b = (np.asarray(v).astype(np.complex128) for v in (a, x, b))
    assert np.linalg.norm(a @ x - b) / (np.linalg.norm(a) * np.linalg.norm(x)) < \
        tol(np.complex64, a.shape[0])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("ndev", [2, 4])
@pytest.mark.parametrize("fn", FNS)
def test_both_ways_give_the_same_results(fn, ndev, dtype, devices):
    n, mesh, a, b = fresh(devices, ndev, dtype)
    if fn == "lu_solve":
        a = a + np.triu(rhs(n, dtype, n, seed=3), 1).astype(dtype)  # not symmetric
    calls = four_calls(fn, a, b, mesh, lower=True)
    for x, status, _ in calls:
        assert (status == 0).all(), status
        check_lu(x, a, b) if fn == "lu_solve" else check(fn, x, a, b, lower=True)
    for x, _, _ in calls[2:]:  # one device: the distributed routine's answer to rounding
        ref = np.asarray(calls[0][0])
        assert np.linalg.norm(np.asarray(x) - ref) <= tol(dtype, n) * np.linalg.norm(ref)


@pytest.mark.parametrize("ndev", [2, 4])
def test_logdet_on_one_device(ndev, devices):
    n, mesh, a, b = fresh(devices, ndev, np.float64)
    for i in range(4):
        before = one_device_calls()
        x, logdet, status = tj.potrs(a, b, 4, mesh, ROW, return_logdet=True, return_status=True)
        jax.block_until_ready((x, logdet, status))
        assert (one_device_calls() - before) == (i >= 2)
        assert int(np.ravel(status)[0]) == 0
        assert np.isclose(float(np.ravel(logdet)[0]), np.linalg.slogdet(a)[1], rtol=1e-12)
        check("potrs", x, a, b)


@pytest.mark.parametrize("ndev", [2, 4])
@pytest.mark.parametrize("fn", ["potrs", "cholesky"])
def test_not_positive_definite_gives_the_same_info(fn, ndev, devices):
    n, mesh, a, b = fresh(devices, ndev, np.float64)
    a[n - 5, n - 5] = -1  # the leading minor of order n - 4 is the first one not PD
    for x, status, _ in four_calls(fn, a, b, mesh):
        assert (status == n - 4).all(), status
        assert_all_nan(x)


@pytest.mark.parametrize("ndev", [2, 4])
@pytest.mark.parametrize("fn", FNS)
def test_nan_gives_the_same_status(fn, ndev, devices):
    n, mesh, a, b = fresh(devices, ndev, np.complex128)
    a[n - 3, 2] = a[2, n - 3] = np.nan
    calls = four_calls(fn, a, b, mesh)
    first = calls[0][1]
    assert (first > 0).all(), first
    for x, status, _ in calls:
        assert (status == first).all(), (status, first)
        assert_all_nan(x)


@pytest.mark.parametrize("ndev", [2, 4])
def test_singular_lu_gives_the_same_info(ndev, devices):
    n, mesh, a, b = fresh(devices, ndev, np.float64)
    a[7, :] = 0  # a zero row of A, a zero column of the Aᵀ factored: U(7, 7) = 0, info 8
    for x, status, _ in four_calls("lu_solve", a, b, mesh):
        assert (status == 8).all(), status
        assert_all_nan(x)


# ---------------------------------------------------------------- syevd on one device


def check_syevd(w, v, a):
    """(w, V) the eigendecomposition of the Hermitian matrix a (both triangles), up to rounding:
    the eigenvalues numpy's, the residual and V's orthogonality small."""
    h, w = np.asarray(a).astype(np.complex128), np.asarray(w).astype(np.float64)
    n, t = h.shape[0], tol(np.asarray(a).dtype, h.shape[0])
    assert np.abs(w - np.linalg.eigvalsh(h)).max() <= t * np.abs(w).max()
    if v is not None:
        v = np.asarray(v).astype(np.complex128)
        assert np.linalg.norm(h @ v - v * w) <= t * np.linalg.norm(h)
        assert np.linalg.norm(v.conj().T @ v - np.eye(n)) <= t * np.sqrt(n)


@pytest.mark.parametrize("vectors", [True, False], ids=["vectors", "values"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("ndev", [1, 4])
def test_syevd_by_cost(ndev, dtype, vectors, devices):
    """syevd on a 1D mesh (one device too: its routine goes through host memory) runs the
    routine until measured, then by the measured seconds (on CPU devices one device may not
    beat the routine's LAPACK call: either way); each call's decomposition holds, A's upper
    triangle never read."""
    if len(devices) < ndev:
        pytest.skip(f"{ndev} devices needed")
    n = 4 * next(ORDERS)  # rows that split evenly over the mesh (no padding)
    mesh, a = mesh_of(devices, ndev), hpd(n, dtype, seed=n)
    given = np.tril(a) + np.triu(rhs(n, dtype, n, seed=5), 1).astype(dtype)  # read: the lower
    ways = []
    for _ in range(4):
        before = one_device_calls()
        out = tj.syevd(given, 4, mesh, ROW, return_eigenvectors=vectors)
        jax.block_until_ready(out)
        ways.append(one_device_calls() - before)
        w, v = out if vectors else (out, None)
        check_syevd(w, v, a)
    assert ways[:2] == [0, 0], ways


ONE_DEVICE = """
import jax, numpy as np
jax.config.update("jax_enable_x64", True)
import tessera.jax as tj
from jax_support import ROW, _native, hpd, mesh_of, rhs
from test_jax_small import check_syevd
devices = jax.devices()
for ndev in (1, 2, 4):
    for dtype in (np.float64, np.complex64):
        for vectors in (True, False):
            n = 12 * ndev + 4 * (dtype == np.complex64) * ndev
            a = hpd(n, dtype, seed=n)
            given = np.tril(a) + np.triu(rhs(n, dtype, n, seed=5), 1).astype(dtype)
            for _ in range(2):
                before = _native.native().one_device_calls()
                out = tj.syevd(given, 4, mesh_of(devices, ndev), ROW, return_eigenvectors=vectors)
                jax.block_until_ready(out)
                assert _native.native().one_device_calls() == before + 1, (ndev, dtype, vectors)
                w, v = out if vectors else (out, None)
                check_syevd(w, v, a)
print("ok")
"""


def test_syevd_on_one_device(devices):
    """TESSERA_EIG_METHOD=one: every syevd on a 1D mesh of row blocks covering A takes one
    device (tessera_queue_syevd on the gathered Aᵀ, V's rows written back by
    tessera_queue_transpose), on 1, 2 and 4 devices, f64 and c64, with vectors and without; each
    decomposition holds, A's upper triangle never read. In a fresh process (the setting is read
    when the binding's context starts)."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    if devices[0].platform != "cpu":
        pytest.skip("the fresh process runs on 4 CPU devices")
    here = Path(__file__).resolve().parent
    env = dict(os.environ, TESSERA_EIG_METHOD="one", JAX_PLATFORMS="cpu",
               XLA_FLAGS="--xla_force_host_platform_device_count=4",
               PYTHONPATH=os.pathsep.join([str(here), str(here.parents[1] / "python"),
                                           os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, "-c", ONE_DEVICE], capture_output=True, text=True,
                       env=env, cwd=here, timeout=300)
    assert p.returncode == 0 and p.stdout.strip().endswith("ok"), p.stdout + p.stderr[-4000:]


@pytest.mark.parametrize("ndev", [1, 2])
def test_syevd_nan_left_to_the_routine(ndev, devices):
    """A NaN in A: the one-device solve, which does not scan for it, leaves the status to the
    routine (LAPACK's column of the first NaN), on every call."""
    if len(devices) < ndev:
        pytest.skip(f"{ndev} devices needed")
    n = 4 * next(ORDERS)
    mesh, a = mesh_of(devices, ndev), hpd(n, np.float64, seed=n)
    a[n - 3, 2] = a[2, n - 3] = np.nan
    for _ in range(4):
        before = one_device_calls()
        w, v, status = tj.syevd(a, 4, mesh, ROW, return_status=True)
        assert int(status) == 3, status
        assert_all_nan(w, v)
        assert one_device_calls() == before  # declined: not counted


@pytest.mark.parametrize("ndev", [2, 4])
@pytest.mark.parametrize("fn", ["potrs", "cholesky"])
def test_a_batch_at_once_on_one_device(fn, ndev, devices):
    """jax.vmap of a call small for its mesh: the batch's shape is measured as a whole, its first
    two calls member by member, the next two gathered onto one device and solved there at once
    (one counted one-device call each: tsr_jax_small_batch); a member not positive definite gets
    its info and NaN, the others their answers and log dets, every way."""
    n, mesh, _, _ = fresh(devices, ndev, np.float64)
    a = np.stack([hpd(n, np.float64, seed=s) for s in range(3)])
    b = np.stack([rhs(n, np.float64, seed=s) for s in range(3)])
    a[1, n - 5, n - 5] = -1
    if fn == "potrs":
        f = jax.vmap(lambda a, b: tj.potrs(a, b, 4, mesh, ROW, return_logdet=True,
                                           return_status=True))
    else:
        f = jax.vmap(lambda a: tj.cholesky(a, 4, mesh, ROW, return_status=True))
    for i in range(4):
        before = one_device_calls()
        out = f(a, b) if fn == "potrs" else f(a)
        jax.block_until_ready(out)
        if i >= 2:
            assert one_device_calls() - before == 1, "the batch at once on one device"
        status = np.asarray(out[-1]).ravel()
        assert list(status) == [0, n - 4, 0], status
        assert_all_nan(np.asarray(out[0])[1])
        for k in (0, 2):
            if fn == "potrs":
                check("potrs", np.asarray(out[0])[k], a[k], b[k])
                assert np.isclose(float(np.asarray(out[1])[k]), np.linalg.slogdet(a[k])[1],
                                  rtol=1e-12)
            else:
                check("cholesky", np.asarray(out[0])[k], a[k])
