"""tessera.jax.cho_factor / cho_solve (the factor once, four solves) against four potrs calls
(each factoring again) and against jax.scipy.linalg's cho_factor + cho_solve on one device, on
2 CPU devices (or the GPUs jax sees, two of them), f64, N = 3000, four right-hand sides of 4
columns; best of 3 each. Prints one line of seconds and the backward error.

  python3 bench/jax_cho.py
"""
import os, time
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
os.environ.setdefault("TESSERA_PERFMODEL", "none")
import jax, jax.numpy as jnp, numpy as np
jax.config.update("jax_enable_x64", True)
import tessera.jax as tj
from jax.sharding import PartitionSpec as P
mesh = jax.sharding.Mesh(np.array(jax.devices()[:2]), ("x",))
n = 3000; rng = np.random.default_rng(0)
m = rng.standard_normal((n, n)); a = m @ m.T / n + np.eye(n)
bs = [rng.standard_normal((n, 4)) for _ in range(4)]
def best(f, r=3):
    t = 1e9
    for _ in range(r):
        t0 = time.perf_counter(); out = f(); jax.block_until_ready(out); t = min(t, time.perf_counter() - t0)
    return t
t_potrs = best(lambda: [tj.potrs(a, b, 256, mesh, P("x", None)) for b in bs])
def fs():
    cf = tj.cho_factor(a, 256, mesh, P("x", None))
    return [tj.cho_solve(cf, b, 256, mesh, P("x", None)) for b in bs]
t_cho = best(fs)
cf = tj.cho_factor(a, 256, mesh, P("x", None))
t_solve = best(lambda: tj.cho_solve(cf, bs[0], 256, mesh, P("x", None)))
t_fac = best(lambda: tj.cho_factor(a, 256, mesh, P("x", None))[0])
ja = jnp.asarray(a)
jf = jax.jit(lambda a, b: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(a), b))
js = jax.jit(jax.scipy.linalg.cho_solve, static_argnums=())
t_jax = best(lambda: [jf(ja, b) for b in bs])
jcf = jax.jit(jax.scipy.linalg.cho_factor)(ja)
jsol = jax.jit(lambda c, b: jax.scipy.linalg.cho_solve((c, False), b))
t_jsolve = best(lambda: jsol(jcf[0], bs[0]))
x = tj.cho_solve(cf, bs[0], 256, mesh, P("x", None))
print(f"n={n}: 4 potrs {t_potrs:.4f} s; cho_factor + 4 cho_solve {t_cho:.4f} s; cho_factor {t_fac:.4f} s; one cho_solve {t_solve:.4f} s; jax 4 x (cho_factor + cho_solve) one device {t_jax:.4f} s, jax cho_solve {t_jsolve:.4f} s; backward error {np.linalg.norm(a @ np.asarray(x) - bs[0]) / (np.linalg.norm(a) * np.linalg.norm(np.asarray(x))):.1e}")
