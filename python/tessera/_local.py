"""The Cholesky family's ``*_shardmap_ctx`` forms on a 1D mesh (jax.py calls them), with the
derivative rules of the global forms (_grad.py): inside the caller's jax.shard_map each device
holds its rows of A. Undifferentiated, a call is tessera's one call on the rows. Under
differentiation A's rows (and its tangent's) are gathered onto every device (the rows placed in
zeros and summed over the row axis: n² on each device, typed as the same on every device), the
global rules run on the whole matrices, and every factorization, solve and inverse of theirs runs
through tessera's calls on the devices' rows. Internal to tessera.jax."""
import jax
import jax.numpy as jnp

from ._common import _ffi, _nan_unless, _rank, _real, _row_index, _triangle_mask
from ._grad import (cholesky_rules, lstsq_rules, lu_solve_rules, polar_rules, potri_rules,
                    potrs_rules, qr_rules, svd_rules, syevd_rules)

# Why the shardmap forms on a 2D mesh refuse derivatives.
LOCAL_2D = ("derivatives on a 2D mesh are not supported yet; differentiate on a 1D mesh (A "
            "sharded by rows) or through the global form")

def whole(x, lay, n):
    """The whole (n, ...) array whose rows x are this device's, on every device: the rows placed
    in zeros and summed over the row axis (psum's result is typed as the same on every device;
    adding zeros is exact)."""
    placed = jax.lax.dynamic_update_slice_in_dim(jnp.zeros((n,) + x.shape[1:], x.dtype), x,
                                                 _row_index(lay) * x.shape[0], axis=0)
    return jax.lax.psum(placed, lay.axis)


def mine(x, lay, rows):
    """This device's rows of the whole x."""
    return jax.lax.dynamic_slice_in_dim(x, _row_index(lay) * rows, rows, axis=0)


