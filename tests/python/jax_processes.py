"""One process of a JAX program spanning several (run by test_jax_processes.py): joins the
others through jax.distributed on CPU devices, then checks every tessera.jax function on meshes
over the devices of all of them, as a user's program would call them.

Launch, either way:
  mpirun -n P python jax_processes.py CASE DEVICES
      jax.distributed.initialize() finds the processes from Open MPI's environment
  python jax_processes.py CASE DEVICES COORDINATOR_PORT PROCESS_ID PROCESSES
      jax.distributed alone, with a coordinator (no MPI)

DEVICES is the number of CPU devices of each process (JAX_PLATFORMS=cuda: its GPUs instead);
CASE names the checks (CASES below), or several joined by "+", run in that order in the same
processes (one start of jax, and one compilation of what they share, for them all).
Prints "ok <process id>" when every check of the case held; a failure raises (exit status 1).
"""
import os
import sys
import time
from pathlib import Path

# CPU devices unless the launcher asks for GPUs (JAX_PLATFORMS=cuda, one GPU per process)
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.pop("XLA_FLAGS", None)

CASE, DEVICES = sys.argv[1], int(sys.argv[2])
os.environ["JAX_NUM_CPU_DEVICES"] = str(DEVICES)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.experimental import multihost_utils  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

sys.path.append(str(Path(__file__).resolve().parents[2] / "python"))
import tessera.jax as tj  # noqa: E402

DTYPES = (np.float32, np.float64, np.complex64, np.complex128)
TOL = {np.float32: 2e-3, np.complex64: 2e-3, np.float64: 1e-9, np.complex128: 1e-9}


def start():
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    if len(sys.argv) > 3:
        port, pid, procs = map(int, sys.argv[3:6])
        jax.distributed.initialize(f"localhost:{port}", num_processes=procs, process_id=pid,
                                   initialization_timeout=60)
    else:
        jax.distributed.initialize()


def whole(x):
    """The whole of a global array on this process."""
    return np.asarray(multihost_utils.process_allgather(x, tiled=True))


def hpd(n, dtype, seed):
    rng = np.random.default_rng(seed)  # the same matrix on every process
    m = rng.standard_normal((n, n))
    if np.iscomplexobj(np.zeros(1, dtype)):
        m = m + 1j * rng.standard_normal((n, n))
    return (m @ m.conj().T + n * np.eye(n)).astype(dtype), m.astype(dtype)


def tall(m, n, dtype, seed):
    """A random m x n matrix (m > n: well conditioned), the same on every process."""
    rng = np.random.default_rng(seed + 2)
    t = rng.standard_normal((m, n))
    if np.iscomplexobj(np.zeros(1, dtype)):
        t = t + 1j * rng.standard_normal((m, n))
    return t.astype(dtype)


def rhs(n, k, dtype, seed):
    rng = np.random.default_rng(seed + 1)
    return rng.standard_normal((n, k)).astype(dtype)


