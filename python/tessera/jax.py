"""tessera.jax: multi-device Cholesky solves, inverses and factors, LU solves, QR factorizations,
least squares, Hermitian eigensolves, polar decompositions and SVDs, for JAX, a drop-in for
jaxmg's `potrs`, `potri`, `lu_solve`, `qr`, `least_squares`, `syevd`, `polar`, `gesvd` and their
`*_shardmap_ctx` forms, on GPUs and on CPUs.

A is sharded by rows over a 1D mesh (``P("x", None)``), or by rows and columns over a 2D one
(``P("x", "y")``, jaxmg 1.x's process grid): Hermitian positive definite for the Cholesky
functions, any nonsingular square matrix for ``lu_solve``, any M x N matrix for ``qr`` and
one with M >= N of full column rank for ``least_squares`` (those two live in _qr.py), any
Hermitian matrix for ``syevd`` (_eig.py: tessera's eigensolver runs on one process's host copy
of A, which the call gathers from the shards, GPU memory included; across processes the
process of mesh device 0 solves, and the eigenvectors come back to every device's block), any
M x N matrix for ``polar`` (M >= N) and ``gesvd`` (_svd.py: the shards viewed in place, as
QR's). XLA calls
tessera once per device, from one thread per device; the calls of a process meet, and one
tessera call runs the whole factorization on every device's shard in place: each shard stays
on its device, no gather, no transpose (but for QR, which needs A's columns: each device hands
it its shard transposed, a local copy, _qr.py). On GPUs the shards are read once the work XLA
queued before the call on that device's stream is done, and the results are complete when the
call returns.

The mesh may hold the devices of several processes (jax.distributed: one process per GPU, or
several nodes), then of every process of the program: each process passes its own shards, and
the processes' calls run as one distributed factorization, tiles moving between them over NCCL
(GPUs) or over MPI or Gloo (CPU devices). The binding joins the processes at the first call whose
mesh spans them: over MPI where mpirun or srun launched them, else through jax.distributed's key-value store (Gloo).
A process that does not make a call the others make fails them within TESSERA_JAX_TIMEOUT
(status TESSERA_ERR_TIMEOUT, or an exception when the processes have not met yet); calls that
differ between processes fail on every process with the same status.

Conventions shared by every function:

- ``T_A`` is jaxmg's tile size; tessera checks it (an integer >= 1) but picks its own tile for
  speed, a divisor of the shard near what its devices run fastest (``TESSERA_TILE`` forces the
  target).
- Cholesky functions read only one triangle of A: the upper one (``lower=False``, as jaxmg 0.x,
  SciPy's ``cho_factor`` and ``cholesky``) or the lower one (``lower=True``). ``lu_solve``
  reads all of A (LU with partial pivoting), as do ``qr`` and ``least_squares`` (Householder
  QR). ``syevd`` reads A's lower triangle, as jaxmg's.
- ``pad=True`` lets tessera pad A when N does not split into equal shards of whole tiles (the
  padding is cut off the results); with ``pad=False`` such an N is an error (``qr``,
  ``least_squares``: M rows that do not split evenly, or on a 2D mesh N columns).
- ``status`` (int32): 0; LAPACK's ``info > 0`` (Cholesky: the leading minor of that order is
  not positive definite or holds NaN; LU: U(info, info) is exactly zero, or column info is the
  first to hold NaN, so A is singular to working precision; least squares: R(info, info) is
  exactly zero, A is rank deficient; syevd: column info of A's lower triangle is the first to
  hold a NaN or an infinity, or the tridiagonal eigensolver failed; QR has none); a negative
  tessera status otherwise
  (``status_message``). When it is not 0, every element of every returned array is NaN.
- Inputs are never modified unless ``donate=True``, which gives A's (and b's) buffer to the
  result of the same shape, dtype and layout where it can hold it (an input elsewhere is
  first placed there), and leaves an input that cannot (A padded, b of another dtype) as it
  is.
- Errors in the arguments (shapes, dtypes, mesh, sharding) raise before anything runs.
- The ``*_shardmap_ctx`` forms work inside ``jax.shard_map`` with its check of varying manual
  axes on (``check_vma=True``, jax's default) or off. The rows a device gets back are typed as
  varying over the row axis; the status, the log det, and x solved for a whole (replicated) b
  are the same on every device and typed so: ``out_specs=P()`` takes them as they are (so are
  QR's R, the least squares x and the eigenvalues, returned whole).

Environment: ``TESSERA_JAX_TIMEOUT`` (seconds a device's call waits for the others, default
60), ``TESSERA_GPU_MEM_LIMIT`` (each GPU's pool; by default what XLA's memory fraction leaves,
less 2 GiB), and the ``TESSERA_*`` variables of the C library.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

from . import _layout
from . import _local
from ._grad import cholesky_rules, linear_solve, potri_rules, potrs_rules
from ._native import BY_NAME, native
from ._common import (MIXED_FACTORS, _check_mixed, _col_index, _cut, _donated, _ffi,
                      _first_column, _like_rhs, _local_plan, _nan_unless, _padded, _prepare, _rank,
                      _real, _rhs_spec, _rhs_rows_spec, _row_index, _solve_plan, _triangle_mask)

__all__ = ["potrs", "potri", "potri_symmetrize", "cholesky", "cho_factor", "cho_solve", "lu_solve",
           "lu_factor",
           "qr", "least_squares",
           "potrs_shardmap_ctx", "potri_shardmap_ctx", "cholesky_shardmap_ctx",
           "lu_solve_shardmap_ctx", "qr_shardmap_ctx", "least_squares_shardmap_ctx", "syevd",
           "syevd_shardmap_ctx", "polar", "polar_shardmap_ctx", "gesvd", "gesvd_shardmap_ctx",
           "status_message"]


def status_message(status, op=None):
    """A sentence explaining a status returned by the functions of this module; `op` names the
    function ("lu_solve" for LU's meaning of a positive status, "least_squares" for QR's,
    "syevd" for the eigensolver's, "polar" and "gesvd" for theirs, else Cholesky's)."""
    s = int(status)
    spec = BY_NAME.get((op or "").removesuffix("_shardmap_ctx"))
    if s == 0:
        return "success"
    if s > 0 and spec is not None and spec.name == "syevd":
        return (f"column {s} of A's lower triangle is the first to hold a NaN or an infinity, or "
                "the tridiagonal eigensolver (LAPACK's stedc) failed to converge")
    if s > 0 and spec is not None and spec.name in ("polar", "gesvd"):
        return (f"column {s} of the matrix decomposed (A, or Aᴴ for a wide A's SVD) is the first "
                "to hold a NaN or an infinity, or the eigensolver of H failed to converge")
    if s > 0 and spec is not None and spec.name in ("qr", "least_squares"):
        return (f"R({s}, {s}) of the QR factorization is exactly zero: A does not have full "
                "column rank, and the least squares solution is not unique")
    if s > 0 and spec is not None and spec.lu:
        return (f"U({s}, {s}) of the LU factorization is exactly zero, or column {s} is the "
                "first to hold NaN: the matrix is singular to working precision")
    if s > 0:
        return (f"the leading minor of order {s} is not positive definite (or holds NaN): the "
                "matrix has no Cholesky factor")
    if s > -100:
        return (f"argument {-s} of tessera's routine was invalid (a mismatch between the devices' "
                "shards; the library printed why)")
    return native().strerror(s)


# ---------------------------------------------------------------------------- global forms


@functools.lru_cache(maxsize=64)
def _potrs_fn(lay, n, np_, nb, dtype, b_shape, b_spec, lower, logdet, donate_a, donate_b,
              mixed=-1):
    """The jitted solve for one plan (cached: tracing and compiling happen once per shape)."""
    def local(a, b):
        r = _ffi("potrs", a, b, _rank(lay), n=n, lay=lay, tile=nb, lower=lower, logdet=logdet,
                 mixed=mixed)
        return r.a, _first_column(r.x, lay), r.logdet, r.status

    def run(a, b):
        b2 = (b.reshape(n, 1) if len(b_shape) == 1 else b).astype(dtype)
        a_p, b_p = _padded(a.astype(dtype), lay, np_, np_), _padded(b2, lay, np_)
        smap = jax.shard_map(local, mesh=lay.mesh, in_specs=(lay.a_spec, lay.spec(None)),
                             out_specs=(lay.a_spec, lay.spec(None), P(), P()))
        af, x, ld, st = smap(a_p, b_p)
        status = st[0]
        ok = status == 0
        x = _like_rhs(_nan_unless(ok, _cut(x, n, lay).reshape(b_shape)), b, b_spec, lay)
        logdet = _nan_unless(ok, _real(ld[0], dtype))
        # Donated, A's buffer is the factor's (an output of the same shape and layout lets XLA
        # alias it instead of copying A for the call); the caller drops it.
        return x, logdet, status, af if donate_a else None

    return jax.jit(run, donate_argnums=(0,) * donate_a + (1,) * donate_b)




@functools.lru_cache(maxsize=64)
def _potrs_diff_fn(lay, n, np_, nb, dtype, b_shape, b_spec, lower, logdet, donate_a, donate_b,
                   mixed):
    """potrs' call for one plan with its derivative rules (_grad.potrs_rules), made once per
    plan."""
    fn = _potrs_fn(lay, n, np_, nb, dtype, b_shape, b_spec, lower, logdet, donate_a, donate_b,
                   mixed)
    factor = _factor_fn("cholesky", lay, n, np_, nb, dtype, lower, False)
    inverse = _factor_fn("cho_inverse", lay, n, np_, nb, dtype, lower, False)

    def solver(shape):  # cho_solve's call for right-hand sides of that shape
        spec = b_spec if shape == b_shape else _rhs_rows_spec(lay, n)
        return _cho_solve_fn(lay, n, np_, nb, dtype, shape, spec, lower)

    return potrs_rules(lambda a, b: fn(a, b)[:3], factor, solver, lambda c: inverse(c)[0], n,
                       lower, _layout.explicit(lay.mesh))


@functools.lru_cache(maxsize=64)
def _potri_diff_fn(lay, n, np_, nb, dtype, lower):
    """potri's call for one plan with its derivative rule (_grad.potri_rules)."""
    return potri_rules(_factor_fn("potri", lay, n, np_, nb, dtype, lower, False), n, lower,
                       _layout.explicit(lay.mesh))


