"""jax's own polar decomposition by QDWH (jax.scipy.linalg.polar, method="qdwh") on one device:
the baseline of tessera's gepolar (bench/polar.c, the C calls on the same orders).

For each order of --sizes: A random (normal entries, generated on the device), the polar
decomposition (jit) best of --reps after one warm-up, U and H; prints the time, the rate of
bench_polar's operation count for jax's steps (QDWH from l0 = eps: 2 QR and 4 Cholesky steps in
f64, 2 and 2 in f32) and ‖A − U H‖_F / (‖A‖_F n ε); a table last; --json FILE writes the results.

  python3 bench/jax_polar.py --sizes 8192,16384
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
jc.add_options(ap)
args = ap.parse_args()
jc.start(args)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

devs, _, results = jc.session(args)
dt = np.dtype(args.dtype)
eps = float(np.finfo(dt).eps)
steps = 6 if dt == np.float64 else 4


def flops(n, k):
    qr = 4 * (2 * n) * n * n - 4 / 3 * n ** 3 + 2 * n ** 3
    ch = n ** 3 + n ** 3 / 3 + 2 * n ** 3
    return 2 * qr + (k - 2) * ch + 6 * n ** 3


polar = jax.jit(lambda a: jax.scipy.linalg.polar(a, method="qdwh"))
rows, results["runs"] = [], []
for n in [int(s) for s in args.sizes.split(",")]:
    with jax.default_device(devs[0]):
        a = jax.random.normal(jax.random.PRNGKey(n), (n, n), dtype=dt)
        u, h = jax.block_until_ready(polar(a))
        t = jc.timed(lambda: polar(a), args.reps)
        r = jnp.linalg.norm(a - u @ h) / (jnp.linalg.norm(a) * n * eps)
    rate = flops(n, steps) / t * 1e-12
    print(f"n={n}: jax polar (qdwh) {t:.4f} s, {rate:.2f} TFLOP/s, residual {float(r):.3g}",
          flush=True)
    rows.append((f"jax.scipy.linalg.polar qdwh N={n}", t, rate))
    results["runs"].append({"n": n, "seconds": t, "residual": float(r)})
jc.print_table(rows)
if args.json:
    Path(args.json).write_text(json.dumps(results, indent=1))
