"""tessera.jax with a mesh spanning two processes (jax.distributed on CPU devices): every entry
point raises before anything runs, naming the devices that are not this process's. The two
processes run jax_two_processes.py; a process that fails or hangs fails the test."""
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from jax_support import tj  # noqa: F401  (skips this module when jax or libtessera_jax is missing)

SCRIPT = Path(__file__).with_name("jax_two_processes.py")


def free_port():
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def test_mesh_with_devices_of_another_process_is_refused():
    port = free_port()
    procs = [subprocess.Popen([sys.executable, str(SCRIPT), str(port), str(pid)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for pid in (0, 1)]
    outs = []
    for p in procs:
        try:
            outs.append(p.communicate(timeout=120)[0])
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            pytest.fail("a process of the pair did not finish within 120 s")
    for pid, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0 and f"ok {pid}" in out, f"process {pid}:\n{out[-3000:]}"
