"""tessera.jax across processes against one process over the same devices.

Every process runs this script. With --processes P it is one of P processes of a JAX program
launched by jax.distributed alone (a coordinator; tessera meets the processes through jax's
key-value store), each driving --local devices (the GPUs it sees: give each process its own
with CUDA_VISIBLE_DEVICES); without, one process drives --local devices.
On a 1D mesh over every device of the program it times tessera.jax.potrs and lu_solve (and
syevd with --ops, eigenvalues and eigenvectors) on A generated sharded by rows (f64, --n), best
of --reps after a warm-up call, and process 0 prints a table; --json FILE writes the results. --layout picks the layout tessera runs on
across processes (TESSERA_LAYOUT: cost, the default, tessera or given). Where jaxmg is
installed (``import jaxmg`` works: jaxmg 1.x, one process per GPU), the same calls of jaxmg on
the same arrays (A over a (devices, 1) mesh as P("pr", "pc"), the best of T_A in --tiles) are
timed too, and the table gives tessera's speed over jaxmg's.

  python3 bench/jax_processes.py --n 65536 --local 2                       # 1 process x 2
  CUDA_VISIBLE_DEVICES=0 python3 bench/jax_processes.py --n 65536 --processes 2 --id 0 &
  CUDA_VISIBLE_DEVICES=1 python3 bench/jax_processes.py --n 65536 --processes 2 --id 1
  mpirun -n 2 python3 bench/jax_processes.py --n 65536 --mpi   # each process its own GPU
"""
import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jax_common as jc  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--n", type=int, default=65536)
ap.add_argument("--reps", type=int, default=2)
ap.add_argument("--local", type=int, default=1, help="devices of each process")
ap.add_argument("--processes", type=int, default=1)
ap.add_argument("--id", type=int, default=0, help="this process's index (with --processes)")
ap.add_argument("--port", type=int, default=29500, help="the coordinator's port (process 0)")
ap.add_argument("--ops", default="potrs,lu_solve")
ap.add_argument("--layout", choices=["cost", "tessera", "given"],
                help="TESSERA_LAYOUT of this process (default: the environment's, else cost)")
ap.add_argument("--tiles", default="512,1024,2048", help="jaxmg's T_A values tried")
ap.add_argument("--mpi", action="store_true",
                help="launched by mpirun: jax.distributed.initialize() finds the processes")
jc.add_options(ap)
args = ap.parse_args()
if args.layout:
    os.environ["TESSERA_LAYOUT"] = args.layout
if importlib.util.find_spec("jaxmg") is not None:
    # jaxmg's cuSOLVERMp allocates its workspaces outside XLA's pool: XLA and tessera's pool
    # leave it room where the caller set neither
    os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.5")
    os.environ.setdefault("TESSERA_GPU_MEM_LIMIT", "32G")
jc.start(args)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

if args.mpi:
    jax.distributed.initialize()
    args.processes = jax.process_count()
elif args.processes > 1:
    jax.distributed.initialize(f"localhost:{args.port}", num_processes=args.processes,
                               process_id=args.id)
jax.config.update("jax_enable_x64", True)
import tessera.jax as tj  # noqa: E402

devs = jax.devices()
mesh = jax.sharding.Mesh(np.array(devs), ("x",))
dtype = np.dtype(args.dtype)
n, nd = args.n, len(devs)


