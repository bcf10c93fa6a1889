"""The `tessera` command line: results as JSON, residuals, .npy input and output, benchmarks,
traces and their Gantt chart, and clear errors with the documented exit codes (0 success,
1 failure, 2 usage error). Runs the CLI of the build in TESSERA_BUILD_DIR (default ./build)."""
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

BUILD = Path(os.environ.get("TESSERA_BUILD_DIR", Path(__file__).resolve().parents[2] / "build"))
CLI = BUILD / "tessera"
ENV = dict(os.environ, TESSERA_PERFMODEL="none", TESSERA_CPU_WORKERS="2")

pytestmark = pytest.mark.skipif(not CLI.exists(), reason=f"no CLI at {CLI} (build first)")


def run(*args, check=None):
    p = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, env=ENV,
                       timeout=300)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stdout, p.stderr)
    return p


def json_lines(out):
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def write_npy(path, rows, cols, values, fortran=True):
    """A float64 .npy (version 1) written without numpy."""
    header = "{'descr': '<f8', 'fortran_order': %s, 'shape': (%d, %d), }" % (
        "True" if fortran else "False", rows, cols)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%dd" % len(values), *values))


def read_npy(path):
    data = Path(path).read_bytes()
    assert data[:6] == b"\x93NUMPY"
    hlen = struct.unpack("<H", data[8:10])[0] if data[6] == 1 else struct.unpack("<I", data[8:12])[0]
    start = (10 if data[6] == 1 else 12) + hlen
    header = data[start - hlen:start].decode()
    assert "'<f8'" in header
    n = (len(data) - start) // 8
    return header, struct.unpack("<%dd" % n, data[start:])


@pytest.mark.parametrize("routine", ["potrf", "potrs", "posv"])
@pytest.mark.parametrize("dtype", ["s", "d", "c", "z"])
def test_routines_report_json_with_small_residual(routine, dtype):
    p = run(routine, "--n", 301, "--dtype", dtype, "--tile", 64, "--json", check=0)
    (r,) = json_lines(p.stdout)
    for field in ("routine", "dtype", "n", "tile", "devices", "workers", "seconds", "gflops",
                  "residual"):
        assert field in r, field
    assert r["routine"] == routine and r["n"] == 301 and r["tile"] == 64
    assert 0 <= r["residual"] < 10
    assert r["seconds"] > 0


def test_upper_triangle():
    (r,) = json_lines(run("posv", "--n", 200, "--uplo", "U", "--nrhs", 3, "--json", check=0).stdout)
    assert r["residual"] < 10


def test_npy_round_trip(tmp_path):
    n = 40
    a = [0.0] * (n * n)
    for j in range(n):
        for i in range(n):
            a[i + j * n] = 2.0 * n if i == j else 1.0 / (1 + i + j)
    b = [float(i % 7 - 3) for i in range(n)]
    write_npy(tmp_path / "a.npy", n, n, a)
    write_npy(tmp_path / "b.npy", n, 1, b)
    run("posv", "--input", tmp_path / "a.npy", "--rhs", tmp_path / "b.npy", "--output",
        tmp_path / "x.npy", check=0)
    _, x = read_npy(tmp_path / "x.npy")
    assert len(x) == n
    for i in range(n):
        ax = sum(a[i + j * n] * x[j] for j in range(n))
        assert abs(ax - b[i]) < 1e-10 * n


def test_bench_compares_with_the_baseline_in_the_same_run():
    (r,) = json_lines(run("bench", "potrf", "--n", 256, "--reps", 1, "--json", check=0).stdout)
    assert r["baseline"] in ("lapacke", "cusolverMg")
    assert r["baseline_gflops"] > 0 and r["ratio"] > 0
    assert r["residual"] < 10


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("dtype", ["d", "c"])
def test_bench_out_of_core_checks_the_factor_without_a_copy(uplo, dtype):
    p = run("bench", "potrf", "--out-of-core", "--n", 300, "--tile", 64, "--uplo", uplo,
            "--dtype", dtype, "--reps", 2, "--json", check=0)
    (r,) = json_lines(p.stdout)
    assert r["api"] == "ooc" and r["routine"] == "potrf"
    assert r["home"] in ("host", "gpus", "mixed")
    assert r["n"] == 300 and r["tile"] == 64 and r["uplo"] == uplo
    assert "baseline" not in r
    assert r["seconds"] > 0 and r["gflops"] > 0
    assert 0 <= r["residual"] < 10


def test_bench_out_of_core_sizes_and_table():
    p = run("bench", "potrf", "--out-of-core", "--n", "0,1,129", "--tile", 32, "--reps", 1,
            check=0)
    rows = [line.split() for line in p.stdout.splitlines() if line.startswith("potrf")]
    assert [row[4] for row in rows] == ["0", "1", "129"]
    assert all(row[1] == "ooc" and float(row[10]) < 10 for row in rows)


def test_bench_out_of_core_errors():
    p = run("bench", "potrf", "--out-of-core", "--resident")
    assert p.returncode == 2 and "--out-of-core" in p.stderr
    p = run("bench", "potrf", "--out-of-core", "--n", 3000000, "--reps", 1)
    assert p.returncode == 1 and "memory" in p.stderr


def test_trace_and_gantt_chart(tmp_path):
    run("potrf", "--n", 400, "--tile", 64, "--trace", tmp_path / "t.json", check=0)
    trace = json.loads((tmp_path / "t.json").read_text())
    names = {e.get("args", {}).get("kernel") for e in trace["traceEvents"] if e["ph"] == "X"}
    assert {"potrf", "trsm", "syrk", "gemm"} <= names
    run("trace", tmp_path / "t.json", "-o", tmp_path / "g.svg", check=0)
    svg = (tmp_path / "g.svg").read_text()
    assert svg.lstrip().startswith("<") and "<svg" in svg and "gemm" in svg
    # bench/trace_summary.py --groups: each group's window in seconds, "-" for a kernel not run
    script = Path(__file__).resolve().parents[2] / "bench" / "trace_summary.py"
    p = subprocess.run(["python3", str(script), str(tmp_path / "t.json"), "--groups",
                        "factor=potrf,trsm;update=syrk,gemm;none=hb2st"], capture_output=True,
                       text=True, timeout=60, check=True)
    m = re.fullmatch(r"factor ([0-9.]+) update ([0-9.]+) none -\n", p.stdout)
    assert m and 0 <= float(m[1]) < 60 and 0 <= float(m[2]) < 60, p.stdout


def test_info_lists_devices():
    out = run("info", check=0).stdout
    assert "workers" in out and "cpu 0" in out and "bandwidth" in out


@pytest.mark.parametrize("args", [[], ["frobnicate"], ["potrf", "--n"], ["potrf", "--n", "-5"],
                                  ["potrf", "--dtype", "q"], ["potrf", "--uplo", "X"],
                                  ["potrf", "--bogus"]])
def test_usage_errors_exit_2(args):
    p = run(*args)
    assert p.returncode == 2, (args, p.stdout, p.stderr)
    assert p.stderr.strip()


def test_bad_input_files_exit_1(tmp_path):
    p = run("potrf", "--input", tmp_path / "missing.npy")
    assert p.returncode == 1 and "missing.npy" in p.stderr
    (tmp_path / "bad.npy").write_bytes(b"not a numpy file at all")
    p = run("potrf", "--input", tmp_path / "bad.npy")
    assert p.returncode == 1 and p.stderr.strip()
    write_npy(tmp_path / "rect.npy", 3, 4, [1.0] * 12)
    p = run("potrf", "--input", tmp_path / "rect.npy")
    assert p.returncode == 1 and p.stderr.strip()


