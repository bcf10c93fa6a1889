"""The derivative rules of tessera.jax's routines (jax.py): each a ``jax.custom_jvp`` around the
routine's one call whose tangents run every matrix-sized step through tessera's calls on the
caller's mesh (handed in by jax.py, per plan), and whose own derivatives follow (the rules call
themselves and differentiable solves), so that forward and reverse modes work to any order."""
import jax
import jax.numpy as jnp
import numpy as np

from ._common import _triangle_mask

EXPLICIT = ("derivatives on a mesh of Explicit axes (jax.make_mesh's) are not supported yet; "
            "differentiate on a mesh of Auto axes (jax.sharding.Mesh)")


def status_rule(name, call, explicit, tangents_of):
    """a -> call(a), a tuple whose last entry is the int32 status, as a ``jax.custom_jvp``:
    `tangents_of(a, da, out)` gives the tangents of the others (None where an output is None)
    from the rule's own outputs `out` (the call again, through this rule, so that derivatives of
    derivatives follow); the status has none. Refused with a sentence on Explicit axes."""
    @jax.custom_jvp
    def rule(a):
        return call(a)

    @rule.defjvp
    def rule_jvp(primals, tangents):
        if explicit:
            raise NotImplementedError(f"tessera.jax.{name}: {EXPLICIT}")
        (a,), (da,) = primals, tangents
        out = rule(a)
        zero = np.zeros(jnp.shape(out[-1]), jax.dtypes.float0)
        return out, (*tangents_of(a, da, out[:-1]), zero)

    return rule


def solve_rules(name, call, explicit, jvp):
    """(a, b) -> call(a, b), a tuple whose last entry is the int32 status, as a
    ``jax.custom_jvp`` whose rule `jvp(a, b, da, db)` gives (the other outputs, their tangents,
    the status), the outputs made again there (a factor once, then its solves) so that derivatives
    of derivatives follow; the status has no tangent. Refused with a sentence on Explicit axes."""
    @jax.custom_jvp
    def rules(a, b):
        return call(a, b)

    @rules.defjvp
    def rules_jvp(primals, tangents):
        if explicit:
            raise NotImplementedError(f"tessera.jax.{name}: {EXPLICIT}")
        out, d_out, status = jvp(*primals, *tangents)
        zero = np.zeros(jnp.shape(status), jax.dtypes.float0)
        return (*out, status), (*d_out, zero)

    return rules


def hermitian_of(a, n, lower):
    """The Hermitian matrix whose `lower` (else upper) triangle a holds: the other triangle never
    read, the diagonal's imaginary part dropped (as LAPACK's)."""
    strict = jnp.where(_triangle_mask(n, n, -1 if lower else 1, lower), a, jnp.zeros((), a.dtype))
    return strict + strict.conj().T + jnp.diag(jnp.real(jnp.diagonal(a))).astype(a.dtype)


def linear_solve(matvec, b, solve, solve_h=None):
    """x = A⁻¹ b by `solve` (r -> (A⁻¹ r, status)) for A whose product is `matvec`, differentiable
    in b and in what matvec reads (jax.lax.custom_linear_solve: derivatives are further solves, A's
    tangent through matvec); Aᵀ x = r as conj(A⁻ᴴ conj(r)), A⁻ᴴ by `solve_h` (by `solve` where A
    is Hermitian, the default). Returns (x, status)."""
    def transposed(_, r):
        x, status = (solve_h or solve)(jnp.conj(r))
        return jnp.conj(x), status

    return jax.lax.custom_linear_solve(matvec, b, lambda _, r: solve(r), transposed, has_aux=True)


