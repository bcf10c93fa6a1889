"""The C side of the binding: libtessera_jax (XLA FFI handlers over libtessera), loaded with
ctypes at first use, one binding state for the process, and the FFI targets registered with
jax for the CPU and, where tessera was built with CUDA, the CUDA platform.

The library is TESSERA_JAX_LIBRARY where that is set (a file: anything else is refused), else
looked for next to this package (a wheel built by `pip install ./python`), then in a source
tree's build folder (TESSERA_BUILD_DIR, else ../../build/python relative to this file).

The operations' protocol is one table here, OPS: what each XLA FFI operation of libtessera_jax
takes and returns. jax.py builds every call from it, Native registers the handlers by it, and
the C side's handler table (python/ffi/handlers.c) is indexed the same way: Native checks at
load that the library's entry of each index has the same name and flags, so that neither side
can change alone.

Operands, in order: this device's shard of A (row-major: its rows on a 1D mesh, its block on a
2D one; with TRANSPOSED, its block of A transposed, which read column-major is the block of the
m x n A); the right-hand side when the operation has one, by its flags: RHS_ROWS this device's
rows of B (nl x k; with TRANSPOSED, transposed: k x nl), RHS_WHOLE_T the whole Bᵀ (k x Np) on
every device, SQUARE this device's block of an n x n matrix sharded as A (polar's H, gesvd's
Vᴴ), transposed as A's block; last, the device's place in the mesh (row * gcols + column, s32
scalar); with PIVOTS_IN, the pivots of an LU factorization (s32 (n,)) right after A's shard.
Results, in order: A's shard in place (aliased to operand 0: the factor or inverse; U_p, U),
with PIVOTS_OUT the pivots of the LU factorization left in A's shards (s32 (n,), the same on
every device), X in place (aliased to B's operand) when there is a right-hand side, log det (f64[1])
with LOGDET, the eigenvalues ((n,), A's real dtype; gesvd's singular values) with EIGEN, and
the status (s32[1]). Attributes: state, site, ndev, gcols, owners, n, tile; `lower` with LOWER,
`logdet` with LOGDET, `m` with TRANSPOSED, `vectors` with EIGEN or SQUARE, `mixed` with MIXED,
`trans` with PIVOTS_IN (tessera_jax.h describes them). Per device or the same on every device:
A's shard, RHS_ROWS' and SQUARE's X are this device's; the status, log det and eigenvalues are agreed by
every process, and RHS_WHOLE_T's X is mesh device 0's solution copied into every device's
buffer, so those are the same on every device (Op.results' per_device). Under jax.vmap every
operand and result carries the batch's axes first (the calls' vmap_method "broadcast_all"): one
call per device holds the whole batch."""
import atexit
import ctypes
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import jax
import numpy as np

# Flags of an operation, as TESSERA_JAX_* in python/ffi/tessera_jax.h.
RHS_ROWS = 1
RHS_WHOLE_T = 2
LOWER = 4
LOGDET = 8
TRANSPOSED = 16
EIGEN = 32
MIXED = 64
SQUARE = 128
PIVOTS_OUT = 256
PIVOTS_IN = 512


@dataclass(frozen=True)
class Op:
    """One operation: its name (FFI target tessera_<name>), its flags, and whether its tile is
    LU's column panel (else Cholesky's square tile)."""
    name: str
    flags: int
    lu: bool = False

    @property
    def target(self):
        return f"tessera_{self.name}"

    @property
    def rhs(self):
        return bool(self.flags & (RHS_ROWS | RHS_WHOLE_T | SQUARE))

    def operands(self, a, b, rank, piv=None):
        pivots = (piv,) if self.flags & PIVOTS_IN else ()
        return (a, *pivots, b, rank) if self.rhs else (a, *pivots, rank)

    def aliases(self):
        """Results written in place, {operand: result}: A's (and X's) buffers are the operands'."""
        if not self.rhs:
            return {0: 0}
        return {0: 0, 1 + bool(self.flags & PIVOTS_IN): 1 + bool(self.flags & PIVOTS_OUT)}

    def results(self, a, b, n=None):
        """(role, shape, dtype, per_device) of each result, in order; a and b give the shapes
        and dtypes of the matrix and right-hand side operands, n the order (EIGEN)."""
        out = [("a", a.shape, a.dtype, True)]
        if self.flags & PIVOTS_OUT:
            out.append(("piv", (n,), "int32", False))
        if self.rhs:
            out.append(("x", b.shape, b.dtype, bool(self.flags & (RHS_ROWS | SQUARE))))
        if self.flags & LOGDET:
            out.append(("logdet", (1,), "float64", False))
        if self.flags & EIGEN:
            out.append(("w", (n,), np.finfo(a.dtype).dtype, False))
        out.append(("status", (1,), "int32", False))
        return out

    def attributes(self, *, state, site, ndev, gcols, owners, n, tile, lower=False,
                   logdet=False, m=None, vectors=False, mixed=-1, trans=0):
        """The attributes this operation takes, as numpy values: XLA types them from these."""
        attrs = dict(state=np.uint64(state), site=np.int64(site), ndev=np.int64(ndev),
                     gcols=np.int64(gcols), owners=np.asarray(owners, np.int64),
                     n=np.int64(n), tile=np.int64(tile))
        if self.flags & LOWER:
            attrs["lower"] = np.int64(bool(lower))
        if self.flags & LOGDET:
            attrs["logdet"] = np.int64(bool(logdet))
        if self.flags & TRANSPOSED:
            attrs["m"] = np.int64(m)
        if self.flags & (EIGEN | SQUARE):
            attrs["vectors"] = np.int64(bool(vectors))
        if self.flags & MIXED:
            attrs["mixed"] = np.int64(mixed)
        if self.flags & PIVOTS_IN:
            attrs["trans"] = np.int64(trans)
        return attrs


