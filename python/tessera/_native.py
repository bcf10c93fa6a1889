"""The C side of the binding: libtessera_jax (XLA FFI handlers over libtessera), loaded with
ctypes at first use, one binding state for the process, and the FFI targets registered with
jax for the CPU and, where tessera was built with CUDA, the CUDA platform.

The library is looked for in TESSERA_JAX_LIBRARY (a file), next to this package (a wheel built
by `pip install ./python`), then in a source tree's build folder (TESSERA_BUILD_DIR, else
../../build/python relative to this file)."""
import atexit
import ctypes
import os
import threading
from pathlib import Path

import jax

CPU, CUDA = 0, 1
OPS = ("potrs", "potri", "cholesky", "lu_solve")
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
        self.lib = lib
        self.path = Path(path)
        err = ctypes.create_string_buffer(256)
        self.state = lib.tessera_jax_state_create(_xla_left(), err, len(err))
        if not self.state:
            raise ValueError(f"tessera.jax: {err.value.decode()}")
        self.platforms = {"cpu": CPU}
        for op in OPS:
            jax.ffi.register_ffi_target(f"tessera_{op}",
                                        jax.ffi.pycapsule(getattr(lib, f"tessera_jax_{op}_cpu")),
                                        platform="cpu")
        if lib.tessera_jax_cuda_built():
            try:
                for op in OPS:
                    jax.ffi.register_ffi_target(
                        f"tessera_{op}", jax.ffi.pycapsule(getattr(lib, f"tessera_jax_{op}_cuda")),
                        platform="CUDA")
                self.platforms["gpu"] = CUDA
            except Exception:  # jax without its CUDA plugin: the CPU targets serve
                pass
        atexit.register(self.close)

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
