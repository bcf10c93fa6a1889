"""tessera.jax over a JAX program of several processes on CPU devices, launched both ways a
user launches one: by jax.distributed alone (a coordinator; tessera meets the processes through
jax's key-value store, over Gloo) and by mpirun (jax.distributed.initialize() finds Open MPI's
environment; tessera runs over MPI). 2 processes x 2 devices and 4 x 1, 1D and 2D meshes. Each
process runs jax_processes.py; a process that fails or hangs fails the test."""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from jax_support import tj  # noqa: F401  (skips this module when jax or libtessera_jax is missing)

SCRIPT = Path(__file__).with_name("jax_processes.py")
LIMIT = 240  # seconds a launch may take


def free_port():
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def environment():
    env = dict(os.environ, TESSERA_JAX_TIMEOUT="5", PYTHONUNBUFFERED="1")
    env.pop("XLA_FLAGS", None)
    return env


def finish(procs, names):
    outs = []
    for p in procs:
        try:
            outs.append(p.communicate(timeout=LIMIT)[0])
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            pytest.fail(f"a process did not finish within {LIMIT} s")
    return dict(zip(names, zip((p.returncode for p in procs), outs)))


def coordinated(argv_of, processes, env):
    """Processes started by jax.distributed alone, process pid running `argv_of(pid, port)`:
    {process id: (status, output)}."""
    port = free_port()
    procs = [subprocess.Popen([sys.executable] + argv_of(pid, port), env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for pid in range(processes)]
    return finish(procs, range(processes))


def mpirun(argv, processes, env):
    """`processes` copies of `argv` started by mpirun, with a session folder of their own
    (tests/README.md): {0: (status, output of them all)}."""
    if not shutil.which("mpirun"):
        pytest.skip("no mpirun")
    env = dict(env)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    with tempfile.TemporaryDirectory() as tmp:
        env["OMPI_MCA_orte_tmpdir_base"] = tmp
        proc = subprocess.Popen(["mpirun", "--oversubscribe", "-n", str(processes),
                                 "-x", "TESSERA_JAX_TIMEOUT", "-x", "PYTHONUNBUFFERED",
                                 "-x", "PYTHONPATH", sys.executable] + argv, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return finish([proc], [0])


def with_coordinator(case, processes, devices, **env):
    """jax_processes.py's case by jax.distributed alone; `devices` per process, or one count
    for all; `env`: variables of the processes."""
    per = devices if isinstance(devices, tuple) else (devices,) * processes
    return coordinated(lambda pid, port: [str(SCRIPT), case, str(per[pid]), str(port), str(pid),
                                          str(processes)], processes, dict(environment(), **env))


def under_mpirun(case, processes, devices, **env):
    """jax_processes.py's case under mpirun."""
    return mpirun([str(SCRIPT), case, str(devices)], processes, dict(environment(), **env))


def assert_ok(results, expect):
    for name, (status, out) in results.items():
        for pid in expect(name):
            assert f"ok {pid}" in out, f"process {pid}: status {status}\n{out[-4000:]}"


LAUNCHES = {"coordinator": with_coordinator, "mpirun": under_mpirun}


@pytest.mark.parametrize("launch,processes,devices,layout", [("coordinator", 2, 2, "tessera"),
                                                             ("mpirun", 2, 2, "cost"),
                                                             ("coordinator", 4, 1, "tessera"),
                                                             ("coordinator", 2, (2, 1), "given")])
def test_every_function_dtype_and_mesh(launch, processes, devices, layout):
    """potrs (with log det), potri, cholesky, lu_solve, qr, least_squares, syevd, polar and
    gesvd, every dtype across the launches (f64 and c64 on 2 processes of 2 devices by the
    coordinator; f32 and c128 under mpirun, c128 alone on processes of unequal devices and on 4
    processes, which start slowly on the test machine's cores), 1D and 2D meshes, orders that
    split evenly and not: each process checks the whole result. The routines run on tessera's
    layout (TESSERA_LAYOUT=tessera: the shards copied onto the fitted grid's block-cyclic tiles
    or cyclic panels, results brought back), on the caller's (given), or as the cost model
    chooses."""
    others = launch == "coordinator" and processes == 2 and devices == 2
    one = processes == 4 or layout == "given"
    case = "functions_other_dtypes" if others else "functions_one_dtype" if one else \
        "functions_two_dtypes"
    results = LAUNCHES[launch](case, processes, devices, TESSERA_LAYOUT=layout)
    assert_ok(results, lambda name: range(processes) if launch == "mpirun" else [name])


# Checks of 2 processes x 2 devices in the default layout, run in turn by one launch (each
# process starts jax and compiles what they share once): check_local first, before any call
# over the processes.
TOGETHER = "local+failures+sharded+small"


@pytest.mark.parametrize("launch", LAUNCHES)
def test_failures_global_arrays_and_small_calls(launch):
    """A mesh within one process (process 0 solves on its own devices while the others make no
    call); not positive definite, singular and rank deficient matrices, a NaN for syevd and gesvd
    (the same info everywhere, NaN); arrays placed over the processes with the shardmap forms
    inside the caller's shard_map, derivatives and batches under jit; potrs, cholesky, lu_solve
    and syevd small for the mesh: the distributed routine first, then the whole matrix gathered
    on one device of every process and solved there, each process taking the same way, the
    results and statuses the same either way."""
    results = LAUNCHES[launch](TOGETHER, 2, 2)
    assert_ok(results, lambda name: range(2) if launch == "mpirun" else [name])


@pytest.mark.parametrize("launch", LAUNCHES)
def test_calls_that_differ_between_processes(launch):
    """One triangle asked for on one process and the other elsewhere, and tiles that differ
    (TESSERA_TILE set per process): the same negative status everywhere, NaN."""
    results = LAUNCHES[launch]("mismatch", 2, 2)
    assert_ok(results, lambda name: range(2) if launch == "mpirun" else [name])


@pytest.mark.parametrize("launch,case", [("coordinator", "absent"),
                                         ("coordinator", "absent_first"),
                                         ("mpirun", "absent")])
def test_a_process_that_does_not_call(launch, case):
    """The last process skips a call (after one they all made, or from the start): the others
    fail within TESSERA_JAX_TIMEOUT with a sentence, never hang; the absent one may be taken
    down with them (jax's coordination service ends with process 0)."""
    results = LAUNCHES[launch](case, 2, 2)
    for name, (status, out) in results.items():
        if launch == "coordinator" and name == 1:
            continue
        assert "ok 0" in out and "absent: " in out, f"status {status}\n{out[-4000:]}"


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "jax_processes.py"


@pytest.mark.parametrize("launch", LAUNCHES)
def test_the_example_runs_both_ways(launch):
    """examples/jax_processes.py, as the README launches it, on CPU devices."""
    env = environment()
    env["PYTHONPATH"] = str(EXAMPLE.parents[1] / "python") + os.pathsep + env.get("PYTHONPATH",
                                                                                  "")
    common = [str(EXAMPLE), "--cpu", "2", "--n", "512"]
    if launch == "coordinator":
        results = coordinated(lambda pid, port: common + [
            "--coordinator", f"localhost:{port}", "--processes", "2", "--id", str(pid)], 2, env)
    else:
        results = mpirun(common, 2, env)
    out = "".join(o for _, o in results.values())
    assert "potrs: status 0" in out and "lu_solve: status 0" in out, out[-4000:]
    assert all(status == 0 for status, _ in results.values()), out[-4000:]