# The operations; index i is the C handler table's entry i.
OPS = (
    Op("potrs", RHS_ROWS | LOWER | LOGDET | MIXED),
    Op("potri", LOWER),
    Op("cholesky", LOWER),
    Op("lu_solve", RHS_WHOLE_T | MIXED, lu=True),
    Op("qr", RHS_ROWS | TRANSPOSED),
    Op("least_squares", RHS_ROWS | TRANSPOSED),
    Op("syevd", EIGEN),
    Op("polar", TRANSPOSED | SQUARE),
    Op("gesvd", TRANSPOSED | SQUARE | EIGEN),
    Op("cho_solve", RHS_ROWS | LOWER),
    Op("cho_inverse", LOWER),
    Op("cho_first", RHS_ROWS | LOWER),
    Op("cho_second", RHS_ROWS | LOWER),
    Op("lu_factor", PIVOTS_OUT, lu=True),
    Op("lu_factored", RHS_WHOLE_T | PIVOTS_IN, lu=True),
)
BY_NAME = {op.name: op for op in OPS}

CPU, CUDA = 0, 1

_SET = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p,
                        ctypes.c_size_t)
_GET = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p,
                        ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t), ctypes.c_double)


class _Store(ctypes.Structure):
    """tessera_comm_store_t over jax.distributed's key-value store: how the processes of a
    program launched by jax.distributed alone meet (Gloo's rendezvous)."""
    _fields_ = [("arg", ctypes.c_void_p), ("set", _SET), ("get", _GET), ("rank", ctypes.c_int),
                ("size", ctypes.c_int), ("prefix", ctypes.c_char_p)]

    @classmethod
    def of_jax(cls):
        from jax._src import distributed
        client = distributed.global_state.client
        if client is None:
            raise RuntimeError("tessera.jax: jax spans several processes but jax.distributed's "
                               "client is not there to meet them through")

        def put(arg, key, value, length):
            try:
                client.key_value_set_bytes(key.decode(), ctypes.string_at(value, length))
                return 0
            except Exception:
                return 1

        def get(arg, key, value, cap, length, timeout):
            try:
                data = client.blocking_key_value_get_bytes(key.decode(),
                                                           max(1, int(timeout * 1000)))
            except Exception:
                return 1
            length[0] = len(data)
            ctypes.memmove(value, data, min(cap, len(data)))
            return 0

        store = cls(None, _SET(put), _GET(get), jax.process_index(), jax.process_count(),
                    b"tessera")
        store._keep = (put, get)  # the callbacks live as long as the store
        return store


def _launched_by_mpi():
    """Whether MPI's launcher started the processes (jax.distributed.initialize() detects Open
    MPI's and Slurm's environment the same way)."""
    from jax._src import clusters
    return any(c.is_env_present() for c in (clusters.OmpiCluster, clusters.SlurmCluster))
_NAME = "libtessera_jax.so"
_lock = threading.Lock()
_native = None


def _candidates():
    env = os.environ.get("TESSERA_JAX_LIBRARY")
    if env:
        if not Path(env).is_file():  # named, so never passed over for another library
            raise ImportError(f"tessera.jax: TESSERA_JAX_LIBRARY is {env!r}, which is not a file: "
                              "name the libtessera_jax.so to load, or unset it to load the one "
                              "next to the package or in the build tree.")
        yield Path(env)
    here = Path(__file__).resolve().parent
    yield here / _NAME
    build = os.environ.get("TESSERA_BUILD_DIR")
    if build:
        yield Path(build) / "python" / _NAME
    yield here.parents[1] / "build" / "python" / _NAME


