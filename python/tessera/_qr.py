"""QR factorization and least squares for tessera.jax (which re-exports them): ``qr``,
``least_squares`` and their ``*_shardmap_ctx`` forms, jaxmg 1.4's ``qr`` and ``least_squares``
on the conventions of tessera.jax's module docstring.

A is M x N, sharded by rows over a 1D mesh (``P("x", None)``) or by rows and columns over a 2D
one (``P("x", "y")``). QR needs A's columns, which a row-major shard of A does not hold, so each
device hands tessera its block transposed (a local transpose in XLA, no communication): read
column-major, that buffer is the block of A itself, and the blocks are registered in place as
one tessera matrix (python/ffi/qr.c). tessera_tile_geqrf factors it (on column panels: A's own
blocks on a mesh of one row, else a copy); Q is formed as Q [I; 0] by tessera_tile_unmqr on
this device's rows of [I; 0], and R read off the upper triangle of the factored blocks' first
rows. Least squares runs tessera_tile_gels on A and B (B's rows sharded as A's), x being B's
first N rows. Padding (rows to a multiple of the mesh's rows, columns on a 2D mesh to whole
tiles per device) is zeros that tessera never reads: the matrix it factors is M x N exactly.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

from . import _layout, _local
from ._native import native
from ._common import (_col_index, _donated, _ffi, _first_column, _join, _local_layout,
                      _nan_unless, _padded, _platform, _rank, _rhs_spec, _row_index, _varying)
from ._grad import lstsq_rules, qr_rules, refusing, subset_rule

MODES = ("reduced", "complete", "r")


def _check_mode(mode, name):
    if mode not in MODES:
        raise ValueError(f"{name}: mode must be one of {', '.join(map(repr, MODES))} (as "
                         f"jnp.linalg.qr's, without 'raw'); got {mode!r}")


def _sizes(mode, m, n):
    """(Q's columns, R's rows) of `mode` for an m x n A, as jnp.linalg.qr: reduced Q m x k and R
    k x n (k = min(m, n)); complete Q m x m and R m x n; r: R k x n alone."""
    k = min(m, n)
    return {"reduced": (k, k), "complete": (m, m), "r": (0, k)}[mode]


def _check_tall(m, n, name):
    if m < n:
        raise ValueError(f"{name}: A is {m} x {n}: least squares needs M >= N (an overdetermined "
                         "or square system; the minimum norm solution of a wide A is not "
                         "offered)")


def _panel(platform, m, n):
    """tessera's QR panel width for an m x n matrix (tessera_tile_for_qr)."""
    return native().tile_qr(_platform(platform), m, n)


# ------------------------------------------------------------- on this device's block of A


def _qr_local(a, lay, m, n, nb, kq, kr):
    """QR of the m x n A inside shard_map, `a` this device's (rows x cols) block: (this
    device's rows of Q's first kq columns (rows x kq; none when kq is 0), R's first kr rows
    (kr x n, whole on every device), status (1,))."""
    rows = a.shape[0]
    row0 = _row_index(lay) * rows
    # this device's rows of [I; 0] (m x kq), transposed as A's block
    ct = (jax.lax.broadcasted_iota(jnp.int32, (kq, rows), 0) ==
          jax.lax.broadcasted_iota(jnp.int32, (kq, rows), 1) + row0).astype(a.dtype)
    r = _ffi("qr", a.T, ct, _rank(lay), m=m, n=n, lay=lay, tile=nb)
    q = _first_column(r.x.T, lay) if kq else None
    top = _gather_top(r.a.T, lay, kr, n)
    return q, jnp.triu(top), r.status


def _qr_call(lay, m, n, nb, mode):
    """Inside shard_map, a -> (this device's rows of Q or None, R, status scalar) of `mode` on
    this device's block a, NaN where the status is not 0."""
    kq, kr = _sizes(mode, m, n)

    def qr_of(a):
        q, r, st = _qr_local(a, lay, m, n, nb, kq, kr)
        ok = st[0] == 0
        return (_nan_unless(ok, q) if kq else None), _nan_unless(ok, r), st[0]

    return qr_of


def _lstsq_local(a, b, lay, m, n, nb):
    """Least squares inside shard_map: `a` this device's block of A, `b` its rows of B (rows x
    k): (x, n x k, whole on every device; status (1,))."""
    r = _ffi("least_squares", a.T, b.T, _rank(lay), m=m, n=n, lay=lay, tile=nb)
    return _gather_top(r.x.T, lay, n, b.shape[1], first_column=True), r.status


