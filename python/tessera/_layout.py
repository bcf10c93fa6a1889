"""Where a call's matrix lives and how it is cut: the mesh and row axis of a call (given, or
read from the array's sharding), the checks that run before anything does, and the plan (shard
width, tile, padding) a shape gets."""
import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.complex64),
          np.dtype(np.complex128))


@dataclass(frozen=True)
class Layout:
    """How A is sharded: the mesh, the axis A's rows are split over and, on a 2D mesh, the axis
    its columns are split over; the mesh's devices (ndev = grows x gcols), the platform, and the
    process of each device (jax's process index, rows axis major), which may be several."""
    mesh: object
    axis: str
    ndev: int
    platform: str  # "cpu" or "gpu"
    col_axis: str = None
    gcols: int = 1
    owners: tuple = ()

    @property
    def grows(self):
        return self.ndev // self.gcols

    @property
    def span(self):
        """The padded order is a multiple of this times the tile: lcm(grows, gcols)."""
        return math.lcm(self.grows, self.gcols)

    @property
    def spans_processes(self):
        return len(set(self.owners)) > 1

    @property
    def a_spec(self):
        """A's layout: rows over the row axis, and columns over the column axis on a 2D mesh."""
        return P(self.axis, self.col_axis)

    def spec(self, *rest):
        """The layout of a right-hand side (rows over the row axis, whole over the others)."""
        return P(self.axis, *rest)

    def constrain(self, x, spec):
        """x laid out as `spec` on the mesh (reshard for Explicit axes, a constraint for Auto)."""
        s = NamedSharding(self.mesh, spec)
        return jax.reshard(x, s) if explicit(self.mesh) else jax.lax.with_sharding_constraint(x, s)


def explicit(mesh):
    """Whether the mesh's axes are Explicit: jax then types each array's layout, reshard moves
    it, and an operation mixing two layouts is an error."""
    return any(str(t).endswith("Explicit") for t in getattr(mesh, "axis_types", ()))


def _normalize_spec(spec, name):
    """One PartitionSpec from the forms jaxmg accepts: P, (P,), or jaxmg 0.x's pair
    (P("x", None), P(None, None))."""
    if isinstance(spec, (tuple, list)) and not isinstance(spec, P):
        if len(spec) == 1:
            spec = spec[0]
        elif len(spec) == 2 and isinstance(spec[1], P) and all(s is None for s in spec[1]):
            spec = spec[0]
        else:
            raise ValueError(f"{name}: in_specs must be a PartitionSpec, a 1-tuple of one, or the "
                             f"pair (P(axis, None), P(None, None)); got {spec!r}")
    if not isinstance(spec, P):
        raise ValueError(f"{name}: in_specs must be a PartitionSpec such as P('x', None); "
                         f"got {spec!r}")
    return spec


def _array_sharding(a):
    """a's sharding: a jax.Array's, a traced array's type's (inside jax.jit), else None."""
    s = getattr(a, "sharding", None)
    if s is None and isinstance(a, jax.core.Tracer):
        try:
            s = jax.typeof(a).sharding
        except Exception:
            s = None
    return s


def _missing_layout(a, mesh, spec, name):
    """The error's sentence when a call's mesh or row spec is neither given nor read from A:
    why it cannot be read in A's situation, and what to pass."""
    axis = mesh.axis_names[0] if getattr(mesh, "axis_names", None) else "x"
    need = [(arg, ex) for arg, ex, have in
            (("mesh=", "mesh=jax.make_mesh((jax.device_count(),), ('x',))", mesh),
             ("in_specs=", f"in_specs=P({axis!r}, None)", spec)) if have is None]
    todo = (f"pass {' and '.join(arg for arg, _ in need)} (for example "
            f"{' and '.join(ex for _, ex in need)})")
    if isinstance(a, jax.core.Tracer):
        what = ("no mesh (its arguments were not placed on one)" if mesh is None else
                "no row sharding to read in_specs from (jax types a layout on a mesh of "
                "Explicit axes only)")
        return (f"{name}: inside jax.jit (or another transformation) A is a traced array, "
                f"which carries {what}: {todo}.")
    s = getattr(a, "sharding", None)
    kind = (f"a jax.Array placed with {type(s).__name__}, not split by rows over a mesh"
            if isinstance(a, jax.Array) else
            f"a {type(a).__module__}.{type(a).__name__}, which carries no sharding")
    return (f"{name}: A is {kind}, so the mesh and row axis cannot be read from it (they are "
            f"read from a jax.Array placed with a NamedSharding when not given): {todo}, or "
            f"place A first with jax.device_put(a, NamedSharding(mesh, P({axis!r}, None))).")


