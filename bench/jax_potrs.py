"""tessera.jax.potrs against tessera's own tile-level calls and jax's one-GPU Cholesky.

Runs, in one process, on every GPU jax sees (or CPU devices with --cpu N):
  1. tessera.jax.potrs on A already sharded by rows over the devices (f64 by default, N=65536),
     best of --reps, after a warm-up call;
  2. tessera's own tile-level calls on the same shards, through the C API (ctypes):
     tessera_matrix_view_panels + tessera_tile_potrf + two tessera_tile_trsm, what the binding
     runs, without XLA, the FFI and the rendezvous, on the binding's own tessera context held
     as one of its calls holds it (tessera_jax_context_acquire: its memory pools, its workers,
     the mesh's GPUs as scope), so that no second context needs GPU memory beside XLA's;
  3. jax.scipy.linalg.cho_factor + cho_solve (jit) on one device at --jax-n, and
     tessera.jax.potrs at the same order on all devices;
  4. the time per call of tessera.jax.potrs and of jax's one-device solve at --small (one
     right-hand side), the median of --calls calls.
Prints a table last; --json FILE writes the results. The matrix is generated on the devices:
A[i, j] = ((i + j) % 7 + (i * j) % 5) / 12 off the diagonal, N + 1 on it (symmetric,
diagonally dominant, so positive definite).

  python3 bench/jax_potrs.py --n 65536 --jax-n 32768 --small 4096
Runs with jax's defaults (XLA preallocates its memory fraction of each GPU; tessera's pools
take part of the rest). Environment: TESSERA_BUILD_DIR (the build holding libtessera and
python/libtessera_jax.so).
"""
import argparse
import ctypes
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jax_common as jc  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--n", type=int, default=65536)
ap.add_argument("--jax-n", type=int, default=32768)
ap.add_argument("--small", type=int, default=4096)
ap.add_argument("--calls", type=int, default=50)
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--skip", default="", help="comma list of parts to skip: tessera,c,jax,small")
jc.add_options(ap)
args = ap.parse_args()
jc.start(args)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

devs, mesh, results = jc.session(args)
import tessera.jax as tj  # noqa: E402
from tessera import _native  # noqa: E402

skip = set(filter(None, args.skip.split(",")))
dtype = np.dtype(args.dtype)
timed = jc.timed
rows = []

def flops(n, k=1):
    return n ** 3 / 3 + 2 * n * n * k


