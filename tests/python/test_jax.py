"""tessera.jax (jaxmg's potrs / potri / cholesky and their shard_map forms) against JAX's own
dense solvers, on a 1D mesh of the first (up to) 4 devices of jax.devices(): the GPUs when jax
has some, else 4 CPU devices forced through XLA_FLAGS before jax is imported. Every test takes
the `devices` fixture; nothing names a CPU.

Tolerances: random A are Hermitian with eigenvalues in [1, 5], references are computed in double
precision from the same rounded A, and the backward error ||Ax - b|| / (||A|| ||x||) and forward
errors ||x - x_ref|| / ||x_ref|| must stay below tol = 100 * eps * N (eps of A's precision; the
factor 100 covers the condition number <= 5 and the constant of Cholesky's error bound).
Argument errors, status messages and the leak test are in test_jax_api.py; the device setup,
fixtures and helpers in jax_support.py."""
import functools
import warnings

from jax_support import *  # noqa: F401,F403  (fixtures, helpers, jax, tj)
from jax_support import _native  # noqa: F401
from tessera import _common  # noqa: E402


SWEEP = [(8, "explicit"), (10, "auto"), (37, "explicit"), (300, "auto")]


# Every function, dtype and order, the triangle alternating between them (each function and
# dtype meets both triangles over the orders): the triangle's handling does not depend on them.
GLOBAL = [(fn, dt, n, kind, (i + j + k) % 2 == 1) for i, fn in enumerate(FNS)
          for j, dt in enumerate(DTYPES) for k, (n, kind) in enumerate(SWEEP)]


@pytest.mark.parametrize("fn,dtype,n,kind,lower", GLOBAL,
                         ids=[f"{fn}-{np.dtype(dt).name}-N{n}-{kind}-{'lower' if lo else 'upper'}"
                              for fn, dt, n, kind, lo in GLOBAL])