def test_not_positive_definite_exits_1(tmp_path):
    n = 10
    a = [0.0] * (n * n)
    for i in range(n):
        a[i + i * n] = 1.0
    a[4 + 4 * n] = -1.0
    write_npy(tmp_path / "a.npy", n, n, a)
    p = run("potrf", "--input", tmp_path / "a.npy")
    assert p.returncode == 1 and "5" in p.stderr


def test_nan_input_is_named(tmp_path):
    n = 10
    a = [0.0] * (n * n)
    for i in range(n):
        a[i + i * n] = 2.0
    a[6 + 6 * n] = float("nan")
    write_npy(tmp_path / "a.npy", n, n, a)
    p = run("potrf", "--input", tmp_path / "a.npy")
    assert p.returncode == 1 and "NaN" in p.stderr and "order 7" in p.stderr, p.stderr


def test_messages_are_sentences_not_placeholders():
    p = run("potrf", "--workers", 0, "--gpus", 0)
    assert p.returncode == 1
    assert "-status" not in p.stderr and "no workers" in p.stderr, p.stderr
    p = run("potrf", "--n", 2147483647)
    assert p.returncode == 1
    assert "inf" not in p.stderr and "GiB" in p.stderr and "2147483647" in p.stderr, p.stderr


def test_worker_count_past_the_bound_is_refused_alike_from_the_option_and_the_variable():
    """--workers and TESSERA_CPU_WORKERS share one bound and one sentence: a count past it
    fails at once (it would start thousands of threads) and says what the count takes."""
    p = run("posv", "--n", 64, "--workers", 5000, "--gpus", 0)
    assert p.returncode == 1 and "cpu_workers = 5000" in p.stderr, p.stderr
    takes = re.search(r"it takes (an integer from 0 to \d+)\.", p.stderr)
    assert takes, p.stderr
    env = dict(ENV, TESSERA_CPU_WORKERS="5000")
    q = subprocess.run([str(CLI), "posv", "--n", "64", "--gpus", "0"], capture_output=True,
                       text=True, env=env, timeout=300)
    assert q.returncode == 1 and 'TESSERA_CPU_WORKERS="5000"' in q.stderr, q.stderr
    assert f"it takes {takes.group(1)}." in q.stderr, q.stderr


@pytest.mark.parametrize("command", ["info", "potrf", "potrs", "posv", "getrf", "gesv", "geqrf",
                                     "gels", "syevd", "gepolar", "gesvd", "bench", "demo", "gen",
                                     "trace"])
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_each_command_has_its_own_usage(command, flag):
    p = run(command, flag, check=0)
    assert p.stdout.startswith("usage: tessera %s " % command), p.stdout
    glob = run("--help", check=0).stdout
    assert p.stdout != glob
    # only the options the command takes
    assert ("--out-of-core" in p.stdout) == (command == "bench")
    assert ("--rhs" in p.stdout) == (command in ("potrs", "posv", "gesv", "gels"))
    # after other options too
    assert run(command, "--json", flag, check=0).stdout == p.stdout


def test_version():
    for args in (["--version"], ["potrf", "--version"]):
        out = run(*args, check=0).stdout
        assert out.startswith("tessera ") and out.strip().split()[1].count(".") == 2


def gpu_count():
    out = run("info", "--n", 0, check=0).stdout
    return sum(1 for line in out.splitlines() if line.strip().startswith("cuda "))


@pytest.mark.skipif(not shutil.which("taskset") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs taskset and two cores to run on")
def test_more_workers_than_the_cores_a_process_may_run_on_warns():
    """A process bound to one core (as mpirun binds each of two) asked for two workers."""
    args = ["potrf", "--n", 200, "--gpus", 0, "--json"]
    core = str(min(os.sched_getaffinity(0)))
    p = subprocess.run(["taskset", "-c", core, str(CLI), *map(str, args), "--workers", "2"],
                       capture_output=True, text=True, env=ENV, timeout=300)
    assert p.returncode == 0 and "--workers 2" in p.stderr and "--bind-to none" in p.stderr, \
        p.stderr
    assert json_lines(p.stdout)[0]["residual"] < 10
    p = subprocess.run(["taskset", "-c", core, str(CLI), *map(str, args), "--workers", "1"],
                       capture_output=True, text=True, env=ENV, timeout=300)
    assert p.returncode == 0 and "warning" not in p.stderr, p.stderr


def test_more_gpus_than_exist_warns_or_fails_when_required():
    want = gpu_count() + 1
    p = run("potrf", "--n", 200, "--gpus", want, "--json", check=0)
    assert "warning" in p.stderr and "--gpus %d" % want in p.stderr, p.stderr
    assert json_lines(p.stdout)[0]["residual"] < 10
    p = run("potrf", "--n", 200, "--gpus", want, "--require-gpus")
    assert p.returncode == 1 and "--require-gpus" in p.stderr and not p.stdout
    assert run("potrf", "--require-gpus").returncode == 2
    p = run("potrf", "--n", 200, "--gpus", want - 1, "--require-gpus", check=0)
    assert "warning" not in p.stderr


def test_info_shows_the_tile_per_order_and_a_measured_rate():
    out = run("info", "--n", 256, check=0).stdout
    line = out[out.index("tessera_tile_for"):].splitlines()[1]
    tiles = dict(item.split(": ") for item in line.strip().split(", "))
    assert set(tiles) >= {"1000", "4096", "16384"}
    assert all(int(t) > 0 for t in tiles.values())
    (r,) = json_lines(run("potrf", "--n", 4096 if "cuda 0" in out else 1000, "--json",
                          check=0).stdout)
    assert r["tile"] == int(tiles[str(r["n"])])
    assert "nominal" in out and "measured: gemm of order 256" in out
    assert float(out.split("workers: ")[-1].split()[0]) > 0


# -------------------------------------------------------------- memory footprint, refused early

def meminfo(key):
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    pytest.skip("no %s in /proc/meminfo" % key)


def run_limited(args, limit):
    """The CLI with its address space capped at `limit` bytes: a command that allocated its
    arrays without checking their sum first fails at once instead of filling the machine."""
    import resource

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, env=ENV,
                          timeout=60, preexec_fn=cap)


def assert_refused(p, n, elapsed):
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert not p.stdout, p.stdout
    err = " ".join(p.stderr.split())
    assert "n = %d" % n in err and "of memory at once" in err and "available" in err, err
    assert "GiB" in err or "TiB" in err, err
    advice = err.split("choose --n ")[1].split()[0]
    assert 0 < int(advice) < n, err
    assert elapsed < 10, elapsed


@pytest.mark.parametrize("args", [["potrf"], ["potrs"], ["posv", "--nrhs", 2], ["getrf"],
                                  ["gesv"], ["demo"], ["syevd"], ["syevd", "--values-only"],
                                  ["gepolar"], ["gesvd"], ["gesvd", "--values-only"]])
def test_two_copies_that_do_not_fit_together_are_refused_before_allocating(args):
    # one n x n f64 array takes 3/4 of the available memory: each array alone fits, the
    # original A kept for the residual and the copy the routine overwrites do not
    avail = meminfo("MemAvailable")
    n = int((0.75 * avail / 8) ** 0.5)
    t0 = time.monotonic()
    p = run_limited([*args, "--n", n], limit=int(0.5 * n * n * 8))
    assert_refused(p, n, time.monotonic() - t0)
    assert "A twice" in p.stderr


@pytest.mark.parametrize("routine", ["posv", "potrs", "gesv", "demo"])
def test_right_hand_sides_that_do_not_fit_are_named(routine):
    """Too many right-hand sides for an order that fits: the advice names --nrhs and how many
    fit, not an order of 10."""
    p = run(routine, "--n", 1000, "--nrhs", 100000000)
    assert p.returncode == 1 and not p.stdout, (p.stdout, p.stderr)
    err = " ".join(p.stderr.split())
    assert "100000000 right-hand sides" in err and "choose --n " not in err, err
    k = int(err.split("choose --nrhs ")[1].split()[0])
    assert 1 <= k < 100000000, err


