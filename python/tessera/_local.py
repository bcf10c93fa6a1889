"""The ``*_shardmap_ctx`` forms (jax.py, _qr.py, _eig.py, _svd.py call them), with the derivative
rules of the global forms (_grad.py): inside the caller's jax.shard_map each device holds its
rows of A (a 1D mesh) or its block of A (a 2D mesh).
Undifferentiated, a call is tessera's one call on the rows or blocks. Under differentiation A's
rows or blocks (and its tangent's) are gathered onto every device (placed in zeros and summed
over the mesh's axes: n² on each device, typed as the same on every device), the global rules run
on the whole matrices, and every factorization, solve, inverse and eigensolve of theirs runs
through tessera's calls on the devices' rows or blocks. Internal to tessera.jax."""
import jax
import jax.numpy as jnp

from ._common import (_col_index, _ffi, _first_column, _nan_unless, _rank, _real, _row_index,
                      _triangle_mask)
from ._grad import (cholesky_rules, lstsq_rules, lu_solve_rules, polar_rules, potri_rules,
                    potrs_rules, qr_rules, svd_rules, syevd_rules)

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


def gather(x, lay, m):
    """The whole m-row matrix of this device's part x of it: its rows on a 1D mesh, its block on
    a 2D one (rows over the row axis, columns over the column axis), placed in zeros and summed
    over the mesh's axes."""
    if not lay.col_axis:
        return whole(x, lay, m)
    rows, cols = x.shape
    placed = jax.lax.dynamic_update_slice(jnp.zeros((m, cols * lay.gcols), x.dtype), x,
                                          (_row_index(lay) * rows, _col_index(lay) * cols))
    return jax.lax.psum(placed, (lay.axis, lay.col_axis))


def cut(x, lay, rows):
    """This device's part of the whole matrix x, as gather takes it: `rows` rows, and on a 2D
    mesh x's columns / gcols."""
    if not lay.col_axis:
        return mine(x, lay, rows)
    cols = x.shape[1] // lay.gcols
    return jax.lax.dynamic_slice(x, (_row_index(lay) * rows, _col_index(lay) * cols), (rows, cols))