def _xla_left():
    """Bytes tessera's pool may take on each GPU unless TESSERA_GPU_MEM_LIMIT says otherwise:
    what XLA leaves (1 - its memory fraction of the GPU, XLA_PYTHON_CLIENT_MEM_FRACTION,
    default 0.75) less 2 GiB for cuBLAS / cuSOLVER workspaces; -1 (tessera's own rule) when that
    is not known. Read on this process's own GPUs: in a program of several processes the first
    of jax.devices() may be another process's, whose statistics this one cannot read."""
    try:
        gpus = jax.local_devices(backend="gpu")
        # XLA's allocator takes its share (its preallocation) at its first buffer: made here,
        # before tessera's pools are sized, whatever the program has allocated so far
        for d in gpus:
            jax.device_put(np.zeros((), np.float32), d).block_until_ready()
        stats = gpus[0].memory_stats() or {}
        frac = float(os.environ.get("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.75"))
        total = stats["bytes_limit"] / frac
    except Exception:  # no GPU backend, or no statistics: tessera's own rule
        return -1
    limit = int(total * (1 - frac)) - (2 << 30)
    return limit if limit > (1 << 30) else -1


def _load_lazily(path):
    """libtessera_jax (and libtessera with it) loaded with lazy binding: ctypes.CDLL alone would
    bind every call at load time, and libtessera's calls into cuBLAS, cuSOLVER and NCCL, which it
    loads only when a GPU first gets work (docs/architecture.md), would bind to nothing."""
    libc = ctypes.CDLL(None)
    libc.dlopen.restype, libc.dlopen.argtypes = ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_int]
    libc.dlerror.restype = ctypes.c_char_p
    handle = libc.dlopen(os.fsencode(path), os.RTLD_LAZY | os.RTLD_LOCAL)
    if not handle:
        raise OSError(f"tessera.jax: cannot load {path}: "
                      f"{(libc.dlerror() or b'unknown reason').decode(errors='replace')}")
    return ctypes.CDLL(str(path), handle=handle)