def _gather_top(x, lay, rows, cols, first_column=False):
    """The top-left rows x cols of the matrix whose blocks the devices hold (x: this device's
    block; with first_column, its rows of a matrix held by mesh column 0), whole on every device
    and typed so (check_vma): each device's block placed in zeros and summed over the mesh
    (adding zeros is exact), only the row blocks that reach into those rows taking part."""
    br, bc = x.shape
    t = max(1, -(-rows // br))  # row blocks reaching into the top rows
    i = _row_index(lay)
    j = _col_index(lay) if lay.col_axis else 0
    keep = i < t
    if first_column and lay.col_axis:
        keep, j = keep & (j == 0), 0
    width = bc if first_column else bc * lay.gcols
    z = jnp.zeros((t * br, width), x.dtype)
    start = (jnp.minimum(i, t - 1) * br, jnp.asarray(j * bc, jnp.int32))
    z = jax.lax.dynamic_update_slice(z, jnp.where(keep, x, jnp.zeros((), x.dtype)), start)
    axes = (lay.axis,) + ((lay.col_axis,) if lay.col_axis else ())
    return jax.lax.psum(z, axes)[:rows, :cols]


# ---------------------------------------------------------------------------- global forms


def _prepare(a, T_A, mesh, in_specs, matrix_specs, pad, name, local, tall):
    """The layout and plan of a global form's call: (layout, M, N, plan), the plan (padded M,
    padded N, panel width), or None for an empty A."""
    _layout.check_tile(T_A, name)
    _layout.refuse_shard_map(a, name, local)
    m, n = _layout.check_block(a, name)
    if tall:
        _check_tall(m, n, name)
    lay = _layout.resolve(a, mesh, matrix_specs if matrix_specs is not None else in_specs, name)
    _join(lay)
    if m == 0 or n == 0:
        return lay, m, n, None
    # columns: whole tiles per device on a 2D mesh (one block of all N on a 1D one)
    cols, nb = _layout.plan(n, lay.gcols, _panel(lay.platform, m, n), pad, name)
    if m % lay.grows and not pad:
        raise ValueError(f"{name}: M = {m} rows over {lay.grows} devices need padding to split "
                         "evenly; pass pad=True")
    rows = -(-m // lay.grows)
    return lay, m, n, (rows * lay.grows, cols * lay.gcols, nb)


def _spec_of(shape, lay):
    """The layout of a result: rows over the row axis and columns over the column axis where they
    split evenly over them (unequal shards are not an array layout), else whole."""
    rows = lay.axis if shape[0] % lay.grows == 0 else None
    cols = lay.col_axis if lay.col_axis and shape[1] % lay.gcols == 0 else None
    return P(rows, cols)


def _laid_out(x, lay, rows):
    """x (a result whose first `rows` rows are kept) in its layout (_spec_of)."""
    if x.shape[0] != rows:
        x = lay.constrain(x, P())[:rows]
    return lay.constrain(x, _spec_of(x.shape, lay))


@functools.lru_cache(maxsize=64)
def _qr_fn(lay, m, n, mp, np_, nb, dtype, mode, donate):
    """The jitted QR for one plan (cached: tracing and compiling happen once per shape)."""
    kq, kr = _sizes(mode, m, n)

    def local(a):
        q, r, st = _qr_local(a, lay, m, n, nb, kq, kr)
        return (q, r, st) if kq else (r, st)

    def run(a):
        a_p = _padded(a.astype(dtype), lay, mp, np_)
        out_specs = ((lay.spec(None),) if kq else ()) + (P(), P())
        out = jax.shard_map(local, mesh=lay.mesh, in_specs=lay.a_spec, out_specs=out_specs)(a_p)
        q, r, st = out if kq else (None,) + out
        status = st[0]
        ok = status == 0
        r = _nan_unless(ok, _laid_out(r, lay, kr))
        q = _nan_unless(ok, _laid_out(q, lay, m)) if kq else None
        return q, r, status

    return jax.jit(run, donate_argnums=(0,) if donate else ())


@functools.lru_cache(maxsize=64)
def _qr_diff_fn(lay, m, n, mp, np_, nb, dtype):
    """The reduced QR's call for one plan (M >= N) with jax's QR rule (_grad.qr_rules)."""
    return qr_rules(_qr_fn(lay, m, n, mp, np_, nb, dtype, "reduced", False),
                    _layout.explicit(lay.mesh))


@functools.lru_cache(maxsize=64)
def _lstsq_diff_fn(lay, m, n, mp, np_, nb, dtype, b_shape, x_spec):
    """least_squares' call for one plan with its derivative rules (_grad.lstsq_rules), on the
    reduced QR's differentiable call."""
    fn = _lstsq_fn(lay, m, n, mp, np_, nb, dtype, b_shape, x_spec, False)
    return lstsq_rules(fn, _qr_diff_fn(lay, m, n, mp, np_, nb, dtype), _layout.explicit(lay.mesh))


def _empty_qr(m, n, dtype, mode):
    kq, kr = _sizes(mode, m, n)
    return jnp.eye(m, kq, dtype=dtype), jnp.zeros((kr, n), dtype), jnp.int32(0)


def qr(a, T_A, mesh=None, in_specs=None, *, mode="reduced", matrix_specs=None,
       return_status=False, pad=True, donate=False):
    """The QR factorization A = Q R of an M x N A sharded by rows over a 1D mesh, or by rows and
    columns over a 2D one (jaxmg's ``qr``; ``jnp.linalg.qr``), by Householder reflections.

    a: (M, N) of f32, f64, c64 or c128, any shape (jaxmg takes M >= N; a wide A gives Q M x M,
    R M x N as jnp.linalg.qr). mode: "reduced" (default; Q M x K with orthonormal columns, R
    K x N upper triangular, K = min(M, N)), "complete" (Q M x M unitary, R M x N) or "r" (R
    alone). mesh / in_specs (or matrix_specs): the mesh and ``P("x", None)`` or
    ``P("x", "y")``, read from ``a.sharding`` when omitted. T_A: jaxmg's tile size, checked;
    tessera picks its own panel width. pad: let tessera pad A's rows (and on a 2D mesh its
    columns) when they do not split evenly (else such a shape raises). donate: A's buffer may
    go to the result of A's shape (reduced Q of a tall or square A, complete R).

    Q and R come back in A's dtype, each laid out as A along the dimensions that split evenly
    over the mesh (else whole). Returns (Q, R), or R alone with mode "r"; with
    ``return_status`` the status last: 0 or a negative tessera status (QR itself has no
    failure: a NaN in A gives NaN in Q and R with status 0); when it is not 0, Q and R are all
    NaN. jaxmg's status is a vector per rank, this one an int32 scalar."""
    name = "tessera.jax.qr"
    _check_mode(mode, name)
    lay, m, n, plan = _prepare(a, T_A, mesh, in_specs, matrix_specs, pad, name,
                               f"{name}_shardmap_ctx", tall=False)
    dtype = np.dtype(a.dtype)
    if plan is None:
        q, r, status = _empty_qr(m, n, dtype, mode)
    else:
        mp, np_, nb = plan
        kq, kr = _sizes(mode, m, n)
        same = [s for s in ((m, kq), (kr, n)) if s == (m, n)]  # results of A's shape
        ok = donate and (mp, np_) == (m, n) and bool(same) and \
            _spec_of((m, n), lay) == lay.a_spec
        a, donate_a = _donated(a, lay, lay.a_spec, ok)
        if not isinstance(a, jax.core.Tracer):  # concrete: nothing differentiates this call
            q, r, status = _qr_fn(lay, m, n, mp, np_, nb, dtype, mode, donate_a)(a)
        elif m >= n and mode == "r":  # R alone, Q formed only under differentiation
            q = None
            r, status = subset_rule(
                lambda a: _qr_fn(lay, m, n, mp, np_, nb, dtype, mode, False)(a)[1:],
                _qr_diff_fn(lay, m, n, mp, np_, nb, dtype), (1,))(a)
        elif m >= n and (mode != "complete" or m == n):  # jax's QR rule's cases
            q, r, status = _qr_diff_fn(lay, m, n, mp, np_, nb, dtype)(a)
        else:
            q, r, status = refusing(_qr_fn(lay, m, n, mp, np_, nb, dtype, mode, False), (
                f"{name}: the derivative of QR with M < N, or of mode 'complete' with M > N, is "
                "not defined here (as jnp.linalg.qr's)"))(a)
    out = (r,) if mode == "r" else (q, r)
    out += (status,) if return_status else ()
    return out[0] if len(out) == 1 else out


@functools.lru_cache(maxsize=64)
def _lstsq_fn(lay, m, n, mp, np_, nb, dtype, b_shape, x_spec, donate_b):
    """The jitted least squares for one plan. B goes in by rows, as A (padded as A's rows);
    x comes back whole, then in `x_spec` (None: as XLA places it)."""
    x_shape = (n,) + tuple(b_shape[1:])

    def local(a, b):
        x, st = _lstsq_local(a, b, lay, m, n, nb)
        return x, st

    def run(a, b):
        b2 = (b.reshape(m, 1) if len(b_shape) == 1 else b).astype(dtype)
        a_p, b_p = _padded(a.astype(dtype), lay, mp, np_), _padded(b2, lay, mp)
        x, st = jax.shard_map(local, mesh=lay.mesh, in_specs=(lay.a_spec, lay.spec(None)),
                              out_specs=(P(), P()))(a_p, b_p)
        status = st[0]
        x = _nan_unless(status == 0, x.reshape(x_shape))
        return (lay.constrain(x, x_spec) if x_spec is not None else x), status

    return jax.jit(run, donate_argnums=(1,) if donate_b else ())


def least_squares(a, b, T_A, mesh=None, in_specs=None, *, matrix_specs=None,
                  return_status=False, pad=True, donate=False):
    """Solves min ‖A x − b‖ for an M x N A with M >= N of full column rank, sharded by rows over
    a 1D mesh or by rows and columns over a 2D one, by QR (jaxmg's ``least_squares``; LAPACK's
    gels; ``jnp.linalg.lstsq``'s x for such an A).

    a: (M, N), f32, f64, c64 or c128; b: (M,) or (M, k), replicated or sharded by rows like A,
    castable to A's dtype. x: (N,) or (N, k) in A's dtype, whole on every device, or sharded by
    rows when b is and N splits evenly over the mesh's rows. mesh / in_specs (or matrix_specs),
    T_A, pad: as for ``qr``. donate: b's buffer may go to x (M = N, same dtype and layout); A's
    never can (no result has its shape).

    Returns x, or (x, status) with ``return_status``: 0, LAPACK's ``info > 0`` when R(info,
    info) is exactly zero (A is exactly rank deficient: a zero column, a column equal to an
    earlier one, ...), or a negative tessera status; when it is not 0, x is all NaN. A nearly
    rank deficient A is not detected (as LAPACK's gels, unlike jnp.linalg.lstsq's cut-off)."""
    name = "tessera.jax.least_squares"
    lay, m, n, plan = _prepare(a, T_A, mesh, in_specs, matrix_specs, pad, name,
                               f"{name}_shardmap_ctx", tall=True)
    dtype = np.dtype(a.dtype)
    _layout.check_rhs(b, m, dtype, name, dim="M", of=", A's rows")
    x_shape = (n,) + tuple(b.shape[1:])
    if plan is None or 0 in x_shape:
        x, status = jnp.zeros(x_shape, dtype), jnp.int32(0)
    else:
        mp, np_, nb = plan
        b_spec = _rhs_spec(b, lay)
        rows = b_spec is not None and b_spec != P()  # b sharded by rows
        x_spec = P() if rows and n % lay.grows else b_spec
        b, donate_b = _donated(b, lay, b_spec, donate and b_spec is not None and m == n == mp
                               and np.dtype(b.dtype) == dtype)
        if any(isinstance(v, jax.core.Tracer) for v in (a, b)):  # traced: maybe differentiated
            x, status = _lstsq_diff_fn(lay, m, n, mp, np_, nb, dtype, tuple(b.shape), x_spec)(
                jnp.asarray(a), jnp.asarray(b, dtype))
        else:
            fn = _lstsq_fn(lay, m, n, mp, np_, nb, dtype, tuple(b.shape), x_spec, donate_b)
            x, status = fn(a, b)
    return (x, status) if return_status else x


# ------------------------------------------------------------------ inside the user's shard_map


def _local_plan(a, T_A, axis_name, mesh, name, tall):
    """Inside shard_map: (layout, M, N, panel width) of a call on the block `a` of A (its
    (M / rows) x (N / columns) block over the mesh's row and column axes)."""
    _layout.check_tile(T_A, name)
    axis, grows, col_axis, gcols = _layout.local_layout(axis_name, name, _varying(a))
    rows, cols = _layout.check_block(a, name)
    m, n = rows * grows, cols * gcols
    if m == 0 or n == 0:
        raise ValueError(f"{name}: A ({m} x {n}) is empty")
    if tall:
        _check_tall(m, n, name)
    lay = _local_layout(axis, grows, col_axis, gcols, mesh, name)
    target = _panel(lay.platform, m, n)
    nb = min(target, n) if gcols == 1 else _layout.best_divisor(cols, target)
    return lay, m, n, nb


def qr_shardmap_ctx(a, T_A, *, mode="reduced", axis_name=None, pad=True, mesh=None):
    """qr inside the caller's jax.shard_map: `a` is this device's block of A, its (M / ndev) x N
    rows on a 1D mesh, or on a 2D one (A sharded P(rows, columns)) its (M / rows) x
    (N / columns) block. Returns (q, r, status), or (r, status) with mode "r": q is this
    device's rows of Q (M / rows x K, or x M with mode "complete"; all of Q's columns, also on a
    2D mesh), r the whole R (K x N, or M x N), the same on every device, status (int32) of shape
    (1,) on each device; when it is not 0, q and r are all NaN. `axis_name` names the row axis,
    or the (row, column) pair of a 2D mesh (default: the manual axes A varies over, else those
    of more than one device, in the mesh's order). `pad` is accepted for jaxmg's signature (no
    padding is needed here); `mesh`: as for ``potrs_shardmap_ctx``.

    jaxmg 1.4's ``qr_shardmap_ctx`` is called outside shard_map on global arrays inside the
    caller's jax.jit; there, call ``qr`` (inside your ``jax.jit``)."""
    name = "tessera.jax.qr_shardmap_ctx"
    _check_mode(mode, name)
    lay, m, n, nb = _local_plan(a, T_A, axis_name, mesh, name, tall=False)

    def call(mode):
        return _qr_call(lay, m, n, nb, mode)

    if m >= n and (mode != "complete" or m == n):  # jax's QR rule's cases (_local.py)
        rule, _ = _local.qr(call("reduced"), lay, m)
        if mode == "r":  # R alone, Q formed only under differentiation
            q, (r, st) = None, subset_rule(lambda a: call("r")(a)[1:], rule, (1,))(a)
        else:
            q, r, st = rule(a)
    else:
        q, r, st = refusing(call(mode), (
            f"{name}: the derivative of QR with M < N, or of mode 'complete' with M > N, is not "
            "defined here (as jnp.linalg.qr's)"))(a)
    st = jnp.reshape(st, (1,))
    return (r, st) if mode == "r" else (q, r, st)


def least_squares_shardmap_ctx(a, b, T_A, *, axis_name=None, pad=True, mesh=None):
    """least_squares inside the caller's jax.shard_map, as ``qr_shardmap_ctx``: `a` is this
    device's block of the M x N A (M >= N); `b` the whole replicated (M,) or (M, k) right-hand
    side, or this device's rows of it (over the row axis). Returns (x, status): x (N,) or
    (N, k), whole and the same on every device (``out_specs=P()``), in A's dtype; status (int32)
    of shape (1,) on each device (LAPACK's info as ``least_squares``'s; x all NaN when it is not
    0).

    jaxmg 1.4's ``least_squares_shardmap_ctx`` is called outside shard_map on global arrays and
    returns (a_work, b_work, x, status); there, call ``least_squares`` (inside your
    ``jax.jit``)."""
    name = "tessera.jax.least_squares_shardmap_ctx"
    lay, m, n, nb = _local_plan(a, T_A, axis_name, mesh, name, tall=True)
    dtype = np.dtype(a.dtype)
    rows = a.shape[0]
    _layout.check_rhs(b, m, dtype, name, rows=rows, dim="M", of=", A's rows")
    b2 = (b.reshape(-1, 1) if b.ndim == 1 else b).astype(dtype)

    def plain(a, b2):  # b2 whole: (x, status scalar)
        x, st = _lstsq_local(a, _local.mine(b2, lay, rows), lay, m, n, nb)
        return _nan_unless(st[0] == 0, x), st[0]

    if b.shape[0] != m:  # the whole b in, differentiable (_local.py)
        b2 = _local.whole(b2, lay, m)
    qr_whole = _local.qr(_qr_call(lay, m, n, nb, "reduced"), lay, m)[1]
    x, st = _local.least_squares(plain, qr_whole, lay, m)(a, b2)
    return x.reshape((n,) + b.shape[1:]), jnp.reshape(st, (1,))