def _abstract(mesh):
    """Whether `mesh` is a mesh without devices: a traced array's, inside jax.jit."""
    return isinstance(mesh, jax.sharding.AbstractMesh)


def _platform_of(mesh, name):
    """"cpu" or "gpu": the platform of the mesh's devices (of its abstract device for an
    abstract mesh, else jax's default backend)."""
    if _abstract(mesh):
        dev = getattr(mesh, "abstract_device", None)
        platforms = {getattr(dev, "platform", None) or jax.default_backend()}
    else:
        platforms = {d.platform for d in mesh.devices.flat}
    if len(platforms) != 1 or not platforms <= {"cpu", "gpu", "cuda"}:
        raise ValueError(f"{name}: the mesh's devices must all be CPUs or all GPUs; got "
                         f"{sorted(platforms)}")
    return "cpu" if "cpu" in platforms else "gpu"


def resolve(a, mesh, spec, name):
    """The Layout of a call: the mesh and spec given, else those of a's NamedSharding. Inside
    jax.jit, a traced A's type carries an abstract mesh (its axes, not its devices) and, on a mesh
    of Explicit axes, A's row spec: the call then runs on that abstract mesh, and XLA places it
    on the devices of the caller's arguments when the caller's function compiles."""
    if spec is None or mesh is None:
        s = _array_sharding(a)
        if isinstance(s, NamedSharding) and s.mesh.axis_names:
            # a traced array's type names the row axis on Explicit axes only (P() otherwise)
            if spec is None and (not _abstract(s.mesh) or any(ax is not None for ax in s.spec)):
                spec = s.spec
            mesh = s.mesh if mesh is None else mesh
    if mesh is None or spec is None:
        raise ValueError(_missing_layout(a, mesh, spec, name))
    spec = _normalize_spec(spec, name)
    axes = [ax[0] if isinstance(ax, (tuple, list)) and len(ax) == 1 else ax for ax in spec]
    axis = axes[0] if axes else None
    col_axis = axes[1] if len(axes) > 1 else None
    if not isinstance(axis, str) or (col_axis is not None and not isinstance(col_axis, str)) \
            or col_axis == axis or any(ax is not None for ax in axes[2:]):
        raise ValueError(f"{name}: A must be sharded by rows over one mesh axis, as "
                         f"P('x', None), or by rows and columns over two, as P('x', 'y'); got "
                         f"{spec!r}")
    if (_abstract(mesh) and not isinstance(a, jax.core.Tracer)) or \
            not hasattr(mesh, "axis_names"):
        raise ValueError(f"{name}: the mesh given has no devices (an abstract mesh serves only "
                         "inside jax.jit, for a traced A); pass mesh= (a jax.sharding.Mesh)")
    for ax in (axis, col_axis):
        if ax is not None and ax not in mesh.axis_names:
            raise ValueError(f"{name}: axis {ax!r} is not an axis of the mesh {mesh.axis_names}")
    others = {k: v for k, v in mesh.shape.items() if k not in (axis, col_axis) and v != 1}
    if others:
        raise ValueError(f"{name}: axes {others} besides {axis!r}"
                         + (f" and {col_axis!r}" if col_axis else "")
                         + " must have size 1 (A is split over those only)")
    platform = _platform_of(mesh, name)
    gcols = mesh.shape[col_axis] if col_axis else 1
    if _abstract(mesh):
        ndev = mesh.shape[axis] * gcols
        owners = local_owners(ndev, None, name, platform=platform)
    else:
        grid = _devices_by_axes(mesh, (axis, col_axis)).reshape(-1, gcols)
        ndev, owners = grid.size, tuple(int(d.process_index) for d in grid.flat)
        check_processes(owners, name)
    return Layout(mesh, axis, ndev, platform, col_axis, gcols, owners)


def _devices_by_axes(mesh, axes):
    """The mesh's devices with the axes named in `axes` (None entries skipped) first, in that
    order, then the others: flattened, the row axis major."""
    names = list(mesh.axis_names)
    order = [names.index(ax) for ax in axes if ax is not None and ax in names]
    order += [i for i in range(len(names)) if i not in order]
    return np.transpose(np.asarray(mesh.devices), order)