class Rows:
    """The calls of one plan (layout, order n, rows per device, tile nb, triangle) on this device's
    rows, and the rules of the global forms over them."""

    def __init__(self, lay, n, rows, nb, lower):
        self.lay, self.n, self.rows, self.nb, self.lower = lay, n, rows, nb, lower

    def call(self, op, a, b=None, logdet=False, piv=None, trans=0, vectors=False):
        return _ffi(op, a, b, _rank(self.lay), n=self.n, lay=self.lay, tile=self.nb,
                    lower=self.lower, logdet=logdet, piv=piv, trans=trans, vectors=vectors)

    def triangle(self, x):
        """This device's rows of x's `lower` (else upper) triangle, the other zero."""
        keep = _triangle_mask(self.rows, self.n, _row_index(self.lay) * self.rows, self.lower)
        return jnp.where(keep, x, jnp.zeros((), x.dtype))

    def whole(self, x):
        return whole(x, self.lay, self.n)

    def mine(self, x):
        return mine(x, self.lay, self.rows)

    # The calls on whole matrices (the rules' arguments), each on this device's rows.
    def factor(self, a):
        r = self.call("cholesky", self.mine(a))
        return self.whole(self.triangle(r.a)), r.status[0]

    def solver(self, op="cho_solve"):
        def solve_for(shape):
            def solve(c, r):
                out = self.call(op, self.mine(c), self.mine(r.reshape(self.n, -1)))
                return self.whole(out.x).reshape(shape), out.status[0]
            return solve
        return solve_for

    def inverse(self, c):
        x = self.whole(self.triangle(self.call("cho_inverse", self.mine(c)).a))
        keep = _triangle_mask(self.n, self.n, 0, self.lower)
        return jnp.where(keep, x, x.conj().T)

    def potrs(self, logdet):
        """(a, b) -> (x, logdet, status): a this device's rows of A, b the whole (n, k) right-hand
        side, x the whole solution, logdet and status scalars the same on every device."""
        def plain(a, b):
            r = self.call("potrs", a, self.mine(b), logdet=logdet)
            ok = r.status[0] == 0
            x = _nan_unless(ok, self.whole(r.x))
            return x, _nan_unless(ok, _real(r.logdet[0], a.dtype)), r.status[0]

        rules = potrs_rules(lambda a, b: plain(self.mine(a), b), self.factor, self.solver(),
                            lambda c: self.inverse(c), self.n, self.lower, False)
        return gathered(plain, rules, self.lay, self.n)

    def factor_op(self, op):
        """a -> (this device's rows of potri's or cholesky's result, status scalar)."""
        def plain(a):
            r = self.call(op, a)
            return _nan_unless(r.status[0] == 0, self.triangle(r.a)), r.status[0]

        def on_whole(a):  # potri's whole Hermitian A⁻¹, or the whole factor
            x, status = plain(self.mine(a))
            x = self.whole(x)
            if op == "potri":
                x = jnp.where(_triangle_mask(self.n, self.n, 0, self.lower), x, x.conj().T)
            return x, status

        if op == "potri":
            rules = potri_rules(on_whole, self.n, self.lower, False)
        else:
            rules = cholesky_rules(on_whole, self.solver("cho_first"), self.solver("cho_second"),
                                   self.n, self.lower, False)

        @jax.custom_jvp
        def rule(a):
            return plain(a)

        @rule.defjvp
        def rule_jvp(primals, tangents):
            (a,), (da,) = primals, tangents
            out, d_out = jax.jvp(rules, (self.whole(a),), (self.whole(da),))
            return ((self.triangle(self.mine(out[0])), out[1]),
                    (self.triangle(self.mine(d_out[0])), d_out[1]))

        return rule


    def lu_solve(self):
        """(a, b) -> (x, status): a this device's rows of A, b the whole (n, k) right-hand side
        (the handlers take it as Bᵀ on every device), x the whole solution."""
        def plain(a, b):
            r = self.call("lu_solve", a, b.T)
            return _nan_unless(r.status[0] == 0, r.x.T), r.status[0]

        def factor(a):
            r = self.call("lu_factor", self.mine(a))
            return self.whole(r.a), r.piv, r.status[0]

        def solver(shape, trans):
            def solve(lu, piv, r):
                out = self.call("lu_factored", self.mine(lu), r.reshape(self.n, -1).T, piv=piv,
                                trans=trans)
                return out.x.T.reshape(shape), out.status[0]
            return solve

        rules = lu_solve_rules(lambda a, b: plain(self.mine(a), b), factor, solver, False)
        return gathered(plain, rules, self.lay, self.n)


    def syevd(self, vectors):
        """a -> (w, this device's rows of V or None, status): syevd on this device's rows of A
        (its lower triangle read), differentiable by jax's eigh rule on the gathered rows."""
        def plain_of(vec):
            def plain(a):
                r = self.call("syevd", a, vectors=vec)
                ok = r.status[0] == 0
                return _nan_unless(ok, r.w), _nan_unless(ok, r.a) if vec else None, r.status[0]
            return plain

        def on_whole(vec):
            def call(a):
                w, v, status = plain_of(vec)(self.mine(a))
                return w, self.whole(v) if vec else None, status
            return call

        rules = syevd_rules(on_whole(False), on_whole(True), self.n, vectors, False)

        @jax.custom_jvp
        def rule(a):
            return plain_of(vectors)(a)

        @rule.defjvp
        def rule_jvp(primals, tangents):
            (a,), (da,) = primals, tangents
            (w, v, status), (dw, dv, ds) = jax.jvp(rules, (self.whole(a),), (self.whole(da),))
            if vectors:
                v, dv = self.mine(v), self.mine(dv)
            return (w, v, status), (dw, dv, ds)

        return rule