@functools.lru_cache(maxsize=64)
def _cholesky_diff_fn(lay, n, np_, nb, dtype, lower):
    """cholesky's call for one plan with its derivative rule (_grad.cholesky_rules), made once
    per plan."""
    def half(op):  # cho_first's or cho_second's call for right-hand sides of a shape
        return lambda shape: _cho_solve_fn(lay, n, np_, nb, dtype, shape, _rhs_rows_spec(lay, n),
                                           lower, op)

    return cholesky_rules(_factor_fn("cholesky", lay, n, np_, nb, dtype, lower, False),
                          half("cho_first"), half("cho_second"), n, lower,
                          _layout.explicit(lay.mesh))


def potrs(a, b, T_A, mesh=None, in_specs=None, *, matrix_specs=None, return_status=False,
          return_logdet=False, pad=True, donate=False, lower=False, mixed=None):
    """Solves A x = b for Hermitian positive definite A sharded by rows over a 1D mesh.

    a: (N, N); b: (N,) or (N, k), replicated or sharded by rows like A, castable to A's dtype; x
    comes back in b's shape and layout and in A's dtype (as ``jnp.linalg.solve``), the log det
    in A's real dtype. mesh / in_specs (or matrix_specs): the mesh and ``P("x", None)``, a
    1-tuple of it, or jaxmg 0.x's pair ``(P("x", None), P(None, None))``; read from
    ``a.sharding`` when omitted. mixed: None, or a factor precision ("s", "tf32", "bf16", "h",
    "auto"): A factored in it and x refined to A's precision (tessera_tile_posv_mixed; over
    processes too; no log det). Differentiable in a and b, forward and reverse, to any order, on
    a mesh of Auto axes: A's Cholesky factor made once under differentiation and every solve of
    the rules on it (A is the Hermitian matrix a's read triangle holds: the other triangle gets no
    derivative). Returns x, (x, status), (x, logdet) or (x, logdet, status)."""
    name = "tessera.jax.potrs"
    _check_mixed(name, mixed)
    if mixed is not None and return_logdet:
        raise ValueError(f"{name}: return_logdet needs A's own Cholesky factor, which a solve "
                         "with mixed= does not form")
    lay, n, np_, nb, dtype = _solve_plan("potrs", a, b, T_A, mesh, in_specs, matrix_specs, pad)
    if n == 0:
        x, logdet, status = jnp.zeros(b.shape, dtype), jnp.zeros((), _layout.real_dtype(dtype)), \
            jnp.int32(0)
    else:
        b_spec = _rhs_spec(b, lay)
        a, donate_a = _donated(a, lay, lay.a_spec, donate and np_ == n)
        b, donate_b = _donated(b, lay, b_spec, donate and np.dtype(b.dtype) == dtype)
        plan = (lay, n, np_, nb, dtype, tuple(b.shape), b_spec, bool(lower), bool(return_logdet),
                donate_a, donate_b, -1 if mixed is None else MIXED_FACTORS[mixed])
        if any(isinstance(v, jax.core.Tracer) for v in (a, b)):  # traced: maybe differentiated
            x, logdet, status = _potrs_diff_fn(*plan)(jnp.asarray(a), jnp.asarray(b, dtype))
        else:  # concrete arrays: nothing differentiates this call
            x, logdet, status, _ = _potrs_fn(*plan)(a, b)
    out = (x,) + ((logdet,) if return_logdet else ()) + ((status,) if return_status else ())
    return out[0] if len(out) == 1 else out