def potrs_rules(call, factor, solver, inverse, n, lower, explicit):
    """(a, b) -> (x, logdet, status) by `call` (potrs' one call), with derivative rules: under
    differentiation A's Cholesky factor (`factor`) is made once and every solve of the rules runs
    on it (`solver(shape)`: cho_solve's call for right-hand sides of that shape), through
    linear_solve on A's product from a's read triangle, so that they differentiate again: x's
    tangent A⁻¹ (db - dA x); the log det's tr(A⁻¹ dA) with A⁻¹ from the factor (`inverse`: trtri
    and lauum, a third of the flops of solving for n right-hand sides), itself differentiable
    (its tangent -A⁻¹ dA A⁻¹). Not on a mesh of Explicit axes (refused with a sentence: the
    rules' products there need layouts of their own)."""
    def solve_with(a, c):  # rhs -> A⁻¹ rhs on the factor c, differentiable in a and rhs
        hermitian = hermitian_of(a, n, lower)

        def solve(rhs):
            on_factor = solver(tuple(rhs.shape))
            return linear_solve(lambda v: hermitian @ v, rhs, lambda r: on_factor(c, r))[0]

        return solve

    @jax.custom_jvp
    def inverse_of(c, a):  # A⁻¹ from its factor c, differentiable in a
        return inverse(c)

    @inverse_of.defjvp
    def inverse_jvp(primals, tangents):
        c, a = primals
        x = inverse_of(c, a)
        return x, -(x @ hermitian_of(tangents[1], n, lower) @ x)

    @jax.custom_jvp
    def logdet_of(c, a):  # log det A from its factor c, differentiable in a
        return 2 * jnp.sum(jnp.log(jnp.real(jnp.diagonal(c))))

    @logdet_of.defjvp
    def logdet_jvp(primals, tangents):
        c, a = primals
        d_a = hermitian_of(tangents[1], n, lower)
        # tr(A⁻¹ dA) as the sum of their elementwise product (A⁻¹ Hermitian: A⁻ᵀ = conj A⁻¹)
        return logdet_of(c, a), jnp.real(jnp.sum(jnp.conj(inverse_of(c, a)) * d_a))

    def jvp(a, b, da, db):
        c, status = factor(jax.lax.stop_gradient(a))
        solve = solve_with(a, c)
        x = solve(b)
        dx = solve(db - hermitian_of(da, n, lower) @ x)
        logdet, dlogdet = jax.jvp(logdet_of, (c, a), (jnp.zeros_like(c), da))
        return (x, logdet), (dx, dlogdet), status

    return solve_rules("potrs", call, explicit, jvp)


def cholesky_rules(call, first, second, n, lower, explicit):
    """a -> (c, status) by `call` (cholesky's one call) with Murray's rule: with A = Fᴴ F (F the
    upper factor c, or the lower one's cᴴ) and M = F⁻ᴴ dA F⁻¹, dF = Φ(M) F, Φ the upper triangle
    with half its diagonal (lower: dL = L Φ(M)ᴴ). M from two solves on the factor
    (`first(shape)`: the handlers' cho_first, (c, r) -> (F⁻ᴴ r, status)), each a
    linear_solve on Fᴴ's product from c's triangle, its transpose by `second(shape)` (F⁻¹ r),
    so that the rule transposes and differentiates again."""
    def half(c, rhs):  # F⁻ᴴ rhs on the factor c, differentiable in c and rhs
        t = jnp.where(_triangle_mask(n, n, 0, lower), c, jnp.zeros((), c.dtype))
        fh = t if lower else t.conj().T  # Fᴴ
        shape = tuple(rhs.shape)
        return linear_solve(lambda v: fh @ v, rhs, lambda r: first(shape)(c, r),
                            lambda r: second(shape)(c, r))[0]

    def tangent(a, da, out):
        (c,) = out
        y = half(c, hermitian_of(da, n, lower))  # F⁻ᴴ dA
        m = half(c, y.conj().T)  # F⁻ᴴ dA F⁻¹, Hermitian
        phi = jnp.where(_triangle_mask(n, n, 0, False), m, jnp.zeros((), m.dtype))
        phi = phi - jnp.diag(jnp.diagonal(m)) / 2
        return (c @ phi.conj().T if lower else phi @ c,)

    return status_rule("cholesky", call, explicit, tangent)


def syevd_rules(values_call, vectors_call, n, vectors, explicit):
    """a -> (w, V, status) by `vectors_call`, or (w, None, status) by `values_call` (syevd's
    calls),
    with jax's eigh rule (first-order perturbation theory): for M = Vᴴ dA V, dA the Hermitian
    matrix of the lower triangle's tangent, dw = Re diag(M) and dV = V (F ∘ M), F_ij =
    1 / (w_j − w_i) off the diagonal and 0 on it (repeated eigenvalues give infinities, as
    jax's). The products are XLA's on the caller's mesh; the eigenvectors of a values-only call's
    tangent come from the vectors call."""
    def tangents(a, da, out):
        w, v = out
        m = v.conj().T @ hermitian_of(da, n, True) @ v
        eye = jnp.eye(n, dtype=v.dtype)
        wc = w.astype(v.dtype)
        f = 1 / (eye + wc[None, :] - wc[:, None]) - eye
        return jnp.real(jnp.diagonal(m)).astype(w.dtype), v @ (f * m)

    with_vectors = status_rule("syevd", vectors_call, explicit, tangents)
    if vectors:
        return with_vectors
    # values alone: their call as the primal, under differentiation the vectors call's values and
    # tangents (one solve, not a values solve beside it)
    values = subset_rule(lambda a: (lambda w, _, status: (w, status))(*values_call(a)),
                         with_vectors, (0,))
    return lambda a: (lambda w, status: (w, None, status))(*values(a))


