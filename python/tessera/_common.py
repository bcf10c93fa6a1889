"""The helpers tessera.jax's functions share (jax.py, _lu.py, _qr.py, _eig.py, _svd.py): the FFI
call of one operation on every device's shard, the plans of the global and shardmap forms and of
a solve, the layouts' padding and cuts, the varying-axes typing inside shard_map, the status' NaN
outputs, and the mixed-precision solves' factor precisions.
Internal to tessera.jax."""
import collections
import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
try:
    from jax.experimental.shard_alike import shard_alike
except ImportError:  # jax without it (0.11): such an x is left to XLA's sharding propagation
    shard_alike = None
from jax.sharding import PartitionSpec as P

from . import _layout
from ._native import BY_NAME, native


_sites = itertools.count(1)


def _platform(platform):
    """The binding's index of jax's platform ("cpu" or "gpu"), where it serves it."""
    nat = native()
    if platform not in nat.platforms:
        raise RuntimeError("tessera.jax: this tessera was built without CUDA, or jax has no "
                           "CUDA backend: GPU arrays cannot be served")
    return nat.platforms[platform]


def _tile_target(platform, n, ndev, op):
    return native().tile(_platform(platform), n, ndev, BY_NAME[op].lu)


_Results = collections.namedtuple("_Results", "a piv x logdet w status")


def _ffi(op, a, b, rank, *, n, lay, tile, lower=False, logdet=False, m=None, vectors=False,
         mixed=-1, piv=None, trans=0):
    """tessera's call on this device's shard (inside shard_map): the handler's results by role
    (_native.OPS: a, x, logdet, w, status; None where the operation has no such result). The
    status, log det and eigenvalues are the same on every device (the leader's), so the global
    forms take them from one device (out_specs P(), no reduction across devices). potrs' b is this
    device's rows of B; lu_solve's b is the whole Bᵀ, (k, Np), the same on every device, and so
    is the Xᵀ it returns; qr's and least_squares' a and b are this device's block of the m x n A
    and its rows of B, transposed (_qr.py); syevd's a is this device's block of A, which with
    `vectors` comes back as its block of the eigenvectors (_eig.py)."""
    spec = BY_NAME[op]
    operands, results = spec.operands(a, b, rank, piv), spec.results(a, b, n)
    attrs = spec.attributes(state=native().state, site=next(_sites), ndev=lay.ndev,
                            gcols=lay.gcols, owners=lay.owners, n=n, tile=tile, lower=lower,
                            logdet=logdet, m=m, vectors=vectors, mixed=mixed, trans=trans)
    outs = jax.ffi.ffi_call(spec.target,
                            [jax.ShapeDtypeStruct(shape, dtype) for _, shape, dtype, _ in results],
                            input_output_aliases=spec.aliases(),
                            vmap_method="broadcast_all")(*operands, **attrs)
    # Inside shard_map, jax types every result as the same on every device (XLA's FFI cannot
    # say otherwise); the per-device ones are declared varying over the operands' axes, so
    # that the check of varying axes (check_vma) holds and collectives see their true type.
    axes = frozenset().union(*(_varying(x) for x in operands))
    got = {role: _vary(x, axes) if per_device else x
           for (role, _, _, per_device), x in zip(results, outs)}
    return _Results(*(got.get(role) for role in _Results._fields))


def _varying(x):
    """The manual mesh axes x varies over inside shard_map (none when check_vma is off)."""
    t = jax.typeof(x)
    mat = getattr(t, "mat", None)  # jax >= 0.10; earlier versions name the set `vma`
    return frozenset(mat.varying if mat is not None else getattr(t, "vma", ()))


def _vary(x, axes):
    """x typed as varying over `axes` too: a cast of its type, no data moves."""
    missing = tuple(ax for ax in axes if ax not in _varying(x))
    if not missing:
        return x
    cast = getattr(jax.lax, "pcast", None)  # jax >= 0.8.2; pvary before
    return cast(x, missing, to="varying") if cast else jax.lax.pvary(x, missing)


def _rank(lay):
    """This device's place in the mesh: its row times gcols plus its column."""
    r = jax.lax.axis_index(lay.axis)
    if lay.col_axis:
        r = r * lay.gcols + jax.lax.axis_index(lay.col_axis)
    return r.astype(jnp.int32)