@functools.lru_cache(maxsize=64)
def _factor_fn(op, lay, n, np_, nb, dtype, lower, donate):
    """The jitted potri, cholesky or cho_inverse (A⁻¹ from A's Cholesky factor) for one plan."""
    def local(a):
        r = _ffi(op, a, None, _rank(lay), n=n, lay=lay, tile=nb, lower=lower)
        return r.a, r.status

    def run(a):
        a_p = _padded(a.astype(dtype), lay, np_, np_)
        x, st = jax.shard_map(local, mesh=lay.mesh, in_specs=lay.a_spec,
                              out_specs=(lay.a_spec, P()))(a_p)
        x = _cut(x, n, lay, cols=True)
        x = potri_symmetrize(x, lower) if op in ("potri", "cho_inverse") else \
            jnp.where(_triangle_mask(n, n, 0, lower), x, jnp.zeros((), dtype))
        status = st[0]
        return _nan_unless(status == 0, x), status

    return jax.jit(run, donate_argnums=(0,) if donate else ())


def _factor(op, a, T_A, mesh, in_specs, matrix_specs, return_status, pad, donate, lower):
    lay, n, np_, nb = _prepare(op, a, T_A, mesh, in_specs, matrix_specs, pad)
    dtype = np.dtype(a.dtype)
    if n == 0:
        x, status = jnp.zeros((0, 0), dtype), jnp.int32(0)
    elif isinstance(a, jax.core.Tracer):  # traced: maybe differentiated
        diff = _cholesky_diff_fn if op == "cholesky" else _potri_diff_fn
        x, status = diff(lay, n, np_, nb, dtype, bool(lower))(jnp.asarray(a))
    else:
        a, donate_a = _donated(a, lay, lay.a_spec, donate and np_ == n)
        x, status = _factor_fn(op, lay, n, np_, nb, dtype, bool(lower), donate_a)(a)
    return (x, status) if return_status else x


