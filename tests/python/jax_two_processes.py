"""One of two JAX processes (run by test_jax_processes.py): joins the other through
jax.distributed on CPU devices, builds a mesh over the devices of both, and checks that every
tessera.jax entry point refuses it with the ValueError that names the problem before anything
runs. Prints "ok <process id>" when every check held.

Usage: python jax_two_processes.py COORDINATOR_PORT PROCESS_ID"""
import os
import sys
from pathlib import Path

os.environ["JAX_PLATFORMS"] = "cpu"  # GPUs too, where there are some: CPU devices are enough
os.environ["JAX_NUM_CPU_DEVICES"] = "2"
os.environ.pop("XLA_FLAGS", None)

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

sys.path.append(str(Path(__file__).resolve().parents[2] / "python"))
import tessera.jax as tj  # noqa: E402


def main(port, pid):
    jax.distributed.initialize(f"localhost:{port}", num_processes=2, process_id=pid,
                               initialization_timeout=60)
    try:
        assert jax.process_count() == 2 and len(jax.devices()) == 4, jax.devices()
        mesh = Mesh(np.array(jax.devices()), ("x",))
        a, b = np.eye(8), np.ones(8)
        calls = {
            "potrs": lambda: tj.potrs(a, b, 2, mesh=mesh, in_specs=P("x", None)),
            "potri": lambda: tj.potri(a, 2, mesh, P("x", None)),
            "cholesky": lambda: tj.cholesky(a, 2, mesh, P("x", None)),
            "potrs under jit": lambda: jax.jit(
                lambda a, b: tj.potrs(a, b, 2, mesh=mesh, in_specs=P("x", None)))(a, b),
        }
        for name, call in calls.items():
            try:
                call()
            except ValueError as e:
                if "devices of other processes" not in str(e):
                    raise AssertionError(f"{name}: unexpected message: {e}") from e
            else:
                raise AssertionError(f"{name}: a mesh with another process's devices ran")
    finally:
        jax.distributed.shutdown()
    print(f"ok {pid}", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
