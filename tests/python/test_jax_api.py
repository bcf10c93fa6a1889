"""tessera.jax's surface beyond the numbers: every argument error raised before anything runs,
status messages, potri_symmetrize, a leak test of many calls (RSS and open descriptors flat),
the protocol's two tables, and the JAX benchmarks on CPU devices. Same devices as test_jax.py
(jax_support.py).

TESSERA_JAX_LEAK_CALLS: calls of the leak test (default 10000, ~1.2 ms each on 2 CPU cores)."""
import ctypes
import json
import os
import re
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from jax_support import *  # noqa: F401,F403  (fixtures, helpers, jax, tj)
from jax_support import _native  # noqa: F401


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
    "P(x,x) 2D mesh": (lambda c: (c.a, 2, c.mesh2, P("x", "x")), ValueError, "by rows"),
    "2D mesh, rows only": (lambda c: (c.a, 2, c.mesh2, ROW), ValueError, "must have size 1"),
    "axis not in mesh": (lambda c: (c.a, 2, c.mesh, P("y", None)), ValueError, "'y'"),
    "3-tuple in_specs": (lambda c: (c.a, 2, c.mesh, (ROW, P(None, None), P(None, None))),
                         ValueError, "in_specs"),
    "str in_specs": (lambda c: (c.a, 2, c.mesh, "x"), ValueError, "in_specs"),
    "unsharded jax array": (lambda c: (jnp.asarray(c.a), 2, None, None), ValueError,
                            "pass mesh= and in_specs="),
    "mesh, no in_specs": (lambda c: (jnp.asarray(c.a), 2, c.mesh, None), ValueError, "in_specs"),
    "unsharded numpy array": (lambda c: (c.a, 2, None, None), ValueError, "mesh"),
    "inferred P(None,x)": (lambda c: (put(c.a, c.mesh, P(None, "x")), 2, None, None),
                           ValueError, "by rows"),
    "inferred P(y,x) 2D, rows replicated": (
        lambda c: (put(c.a, c.mesh3, P("y", None)), 2, None, None), ValueError,
        "must have size 1"),
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
        self.mesh3 = self.mesh2


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


def test_numpy_matrix_without_mesh_says_what_to_pass():
    """A user's first call, NumPy arrays and no mesh: the error says why tessera cannot tell
    the devices and what to pass, in a sentence, and does not talk of jax.jit."""
    with pytest.raises(ValueError) as e:
        tj.potrs(np.eye(8) * 2, np.ones(8), T_A=4)
    msg = str(e.value)
    assert msg.startswith("tessera.jax.potrs: A is a numpy.ndarray") and msg.endswith("."), msg
    assert "pass mesh= and in_specs=" in msg and "NamedSharding" in msg, msg
    assert "jit" not in msg, msg


@pytest.mark.parametrize("fn", FNS + ["lu_solve"])
def test_global_form_inside_shard_map_names_the_shardmap_form(fn, devices):
    """Called inside jax.shard_map, where A is one device's rows, a global form says to call
    its *_shardmap_ctx form there (rather than that A is not square)."""
    c = _Ctx(devices)
    call = (lambda a, b: getattr(tj, fn)(a, b, 2)) if fn in ("potrs", "lu_solve") else \
        (lambda a, b: getattr(tj, fn)(a, 2))
    f = jax.shard_map(call, mesh=c.mesh, in_specs=(ROW, P()), out_specs=ROW)
    with pytest.raises(ValueError, match=rf"tessera\.jax\.{fn}: called inside jax\.shard_map.* "
                       rf"call tessera\.jax\.{fn}_shardmap_ctx there"):
        f(put(c.a, c.mesh, ROW), put(np.ones(c.n), c.mesh, P()))


