"""The `tessera` command line: results as JSON, residuals, .npy input and output, benchmarks,
traces and their Gantt chart, and clear errors with the documented exit codes (0 success,
1 failure, 2 usage error). Runs the CLI of the build in TESSERA_BUILD_DIR (default ./build)."""
import json
import os
import struct
import subprocess
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


@pytest.mark.parametrize("command", ["info", "potrf", "potrs", "posv", "bench", "demo", "gen",
                                     "trace"])
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_each_command_has_its_own_usage(command, flag):
    p = run(command, flag, check=0)
    assert p.stdout.startswith("usage: tessera %s " % command), p.stdout
    glob = run("--help", check=0).stdout
    assert p.stdout != glob
    # only the options the command takes
    assert ("--out-of-core" in p.stdout) == (command == "bench")
    assert ("--rhs" in p.stdout) == (command in ("potrs", "posv"))
    # after other options too
    assert run(command, "--json", flag, check=0).stdout == p.stdout


def test_version():
    for args in (["--version"], ["potrf", "--version"]):
        out = run(*args, check=0).stdout
        assert out.startswith("tessera ") and out.strip().split()[1].count(".") == 2


def gpu_count():
    out = run("info", "--n", 0, check=0).stdout
    return sum(1 for line in out.splitlines() if line.strip().startswith("cuda "))


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