def meshes():
    """1D over every device, and the 2D grids the device count allows (rows x columns)."""
    devs = np.array(jax.devices())
    count = devs.size
    out = [(Mesh(devs, ("x",)), P("x", None))]
    for rows in range(2, count):
        if count % rows == 0:
            out.append((Mesh(devs.reshape(rows, count // rows), ("x", "y")), P("x", "y")))
    return out


def close(got, want, dtype, what):
    err = np.abs(got - want).max() / max(1.0, np.abs(want).max())
    assert err < TOL[dtype], f"{what}: error {err:.2e}"


def check_eig(w, v, a, dtype, what):
    """(w, V) an eigendecomposition of the Hermitian a (V None: w alone), w as numpy's."""
    close(w, np.linalg.eigvalsh(a), dtype, f"syevd's w {what}")
    if v is not None:
        close(a @ v, v * w, dtype, f"syevd's A V {what}")
        close(v.conj().T @ v, np.eye(len(w)), dtype, f"syevd's V {what}")


def check_functions(dtypes=DTYPES):
    """Every function, every dtype, on every mesh, sizes that split evenly (f64) and not (every
    dtype; qr, least_squares, polar and gesvd: an 18 x 7 A, whose rows or columns do not split
    evenly, and gesvd its 7 x 18 transpose; syevd solved on the process of mesh device 0, the
    result broadcast)."""
    for mesh, spec in meshes():
        for n in (16, 13):
            for dtype in dtypes if n == 13 else [d for d in dtypes if d == np.float64][:1]:
                what = f"{dict(mesh.shape)} n={n} {np.dtype(dtype).name}"
                a, m = hpd(n, dtype, n)
                b = rhs(n, 3, dtype, n)
                x, logdet, st = tj.potrs(a, b, 4, mesh, spec, return_logdet=True,
                                         return_status=True)
                assert int(st) == 0, f"potrs {what}: status {int(st)}"
                close(a @ whole(x), b, dtype, f"potrs {what}")
                assert abs(float(logdet) - np.linalg.slogdet(a)[1]) < 1e-2, f"logdet {what}"
                inv = whole(tj.potri(a, 4, mesh, spec))
                close(inv @ a, np.eye(n), dtype, f"potri {what}")
                f = whole(tj.cholesky(a, 4, mesh, spec, lower=True))
                close(f @ f.conj().T, a, dtype, f"cholesky {what}")
                xc, st = tj.cho_solve(tj.cho_factor(a, 4, mesh, spec), b, 4, mesh, spec,
                                      return_status=True)
                assert int(st) == 0, f"cho_solve {what}: status {int(st)}"
                close(a @ whole(xc), b, dtype, f"cho_solve {what}")
                g = (m + n * np.eye(n)).astype(dtype)
                xl, st = tj.lu_solve(g, b[:, 0], 4, mesh, spec, return_status=True)
                assert int(st) == 0, f"lu_solve {what}: status {int(st)}"
                close(g @ whole(xl), b[:, 0], dtype, f"lu_solve {what}")
                if n == 13 and dtype == np.complex128:  # mixed-precision solves, once a mesh
                    xm, st = tj.lu_solve(g, b[:, 0], 4, mesh, spec, return_status=True,
                                         mixed="s")
                    assert int(st) == 0, f"lu_solve mixed {what}: status {int(st)}"
                    close(g @ whole(xm), b[:, 0], dtype, f"lu_solve mixed {what}")
                    xm, st = tj.potrs(a, b, 4, mesh, spec, return_status=True, mixed="s")
                    assert int(st) == 0, f"potrs mixed {what}: status {int(st)}"
                    close(a @ whole(xm), b, dtype, f"potrs mixed {what}")
                h = (g + g.conj().T) / 2  # Hermitian, indefinite
                w, v, st = tj.syevd(h, 4, mesh, spec, return_status=True)
                assert int(st) == 0, f"syevd {what}: status {int(st)}"
                check_eig(whole(w), whole(v), h, dtype, what)
                check_eig(whole(tj.syevd(h, 4, mesh, spec, return_eigenvectors=False)), None, h,
                          dtype, what)
                if n != 13:
                    continue
                t = tall(n + 5, 7, dtype, n)  # rows (1D) or columns (2D) that do not split evenly
                q, r = map(whole, tj.qr(t, 4, mesh, spec))
                close(q @ r, t, dtype, f"qr {what}")
                close(q.conj().T @ q, np.eye(q.shape[1]), dtype, f"qr's Q {what}")
                assert not np.tril(r, -1).any(), f"qr's R {what}"
                bt = rhs(n + 5, 2, dtype, n)
                xq, st = tj.least_squares(t, bt, 4, mesh, spec, return_status=True)
                assert int(st) == 0, f"least_squares {what}: status {int(st)}"
                close(whole(xq), np.linalg.lstsq(t, bt, rcond=None)[0], dtype,
                      f"least_squares {what}")
                if len(dtypes) == len(DTYPES) and dtype not in (np.float64, np.complex64):
                    continue  # polar, gesvd: two of the every-dtype launch's (all in test_jax_svd)
                up, hp = map(whole, tj.polar(t, 4, mesh, spec))
                close(up @ hp, t, dtype, f"polar {what}")
                close(up.conj().T @ up, np.eye(7), dtype, f"polar's U_p {what}")
                for x in (t, t.conj().T):  # tall, and wide through Aᴴ
                    sv, us, vh = map(whole, tj.gesvd(x, 4, mesh, spec))
                    close(sv, np.linalg.svd(x, compute_uv=False), dtype, f"gesvd's s {what}")
                    close((us * sv) @ vh, x, dtype, f"gesvd {what}")


def check_failures():
    """Not positive definite, singular and rank deficient matrices, a NaN for syevd: the same
    status on every process, NaN."""
    n = 12
    for mesh, spec in meshes():
        a, _ = hpd(n, np.float64, 3)
        a[5, 5] = -1.0
        x, st = tj.potrs(a, np.ones(n), 4, mesh, spec, return_status=True)
        assert int(st) > 0 and np.isnan(whole(x)).all(), (int(st), dict(mesh.shape))
        statuses = multihost_utils.process_allgather(np.array([int(st)]))
        assert len(set(statuses.ravel().tolist())) == 1, statuses
        s = np.eye(n)
        s[7, :] = 0
        s[7, 7] = 0
        x, st = tj.lu_solve(s, np.ones(n), 4, mesh, spec, return_status=True)
        assert int(st) == 8 and np.isnan(whole(x)).all(), (int(st), dict(mesh.shape))
        t = tall(n + 3, 6, np.float64, 1)
        t[:, 4] = 0  # rank deficient: R(5, 5) is exactly zero
        x, st = tj.least_squares(t, np.ones(n + 3), 4, mesh, spec, return_status=True)
        assert int(st) == 5 and np.isnan(whole(x)).all(), (int(st), dict(mesh.shape))
        statuses = multihost_utils.process_allgather(np.array([int(st)]))
        assert len(set(statuses.ravel().tolist())) == 1, statuses
        h = np.eye(n)
        h[9, 2] = np.nan  # on mesh device 0's process or another's: column 3 either way
        w, v, st = tj.syevd(h, 4, mesh, spec, return_status=True)
        assert int(st) == 3 and np.isnan(whole(w)).all() and np.isnan(whole(v)).all(), \
            (int(st), dict(mesh.shape))
        sv, u, vh, st = tj.gesvd(h, 4, mesh, spec, return_status=True)
        assert int(st) == 3 and np.isnan(whole(sv)).all() and np.isnan(whole(u)).all(), \
            (int(st), dict(mesh.shape))


def check_derivatives(mesh, ga, gb, a, b):
    """Derivatives and batches on global arrays over the processes, under jit, against jax's own
    rules on this process's whole copy (jitted too: one compiled program each, not one
    compilation per operation run eagerly): the gradient of log det(A) + ‖A⁻¹ b‖² through potrs,
    cholesky's tangent, the gradient of a function of syevd's eigenvalues and eigenvectors, and
    potrs over a batch of right-hand sides by jax.vmap."""
    spec = P("x", None)

    def loss(a, b):
        x, logdet = tj.potrs(a, b, 4, mesh, spec, return_logdet=True)
        return jnp.sum(x ** 2) + logdet

    def loss_ref(a, b):
        h = jnp.triu(a) + jnp.triu(a, 1).T  # potrs reads the upper triangle (lower=False)
        return jnp.sum(jnp.linalg.solve(h, b) ** 2) + jnp.linalg.slogdet(h)[1]

    got = jax.jit(jax.grad(loss, (0, 1)))(ga, gb)
    want = jax.jit(jax.grad(loss_ref, (0, 1)))(a, b)
    for g, w, what in zip(got, want, ("A", "b")):
        close(whole(g), np.asarray(w), np.float64, f"grad of log det + |x|^2 in {what}")
    da = 0.5 * np.eye(a.shape[0])[::-1] + 0.1 * np.eye(a.shape[0])  # a symmetric direction
    gda = jax.make_array_from_callback(a.shape, NamedSharding(mesh, spec), lambda i: da[i])
    _, t = jax.jit(lambda a, d: jax.jvp(lambda m: tj.cholesky(m, 4, mesh, spec, lower=True),
                                        (a,), (d,)))(ga, gda)
    _, t_ref = jax.jit(lambda a, d: jax.jvp(jnp.linalg.cholesky, (a,), (d,)))(a, da)
    close(whole(t), np.asarray(t_ref), np.float64, "cholesky's tangent")

    def spectral(a):
        w, v = tj.syevd(a, 4, mesh, spec)
        return jnp.sum(w * jnp.arange(w.shape[0])) + jnp.sum(v[0] ** 2)

    def spectral_ref(a):  # syevd reads the lower triangle
        w, v = jnp.linalg.eigh(jnp.tril(a) + jnp.tril(a, -1).T)
        return jnp.sum(w * jnp.arange(w.shape[0])) + jnp.sum(v[0] ** 2)

    close(whole(jax.jit(jax.grad(spectral))(ga)), np.asarray(jax.jit(jax.grad(spectral_ref))(a)),
          np.float64, "grad through syevd")
    bs = np.stack([b, 2 * b, b[::-1]])
    gbs = jax.make_array_from_callback(bs.shape, NamedSharding(mesh, P(None, "x", None)),
                                       lambda i: bs[i])
    xs = jax.jit(jax.vmap(lambda a, b: tj.potrs(a, b, 4, mesh, spec), in_axes=(None, 0)))(ga, gbs)
    for k in range(3):
        close(a @ whole(xs)[k], bs[k], np.float64, f"vmap of potrs, member {k}")


def check_sharded():
    """A and b placed as global arrays over the processes, each holding only its shards; x
    comes back in b's layout; the shardmap forms inside the caller's shard_map; derivatives and
    batches (check_derivatives), and a gradient through a shardmap form on a 1D and a 2 x 2
    mesh."""
    n, dtype = 16, np.float64
    mesh = Mesh(np.array(jax.devices()), ("x",))
    a, _ = hpd(n, dtype, 5)
    b = rhs(n, 2, dtype, 5)
    rows = NamedSharding(mesh, P("x", None))
    ga = jax.make_array_from_callback(a.shape, rows, lambda i: a[i])
    gb = jax.make_array_from_callback(b.shape, rows, lambda i: b[i])
    x = tj.potrs(ga, gb, 4)
    assert x.sharding.is_equivalent_to(rows, 2), x.sharding
    close(a @ whole(x), b, dtype, "potrs on global arrays")
    x = jax.jit(lambda a, b: tj.lu_solve(a, b, 4, mesh, P("x", None)))(ga, gb)
    close(a @ whole(x), b, dtype, "lu_solve under jit")

    def local(a, b):
        x, st = tj.potrs_shardmap_ctx(a, b, 4)
        y, st2 = tj.lu_solve_shardmap_ctx(a, b, 4)
        return x, y, st, st2

    def local_qr(a, b):
        q, r, st = tj.qr_shardmap_ctx(a, 4)
        x, st2 = tj.least_squares_shardmap_ctx(a, b, 4)
        return q, r, x, st, st2

    def local_eig(a):
        w, v, st = tj.syevd_shardmap_ctx(a, 4)
        w2, st2 = tj.syevd_shardmap_ctx(a, 4, return_eigenvectors=False)
        return w, v, w2, st, st2

    x, y, st, st2 = jax.jit(jax.shard_map(local, mesh=mesh, in_specs=(P("x", None), P("x")),
                                          out_specs=(P("x"), P("x"), P(), P())))(ga, gb)
    assert int(st[0]) == 0 and int(st2[0]) == 0
    close(a @ whole(x), b, dtype, "potrs_shardmap_ctx")
    close(a @ whole(y), b, dtype, "lu_solve_shardmap_ctx")
    t = tall(4 * n, 5, dtype, 5)
    gt = jax.make_array_from_callback(t.shape, rows, lambda i: t[i])
    gbt = jax.make_array_from_callback((4 * n, 2), rows, lambda i: rhs(4 * n, 2, dtype, 5)[i])
    q, r = tj.qr(gt, 4)
    assert q.sharding.is_equivalent_to(rows, 2), q.sharding
    close(whole(q) @ whole(r), t, dtype, "qr on global arrays")
    q, r, x, st, st2 = jax.jit(jax.shard_map(local_qr, mesh=mesh,
                                             in_specs=(P("x", None), P("x", None)),
                                             out_specs=(P("x", None), P(), P(), P(), P())))(
        gt, gbt)
    assert int(st[0]) == 0 and int(st2[0]) == 0
    close(whole(q) @ whole(r), t, dtype, "qr_shardmap_ctx")
    close(whole(x), np.linalg.lstsq(t, rhs(4 * n, 2, dtype, 5), rcond=None)[0], dtype,
          "least_squares_shardmap_ctx")
    w, v = tj.syevd(ga, 4)
    assert v.sharding.is_equivalent_to(rows, 2), v.sharding
    check_eig(whole(w), whole(v), a, dtype, "on global arrays")
    w, v, w2, st, st2 = jax.jit(jax.shard_map(local_eig, mesh=mesh, in_specs=P("x", None),
                                              out_specs=(P(), P("x", None), P(), P(), P())))(ga)
    assert int(st[0]) == 0 and int(st2[0]) == 0
    check_eig(whole(w), whole(v), a, dtype, "syevd_shardmap_ctx")
    check_eig(whole(w2), None, a, dtype, "syevd_shardmap_ctx, values")
    check_derivatives(mesh, ga, gb, a, b)
    check_shardmap_gradient(mesh, P("x", None), ga, a, b)
    if jax.device_count() == 4:  # the same on a 2 x 2 mesh over the processes
        mesh2 = Mesh(np.array(jax.devices()).reshape(2, 2), ("x", "y"))
        blocks = NamedSharding(mesh2, P("x", "y"))
        ga2 = jax.make_array_from_callback(a.shape, blocks, lambda i: a[i])
        gb2 = jax.make_array_from_callback(b.shape, NamedSharding(mesh2, P("x", None)),
                                           lambda i: b[i])
        x, y, st, st2 = jax.jit(jax.shard_map(
            local, mesh=mesh2, in_specs=(P("x", "y"), P("x", None)),
            out_specs=(P("x", None), P("x", None), P(), P())))(ga2, gb2)
        assert int(st[0]) == 0 and int(st2[0]) == 0
        close(a @ whole(x), b, dtype, "potrs_shardmap_ctx on a 2 x 2 mesh")
        close(a @ whole(y), b, dtype, "lu_solve_shardmap_ctx on a 2 x 2 mesh")
        check_shardmap_gradient(mesh2, P("x", "y"), ga2, a, b)


def check_shardmap_gradient(mesh, spec, ga, a, b):
    """The gradient of log det(A) + ‖A⁻¹ b‖² through potrs_shardmap_ctx inside jax.shard_map
    over the processes (A's rows or blocks gathered under differentiation), under jit, as jax's
    own on this process's whole copy."""
    def loss(a):
        x, logdet, _ = jax.shard_map(
            lambda a_: tj.potrs_shardmap_ctx(a_, b, 4, return_logdet=True), mesh=mesh,
            in_specs=spec, out_specs=(P(), P(), P()))(a)
        return jnp.sum(x ** 2) + logdet[0]

    def loss_ref(a):
        h = jnp.triu(a) + jnp.triu(a, 1).T  # the upper triangle read (lower=False)
        return jnp.sum(jnp.linalg.solve(h, b) ** 2) + jnp.linalg.slogdet(h)[1]

    close(whole(jax.jit(jax.grad(loss))(ga)), np.asarray(jax.jit(jax.grad(loss_ref))(a)),
          np.float64, f"grad through potrs_shardmap_ctx on {dict(mesh.shape)}")


def check_mismatch():
    """Processes whose calls differ fail everywhere with the same status: one triangle asked for
    on one process and the other elsewhere; tiles that differ (TESSERA_TILE set per process,
    main() below)."""
    mesh = Mesh(np.array(jax.devices()), ("x",))
    a, _ = hpd(16, np.float64, 1)
    for kw in ({"lower": jax.process_index() == 0}, {}):
        x, st = tj.potrs(a, np.ones(16), 4, mesh, P("x", None), return_status=True, **kw)
        statuses = multihost_utils.process_allgather(np.array([int(st)])).ravel().tolist()
        assert int(st) < 0 and len(set(statuses)) == 1, (kw, statuses)
        assert np.isnan(np.asarray(x.addressable_shards[0].data)).all()


def _absent(call_first):
    """The last process does not call (after one call all made, with `call_first`): the others
    fail within TESSERA_JAX_TIMEOUT with a sentence, not hang. A and b are sharded by rows, so
    that no collective of XLA's waits for the absent process."""
    limit = float(os.environ.get("TESSERA_JAX_TIMEOUT", "5"))
    mesh = Mesh(np.array(jax.devices()), ("x",))
    rows = NamedSharding(mesh, P("x", None))
    a, _ = hpd(16, np.float64, 2)
    ga = jax.make_array_from_callback(a.shape, rows, lambda i: a[i])
    gb = jax.make_array_from_callback((16, 1), rows, lambda i: np.ones((16, 1))[i])
    if call_first:
        assert int(tj.potrs(ga, gb, 4, return_status=True)[1]) == 0
    if jax.process_index() == jax.process_count() - 1:
        time.sleep(3 * limit)
        return
    t0 = time.time()
    try:
        x, st = tj.potrs(ga, gb, 4, return_status=True)
        status = int(st)
        assert np.isnan(np.asarray(x.addressable_shards[0].data)).all()
    except RuntimeError as e:  # the communicator over the processes could not be made
        assert not call_first and "timed out" in str(e).lower() or "did not" in str(e), e
        status = str(e)
    took = time.time() - t0
    assert call_first <= (isinstance(status, int) and status < 0), status
    assert took < 2 * limit + 5, took
    print(f"absent: {status} after {took:.1f} s", flush=True)


def check_absent():
    _absent(call_first=True)


def check_absent_first():
    _absent(call_first=False)


def check_local():
    """Meshes within one process in a program of several: process 0 solves on its own devices,
    the others make no call of tessera's meanwhile; process 0 waits for nobody (no communicator
    is made). The others wait at a barrier of jax's own until process 0 is done, so that in a
    case of several checks (this one first) no later call of theirs could stand in for one that
    a communicator would need."""
    if jax.process_index() == 0:
        mesh = Mesh(np.array(jax.local_devices()), ("x",))
        a, _ = hpd(12, np.float64, 4)
        b = rhs(12, 1, np.float64, 4)
        x, st = tj.potrs(a, b, 4, mesh, P("x", None), return_status=True)
        assert int(st) == 0
        close(a @ np.asarray(x), b, np.float64, "potrs on this process's devices")
    multihost_utils.sync_global_devices("check_local")


def check_small():
    """potrs, cholesky, lu_solve and syevd small for a 1D mesh over every process's devices (in jax's
    order and reversed): calls 1 and 2 of a shape run the distributed routine, 3 and 4 one
    device on each process, every process the same way; each result the same either way, and a
    matrix not positive definite the same info."""
    from tessera import _native
    devs = np.array(jax.devices())
    n = 19
    for devices in (devs, devs[::-1]):
        mesh, spec = Mesh(devices, ("x",)), P("x", None)
        for fn, dtype, spd in (("potrs", np.float64, True), ("cholesky", np.complex128, True),
                               ("lu_solve", np.float32, True), ("potrs", np.float64, False)):
            n += 2  # a shape not measured before
            what = f"{fn} n={n} {np.dtype(dtype).name} {[d.id for d in devices]}"
            a, m = hpd(n, dtype, n)
            if fn == "lu_solve":
                a = (m + n * np.eye(n)).astype(dtype)
            if not spd:
                a[n - 5, n - 5] = -1
            b = rhs(n, 3, dtype, n)
            for i in range(4):
                before = _native.native().one_device_calls()
                if fn == "cholesky":
                    x, st = tj.cholesky(a, 4, mesh, spec, lower=True, return_status=True)
                else:
                    x, st = getattr(tj, fn)(a, b, 4, mesh, spec, return_status=True)
                jax.block_until_ready((x, st))
                took = _native.native().one_device_calls() - before
                assert took == (i >= 2), f"{what}: call {i + 1} took one device: {took}"
                x = whole(x)
                if not spd:
                    assert int(st) == n - 4 and np.isnan(x).all(), f"{what}: status {int(st)}"
                elif fn == "cholesky":
                    assert int(st) == 0, f"{what}: status {int(st)}"
                    close(x @ x.conj().T, a, dtype, f"{what} call {i + 1}")
                else:
                    assert int(st) == 0, f"{what}: status {int(st)}"
                    close(a @ x, b, dtype, f"{what} call {i + 1}")
        statuses = multihost_utils.process_allgather(np.array([int(st)]))
        assert len(set(statuses.ravel().tolist())) == 1, statuses
        # syevd: its rows split evenly over the mesh (the eigenvectors come back in them)
        ne = len(devices) * (5 if devices is devs else 7)
        a, _ = hpd(ne, np.complex128, ne)
        what = f"syevd n={ne} {[d.id for d in devices]}"
        for i in range(4):
            before = _native.native().one_device_calls()
            w, v, st = tj.syevd(a, 4, mesh, spec, return_status=True)
            jax.block_until_ready((w, v, st))
            took = _native.native().one_device_calls() - before
            assert took == (i >= 2), f"{what}: call {i + 1} took one device: {took}"
            assert int(st) == 0, f"{what}: status {int(st)}"
            check_eig(whole(w), whole(v), a, np.complex128, f"{what} call {i + 1}")


def check_functions_two_dtypes():
    """check_functions on one real and one complex dtype of different precisions (every dtype
    runs in one of the launches)."""
    check_functions((np.float32, np.complex128))


def check_functions_other_dtypes():
    """check_functions on the other two dtypes (f64, with the sizes that split evenly, and c64)."""
    check_functions((np.float64, np.complex64))


def check_functions_one_dtype():
    """check_functions on c128 alone (the launches of more processes, which start slowly)."""
    check_functions((np.complex128,))


CASES = {"functions": check_functions, "functions_two_dtypes": check_functions_two_dtypes,
         "functions_other_dtypes": check_functions_other_dtypes,
         "functions_one_dtype": check_functions_one_dtype,
         "failures": check_failures, "sharded": check_sharded,
         "mismatch": check_mismatch, "absent": check_absent,
         "absent_first": check_absent_first, "local": check_local, "small": check_small}


def main():
    if CASE == "mismatch":  # a tile that differs between the processes (check_mismatch)
        pid = sys.argv[4] if len(sys.argv) > 4 else os.environ["OMPI_COMM_WORLD_RANK"]
        os.environ["TESSERA_TILE"] = "2" if pid == "1" else "4"
    start()
    try:
        for name in CASE.split("+"):
            CASES[name]()
    finally:
        if not CASE.startswith("absent"):
            jax.distributed.shutdown()
    print(f"ok {jax.process_index()}", flush=True)
    if CASE.startswith("absent"):  # the processes are out of step: none waits for another
        os._exit(0)


if __name__ == "__main__":
    main()