def potri(a, T_A, mesh=None, in_specs=None, *, matrix_specs=None, return_status=False, pad=True,
          donate=False, lower=False):
    """The inverse of Hermitian positive definite A (both triangles filled), sharded by rows
    like A. Differentiable in a, forward and reverse, to any order, on a mesh of Auto axes (the
    tangent −A⁻¹ dA A⁻¹; A is the Hermitian matrix a's read triangle holds). Returns A⁻¹ or
    (A⁻¹, status)."""
    return _factor("potri", a, T_A, mesh, in_specs, matrix_specs, return_status, pad, donate,
                   lower)


def cholesky(a, T_A, mesh=None, in_specs=None, *, matrix_specs=None, return_status=False,
             pad=True, donate=False, lower=False):
    """The Cholesky factor of Hermitian positive definite A, sharded by rows like A: U with
    A = Uᴴ U (lower=False), or L with A = L Lᴴ (lower=True); the other triangle is zero.
    Differentiable in a, forward and reverse, to any order, on a mesh of Auto axes (Murray's
    rule, its two triangular solves on the factor's tiles; A is the Hermitian matrix a's read
    triangle holds: the other triangle gets no derivative). Returns the factor or (factor,
    status)."""
    return _factor("cholesky", a, T_A, mesh, in_specs, matrix_specs, return_status, pad, donate,
                   lower)


