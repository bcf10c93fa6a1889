"""Setup and build plumbing: scripts/setup.sh installs per target (the build's packages for
`make build` and `make demo`, the tests' too for `make test`) and waits a bounded time for another
apt holding the dpkg lock; `make clean` removes every build folder the Makefile makes. apt-get,
dpkg-query, id and python3 are stubs on PATH, so nothing is installed."""
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def stubs(tmp_path, apt_fails=0):
    """A PATH whose apt-get logs its arguments and fails `apt_fails` times with a lock error."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    log = tmp_path / "apt.log"
    scripts = {
        "dpkg-query": "exit 1",  # nothing is installed
        "id": "echo 0",  # root
        "python3": "exit 0",  # pytest and jax importable
        "apt-get": f"""
n=$(cat {tmp_path}/fails 2>/dev/null || echo 0)
if [ "$n" -lt {apt_fails} ]; then
  echo $((n + 1)) > {tmp_path}/fails
  echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 42 (apt)" >&2
  exit 100
fi
echo "$@" >> {log}""",
    }
    for name, body in scripts.items():
        (bin_ / name).write_text("#!/bin/bash\n" + body + "\n")
        (bin_ / name).chmod(0o755)
    return f"{bin_}:{os.environ['PATH']}", log


def setup(tmp_path, *args, apt_fails=0, wait=None):
    path, log = stubs(tmp_path, apt_fails)
    env = dict(os.environ, PATH=path, TESSERA_SKIP_SETUP="0")
    if wait is not None:
        env["TESSERA_APT_WAIT"] = str(wait)
    p = subprocess.run(["bash", str(ROOT / "scripts/setup.sh"), *args], capture_output=True,
                       text=True, env=env, timeout=120)
    installs = [line for line in (log.read_text().splitlines() if log.exists() else [])
                if " install " in f" {line} "]
    return p, " ".join(installs)


def test_build_target_installs_only_what_the_build_needs(tmp_path):
    p, installed = setup(tmp_path, "build")
    assert p.returncode == 0, p.stderr
    assert "libopenblas-dev" in installed and "liblapacke-dev" in installed
    for test_only in ("openmpi", "cmocka"):
        assert test_only not in installed


def test_test_target_installs_the_test_packages(tmp_path):
    p, installed = setup(tmp_path, "test")
    assert p.returncode == 0, p.stderr
    assert "libopenblas-dev" in installed and "openmpi-bin" in installed
    # cmocka unpacked under .deps/ (scripts/fetch-deps.sh) counts as present
    assert "libcmocka-dev" in installed or (ROOT / ".deps/usr/include/cmocka.h").exists()


def test_waits_for_the_dpkg_lock_then_installs(tmp_path):
    p, installed = setup(tmp_path, "build", apt_fails=1, wait=30)
    assert p.returncode == 0, p.stderr
    assert "waiting" in p.stdout and "libopenblas-dev" in installed


def test_gives_up_on_the_lock_after_the_bound(tmp_path):
    p, installed = setup(tmp_path, "build", apt_fails=100, wait=0)
    assert p.returncode == 1 and "Could not get lock" in p.stderr and not installed


def make_dry(target):
    return subprocess.run(["make", "-n", target], capture_output=True, text=True, cwd=ROOT,
                          env=dict(os.environ, TESSERA_SKIP_SETUP="1"), timeout=60).stdout


def test_demo_sets_up_the_build_only():
    out = make_dry("demo")
    assert "setup.sh build" in out and "setup.sh test" not in out


def test_clean_removes_every_build_folder_the_makefile_makes():
    text = (ROOT / "Makefile").read_text()
    made = set(re.findall(r"CMAKE_CONFIGURE,([\w.-]+)", text))
    assert {"build", "build-sim"} <= made
    removed = set(make_dry("clean").split())
    assert made <= removed, made - removed