class Rows:
    """The calls of one plan (layout, order n, rows per device, tile nb, triangle) on this device's
    rows of A, or its block of A on a 2D mesh (rows x n / gcols), and the rules of the global forms
    over them. Right-hand sides and solutions are rows (on a 2D mesh the same on every device of a
    mesh row); square matrices (A, its factor, inverse, eigenvectors) are A's rows or blocks."""

    def __init__(self, lay, n, rows, nb, lower):
        self.lay, self.n, self.rows, self.nb, self.lower = lay, n, rows, nb, lower
        self.cols = n // lay.gcols if lay.col_axis else n

    def call(self, op, a, b=None, logdet=False, piv=None, trans=0, vectors=False):
        return _ffi(op, a, b, _rank(self.lay), n=self.n, lay=self.lay, tile=self.nb,
                    lower=self.lower, logdet=logdet, piv=piv, trans=trans, vectors=vectors)

    def col0(self):
        return _col_index(self.lay) * self.cols if self.lay.col_axis else 0

    def triangle(self, x):
        """This device's rows or block of x's `lower` (else upper) triangle, the other zero."""
        keep = _triangle_mask(self.rows, self.cols, _row_index(self.lay) * self.rows, self.lower,
                              self.col0())
        return jnp.where(keep, x, jnp.zeros((), x.dtype))

    def whole(self, x):
        """The whole (n, k) array of this device's rows x of it."""
        return whole(x, self.lay, self.n)

    def mine(self, x):
        return mine(x, self.lay, self.rows)

    def whole_a(self, x):
        """The whole n x n matrix of this device's rows or block x of it."""
        return gather(x, self.lay, self.n)

    def mine_a(self, x):
        """This device's rows or block of the whole n x n x."""
        return cut(x, self.lay, self.rows)

    def solution(self, x):
        """The whole solution of a call's x (on a 2D mesh, mesh column 0's rows)."""
        return self.whole(_first_column(x, self.lay))

    # The calls on whole matrices (the rules' arguments), each on this device's rows or block.
    def factor(self, a):
        r = self.call("cholesky", self.mine_a(a))
        return self.whole_a(self.triangle(r.a)), r.status[0]

    def solver(self, op="cho_solve"):
        def solve_for(shape):
            def solve(c, r):
                out = self.call(op, self.mine_a(c), self.mine(r.reshape(self.n, -1)))
                return self.solution(out.x).reshape(shape), out.status[0]
            return solve
        return solve_for

    def inverse(self, c):
        x = self.whole_a(self.triangle(self.call("cho_inverse", self.mine_a(c)).a))
        keep = _triangle_mask(self.n, self.n, 0, self.lower)
        return jnp.where(keep, x, x.conj().T)

    def potrs(self, logdet):
        """(a, b) -> (x, logdet, status): a this device's rows of A, b the whole (n, k) right-hand
        side, x the whole solution, logdet and status scalars the same on every device."""
        def plain(a, b):
            r = self.call("potrs", a, self.mine(b), logdet=logdet)
            ok = r.status[0] == 0
            x = _nan_unless(ok, self.solution(r.x))
            return x, _nan_unless(ok, _real(r.logdet[0], a.dtype)), r.status[0]

        rules = potrs_rules(lambda a, b: plain(self.mine_a(a), b), self.factor, self.solver(),
                            lambda c: self.inverse(c), self.n, self.lower, False)
        return gathered(plain, rules, self.whole_a)

    def factor_op(self, op):
        """a -> (this device's rows of potri's or cholesky's result, status scalar)."""
        def plain(a):
            r = self.call(op, a)
            return _nan_unless(r.status[0] == 0, self.triangle(r.a)), r.status[0]

        def on_whole(a):  # potri's whole Hermitian A⁻¹, or the whole factor
            x, status = plain(self.mine_a(a))
            x = self.whole_a(x)
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
            out, d_out = jax.jvp(rules, (self.whole_a(a),), (self.whole_a(da),))
            return ((self.triangle(self.mine_a(out[0])), out[1]),
                    (self.triangle(self.mine_a(d_out[0])), d_out[1]))

        return rule


    def lu_solve(self):
        """(a, b) -> (x, status): a this device's rows of A, b the whole (n, k) right-hand side
        (the handlers take it as Bᵀ on every device), x the whole solution."""
        def plain(a, b):
            r = self.call("lu_solve", a, b.T)
            return _nan_unless(r.status[0] == 0, r.x.T), r.status[0]

        def factor(a):
            r = self.call("lu_factor", self.mine_a(a))
            return self.whole_a(r.a), r.piv, r.status[0]

        def solver(shape, trans):
            def solve(lu, piv, r):
                out = self.call("lu_factored", self.mine_a(lu), r.reshape(self.n, -1).T, piv=piv,
                                trans=trans)
                return out.x.T.reshape(shape), out.status[0]
            return solve

        rules = lu_solve_rules(lambda a, b: plain(self.mine_a(a), b), factor, solver, False)
        return gathered(plain, rules, self.whole_a)


    def syevd(self, vectors):
        """a -> (w, this device's rows or block of V or None, status): syevd on this device's
        rows or block of A (its lower triangle read), differentiable by jax's eigh rule on the
        gathered A."""
        def plain_of(vec):
            def plain(a):
                r = self.call("syevd", a, vectors=vec)
                ok = r.status[0] == 0
                return _nan_unless(ok, r.w), _nan_unless(ok, r.a) if vec else None, r.status[0]
            return plain

        def on_whole(vec):
            def call(a):
                w, v, status = plain_of(vec)(self.mine_a(a))
                return w, self.whole_a(v) if vec else None, status
            return call

        rules = syevd_rules(on_whole(False), on_whole(True), self.n, vectors, False)

        @jax.custom_jvp
        def rule(a):
            return plain_of(vectors)(a)

        @rule.defjvp
        def rule_jvp(primals, tangents):
            (a,), (da,) = primals, tangents
            (w, v, status), (dw, dv, ds) = jax.jvp(rules, (self.whole_a(a),),
                                                   (self.whole_a(da),))
            if vectors:
                v, dv = self.mine_a(v), self.mine_a(dv)
            return (w, v, status), (dw, dv, ds)

        return rule


