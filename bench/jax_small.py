"""tessera.jax per call at small orders on one device, against jax's own solvers, with the
binding's own overhead measured apart.

For each order of --sizes and each of potrs and lu_solve, on the first device jax sees (a GPU,
or a CPU device with --cpu 1), with one right-hand side, the median time per call of --calls
calls, each until its result is ready (1, 2 and 4 taken in turns, a fifth of the calls each):
  1. tessera.jax's call inside jax.jit, as jax's own is timed (the global form on a one-device
     mesh, A and b already there); and the same call made eagerly, whose Python is paid on
     every call;
  2. jax's one-device solve: cho_factor + cho_solve, lu_factor + lu_solve (jit);
  3. tessera's own routine on the same device buffers through the C API (ctypes), what the
     binding's handler runs for a one-device call whose matrix is one tile:
     tessera_queue_posv / tessera_queue_gesv on the binding's own context, enqueued on the
     calling thread's default stream (cudaStreamPerThread; on CPUs, run in place) and waited
     for, with no XLA, FFI or jit around it; A is refreshed from a copy before each call,
     outside the time;
  4. XLA alone: a jitted function copying A and b, the copies XLA makes around the call (A
     into the result it is aliased to, b likewise) with one dispatch, as any jitted call pays.
The binding's own overhead (FFI, the handler, the status and NaN handling around it) is
1 - 3 - 4. Prints a table last; --json FILE writes the results.

  python3 bench/jax_small.py --sizes 1024,2048,4096 --calls 50
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
ap.add_argument("--sizes", default="1024,2048,4096")
ap.add_argument("--calls", type=int, default=50)
ap.add_argument("--ops", default="potrs,lu_solve")
jc.add_options(ap)
args = ap.parse_args()
args.devices = 1
jc.start(args)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

devs, mesh, results = jc.session(args)
import tessera.jax as tj  # noqa: E402
from tessera import _native  # noqa: E402

dtype = np.dtype(args.dtype)
dev = devs[0]
nat = _native.native()
lib = nat.lib
lib.tessera_jax_context_acquire.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64,
                                            ctypes.POINTER(ctypes.c_void_p)]
lib.tessera_jax_context_release.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
i64, ptr = ctypes.c_int64, ctypes.c_void_p
lib.tessera_queue_posv.argtypes = [ptr, ctypes.c_int, ptr] + [ctypes.c_int] * 3 + [i64] * 2 + \
    [ptr, i64, ptr, i64, ptr, ptr]
lib.tessera_queue_gesv.argtypes = [ptr, ctypes.c_int, ptr] + [ctypes.c_int] * 2 + [i64] * 2 + \
    [ptr, i64, ptr, i64, ptr]
lib.tessera_queue_sync.argtypes = [ptr, ctypes.c_int, ptr]
lib.tessera_last_error.restype = ctypes.c_char_p
lib.tessera_last_error.argtypes = [ctypes.c_void_p]
platform = _native.CPU if args.cpu else _native.CUDA
node = 0 if args.cpu else 1 + dev.local_hardware_id
code = {np.dtype("float32"): 0, np.dtype("float64"): 1}[dtype]
one = (ctypes.c_double * 2)(1, 0) if dtype == np.float64 else (ctypes.c_float * 2)(1, 0)
L, RIGHT, T = ord("L"), ord("R"), ord("T")
queue = None if args.cpu else ctypes.c_void_p(2)  # cudaStreamPerThread


def spd(n):
    i = jnp.arange(n)[:, None]
    j = jnp.arange(n)[None, :]
    v = (((i + j) % 7 + (i * j) % 5) / 12.0).astype(dtype)
    return jax.device_put(jnp.where(i == j, jnp.asarray(n + 1, dtype), v), dev)


def general(n):
    i = jnp.arange(n)[:, None]
    j = jnp.arange(n)[None, :]
    v = (((3 * i + j) % 11 - 5) / 16.0).astype(dtype)
    return jax.device_put(jnp.where(i == j, jnp.asarray(n / 2, dtype), v), dev)


def medians_ms(fns, calls, rounds=5):
    """The median ms per call of each of fns (a dict), their calls taken in `rounds` turns one
    after the other, so that a drift of the machine's speed touches each alike."""
    per = {k: [] for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            per[k] += jc.per_call(fn, max(1, calls // rounds))
    return {k: statistics.median(v) * 1e3 for k, v in per.items()}


def c_level(op, a, b, n):
    """The median time of tessera's queued routine on the device buffers of a and b
    (column-major views of the row-major arrays: Aᵀ, and b as one column), as the binding runs
    it, waited for on the stream."""
    ctx = ctypes.c_void_p()
    gpus = 0 if args.cpu else 1 << dev.local_hardware_id
    if lib.tessera_jax_context_acquire(nat.state, platform, gpus, ctypes.byref(ctx)):
        raise RuntimeError("tessera.jax's context is not available")
    info = jax.device_put(jnp.zeros((1,), jnp.int32), dev)
    pi = info.addressable_shards[0].data.unsafe_buffer_pointer()
    per = []
    try:
        for k in range(args.calls + 1):
            aw, bw = a + 0, b + 0  # fresh copies: the routines work in place
            jax.block_until_ready((aw, bw))
            pa = aw.addressable_shards[0].data.unsafe_buffer_pointer()
            pb = bw.addressable_shards[0].data.unsafe_buffer_pointer()
            t0 = time.perf_counter()
            if op == "potrs":
                # as the binding for lower=False: A's upper triangle is Aᵀ's lower one, factored
                # Aᵀ = L Lᴴ; Xᵀ Aᵀ = Bᵀ from the right
                rc = lib.tessera_queue_posv(ctx, node, queue, L, RIGHT, code, n, 1, pa, n, pb, 1,
                                            pi, None)
            else:
                rc = lib.tessera_queue_gesv(ctx, node, queue, T, code, n, 1, pa, n, pb, n, pi)
            rc = rc or lib.tessera_queue_sync(ctx, node, queue)
            if rc:
                raise RuntimeError(f"tessera {op}: {rc}: {lib.tessera_last_error(ctx).decode()}")
            if k:
                per.append(time.perf_counter() - t0)
    finally:
        lib.tessera_jax_context_release(nat.state, platform, ctx)
    return statistics.median(per) * 1e3


cho = jax.jit(lambda a, b: jsl.cho_solve(jsl.cho_factor(a), b))
lu = jax.jit(lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b))
copies = jax.jit(lambda a, b: (a + 0, b + 0))
rows = []
for n in map(int, args.sizes.split(",")):
    b = jax.device_put(jnp.ones((n, 1), dtype), dev)
    for op in args.ops.split(","):
        a = spd(n) if op == "potrs" else general(n)
        fn = getattr(tj, op)
        jitted = jax.jit(lambda a, b: fn(a, b, 256, mesh, P("x", None)))
        t = medians_ms({"jax": lambda: (cho if op == "potrs" else lu)(a, b),
                        "tj": lambda: jitted(a, b),
                        "eager": lambda: fn(a, b, 256, mesh, P("x", None)),
                        "xla": lambda: copies(a, b)}, args.calls)
        t_jax, t_tj, t_eager, t_xla = t["jax"], t["tj"], t["eager"], t["xla"]
        tile = _native.native().tile(platform, n, 1, op == "lu_solve")
        tile = min(tile, n)
        t_c = c_level(op, a, b, n)
        x = jitted(a, b)
        res = float(jnp.abs(a @ x - b).max() / jnp.abs(a).sum(1).max())
        ov = t_tj - t_c - t_xla
        results[f"{op}_{n}"] = dict(n=n, tile=tile, tessera_jax_ms=t_tj, eager_ms=t_eager,
                                    jax_ms=t_jax, c_level_ms=t_c, xla_ms=t_xla, overhead_ms=ov,
                                    residual=res)
        rows.append((op, n, tile, t_tj, t_jax, t_eager, t_c, t_xla, ov, res))

if args.json:
    Path(args.json).write_text(json.dumps(results, indent=1))
print(f"\n{dev.device_kind}, {dtype.name}, median per call of {args.calls} (ms)")
print(f"{'op':9s} {'N':>5s} {'tile':>5s} {'tessera.jax':>11s} {'jax':>8s} {'ratio':>6s} "
      f"{'eager':>7s} {'C level':>8s} {'XLA':>6s} {'binding':>8s} {'residual':>9s}")
for op, n, tile, t_tj, t_jax, t_eager, t_c, t_xla, ov, res in rows:
    print(f"{op:9s} {n:5d} {tile:5d} {t_tj:11.3f} {t_jax:8.3f} {t_jax / t_tj:6.2f} "
          f"{t_eager:7.3f} {t_c:8.3f} {t_xla:6.3f} {ov:8.3f} {res:9.1e}")