def test_global_form_matches_reference(fn, dtype, n, kind, lower, devices):
    mesh = make_mesh(devices, kind)
    rows = -(-n // len(devices))
    b = rhs(n, dtype)
    # T_A is a hint only: 1 up to larger than a shard on a random A, the last on a diagonal one
    cases = [(hpd(n, dtype), T_A) for T_A in (1, 3, rows + 5)] + [(diag(n, dtype), rows + 5)]
    for a, T_A in cases:
        out, status = run_global(fn, a, b, T_A, mesh, lower=lower)
        assert int(status) == 0
        check(fn, out, a, b, lower)


@pytest.mark.parametrize("fn,dtype,lower", [(fn, dt, (i + j) % 2 == 1) for i, fn in enumerate(FNS)
                                             for j, dt in enumerate(DTYPES)],
                         ids=[f"{fn}-{np.dtype(dt).name}" for fn in FNS for dt in DTYPES])
def test_shardmap_form_matches_reference(fn, dtype, lower, mesh, devices):
    # each function and dtype once, the triangle alternating (both met by every function)
    n = 16 * len(devices)
    b = rhs(n, dtype)
    for a, T_A in ((hpd(n, dtype), 1), (diag(n, dtype), 16 + 5)):  # T_A up to > a shard
        outs = run_local(fn, mesh, a, b, T_A=T_A, lower=lower)
        assert np.asarray(outs[-1]).shape == (len(devices),)
        assert (np.asarray(outs[-1]) == 0).all()
        check(fn, outs[0], a, b, lower, triangle_only=True)


@pytest.mark.parametrize("rows", [2, 75])
@pytest.mark.parametrize("b_shape", ["1d", "2d"])
@pytest.mark.parametrize("b_rows", [False, True], ids=["b-replicated", "b-rows"])
def test_potrs_shardmap_b_layouts(b_rows, b_shape, rows, mesh, devices):
    n = rows * len(devices)
    a, b = hpd(n, np.float64), rhs(n, np.float64, None if b_shape == "1d" else 2)
    x, logdet, status = run_local("potrs", mesh, a, b, T_A=3, b_rows=b_rows, return_logdet=True)
    assert x.shape == b.shape and (np.asarray(status) == 0).all()
    check("potrs", x, a, b)
    ref = np.linalg.slogdet(a).logabsdet
    assert np.allclose(np.asarray(logdet), ref, rtol=tol(np.float64, n))


def test_shardmap_form_without_jit(mesh, devices):
    n = 4 * len(devices)
    a, b = hpd(n, np.complex128), rhs(n, np.complex128)
    x, status = run_local("potrs", mesh, a, b, jit=False)
    assert (np.asarray(status) == 0).all()
    check("potrs", x, a, b)


@pytest.mark.parametrize("b_rows", [False, True], ids=["b-replicated", "b-rows"])
@pytest.mark.parametrize("check_vma", [True, False], ids=["check_vma", "no-check_vma"])
@pytest.mark.parametrize("fn", FNS + ["lu_solve"])
def test_shardmap_forms_with_and_without_vma_check(fn, check_vma, b_rows, mesh, devices):
    """Every *_shardmap_ctx form under jax.shard_map's check of varying manual axes (its
    default) and without it. The status (and x from a replicated b) are the same on every
    device and typed so: out_specs P() takes them as they are, with the check on."""
    n = 8 * len(devices)
    a, b = hpd(n, np.float64), rhs(n, np.float64, 2)
    x, status = run_local(fn, mesh, a, b, T_A=4, b_rows=b_rows, check_vma=check_vma,
                          status_spec=P())
    assert np.asarray(status).tolist() == [0]
    if fn == "lu_solve":
        assert backward_error(a, x, b) < tol(np.float64, n)
    else:
        check(fn, x, a, b, triangle_only=True)


@pytest.mark.parametrize("fn", ["potrs", "lu_solve"])
def test_shardmap_forms_on_one_device_with_vma_check(fn, devices):
    """On a mesh of one device, x for a replicated b is typed the same on every device as well:
    out_specs P() takes it with jax.shard_map's check on."""
    mesh, n = make_mesh(devices[:1], "explicit"), 8
    a, b = hpd(n, np.float64), rhs(n, np.float64, 2)
    x, status = run_local(fn, mesh, a, b, T_A=4, status_spec=P())
    assert np.asarray(status).tolist() == [0]
    assert backward_error(a, x, b) < tol(np.float64, n)


@pytest.mark.parametrize("fn", FNS)
def test_shardmap_results_are_typed_per_device(fn, devices):
    """The rows each device gets back (the factor's, the inverse's, potrs' x from b's rows) are
    typed as varying over the row axis: with jax.shard_map's check on, out_specs P() (the same
    on every device) is refused for them, instead of one device's rows coming back as the
    whole result."""
    mesh, n = make_mesh(devices, "explicit"), 4 * len(devices)
    a, b = hpd(n, np.float64), rhs(n, np.float64, 1)

    def body(a_, b_):
        return tj.potrs_shardmap_ctx(a_, b_, 2)[0] if fn == "potrs" else \
            getattr(tj, fn + "_shardmap_ctx")(a_, 2)[0]

    args = put(a, mesh, ROW), put(b, mesh, ROW)
    x = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(ROW, ROW), out_specs=ROW))(*args)
    check(fn, x, a, b, triangle_only=True)
    if len(devices) == 1:
        return  # an axis of one device: its rows are the whole result, which P() may take
    with pytest.raises(ValueError, match="replicat"):
        jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(ROW, ROW), out_specs=P()))(*args)


# ------------------------------------------------------------- failures: status and NaN


def _outputs(fn, form, a, mesh, lower):
    """(status as an int array, every returned array) of one call that may fail."""
    b = rhs(a.shape[0], a.dtype, 2)
    kw = dict(lower=lower, return_logdet=True) if fn == "potrs" else dict(lower=lower)
    outs = run_global(fn, a, b, 2, mesh, **kw) if form == "global" else \
        run_local(fn, mesh, a, b, T_A=2, **kw)
    return np.atleast_1d(np.asarray(outs[-1])), outs[:-1]


def fail_mesh(devices, form):
    """Failure and triangle tests: global forms on an Auto mesh, shard_map forms on an Explicit
    one (both kinds see the failure paths; the sweeps above cover both kinds anyway)."""
    return make_mesh(devices, "auto" if form == "global" else "explicit")