def matrix(kind):
    """A sharded by rows, generated on the devices: SPD (potrs) or diagonally dominant."""
    def local():
        r0 = jax.lax.axis_index("x") * (n // nd)
        i = jax.lax.broadcasted_iota(jnp.int64, (n // nd, n), 0) + r0
        j = jax.lax.broadcasted_iota(jnp.int64, (n // nd, n), 1)
        v = (((i + j) % 7 + (i * j) % 5) / 12.0) if kind == "spd" else (((3 * i + j) % 11 - 5)
                                                                       / 16.0)
        if kind == "symmetric":  # entries in [-0.5, 0.5), a spread spectrum
            return ((((i * j) % 97 + (i + j) % 89) / 186.0) - 0.5).astype(dtype)
        return jnp.where(i == j, jnp.asarray(n + 1, dtype), v.astype(dtype))

    return jax.jit(jax.shard_map(local, mesh=mesh, in_specs=(), out_specs=P("x", None)))()


try:  # jaxmg 1.x, where installed (one process per GPU)
    import jaxmg  # noqa: E402
except Exception as e:  # not installed, or its libraries not loadable here
    jaxmg = None
    why_not = f"{type(e).__name__}: {e}"


def backward(a, x):
    """max |A x - b| / (max row sum of |A| * max |x|), on the devices."""
    return float(jax.jit(lambda a, x: jnp.abs(a @ x - b).max() /
                         (jnp.abs(a).sum(1).max() * jnp.abs(x).max()))(a, x))


def eig_residual(a, w, v):
    """||A V - V diag(w)||_F / (||A||_F n eps), on the devices."""
    eps = np.finfo(dtype).eps
    return float(jax.jit(lambda a, w, v: jnp.linalg.norm(a @ v - v * w[None, :]) /
                         (jnp.linalg.norm(a) * n * eps))(a, w, v))


def call(op, module, a, tile, m, spec, **kw):
    """module's op on A (and b, for the solves), its result (potrs' solution alone, syevd's
    (w, V))."""
    if op == "syevd":
        return module.syevd(a, tile, m, spec, **kw)
    x = getattr(module, op)(a, b if module is tj else b_of(m), tile, m, spec, **kw)
    return x[0] if isinstance(x, tuple) and module is not tj else x


def error(op, a, out):
    """The check of op's result: the backward error of a solve, syevd's residual."""
    if op == "syevd":
        return eig_residual(a, *out[:2])
    return backward(a, jnp.asarray(out[0] if isinstance(out, tuple) else out).reshape(n, -1))


def jaxmg_best(op, a):
    """jaxmg's op on the same A (resharded P("pr", "pc") over a (devices, 1) mesh: the same row
    blocks) and b: the best seconds over --tiles' T_A whose solution is right (backward error
    below 1e-10), that T_A, its backward error; with none right, the seconds are NaN and the
    error the first T_A's."""
    mesh2 = jax.sharding.Mesh(np.array(devs).reshape(nd, 1), ("pr", "pc"))
    a2 = jax.device_put(a, NamedSharding(mesh2, P("pr", "pc")))
    best, wrong = (float("inf"), 0, 0.0), None
    for tile in map(int, args.tiles.split(",")):
        out = call(op, jaxmg, a2, tile, mesh2, P("pr", "pc"), donate=False)
        err = error(op, a, out)
        if not err < LIMIT[op]:
            wrong = wrong or (float("nan"), tile, err)
            continue
        t = jc.timed(lambda: call(op, jaxmg, a2, tile, mesh2, P("pr", "pc"), donate=False),
                     args.reps)
        if t < best[0]:
            best = (t, tile, err)
    return best if best[1] else wrong


FLOPS = {"potrs": n ** 3 / 3 + 2 * n * n, "lu_solve": 2 * n ** 3 / 3 + 2 * n * n,
         "syevd": 4 * n ** 3 / 3 + 4 * n ** 3}  # tridiagonal reduction and back-transformation
LIMIT = {"potrs": 1e-10, "lu_solve": 1e-10, "syevd": 100.0}  # a result counted right below
KIND = {"potrs": "spd", "lu_solve": "general", "syevd": "symmetric"}
results = {"n": n, "processes": args.processes, "local": args.local, "devices": nd,
           "device_kind": devs[0].device_kind, "dtype": dtype.name,
           "layout": os.environ.get("TESSERA_LAYOUT", "cost")}
b = jax.device_put(jnp.ones((n, 1), dtype), NamedSharding(mesh, P()))


def b_of(m):
    return jax.device_put(b, NamedSharding(m, P()))


for op in args.ops.split(","):
    a = matrix(KIND[op])
    out = call(op, tj, a, 256, mesh, P("x", None), return_status=True)
    jax.block_until_ready(out)
    assert int(out[-1]) == 0, (op, int(out[-1]))
    x = out[:-1] if op == "syevd" else out[0]
    t = jc.timed(lambda: call(op, tj, a, 256, mesh, P("x", None)), args.reps)
    results[op] = dict(seconds=t, tflops=FLOPS[op] / t * 1e-12, backward=error(op, a, x))
    if jaxmg is not None:
        tm, tile, err = jaxmg_best(op, a)
        results[op]["jaxmg"] = dict(seconds=tm, tflops=FLOPS[op] / tm * 1e-12, T_A=tile,
                                    backward=err)
    del a, x

if jax.process_index() == 0:
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    print(f"\n{args.processes} process(es) x {args.local} {devs[0].device_kind}, N={n} "
          f"{dtype.name}")
    rows = []
    for op, r in results.items():
        if not isinstance(r, dict):
            continue
        what = "residual" if op == "syevd" else "backward error"
        rows.append((f"tessera.jax.{op} ({what} {r['backward']:.1e})", r["seconds"],
                     r["tflops"]))
        if "jaxmg" in r:
            m = r["jaxmg"]
            speed = (f"tessera {m['seconds'] / r['seconds']:.2f} x" if m["seconds"] == m["seconds"]
                     else "every T_A's solution wrong")
            rows.append((f"jaxmg.{op} T_A={m['T_A']} ({what} {m['backward']:.1e}); "
                         + speed, m["seconds"], m["tflops"]))
    jc.print_table(rows)
    if jaxmg is None:
        print(f"(jaxmg not compared: {why_not})")
if args.processes > 1:
    jax.distributed.shutdown()