def cho_factor(a, T_A, mesh=None, in_specs=None, *, matrix_specs=None, return_status=False,
               pad=True, donate=False, lower=False):
    """A's Cholesky factor for cho_solve, in ``jax.scipy.linalg.cho_factor``'s shape: (c, lower),
    c the factor as ``cholesky`` returns it (sharded by rows like A, the other triangle zero).
    Returns (c, lower), or ((c, lower), status)."""
    out = cholesky(a, T_A, mesh, in_specs, matrix_specs=matrix_specs, return_status=return_status,
                   pad=pad, donate=donate, lower=lower)
    return ((out[0], bool(lower)), out[1]) if return_status else (out, bool(lower))


@functools.lru_cache(maxsize=64)
def _cho_solve_fn(lay, n, np_, nb, dtype, b_shape, b_spec, lower, op="cho_solve"):
    """The jitted solve from a factor for one plan: A⁻¹ b (`op` cho_solve), or one of its two
    triangular solves, F⁻ᴴ b (cho_first) or F⁻¹ b (cho_second), A = Fᴴ F."""
    def local(c, b):
        # as LAPACK's trtrs: the first diagonal entry of the factor exactly zero (its row, or n),
        # from each device's block (rows x cols at block row and column of the mesh)
        rows, cols = c.shape
        c0 = _col_index(lay) * cols if lay.col_axis else 0
        at = _row_index(lay) * rows + jnp.arange(rows, dtype=jnp.int32)  # its rows, globally
        inside = (at >= c0) & (at < c0 + cols) & (at < n)  # whose diagonal entry it holds
        d = jnp.take_along_axis(c, jnp.clip(at - c0, 0, cols - 1)[:, None], axis=1)[:, 0]
        axes = (lay.axis, lay.col_axis) if lay.col_axis else lay.axis
        zero = jax.lax.pmin(jnp.min(jnp.where(inside & (d == 0), at, n)), axes)
        r = _ffi(op, c, b, _rank(lay), n=n, lay=lay, tile=nb, lower=lower)
        return _first_column(r.x, lay), r.status, zero

    def run(c, b):
        b2 = (b.reshape(n, 1) if len(b_shape) == 1 else b).astype(dtype)
        c_p, b_p = _padded(c.astype(dtype), lay, np_, np_), _padded(b2, lay, np_)
        x, st, zero = jax.shard_map(local, mesh=lay.mesh, in_specs=(lay.a_spec, lay.spec(None)),
                                    out_specs=(lay.spec(None), P(), P()))(c_p, b_p)
        status = jnp.where(zero < n, zero + 1, st[0]).astype(jnp.int32)
        x = _like_rhs(_nan_unless(status == 0, _cut(x, n, lay).reshape(b_shape)), b, b_spec, lay)
        return x, status

    return jax.jit(run)


def _factor_matvec(c, n, lower):
    """v -> A v for A = c cᴴ (lower) or cᴴ c (upper) from the factor's `lower` triangle alone (the
    other is never read, so it gets no derivative): the product the derivatives differentiate."""
    t = jnp.where(_triangle_mask(n, n, 0, lower), c, jnp.zeros((), c.dtype))
    return (lambda v: t @ (t.conj().T @ v)) if lower else (lambda v: t.conj().T @ (t @ v))