@pytest.mark.parametrize("fn", FNS + ["lu_solve"])
def test_row_block_shaped_matrix_names_the_shardmap_form(fn, devices):
    """Outside shard_map, an A shaped as one device's rows of a square matrix (r x N, r
    dividing N) is refused as not square, naming the *_shardmap_ctx form."""
    c = _Ctx(devices)
    a = c.a[: c.n // 4]
    args = (a, np.ones(c.n)) if fn in ("potrs", "lu_solve") else (a,)
    with pytest.raises(ValueError, match=rf"square; got {c.n // 4} x {c.n}: .*"
                       rf"tessera\.jax\.{fn}_shardmap_ctx inside jax\.shard_map"):
        getattr(tj, fn)(*args, 2, c.mesh, ROW)


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
                           "must have size 1"),
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


def test_calls_from_several_threads(devices):
    """Three Python threads calling potrs at once: their executions' rendezvous stay apart (keyed
    by run id) and tessera runs one multi-device call at a time on its context; every call
    succeeds with the right answer."""
    mesh, n = make_mesh(devices, "explicit"), 8 * len(devices)
    a, b = hpd(n, np.float64), rhs(n, np.float64, None)
    a_in = put(a, mesh, ROW)
    results, errors = [], []

    def work():
        try:
            for _ in range(10):
                x, st = tj.potrs(a_in, b, 4, mesh, ROW, return_status=True)
                results.append((np.asarray(x), int(st)))
        except Exception as e:  # reported below, not lost in the thread
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
    assert len(results) == 30
    for x, st in results:
        assert st == 0
        check("potrs", x, a, b)


# ------------------------------------------------------------------- the protocol's two tables


def test_handler_table_matches_the_protocol(monkeypatch):
    """libtessera_jax's handler table has _native.OPS's names and flags at the same indices,
    and loading refuses a library whose table differs (an entry moved, or one more in C)."""
    nat = _native.native()
    assert [op for op, _ in nat._handlers(_native.CPU)] == list(_native.OPS)
    ops = _native.OPS
    for changed in ((ops[1], ops[0]) + ops[2:], ops[:-1],
                    ops[:1] + (_native.Op(ops[1].name, ops[1].flags | _native.LOGDET),)
                    + ops[2:]):
        monkeypatch.setattr(_native, "OPS", changed)
        with pytest.raises(ImportError, match="does not match this package"):
            nat._handlers(_native.CPU)


# ----------------------------------------------------------- the dtypes the documents state


@pytest.mark.parametrize("fn", ["potrs", "lu_solve"])
def test_solution_dtype_is_as_documented(fn, devices):
    """x comes back in A's dtype whatever b's (b is cast, as jnp.linalg.solve), the log det in
    A's real dtype; each solving function's docstring says so, and no docstring says b's."""
    mesh, n = make_mesh(devices, "auto"), 4 * len(devices)
    a, b = hpd(n, np.complex128), rhs(n, np.float32)
    x = getattr(tj, fn)(a, b, 2, mesh, ROW)
    assert x.dtype == np.complex128 and x.shape == b.shape
    local = run_local(fn, mesh, a, b, T_A=2, return_logdet=fn == "potrs")
    assert local[0].dtype == np.complex128 and local[0].shape == b.shape
    if fn == "potrs":
        _, logdet = tj.potrs(a, b, 2, mesh, ROW, return_logdet=True)
        assert logdet.dtype == np.float64 and local[1].dtype == np.float64
    for f in (getattr(tj, fn), getattr(tj, fn + "_shardmap_ctx")):
        doc = " ".join(f.__doc__.split())
        assert "in A's dtype" in doc, f.__name__
        assert "b's shape, dtype" not in doc and "in b's dtype" not in doc, f.__name__


@pytest.mark.parametrize("fn", ["potrs", "lu_solve", "least_squares"])
def test_float64_b_is_cast_to_a_float32_a(fn, devices):
    """b as NumPy makes it (float64) beside a float32 A is cast to A's dtype, as
    jnp.linalg.solve casts it with jax's 64-bit types off (test_no_warnings_with_jax_defaults
    makes the same calls there); x comes back in float32."""
    mesh, n = make_mesh(devices, "explicit"), 4 * len(devices)
    a, b = hpd(n, np.float32), np.ones(n)
    x = getattr(tj, fn)(a, b, 2, mesh, ROW)
    assert x.dtype == np.float32 and x.shape == b.shape
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(hi(a), b), rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------------- where the library is


