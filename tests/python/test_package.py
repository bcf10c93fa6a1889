"""`pip install ./python` from the source tree: the wheel scikit-build-core builds with the
project's CMake holds the package and its two libraries (nothing else), installs into a fresh
virtual environment, and solves there from another folder with no build tree in sight.

Builds the library once more (without the CUDA backend and the transports). Where the build
requirements (scikit-build-core, jax) are installed (`make setup` installs them), pip builds with
them (--no-build-isolation), as the pyproject's notes offer; else in the isolated environment
pip makes, downloading them. TESSERA_SKIP_PIP_TEST=1 skips it."""
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.skipif(os.environ.get("TESSERA_SKIP_PIP_TEST") == "1",
                       reason="TESSERA_SKIP_PIP_TEST=1"),
    pytest.mark.skipif(subprocess.run([sys.executable, "-c", "import jax"]).returncode != 0,
                       reason="jax is not installed"),
]

SOLVE = """
import jax, numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P
jax.config.update("jax_enable_x64", True)
import tessera.jax as tj, tessera._native as nv
mesh = jax.make_mesh((4,), ("x",))
a = jax.device_put(np.eye(8) * 4.0, NamedSharding(mesh, P("x", None)))
x, st = tj.potrs(a, np.ones(8), 2, return_status=True)
print(nv.native().path)
assert int(st) == 0 and np.allclose(np.asarray(x), 0.25), (x, st)
q, r = tj.qr(a, 2)
assert np.allclose(np.asarray(q) @ np.asarray(r), np.eye(8) * 4.0), (q, r)
"""


def _has_build_requirements():
    probe = "import scikit_build_core, jax.ffi"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


def test_pip_install(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("TESSERA_BUILD_DIR", "PYTHONPATH")}
    wheels = tmp_path / "wheels"
    isolation = ["--no-build-isolation"] if _has_build_requirements() else []
    # without the CUDA backend and the communication layer's transports (MPI, Gloo's C++ shim):
    # the packaging is the same, and those take most of a build
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *isolation,
                        str(ROOT / "python"),
                        "-C", "cmake.define.TESSERA_CUDA=OFF", "-C", "cmake.define.TESSERA_MPI=OFF",
                        "-w", str(wheels)],
                       capture_output=True, text=True, env=env, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    (whl,) = wheels.glob("tessera-*.whl")
    names = sorted(zipfile.ZipFile(whl).namelist())
    files = [n for n in names if ".dist-info/" not in n]
    assert files == ["tessera/__init__.py", "tessera/_common.py", "tessera/_eig.py",
                     "tessera/_grad.py", "tessera/_layout.py", "tessera/_local.py", "tessera/_lu.py",
                     "tessera/_native.py",
                     "tessera/_qr.py", "tessera/_svd.py", "tessera/jax.py",
                     "tessera/libtessera.so.0",
                     "tessera/libtessera_jax.so"], names
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    py = venv / "bin" / "python"
    p = subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", str(whl)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
    env["JAX_PLATFORMS"] = "cpu"
    p = subprocess.run([str(py), "-c", SOLVE], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert str(venv) in p.stdout, p.stdout  # the installed library, not a build tree's
