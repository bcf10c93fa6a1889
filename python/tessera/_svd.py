"""The polar decomposition and the singular value decomposition for tessera.jax (which re-exports
them): ``polar``, ``gesvd`` and their ``*_shardmap_ctx`` forms, jaxmg 1.4's ``polar`` and
``gesvd`` on the conventions of tessera.jax's module docstring.

A is M x N, sharded by rows over a 1D mesh (``P("x", None)``) or by rows and columns over a 2D
one (``P("x", "y")``). As QR's, each device hands tessera its block transposed (a local
transpose in XLA), which read column-major is the block of A itself; the second operand is the
device's block of an N x N matrix sharded as A (H for polar, Vᴴ for gesvd), given the same way.
The handler (python/ffi/svd.c) registers both in place as tessera matrices of square tiles and
runs tessera_tile_gepolar (QDWH: U_p over A, H beside it) or tessera_tile_gesvd (the polar
decomposition, then the eigensolver on H: U over A, Vᴴ beside it, the singular values to every
device). Both take M >= N; ``gesvd`` of a wide A runs on Aᴴ and swaps its factors. Padding
(rows to whole tiles per device, on a 2D mesh columns too) is zeros tessera never reads.
"""
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

from . import _layout
from . import _local as _local_rules
from ._common import _ffi, _join, _local_layout, _nan_unless, _padded, _platform, _rank, _varying
from ._eig import syevd
from ._grad import polar_rules, refusing, subset_rule, svd_rules
from ._native import native


def _check_flag(value, what, name):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: {what} must be a Python bool (fixed while tracing); got "
                        f"{value!r}")
    return bool(value)


def _target(platform, m, n):
    """tessera's polar tile for an m x n matrix on `platform` (tessera_tile_for_polar)."""
    return native().tile_polar(_platform(platform), m, n)