def test_gen_refuses_a_matrix_larger_than_the_memory(tmp_path):
    n = int((1.5 * meminfo("MemAvailable") / 8) ** 0.5)
    t0 = time.monotonic()
    p = run_limited(["gen", "--n", n, "--output", tmp_path / "a.npy"], limit=2 << 30)
    assert_refused(p, n, time.monotonic() - t0)
    assert not (tmp_path / "a.npy").exists()


@pytest.mark.parametrize("args", [["bench", "potrf"], ["bench", "getrf", "--resident"],
                                  ["bench", "potrf", "--out-of-core"], ["bench", "syevd"],
                                  ["info"]])
def test_bench_and_info_refuse_sizes_larger_than_the_memory(args):
    # far beyond any machine: nothing of it can be allocated, checked or not
    n = 2000000
    t0 = time.monotonic()
    sizes = "100,%d" % n if args[0] == "bench" else n  # bench: every size checked first
    p = run(*args, "--n", sizes, "--gpus", 0)
    assert_refused(p, n, time.monotonic() - t0)


def test_an_input_matrix_too_large_is_refused_from_its_header(tmp_path):
    n = int((0.75 * meminfo("MemAvailable") / 8) ** 0.5)
    header = "{'descr': '<f8', 'fortran_order': True, 'shape': (%d, %d), }" % (n, n)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    (tmp_path / "a.npy").write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
                                     header.encode())  # the header alone: no data follows
    p = run_limited(["potrf", "--input", tmp_path / "a.npy"], limit=int(0.5 * n * n * 8))
    assert p.returncode == 1 and "a.npy (n = %d, f64)" % n in p.stderr, p.stderr
    assert "of memory at once" in p.stderr and "smaller matrix" in p.stderr, p.stderr


def mpi_available():
    return shutil.which("mpirun") and "communication: MPI" in run("info", "--n", 0).stdout


def mpirun(np, *args, timeout=120):
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    cmd = ["mpirun", "--oversubscribe", *root, "-np", str(np), str(CLI), *map(str, args)]
    # a session folder of its own: mpiruns of parallel pytest workers race to make a shared one
    with tempfile.TemporaryDirectory() as sessions:
        env = dict(ENV, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_orte_tmpdir_base=sessions)
        return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)


@pytest.mark.skipif(not mpi_available(), reason="no mpirun, or a CLI built without MPI")
def test_grid_run_too_large_is_refused_on_every_process():
    n = 10000000
    t0 = time.monotonic()
    p = mpirun(2, "posv", "--n", n, "--grid", "2x1", "--workers", 1, "--gpus", 0)
    elapsed = time.monotonic() - t0
    out = p.stdout + p.stderr
    assert p.returncode != 0, out
    assert "result" not in p.stdout and "residual" not in p.stdout, out
    assert out.count("of memory at once") == 1, out  # said once, by the first process of the host
    assert "on a 2x1 grid" in out and "n = %d" % n in out and "processes 0 and 1" in out, out
    assert elapsed < 60, elapsed


@pytest.mark.skipif(not mpi_available(), reason="no mpirun, or a CLI built without MPI")
def test_grid_run_that_fits_still_runs():
    p = mpirun(2, "getrf", "--n", 200, "--grid", "2x1", "--workers", 1, "--gpus", 0, "--json")
    assert p.returncode == 0, p.stdout + p.stderr
    (r,) = json_lines(p.stdout)
    assert r["routine"] == "getrf" and r["residual"] < 10


@pytest.mark.skipif(not mpi_available(), reason="no mpirun, or a CLI built without MPI")
def test_grid_gesvd_from_process_0():
    p = mpirun(2, "gesvd", "--m", 120, "--n", 90, "--grid", "2x1", "--workers", 1, "--gpus", 0,
               "--json")
    assert p.returncode == 0, p.stdout + p.stderr
    (r,) = json_lines(p.stdout)
    assert r["routine"] == "gesvd" and r["residual"] < 10 and r["orthogonality"] < 10, r


# -------------------------------------------------------------- output paths, checked first

@pytest.mark.parametrize("args,flag", [
    (["potrf", "--n", 3000, "--output", "{missing}/l.npy"], "--output"),
    (["posv", "--n", 3000, "-o", "{dir}"], "--output"),
    (["getrf", "--n", 3000, "--output", "{dir}/lu.npy"], "pivots"),  # lu.piv.npy is a folder
    (["potrf", "--n", 3000, "--trace", "{missing}/t.json"], "--trace"),
    (["gen", "--n", 3000, "--output", "{missing}/a.npy"], "--output"),
    (["trace", "{dir}/t.json", "-o", "{missing}/g.svg"], "--output"),
])
def test_unwritable_outputs_fail_before_computing(tmp_path, args, flag):
    (tmp_path / "lu.piv.npy").mkdir()
    (tmp_path / "t.json").write_text('{"traceEvents": []}')
    args = [str(a).format(missing=tmp_path / "missing", dir=tmp_path) for a in args]
    t0 = time.monotonic()
    p = run(*args)
    elapsed = time.monotonic() - t0
    assert p.returncode == 1 and not p.stdout, (p.stdout, p.stderr)
    path = next(a for a in args if "missing" in a or a == str(tmp_path) or a.endswith("lu.npy"))
    named = path if flag != "pivots" else str(tmp_path / "lu.piv.npy")
    assert named in p.stderr and flag in p.stderr, p.stderr
    assert "No such file or directory" in p.stderr or "Is a directory" in p.stderr, p.stderr
    assert elapsed < 1.0, elapsed


def test_output_check_leaves_no_file_and_keeps_an_existing_one(tmp_path):
    n = 10
    a = [0.0] * (n * n)
    for i in range(n):
        a[i + i * n] = 1.0
    a[4 + 4 * n] = -1.0  # not positive definite: potrf fails after the check
    write_npy(tmp_path / "a.npy", n, n, a)
    p = run("potrf", "--input", tmp_path / "a.npy", "--output", tmp_path / "new.npy")
    assert p.returncode == 1
    assert not (tmp_path / "new.npy").exists()
    (tmp_path / "old.npy").write_bytes(b"kept")
    p = run("potrf", "--input", tmp_path / "a.npy", "--output", tmp_path / "old.npy")
    assert p.returncode == 1
    assert (tmp_path / "old.npy").read_bytes() == b"kept"


# -------------------------------------------------------------- getrf --output: factors and pivots

