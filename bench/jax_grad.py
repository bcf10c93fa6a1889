"""The Gaussian-process objective logdet(A) + bᵀA⁻¹b through tessera.jax.potrs: its value and
its jax.grad in A (one factorization, every solve of the rules on it), against jax's own
(jax.scipy.linalg.cho_factor + cho_solve on one device of the same upper triangle, its grad);
with --objective cholesky, sum(W ∘ U) for tessera.jax.cholesky's factor U and a fixed random W
(Murray's rule: two triangular solves on the factor) against jnp.linalg.cholesky's; with
--objective lu, |x|² for x = tessera.jax.lu_solve(A, b) (its LU factors made once under
differentiation, the solves with A and Aᵀ on them) against jnp.linalg.solve's. f64, --n, on
the devices jax sees (--cpu N: N CPU devices), a mesh of Auto axes; best of --reps after a
warm-up.

  python3 bench/jax_grad.py --n 2000 --cpu 2 [--objective cholesky|lu]
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jax_common as jc  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--n", type=int, default=2000)
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--cpu", type=int, default=0, help="N CPU devices instead of the GPUs")
ap.add_argument("--objective", choices=["gp", "cholesky", "lu"], default="gp")
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
n = args.n
k1, k2 = jax.random.split(jax.random.key(0))
# A = M Mᵀ / n + I made on the devices, sharded by rows (no host matrix at large n)
a = jax.jit(lambda k: (lambda m: m @ m.T / n + jnp.eye(n))(jax.random.normal(k, (n, n))),
            out_shardings=NamedSharding(mesh, P("x", None)))(k1)
b = jax.random.normal(k2, (n,))


def objective(a):
    x, ld = tj.potrs(a, b, 256, mesh, P("x", None), return_logdet=True)
    return ld + b @ x


def reference(a):
    # the Hermitian matrix potrs reads (its upper triangle): the gradient's convention potrs'
    t = jnp.triu(a, 1)
    c = jax.scipy.linalg.cho_factor(t + t.T + jnp.diag(jnp.diagonal(a)))
    return 2 * jnp.sum(jnp.log(jnp.diagonal(c[0]))) + b @ jax.scipy.linalg.cho_solve(c, b)


if args.objective == "cholesky":
    w = jax.random.normal(jax.random.key(1), (n, n))

    def objective(a):
        return jnp.sum(w * tj.cholesky(a, 256, mesh, P("x", None)))

    def reference(a):  # jax's factor of the Hermitian matrix tessera reads, as its upper U
        t = jnp.triu(a, 1)
        return jnp.sum(w * jnp.linalg.cholesky(t + t.T + jnp.diag(jnp.diagonal(a))).T)


if args.objective == "lu":
    def objective(a):
        return jnp.sum(tj.lu_solve(a, b, 256, mesh, P("x", None)) ** 2)

    def reference(a):
        return jnp.sum(jnp.linalg.solve(a, b) ** 2)


def best(f, x):
    return jc.warmed(lambda: f(x), args.reps)


a1 = jax.device_put(a, jax.devices()[0])
rows = [("tessera value", best(jax.jit(objective), a)),
        ("tessera grad", best(jax.jit(jax.grad(objective)), a)),
        ("jax value (one device)", best(jax.jit(reference), a1)),
        ("jax grad (one device)", best(jax.jit(jax.grad(reference)), a1))]
g = jax.device_put(jax.jit(jax.grad(objective))(a), jax.devices()[0])
diff = jnp.max(jnp.abs(g - jax.jit(jax.grad(reference))(a1)))
print(f"n={n}, {len(jax.devices())} devices; grad difference {float(diff):.1e}")
for name, t in rows:
    print(f"{name:26s} {t:8.4f} s")
print(f"tessera grad / value {rows[1][1] / rows[0][1]:.2f}; tessera grad / jax grad "
      f"{rows[1][1] / rows[3][1]:.2f}")