def potri_rules(call, n, lower, explicit):
    """a -> (A⁻¹, status) by `call` (potri's one call), its tangent −A⁻¹ dA A⁻¹ (XLA's products
    on the mesh, dA the Hermitian matrix of the read triangle's tangent), the rule calling itself
    so that its own derivatives follow."""
    def tangent(a, da, out):
        (x,) = out
        return (-(x @ hermitian_of(da, n, lower) @ x),)

    return status_rule("potri", call, explicit, tangent)


def _conjugated(solve):
    """r -> (conj(x), status) for (x, status) = solve(conj(r)): a solve with Aᵀ as one with Aᴴ."""
    def conj_solve(r):
        x, status = solve(jnp.conj(r))
        return jnp.conj(x), status

    return conj_solve


def lu_linear_solve(matvec, lu, piv, b, solver):
    """x = A⁻¹ b on A's LU factors (lu, piv) by `solver(shape, trans)` ((lu, piv, r) -> (A⁻¹ r,
    status) with trans 0, (A⁻ᵀ r, status) with 1), differentiable in b and in what `matvec` (A's
    product) reads, through linear_solve. Returns (x, status)."""
    shape = tuple(b.shape)
    return linear_solve(matvec, b, lambda r: solver(shape, 0)(lu, piv, r),
                        _conjugated(lambda r: solver(shape, 1)(lu, piv, r)))


def lu_solve_rules(call, factor, solver, explicit):
    """(a, b) -> (x, status) by `call` (lu_solve's one call), with derivative rules: under
    differentiation A's LU factors (`factor`: a -> (lu, piv, status)) are made once and every
    solve of the rules runs on them (lu_linear_solve on A's product a @ v), so that they
    differentiate again: x's tangent A⁻¹ (db - dA x), its transpose by solves with Aᵀ on the same
    factors. Not on a mesh of Explicit axes (refused with a sentence)."""
    def jvp(a, b, da, db):
        lu, piv, status = factor(jax.lax.stop_gradient(a))

        def solve(rhs):
            return lu_linear_solve(lambda v: a @ v, lu, piv, rhs, solver)[0]

        x = solve(b)
        return (x,), (solve(db - da @ x),), status

    return solve_rules("lu_solve", call, explicit, jvp)


def refusing(fn, message):
    """fn, whose derivative raises NotImplementedError(message) (a routine without a rule)."""
    @jax.custom_jvp
    def call(*args):
        return fn(*args)

    @call.defjvp
    def call_jvp(primals, tangents):
        raise NotImplementedError(message)

    return call


def _right_solve(r, x):
    """x R⁻¹ for R upper triangular (XLA's triangular solve on the mesh)."""
    return jax.lax.linalg.triangular_solve(r, x, left_side=False, lower=False)


def qr_rules(call, explicit):
    """a -> (q, r, status) by `call` (qr's reduced call, M >= N), with jax's QR rule: with
    C = Qᴴ dA R⁻¹ and Ω = tril(C, -1) - tril(C, -1)ᴴ (plus C's imaginary diagonal), dQ = Q (Ω - C)
    + dA R⁻¹ and dR = (C - Ω) R; the products and the triangular solve XLA's on the mesh."""
    def tangent(a, da, out):
        q, r = out
        dx_rinv = _right_solve(r, da)
        c = q.conj().T @ dx_rinv
        low = jnp.tril(c, -1)
        omega = low - low.conj().T
        if jnp.iscomplexobj(c):
            omega = omega + jnp.diag(jnp.diagonal(c) - jnp.real(jnp.diagonal(c)))
        return q @ (omega - c) + dx_rinv, (c - omega) @ r

    return status_rule("qr", call, explicit, tangent)


def subset_rule(call, full, keep):
    """a -> call(a), the outputs `keep` (indices) of `full` (a rule's (outputs..., status)) and
    the status, with full's derivative for them: the primal makes only what the call asks (qr's
    R alone, gesvd's values, polar's U_p), the rest only under differentiation."""
    @jax.custom_jvp
    def rule(a):
        return call(a)

    @rule.defjvp
    def rule_jvp(primals, tangents):
        out, d_out = jax.jvp(full, primals, tangents)
        zero = np.zeros(jnp.shape(out[-1]), jax.dtypes.float0)
        return (*(out[i] for i in keep), out[-1]), (*(d_out[i] for i in keep), zero)

    return rule