def test_a_library_named_that_is_not_a_file_is_refused(monkeypatch, tmp_path):
    """TESSERA_JAX_LIBRARY names the library to load: a path that is not a file is refused with
    a sentence, never passed over for another library."""
    monkeypatch.setattr(_native, "_native", None)  # loaded afresh, and put back after
    for bad in ("/nonexistent.so", str(tmp_path)):
        monkeypatch.setenv("TESSERA_JAX_LIBRARY", bad)
        with pytest.raises(ImportError, match=r"TESSERA_JAX_LIBRARY is .*, which is not a "
                           r"file: name the libtessera_jax\.so to load"):
            _native.native()


# ------------------------------------------------------------- jax's default configuration

DEFAULT_CONFIG = textwrap.dedent("""
    import warnings
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    import tessera.jax as tj
    assert not jax.config.jax_enable_x64
    warnings.simplefilter("error")  # JAX's own test policy
    devs = jax.devices()[:4]
    row = P("x", None)
    for mesh in (jax.make_mesh((4,), ("x",), devices=devs), Mesh(np.array(devs), ("x",))):
        for dtype in (jnp.float32, jnp.complex64):
            a, b = jnp.eye(8, dtype=dtype) * 2, jnp.ones((8, 2), dtype)
            x, logdet, status = tj.potrs(a, b, 2, mesh, row, return_logdet=True,
                                         return_status=True)
            assert int(status) == 0 and logdet.dtype == jnp.float32
            assert abs(float(logdet) - 8 * np.log(2)) < 1e-5, float(logdet)
            np.testing.assert_allclose(np.asarray(x), 0.5)
            np.testing.assert_allclose(np.asarray(tj.lu_solve(a, b, 2, mesh, row)), 0.5)
            for fn in (tj.potrs, tj.lu_solve, tj.least_squares):  # NumPy's float64 b: cast
                x = fn(a, np.ones(8), 2, mesh, row)
                assert x.dtype == dtype and x.shape == (8,)
                np.testing.assert_allclose(np.asarray(x), 0.5)
            for fn in (tj.potri, tj.cholesky):
                assert fn(a, 2, mesh, row).dtype == dtype
            def body(a_, b_):
                x_, ld_, st_ = tj.potrs_shardmap_ctx(a_, b_, 2, return_logdet=True)
                y_, sy_ = tj.lu_solve_shardmap_ctx(a_, b_, 2)
                inv_, si_ = tj.potri_shardmap_ctx(a_, 2)
                u_, su_ = tj.cholesky_shardmap_ctx(a_, 2)
                return x_, ld_, y_, inv_, u_, st_ + sy_ + si_ + su_
            g = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(row, P()),
                                      out_specs=(P(), P(), P(), row, row, P())))
            x, logdet, y, inv, u, status = g(jax.device_put(a, NamedSharding(mesh, row)),
                                             jax.device_put(b, NamedSharding(mesh, P())))
            assert int(status[0]) == 0 and logdet.dtype == jnp.float32
            np.testing.assert_allclose(np.asarray(x), 0.5)
            np.testing.assert_allclose(np.asarray(y), 0.5)
    print("ok")
""")


def test_no_warnings_with_jax_defaults(devices):
    """With jax's default configuration (64-bit types off), no call warns: JAX's own test policy
    makes warnings errors. In a process of its own, as this suite turns 64-bit types on."""
    if devices[0].platform != "cpu":
        pytest.skip("the fresh process runs on 4 CPU devices")
    env = dict(os.environ, JAX_PLATFORMS="cpu", TESSERA_JAX_LIBRARY=str(_native.native().path),
               XLA_FLAGS="--xla_force_host_platform_device_count=4",
               PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[2] / "python"),
                                           os.environ.get("PYTHONPATH", "")]))
    env.pop("JAX_ENABLE_X64", None)
    run = subprocess.run([sys.executable, "-c", DEFAULT_CONFIG], capture_output=True, text=True,
                         env=env, timeout=300)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), \
        run.stdout[-2000:] + run.stderr[-4000:]


