"""What the JAX benchmarks (jax_potrs.py, jax_lu.py, jax_grad.py, jax_vmap.py, ...) share: their
common options, the devices (every GPU jax sees, or --cpu N CPU devices forced before jax is
imported), tessera's Python package and build from this checkout, best-of and per-call timing,
and the table printed last.

Call ``start`` before importing jax, then ``session``."""
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def add_options(ap):
    """--dtype, --devices, --cpu and --json on the argparse parser ap."""
    ap.add_argument("--dtype", default="float64", choices=["float32", "float64"])
    ap.add_argument("--devices", type=int, default=0, help="devices to use (default: all)")
    ap.add_argument("--cpu", type=int, default=0, help="run on N CPU devices instead of GPUs")
    ap.add_argument("--json", default="")


def start(args):
    """Before jax is imported: --cpu's CPU devices, tessera's build (TESSERA_BUILD_DIR, default
    ./build, holding libtessera and python/libtessera_jax.so) and its Python package. Returns
    the build directory."""
    if args.cpu:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   f" --xla_force_host_platform_device_count={args.cpu}")
        os.environ["JAX_PLATFORMS"] = "cpu"
    build = Path(os.environ.get("TESSERA_BUILD_DIR", ROOT / "build"))
    os.environ.setdefault("TESSERA_BUILD_DIR", str(build))
    sys.path.insert(0, str(ROOT / "python"))
    return build


def session(args):
    """jax with 64-bit types (before tessera.jax is imported); returns the devices used, a 1D
    mesh "x" over them and the results dict that names them, jax and the dtype."""
    import jax
    import numpy as np
    jax.config.update("jax_enable_x64", True)
    devs = jax.devices()
    devs = devs[:args.devices] if args.devices else devs
    mesh = jax.sharding.Mesh(np.array(devs), ("x",))
    results = {"devices": [str(d) for d in devs], "device_kind": devs[0].device_kind,
               "dtype": np.dtype(args.dtype).name, "jax": jax.__version__}
    return devs, mesh, results


def timed(fn, reps):
    """The best of reps runs of fn, each until its result is ready, in seconds."""
    import jax
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        best = min(best, time.perf_counter() - t0)
    return best


def warmed(fn, reps):
    """The best of reps runs of fn after one warm-up call (compiling), in seconds."""
    import jax
    jax.block_until_ready(fn())
    return timed(fn, reps)


def per_call(fn, calls):
    """The seconds of each of `calls` calls of fn, each until its result is ready, after one
    warm-up call."""
    import jax
    jax.block_until_ready(fn())
    per = []
    for _ in range(calls):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        per.append(time.perf_counter() - t0)
    return per


def print_table(rows):
    """rows of (run, seconds, TFLOP/s), one line each under a header."""
    width = max([60] + [len(name) for name, _, _ in rows])
    print(f"\n{'run':{width}s} {'seconds':>10s} {'TFLOP/s':>9s}")
    for name, t, r in rows:
        print(f"{name:{width}s} {t:10.4f} {r:9.2f}")