def _first_column(x, lay):
    """On a 2D mesh, the rows of x that the devices of mesh column 0 hold, on every device of
    their row (the others' copies of a right-hand side are not solved); x itself on a 1D one."""
    if not lay.col_axis:
        return x
    keep = jax.lax.axis_index(lay.col_axis) == 0
    return jax.lax.psum(jnp.where(keep, x, jnp.zeros((), x.dtype)), lay.col_axis)


def _real(logdet, dtype):
    """The handler's float64 log det in A's real dtype, cast before anything else touches it:
    with jax's 64-bit types off (its default), a float64 constant beside it would warn."""
    return logdet.astype(_layout.real_dtype(dtype))


def _nan_unless(ok, x):
    return jnp.where(ok, x, jnp.array(jnp.nan, x.dtype))


def _triangle_mask(rows, cols, row0, lower, col0=0):
    """True where (row0 + i, col0 + j) is in the triangle kept (`lower` or upper, diagonal
    included)."""
    i = jax.lax.broadcasted_iota(jnp.int32, (rows, cols), 0) + row0
    j = jax.lax.broadcasted_iota(jnp.int32, (rows, cols), 1) + col0
    return j <= i if lower else j >= i


def _cut(x, n, lay, cols=False):
    """x without the padding past row (and column) n, laid out as A (`cols`) or by rows when N
    splits evenly, else replicated (shards of unequal size are not an array layout)."""
    if x.shape[0] != n:
        x = lay.constrain(x, P())
        x = x[:n, :n] if cols else x[:n]
    even = n % lay.grows == 0 and (not cols or n % lay.gcols == 0)
    return lay.constrain(x, (lay.a_spec if cols else lay.spec(None)) if even else P())


def _rhs_spec(b, lay):
    """The layout x comes back in, b's: P(axis, None...) when b's rows are split over the row
    axis, P() otherwise (whole on every device, on one device, or a host array). None when b is
    a traced array of a mesh whose axes are Auto (inside the caller's jax.jit): its layout is
    XLA's choice when the caller's function compiles, and x is tied to it then (_like_rhs)."""
    s = _layout._array_sharding(b)
    if isinstance(b, jax.core.Tracer) and not (isinstance(s, jax.sharding.NamedSharding)
                                               and _layout.explicit(s.mesh)):
        return None
    spec = getattr(s, "spec", None) if isinstance(s, jax.sharding.NamedSharding) else None
    rows = bool(spec) and spec[0] in (lay.axis, (lay.axis,))
    return P(lay.axis, *([None] * (b.ndim - 1))) if rows else P()


def _like_rhs(x, b, spec, lay):
    """x (b's shape) laid out as b: as `spec`, or, where b's layout is not known while tracing
    (spec None), in the same layout as b wherever XLA places b (jax's shard_alike)."""
    if spec is not None:
        return lay.constrain(x, spec)
    return x if shard_alike is None else shard_alike(x, b)[0]


def _donated(x, lay, spec, ok):
    """(x, whether its buffer goes to the call) for a global form called with donate=True: only
    a concrete array whose buffer can become the result's (`ok`: same shape and dtype), placed
    first in the result's layout `spec` where it is elsewhere (that copy is what the call takes,
    and x's own buffer is given to it), so that the input and the result it is aliased to have
    the same shards. Traced arrays, and any array of a call on a traced A's abstract mesh, are
    left to the caller's jax.jit, which decides its own donation."""
    if not ok or isinstance(x, jax.core.Tracer) or _layout._abstract(lay.mesh):
        return x, False
    s = jax.sharding.NamedSharding(lay.mesh, spec)
    if isinstance(x, jax.Array) and x.sharding.is_equivalent_to(s, x.ndim):
        return x, True
    return jax.device_put(x, s, donate=isinstance(x, jax.Array)), True


