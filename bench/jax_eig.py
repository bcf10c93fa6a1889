"""tessera.jax.syevd against jax's own eigensolver on one device, in one process.

For each order of --sizes: A symmetric (random, generated on the devices, sharded by rows over
every GPU jax sees, or --cpu N CPU devices); tessera.jax.syevd, best of --reps after --warmup
calls (tessera's eigensolver picks its method from the seconds each one measured: the warm-up
calls let it try both), and jnp.linalg.eigh (jit) on one device on the same matrix, best of
--reps after one warm-up. Both with eigenvectors (--values-only: without). Prints, per order,
both times, their ratio (jax's / tessera's) and tessera's residual ‖A V − V Λ‖_F / (‖A‖_F n ε)
up to --check; a table last; --json FILE writes the results.

  python3 bench/jax_eig.py --sizes 4096,8192,16384
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jax_common as jc  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--sizes", default="4096,8192")
ap.add_argument("--reps", type=int, default=2)
ap.add_argument("--warmup", type=int, default=4)
ap.add_argument("--values-only", action="store_true")
ap.add_argument("--check", type=int, default=8192, help="largest order whose residual is computed")
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
vectors = not args.values_only
rows, runs = [], []


def flops(n):
    return (4 / 3 + (4 if vectors else 0)) * n ** 3


for n in [int(s) for s in args.sizes.split(",")]:
    key = jax.random.PRNGKey(n)
    g = jax.random.normal(key, (n, n), dtype)
    a = jax.device_put((g + g.T) / 2, NamedSharding(mesh, P("x", None)))
    del g

    def ours():
        return tj.syevd(a, 256, mesh, P("x", None), return_eigenvectors=vectors)

    for _ in range(args.warmup):
        jax.block_until_ready(ours())
    t = jc.timed(ours, args.reps)
    res = float("nan")
    if vectors and n <= args.check:
        w, v = ours()
        av = jnp.asarray(a) @ v - v * w[None, :]
        res = float(jnp.linalg.norm(av) / (jnp.linalg.norm(a) * n * np.finfo(dtype).eps))
    one = jax.device_put(a, devs[0])
    eigh = jax.jit(lambda m: jnp.linalg.eigh(m) if vectors else jnp.linalg.eigvalsh(m))
    jax.block_until_ready(eigh(one))
    tj_ = jc.timed(lambda: eigh(one), args.reps)
    del one
    runs.append(dict(n=n, tessera=t, jax=tj_, ratio=tj_ / t, residual=res))
    rows.append((f"tessera.jax.syevd N={n}, {len(devs)} dev (residual {res:.2g})", t,
                 flops(n) / t * 1e-12))
    rows.append((f"jnp.linalg.{'eigh' if vectors else 'eigvalsh'} N={n}, one device "
                 f"(jax / tessera {tj_ / t:.2f})", tj_, flops(n) / tj_ * 1e-12))
    print(f"N={n}: tessera {t:.4f} s, jax {tj_:.4f} s, ratio {tj_ / t:.2f}, residual {res:.3g}",
          flush=True)

results["runs"] = runs
if args.json:
    Path(args.json).write_text(json.dumps(results, indent=1))
jc.print_table(rows)