def spd(n, mesh_, spec=P("x", None)):
    """The test matrix, generated sharded (each device its rows)."""
    nd = mesh_.shape["x"] if "x" in mesh_.shape else 1

    def local():
        r0 = jax.lax.axis_index("x") * (n // nd) if nd > 1 else 0
        i = jax.lax.broadcasted_iota(jnp.int64, (n // nd, n), 0) + r0
        j = jax.lax.broadcasted_iota(jnp.int64, (n // nd, n), 1)
        v = (((i + j) % 7 + (i * j) % 5) / 12.0).astype(dtype)
        return jnp.where(i == j, jnp.asarray(n + 1, dtype), v)

    f = jax.jit(jax.shard_map(local, mesh=mesh_, in_specs=(), out_specs=spec))
    return f()


def residual(a, x, b):
    """‖A x − b‖ / (‖A‖ ‖x‖) with A's norm estimated by its row sums (max norm)."""
    r = jnp.asarray(a) @ x - b
    return float(jnp.linalg.norm(r) / (jnp.abs(a).sum(1).max() * jnp.linalg.norm(x)))


n = args.n
b = jax.device_put(jnp.ones((n, 1), dtype), NamedSharding(mesh, P()))
# -------------------------------------------------------------------------- 1. tessera.jax
if "tessera" not in skip:
    a = spd(n, mesh)
    x, st = tj.potrs(a, b, 256, mesh, P("x", None), return_status=True)  # warm-up (compiles)
    jax.block_until_ready(x)
    t = timed(lambda: tj.potrs(a, b, 256, mesh, P("x", None)), args.reps)
    res = residual(a, tj.potrs(a, b, 256, mesh, P("x", None)), b) if n <= 16384 else float("nan")
    results["tessera_jax"] = dict(n=n, seconds=t, tflops=flops(n) / t * 1e-12, status=int(st),
                                  residual=res)
    rows.append((f"tessera.jax.potrs N={n}, {len(devs)} dev", t, flops(n) / t * 1e-12))

# ------------------------------------- 2. tessera's tile calls, same shards, the binding's context
if "c" not in skip and "tessera" not in skip:
    # libtessera's functions through libtessera_jax's handle (it links libtessera): the same
    # library as the binding's context.
    nat = _native.native()
    lib = nat.lib
    lib.tessera_jax_context_acquire.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64,
                                                ctypes.POINTER(ctypes.c_void_p)]
    lib.tessera_jax_context_release.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    platform = _native.CPU if args.cpu else _native.CUDA
    gpus = 0 if args.cpu else sum(1 << d.local_hardware_id for d in devs)
    cnt = len(devs)
    nb = nat.tile(platform, n, cnt)
    from tessera import _layout  # noqa: E402
    w, nb = _layout.plan(n, cnt, nb, False, "bench")
    code = {np.dtype("float32"): 0, np.dtype("float64"): 1}[dtype]
    one = (ctypes.c_double * 2)(1, 0) if dtype == np.float64 else (ctypes.c_float * 2)(1, 0)

    def tile_solve():
        aw = a + 0  # a fresh copy: the factorization is in place
        xw = jnp.broadcast_to(b, (n, 1)) + 0
        xw = jax.device_put(xw, NamedSharding(mesh, P("x", None)))
        jax.block_until_ready((aw, xw))
        ptr = lambda arr: [s.data.unsafe_buffer_pointer()  # noqa: E731
                           for s in sorted(arr.addressable_shards, key=lambda s: s.index[0].start or 0)]
        pa, px = (ctypes.c_void_p * cnt)(*ptr(aw)), (ctypes.c_void_p * cnt)(*ptr(xw))
        nodes = (ctypes.c_int * cnt)(*[0 if args.cpu else 1 + d.local_hardware_id for d in devs])
        c = ctypes.c_void_p()
        if lib.tessera_jax_context_acquire(nat.state, platform, gpus, ctypes.byref(c)):
            raise RuntimeError("tessera.jax's context: " +
                               lib.tessera_jax_error(nat.state, platform).decode())
        try:
            marks = views_and_solve(c, pa, px, nodes)
        finally:
            lib.tessera_jax_context_release(nat.state, platform, c)
        phases = dict(zip(("views", "potrf", "trsm1", "trsm2", "destroy"),
                          np.diff(marks).tolist()))
        return marks[-1] - marks[0], phases

    def views_and_solve(c, pa, px, nodes):
        """The timed calls on the held context c: the times before, between and after them."""
        A, X, i64 = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_int64
        marks = [time.perf_counter()]
        assert lib.tessera_matrix_view_panels(c, code, i64(n), i64(n), i64(nb), i64(nb), i64(w),
                                              cnt, pa, nodes, i64(n), ctypes.byref(A)) == 0
        assert lib.tessera_matrix_view_panels(c, code, i64(1), i64(n), i64(nb), i64(nb), i64(w),
                                              cnt, px, nodes, i64(1), ctypes.byref(X)) == 0
        marks.append(time.perf_counter())
        rc = lib.tessera_tile_potrf(ord("L"), A)
        marks.append(time.perf_counter())
        rc = rc or lib.tessera_tile_trsm(ord("R"), ord("L"), ord("C"), ord("N"), one, A, X)
        marks.append(time.perf_counter())
        rc = rc or lib.tessera_tile_trsm(ord("R"), ord("L"), ord("N"), ord("N"), one, A, X)
        marks.append(time.perf_counter())
        lib.tessera_matrix_destroy(X)
        lib.tessera_matrix_destroy(A)
        marks.append(time.perf_counter())
        assert rc == 0, rc
        return marks

    tile_solve()
    t, phases = min((tile_solve() for _ in range(args.reps)), key=lambda r: r[0])
    results["tessera_tile"] = dict(n=n, seconds=t, tflops=flops(n) / t * 1e-12, tile=nb,
                                   phases=phases)
    print("tile-level phases (s):", " ".join(f"{k} {v:.5f}" for k, v in phases.items()))
    rows.append((f"tessera tile potrf+trsm N={n} (C, same shards)", t, flops(n) / t * 1e-12))
    del a

# ------------------------------------------------------------- 3. jax's Cholesky on one device
if "jax" not in skip:
    m = args.jax_n
    one_mesh = jax.sharding.Mesh(np.array(devs[:1]), ("x",))
    a1 = spd(m, one_mesh, P())
    b1 = jnp.ones((m, 1), dtype, device=devs[0])
    cho = jax.jit(lambda a_, b_: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(a_), b_))
    jax.block_until_ready(cho(a1, b1))
    t1 = timed(lambda: cho(a1, b1), args.reps)
    results["jax_one_device"] = dict(n=m, seconds=t1, tflops=flops(m) / t1 * 1e-12)
    rows.append((f"jax cho_factor+cho_solve N={m}, 1 dev", t1, flops(m) / t1 * 1e-12))
    del a1
    am = spd(m, mesh)
    bm = jax.device_put(jnp.ones((m, 1), dtype), NamedSharding(mesh, P()))
    jax.block_until_ready(tj.potrs(am, bm, 256, mesh, P("x", None)))
    t2 = timed(lambda: tj.potrs(am, bm, 256, mesh, P("x", None)), args.reps)
    results["tessera_jax_mid"] = dict(n=m, seconds=t2, tflops=flops(m) / t2 * 1e-12,
                                      speedup_vs_jax=t1 / t2)
    rows.append((f"tessera.jax.potrs N={m}, {len(devs)} dev", t2, flops(m) / t2 * 1e-12))
    del am

# ------------------------------------------------------------------ 4. per-call time, small N
if "small" not in skip:
    s = args.small
    a_s = spd(s, mesh)
    b_s = jax.device_put(jnp.ones((s, 1), dtype), NamedSharding(mesh, P()))
    f = lambda: tj.potrs(a_s, b_s, 256, mesh, P("x", None))  # noqa: E731
    per = jc.per_call(f, args.calls)
    results["tessera_jax_small"] = dict(n=s, median=statistics.median(per), mean=statistics.mean(per),
                                        best=min(per), residual=residual(a_s, f(), b_s))
    rows.append((f"tessera.jax.potrs per call N={s}, {len(devs)} dev (median)",
                 statistics.median(per), flops(s) / statistics.median(per) * 1e-12))
    a_1 = spd(s, jax.sharding.Mesh(np.array(devs[:1]), ("x",)), P())
    b_1 = jnp.ones((s, 1), dtype, device=devs[0])
    cho = jax.jit(lambda a_, b_: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(a_), b_))
    per = jc.per_call(lambda: cho(a_1, b_1), args.calls)
    results["jax_small"] = dict(n=s, median=statistics.median(per), best=min(per))
    rows.append((f"jax cho_factor+cho_solve per call N={s}, 1 dev (median)",
                 statistics.median(per), flops(s) / statistics.median(per) * 1e-12))

if args.json:
    Path(args.json).write_text(json.dumps(results, indent=1))
jc.print_table(rows)
if "tessera_jax" in results and "tessera_tile" in results:
    print(f"tessera.jax / tile-level time: "
          f"{results['tessera_jax']['seconds'] / results['tessera_tile']['seconds']:.3f}")
if "tessera_jax_mid" in results:
    print(f"tessera.jax vs jax one device at N={args.jax_n}: "
          f"{results['tessera_jax_mid']['speedup_vs_jax']:.2f}x")