def _plan(lay, m, n, pad, name):
    """(rows of A per device, rows of the N x N matrix per device, columns per device, tile) for
    an M x N A (M >= N): one square tile divides every block the mesh splits."""
    target = _target(lay.platform, m, n)
    if lay.ndev == 1:
        return m, n, n, min(target, n)
    w, nb = _layout.plan(n, lay.span, target, pad, name)
    rh, cw = lay.span * w // lay.grows, lay.span * w // lay.gcols
    ra = m if lay.grows == 1 else -(-(-(-m // lay.grows)) // nb) * nb
    if (ra * lay.grows != m or (lay.gcols > 1 and cw * lay.gcols != n)) and not pad:
        raise ValueError(f"{name}: A ({m} x {n}) does not split into whole tiles of {nb} over the "
                         f"{lay.grows} x {lay.gcols} mesh; pass pad=True")
    return ra, rh, cw, nb


def _trimmed(x, rows, cols, lay):
    """x without its padding, laid out as A where its dimensions split evenly (else whole)."""
    if x.shape != (rows, cols):
        x = lay.constrain(x, P())[:rows, :cols]
    even = rows % lay.grows == 0 and cols % lay.gcols == 0
    return lay.constrain(x, lay.a_spec if even else P())


def _local(op, a, h, lay, m, n, nb, vectors):
    """The call on this device's blocks (inside shard_map): (A's block of U_p or U, the N x N
    matrix's block or None, the singular values or None, status (1,))."""
    r = _ffi(op, a.T, h.T, _rank(lay), n=n, lay=lay, tile=nb, m=m, vectors=vectors)
    return r.a.T, (r.x.T if vectors else None), r.w, r.status


@functools.lru_cache(maxsize=64)
def _fn(op, lay, m, n, ra, rh, cw, nb, dtype, vectors, wide):
    """The jitted polar or (tall) gesvd for one plan (cached: traced and compiled once per
    shape); `wide`: A is N x M and its conjugate transpose is decomposed."""
    svd = op == "gesvd"

    keep_u = vectors or not svd  # polar's U_p always; gesvd's U with the vectors

    def local(a, h):
        u, x, w, st = _local(op, a, h, lay, m, n, nb, vectors)
        return tuple(v for v in (u if keep_u else None, x, w, st) if v is not None)

    def run(a):
        a = a.astype(dtype)
        if wide:
            a = jnp.conj(a).T
        a_p = _padded(a, lay, ra * lay.grows, cw * lay.gcols)
        h = jnp.zeros((rh * lay.grows, cw * lay.gcols) if vectors else (lay.grows, cw * lay.gcols),
                      dtype)
        h = lay.constrain(h, lay.a_spec)
        out_specs = ((lay.a_spec,) if keep_u else ()) + ((lay.a_spec,) if vectors else ()) + \
            ((P(),) if svd else ()) + (P(),)
        out = jax.shard_map(local, mesh=lay.mesh, in_specs=(lay.a_spec, lay.a_spec),
                            out_specs=out_specs)(a_p, h)
        status = out[-1][0]
        ok = status == 0
        u = _nan_unless(ok, _trimmed(out[0], m, n, lay)) if keep_u else None
        x = _nan_unless(ok, _trimmed(out[int(keep_u)], n, n, lay)) if vectors else None
        s = _nan_unless(ok, out[-2]) if svd else None
        return u, x, s, status

    return jax.jit(run)


def _prepare(a, T_A, mesh, in_specs, matrix_specs, name):
    """(layout, M, N) of a global form's call."""
    _layout.check_tile(T_A, name)
    _layout.refuse_shard_map(a, name, f"{name}_shardmap_ctx")
    m, n = _layout.check_block(a, name)
    lay = _layout.resolve(a, mesh, matrix_specs if matrix_specs is not None else in_specs, name)
    _join(lay)
    return lay, m, n


def polar(a, T_A, mesh=None, in_specs=None, *, compute_h=True, matrix_specs=None,
          return_status=False, pad=True):
    """The polar decomposition A = U_p H of an M x N A (M >= N) sharded by rows over a 1D mesh,
    or by rows and columns over a 2D one (jaxmg's ``polar``; ``jax.scipy.linalg.polar`` with
    side="right"), by QDWH on tessera's QR, Cholesky and products.

    a: (M, N) of f32, f64, c64 or c128 with M >= N (of a wide A, decompose ``a.conj().T``:
    A = (U_p H)ᴴ = U_pᴴ... as its left polar decomposition). mesh / in_specs (or matrix_specs):
    the mesh and ``P("x", None)`` or ``P("x", "y")``, read from ``a.sharding`` when omitted.
    T_A: jaxmg's tile size, checked; tessera picks its own tile. compute_h: a Python bool;
    False returns U_p alone. pad: let tessera pad A's rows (on a 2D mesh its columns too) to
    whole tiles per device (else such a shape raises).

    Returns (U_p, H), or U_p alone with compute_h=False; with ``return_status`` the status last.
    U_p (M x N) has orthonormal columns where A has full column rank (its columns for A's null
    space are not, but A = U_p H holds); H (N x N) is Hermitian positive semidefinite; both in
    A's dtype, laid out as A along the dimensions that split evenly over the mesh (else
    whole). status (int32 scalar): 0, ``info > 0`` when column info of A is the first to hold
    a NaN or an infinity, or a negative tessera status; when it is not 0 the results are all
    NaN."""
    name = "tessera.jax.polar"
    want_h = _check_flag(compute_h, "compute_h", name)
    lay, m, n = _prepare(a, T_A, mesh, in_specs, matrix_specs, name)
    if m < n:
        raise ValueError(f"{name}: A is {m} x {n}; the polar decomposition here takes M >= N "
                         "(of a wide A, decompose its conjugate transpose)")
    dtype = np.dtype(a.dtype)
    if n == 0:
        u, h, status = jnp.zeros((m, 0), dtype), jnp.zeros((0, 0), dtype), jnp.int32(0)
    else:
        ra, rh, cw, nb = _plan(lay, m, n, pad, name)
        plan = (lay, m, n, ra, rh, cw, nb, dtype)

        def call(want):
            return lambda a: tuple(v for v in _fn("polar", *plan, want, False)(a) if v is not None)

        polar_call = call(want_h)
        if isinstance(a, jax.core.Tracer):  # traced: maybe differentiated (polar_rules; H is
            # formed for U_p alone only under differentiation)
            rule = polar_rules(call(True), lambda h: syevd(h, T_A, lay.mesh, lay.a_spec), m, n,
                               _layout.explicit(lay.mesh))
            polar_call = rule if want_h else subset_rule(call(False), rule, (0,))
        out = polar_call(a)
        u, h, status = out if want_h else (out[0], None, out[1])
    out = (u,) + ((h,) if want_h else ()) + ((status,) if return_status else ())
    return out[0] if len(out) == 1 else out


def _complement(x, T_A, lay):
    """The columns that complete x (M x K, orthonormal columns, M > K) to a unitary M x M: the
    last M - K columns of the complete Q of x's QR (tessera.jax.qr)."""
    from ._qr import qr  # noqa: PLC0415  (_qr imports nothing of this module)
    q, _ = qr(x, T_A, lay.mesh, P(lay.axis, None), mode="complete")
    return q[:, x.shape[1]:]


def gesvd(a, T_A, mesh=None, in_specs=None, *, compute_u=True, compute_vh=True,
          full_matrices=False, matrix_specs=None, return_status=False, pad=True):
    """The singular value decomposition A = U Σ Vᴴ of an M x N A sharded by rows over a 1D mesh,
    or by rows and columns over a 2D one (jaxmg's ``gesvd``; ``jnp.linalg.svd``), by the polar
    decomposition and the eigensolver (QDWH-SVD): A = U_p H, H = V Σ Vᴴ, U = U_p V. A wide A
    (M < N) is decomposed through Aᴴ.

    a: (M, N), f32, f64, c64 or c128. mesh / in_specs (or matrix_specs), T_A, pad: as for
    ``polar``. compute_u, compute_vh: Python bools; with both False only the singular values
    are computed (no vectors are formed). full_matrices: False (default) gives U M x K and Vᴴ
    K x N (K = min(M, N)); True gives U M x M and Vᴴ N x N, the extra columns (rows) an
    orthonormal completion from a QR of the economy factor.

    Returns (s, U, Vh) with the factors asked for ((s,) alone, or s when neither), with
    ``return_status`` the status last. s: the K singular values, descending, in A's real dtype,
    whole on every device. U and Vh in A's dtype, laid out as A along the dimensions that split
    evenly (else whole); each singular pair is unique up to a sign (a unit phase for complex A)
    where the singular values are distinct. status as ``polar``'s; the results are all NaN when
    it is not 0."""
    name = "tessera.jax.gesvd"
    want_u = _check_flag(compute_u, "compute_u", name)
    want_vh = _check_flag(compute_vh, "compute_vh", name)
    full = _check_flag(full_matrices, "full_matrices", name)
    lay, m, n = _prepare(a, T_A, mesh, in_specs, matrix_specs, name)
    dtype = np.dtype(a.dtype)
    vectors = want_u or want_vh
    wide = m < n
    tm, tn = (n, m) if wide else (m, n)  # the tall matrix decomposed
    k = tn
    if k == 0:
        s = jnp.zeros((0,), _layout.real_dtype(dtype))
        u, vh, status = jnp.eye(m, m if full else 0, dtype=dtype), \
            jnp.eye(n if full else 0, n, dtype=dtype), jnp.int32(0)
    else:
        ra, rh, cw, nb = _plan(lay, tm, tn, pad, name)
        plan = (lay, tm, tn, ra, rh, cw, nb, dtype)

        def economy(a):  # (s, U, Vh, status), with the vectors
            ut, xt, s, status = _fn("gesvd", *plan, True, wide)(a)
            # tall: U = ut, Vᴴ = xt; wide (Aᴴ = U' Σ V'ᴴ): U = V' = xtᴴ, Vᴴ = U'ᴴ = utᴴ
            return (s,) + ((jnp.conj(xt).T, jnp.conj(ut).T) if wide else (ut, xt)) + (status,)

        def values(a):  # (s, status)
            return tuple(_fn("gesvd", *plan, False, wide)(a)[2:])

        traced = isinstance(a, jax.core.Tracer)  # maybe differentiated
        if traced and full and m != n:
            economy = refusing(economy, (f"{name}: the derivative of full_matrices=True for a "
                                         "non-square A is not defined (as jnp.linalg.svd's)"))
        elif traced:  # svd_rules; the values alone formed without the vectors unless
            rule = svd_rules(economy, m, n, _layout.explicit(lay.mesh))
            economy, values = rule, subset_rule(values, rule, (0,))
        if vectors:
            s, u, vh, status = economy(a)
        else:
            (s, status), u, vh = values(a), None, None
        if vectors and full and m != n:
            ok = status == 0
            if wide:
                vh = jnp.concatenate([vh, jnp.conj(_complement(jnp.conj(vh).T, T_A, lay)).T], axis=0)
            else:
                u = jnp.concatenate([u, _complement(u, T_A, lay)], axis=1)
            u, vh = _nan_unless(ok, u), _nan_unless(ok, vh)
    out = (s,) + ((u,) if want_u else ()) + ((vh,) if want_vh else ())
    out += (status,) if return_status else ()
    return out[0] if len(out) == 1 else out


# ------------------------------------------------------------------ inside the user's shard_map


def _local_plan(a, T_A, axis_name, mesh, name):
    """Inside shard_map: (layout, M, N, rows of the N x N matrix per device, tile) of a call on
    the block `a` of A (its (M / rows) x (N / columns) block over the mesh's axes)."""
    _layout.check_tile(T_A, name)
    axis, grows, col_axis, gcols = _layout.local_layout(axis_name, name, _varying(a))
    rows, cols = _layout.check_block(a, name)
    m, n = rows * grows, cols * gcols
    if m == 0 or n == 0 or m < n:
        raise ValueError(f"{name}: A is {m} x {n}; inside shard_map it must be non-empty with "
                         "M >= N (of a wide A, decompose its conjugate transpose)")
    if n % grows:
        raise ValueError(f"{name}: the N x N result (N = {n}) does not split into {grows} "
                         "equal row blocks; pass the whole A to the global form")
    lay = _local_layout(axis, grows, col_axis, gcols, mesh, name)
    target = _target(lay.platform, m, n)
    w = math.gcd(math.gcd(rows, cols), n // grows)  # the tile divides every block
    nb = min(target, n) if lay.ndev == 1 else _layout.best_divisor(w, target)
    return lay, m, n, n // grows, nb


def _second(a, rh, vectors):
    """This device's block of the N x N companion (zeros; a row of it when it is not formed)."""
    return jnp.zeros((rh if vectors else 1, a.shape[1]), a.dtype)


def polar_shardmap_ctx(a, T_A, *, compute_h=True, axis_name=None, pad=True, mesh=None):
    """polar inside the caller's jax.shard_map: `a` is this device's block of the M x N A
    (M >= N), its (M / ndev) x N rows on a 1D mesh, or on a 2D one its (M / rows) x
    (N / columns) block. Returns (u, h, status), or (u, status) with compute_h=False: u this
    device's block of U_p (A's), h its block of H (N x N, sharded as A: (N / rows) x
    (N / columns)), status (int32) of shape (1,) on each device (as ``polar``'s; u and h all NaN
    when it is not 0). `axis_name`, `pad`, `mesh`: as for ``qr_shardmap_ctx``."""
    name = "tessera.jax.polar_shardmap_ctx"
    want_h = _check_flag(compute_h, "compute_h", name)
    lay, m, n, rh, nb = _local_plan(a, T_A, axis_name, mesh, name)

    def call(want_h):  # (u rows, h rows (with want_h), status scalar), NaN unless it is 0
        def polar_of(a):
            u, h, _, st = _local("polar", a, _second(a, rh, want_h), lay, m, n, nb, want_h)
            ok = st[0] == 0
            return (_nan_unless(ok, u),) + ((_nan_unless(ok, h),) if want_h else ()) + (st[0],)
        return polar_of

    # differentiable (_local.py); H formed for U_p alone only under differentiation
    def eig(h):  # H's eigendecomposition, tessera's on the devices' rows or blocks
        on = _local_rules.Rows(lay, n, rh, nb, False)
        w, v, _ = on.syevd(True)(on.mine_a(h))
        return w, on.whole_a(v)

    rule = _local_rules.polar(call(True), eig, lay, m, n)
    out = (rule if want_h else subset_rule(call(False), rule, (0,)))(a)
    return out[:-1] + (jnp.reshape(out[-1], (1,)),)


def gesvd_shardmap_ctx(a, T_A, *, compute_u=True, compute_vh=True, full_matrices=False,
                       axis_name=None, pad=True, mesh=None):
    """gesvd inside the caller's jax.shard_map, as ``polar_shardmap_ctx`` (M >= N). Returns
    (s, u, vh, status) with the factors asked for: s the N singular values, descending, whole
    and the same on every device (``out_specs=P()``); u this device's block of U (A's); vh its
    block of Vᴴ (N x N, sharded as A); status (int32) of shape (1,) on each device.
    full_matrices=True is refused for M > N here (call ``gesvd``)."""
    name = "tessera.jax.gesvd_shardmap_ctx"
    want_u = _check_flag(compute_u, "compute_u", name)
    want_vh = _check_flag(compute_vh, "compute_vh", name)
    full = _check_flag(full_matrices, "full_matrices", name)
    vectors = want_u or want_vh
    lay, m, n, rh, nb = _local_plan(a, T_A, axis_name, mesh, name)
    if full and m != n:
        raise ValueError(f"{name}: full_matrices=True for a {m} x {n} A is not offered inside "
                         "shard_map; call tessera.jax.gesvd")
    def call(vectors):  # (s, u rows, vh rows (with vectors), status scalar), NaN unless it is 0
        def svd_of(a):
            u, vh, s, st = _local("gesvd", a, _second(a, rh, vectors), lay, m, n, nb, vectors)
            ok = st[0] == 0
            return (_nan_unless(ok, s),) + ((_nan_unless(ok, u), _nan_unless(ok, vh))
                                            if vectors else ()) + (st[0],)
        return svd_of

    # differentiable (_local.py); the values alone formed without the vectors
    rule = _local_rules.svd(call(True), lay, m, n)
    out = (rule if vectors else subset_rule(call(False), rule, (0,)))(a)
    s, st = out[0], jnp.reshape(out[-1], (1,))
    u, vh = (out[1], out[2]) if vectors else (None, None)
    return (s,) + ((u,) if want_u else ()) + ((vh,) if want_vh else ()) + (st,)