def qr(plain, lay, m):
    """(a -> (this device's rows of Q, R, status) by `plain`, the reduced QR (M >= N) of this
    device's rows or block a of the m-row A; the same differentiable by jax's QR rule on the
    gathered A, Q's rows gathered too under differentiation; the rule on whole matrices, for least
    squares)."""
    def on_whole(a):
        q, r, status = plain(cut(a, lay, a.shape[0] // lay.grows))
        return whole(q, lay, m), r, status

    rules = qr_rules(on_whole, False)

    @jax.custom_jvp
    def rule(a):
        return plain(a)

    @rule.defjvp
    def rule_jvp(primals, tangents):
        (a,), (da,) = primals, tangents
        (q, r, status), (dq, dr, ds) = jax.jvp(rules, (gather(a, lay, m),), (gather(da, lay, m),))
        rows = a.shape[0]
        return (mine(q, lay, rows), r, status), (mine(dq, lay, rows), dr, ds)

    return rule, rules


def on_blocks(plain, rules, lay, sizes):
    """a -> plain(a) on this device's rows or block a, differentiated by `rules` (a global rule on
    whole matrices) on the gathered A: sizes[i] (the whole rows of output i, or None for an output
    the same on every device) tells which of plain's outputs are this device's rows or blocks."""
    @jax.custom_jvp
    def rule(a):
        return plain(a)

    @rule.defjvp
    def rule_jvp(primals, tangents):
        (a,), (da,) = primals, tangents
        m = a.shape[0] * lay.grows
        out, d_out = jax.jvp(rules, (gather(a, lay, m),), (gather(da, lay, m),))
        cuts = [(lambda v, k=k: v if k is None else cut(v, lay, k // lay.grows)) for k in sizes]
        return tuple(c(v) for c, v in zip(cuts, out)), tuple(c(v) for c, v in zip(cuts, d_out))

    return rule


def unblocked(plain, lay, sizes):
    """plain on whole matrices: this device's rows or block of the whole input in, the outputs
    that are rows or blocks (sizes[i] not None) gathered whole."""
    def call(a):
        out = plain(cut(a, lay, a.shape[0] // lay.grows))
        return tuple(v if k is None else gather(v, lay, k) for k, v in zip(sizes, out))

    return call


def svd(plain, lay, m, n):
    """a -> plain(a) = (s, this device's rows or block of U, of Vᴴ, status) (gesvd's economy
    call, M >= N), differentiable by jax's SVD rule on the gathered A (U and Vᴴ gathered too)."""
    sizes = (None, m, n, None)
    return on_blocks(plain, svd_rules(unblocked(plain, lay, sizes), m, n, False), lay, sizes)


def polar(plain, eig, lay, m, n):
    """a -> plain(a) = (this device's rows or block of U_p, of H, status) (M >= N),
    differentiable by polar_rules on the gathered A, H's eigendecomposition by `eig` (whole H ->
    (w, V))."""
    sizes = (m, n, None)
    return on_blocks(plain, polar_rules(unblocked(plain, lay, sizes), eig, m, n, False), lay,
                     sizes)


def least_squares(plain, qr_whole, lay, m):
    """(a, b) -> plain(a, b) = (x, status): a this device's rows or block of the m-row A, b the
    whole right-hand side; differentiable by lstsq_rules on the gathered A, from `qr_whole` (qr's
    rule on whole matrices)."""
    rules = lstsq_rules(lambda a, b: plain(cut(a, lay, a.shape[0] // lay.grows), b), qr_whole,
                        False)
    return gathered(plain, rules, lambda a: gather(a, lay, m))


def gathered(plain, rules, gather):
    """(a, b) -> plain(a, b) on this device's rows or block a of A, differentiated by `rules` (a
    global form's rule, a custom_jvp on the whole A and b) on A and its tangent made whole by
    `gather`."""
    @jax.custom_jvp
    def rule(a, b):
        return plain(a, b)

    @rule.defjvp
    def rule_jvp(primals, tangents):
        (a, b), (da, db) = primals, tangents
        return jax.jvp(rules, (gather(a), b), (gather(da), db))

    return rule