def save_random(np, path, n, dtype, seed):
    """A random n x n matrix (standard normal parts; complex for dtype "z") saved to `path`, and
    the generator that made it."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n))
    if dtype == "z":
        a = a + 1j * rng.standard_normal((n, n))
    np.save(path, a)
    return a, rng


@pytest.mark.parametrize("dtype", ["d", "z"])
def test_getrf_output_writes_factors_and_pivots_that_solve(tmp_path, dtype):
    np = pytest.importorskip("numpy")
    n = 60
    a, rng = save_random(np, tmp_path / "a.npy", n, dtype, 7)
    p = run("getrf", "--input", tmp_path / "a.npy", "--dtype", dtype, "--tile", 16, "--output",
            tmp_path / "lu.npy", "--json", check=0)
    assert json_lines(p.stdout)[0]["residual"] < 10
    lu = np.load(tmp_path / "lu.npy")
    piv = np.load(tmp_path / "lu.piv.npy")
    assert piv.dtype == np.int32 and piv.shape == (n,)
    assert piv.min() >= 0 and piv.max() < n and (piv >= np.arange(n)).all()
    low = np.tril(lu, -1) + np.eye(n)
    up = np.triu(lu)
    pa = a.copy()
    for i, j in enumerate(piv):  # P A: the interchanges in order
        pa[[i, j]] = pa[[j, i]]
    assert np.abs(pa - low @ up).max() < 1e-10 * np.abs(a).max() * n
    b = rng.standard_normal(n)
    pb = b.astype(a.dtype)
    for i, j in enumerate(piv):
        pb[[i, j]] = pb[[j, i]]
    x = np.linalg.solve(up, np.linalg.solve(low, pb))
    assert np.abs(a @ x - b).max() < 1e-9 * np.abs(b).max() * n
    try:
        from scipy.linalg import lu_solve
    except ImportError:
        return
    assert np.allclose(lu_solve((lu, piv), b), x)


# -------------------------------------------------------------- per-command help

COMMANDS = ["info", "potrf", "potrs", "posv", "getrf", "gesv", "syevd", "gepolar", "gesvd", "bench",
            "demo", "gen", "trace"]


def listed_options(text):
    opts = text.split("\noptions:\n", 1)[1].split("\n\n", 1)[0]
    return set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", opts))


def refused(command, options):
    """The options the command does not take: every option given at once (a value after '=',
    then an unknown option: a usage error whatever happens, without running), the command naming
    all those it does not take in its one message."""
    p = run(command, *[opt + "=1" for opt in options], "--no-such-option")
    assert p.returncode == 2, (command, p.stderr)
    m = re.search(r"tessera: (.*) (?:does|do) not apply to", p.stderr)
    return set(m.group(1).split(", ")) if m else set()


@pytest.mark.parametrize("command", COMMANDS)
def test_help_lists_exactly_the_options_the_command_takes(command):
    everything = listed_options(run("--help", check=0).stdout)
    listed = listed_options(run(command, "--help", check=0).stdout)
    assert listed <= everything and {"--help", "-h", "--version"} <= listed
    options = sorted(everything - {"--help", "-h", "--version"})
    assert set(options) - refused(command, options) == listed - {"--help", "-h", "--version"}
    # one option the command does not take, alone: named in a sentence of its own
    other = sorted(set(options) - listed)
    if other:
        p = run(command, other[0] + "=1")
        assert p.returncode == 2 and f"{other[0]} does not apply to '{command}'" in p.stderr


def test_help_texts_are_the_commands_own():
    potrf = run("potrf", "--help", check=0).stdout
    assert "N1,N2" not in potrf and "default 1000" in potrf
    assert "N1,N2" in run("bench", "--help", check=0).stdout
    assert "--uplo" not in run("getrf", "--help", check=0).stdout
    assert run("bench", "getrf", "--uplo", "U").returncode == 2
    trace = run("trace", "--help", check=0).stdout
    assert "chart written" in trace and "factor" not in trace and "solution" not in trace
    assert "lu.piv.npy" in run("getrf", "--help", check=0).stdout


@pytest.mark.parametrize("command", ["potrf", "potrs", "posv", "getrf", "gesv", "syevd", "gepolar",
                                     "bench", "demo"])
def test_help_says_what_the_residual_is_and_what_passes(command):
    text = " ".join(run(command, "--help", check=0).stdout.split())
    assert "residual =" in text or "residual of" in text
    assert "n eps" in text and "machine epsilon" in text and "below 10 passes" in text


@pytest.mark.parametrize("dtype", ["s", "d", "c", "z"])
@pytest.mark.parametrize("shape", [(300, 120), (120, 120), (90, 200)])
def test_geqrf_reports_residual_and_orthogonality(dtype, shape):
    m, n = shape
    r = json_lines(run("geqrf", "--m", m, "--n", n, "--dtype", dtype, "--json", check=0).stdout)[0]
    assert (r["routine"], r["m"], r["n"]) == ("geqrf", m, n)
    assert r["residual"] < 10 and r["orthogonality"] < 10, r


@pytest.mark.parametrize("dtype", ["s", "d", "c", "z"])
def test_gepolar_and_gesvd_report_residual_and_orthogonality(dtype):
    for args, m, n in ((["gepolar"], 300, 120), (["gesvd"], 130, 210),
                       (["gesvd", "--full"], 150, 90), (["gesvd", "--values-only"], 210, 130)):
        r = json_lines(run(*args, "--m", m, "--n", n, "--dtype", dtype, "--json", check=0).stdout)[0]
        assert (r["routine"], r["m"], r["n"]) == (args[0], m, n)
        assert r["residual"] < 10, r
        assert ("orthogonality" in r) != ("--values-only" in args), r
        assert r.get("orthogonality", 0) < 10, r


def test_bench_gepolar_and_gesvd_against_the_baseline():
    for args in (["gepolar", "--m", 160, "--n", 120], ["gesvd", "--n", 130, "--values-only"]):
        p = run("bench", *args, "--reps", 1, "--json", check=0)
        (r,) = json_lines(p.stdout)
        assert r["routine"] == args[0] and r["residual"] < 10, r
        if gpu_count() == 0:
            assert r["baseline"] == "lapacke_gesdd" and r["baseline_seconds"] > 0 and r["ratio"] > 0, r


def test_gepolar_and_gesvd_outputs(tmp_path):
    np = pytest.importorskip("numpy")
    u = tmp_path / "u.npy"
    run("gepolar", "--m", 90, "--n", 60, "-o", u, check=0)
    up, h = np.load(u), np.load(tmp_path / "u.h.npy")
    assert up.shape == (90, 60) and h.shape == (60, 60)
    assert np.allclose(up.T @ up, np.eye(60)) and np.allclose(h, h.T)
    assert np.all(np.linalg.eigvalsh(h) > -1e-12)
    s = tmp_path / "s.npy"
    run("gesvd", "--m", 50, "--n", 80, "-o", s, check=0)
    sv, uu, vt = np.load(s), np.load(tmp_path / "s.u.npy"), np.load(tmp_path / "s.vt.npy")
    assert sv.shape == (50,) and uu.shape == (50, 50) and vt.shape == (50, 80)
    assert np.all(np.diff(sv) <= 0)
    assert np.allclose(np.linalg.svd(uu @ np.diag(sv) @ vt, compute_uv=False), sv)
    # every vector: U m x m and Vᴴ n x n, both unitary, the economy ones first
    run("gesvd", "--m", 30, "--n", 70, "--full", "-o", s, check=0)
    sv, uu, vt = np.load(s), np.load(tmp_path / "s.u.npy"), np.load(tmp_path / "s.vt.npy")
    assert sv.shape == (30,) and uu.shape == (30, 30) and vt.shape == (70, 70)
    assert np.allclose(vt @ vt.T, np.eye(70)) and np.allclose(uu.T @ uu, np.eye(30))
    assert np.allclose(np.linalg.svd(uu @ np.diag(sv) @ vt[:30], compute_uv=False), sv)
    p = run("gesvd", "--n", 20, "--full", "--values-only")
    assert p.returncode == 2 and "--full" in p.stderr, p.stderr
    # a wide A has no polar decomposition here: refused with the way round it
    p = run("gepolar", "--m", 40, "--n", 60)
    assert p.returncode == 1 and "m >= n" in p.stderr and "conjugate transpose" in p.stderr


@pytest.mark.parametrize("dtype", ["d", "z"])
@pytest.mark.parametrize("shape", [(400, 150), (150, 400)])
def test_gels_reports_lapacks_test_ratio(dtype, shape):
    m, n = shape
    r = json_lines(run("gels", "--m", m, "--n", n, "--nrhs", 3, "--dtype", dtype, "--json",
                       check=0).stdout)[0]
    assert (r["routine"], r["m"], r["n"], r["nrhs"]) == ("gels", m, n, 3)
    assert r["residual"] < 10, r


def test_geqrf_and_gels_npy_round_trip(tmp_path):
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(3)
    a = rng.standard_normal((40, 25))
    np.save(tmp_path / "a.npy", a)
    run("geqrf", "--input", tmp_path / "a.npy", "-o", tmp_path / "qr.npy", check=0)
    qr, tau = np.load(tmp_path / "qr.npy"), np.load(tmp_path / "qr.tau.npy")
    assert qr.shape == (40, 25) and tau.shape == (25,)
    r = np.triu(qr)[:25]
    q = np.eye(40)[:, :25]
    for i in reversed(range(25)):  # Q = H_1 ... H_k applied to the identity's first columns
        v = np.concatenate([np.zeros(i), [1.0], qr[i + 1:, i]])
        q -= tau[i] * np.outer(v, v @ q)
    assert np.abs(q @ r - a).max() < 1e-12 * np.abs(a).max() * 40
    run("gels", "--input", tmp_path / "a.npy", "-o", tmp_path / "x.npy", check=0)
    x = np.load(tmp_path / "x.npy")
    assert x.shape == (25, 1) and np.isfinite(x).all()


def columns_npy(path, m, n, column):
    """An m x n float64 .npy whose column j (0-based) is column(j): a list of m values."""
    write_npy(path, m, n, [v for j in range(n) for v in column(j)])


def generic(m):
    """Column j of a full-rank m-row matrix: distinct smooth values, no two columns alike."""
    return lambda j: [1.0 / (1 + i + j) + (2.0 if i == j else 0.0) for i in range(m)]


def only_json_object(p):
    (r,) = json_lines(p.stdout)
    return r


@pytest.mark.parametrize("routine", ["geqrf", "gels"])
@pytest.mark.parametrize("dtype,name", [("s", "f32"), ("c", "c64"), ("z", "c128")])
def test_qr_input_of_another_dtype_is_refused(tmp_path, routine, dtype, name):
    """geqrf and gels compute in --input's dtype: an f64 file asked as another dtype is refused
    as posv, getrf and syevd refuse it, not computed in f64 and labelled otherwise."""
    columns_npy(tmp_path / "a.npy", 12, 5, generic(12))
    p = run(routine, "--input", tmp_path / "a.npy", "--dtype", dtype)
    assert p.returncode == 1 and not p.stdout, (p.stdout, p.stderr)
    assert "expected dtype %s (holds f64" % name in p.stderr, p.stderr
    (r,) = json_lines(run(routine, "--input", tmp_path / "a.npy", "--dtype", "d", "--json",
                          check=0).stdout)
    assert r["dtype"] == "f64" and r["residual"] < 10, r


@pytest.mark.parametrize("routine", ["geqrf", "gels"])
def test_qr_nan_input_is_named_and_fails(tmp_path, routine):
    """A NaN in A (or in gels' b) is reported with its column and the command fails, as getrf's
    and syevd's do, instead of a residual of 0 or null and exit 0."""
    m, n = 12, 6
    a = generic(m)
    columns_npy(tmp_path / "a.npy", m, n, lambda j: [float("nan")] * 2 + a(j)[2:] if j == 3
                else a(j))
    for out in ([], ["--json"]):
        p = run(routine, "--input", tmp_path / "a.npy", *out)
        assert p.returncode == 1, (p.stdout, p.stderr)
        assert "NaN" in p.stderr and "column 4" in p.stderr and "A holds" in p.stderr, p.stderr
        assert "residual" not in p.stdout and "null" not in p.stdout, p.stdout
    if routine == "gels":
        columns_npy(tmp_path / "a.npy", m, n, a)
        columns_npy(tmp_path / "b.npy", m, 2, lambda j: [1.0] * m if j == 0 else
                    [float("inf")] + [0.0] * (m - 1))
        p = run("gels", "--input", tmp_path / "a.npy", "--rhs", tmp_path / "b.npy")
        assert p.returncode == 1 and "b holds NaN (or Inf) in column 2" in p.stderr, p.stderr


def matrix_with(m, n, replace):
    """A full-rank m x n matrix as columns, whose column (tall) or row (wide) i, 0-based, is
    replace(i, the matrix) where that is not None: a zero one, or a copy of another."""
    wide = m < n
    a = generic(max(m, n))
    rows = [a(i)[:n] for i in range(m)] if wide else None
    cols = None if wide else [a(j)[:m] for j in range(n)]
    lines = rows if wide else cols
    for i in range(len(lines)):
        new = replace(i, lines)
        if new is not None:
            lines[i] = new
    return [[rows[i][j] for i in range(m)] for j in range(n)] if wide else cols


@pytest.mark.parametrize("shape", [(12, 6), (6, 12)])
def test_gels_of_a_singular_matrix_says_so(tmp_path, shape):
    """gels of A not of full rank: an exactly zero R(i, i) fails with LAPACK's info = i in a
    sentence naming the command (no internal routine's name, no empty table); a numerically
    singular R is warned of and the run goes on. Tall: A's column 3 zero, column 5 a copy of 4;
    wide: the same of A's rows (the columns of the Aᴴ whose QR gels takes)."""
    m, n = shape
    zero = matrix_with(m, n, lambda i, lines: [0.0] * len(lines[i]) if i == 2 else None)
    columns_npy(tmp_path / "zero.npy", m, n, lambda j: zero[j])
    for out in ([], ["--json"]):
        p = run("gels", "--input", tmp_path / "zero.npy", *out)
        assert p.returncode == 1, (p.stdout, p.stderr)
        assert "R(3, 3)" in p.stderr and "exactly zero" in p.stderr and "info = 3" in p.stderr
        assert "tile_gels" not in p.stderr and "op " not in p.stdout, (p.stdout, p.stderr)
    near = matrix_with(m, n, lambda i, lines: list(lines[3]) if i == 4 else None)
    columns_npy(tmp_path / "near.npy", m, n, lambda j: near[j])
    p = run("gels", "--input", tmp_path / "near.npy")
    assert p.returncode == 0, p.stderr
    assert "warning" in p.stderr and "numerically rank deficient" in p.stderr, p.stderr
    assert "R(5, 5)" in p.stderr and p.stdout.startswith("op "), (p.stdout, p.stderr)
    full = matrix_with(m, n, lambda i, lines: None)
    columns_npy(tmp_path / "full.npy", m, n, lambda j: full[j])
    p = run("gels", "--input", tmp_path / "full.npy", check=0)
    assert "warning" not in p.stderr and "R(" not in p.stderr, p.stderr


@pytest.mark.parametrize("shape", [(30, 10), (10, 30)])
def test_gels_takes_the_users_rhs(tmp_path, shape):
    """gels --rhs b.npy (m x K) solves for the user's b: the least squares solution (m >= n)
    or the minimum norm one (m < n), as numpy's lstsq gives them."""
    np = pytest.importorskip("numpy")
    m, n = shape
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((m, n)), rng.standard_normal((m, 3))
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    (r,) = json_lines(run("gels", "--input", tmp_path / "a.npy", "--rhs", tmp_path / "b.npy",
                          "-o", tmp_path / "x.npy", "--json", check=0).stdout)
    assert r["nrhs"] == 3 and r["residual"] < 10, r
    x = np.load(tmp_path / "x.npy")
    assert x.shape == (n, 3)
    assert np.allclose(x, np.linalg.lstsq(a, b, rcond=None)[0], atol=1e-10)
    np.save(tmp_path / "b1.npy", b[:, 0])  # one right-hand side, 1-D
    run("gels", "--input", tmp_path / "a.npy", "--rhs", tmp_path / "b1.npy", "-o",
        tmp_path / "x1.npy", check=0)
    assert np.allclose(np.load(tmp_path / "x1.npy")[:, 0], x[:, 0], atol=1e-10)
    np.save(tmp_path / "short.npy", b[:-1])
    p = run("gels", "--input", tmp_path / "a.npy", "--rhs", tmp_path / "short.npy")
    assert p.returncode == 1 and "expected %d rows" % m in p.stderr, p.stderr
    assert run("gels", "--rhs", tmp_path / "b.npy", "--nrhs", 2).returncode == 2
    assert "--rhs" in run("gels", "--help", check=0).stdout


def test_gels_table_has_no_dead_column():
    """gels computes no orthogonality: its table has no column for it (geqrf's does)."""
    for routine, orth in (("gels", False), ("geqrf", True)):
        lines = run(routine, "--m", 40, "--n", 20, check=0).stdout.splitlines()
        header, row = lines[0].split(), lines[1].split()
        assert ("orth" in header) == orth and len(header) == len(row), lines
        assert "nan" not in row, lines


def test_bench_gels_table_has_no_dead_column():
    lines = [l.split() for l in run("bench", "gels", "--n", 60, "--m", 90, "--reps", 1,
                                    check=0).stdout.splitlines() if not l.startswith("#")]
    assert "orth" not in lines[0] and "residual" in lines[0] and "nan" not in lines[1], lines


def test_bench_geqrf_against_lapacke():
    out = run("bench", "geqrf", "--n", 256, "--m", 512, "--reps", 1, "--json", check=0).stdout
    r = json_lines(out)[0]
    assert r["baseline"] == "lapacke" and r["ratio"] > 0 and r["residual"] < 10, r


@pytest.mark.parametrize("routine", ["geqrf", "gels"])
def test_bench_qr_resident_times_the_lapack_style_and_the_tile_call(routine):
    p = run("bench", routine, "--n", 200, "--m", 300, "--resident", "--reps", 2, "--json",
            check=0)
    lines = json_lines(p.stdout)
    assert [r["api"] for r in lines] == ["lapack", "tile"], p.stdout
    for r in lines:
        assert (r["routine"], r["m"], r["n"]) == (routine, 300, 200), r
        assert r["seconds"] > 0 and r["gflops"] > 0 and r["tile"] > 0, r
        assert 0 <= r["residual"] < 10, r
        if routine == "geqrf":
            assert 0 <= r["orthogonality"] < 10, r
        assert r["baseline"] in ("lapacke", "cusolverDn") and r["ratio"] > 0, r
    assert lines[0]["baseline_seconds"] == lines[1]["baseline_seconds"]
    only = json_lines(run("bench", routine, "--n", 120, "--m", 250, "--resident-only", "--reps",
                          1, "--no-baseline", "--json", check=0).stdout)
    assert [r["api"] for r in only] == ["tile"] and only[0]["residual"] < 10, only
    assert "baseline" not in only[0]


def test_bench_gels_resident_leaves_the_tile_line_out_for_m_below_n():
    p = run("bench", "gels", "--n", 200, "--m", 120, "--nrhs", 2, "--resident", "--reps", 1,
            "--json", check=0)
    lines = json_lines(p.stdout)
    assert [r["api"] for r in lines] == ["lapack"] and lines[0]["residual"] < 10, p.stdout
    assert "tessera_tile_gels does not take m < n" in p.stderr


@pytest.mark.skipif(not mpi_available(), reason="no mpirun, or a CLI built without MPI")
@pytest.mark.parametrize("routine", ["geqrf", "gels"])
def test_grid_qr_runs_over_processes(routine):
    """geqrf|gels --grid: the tile-level call on column panels dealt over the processes, each
    generating its own (api "grid"), tall and wide."""
    rhs = ["--nrhs", 2] if routine == "gels" else []
    for m, n in ((300, 120), (90, 200)):
        p = mpirun(2, routine, "--m", m, "--n", n, "--grid", "1x2", "--workers", 1, "--gpus", 0,
                   *rhs, "--json")
        assert p.returncode == 0, (p.stdout, p.stderr)
        lines = json_lines(p.stdout)
        assert len(lines) == 1, p.stdout  # process 0 prints
        r = lines[0]
        assert (r["routine"], r["api"], r["m"], r["n"]) == (routine, "grid", m, n), r
        assert r["residual"] < 10, r
        if routine == "geqrf":
            assert r["orthogonality"] < 10, r


# -------------------------------------------------------------- syevd: Hermitian eigensolver

@pytest.mark.parametrize("values_only", [False, True])
@pytest.mark.parametrize("n", [1, 7, 50])
@pytest.mark.parametrize("dtype", ["s", "d", "c", "z"])
def test_syevd_reports_residual_and_orthogonality(dtype, n, values_only):
    only = ["--values-only"] if values_only else []
    uplo = "U" if n == 7 else "L"
    (r,) = json_lines(run("syevd", "--n", n, "--dtype", dtype, "--uplo", uplo, *only, "--json",
                          check=0).stdout)
    assert (r["routine"], r["n"], r["uplo"], r["job"]) == ("syevd", n, uplo,
                                                           "N" if values_only else "V"), r
    assert r["seconds"] > 0 and r["gflops"] >= 0 and r["tile"] > 0, r
    assert 0 <= r["residual"] < 10, r
    if values_only:
        assert "orthogonality" not in r, r
    else:
        assert 0 <= r["orthogonality"] < 10, r


def test_syevd_table_and_gflops_count():
    p = run("syevd", "--n", 120, "--reps", 2, check=0)
    head, row = p.stdout.splitlines()
    assert head.split()[:4] == ["op", "dtype", "uplo", "job"] and head.split()[-1] == "orth"
    cells = row.split()
    assert cells[:4] == ["syevd", "f64", "L", "V"] and float(cells[-1]) < 10, row
    seconds, gflops = float(cells[8]), float(cells[9])
    assert abs(gflops - 9 * 120 ** 3 / seconds * 1e-9) <= 0.01 + 1e-3 * gflops, row  # 9 n^3
    row = run("syevd", "--n", 120, "--values-only", check=0).stdout.splitlines()[1].split()
    assert row[3] == "N" and row[-1] == "-", row
    seconds, gflops = float(row[8]), float(row[9])
    assert abs(gflops - 4 / 3 * 120 ** 3 / seconds * 1e-9) <= 0.01 + 1e-3 * gflops, row


@pytest.mark.parametrize("dtype", ["d", "z"])
def test_syevd_npy_round_trip(tmp_path, dtype):
    np = pytest.importorskip("numpy")
    n = 40
    a, _ = save_random(np, tmp_path / "a.npy", n, dtype, 5)
    p = run("syevd", "--input", tmp_path / "a.npy", "--uplo", "U", "-o", tmp_path / "w.npy",
            "--json", check=0)
    (r,) = json_lines(p.stdout)
    assert r["dtype"] == ("c128" if dtype == "z" else "f64") and r["residual"] < 10, r
    h = np.triu(a) + np.triu(a, 1).conj().T  # the upper triangle read, made Hermitian
    h = h - 1j * np.diag(np.diag(h).imag) if dtype == "z" else h
    w, v = np.load(tmp_path / "w.npy"), np.load(tmp_path / "w.vectors.npy")
    assert w.dtype == np.float64 and w.shape == (n,)
    assert v.dtype == a.dtype and v.shape == (n, n)
    assert (np.diff(w) >= 0).all()
    scale = np.abs(h).max() * n
    assert np.abs(w - np.linalg.eigvalsh(h)).max() < 1e-12 * scale
    assert np.abs(h @ v - v * w).max() < 1e-12 * scale
    assert np.abs(v.conj().T @ v - np.eye(n)).max() < 1e-12 * n
    run("syevd", "--input", tmp_path / "a.npy", "--values-only", "-o", tmp_path / "only.npy",
        check=0)
    assert np.abs(np.load(tmp_path / "only.npy") - np.linalg.eigvalsh(a, UPLO="L")).max() < \
        1e-12 * scale
    assert not (tmp_path / "only.vectors.npy").exists()


@pytest.mark.parametrize("dtype", ["d", "z"])
def test_syevd_range_writes_the_range_alone(tmp_path, dtype):
    """--range IL:IU (tessera_syevdx / heevdx): eigenvalues il .. iu of LAPACK's and their
    vectors, written as k values and n x k vectors; IU past n is the library's argument error."""
    np = pytest.importorskip("numpy")
    n, il, iu = 40, 7, 19
    a, _ = save_random(np, tmp_path / "a.npy", n, dtype, 9)
    p = run("syevd", "--input", tmp_path / "a.npy", "--range", f"{il}:{iu}",
            "-o", tmp_path / "w.npy", "--json", check=0)
    (r,) = json_lines(p.stdout)
    assert (r["il"], r["iu"]) == (il, iu) and r["residual"] < 10 and r["orthogonality"] < 10, r
    h = np.tril(a) + np.tril(a, -1).conj().T
    h = h - 1j * np.diag(np.diag(h).imag) if dtype == "z" else h
    w, v = np.load(tmp_path / "w.npy"), np.load(tmp_path / "w.vectors.npy")
    assert w.shape == (iu - il + 1,) and v.shape == (n, iu - il + 1)
    tol = 1e-12
    scale = np.abs(h).max() * n
    assert np.abs(w - np.linalg.eigvalsh(h)[il - 1:iu]).max() < tol * scale
    assert np.abs(h @ v - v * w).max() < tol * scale
    (r,) = json_lines(run("syevd", "--n", 50, "--range", "50:50", "--values-only", "--json",
                          check=0).stdout)
    assert r["job"] == "N" and r["residual"] < 10, r
    p = run("syevd", "--n", 30, "--range", "3:31")
    assert p.returncode == 1 and "argument 9 (iu)" in p.stderr, p.stderr
    for bad in ("3", "0:4", "5:2", "a:b"):
        p = run("syevd", "--n", 30, "--range", bad)
        assert p.returncode == 2 and "--range" in p.stderr and not p.stdout, (bad, p.stderr)
    assert run("bench", "syevd", "--range", "1:2").returncode == 2


def test_syevd_float32_writes_float32_eigenvalues(tmp_path):
    np = pytest.importorskip("numpy")
    run("syevd", "--n", 30, "--dtype", "c", "-o", tmp_path / "w.npy", check=0)
    assert np.load(tmp_path / "w.npy").dtype == np.float32
    assert np.load(tmp_path / "w.vectors.npy").dtype == np.complex64


@pytest.mark.parametrize("n", ["-5", "abc", "7,9"])
def test_syevd_bad_n_is_a_usage_error(n):
    p = run("syevd", "--n", n)
    assert p.returncode == 2 and "--n" in p.stderr and not p.stdout, p.stderr


def test_syevd_nan_is_named_with_its_column(tmp_path):
    n = 10
    a = [0.0] * (n * n)
    for i in range(n):
        a[i + i * n] = 2.0
    a[6 + 3 * n] = float("nan")  # row 7, column 4: in the lower triangle only
    write_npy(tmp_path / "a.npy", n, n, a)
    for only in ([], ["--values-only"]):
        p = run("syevd", "--input", tmp_path / "a.npy", *only)
        assert p.returncode == 1 and not p.stdout, (p.stdout, p.stderr)
        assert "NaN" in p.stderr and "column 4" in p.stderr, p.stderr
    # --uplo U reads the upper triangle, which holds no NaN
    (r,) = json_lines(run("syevd", "--input", tmp_path / "a.npy", "--uplo", "U", "--json",
                          check=0).stdout)
    assert r["residual"] < 10


def test_syevd_options_and_outputs_are_checked_first(tmp_path):
    assert run("syevd", "--nrhs", 2).returncode == 2
    assert run("potrf", "--values-only").returncode == 2
    assert run("bench", "potrf", "--values-only").returncode == 2
    (tmp_path / "w.vectors.npy").mkdir()
    t0 = time.monotonic()
    p = run("syevd", "--n", 3000, "-o", tmp_path / "w.npy")
    assert p.returncode == 1 and not p.stdout and "eigenvectors" in p.stderr, p.stderr
    assert str(tmp_path / "w.vectors.npy") in p.stderr and time.monotonic() - t0 < 1.0
    # eigenvalues only: no eigenvectors written, so the folder is no obstacle
    run("syevd", "--n", 20, "--values-only", "-o", tmp_path / "w.npy", check=0)


@pytest.mark.parametrize("only", [[], ["--values-only"]])
def test_bench_syevd_against_the_baseline(only):
    p = run("bench", "syevd", "--n", 64, "--reps", 1, *only, "--json", check=0)
    (r,) = json_lines(p.stdout)
    assert r["routine"] == "syevd" and r["job"] == ("N" if only else "V"), r
    assert r["baseline"] in ("lapacke", "cusolverMg") and r["ratio"] > 0, r
    assert abs(r["ratio"] - r["baseline_seconds"] / r["seconds"]) < 1e-3 * r["ratio"], r
    assert 0 <= r["residual"] < 10, r
    assert only or 0 <= r["orthogonality"] < 10, r
    (r,) = json_lines(run("bench", "syevd", "--n", 50, "--reps", 1, "--no-baseline", *only,
                          "--dtype", "c", "--json", check=0).stdout)
    assert "baseline" not in r and 0 <= r["residual"] < 10, r
    # the tile level on a descriptor (tessera_tile_syevd), checked as the LAPACK-style call
    lines = json_lines(run("bench", "syevd", "--n", 70, "--reps", 1, "--resident", *only,
                           "--json", check=0).stdout)
    assert [r["api"] for r in lines] == ["lapack", "tile"], lines
    for r in lines:
        assert 0 <= r["residual"] < 10 and (only or 0 <= r["orthogonality"] < 10), r


@pytest.mark.skipif(not mpi_available(), reason="no mpirun, or a CLI built without MPI")
def test_grid_syevd_solves_on_process_0():
    for only in ((), ("--values-only",)):
        p = mpirun(2, "syevd", "--n", 100, "--grid", "2x1", "--workers", 1, "--gpus", 0, *only,
                   "--json")
        (r,) = json_lines(p.stdout)  # printed by process 0 alone
        assert r["routine"] == "syevd" and r["n"] == 100 and 0 <= r["residual"] < 10, r
        assert only or 0 <= r["orthogonality"] < 10, r


@pytest.mark.parametrize("routine", ["posv", "gesv"])
@pytest.mark.parametrize("dtype,mixed,factor", [("d", "s", "f32"), ("z", "s", "c64"),
                                                ("s", "auto", "f32")])
def test_posv_mixed_reports_factor_and_steps(routine, dtype, mixed, factor):
    """posv / gesv --mixed: the factor's precision and the refinement's steps beside the
    residual (single-precision dtypes factor in their own precision: no steps)."""
    (r,) = json_lines(run(routine, "--n", 150, "--dtype", dtype, "--nrhs", 2, "--mixed", mixed,
                          "--tile", 32, "--json", check=0).stdout)
    assert r["factor_precision"] == factor and 0 <= r["residual"] < 10, r
    assert r["iterations"] >= (1 if dtype in "dz" else 0), r
    text = run("posv", "--n", 40, "--mixed", "s", check=0).stdout
    assert "factor" in text and "f32" in text


@pytest.mark.parametrize("args,says", [(["posv", "--mixed", "q"], "not a factor precision"),
                                       (["posv", "--dtype", "c", "--mixed", "s"], "already"),
                                       (["getrf", "--mixed", "s"], "does not apply")])
def test_posv_mixed_usage_errors(args, says):
    p = run(*args)
    assert p.returncode == 2 and says in p.stderr, p.stderr


@pytest.mark.parametrize("routine,extra", [("posv", ["--resident"]),
                                           ("gesv", ["--nrhs", 2, "--resident"])])
def test_bench_mixed_against_working_precision(routine, extra):
    """bench posv|gesv --mixed s: one line per api, the mixed solve's time, factor precision,
    steps and residual beside tessera's working-precision solve and their ratio."""
    p = run("bench", routine, "--mixed", "s", "--n", "120,130", "--reps", 1, "--tile", 32,
            "--json", *extra)
    assert p.returncode == 0, p.stderr
    rows = json_lines(p.stdout)
    assert len(rows) == 4, rows
    for r in rows:
        assert r["routine"] == routine and r["factor_precision"] == "f32", r
        assert r["iterations"] >= 1 and 0 <= r["residual"] < 10, r
        assert r["baseline"] == "working" and r["baseline_seconds"] > 0 and r["ratio"] > 0, r
    assert {r["api"] for r in rows} == {"lapack", "tile"}


@pytest.mark.parametrize("routine", ["posv", "gesv"])
def test_bench_mixed_of_prescribed_condition(routine):
    """bench posv|gesv --mixed s --cond C: A of condition number C; a well-conditioned A takes
    the fewest steps, one of condition 10⁷ (single precision's unit roundoff times C near 1, where
    refinement still converges, slowly) more, and both answers meet the criterion."""
    steps = {}
    for cond in ("10", "1e7"):
        p = run("bench", routine, "--mixed", "s", "--cond", cond, "--n", 150, "--reps", 1,
                "--tile", 32, "--resident-only", "--json")
        assert p.returncode == 0, p.stderr
        (r,) = json_lines(p.stdout)
        assert r["cond"] == float(cond) and r["factor_precision"] == "f32", r
        assert r["iterations"] >= 1 and 0 <= r["residual"] < 10, r
        steps[cond] = r["iterations"]
    assert steps["10"] <= 3 and steps["1e7"] > steps["10"], steps


@pytest.mark.parametrize("args,says", [(["bench", "posv", "--n", 100], "needs --mixed"),
                                       (["bench", "potrf", "--mixed", "s"], "not 'bench potrf'"),
                                       (["bench", "potrf", "--cond", "10"], "--cond is for"),
                                       (["bench", "gesv", "--mixed", "s", "--cond", "0.5"],
                                        "not a condition number")])
def test_bench_mixed_usage_errors(args, says):
    p = run(*args)
    assert p.returncode == 2 and says in p.stderr, p.stderr


@pytest.mark.parametrize("mixed", ["tf32", "bf16", "h"])
def test_posv_mixed_tensor_cores_need_gpus(mixed):
    """--mixed tf32|bf16|h runs on GPUs (the factor's products on tensor cores) and is refused,
    in the CLI's words, on a run without them: what they need and what to use instead."""
    p = run("posv", "--n", 200, "--mixed", mixed, "--json")
    if p.returncode == 0:
        (r,) = json_lines(p.stdout)
        assert r["factor_precision"] == {"h": "f16"}.get(mixed, mixed), r
        assert 0 <= r["residual"] < 10, r
    else:
        assert p.returncode == 1 and "argument 12" not in p.stderr, p.stderr
        assert "--mixed %s factors A on GPU tensor cores" % mixed in p.stderr, p.stderr
        assert "use --mixed s" in p.stderr, p.stderr
    p = run("gesv", "--n", 50, "--mixed", mixed, "--gpus", 0)
    assert p.returncode == 1 and "no GPU (--gpus 0)" in p.stderr, p.stderr


@pytest.mark.parametrize("routine", ["posv", "gesv"])
def test_mixed_without_a_value_is_auto(routine):
    """--mixed alone asks auto, at the end of the line or before another option."""
    auto = only_json_object(run(routine, "--n", 120, "--mixed", "auto", "--json", check=0))
    for args in (["--mixed", "--n", 120, "--json"], ["--n", 120, "--json", "--mixed"]):
        r = only_json_object(run(routine, *args, check=0))
        assert r["factor_precision"] == auto["factor_precision"], (r, auto)
        assert r["iterations"] == auto["iterations"] and r["residual"] < 10, r
    assert run("bench", routine, "--n", 60, "--reps", 1, "--mixed", "--no-baseline").returncode == 0
    assert "[P]" in run(routine, "--help", check=0).stdout


@pytest.mark.parametrize("routine", ["posv", "gesv"])
def test_grid_mixed_solve_over_processes(routine):
    """posv|gesv --mixed s --grid: the mixed-precision solve on a matrix dealt over 2
    processes, its factor precision, steps and residual in process 0's one line."""
    p = mpirun(2, routine, "--n", 300, "--grid", "1x2", "--workers", 1, "--gpus", 0, "--mixed",
               "s", "--json")
    assert p.returncode == 0, p.stderr
    (r,) = json_lines(p.stdout)
    assert r["api"] == "grid" and r["factor_precision"] == "f32", r
    assert r["iterations"] >= 1 and 0 <= r["residual"] < 10, r


# -------------------------------------------------------------- --json: failures too

@pytest.mark.parametrize("args,status,says", [
    (["posv", "--n", 100, "--mixed", "tf32", "--gpus", 0], 1, "tensor cores"),
    (["geqrf", "--input", "/nonexistent/a.npy"], 1, "/nonexistent/a.npy"),
    (["posv", "--nrhs", 100000000], 1, "choose --nrhs"),
    (["bench", "potrf", "--n", "100,2000000", "--gpus", 0], 1, "of memory at once"),
    (["potrf", "--tile", 0], 2, "--tile must be >= 1"),
    (["gels", "--m", 5, "--n", 3, "--bogus"], 2, "unknown option"),
])
def test_json_failures_print_one_object(args, status, says):
    """A --json run that fails prints one JSON object with its exit status and the message it
    wrote to stderr (the usage hint left out); a run that succeeds prints none."""
    p = run(*args, "--json")
    assert p.returncode == status, (p.stdout, p.stderr)
    r = only_json_object(p)
    assert r["status"] == status and says in r["message"], r
    assert not r["message"].startswith("tessera:") and "Run 'tessera" not in r["message"], r
    assert r["message"].split(" (")[0] in " ".join(p.stderr.split()), (r, p.stderr)
    assert r["command"] == str(args[0]), r
    p = run("posv", "--n", 40, "--json", check=0)
    assert "status" not in only_json_object(p) and not p.stderr


def test_json_failure_keeps_warnings_out_and_the_environments_message_in():
    p = subprocess.run([str(CLI), "potrf", "--n", "10", "--json"], capture_output=True, text=True,
                       env=dict(ENV, TESSERA_CPU_WORKERS="100000"), timeout=60)
    assert p.returncode == 1, p.stderr
    r = only_json_object(p)
    assert "TESSERA_CPU_WORKERS" in r["message"] and r["routine"] == "potrf", r
    p = run("posv", "--n", 40, "--gpus", 16, "--mixed", "tf32", "--json")
    if p.returncode:  # fewer GPUs than asked: a warning first, then the refusal
        assert "warning" in p.stderr and "warning" not in only_json_object(p)["message"], p.stderr