def svd_rules(call, m, n, explicit):
    """a -> (s, u, vh, status) by `call` (gesvd's economy call with vectors), with jax's SVD rule:
    dS = Uᴴ dA V, ds = Re diag dS, dU = U (F ∘ (dS Σ + Σ dSᴴ) + i Im diag(dS) Σ⁻¹) and
    dV = V (F ∘ (Σ dS + dSᴴ Σ)), F_ij = 1 / (s_j² - s_i²) off the diagonal, plus the parts
    outside U's (a tall A) or V's (a wide one) span; the products XLA's on the mesh."""
    def tangent(a, da, out):
        s, u, vh = out
        v = vh.conj().T
        d = u.conj().T @ da @ v
        sd = s[None, :].astype(a.dtype)
        eye = jnp.eye(s.shape[0], dtype=a.dtype)
        f = 1 / ((sd + sd.T) * (sd - sd.T) + eye) - eye
        dss, sds = d * sd, sd.T * d
        du = dss + dss.conj().T
        if jnp.iscomplexobj(d):
            s_inv = jnp.where(s == 0, 0, 1 / jnp.where(s == 0, 1, s)).astype(a.dtype)
            du_diag = 0.5 * (d - d.conj().T) * (eye * s_inv[None, :])
        else:
            du_diag = 0
        du = u @ (f * du + du_diag)
        dv = v @ (f * (sds + sds.conj().T))
        if m > n:
            dav = da @ v
            du = du + (dav - u @ (u.conj().T @ dav)) / sd
        if n > m:
            dahu = da.conj().T @ u
            dv = dv + (dahu - v @ (vh @ dahu)) / sd
        return jnp.real(jnp.diagonal(d)), du, dv.conj().T

    return status_rule("gesvd", call, explicit, tangent)


def polar_rules(call, eig, m, n, explicit):
    """a -> (u_p, h, status) by `call` (polar's call with H, M >= N): with H = V Σ Vᴴ (`eig`:
    tessera's eigensolver on H, differentiable) and U = U_p V, dU_p = U (G ∘ (M - Mᴴ)) Vᴴ, M =
    Uᴴ dA V, G_ij = 1 / (σ_i + σ_j), plus (I - U Uᴴ) dA V Σ⁻¹ Vᴴ for a tall A; dH = dU_pᴴ A +
    U_pᴴ dA; the products XLA's on the mesh."""
    def tangent(a, da, out):
        u_p, h = out
        sig, v = eig(h)
        u = u_p @ v
        mm = u.conj().T @ da @ v
        sd = sig[None, :].astype(a.dtype)
        du_p = u @ ((mm - mm.conj().T) / (sd + sd.T)) @ v.conj().T
        if m > n:
            dav = da @ v
            du_p = du_p + ((dav - u @ (u.conj().T @ dav)) / sd) @ v.conj().T
        dh = du_p.conj().T @ a + u_p.conj().T @ da
        return du_p, (dh + dh.conj().T) / 2

    return status_rule("polar", call, explicit, tangent)


def lstsq_rules(call, qr_of, explicit):
    """(a, b) -> (x, status) by `call` (least_squares' one call, M >= N of full column rank), with
    derivative rules from A = Q R (`qr_of`: qr's differentiable reduced call): x = R⁻¹ Qᴴ b made
    again under differentiation, and x's tangent R⁻¹ Qᴴ (db - dA x) + R⁻¹ R⁻ᴴ dAᴴ (b - A x), the
    products and triangular solves XLA's on the mesh. The status as gels': the first exactly zero
    R(i, i), 1-based."""
    def left_solve(r, v, conj_trans=False):  # R⁻¹ v, or R⁻ᴴ v
        return jax.lax.linalg.triangular_solve(r, v, left_side=True, lower=False,
                                               transpose_a=conj_trans, conjugate_a=conj_trans)

    def jvp(a, b, da, db):
        q, r, status = qr_of(a)
        d = jnp.diagonal(r)
        zero = jnp.argmax(d == 0)
        status = jnp.where(status != 0, status, jnp.where(d[zero] == 0, zero + 1, 0))
        status = status.astype(jnp.int32)
        vec = b.ndim == 1
        b2, db2 = (b[:, None], db[:, None]) if vec else (b, db)
        x = left_solve(r, q.conj().T @ b2)
        dx = left_solve(r, q.conj().T @ (db2 - da @ x)) + \
            left_solve(r, left_solve(r, da.conj().T @ (b2 - a @ x), True))
        x, dx = (jnp.where(status == 0, v, jnp.array(jnp.nan, v.dtype)) for v in (x, dx))
        return ((x[:, 0], ), (dx[:, 0],), status) if vec else ((x,), (dx,), status)

    return solve_rules("least_squares", call, explicit, jvp)
