"""LU for tessera.jax (which re-exports it): ``lu_solve`` (jaxmg's, and jax.scipy.linalg's on
a factorization), ``lu_factor`` (jax.scipy.linalg's shape, tessera's factors), on the conventions
of tessera.jax's module docstring.

A is N x N, sharded by rows over a 1D mesh (``P("x", None)``) or by rows and columns over a 2D
one (``P("x", "y")``). Read column-major, a row-major shard is a block of Aᵀ, so tessera factors
Aᵀ in place (P Aᵀ = L U, partial pivoting; on column panels: the shards themselves on a mesh of
one column, else a copy) and solves A x = b as (Aᵀ)ᵀ x = b (python/ffi/lu.c). ``lu_factor``
returns those factors in A's layout (the array lu = (L + U - I)ᵀ) with their pivots (1-based, as
LAPACK's), so A = tril(lu) (triu(lu, 1) + I) P: tessera's form, which ``lu_solve`` takes, not
jax.scipy's (whose lu_factor factors A itself). The derivatives: of ``lu_solve(a, b)``, A's
factors made once and every solve of the rules on them (_grad.lu_solve_rules); of ``lu_solve((lu,
piv), b)``, in lu and b, through A's product from the factors; of ``lu_factor``, jax's LU rule
in tessera's form.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

from . import _layout
from ._common import (MIXED_FACTORS, _check_mixed, _cut, _donated, _ffi, _like_rhs, _nan_unless,
                      _padded, _prepare, _rank, _rhs_rows_spec, _rhs_spec, _solve_plan)
from ._grad import EXPLICIT, lu_linear_solve, lu_solve_rules

TRANS = (0, 1, 2)  # A x = b, Aᵀ x = b, Aᴴ x = b: jax.scipy.linalg.lu_solve's trans


def _whole_bt(b, b_shape, n, np_, dtype, lay):
    """b as the handlers take it: Bᵀ (k, Np) on every device, padded past n."""
    b2 = (b.reshape(n, 1) if len(b_shape) == 1 else b).astype(dtype)
    bt = lay.constrain(b2.T, P())
    return jnp.pad(bt, ((0, 0), (0, np_ - n))) if np_ != n else bt


def _x_of(xt, status, n, b_shape, b, b_spec, lay):
    """x from the handlers' Xᵀ: in b's shape and layout, NaN where the status is not 0."""
    return _like_rhs(_nan_unless(status == 0, xt[:, :n].T.reshape(b_shape)), b, b_spec, lay)


@functools.lru_cache(maxsize=64)
def _lu_solve_fn(lay, n, np_, nb, dtype, b_shape, b_spec, donate_a, donate_b, mixed=-1):
    """The jitted LU solve for one plan. b goes to the handler as Bᵀ (k, Np) on every device:
    read column-major it is B with the leading dimension of A's padded columns, what getrs
    solves in place (the transposes are XLA's, on the n x k right-hand side only)."""
    def local(a, bt):
        r = _ffi("lu_solve", a, bt, _rank(lay), n=n, lay=lay, tile=nb, mixed=mixed)
        return r.a, r.x, r.status

    def run(a, b):
        a_p = _padded(a.astype(dtype), lay, np_, np_)
        bt = _whole_bt(b, b_shape, n, np_, dtype, lay)
        af, xt, st = jax.shard_map(local, mesh=lay.mesh, in_specs=(lay.a_spec, P()),
                                   out_specs=(lay.a_spec, P(), P()))(a_p, bt)
        status = st[0]
        x = _x_of(xt, status, n, b_shape, b, b_spec, lay)
        # Donated, A's buffer is the factors' (see _potrs_fn); the caller drops them.
        return x, status, af if donate_a else None

    return jax.jit(run, donate_argnums=(0,) * donate_a + (1,) * donate_b)


@functools.lru_cache(maxsize=64)
def _lu_factor_fn(lay, n, np_, nb, dtype, donate):
    """The jitted LU factorization for one plan: (lu, piv, status), lu cut to N x N in A's
    layout, NaN where the status is not 0."""
    def local(a):
        r = _ffi("lu_factor", a, None, _rank(lay), n=n, lay=lay, tile=nb)
        return r.a, r.piv, r.status

    def run(a):
        a_p = _padded(a.astype(dtype), lay, np_, np_)
        lu, piv, st = jax.shard_map(local, mesh=lay.mesh, in_specs=lay.a_spec,
                                    out_specs=(lay.a_spec, P(), P()))(a_p)
        status = st[0]
        return _nan_unless(status == 0, _cut(lu, n, lay, cols=True)), piv, status

    return jax.jit(run, donate_argnums=(0,) if donate else ())


@functools.lru_cache(maxsize=64)
def _lu_factored_fn(lay, n, np_, nb, dtype, b_shape, b_spec, trans):
    """The jitted solve on LU factors for one plan: A x = b (trans 0) or Aᵀ x = b (1), b as
    lu_solve's (Bᵀ on every device)."""
    def local(lu, piv, bt):
        r = _ffi("lu_factored", lu, bt, _rank(lay), n=n, lay=lay, tile=nb, piv=piv, trans=trans)
        return r.x, r.status

    def run(lu, piv, b):
        lu_p = _padded(lu.astype(dtype), lay, np_, np_)
        bt = _whole_bt(b, b_shape, n, np_, dtype, lay)
        xt, st = jax.shard_map(local, mesh=lay.mesh, in_specs=(lay.a_spec, P(), P()),
                               out_specs=(P(), P()))(lu_p, lay.constrain(piv, P()), bt)
        status = st[0]
        return _x_of(xt, status, n, b_shape, b, b_spec, lay), status

    return jax.jit(run)


@functools.lru_cache(maxsize=64)
def _lu_solve_diff_fn(lay, n, np_, nb, dtype, b_shape, b_spec, mixed):
    """lu_solve's call for one plan with its derivative rules (_grad.lu_solve_rules)."""
    fn = _lu_solve_fn(lay, n, np_, nb, dtype, b_shape, b_spec, False, False, mixed)
    return lu_solve_rules(lambda a, b: fn(a, b)[:2], _lu_factor_fn(lay, n, np_, nb, dtype, False),
                          _solver(lay, n, np_, nb, dtype, b_shape, b_spec),
                          _layout.explicit(lay.mesh))


def _solver(lay, n, np_, nb, dtype, b_shape, b_spec):
    """(shape, trans) -> the solve on factors for right-hand sides of that shape."""
    def solver(shape, trans):
        spec = b_spec if shape == b_shape else _rhs_rows_spec(lay, n)
        return _lu_factored_fn(lay, n, np_, nb, dtype, shape, spec, trans)

    return solver


def _permutation(piv, n):
    """The row order P applies, from LAPACK's 1-based interchanges: (P v)[k] = v[perm[k]]."""
    def swap(i, perm):
        j = piv[i] - 1
        pi, pj = perm[i], perm[j]
        return perm.at[i].set(pj).at[j].set(pi)

    return jax.lax.fori_loop(0, n, swap, jnp.arange(n, dtype=jnp.int32))


def _factors_matvec(lu, piv, n, transposed):
    """v -> A v (or Aᵀ v) for A = tril(lu) (triu(lu, 1) + I) P from the factors, differentiable
    in lu (the pivots are integers): the product the factored solve's derivatives differentiate."""
    perm = _permutation(jnp.asarray(piv), n)
    low = jnp.tril(lu)
    up = jnp.triu(lu, 1) + jnp.eye(n, dtype=lu.dtype)

    def matvec(v):
        return low @ (up @ v[perm])

    def matvec_t(v):  # Aᵀ v = Pᵀ (upᵀ (lowᵀ v))
        return jnp.zeros_like(v).at[perm].set(up.T @ (low.T @ v), unique_indices=True)

    return matvec_t if transposed else matvec


def _lu_factor_rule(call, n, explicit):
    """a -> (lu, piv, status) by `call` (lu_factor's), with jax's LU rule in tessera's form: with
    Lo = tril(lu) and Up = triu(lu, 1) + I, A Pᵀ = Lo Up (A Pᵀ's column k is A's column perm[k]),
    X = Lo⁻¹ dA Pᵀ Up⁻¹ gives dlu = Lo tril(X) + triu(X, 1) Up; the pivots (integers) and the
    status have none. The triangular solves and products are XLA's on the mesh; the rule calls
    itself, so that its own derivatives follow. Refused with a sentence on Explicit axes."""
    @jax.custom_jvp
    def rule(a):
        return call(a)

    @rule.defjvp
    def rule_jvp(primals, tangents):
        if explicit:
            raise NotImplementedError(f"tessera.jax.lu_factor: {EXPLICIT}")
        (a,), (da,) = primals, tangents
        lu, piv, status = out = rule(a)
        low = jnp.tril(lu)
        up = jnp.triu(lu, 1) + jnp.eye(n, dtype=lu.dtype)
        y = jax.lax.linalg.triangular_solve(low, da[:, _permutation(piv, n)], left_side=True,
                                            lower=True)
        x = jax.lax.linalg.triangular_solve(up, y, left_side=False, lower=False,
                                            unit_diagonal=True)
        dlu = low @ jnp.tril(x) + jnp.triu(x, 1) @ up
        zeros = tuple(np.zeros(jnp.shape(v), jax.dtypes.float0) for v in (piv, status))
        return out, (dlu, *zeros)

    return rule


def lu_factor(a, T_A, mesh=None, in_specs=None, *, matrix_specs=None, return_status=False,
              pad=True, donate=False):
    """A's LU factorization with partial pivoting for ``lu_solve``, in
    ``jax.scipy.linalg.lu_factor``'s shape: (lu, piv). tessera factors Aᵀ (P Aᵀ = L U, the
    module's docstring): lu holds those factors in A's layout (lu = (L + U - I)ᵀ, so that
    A = tril(lu) (triu(lu, 1) + I) P), piv their pivots (int32 (N,), 1-based as LAPACK's, the same
    on every device): tessera's own form, for ``lu_solve`` (jax.scipy's lu_solve does not take
    it). a, T_A, mesh, in_specs, matrix_specs, pad, donate: as for ``lu_solve``. status: 0, or
    LAPACK's info > 0 when A is singular (U(info, info) exactly zero) or holds NaN (lu then all
    NaN). Differentiable in a (jax's LU rule in this form; the pivots are integers), forward
    and reverse, on a mesh of Auto axes. Returns (lu, piv), or ((lu, piv), status)."""
    lay, n, np_, nb = _prepare("lu_solve", a, T_A, mesh, in_specs, matrix_specs, pad)
    dtype = np.dtype(a.dtype)
    if n == 0:
        lu, piv, status = jnp.zeros((0, 0), dtype), jnp.zeros((0,), jnp.int32), jnp.int32(0)
    else:
        a, donate_a = _donated(a, lay, lay.a_spec, donate and np_ == n)
        fn = _lu_factor_fn(lay, n, np_, nb, dtype, donate_a)
        if isinstance(a, jax.core.Tracer):  # traced: maybe differentiated
            fn = _lu_factor_rule(fn, n, _layout.explicit(lay.mesh))
        lu, piv, status = fn(a)
    return ((lu, piv), status) if return_status else (lu, piv)


def _factored_solve(lu_and_piv, b, T_A, mesh, in_specs, matrix_specs, return_status, pad, trans):
    name = "tessera.jax.lu_solve"
    if not (isinstance(lu_and_piv, tuple) and len(lu_and_piv) == 2):
        raise TypeError(f"{name}: a factorization is lu_factor's (lu, piv); got a tuple of "
                        f"{len(lu_and_piv)}")
    if trans not in TRANS:
        raise ValueError(f"{name}: trans must be 0 (A x = b), 1 (Aᵀ x = b) or 2 (Aᴴ x = b), as "
                         f"jax.scipy.linalg.lu_solve's; got {trans!r}")
    lu, piv = lu_and_piv
    lay, n, np_, nb, dtype = _solve_plan("lu_solve", lu, b, T_A, mesh, in_specs, matrix_specs,
                                         pad)
    if tuple(np.shape(piv)) != (n,):
        raise ValueError(f"{name}: piv has shape {tuple(np.shape(piv))}; lu_factor's pivots of an "
                         f"order {n} matrix have shape ({n},)")
    if n == 0:
        x, status = jnp.zeros(b.shape, dtype), jnp.int32(0)
        return (x, status) if return_status else x
    conj = trans == 2 and np.iscomplexobj(np.zeros((), dtype))
    b = jnp.conj(jnp.asarray(b)) if conj else b  # Aᴴ x = b as Aᵀ conj(x) = conj(b)
    b_spec = _rhs_spec(b, lay)
    solver = _solver(lay, n, np_, nb, dtype, tuple(b.shape), b_spec)
    t = 1 if trans else 0
    traced = any(isinstance(v, jax.core.Tracer) for v in (lu, b))
    if not traced or _layout.explicit(lay.mesh):  # nothing to differentiate, or Explicit axes
        x, status = solver(tuple(b.shape), t)(lu, piv, b)
    else:
        lu = jnp.asarray(lu, dtype)
        x, status = lu_linear_solve(_factors_matvec(lu, piv, n, bool(t)), lu, piv,
                                    jnp.asarray(b, dtype),
                                    lambda shape, u: solver(shape, u if not t else 1 - u))
    x = jnp.conj(x) if conj else x
    return (x, status) if return_status else x


def lu_solve(a, b, T_A, mesh=None, in_specs=None, *, matrix_specs=None, return_status=False,
             pad=True, donate=False, mixed=None, trans=0):
    """Solves A x = b for a general square A sharded by rows over a 1D mesh, by LU with partial
    pivoting (jaxmg's ``lu_solve``; jax.scipy.linalg's ``lu_solve(lu_factor(a), b)``). With a
    factorization instead of a, ``lu_solve((lu, piv), b, T_A, ...)`` solves on lu_factor's factors
    (no factorization runs), as ``jax.scipy.linalg.lu_solve``: trans 0 solves A x = b, 1 Aᵀ x = b,
    2 Aᴴ x = b.

    a: (N, N), any nonsingular matrix of f32, f64, c64 or c128; b: (N,) or (N, k), replicated or
    sharded by rows like A, castable to A's dtype; the solution comes back in b's shape and
    layout and in A's dtype (b is cast to it, as ``jnp.linalg.solve`` does). mesh / in_specs
    (or matrix_specs): as for ``potrs``, read from ``a.sharding`` when omitted. T_A: jaxmg's
    tile size, checked, tessera picks its own. pad: let tessera pad A when N does not split
    evenly (else such an N raises). donate: A's and b's buffers may be reused by the call (those
    it takes are deleted; the module's notes say which it can take). mixed: None, or a factor
    precision ("s", "tf32", "bf16", "h", "auto"): A factored in it and x refined to A's precision
    (tessera_tile_gesv_mixed; over processes too).

    tessera factors Aᵀ, whose column panels the row shards are, in place on the devices
    (P Aᵀ = L U) and solves (Aᵀ)ᵀ x = b. Returns x, or (x, status) with ``return_status``:
    status 0, LAPACK's ``info > 0`` when A is singular (U(info, info) exactly zero) or holds
    NaN, or a negative tessera status; when it is not 0, x is all NaN. Unlike jaxmg, whose
    status is a vector per rank, status is one int32 scalar, as ``potrs``'s. Differentiable in a
    and b (and, on a factorization, in lu and b), forward and reverse, to any order, on a mesh of
    Auto axes: A's factors made once under differentiation and every solve of the rules on them
    (x's tangent A⁻¹ (db - dA x), its transpose by solves with Aᵀ on the same factors)."""
    if isinstance(a, tuple):
        if mixed is not None or donate:
            raise ValueError("tessera.jax.lu_solve: mixed= and donate= apply to a matrix, not to "
                             "lu_factor's factors")
        return _factored_solve(a, b, T_A, mesh, in_specs, matrix_specs, return_status, pad,
                               trans)
    if trans != 0:
        raise ValueError("tessera.jax.lu_solve: trans applies to lu_factor's factors; on a matrix "
                         "solve with its transpose (a.T) instead")
    name = "tessera.jax.lu_solve"
    _check_mixed(name, mixed)
    lay, n, np_, nb, dtype = _solve_plan("lu_solve", a, b, T_A, mesh, in_specs, matrix_specs,
                                         pad)
    if n == 0:
        x, status = jnp.zeros(b.shape, dtype), jnp.int32(0)
    else:
        b_spec = _rhs_spec(b, lay)
        a, donate_a = _donated(a, lay, lay.a_spec, donate and np_ == n)
        b, donate_b = _donated(b, lay, b_spec, donate and np.dtype(b.dtype) == dtype)
        code = -1 if mixed is None else MIXED_FACTORS[mixed]
        if any(isinstance(v, jax.core.Tracer) for v in (a, b)):  # traced: maybe differentiated
            x, status = _lu_solve_diff_fn(lay, n, np_, nb, dtype, tuple(b.shape), b_spec, code)(
                jnp.asarray(a), jnp.asarray(b, dtype))
        else:  # concrete arrays: nothing differentiates this call
            fn = _lu_solve_fn(lay, n, np_, nb, dtype, tuple(b.shape), b_spec, donate_a, donate_b,
                              code)
            x, status, _ = fn(a, b)
    return (x, status) if return_status else x