def check_processes(owners, name):
    """A mesh over several processes holds devices of every process of the program: each one
    takes part in the call."""
    procs = set(owners)
    if len(procs) > 1 and procs != set(range(jax.process_count())):
        missing = sorted(set(range(jax.process_count())) - procs)
        raise ValueError(f"{name}: the mesh holds devices of processes {sorted(procs)} but not of "
                         f"{missing}: a mesh that spans processes must hold devices of every "
                         "process of the program, each of which makes the call")
    if jax.process_index() not in procs:
        raise ValueError(f"{name}: the mesh holds none of this process's devices")


def local_owners(ndev, mesh, name, axes=None, platform=None):
    """Inside the user's shard_map (or on a traced array's abstract mesh), the process of each
    of the mesh's ndev devices (row axis major): from `mesh` when given (its `axes`, the row and
    column axes, first), else jax's device order of `platform` (default: the shard_map's) (a
    mesh over all of jax's devices, as jax.make_mesh lays one out)."""
    if mesh is not None:
        owners = tuple(int(d.process_index) for d in _devices_by_axes(mesh, axes or ()).flat)
    elif jax.process_count() == 1:
        owners = (jax.process_index(),) * ndev
    else:
        devs = jax.devices(platform or local_platform())
        if len(devs) != ndev:
            raise ValueError(f"{name}: the mesh has {ndev} devices of jax's {len(devs)} "
                             "across the processes: pass mesh= (a jax.sharding.Mesh) so that "
                             "each device's process is known")
        owners = tuple(int(d.process_index) for d in devs)
    if len(owners) != ndev:
        raise ValueError(f"{name}: the mesh given has {len(owners)} devices, the axis {ndev}")
    check_processes(owners, name)
    return owners


def _manual_axes():
    """The manual mesh axes here, with their sizes: those of the jax.shard_map being traced
    (none outside one)."""
    am = jax.sharding.get_abstract_mesh()
    return {ax: size for ax, size, t in zip(am.axis_names, am.axis_sizes, am.axis_types)
            if str(t).endswith("Manual")}


def refuse_shard_map(a, name, local):
    """The global forms take the whole matrix and run their own shard_map: inside the user's,
    where A is one device's block, they raise and name the shardmap form `local`."""
    if _manual_axes():
        shape = " x ".join(map(str, getattr(a, "shape", ())))
        raise ValueError(f"{name}: called inside jax.shard_map, where A ({shape}) is this "
                         f"device's block of the matrix, not the whole of it: call {local} "
                         f"there, which takes this device's rows of A, or call {name} outside "
                         "shard_map on the whole matrix.")


def local_layout(axis_name, name, varying=()):
    """Inside the user's shard_map: the row axis and, on a 2D mesh, the column axis (given as
    axis_name, a name or a (rows, columns) pair; else the manual axes A's block varies over
    (`varying`, known with shard_map's check_vma on), or those of more than one device, in the
    mesh's order), with their sizes: (axis, rows' size, column axis or None, its size)."""
    sizes = _manual_axes()
    manual = list(sizes)
    if not manual:
        raise ValueError(f"{name}: call it inside jax.shard_map (no manual mesh axis here)")
    if axis_name is None:
        big = [ax for ax in manual if ax in varying] or \
            [ax for ax in manual if sizes[ax] > 1] or manual[:1]
        if len(big) > 2:
            raise ValueError(f"{name}: {len(big)} mesh axes of several devices {big}; pass "
                             "axis_name= (the row axis, or the (row, column) pair)")
        axis_name = tuple(big)
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    if not 1 <= len(names) <= 2 or len(set(names)) != len(names):
        raise ValueError(f"{name}: axis_name must name the row axis or the (row, column) pair; "
                         f"got {axis_name!r}")
    for ax in names:
        if ax not in manual:
            raise ValueError(f"{name}: {ax!r} is not a manual axis of the shard_map ({manual})")
    others = [ax for ax in manual if ax not in names and sizes[ax] > 1]
    if others:
        raise ValueError(f"{name}: axes {others} besides {list(names)} must have size 1 (A is "
                         "split over those only)")
    col = names[1] if len(names) == 2 else None
    return names[0], sizes[names[0]], col, sizes[col] if col else 1


