"""tessera.jax.cho_factor / cho_solve (jax.scipy.linalg's factor-once, solve-many pair) against
jax.scipy.linalg.cho_factor / cho_solve on the same matrices: every dtype, both triangles,
orders that split evenly over the mesh and not, b of one and several columns, replicated or
sharded by rows, under jit, and a factor reused for several right-hand sides; the status of a
singular factor. Fixtures and helpers in jax_support.py."""
import numpy as np
import pytest

from jax_support import *  # noqa: F401,F403  (fixtures, helpers, jax, tj)
from jax_support import DTYPES, P, hpd, jax, jsl, put, rel, rhs, square_mesh, tj, tol


CASES = [(dt, n, (i + j) % 2 == 1) for i, dt in enumerate(DTYPES) for j, n in enumerate((16, 13))]


@pytest.mark.parametrize("dtype,n,lower", CASES,
                         ids=[f"{np.dtype(d).name}-N{n}-{'lower' if lo else 'upper'}"
                              for d, n, lo in CASES])
def test_cho_solve_matches_jax(dtype, n, lower, mesh, devices):
    a = hpd(n, dtype, seed=n)
    cf = tj.cho_factor(a, 4, mesh, P("x", None), lower=lower)
    assert cf[1] is lower
    ref = jsl.cho_factor(a, lower=lower)
    for k, rows in ((None, False), (3, False), (3, True)):  # b (n,), (n, 3), rows sharded
        if rows and n % len(devices):
            continue  # jax shards rows only in equal parts
        b = rhs(n, dtype, k=k)
        x, status = tj.cho_solve(cf, put(b, mesh, P("x")) if rows else b, 4, mesh,
                                 P("x", None), return_status=True)
        assert int(status) == 0 and x.shape == b.shape and x.dtype == np.dtype(dtype)
        assert rel(x, jsl.cho_solve(ref, b)) < tol(dtype, n)


def test_factor_reused_under_jit(mesh, devices):
    """One factor, several solves inside one jit: the factor is an ordinary sharded array."""
    n, dtype = 16, np.float64
    a = hpd(n, dtype, seed=3)
    bs = [rhs(n, dtype, seed=s) for s in (1, 2)]

    @jax.jit
    def solve_both(a, b1, b2):
        cf = tj.cho_factor(a, 4, mesh, P("x", None))
        return tj.cho_solve(cf, b1, 4, mesh, P("x", None)), tj.cho_solve(cf, b2, 4, mesh,
                                                                          P("x", None))

    xs = solve_both(put(a, mesh, P("x", None)), *bs)
    for x, b in zip(xs, bs):
        assert rel(x, np.linalg.solve(a, b)) < tol(dtype, n)


def test_singular_factor_gives_status_and_nan(mesh, devices):
    """A zero on the factor's diagonal (row 5): trtrs' info 6, x all NaN."""
    n, dtype = 12, np.float64
    c, lower = tj.cho_factor(hpd(n, dtype), 4, mesh, P("x", None))
    c = np.asarray(c).copy()
    c[5, 5] = 0
    x, status = tj.cho_solve((c, lower), rhs(n, dtype), 4, mesh, P("x", None), return_status=True)
    assert int(status) == 6 and np.isnan(np.asarray(x)).all()


def test_two_dimensional_mesh(devices):
    """c sharded by rows and columns over a 2 x 2 mesh; a zero on the diagonal found in a block
    off the mesh's first column."""
    mesh = square_mesh(devices)
    n, dtype = 14, np.complex128
    a, b = hpd(n, dtype, seed=5), rhs(n, dtype)
    cf = tj.cho_factor(a, 4, mesh, P("x", "y"), lower=True)
    x = tj.cho_solve(cf, b, 4, mesh, P("x", "y"))
    assert rel(x, np.linalg.solve(a, b)) < tol(dtype, n)
    c = np.asarray(cf[0]).copy()
    c[9, 9] = 0
    x, status = tj.cho_solve((c, True), b, 4, mesh, P("x", "y"), return_status=True)
    assert int(status) == 10 and np.isnan(np.asarray(x)).all()
