"""tessera.jax across processes against one process over the same devices.

Every process runs this script. With --processes P it is one of P processes of a JAX program
launched by jax.distributed alone (a coordinator; tessera meets the processes through jax's
key-value store), each driving --local devices (the GPUs it sees: give each process its own
with CUDA_VISIBLE_DEVICES); without, one process drives --local devices.
On a 1D mesh over every device of the program it times tessera.jax.potrs and lu_solve on A
generated sharded by rows (f64, --n), best of --reps after a warm-up call, and process 0
prints a table; --json FILE writes the results.

  python3 bench/jax_processes.py --n 65536 --local 2                       # 1 process x 2
  CUDA_VISIBLE_DEVICES=0 python3 bench/jax_processes.py --n 65536 --processes 2 --id 0 &
  CUDA_VISIBLE_DEVICES=1 python3 bench/jax_processes.py --n 65536 --processes 2 --id 1
  mpirun -n 2 python3 bench/jax_processes.py --n 65536 --mpi   # each process its own GPU
"""
import argparse
import json
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
ap.add_argument("--mpi", action="store_true",
                help="launched by mpirun: jax.distributed.initialize() finds the processes")
jc.add_options(ap)
args = ap.parse_args()
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


FLOPS = {"potrs": n ** 3 / 3 + 2 * n * n, "lu_solve": 2 * n ** 3 / 3 + 2 * n * n}
results = {"n": n, "processes": args.processes, "local": args.local, "devices": nd,
           "device_kind": devs[0].device_kind, "dtype": dtype.name}
b = jax.device_put(jnp.ones((n, 1), dtype), NamedSharding(mesh, P()))
for op in args.ops.split(","):
    a = matrix("spd" if op == "potrs" else "general")
    fn = getattr(tj, op)
    x, st = fn(a, b, 256, mesh, P("x", None), return_status=True)
    jax.block_until_ready(x)
    assert int(st) == 0, (op, int(st))
    t = jc.timed(lambda: fn(a, b, 256, mesh, P("x", None)), args.reps)
    # the backward error, max |A x - b| / (max row sum of |A| * max |x|), on the devices
    err = jax.jit(lambda a, x: jnp.abs(a @ x - b).max() /
                  (jnp.abs(a).sum(1).max() * jnp.abs(x).max()))(a, x)
    results[op] = dict(seconds=t, tflops=FLOPS[op] / t * 1e-12, backward=float(err))
    del a, x

if jax.process_index() == 0:
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    print(f"\n{args.processes} process(es) x {args.local} {devs[0].device_kind}, N={n} "
          f"{dtype.name}")
    jc.print_table([(f"tessera.jax.{op} (backward error {r['backward']:.1e})", r["seconds"],
                     r["tflops"]) for op, r in results.items() if isinstance(r, dict)])
if args.processes > 1:
    jax.distributed.shutdown()