def _prepare(op, a, T_A, mesh, in_specs, matrix_specs, pad):
    """The layout and plan of a global form's call of `op`: (layout, n, padded order, tile)."""
    name, local = f"tessera.jax.{op}", f"tessera.jax.{op}_shardmap_ctx"
    _layout.check_tile(T_A, name)
    _layout.refuse_shard_map(a, name, local)
    n = _layout.check_matrix(a, name, local=local)
    spec = matrix_specs if matrix_specs is not None else in_specs
    lay = _layout.resolve(a, mesh, spec, name)
    _join(lay)
    if n == 0:
        return lay, n, 0, 1
    w, nb = _layout.plan(n, lay.span, _tile_target(lay.platform, n, lay.ndev, op), pad, name)
    return lay, n, lay.span * w, nb


def _join(lay):
    """Where the mesh spans processes, this process's part in the communicator over them (made
    at the first such call, by every process alike)."""
    if lay.spans_processes:
        native().processes(native().platforms[lay.platform])


def _padded(x, lay, rows, cols=None):
    """x padded with zeros to `rows` (and `cols`) and laid out as A (with cols) or by rows."""
    pads = [(0, rows - x.shape[0])] + ([(0, cols - x.shape[1])] if cols else [(0, 0)])
    if any(p[1] for p in pads):
        x = jnp.pad(x, pads)
    return lay.constrain(x, lay.a_spec if cols else lay.spec(None))


def _row_index(lay):
    return jax.lax.axis_index(lay.axis).astype(jnp.int32)


def _col_index(lay):
    """This device's column of a 2D mesh."""
    return jax.lax.axis_index(lay.col_axis).astype(jnp.int32)


def _local_layout(axis, grows, col_axis, gcols, mesh, name):
    """Inside shard_map, the Layout of a call over the named axes (grows x gcols devices, their
    processes from `mesh` or the context's), this process joined to the others where it spans
    several."""
    ndev = grows * gcols
    lay = _layout.Layout(None, axis, ndev, _layout.local_platform(), col_axis, gcols,
                         _layout.local_owners(ndev, mesh, name, (axis, col_axis)))
    _join(lay)
    return lay


def _local_plan(op, a, T_A, axis_name, mesh):
    """Inside shard_map, the plan of a call of `op`'s shardmap form: (layout, n, rows, tile);
    A's block is rows x (n / gcols)."""
    name = f"tessera.jax.{op}_shardmap_ctx"
    _layout.check_tile(T_A, name)
    axis, grows, col_axis, gcols = _layout.local_layout(axis_name, name, _varying(a))
    rows, cols = _layout.check_block(a, name)
    n = cols * gcols
    if rows * grows != n:
        raise ValueError(f"{name}: A's block is {rows} x {cols}, but {grows} x {gcols} blocks "
                         f"of it (axes {axis!r}" + (f" x {col_axis!r}" if col_axis else "") +
                         f") make a {rows * grows} x {n} matrix, not a square one; pass "
                         "axis_name= to name the axes A is split over")
    lay = _local_layout(axis, grows, col_axis, gcols, mesh, name)
    ndev, platform = lay.ndev, lay.platform
    target = _tile_target(platform, n, ndev, op)
    w = math.gcd(rows, cols)  # the tile divides both sides of the block, as plan's
    nb = min(target, n) if ndev == 1 else _layout.best_divisor(w, target)
    return lay, n, rows, nb


# The factor precisions of potrs(mixed=...) and lu_solve(mixed=...), as tessera_factor_t.
MIXED_FACTORS = {"auto": 0, "s": 2, "tf32": 3, "bf16": 4, "h": 5}


def _check_mixed(name, mixed):
    if mixed is not None and mixed not in MIXED_FACTORS:
        raise ValueError(f"{name}: mixed={mixed!r} is not a factor precision "
                         f"({', '.join(MIXED_FACTORS)}, or None)")


def _solve_plan(op, a, b, T_A, mesh, in_specs, matrix_specs, pad):
    """A solve's plan (_prepare's) and dtype, b checked against them: (layout, n, padded order,
    tile, dtype)."""
    lay, n, np_, nb = _prepare(op, a, T_A, mesh, in_specs, matrix_specs, pad)
    dtype = np.dtype(a.dtype)
    _layout.check_rhs(b, n, dtype, f"tessera.jax.{op}")
    return lay, n, np_, nb, dtype


def _rhs_rows_spec(lay, n):
    """The layout of a rule's n-row right-hand sides: by rows where N splits evenly."""
    return lay.spec(None) if n % lay.grows == 0 else P()
