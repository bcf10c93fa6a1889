"""tessera.jax across processes against one process over the same devices.

Every process runs this script. With --processes P it is one of P processes of a JAX program
launched by jax.distributed alone (a coordinator; tessera meets the processes through jax's
key-value store), each driving --local devices (the GPUs it sees: give each process its own
with CUDA_VISIBLE_DEVICES); without, one process drives --local devices.
On a 1D mesh over every device of the program it times tessera.jax.potrs and lu_solve on A
generated sharded by rows (f64, --n), best of --reps after a warm-up call, and process 0
prints a table; --json FILE writes the results. --layout picks the layout tessera runs on
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


def jaxmg_best(op, a):
    """jaxmg's op on the same A (resharded P("pr", "pc") over a (devices, 1) mesh: the same row
    blocks) and b: the best seconds over --tiles' T_A whose solution is right (backward error
    below 1e-10), that T_A, its backward error; with none right, the seconds are NaN and the
    error the first T_A's."""
    mesh2 = jax.sharding.Mesh(np.array(devs).reshape(nd, 1), ("pr", "pc"))
    a2 = jax.device_put(a, NamedSharding(mesh2, P("pr", "pc")))
    b2 = jax.device_put(b, NamedSharding(mesh2, P()))
    fn = getattr(jaxmg, op)
    best, wrong = (float("inf"), 0, 0.0), None
    for tile in map(int, args.tiles.split(",")):
        x = fn(a2, b2, tile, mesh2, P("pr", "pc"), donate=False)
        x = x[0] if isinstance(x, tuple) else x
        err = backward(a, jnp.asarray(x).reshape(n, -1))
        if not err < 1e-10:
            wrong = wrong or (float("nan"), tile, err)
            continue
        t = jc.timed(lambda: fn(a2, b2, tile, mesh2, P("pr", "pc"), donate=False), args.reps)
        if t < best[0]:
            best = (t, tile, err)
    return best if best[1] else wrong


FLOPS = {"potrs": n ** 3 / 3 + 2 * n * n, "lu_solve": 2 * n ** 3 / 3 + 2 * n * n}
results = {"n": n, "processes": args.processes, "local": args.local, "devices": nd,
           "device_kind": devs[0].device_kind, "dtype": dtype.name,
           "layout": os.environ.get("TESSERA_LAYOUT", "cost")}
b = jax.device_put(jnp.ones((n, 1), dtype), NamedSharding(mesh, P()))
for op in args.ops.split(","):
    a = matrix("spd" if op == "potrs" else "general")
    fn = getattr(tj, op)
    x, st = fn(a, b, 256, mesh, P("x", None), return_status=True)
    jax.block_until_ready(x)
    assert int(st) == 0, (op, int(st))
    t = jc.timed(lambda: fn(a, b, 256, mesh, P("x", None)), args.reps)
    results[op] = dict(seconds=t, tflops=FLOPS[op] / t * 1e-12, backward=backward(a, x))
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
        rows.append((f"tessera.jax.{op} (backward error {r['backward']:.1e})", r["seconds"],
                     r["tflops"]))
        if "jaxmg" in r:
            m = r["jaxmg"]
            speed = (f"tessera {m['seconds'] / r['seconds']:.2f} x" if m["seconds"] == m["seconds"]
                     else "every T_A's solution wrong")
            rows.append((f"jaxmg.{op} T_A={m['T_A']} (backward error {m['backward']:.1e}); "
                         + speed, m["seconds"], m["tflops"]))
    jc.print_table(rows)
    if jaxmg is None:
        print(f"(jaxmg not compared: {why_not})")
if args.processes > 1:
    jax.distributed.shutdown()