def cho_solve(c_and_lower, b, T_A, mesh=None, in_specs=None, *, matrix_specs=None,
              return_status=False, pad=True):
    """Solves A x = b from A's Cholesky factor, as ``jax.scipy.linalg.cho_solve``: c_and_lower is
    cho_factor's (c, lower), c sharded by rows over a 1D mesh as potrs' A (only its `lower`
    triangle is read); b: (N,) or (N, k), replicated or sharded by rows like c. No factorization
    runs: the two triangular solves on c's tiles. x comes back in b's shape and layout, in c's
    dtype. status: 0, or as LAPACK's trtrs i + 1 for the first diagonal entry c[i, i] that is
    exactly zero (x then all NaN). Differentiable in c and b, forward and reverse, to any order
    (jax.scipy's convention: c's other triangle gets no derivative), on a mesh of Auto axes.
    Returns x or (x, status)."""
    c, lower = c_and_lower
    lay, n, np_, nb, dtype = _solve_plan("cho_solve", c, b, T_A, mesh, in_specs, matrix_specs,
                                         pad)
    if n == 0:
        x, status = jnp.zeros(b.shape, dtype), jnp.int32(0)
    else:
        fn = _cho_solve_fn(lay, n, np_, nb, dtype, tuple(b.shape), _rhs_spec(b, lay), bool(lower))
        traced = any(isinstance(v, jax.core.Tracer) for v in (c, b))
        if not traced or _layout.explicit(lay.mesh):  # nothing to differentiate, or Explicit
            x, status = fn(c, b)  # axes (the product's layouts: derivatives on Auto axes only)
        else:
            x, status = linear_solve(_factor_matvec(jnp.asarray(c, dtype), n, bool(lower)),
                                      jnp.asarray(b, dtype), lambda r: fn(c, r))
    return (x, status) if return_status else x


def potri_symmetrize(a, lower=False):
    """The Hermitian matrix whose upper (lower=False) or lower triangle `a` holds, the other
    triangle ignored: what ``potri_shardmap_ctx`` leaves, made whole (jaxmg's
    ``potri_symmetrize``; the diagonal is kept as it is)."""
    n = a.shape[0]
    return jnp.where(_triangle_mask(n, n, 0, lower), a, _laid_out_like(a.T.conj(), a))


def _laid_out_like(x, ref):
    """x in ref's layout where the mesh's axes are Explicit (an operation mixing a row and a
    column sharding is an error there); else x as it is."""
    s = _layout._array_sharding(ref)
    return jax.reshard(x, s) if _layout.explicit(getattr(s, "mesh", None)) else x


# ------------------------------------------------------------------ inside the user's shard_map


def potrs_shardmap_ctx(a, b, T_A, *, axis_name=None, return_logdet=False, pad=True,
                       lower=False, mesh=None):
    """potrs inside the caller's jax.shard_map: `a` is this device's block of A, its (N / ndev)
    x N row shard on a 1D mesh, or on a 2D one (A sharded P(rows, columns)) its (N / rows) x
    (N / columns) block; `b` the whole replicated (N,) or (N, k) right-hand side, or this
    device's rows of it (over the row axis).
    Returns (x, status) or (x, logdet, status): x in b's form (whole or rows) and shape, in A's
    dtype; status (int32) and logdet (A's real dtype) have shape (1,) on each device.
    `axis_name` names the row axis, or the (row, column) pair of a 2D mesh (default: the manual
    axes A varies over, else those of more than one device, in the mesh's order). No padding is
    ever needed here (`pad` is accepted for jaxmg's signature). `mesh`, the
    shard_map's mesh, tells which process holds each device where the mesh spans processes and
    is not laid out over jax's devices in their order (as jax.make_mesh lays one out).
    Differentiable in a and b, as potrs (under differentiation A's rows or blocks are gathered
    onto every device, _local.py). cholesky_shardmap_ctx and potri_shardmap_ctx likewise."""
    name = "tessera.jax.potrs_shardmap_ctx"
    lay, n, rows, nb = _local_plan("potrs", a, T_A, axis_name, mesh)
    dtype = np.dtype(a.dtype)
    _layout.check_rhs(b, n, dtype, name, rows=rows)
    full = b.shape[0] == n
    b2 = (b.reshape(-1, 1) if b.ndim == 1 else b).astype(dtype)
    # the whole b in, the whole x out: differentiable (_local.py)
    bw = b2 if full else _local.whole(b2, lay, n)
    x, logdet, st = _local.Rows(lay, n, rows, nb, lower).potrs(return_logdet)(a, bw)
    x = x if full else _local.mine(x, lay, rows)
    x, logdet, st = x.reshape(b.shape), jnp.reshape(logdet, (1,)), jnp.reshape(st, (1,))
    return (x, logdet, st) if return_logdet else (x, st)