@UPLO
@pytest.mark.parametrize("form", ["global", "shardmap"])
@pytest.mark.parametrize("fn", FNS)
def test_not_positive_definite_gives_lapack_info_and_nan(fn, form, lower, devices):
    mesh, n = fail_mesh(devices, form), 4 * len(devices)
    for k in (0, n // 2 + 1, n - 1):
        for a in (diag(n, np.float64), hpd(n, np.float64)):
            a = a.copy()
            a[k, k] = -1  # the leading minor of order k + 1 is the first one not PD
            status, outs = _outputs(fn, form, a, mesh, lower)
            assert (status == k + 1).all(), (k, status)
            assert_all_nan(*outs)


@pytest.mark.parametrize("where", ["diagonal", "off-diagonal"])
@UPLO
@pytest.mark.parametrize("form", ["global", "shardmap"])
@pytest.mark.parametrize("fn", FNS)
def test_nan_in_read_triangle_gives_status_and_nan(fn, form, lower, where, devices):
    mesh, n = fail_mesh(devices, form), 4 * len(devices)
    a = hpd(n, np.complex128)
    i, j = (3, 3) if where == "diagonal" else (n - 2, 1)
    a[(i, j) if lower else (j, i)] = np.nan
    status, outs = _outputs(fn, form, a, mesh, lower)
    assert (status > 0).all(), status
    assert_all_nan(*outs)


# -------------------------------------------------------- only the chosen triangle is read


def with_garbage(a, lower):
    """a with large random values (and a NaN, an Inf) in the strict triangle not read."""
    g, n = a.copy(), a.shape[0]
    junk = 1e3 * randn(np.random.default_rng(7), (n, n), a.dtype)
    mask = np.triu(np.ones((n, n), bool), 1) if lower else np.tril(np.ones((n, n), bool), -1)
    g[mask] = junk[mask]
    g[(0, n - 1) if lower else (n - 1, 0)] = np.nan
    g[(1, n - 2) if lower else (n - 2, 1)] = np.inf
    return g


@UPLO
@pytest.mark.parametrize("form", ["global", "shardmap"])
@pytest.mark.parametrize("fn", FNS)
def test_other_triangle_is_never_read(fn, form, lower, devices):
    mesh, n = fail_mesh(devices, form), 8 * len(devices)
    a, b = hpd(n, np.complex128), rhs(n, np.complex128)
    if form == "global":
        out, status = run_global(fn, with_garbage(a, lower), b, 4, mesh, lower=lower)
    else:
        out, status = run_local(fn, mesh, with_garbage(a, lower), b, lower=lower)
    assert (np.asarray(status) == 0).all()
    check(fn, out, a, b, lower, triangle_only=form == "shardmap")


@pytest.mark.parametrize("form", ["global", "shardmap"])
@pytest.mark.parametrize("fn", FNS)
def test_jaxmg_0x_upper_entry_only_fails_the_upper_call(fn, form, devices):
    """jaxmg 0.x's case: diag(1..N) with A[0, 1] = 2 in the upper triangle."""
    mesh, n = fail_mesh(devices, form), 4 * len(devices)
    a = diag(n, np.float64)
    a[0, 1] = 2  # upper minor [[1, 2], [2, 2]] is indefinite: info 2
    status, outs = _outputs(fn, form, a, mesh, lower=False)
    assert (status > 0).all(), status
    assert_all_nan(*outs)
    status, outs = _outputs(fn, form, a, mesh, lower=True)
    assert (status == 0).all(), status
    d = np.arange(1.0, n + 1)
    if fn == "potrs":
        b = rhs(n, np.float64, 2)
        assert np.allclose(outs[0], b / d[:, None], rtol=1e-13)
        assert np.isclose(np.asarray(outs[1]).ravel()[0], np.log(d).sum(), rtol=1e-13)
    else:
        full = np.asarray(outs[0])
        want = np.diag(1 / d if fn == "potri" else np.sqrt(d))
        if fn == "potri" and form == "shardmap":
            full = tj.potri_symmetrize(full, lower=True)
        assert np.allclose(full, want, rtol=1e-13, atol=0)


# ------------------------------------------------------------------ jit form, in_specs forms


@pytest.mark.parametrize("fn", FNS)
def test_jit_form(fn, mesh, devices):
    """Inside jax.jit with mesh and in_specs given; on an Explicit mesh, where traced arrays
    carry their sharding, x keeps b's layout there too."""
    n = 8 * len(devices)
    a, b = hpd(n, np.float64), rhs(n, np.float64)
    f = getattr(tj, fn)
    g = jax.jit(lambda *x: f(*x, 4, mesh, ROW, return_status=True))
    for spec in (P(None, None), ROW)[:2 if fn == "potrs" else 1]:
        args = (put(a, mesh, ROW),) + ((put(b, mesh, spec),) if fn == "potrs" else ())
        out, status = g(*args)
        assert int(status) == 0
        check(fn, out, a, b)
        if fn == "potrs" and "Explicit" in str(mesh.axis_types):
            assert sharded_like(out, mesh, spec), out.sharding


def test_jit_without_mesh_reads_it_from_a(mesh, devices):
    """Inside jit, without mesh=, the mesh is read from the traced A's type (its abstract mesh),
    and the row spec too on a mesh of Explicit axes; on Auto axes, whose layouts jax does not
    type, the call asks for in_specs (a sentence, not an error from JAX's internals) and works
    with it."""
    n = 8 * len(devices)
    a, b = hpd(n, np.float64), rhs(n, np.float64)
    args = put(a, mesh, ROW), put(b, mesh, P())
    if "Explicit" in str(mesh.axis_types):
        check("potrs", jax.jit(lambda a_, b_: tj.potrs(a_, b_, 4))(*args), a, b)
        check("cholesky", jax.jit(lambda a_: tj.cholesky(a_, 4))(args[0]), a)
    else:
        with pytest.raises(ValueError, match=r"tessera\.jax\.potrs: inside jax\.jit .* pass "
                           r"in_specs="):
            jax.jit(lambda a_, b_: tj.potrs(a_, b_, 4))(*args)
    check("potrs", jax.jit(lambda a_, b_: tj.potrs(a_, b_, 4, in_specs=ROW))(*args), a, b)
    with pytest.raises(ValueError, match=r"inside jax\.jit .* carries no mesh .* pass mesh="):
        jax.jit(lambda a_, b_: tj.potrs(a_, b_, 4))(a, b)


SPEC_FORMS = {
    "P": dict(in_specs=ROW),
    "1-tuple": dict(in_specs=(ROW,)),
    "jaxmg-0.x-pair": dict(in_specs=(ROW, P(None, None))),
    "matrix_specs": dict(matrix_specs=ROW),
    "inferred": dict(),
}


@pytest.mark.parametrize("form", list(SPEC_FORMS))
@pytest.mark.parametrize("fn", FNS)
def test_in_specs_forms(fn, form, mesh, devices):
    n = 4 * len(devices)
    a, b = hpd(n, np.float64), rhs(n, np.float64)
    kw = dict(SPEC_FORMS[form])
    if kw:
        kw["mesh"] = mesh
    args = (put(a, mesh, ROW),) + ((b,) if fn == "potrs" else ())
    out, status = getattr(tj, fn)(*args, 2, return_status=True, **kw)
    assert int(status) == 0
    check(fn, out, a, b)


# --------------------------------------------------------------------- b's shape and layout


@pytest.mark.parametrize("b_shape", ["1d", "2d"])
@pytest.mark.parametrize("b_rows,even", [(False, True), (False, False), (True, True)],
                         ids=["b-replicated", "b-replicated-N-uneven", "b-rows"])
def test_solution_comes_back_in_b_layout(b_rows, even, b_shape, mesh, devices):
    """A row-sharded b needs N divisible by the device count; x is laid out like b."""
    ndev = len(devices)
    n = 6 * ndev if even else 4 * ndev + 3
    a, b = hpd(n, np.float32), rhs(n, np.float32, None if b_shape == "1d" else 2)
    spec = P("x" if b_rows else None, *[None] * (b.ndim - 1))
    a_in = put(a, mesh, ROW) if n % ndev == 0 else a
    x = tj.potrs(a_in, put(b, mesh, spec), 3, mesh, ROW)
    assert x.shape == b.shape and x.dtype == b.dtype
    assert sharded_like(x, mesh, spec), x.sharding
    check("potrs", x, a, b)


@pytest.mark.parametrize("b_spec", [P(None, None), ROW], ids=["b-replicated", "b-rows"])
@pytest.mark.parametrize("fn", ["potrs", "lu_solve"])
def test_solution_comes_back_in_b_layout_inside_jit(fn, b_spec, mesh, devices):
    """Inside the caller's jax.jit, x is laid out as b there too: on an Auto mesh, where b's
    layout is XLA's choice when the caller's function compiles, as on an Explicit one."""
    n = 4 * len(devices)
    a, b = hpd(n, np.float64), rhs(n, np.float64)
    f = getattr(tj, fn)
    x = jax.jit(lambda a_, b_: f(a_, b_, 2, mesh, ROW))(put(a, mesh, ROW), put(b, mesh, b_spec))
    if _common.shard_alike is None and len(devices) > 1 and not tj._layout.explicit(mesh):
        pytest.skip("this jax has no shard_alike: on an Auto mesh x's layout is XLA's choice")
    assert sharded_like(x, mesh, b_spec), x.sharding
    assert backward_error(a, x, b) < tol(np.float64, n)


@pytest.mark.parametrize("fn", ["potri", "cholesky"])
def test_factor_and_inverse_come_back_in_rows_inside_jit(fn, mesh, devices):
    n = 4 * len(devices)
    a = hpd(n, np.float64)
    out = jax.jit(lambda a_: getattr(tj, fn)(a_, 2, mesh, ROW))(put(a, mesh, ROW))
    assert sharded_like(out, mesh, ROW), out.sharding
    check(fn, out, a)


# ---------------------------------------------------------------- reuse, donation, logdet


@pytest.mark.parametrize("fn", FNS)
def test_inputs_unchanged_and_calls_repeatable(fn, mesh, devices):
    n = 4 * len(devices)
    a, b = hpd(n, np.complex64), rhs(n, np.complex64)
    a_in, b_in = put(a, mesh, ROW), put(b, mesh, P())
    # the same result to rounding: a call small for its mesh may run on one device from one
    # call to the next (python/ffi/small.c), another order of the same operations
    same = functools.partial(np.testing.assert_allclose, rtol=tol(np.complex64, n), atol=0)
    first, _ = run_global(fn, a_in, b_in, 2, mesh)
    second, _ = run_global(fn, a_in, b_in, 2, mesh)
    same(np.asarray(first), np.asarray(second))
    np.testing.assert_array_equal(np.asarray(a_in), a)
    np.testing.assert_array_equal(np.asarray(b_in), b)
    assert not a_in.is_deleted() and not b_in.is_deleted()
    # the shard_map form, inside a jit that donates nothing, leaves its inputs alone too
    first, second = (run_local(fn, mesh, a_in, b_in, T_A=2)[0] for _ in range(2))
    same(np.asarray(first), np.asarray(second))
    np.testing.assert_array_equal(np.asarray(a_in), a)
    np.testing.assert_array_equal(np.asarray(b_in), b)


@pytest.mark.parametrize("fn", FNS)
def test_donate(fn, mesh, devices):
    n = 4 * len(devices)
    a, b = hpd(n, np.float64), rhs(n, np.float64)
    a_in = put(a, mesh, ROW)
    out, status = run_global(fn, a_in, put(b, mesh, P()), 2, mesh, donate=True)
    assert int(status) == 0
    check(fn, out, a, b)
    assert a_in.is_deleted()  # A's buffer went to the call


DONATED = {  # id: (A, b) of order n as the call gets them, given the mesh
    "placed-b-replicated": lambda a, b, mesh: (put(a, mesh, ROW), put(b, mesh, P())),
    "placed-b-rows": lambda a, b, mesh: (put(a, mesh, ROW), put(b, mesh, ROW)),
    "unplaced": lambda a, b, mesh: (jnp.asarray(a), jnp.asarray(b)),
    "numpy": lambda a, b, mesh: (a, b),
    "a-replicated": lambda a, b, mesh: (put(a, mesh, P()), put(b, mesh, ROW)),
    "b-other-dtype": lambda a, b, mesh: (put(a, mesh, ROW), put(b.astype(np.float32), mesh, ROW)),
}


@pytest.mark.parametrize("callers_jit", [False, True], ids=["call", "in-callers-jit"])
@pytest.mark.parametrize("case", list(DONATED))
@pytest.mark.parametrize("fn", FNS + ["lu_solve"])
def test_donate_any_placement(fn, case, callers_jit, mesh, devices):
    """donate=True works whatever A's and b's placement (jaxmg 1.x's tj.potrs(jnp.eye(8) * 2,
    jnp.ones((8, 1)), 2, jax.make_mesh(...), P("x", None), donate=True)), called directly or
    inside the caller's jax.jit that donates them too: aliased where the input's buffer can
    hold the result, left alone where it cannot."""
    n = 4 * len(devices)
    a, b = hpd(n, np.float64), rhs(n, np.float64, 1)
    a_in, b_in = DONATED[case](a, b, mesh)
    b_host = np.asarray(b_in)  # before b's buffer goes to the call
    solve = fn in ("potrs", "lu_solve")
    args = (a_in, b_in) if solve else (a_in,)

    def call(*xs):
        return getattr(tj, fn)(*xs, 2, mesh, ROW, donate=True)

    with warnings.catch_warnings():
        # The caller's jit warns where it donates A and returns nothing of A's shape: that
        # donation is the caller's, not the call's.
        warnings.filterwarnings("ignore", "Some donated buffers were not usable")
        out = (jax.jit(call, donate_argnums=tuple(range(len(args)))) if callers_jit else
               call)(*args)
    if solve:
        assert backward_error(a, out, b_host) < tol(np.float32, n)
    else:
        check(fn, out, a)


@DTYPE
def test_logdet_matches_slogdet(dtype, devices):
    mesh, n = make_mesh(devices, "auto"), 37
    a, b = hpd(n, dtype), rhs(n, dtype)
    for lower in (False, True):
        x, logdet = tj.potrs(a, b, 5, mesh, ROW, return_logdet=True, lower=lower)
        sign, ref = jnp.linalg.slogdet(jnp.asarray(hi(a)))
        assert logdet.shape == () and logdet.dtype == np.finfo(dtype).dtype
        assert abs(float(logdet) - float(ref)) <= tol(dtype, n) * max(1.0, abs(float(ref)))
        check("potrs", x, a, b, lower)


def test_return_tuples(devices):
    mesh, n = make_mesh(devices, "auto"), 4 * len(devices)
    a, b = hpd(n, np.float64), rhs(n, np.float64)
    x = tj.potrs(a, b, 2, mesh, ROW)
    assert isinstance(x, jax.Array) and x.shape == b.shape
    for status in (False, True):
        for logdet in (False, True):
            out = tj.potrs(a, b, 2, mesh, ROW, return_status=status, return_logdet=logdet)
            if not (status or logdet):
                out = (out,)
            assert isinstance(out, tuple) and len(out) == 1 + status + logdet
            # to rounding: the call may take one device from one call to the next (small.c)
            np.testing.assert_allclose(np.asarray(out[0]), np.asarray(x),
                                       rtol=tol(np.float64, n), atol=0)
            if logdet:
                assert out[1].shape == () and np.isfinite(out[1])
            if status:
                assert out[-1].shape == () and out[-1].dtype == np.int32 and int(out[-1]) == 0
    for fn in ("potri", "cholesky"):
        out = getattr(tj, fn)(a, 2, mesh, ROW)
        assert isinstance(out, jax.Array) and out.shape == (n, n)
        out = getattr(tj, fn)(a, 2, mesh, ROW, return_status=True)
        assert isinstance(out, tuple) and len(out) == 2 and int(out[1]) == 0


# ------------------------------------------------------------------------------------ errors

# id: (case(c) -> (a, T_A, mesh, in_specs[, kwargs]), exception, message regex), for every
# global function; c.a: a well-formed A, c.mesh: the 1D mesh, c.mesh2: a 2 x (ndev/2) mesh.


MESH2 = [((2, 2), "explicit"), ((2, 2), "auto"), ((1, 4), "auto"), ((4, 1), "explicit")]


# Every function on every mesh and order, the dtype rotating between them (each mesh meets
# every dtype over the functions): the 2D layout's handling does not depend on the dtype.
GRID = [(fn, DTYPES[(i + j + k) % 4], n, shape, kind) for i, fn in enumerate(FNS + ["lu_solve"])
        for j, n in enumerate([16, 37]) for k, (shape, kind) in enumerate(MESH2)]


@pytest.mark.parametrize("fn,dtype,n,shape,kind", GRID,
                         ids=[f"{fn}-{np.dtype(dt).name}-{n}-{r}x{c}-{kind}"
                              for fn, dt, n, (r, c), kind in GRID])
def test_2d_mesh_matches_reference(fn, dtype, n, shape, kind, devices):
    """A sharded by rows and columns over a 2D mesh (P("x", "y"), jaxmg 1.x's process grid),
    given or read from A's sharding: the results of the 1D mesh's, x in b's layout."""
    if len(devices) < 4:
        pytest.skip("a 2D mesh needs 4 devices")
    types = (jax.sharding.AxisType.Explicit,) * 2 if kind == "explicit" else \
        (jax.sharding.AxisType.Auto,) * 2
    mesh = jax.make_mesh(shape, ("x", "y"), devices=devices[:4], axis_types=types)
    a = hpd(n, dtype)
    b = rhs(n, dtype)
    args = (a, b) if fn in ("potrs", "lu_solve") else (a,)
    out, status = getattr(tj, fn)(*args, 4, mesh, P("x", "y"), return_status=True)
    assert int(status) == 0
    if fn == "lu_solve":
        assert backward_error(a, np.asarray(out), b) < tol(dtype, n)
    else:
        check(fn, out, a, b)
    if n % 4 == 0:  # read from A's sharding, b's rows sharded: x comes back in b's layout
        ga, gb = put(a, mesh, P("x", "y")), put(b, mesh, P("x", None))
        x = getattr(tj, fn)(ga, gb, 4) if fn in ("potrs", "lu_solve") else getattr(tj, fn)(ga, 4)
        if fn in ("potrs", "lu_solve"):
            assert shape[0] == 1 or x.sharding.spec[0] == "x"
            assert backward_error(a, np.asarray(x), b) < tol(dtype, n)
        else:
            check(fn, x, a, b)


@pytest.mark.parametrize("shape", [(2, 2), (4, 1), (1, 4)], ids=lambda s: f"{s[0]}x{s[1]}")
@DTYPE
@pytest.mark.parametrize("fn", FNS + ["lu_solve"])
def test_shardmap_forms_on_a_2d_mesh(fn, dtype, shape, devices):
    """The shardmap forms on a 2D mesh (A's block per device, P("x", "y")), b whole or this
    device's rows, the axes inferred or named: the results of the global forms."""
    if len(devices) < 4:
        pytest.skip("a 2D mesh needs 4 devices")
    mesh = jax.make_mesh(shape, ("x", "y"), devices=devices[:4],
                         axis_types=(jax.sharding.AxisType.Explicit,) * 2)
    n = 16
    a, b = hpd(n, dtype), rhs(n, dtype)
    ctx = getattr(tj, fn + "_shardmap_ctx")
    for b_rows, kw in ((False, {}), (True, {"axis_name": ("x", "y")})):
        if fn in ("potrs", "lu_solve"):
            def body(a_, b_):
                x, st = ctx(a_, b_, 4, **kw)
                return x, st
            bspec = P("x", None) if b_rows else P()
            f = jax.shard_map(body, mesh=mesh, in_specs=(P("x", "y"), bspec),
                              out_specs=(bspec, P()))
            x, st = jax.jit(f)(put(a, mesh, P("x", "y")), put(b, mesh, bspec))
            assert int(st[0]) == 0
            assert backward_error(a, np.asarray(x), b) < tol(dtype, n)
        else:
            f = jax.shard_map(lambda a_: ctx(a_, 4, **kw), mesh=mesh,
                              in_specs=P("x", "y"), out_specs=(P("x", "y"), P()))
            out, st = jax.jit(f)(put(a, mesh, P("x", "y")))
            assert int(st[0]) == 0
            out = np.asarray(out)
            if fn == "potri":
                out = np.asarray(tj.potri_symmetrize(out))
            check(fn, out, a, b, triangle_only=False)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@UPLO
def test_potrs_mixed_precision_factor(dtype, lower, devices):
    """potrs(mixed="s"): A factored in single precision, x refined to A's precision (the
    working precision's tolerance); mixed=... is refused with return_logdet and for an unknown
    precision; a BF16 factor on tensor cores on GPUs, a negative status and NaN without."""
    mesh = make_mesh(devices, "explicit")
    n = 12 * len(devices) + 5
    a, b = hpd(n, dtype), rhs(n, dtype, 2)
    x, status = tj.potrs(a, b, 3, mesh, P("x", None), return_status=True, lower=lower, mixed="s")
    assert int(status) == 0
    check("potrs", x, a, b, lower)
    with pytest.raises(ValueError, match="return_logdet"):
        tj.potrs(a, b, 3, mesh, P("x", None), return_logdet=True, mixed="s")
    with pytest.raises(ValueError, match="not a factor precision"):
        tj.potrs(a, b, 3, mesh, P("x", None), mixed="fp8")
    x, status = tj.potrs(a, b, 3, mesh, P("x", None), return_status=True, mixed="bf16")
    if devices[0].platform == "cpu":
        assert int(status) < 0
        assert_all_nan(x)
    else:
        assert int(status) == 0
        check("potrs", x, a, b)