def qr(plain, lay, m):
    """(a -> (this device's rows of Q, R, status) by `plain`, the reduced QR (M >= N) of this
    device's rows a of the m-row A; the same differentiable by jax's QR rule on the gathered rows,
    Q gathered too under differentiation; the rule on whole matrices, for least squares)."""
    def on_whole(a):
        q, r, status = plain(mine(a, lay, a.shape[0] // lay.grows))
        return whole(q, lay, m), r, status

    rules = qr_rules(on_whole, False)

    @jax.custom_jvp
    def rule(a):
        return plain(a)

    @rule.defjvp
    def rule_jvp(primals, tangents):
        (a,), (da,) = primals, tangents
        (q, r, status), (dq, dr, ds) = jax.jvp(rules, (whole(a, lay, m),), (whole(da, lay, m),))
        rows = a.shape[0]
        return (mine(q, lay, rows), r, status), (mine(dq, lay, rows), dr, ds)

    return rule, rules


def on_blocks(plain, rules, lay, sizes):
    """a -> plain(a) on this device's rows a, differentiated by `rules` (a global rule on whole
    matrices) on the gathered rows: sizes[i] (the whole rows of output i, or None for an output
    the same on every device) tells which of plain's outputs are this device's rows."""
    @jax.custom_jvp
    def rule(a):
        return plain(a)

    @rule.defjvp
    def rule_jvp(primals, tangents):
        (a,), (da,) = primals, tangents
        m = a.shape[0] * lay.grows
        out, d_out = jax.jvp(rules, (whole(a, lay, m),), (whole(da, lay, m),))
        cut = [(lambda v, k=k: v if k is None else mine(v, lay, k // lay.grows)) for k in sizes]
        return tuple(c(v) for c, v in zip(cut, out)), tuple(c(v) for c, v in zip(cut, d_out))

    return rule


def unblocked(plain, lay, sizes):
    """plain on whole matrices: this device's rows of the whole input in, the outputs that are
    rows (sizes[i] not None) gathered whole."""
    def call(a):
        out = plain(mine(a, lay, a.shape[0] // lay.grows))
        return tuple(v if k is None else whole(v, lay, k) for k, v in zip(sizes, out))

    return call


def svd(plain, lay, m, n):
    """a -> plain(a) = (s, this device's rows of U, of Vᴴ, status) (gesvd's economy call, M >=
    N), differentiable by jax's SVD rule on the gathered rows (U and Vᴴ gathered too)."""
    sizes = (None, m, n, None)
    return on_blocks(plain, svd_rules(unblocked(plain, lay, sizes), m, n, False), lay, sizes)


def polar(plain, eig, lay, m, n):
    """a -> plain(a) = (this device's rows of U_p, of H, status) (M >= N), differentiable by
    polar_rules on the gathered rows, H's eigendecomposition by `eig` (whole H -> (w, V))."""
    sizes = (m, n, None)
    return on_blocks(plain, polar_rules(unblocked(plain, lay, sizes), eig, m, n, False), lay,
                     sizes)


def least_squares(plain, qr_whole, lay, m):
    """(a, b) -> plain(a, b) = (x, status): a this device's rows of the m-row A, b the whole right
    -hand side; differentiable by lstsq_rules on the gathered rows, from `qr_whole` (qr's rule on
    whole matrices)."""
    rules = lstsq_rules(lambda a, b: plain(mine(a, lay, a.shape[0] // lay.grows), b), qr_whole,
                        False)
    return gathered(plain, rules, lay, m)


def gathered(plain, rules, lay, n):
    """(a, b) -> plain(a, b) on this device's rows a of A, differentiated by `rules` (a global
    form's rule, a custom_jvp on the whole A and b) on the gathered rows of A and of its tangent."""
    @jax.custom_jvp
    def rule(a, b):
        return plain(a, b)

    @rule.defjvp
    def rule_jvp(primals, tangents):
        (a, b), (da, db) = primals, tangents
        return jax.jvp(rules, (whole(a, lay, n), b), (whole(da, lay, n), db))

    return rule