def _local_factor(op, a, T_A, axis_name, lower, mesh):
    lay, n, rows, nb = _local_plan(op, a, T_A, axis_name, mesh)
    x, st = _local.Rows(lay, n, rows, nb, lower).factor_op(op)(a)  # differentiable (_local.py)
    return x, jnp.reshape(st, (1,))


def potri_shardmap_ctx(a, T_A, *, axis_name=None, pad=True, lower=False, mesh=None):
    """potri inside the caller's jax.shard_map: returns (this device's rows of the upper
    (lower=False) or lower triangle of A⁻¹, the other triangle zero; status (1,)). Make it
    whole with potri_symmetrize on the gathered result, as with jaxmg. `mesh`: as for
    ``potrs_shardmap_ctx``."""
    return _local_factor("potri", a, T_A, axis_name, lower, mesh)


def cholesky_shardmap_ctx(a, T_A, *, axis_name=None, pad=True, lower=False, mesh=None):
    """cholesky inside the caller's jax.shard_map: returns (this device's rows of the factor,
    status (1,)). `mesh`: as for ``potrs_shardmap_ctx``."""
    return _local_factor("cholesky", a, T_A, axis_name, lower, mesh)


def lu_solve_shardmap_ctx(a, b, T_A, *, axis_name=None, pad=True, mesh=None):
    """lu_solve inside the caller's jax.shard_map, as ``potrs_shardmap_ctx``: `a` is this
    device's (N / ndev) x N row shard; `b` the whole replicated (N,) or (N, k) right-hand side,
    or this device's rows of it. Returns (x, status): x in b's form (whole or rows) and shape,
    in A's dtype; status (int32) of shape (1,) on each device. `axis_name` names the row axis
    (default: the only manual axis of more than one device); `pad` is accepted for jaxmg's
    signature (no padding is needed here); `mesh`: as for ``potrs_shardmap_ctx``.
    Differentiable in a and b, as ``potrs_shardmap_ctx``.

    jaxmg 1.x's ``lu_solve_shardmap_ctx`` is another thing: called outside shard_map on global
    arrays, it returns (a_work, x, status); there, call ``lu_solve`` (inside your ``jax.jit``
    with ``donate=True`` where A's buffer may go)."""
    name = "tessera.jax.lu_solve_shardmap_ctx"
    lay, n, rows, nb = _local_plan("lu_solve", a, T_A, axis_name, mesh)
    dtype = np.dtype(a.dtype)
    _layout.check_rhs(b, n, dtype, name, rows=rows)
    part = b.shape[0] != n
    b2 = (b.reshape(-1, 1) if b.ndim == 1 else b).astype(dtype)
    if part:
        b2 = _local.whole(b2, lay, n)
    x, st = _local.Rows(lay, n, rows, nb, False).lu_solve()(a, b2)
    if part:
        x = _local.mine(x, lay, rows)
    return x.reshape(b.shape), jnp.reshape(st, (1,))


# LU's solve and factorization live in _lu.py, QR and least squares in _qr.py, the eigensolver in
# _eig.py, the polar decomposition and the SVD in _svd.py; they build on _common.py's helpers, as
# the functions above do.
from ._lu import lu_factor, lu_solve  # noqa: E402
from ._qr import least_squares, least_squares_shardmap_ctx, qr, qr_shardmap_ctx  # noqa: E402
from ._eig import syevd, syevd_shardmap_ctx  # noqa: E402
from ._svd import gesvd, gesvd_shardmap_ctx, polar, polar_shardmap_ctx  # noqa: E402
