"""jax.vmap(tessera.jax.potrs) over a batch of systems against jax's own: --batch systems of order
--n (f64, Hermitian positive definite, one right-hand side each), tessera's vmap under jit on a
mesh over the devices jax sees (--cpu N: N CPU devices; one call per device with the whole
batch: on one device and one tile, or gathered onto one device where measured quicker, one
batched solve; else the members in turn), against jax.vmap of jax.scipy.linalg.cho_factor +
cho_solve on one device (XLA's batched kernels) and against those solved one by one through jax
on one device; best of --reps after a warm-up, and the largest difference between tessera's
solutions and jax's.

  python3 bench/jax_vmap.py --batch 1000 --n 256 --cpu 2
  python3 bench/jax_vmap.py --batch 8 --n 16384            # GPUs
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jax_common as jc  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--batch", type=int, default=100)
ap.add_argument("--n", type=int, default=256)
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--cpu", type=int, default=0, help="N CPU devices instead of the GPUs")
args = ap.parse_args()
jc.start(args)
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

jax.config.update("jax_enable_x64", True)
import tessera.jax as tj  # noqa: E402

mesh = Mesh(np.array(jax.devices()), ("x",))
bsz, n = args.batch, args.n
k1, k2 = jax.random.split(jax.random.key(0))


def make(k):  # M Mᵀ / n + I for each member, made on the devices
    m = jax.random.normal(k, (bsz, n, n))
    return m @ jnp.swapaxes(m, 1, 2) / n + jnp.eye(n)


a = jax.jit(make, out_shardings=NamedSharding(mesh, P(None, "x", None)))(k1)
b = jax.random.normal(k2, (bsz, n))
a1, b1 = jax.device_put(a, jax.devices()[0]), jax.device_put(b, jax.devices()[0])

ours = jax.jit(jax.vmap(lambda a, b: tj.potrs(a, b, 256, mesh, P("x", None))))
batched = jax.jit(jax.vmap(lambda a, b: jax.scipy.linalg.cho_solve(
    jax.scipy.linalg.cho_factor(a), b)))
single = jax.jit(lambda a, b: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(a), b))


def one_by_one(a, b):
    return [single(a[i], b[i]) for i in range(bsz)]


def best(f, *x):
    return jc.warmed(lambda: f(*x), args.reps)


rows = [("tessera vmap(potrs)", best(ours, a, b)),
        ("jax vmap(cho_factor + cho_solve), one device", best(batched, a1, b1)),
        ("jax one by one, one device", best(one_by_one, a1, b1))]
diff = jnp.max(jnp.abs(jax.device_put(ours(a, b), jax.devices()[0]) - batched(a1, b1)))
print(f"batch {bsz} x n={n}, {len(jax.devices())} devices; largest difference {float(diff):.1e}")
for name, t in rows:
    print(f"{name:46s} {t:9.4f} s")
print(f"tessera / jax batched {rows[1][1] / rows[0][1]:.2f} x the speed; "
      f"/ jax one by one {rows[2][1] / rows[0][1]:.2f} x")