def check_tile(T_A, name):
    if isinstance(T_A, bool) or not isinstance(T_A, (int, np.integer)) or T_A < 1:
        raise ValueError(f"{name}: T_A must be an integer >= 1; got {T_A!r}")


def check_matrix(a, name, rows=None, local=None):
    """A is 2-D, square (or `rows` x N for a shard), of a supported dtype; returns N. A non-square
    A shaped as one device's rows of a square matrix gets the shardmap form `local` named."""
    shape = tuple(getattr(a, "shape", ()))
    if len(shape) != 2:
        raise ValueError(f"{name}: A must be a 2-D matrix; got shape {shape}")
    if rows is None and shape[0] != shape[1]:
        r, c = shape
        hint = (f": if it is one device's {r} rows of the {c} x {c} matrix, call {local} inside "
                "jax.shard_map, or pass the whole matrix" if local and 0 < r < c and c % r == 0
                else "")
        raise ValueError(f"{name}: A must be square; got {r} x {c}{hint}.")
    dt = np.dtype(a.dtype)
    if dt not in DTYPES:
        raise TypeError(f"{name}: A's dtype {dt} is not supported (float32, float64, complex64 "
                        "or complex128)")
    return shape[1]


def check_block(a, name):
    """Inside shard_map, A's block is 2-D of a supported dtype; returns its (rows, columns)."""
    shape = tuple(getattr(a, "shape", ()))
    if len(shape) != 2:
        raise ValueError(f"{name}: A must be a 2-D matrix; got shape {shape}")
    dt = np.dtype(a.dtype)
    if dt not in DTYPES:
        raise TypeError(f"{name}: A's dtype {dt} is not supported (float32, float64, complex64 "
                        "or complex128)")
    return shape


def check_rhs(b, n, dtype, name, rows=None, dim="N", of=""):
    """b is (N,) or (N, k) (or this device's `rows` rows) of numbers that A's dtype holds: it is
    cast to A's dtype, as jnp.linalg.solve casts a NumPy float64 b with jax's 64-bit types off
    (complex b is refused for real A, whose cast would drop its imaginary part); `dim` and `of`
    name N in the message (least squares: "M", ", A's rows")."""
    shape = tuple(getattr(b, "shape", ()))
    want = (n, rows) if rows is not None else (n,)
    if len(shape) not in (1, 2) or shape[0] not in want:
        raise ValueError(f"{name}: b must be ({dim},) or ({dim}, k) with {dim} = {n}{of}"
                         + (f" (or this device's {rows} rows)" if rows is not None else "")
                         + f"; got shape {shape}")
    bt = np.dtype(b.dtype)
    if bt.kind not in "biufc" or (bt.kind == "c" and np.dtype(dtype).kind != "c"):
        raise TypeError(f"{name}: b's dtype {bt} does not cast to A's {dtype}"
                        + (" without losing its imaginary part" if bt.kind == "c" else ""))


def best_divisor(w, target):
    """The divisor of w nearest `target` in ratio (the larger on a tie)."""
    best, score = w, max(w / target, target / w)
    for d in range(1, math.isqrt(w) + 1):
        if w % d:
            continue
        for c in (d, w // d):
            s = max(c / target, target / c)
            if s < score or (s == score and c > best):
                best, score = c, s
    return best


def plan(n, ndev, target, pad, name):
    """(shard width w, tile nb) for order n over ndev devices: nb divides w when ndev > 1, and
    ndev * w >= n (rows past n are padding). Without padding when n splits evenly into shards
    with a tile within a factor 2 of the target."""
    if ndev == 1:
        return n, min(target, n)
    w0 = -(-n // ndev)
    if w0 * ndev == n:
        d = best_divisor(w0, target)
        if 2 * d >= min(target, w0):
            return w0, d
    if not pad:
        raise ValueError(f"{name}: N = {n} over {ndev} devices needs padding to tile evenly; "
                         "pass pad=True")
    tiles = -(-w0 // target)
    nb = -(-w0 // tiles)
    return tiles * nb, nb


def real_dtype(dtype):
    return jnp.finfo(dtype).dtype


def local_platform():
    """Inside shard_map: "cpu" or "gpu", from the abstract mesh (else jax's default backend)."""
    dev = getattr(jax.sharding.get_abstract_mesh(), "abstract_device", None)
    platform = getattr(dev, "platform", None) or jax.default_backend()
    return "cpu" if platform == "cpu" else "gpu"
