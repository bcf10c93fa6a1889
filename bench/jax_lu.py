"""tessera.jax.lu_solve against jax's own LU (jax.scipy.linalg.lu_factor + lu_solve).

Runs, in one process, on every GPU jax sees (or CPU devices with --cpu N):
  1. tessera.jax.lu_solve on A already sharded by rows over the devices (f64 by default,
     N=32768), best of --reps after a warm-up call, with its backward error;
  2. jax.scipy.linalg.lu_factor + lu_solve (jit) on one device at --jax-n (default N), and
     tessera.jax.lu_solve at the same order when it differs from N;
  3. the time per call of both at --small (one right-hand side), the median of --calls calls.
Prints a table last, ratios against jax's one-device LU beside it; --json FILE writes the
results. The matrix is uniform in [-0.5, 0.5) from jax.random, generated on the devices (each
its rows), nonsingular with probability one and pivoting in every column.

  python3 bench/jax_lu.py --n 32768 --small 4096
Environment: TESSERA_BUILD_DIR (the build holding python/libtessera_jax.so).
"""
import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jax_common as jc  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--n", type=int, default=32768)
ap.add_argument("--jax-n", type=int, default=0, help="order of jax's one-device LU (default: N)")
ap.add_argument("--small", type=int, default=4096)
ap.add_argument("--calls", type=int, default=30)
ap.add_argument("--reps", type=int, default=3)
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

dtype = np.dtype(args.dtype)
timed = jc.timed
rows = []

def flops(n, k=1):
    """getrf's 2n³/3 and the two triangular solves."""
    return 2 * n ** 3 / 3 + 2 * n * n * k


def general(n, mesh_=None):
    """The test matrix, generated sharded by rows over mesh_ (each device its rows), or whole on
    the first device."""
    if mesh_ is None:
        with jax.default_device(devs[0]):
            return jax.jit(lambda: jax.random.uniform(jax.random.key(7), (n, n), dtype, -0.5,
                                                      0.5))()
    nd = mesh_.shape["x"]

    def local():
        key = jax.random.fold_in(jax.random.key(7), jax.lax.axis_index("x"))
        return jax.random.uniform(key, (n // nd, n), dtype, -0.5, 0.5)

    return jax.jit(jax.shard_map(local, mesh=mesh_, in_specs=(), out_specs=P("x", None)))()


def backward(a, x, b):
    """‖A x − b‖∞ / (‖A‖∞ ‖x‖∞ N ε), computed on A's devices."""
    r = jnp.abs(a @ x - b).max()
    eps = np.finfo(dtype).eps
    return float(r / (jnp.abs(a).sum(1).max() * jnp.abs(x).max() * a.shape[0] * eps))


def per_call(f, calls):
    """The median and best of jc.per_call's times."""
    per = jc.per_call(f, calls)
    return statistics.median(per), min(per)


jax_lu = jax.jit(lambda a_, b_: jax.scipy.linalg.lu_solve(jax.scipy.linalg.lu_factor(a_), b_))


def tessera_run(n, key):
    a = general(n, mesh)
    b = jax.device_put(jnp.ones((n, 1), dtype), NamedSharding(mesh, P()))
    x, st = tj.lu_solve(a, b, 256, mesh, P("x", None), return_status=True)  # warm-up (compiles)
    jax.block_until_ready(x)
    t = timed(lambda: tj.lu_solve(a, b, 256, mesh, P("x", None)), args.reps)
    results[key] = dict(n=n, seconds=t, tflops=flops(n) / t * 1e-12, status=int(st),
                        backward=backward(a, x, b))
    rows.append((f"tessera.jax.lu_solve N={n}, {len(devs)} dev", t, flops(n) / t * 1e-12))


def jax_run(n):
    a = general(n)
    b = jnp.ones((n, 1), dtype, device=devs[0])
    x = jax_lu(a, b)
    jax.block_until_ready(x)
    t = timed(lambda: jax_lu(a, b), args.reps)
    results["jax_one_device"] = dict(n=n, seconds=t, tflops=flops(n) / t * 1e-12,
                                     backward=backward(a, x, b))
    rows.append((f"jax lu_factor+lu_solve N={n}, 1 dev", t, flops(n) / t * 1e-12))


tessera_run(args.n, "tessera_jax")
jn = args.jax_n or args.n
jax_run(jn)
if jn != args.n:
    tessera_run(jn, "tessera_jax_mid")
mid = results.get("tessera_jax_mid", results["tessera_jax"])
mid["speedup_vs_jax"] = results["jax_one_device"]["seconds"] / mid["seconds"]

s = args.small
a_s = general(s, mesh)
b_s = jax.device_put(jnp.ones((s, 1), dtype), NamedSharding(mesh, P()))
med, best = per_call(lambda: tj.lu_solve(a_s, b_s, 256, mesh, P("x", None)), args.calls)
results["tessera_jax_small"] = dict(n=s, median=med, best=best)
rows.append((f"tessera.jax.lu_solve per call N={s}, {len(devs)} dev (median)", med,
             flops(s) / med * 1e-12))
a_1 = general(s)
b_1 = jnp.ones((s, 1), dtype, device=devs[0])
med1, best1 = per_call(lambda: jax_lu(a_1, b_1), args.calls)
results["jax_small"] = dict(n=s, median=med1, best=best1)
rows.append((f"jax lu_factor+lu_solve per call N={s}, 1 dev (median)", med1,
             flops(s) / med1 * 1e-12))

if args.json:
    Path(args.json).write_text(json.dumps(results, indent=1))
jc.print_table(rows)
print(f"backward errors: tessera {results['tessera_jax']['backward']:.2e}, "
      f"jax {results['jax_one_device']['backward']:.2e}")
print(f"tessera.jax vs jax one device at N={jn}: {mid['speedup_vs_jax']:.2f}x; "
      f"per call at N={s}: {med1 / med:.2f}x")
