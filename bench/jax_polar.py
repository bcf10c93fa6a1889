"""jax's own polar decomposition by QDWH (jax.scipy.linalg.polar, method="qdwh") on one device:
the baseline of tessera's gepolar (bench/polar.c, the C calls on the same orders); with
--tessera, tessera.jax.polar on the devices (a 1D mesh, A sharded by rows) in the same run, and
with --svd jnp.linalg.svd (economy) against tessera.jax.gesvd.

For each order of --sizes: A random (normal entries, generated on the device), the polar
decomposition (jit) best of --reps after one warm-up, U and H; prints the time, the rate of
bench_polar's operation count for jax's steps (QDWH from l0 = eps: 2 QR and 4 Cholesky steps in
f64, 2 and 2 in f32) and ‖A − U H‖_F / (‖A‖_F n ε) (the SVD's: ‖A − U Σ Vᴴ‖_F likewise); a
table last; --json FILE writes the results.

  python3 bench/jax_polar.py --sizes 8192,16384 --tessera --svd
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jax_common as jc  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--sizes", default="8192,16384")
ap.add_argument("--reps", type=int, default=2)
ap.add_argument("--tessera", action="store_true", help="tessera.jax.polar beside jax's")
ap.add_argument("--svd", action="store_true", help="jnp.linalg.svd, and with --tessera "
                "tessera.jax.gesvd, besides the polar decompositions")
jc.add_options(ap)
args = ap.parse_args()
jc.start(args)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

devs, mesh, results = jc.session(args)
rows_spec = jax.sharding.PartitionSpec("x", None)
dt = np.dtype(args.dtype)
eps = float(np.finfo(dt).eps)
steps = 6 if dt == np.float64 else 4


def flops(n, k):
    qr = 4 * (2 * n) * n * n - 4 / 3 * n ** 3 + 2 * n ** 3
    ch = n ** 3 + n ** 3 / 3 + 2 * n ** 3
    return 2 * qr + (k - 2) * ch + 6 * n ** 3


polar = jax.jit(lambda a: jax.scipy.linalg.polar(a, method="qdwh"))
svd = jax.jit(lambda a: jnp.linalg.svd(a, full_matrices=False))
if args.tessera:
    import tessera.jax as tj  # noqa: E402


def run(name, fn, a, n, residual, rate_flops):
    """fn(a) best of --reps after a warm-up: a printed line, a table row and a result."""
    out = jax.block_until_ready(fn(a))
    t = jc.timed(lambda: fn(a), args.reps)
    r = float(residual(out)) / (float(jnp.linalg.norm(a)) * n * eps)
    rate = rate_flops / t * 1e-12 if rate_flops else 0.0
    print(f"n={n}: {name} {t:.4f} s, {rate:.2f} TFLOP/s, residual {r:.3g}", flush=True)
    rows.append((f"{name} N={n}", t, rate))
    results["runs"].append({"what": name, "n": n, "seconds": t, "residual": r})


rows, results["runs"] = [], []
for n in [int(s) for s in args.sizes.split(",")]:
    with jax.default_device(devs[0]):
        a = jax.random.normal(jax.random.PRNGKey(n), (n, n), dtype=dt)
    f = flops(n, steps)
    uh = lambda out: jnp.linalg.norm(a - out[0] @ out[1])  # noqa: E731
    usv = lambda out: jnp.linalg.norm(a - (out[0] * out[1]) @ out[2])  # noqa: E731
    run("jax.scipy.linalg.polar qdwh", polar, a, n, uh, f)
    if args.tessera:
        sharded = jax.device_put(a, jax.sharding.NamedSharding(mesh, rows_spec))
        run(f"tessera.jax.polar ({len(devs)} devices)",
            lambda x: tj.polar(x, 1024, mesh, rows_spec), sharded, n, uh, f)
    if args.svd:
        run("jnp.linalg.svd", svd, a, n, lambda out: usv((out[0], out[1], out[2])), 0)
        if args.tessera:
            run(f"tessera.jax.gesvd ({len(devs)} devices)",
                lambda x: tj.gesvd(x, 1024, mesh, rows_spec), sharded, n,
                lambda out: usv((out[1], out[0], out[2])), 0)
jc.print_table(rows)
if args.json:
    Path(args.json).write_text(json.dumps(results, indent=1))
