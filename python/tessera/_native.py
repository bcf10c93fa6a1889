"""The C side of the binding: libtessera_jax (XLA FFI handlers over libtessera), loaded with
ctypes at first use, one binding state for the process, and the FFI targets registered with
jax for the CPU and, where tessera was built with CUDA, the CUDA platform.

The library is looked for in TESSERA_JAX_LIBRARY (a file), next to this package (a wheel built
by `pip install ./python`), then in a source tree's build folder (TESSERA_BUILD_DIR, else
../../build/python relative to this file).

The operations' protocol is one table here, OPS: what each XLA FFI operation of libtessera_jax
takes and returns. jax.py builds every call from it, Native registers the handlers by it, and
the C side's handler table (python/ffi/handlers.c) is indexed the same way: Native checks at
load that the library's entry of each index has the same name and flags, so that neither side
can change alone.

Operands, in order: this device's row shard of A (nl x Np, row-major); the right-hand side when
the operation has one, by its flags: RHS_ROWS this device's rows of B (nl x k), RHS_WHOLE_T the
whole Bᵀ (k x Np) on every device; last, the device's rank on the row axis (s32 scalar).
Results, in order: A's shard in place (aliased to operand 0: the factor or inverse), X in place
(aliased to operand 1) when there is a right-hand side, log det (f64[1]) with LOGDET, and the
status (s32[1]). Attributes: state, site, ndev, n, tile; `lower` with LOWER, `logdet` with
LOGDET (tessera_jax.h describes them). Per device or the same on every device: A's shard and
RHS_ROWS' X are this device's rows; the status and log det are the leader's, and RHS_WHOLE_T's X
is rank 0's solution copied into every device's buffer, so those are the same on every device
(Op.results' per_device)."""
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
        return bool(self.flags & (RHS_ROWS | RHS_WHOLE_T))

    def operands(self, a, b, rank):
        return (a, b, rank) if self.rhs else (a, rank)

    def aliases(self):
        """Results written in place: A's (and X's) buffers are the operands'."""
        return {0: 0, 1: 1} if self.rhs else {0: 0}

    def results(self, a, b):
        """(role, shape, dtype, per_device) of each result, in order; a and b give the shapes
        and dtypes of the matrix and right-hand side operands."""
        out = [("a", a.shape, a.dtype, True)]
        if self.rhs:
            out.append(("x", b.shape, b.dtype, bool(self.flags & RHS_ROWS)))
        if self.flags & LOGDET:
            out.append(("logdet", (1,), "float64", False))
        out.append(("status", (1,), "int32", False))
        return out

    def attributes(self, *, state, site, ndev, n, tile, lower=False, logdet=False):
        """The attributes this operation takes, as numpy scalars: XLA types them from these."""
        attrs = dict(state=np.uint64(state), site=np.int64(site), ndev=np.int64(ndev),
                     n=np.int64(n), tile=np.int64(tile))
        if self.flags & LOWER:
            attrs["lower"] = np.int64(bool(lower))
        if self.flags & LOGDET:
            attrs["logdet"] = np.int64(bool(logdet))
        return attrs


# The operations; index i is the C handler table's entry i.
OPS = (
    Op("potrs", RHS_ROWS | LOWER | LOGDET),
    Op("potri", LOWER),
    Op("cholesky", LOWER),
    Op("lu_solve", RHS_WHOLE_T, lu=True),
)
BY_NAME = {op.name: op for op in OPS}

CPU, CUDA = 0, 1
_NAME = "libtessera_jax.so"
_lock = threading.Lock()
_native = None


def _candidates():
    env = os.environ.get("TESSERA_JAX_LIBRARY")
    if env:
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
    is not known."""
    try:
        gpus = jax.devices("gpu")
        stats = gpus[0].memory_stats() or {}
        frac = float(os.environ.get("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.75"))
        total = stats["bytes_limit"] / frac
    except Exception:  # no GPU backend, or no statistics: tessera's own rule
        return -1
    limit = int(total * (1 - frac)) - (2 << 30)
    return limit if limit > (1 << 30) else -1


class Native:
    """libtessera_jax and the process's binding state."""

    def __init__(self, path):
        lib = ctypes.CDLL(str(path))
        lib.tessera_jax_state_create.restype = ctypes.c_void_p
        lib.tessera_jax_state_create.argtypes = [ctypes.c_int64, ctypes.c_char_p, ctypes.c_size_t]
        lib.tessera_jax_state_destroy.argtypes = [ctypes.c_void_p]
        lib.tessera_jax_tile.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int64,
                                         ctypes.c_int, ctypes.c_int]
        lib.tessera_jax_error.restype = ctypes.c_char_p
        lib.tessera_jax_error.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.tessera_strerror.restype = ctypes.c_char_p
        lib.tessera_strerror.argtypes = [ctypes.c_int]
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

    def strerror(self, status):
        """libtessera's description of a negative status."""
        return self.lib.tessera_strerror(status).decode()

    def tile(self, platform, n, ndev, lu=False):
        """tessera's preferred tile for order n over ndev devices of `platform` (LU's panel
        width with lu)."""
        t = self.lib.tessera_jax_tile(self.state, platform, n, ndev, int(lu))
        if t <= 0:
            msg = self.lib.tessera_jax_error(self.state, platform).decode(errors="replace")
            raise RuntimeError(f"tessera.jax: {msg or 'cannot start a tessera context'}")
        return t


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
