"""The Hermitian eigensolver for tessera.jax (which re-exports it): ``syevd`` and
``syevd_shardmap_ctx``, jaxmg's ``syevd`` on the conventions of tessera.jax's module docstring.

A is N x N Hermitian (real symmetric), sharded by rows over a 1D mesh (``P("x", None)``) or by
rows and columns over a 2D one (``P("x", "y")``); only its lower triangle is read, as jaxmg's
cuSOLVERMp call reads it (the strictly upper triangle may hold anything). tessera's eigensolver
(tessera_syevd / tessera_heevd: reduction to a band by tile tasks, bulge chasing, LAPACK's stedc)
runs LAPACK-style on host memory of one process, so the handler (python/ffi/eig.c) gathers the
shards into one host copy of A (from GPU memory too), solves it on the call's devices, and
writes each device's block of the eigenvectors back in place of its shard of A, the eigenvalues
to every device. Across processes the process of mesh device 0 solves and broadcasts the
result. Padding (rows and columns to a multiple of the mesh's sides) is zeros that tessera
never reads: the matrix it solves is N x N exactly.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

from . import _layout, _local
from ._common import _cut, _donated, _ffi, _local_plan, _nan_unless, _padded, _prepare, _rank
from ._grad import syevd_rules


def _check_job(return_eigenvectors, name):
    if not isinstance(return_eigenvectors, (bool, np.bool_)):
        raise TypeError(f"{name}: return_eigenvectors must be a Python bool (fixed while "
                        f"tracing); got {return_eigenvectors!r}")
    return bool(return_eigenvectors)


@functools.lru_cache(maxsize=64)
def _syevd_fn(lay, n, np_, nb, dtype, vectors, donate):
    """The jitted eigensolver for one plan (cached: tracing and compiling happen once per
    shape): (eigenvalues, eigenvectors or None, status)."""
    def local(a):
        r = _ffi("syevd", a, None, _rank(lay), n=n, lay=lay, tile=nb, vectors=vectors)
        return (r.w, r.a, r.status) if vectors else (r.w, r.status)

    def run(a):
        a_p = _padded(a.astype(dtype), lay, np_, np_)
        out_specs = (P(), lay.a_spec, P()) if vectors else (P(), P())
        out = jax.shard_map(local, mesh=lay.mesh, in_specs=lay.a_spec, out_specs=out_specs)(a_p)
        w, v, st = out if vectors else (out[0], None, out[1])
        status = st[0]
        ok = status == 0
        v = _nan_unless(ok, _cut(v, n, lay, cols=True)) if vectors else None
        return _nan_unless(ok, w), v, status

    return jax.jit(run, donate_argnums=(0,) if donate else ())


@functools.lru_cache(maxsize=64)
def _syevd_diff_fn(lay, n, np_, nb, dtype, vectors):
    """syevd's call for one plan with its derivative rule (_grad.syevd_rules), made once per
    plan: (w, V or None, status)."""
    return syevd_rules(_syevd_fn(lay, n, np_, nb, dtype, False, False),
                       _syevd_fn(lay, n, np_, nb, dtype, True, False), n, vectors,
                       _layout.explicit(lay.mesh))


def syevd(a, T_A, mesh=None, in_specs=None, *, return_eigenvectors=True, return_status=False,
          matrix_specs=None, pad=True, donate=False):
    """The eigenvalues, and by default the eigenvectors, of a Hermitian (real symmetric) A sharded
    by rows over a 1D mesh, or by rows and columns over a 2D one (jaxmg's ``syevd``;
    ``jnp.linalg.eigh``).

    a: (N, N) of f32, f64, c64 or c128; only its lower triangle is read (jaxmg's, and
    ``jnp.linalg.eigh``'s default). mesh / in_specs (or matrix_specs): the mesh and
    ``P("x", None)`` or ``P("x", "y")``, read from ``a.sharding`` when omitted. T_A: jaxmg's tile
    size, checked; tessera tiles its copy of A itself. return_eigenvectors: a Python bool; False
    computes the eigenvalues alone (no eigenvectors are formed). pad: let tessera pad A when N
    does not split evenly over the mesh (else such an N raises). donate: A's buffer may go to the
    eigenvectors (same shape, dtype and layout; not when A is padded or with
    return_eigenvectors=False).

    Returns (w, V), or w alone with return_eigenvectors=False; with ``return_status`` the status
    last. w: the N eigenvalues in ascending order, in A's real dtype (float32 for f32 and c64),
    whole on every device. V: the orthonormal eigenvectors as columns (``A @ V[:, i] = w[i] *
    V[:, i]``), in A's dtype, laid out as A where N splits evenly over the mesh (else whole);
    each column is unique up to a sign (a unit phase for complex A), as LAPACK's. status (int32
    scalar): 0; LAPACK's ``info > 0`` when column info of A's lower triangle is the first to hold
    a NaN or an infinity, or when the tridiagonal eigensolver failed; or a negative tessera
    status. When it is not 0, w and V are all NaN. jaxmg's status is a vector per rank, this one
    an int32 scalar; jaxmg donates A by default, tessera only with ``donate=True``.
    Differentiable, forward and reverse, on a mesh of Auto axes (jax's eigh rule; the lower
    triangle's Hermitian matrix, so the strictly upper triangle gets no derivative; repeated
    eigenvalues give the eigenvectors' derivatives infinities, as jax's)."""
    name = "tessera.jax.syevd"
    vectors = _check_job(return_eigenvectors, name)
    lay, n, np_, nb = _prepare("syevd", a, T_A, mesh, in_specs, matrix_specs, pad)
    dtype = np.dtype(a.dtype)
    if n == 0:
        w, v, status = (jnp.zeros((0,), _layout.real_dtype(dtype)), jnp.zeros((0, 0), dtype),
                        jnp.int32(0))
    elif isinstance(a, jax.core.Tracer):  # traced: maybe differentiated
        w, v, status = _syevd_diff_fn(lay, n, np_, nb, dtype, vectors)(jnp.asarray(a))
    else:
        a, donate_a = _donated(a, lay, lay.a_spec, donate and vectors and np_ == n)
        w, v, status = _syevd_fn(lay, n, np_, nb, dtype, vectors, donate_a)(a)
    out = (w,) + ((v,) if vectors else ()) + ((status,) if return_status else ())
    return out[0] if len(out) == 1 else out


def syevd_shardmap_ctx(a, T_A, *, return_eigenvectors=True, axis_name=None, pad=True,
                       mesh=None):
    """syevd inside the caller's jax.shard_map: `a` is this device's block of A, its (N / ndev)
    x N rows on a 1D mesh, or on a 2D one (A sharded P(rows, columns)) its (N / rows) x
    (N / columns) block; only A's lower triangle is read. Returns (w, v, status), or (w, status)
    with return_eigenvectors=False: w the N eigenvalues, ascending, in A's real dtype, whole and
    the same on every device (``out_specs=P()``); v this device's block of the eigenvectors (the
    rows and columns of V that its block of A held), in A's dtype; status (int32) of shape (1,)
    on each device (as ``syevd``'s; w and v all NaN when it is not 0). `axis_name` names the
    row axis, or the (row, column) pair of a 2D mesh (default: the manual axes A varies over,
    else those of more than one device, in the mesh's order). `pad` is accepted for jaxmg's
    signature (no padding is needed here); `mesh`: as for ``potrs_shardmap_ctx``.

    Differentiable, as ``syevd`` (under differentiation A's rows or blocks are gathered onto
    every device, _local.py).

    jaxmg 1.4's ``syevd_shardmap_ctx`` is called outside shard_map on global arrays and returns
    (a_work, eigenvalues, eigenvectors, status); there, call ``syevd`` (inside your
    ``jax.jit``)."""
    name = "tessera.jax.syevd_shardmap_ctx"
    vectors = _check_job(return_eigenvectors, name)
    lay, n, rows, nb = _local_plan("syevd", a, T_A, axis_name, mesh)
    w, v, status = _local.Rows(lay, n, rows, nb, False).syevd(vectors)(a)  # differentiable
    status = jnp.reshape(status, (1,))
    return (w, v, status) if vectors else (w, status)