class Native:
    """libtessera_jax and the process's binding state."""

    def __init__(self, path):
        lib = _load_lazily(path)
        lib.tessera_jax_state_create.restype = ctypes.c_void_p
        lib.tessera_jax_state_create.argtypes = [ctypes.c_int64, ctypes.c_char_p, ctypes.c_size_t]
        lib.tessera_jax_state_destroy.argtypes = [ctypes.c_void_p]
        lib.tessera_jax_tile.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int64,
                                         ctypes.c_int, ctypes.c_int]
        lib.tessera_jax_tile_qr.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int64,
                                            ctypes.c_int64]
        lib.tessera_jax_tile_polar.argtypes = lib.tessera_jax_tile_qr.argtypes
        lib.tessera_jax_error.restype = ctypes.c_char_p
        lib.tessera_jax_error.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.tessera_strerror.restype = ctypes.c_char_p
        lib.tessera_strerror.argtypes = [ctypes.c_int]
        lib.tessera_jax_processes.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                              ctypes.POINTER(_Store)]
        lib.tessera_jax_join.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.tessera_jax_one_device_calls.restype = ctypes.c_int64
        lib.tessera_jax_one_device_calls.argtypes = [ctypes.c_void_p]
        self._joined = set()
        self._store = None
        lib.tessera_jax_op.argtypes = [ctypes.c_int, ctypes.c_int,
                                       ctypes.POINTER(ctypes.c_char_p),
                                       ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_void_p)]
        self.lib = lib
        self.path = Path(path)
        err = ctypes.create_string_buffer(256)
        self.state = lib.tessera_jax_state_create(_xla_left(), err, len(err))
        if not self.state:
            raise ValueError(f"tessera.jax: {err.value.decode()}")
        self.platforms = {"cpu": CPU}
        self._register("cpu", CPU)
        if lib.tessera_jax_cuda_built():
            try:
                self._register("CUDA", CUDA)
                self.platforms["gpu"] = CUDA
            except RuntimeError:  # jax without its CUDA plugin: the CPU targets serve
                pass
        atexit.register(self.close)

    def _handlers(self, platform):
        """(operation, handler address) of the library's handler table for `platform`, checked
        entry by entry against OPS: the same names and flags at the same indices, and
        no entry past them."""
        lib, out = self.lib, []
        name, flags, handler = ctypes.c_char_p(), ctypes.c_int(), ctypes.c_void_p()
        for i in range(len(OPS) + 1):
            rc = lib.tessera_jax_op(i, platform, ctypes.byref(name), ctypes.byref(flags),
                                    ctypes.byref(handler))
            got = (name.value.decode(), flags.value) if rc == 0 else None
            want = (OPS[i].name, OPS[i].flags) if i < len(OPS) else None
            if got != want or (got and not handler.value):
                raise ImportError(f"tessera.jax: {self.path} does not match this package: its "
                                  f"operation {i} is {got}, the package's {want}; rebuild it "
                                  "from the same sources (make build, or pip install ./python)")
            if got:
                out.append((OPS[i], handler.value))
        return out

    def _register(self, xla_platform, platform):
        """Registers every operation's handler for `platform` with jax (XLA's platform name
        xla_platform); jax raises when it has no such platform."""
        for op, handler in self._handlers(platform):
            try:
                jax.ffi.register_ffi_target(op.target, jax.ffi.pycapsule(handler),
                                            platform=xla_platform)
            except Exception as e:
                raise RuntimeError(f"tessera.jax: jax cannot register {op.target} for "
                                   f"{xla_platform}: {e}") from e

    def close(self):
        if self.state:
            self.lib.tessera_jax_state_destroy(self.state)
            self.state = None

    def one_device_calls(self):
        """The calls of potrs, cholesky and lu_solve on this process that ran on one device, their
        matrix small for the mesh (tessera_jax_one_device_calls)."""
        return self.lib.tessera_jax_one_device_calls(self.state)

    def strerror(self, status):
        """libtessera's description of a negative status."""
        return self.lib.tessera_strerror(status).decode()

    def tile(self, platform, n, ndev, lu=False):
        """tessera's preferred tile for order n over ndev devices of `platform` (LU's panel
        width with lu)."""
        return self._tile(platform, self.lib.tessera_jax_tile(self.state, platform, n, ndev,
                                                              int(lu)))

    def tile_qr(self, platform, m, n):
        """QR's panel width for an m x n matrix on `platform` (tessera_tile_for_qr)."""
        return self._tile(platform, self.lib.tessera_jax_tile_qr(self.state, platform, m, n))

    def tile_polar(self, platform, m, n):
        """The polar decomposition's tile for an m x n matrix on `platform`
        (tessera_tile_for_polar), which gesvd shares."""
        return self._tile(platform, self.lib.tessera_jax_tile_polar(self.state, platform, m, n))

    def _tile(self, platform, t):
        """A tile the library chose (> 0), or the reason its context for `platform` could not
        be made, raised."""
        if t <= 0:
            msg = self.lib.tessera_jax_error(self.state, platform).decode(errors="replace")
            raise RuntimeError(f"tessera.jax: {msg or 'cannot start a tessera context'}")
        return t

    def _join_processes(self):
        """The binding's communicator over the program's processes (tessera_jax_processes),
        made at the first call whose mesh spans them, by every process alike: over MPI where
        MPI launched them (mpirun, srun), else bootstrapped through jax.distributed's key-value
        store. A program whose meshes stay within each process never makes it."""
        self._store = None if _launched_by_mpi() else _Store.of_jax()
        store = ctypes.byref(self._store) if self._store else None
        rc = self.lib.tessera_jax_processes(self.state, jax.process_index(),
                                            jax.process_count(), store)
        if rc:
            msg = self.lib.tessera_jax_error(self.state, CPU).decode(errors="replace")
            how = "MPI" if self._store is None else "jax.distributed's key-value store"
            raise RuntimeError(f"tessera.jax: cannot join the program's {jax.process_count()} "
                               f"processes over {how}: {msg or self.strerror(rc)}")

    def processes(self, platform):
        """The communicator of `platform`'s calls over the processes (tessera_jax_join): made
        at the first call spanning them, by every process alike."""
        if platform in self._joined:
            return
        if not self._joined:
            self._join_processes()
            self._joined.add(None)
        rc = self.lib.tessera_jax_join(self.state, platform)
        if rc:
            msg = self.lib.tessera_jax_error(self.state, platform).decode(errors="replace")
            raise RuntimeError("tessera.jax: cannot join the program's "
                               f"{jax.process_count()} processes: {msg or self.strerror(rc)}")
        self._joined.add(platform)


def native():
    """The loaded library and state (loaded at the first call)."""
    global _native
    with _lock:
        if _native is None:
            tried = []
            for p in _candidates():
                tried.append(str(p))
                if p.is_file():
                    _native = Native(p)
                    break
            else:
                raise ImportError("tessera.jax: libtessera_jax.so not found (looked in "
                                  + ", ".join(tried) + "); install with `pip install ./python` "
                                  "or build with `make build` and set TESSERA_BUILD_DIR")
        return _native
