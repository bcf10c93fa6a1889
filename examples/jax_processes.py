"""Solve one distributed system with tessera.jax from a JAX program of several processes.

Each process drives its own devices (one GPU each, or CPU devices); A lives sharded by rows
over all of them, each process creating only its own rows, and tessera factors and solves it
where it lies. Launch it either way:

  # jax.distributed alone: give each process the coordinator, the count and its index
  CUDA_VISIBLE_DEVICES=0 python3 examples/jax_processes.py --coordinator localhost:29500 \\
      --processes 2 --id 0 &
  CUDA_VISIBLE_DEVICES=1 python3 examples/jax_processes.py --coordinator localhost:29500 \\
      --processes 2 --id 1

  # mpirun (or srun): jax.distributed.initialize() finds the processes itself
  mpirun -n 2 python3 examples/jax_processes.py

On CPUs, add --cpu 2 (two CPU devices per process). Each process prints its part of the check;
process 0 prints the summary.
"""
import argparse
import os

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--coordinator", help="host:port of process 0 (omit under mpirun / srun)")
ap.add_argument("--processes", type=int, default=None)
ap.add_argument("--id", type=int, default=None)
ap.add_argument("--n", type=int, default=8192)
ap.add_argument("--cpu", type=int, default=0, help="CPU devices per process instead of GPUs")
args = ap.parse_args()
if args.cpu:
    os.environ["JAX_PLATFORMS"] = "cpu"
    os.environ["JAX_NUM_CPU_DEVICES"] = str(args.cpu)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

if args.cpu:  # XLA's own collectives between CPU processes
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
jax.distributed.initialize(args.coordinator, args.processes, args.id)
jax.config.update("jax_enable_x64", True)
import tessera.jax as tj  # noqa: E402

n = args.n
mesh = jax.make_mesh((jax.device_count(),), ("x",))  # every device of every process
rows = NamedSharding(mesh, P("x", None))


def block(index):
    """This process's rows of A: symmetric, diagonally dominant, so positive definite."""
    i = np.arange(n)[index[0]][:, None]
    j = np.arange(n)[None, :]
    return np.where(i == j, n + 1.0, ((i + j) % 7) / 8.0)


a = jax.make_array_from_callback((n, n), rows, block)  # each process makes only its rows
b = jax.make_array_from_callback((n, 1), rows, lambda index: np.ones((n, 1))[index])

x, status = tj.potrs(a, b, 256, return_status=True)  # mesh and layout read from a
x_lu, status_lu = tj.lu_solve(a, b, 256, return_status=True)

# the backward error, computed where the data lies
err = jax.jit(lambda a, x, b: jnp.abs(a @ x - b).max() / (jnp.abs(a).sum(1).max()
                                                          * jnp.abs(x).max()))
e, e_lu = float(err(a, x, b)), float(err(a, x_lu, b))  # every process takes part
print(f"process {jax.process_index()}: {len(jax.local_devices())} of {jax.device_count()} "
      f"devices, x's rows here: {[s.index[0] for s in x.addressable_shards]}")
if jax.process_index() == 0:
    print(f"potrs: status {int(status)}, backward error {e:.1e}; lu_solve: status "
          f"{int(status_lu)}, backward error {e_lu:.1e}")
jax.distributed.shutdown()