# ------------------------------------------------------------------------------- benchmarks

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.parametrize("script,args", [
    ("jax_potrs.py", ["--n", "256", "--jax-n", "128", "--small", "64"]),
    ("jax_lu.py", ["--n", "256", "--small", "64"]),
], ids=["jax_potrs", "jax_lu"])
def test_benchmark_runs_on_cpu_devices(script, args, tmp_path):
    """The JAX benchmarks run as their headers say, here on 4 CPU devices at small orders
    (jax_potrs.py's tile-level part on the binding's own context), and write their results."""
    out = tmp_path / "results.json"
    env = dict(os.environ, TESSERA_JAX_LIBRARY=str(_native.native().path))
    env.pop("XLA_FLAGS", None)
    run = subprocess.run([sys.executable, str(BENCH / script), "--cpu", "4", "--calls", "2",
                          "--reps", "1", "--json", str(out)] + args,
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    results = json.loads(out.read_text())
    assert results["tessera_jax"]["status"] == 0
    if script == "jax_potrs.py":
        assert results["tessera_tile"]["seconds"] > 0


@pytest.mark.parametrize("script,args,key", [
    ("jax_small.py", ["--cpu", "1", "--sizes", "64,96", "--calls", "2"], "lu_solve_96"),
    ("jax_processes.py", ["--cpu", "4", "--local", "4", "--n", "128", "--reps", "1", "--ops",
                          "potrs,syevd"], "syevd"),
], ids=["jax_small", "jax_processes"])
def test_other_benchmarks_run_on_cpu_devices(script, args, key, tmp_path):
    """bench/jax_small.py (the per-call times, the routines through the C API) and
    bench/jax_processes.py (one process here; several in test_jax_processes.py's launches) run
    as their headers say and write their results."""
    out = tmp_path / "results.json"
    env = dict(os.environ, TESSERA_JAX_LIBRARY=str(_native.native().path))
    env.pop("XLA_FLAGS", None)
    run = subprocess.run([sys.executable, str(BENCH / script), "--json", str(out)] + args,
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    result = json.loads(out.read_text())[key]
    times = ("tessera_jax_ms", "jax_ms", "c_level_ms", "seconds")  # not the difference
    assert all(result[k] > 0 for k in times if k in result)


def test_context_acquire_refuses_an_unknown_platform():
    """tessera_jax_context_acquire (the benchmark's way to the binding's context) fails cleanly
    for a platform the binding does not have, handing out no context."""
    nat = _native.native()
    ctx = ctypes.c_void_p(1)
    assert nat.lib.tessera_jax_context_acquire(ctypes.c_void_p(nat.state), 7, ctypes.c_uint64(0),
                                               ctypes.byref(ctx)) < 0
    assert not ctx.value


def test_cuda_library_calls_bind_at_first_use():
    """libtessera calls cuBLAS, cuSOLVER and NCCL through weak references it binds when first
    called, after a GPU worker has loaded them (docs/architecture.md). Loaded by tessera.jax, its
    lazy slots must still point into its own PLT, not to nothing: ctypes' own loading binds
    every call at load time, and a GPU call would then jump to address 0."""
    lib = Path(_native.native().path).resolve().parent.parent / "libtessera.so"
    lib = Path(os.path.realpath(lib))
    try:
        rel = subprocess.run(["readelf", "-rW", str(lib)], capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("readelf cannot read libtessera.so")
    slots = [line.split() for line in rel.splitlines()
             if "JUMP_SLOT" in line and re.search(r"\b(cublas|cusolver)\w*", line)]
    if not slots:
        pytest.skip("this libtessera has no CUDA kernels")
    base = None
    for line in open("/proc/self/maps"):
        if str(lib) in line:
            base = int(line.split("-")[0], 16)
            break
    assert base is not None, f"{lib} is not mapped in this process"
    for fields in slots[:5]:
        value = ctypes.c_uint64.from_address(base + int(fields[0], 16)).value
        assert value != 0, f"{fields[-1]} was bound at load time, to nothing"
