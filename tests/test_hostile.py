"""Hostile inputs: every case runs the real CLI and states the exact outcome.

Each test runs ``python -m nsys_duck.cli ...`` as a subprocess with
``NSYS_WORKSPACE_ROOT=tmp_path/ws`` and checks the exit status, the one
stderr line (``nsys-duck: PATH: reason``, matched on a stable substring, no
traceback) and which files exist afterwards. A conversion that succeeds has
also passed the contract validator (it runs before publishing).

Tests that need the real nsys are marked ``nsys`` and skipped without it;
the 1M-range export (``~/.cache/nsys-duck/exports/cpu_nvtx_large_1M``,
made by ``tests/data/oracle`` tooling / ``make bench``) is only used by the
concurrency and Ctrl-C tests, which are skipped without it.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import EPOCH, REPORTS, gtid, make_export, register_trace
from nsys_duck import nsys as nsys_mod
from nsys_duck.errors import NsysNotFoundError

THREEBODY = REPORTS / "threebody_2023_3" / "threebody_2023_3.nsys-rep"
THREEBODY_EXPORT = REPORTS / "threebody_2023_3" / "parquet"
ABACUS_EXPORT = REPORTS / "abacus_many_kernels" / "parquet"
LARGE_EXPORT = Path(
    os.environ.get(
        "NSYS_DUCK_LARGE_EXPORT",
        Path.home() / ".cache" / "nsys-duck" / "exports" / "cpu_nvtx_large_1M" / "parquet",
    )
)

# a real 1x1 PNG
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)

STRINGS = [
    {"id": 1, "value": "cudaLaunchKernel_v7000"},
    {"id": 2, "value": "kA"},
    {"id": 3, "value": "kB"},
]


# --- helpers -----------------------------------------------------------------


def run_cli(
    tmp_path: Path,
    *args,
    env: dict | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess:
    """Run the real CLI with the workspace root in ``tmp_path/ws``."""
    full_env = dict(os.environ, NSYS_WORKSPACE_ROOT=str(tmp_path / "ws"))
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "nsys_duck.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=tmp_path,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def ws_files(tmp_path: Path) -> list[str]:
    """Every file and folder under the workspace root, relative, sorted."""
    root = tmp_path / "ws"
    if not root.exists():
        return []
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def outputs(name: str) -> list[str]:
    return sorted(
        [
            f"{name}/{name}.perfetto.json.gz",
            f"{name}/{name}.perfetto.parquet",
            f"{name}/{name}.kernel_dependencies.parquet",
            f"{name}/{name}.duckdb",
        ]
    )


def assert_fails(out: subprocess.CompletedProcess, substring: str, status: int = 1) -> str:
    """Exit ``status``, exactly one stderr line ``nsys-duck: ...`` containing ``substring``."""
    assert out.returncode == status, (out.returncode, out.stderr)
    assert "Traceback" not in out.stderr, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("nsys-duck: "), lines[0]
    assert substring in lines[0], lines[0]
    return lines[0]


def assert_converts(tmp_path: Path, out: subprocess.CompletedProcess, name: str) -> Path:
    """Exit 0, validated, the three outputs published, no temporary left; the
    trace is loaded into Perfetto's importer when the test ends (conftest)."""
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip() == "", out.stderr
    json_gz = tmp_path / "ws" / name / f"{name}.perfetto.json.gz"
    assert out.stdout.strip().splitlines()[-1] == str(json_gz)
    assert "validated: no violations" in out.stdout
    folder = json_gz.parent
    for f in outputs(name):
        assert (tmp_path / "ws" / f).is_file(), f
    hidden = sorted(p.name for p in folder.iterdir() if p.name.startswith("."))
    assert hidden == [".nsys-duck.lock"], hidden
    register_trace(json_gz)
    return json_gz


def summary(out: subprocess.CompletedProcess) -> dict[str, str]:
    """The summary's ``  metric   value`` lines as metric -> value text."""
    rows = {}
    for line in out.stdout.splitlines():
        if line.startswith("  ") and not line.startswith("  time "):
            parts = line.strip().rsplit("  ", 1)
            if len(parts) == 2:
                rows[parts[0].strip()] = parts[1].strip()
    return rows


def events_of(json_gz: Path) -> list[dict]:
    with gzip.open(json_gz, "rb") as f:
        return json.loads(f.read())


def kernel(t0, t1, corr=1, pid=100, **kw):
    row = {
        "start": EPOCH + t0,
        "end": EPOCH + t1,
        "deviceId": 0,
        "contextId": 1,
        "streamId": 7,
        "correlationId": corr,
        "globalPid": gtid(pid),
        "shortName": 2,
        "demangledName": 2,
        "gridX": 1,
        "gridY": 1,
        "gridZ": 1,
        "blockX": 32,
        "blockY": 1,
        "blockZ": 1,
    }
    row.update(kw)
    return row


def api(t0, t1, corr=1, pid=100, tid=101, **kw):
    row = {
        "start": EPOCH + t0,
        "end": EPOCH + t1,
        "eventClass": 0,
        "globalTid": gtid(pid, tid),
        "correlationId": corr,
        "nameId": 1,
        "returnValue": 0,
    }
    row.update(kw)
    return row


def nvtx(t0, t1, text="range", pid=100, tid=101, **kw):
    row = {
        "start": EPOCH + t0,
        "end": None if t1 is None else EPOCH + t1,
        "eventType": 59,
        "text": text,
        "globalTid": gtid(pid, tid),
    }
    row.update(kw)
    return row


def good_tables() -> dict[str, list[dict]]:
    return {
        "StringIds": STRINGS,
        "CUPTI_ACTIVITY_KIND_KERNEL": [kernel(1000, 2000)],
        "CUPTI_ACTIVITY_KIND_RUNTIME": [api(100, 300)],
        "NVTX_EVENTS": [nvtx(50, 3000)],
    }


def export(tmp_path: Path, tables: dict, name: str = "synthetic") -> Path:
    return make_export(tmp_path / "in" / name / "parquet", tables)


def rewrite(path: Path, table: pa.Table) -> None:
    pq.write_table(table, path)


def need_nsys():
    try:
        return nsys_mod.find_nsys()
    except NsysNotFoundError:
        pytest.skip("no nsys installed (make test installs Debian's nsight-systems)")


def fake_nsys(
    tmp_path: Path, export_script: str, version: str = "2023.4.4.54-234433681190v0"
) -> Path:
    """A shell script that answers ``--version`` like nsys and runs ``export_script``."""
    path = tmp_path / "fake-bin" / "nsys"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "--version" ]; then echo "NVIDIA Nsight Systems version '
        f'{version}"; exit 0; fi\n' + export_script + "\n"
    )
    path.chmod(0o755)
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- 1. paths that are not reports ------------------------------------------


def test_path_that_does_not_exist(tmp_path):
    out = run_cli(tmp_path, "convert", tmp_path / "missing.nsys-rep")
    assert_fails(out, "missing.nsys-rep: no such file or directory")
    assert ws_files(tmp_path) == []


def test_broken_symlink(tmp_path):
    (tmp_path / "dangling.nsys-rep").symlink_to(tmp_path / "gone.nsys-rep")
    out = run_cli(tmp_path, "convert", "dangling.nsys-rep")
    assert_fails(out, "dangling.nsys-rep: no such file or directory")
    assert ws_files(tmp_path) == []


def test_folder_that_is_not_an_export(tmp_path):
    (tmp_path / "photos").mkdir()
    (tmp_path / "photos" / "a.png").write_bytes(PNG)
    out = run_cli(tmp_path, "convert", "photos")
    assert_fails(out, "photos: this folder is not an Nsight Parquet export")
    assert ws_files(tmp_path) == []


@pytest.mark.parametrize(("name", "content"), [("notes.txt", b"hello\n"), ("picture.png", PNG)])
def test_file_that_is_not_a_report(tmp_path, name, content):
    (tmp_path / name).write_bytes(content)
    out = run_cli(tmp_path, "convert", name)
    assert_fails(out, f"{name}: not an Nsight Systems report (expected a .nsys-rep")
    assert ws_files(tmp_path) == []


def test_zero_byte_report(tmp_path):
    (tmp_path / "empty.nsys-rep").write_bytes(b"")
    out = run_cli(
        tmp_path,
        "convert",
        "empty.nsys-rep",
        "--nsys",
        fake_nsys(tmp_path, "echo must-not-run >&2; exit 3"),
    )
    assert_fails(out, "empty.nsys-rep: the report is empty (0 bytes)")
    assert ws_files(tmp_path) == []


@pytest.mark.nsys
@pytest.mark.parametrize(
    ("name", "content", "nsys_says"),
    [
        ("text.nsys-rep", b"just some text\n", "Cannot read from stream."),
        ("picture.nsys-rep", PNG, "Cannot read from stream."),
        ("long.nsys-rep", b"just some text\n" * 200, "Version tag is not found in the stream."),
        ("noise.qdrep", bytes(range(256)) * 40, "Invalid version prefix:"),
    ],
)
def test_non_report_named_like_a_report_is_refused_by_nsys(tmp_path, name, content, nsys_says):
    nsys = need_nsys()
    (tmp_path / name).write_bytes(content)
    out = run_cli(tmp_path, "convert", name)
    assert_fails(
        out,
        f"{name}: not an Nsight Systems report, or a damaged one "
        f"(nsys {nsys.version}: Exportation error: {nsys_says})",
    )
    assert ws_files(tmp_path) == []  # the workspace it made is taken back


@pytest.mark.nsys
def test_truncated_report(tmp_path):
    need_nsys()
    (tmp_path / "cut.nsys-rep").write_bytes(THREEBODY.read_bytes()[:100_000])
    out = run_cli(tmp_path, "convert", "cut.nsys-rep")
    assert_fails(out, "cut.nsys-rep: the report is truncated or damaged (nsys ")
    assert "Section Table Reference magic number mismatch" in out.stderr
    assert ws_files(tmp_path) == []


def test_git_lfs_pointer(tmp_path):
    (tmp_path / "model.nsys-rep").write_text(
        "version https://git-lfs.github.com/spec/v1\n"
        "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
        "size 12345\n"
    )
    out = run_cli(tmp_path, "convert", "model.nsys-rep")
    assert_fails(out, "model.nsys-rep: this is a Git LFS pointer, not the report itself")
    assert ws_files(tmp_path) == []


def test_fifo_named_like_a_report_does_not_hang(tmp_path):
    os.mkfifo(tmp_path / "pipe.nsys-rep")
    out = run_cli(tmp_path, "convert", "pipe.nsys-rep", timeout=60)
    assert_fails(out, "pipe.nsys-rep: not a regular file")
    assert ws_files(tmp_path) == []


@pytest.mark.parametrize(("name", "ws_name"), [("...nsys-rep", ".."), ("..qdrep", ".")])
def test_report_name_that_would_escape_the_workspace(tmp_path, name, ws_name):
    (tmp_path / name).write_bytes(THREEBODY.read_bytes()[:4096])
    out = run_cli(tmp_path, "convert", name)
    assert_fails(out, f"cannot use {ws_name!r} as a workspace name")
    assert ws_files(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


# --- 2. damaged exports --------------------------------------------------------


def _copy_export(tmp_path: Path, src: Path = THREEBODY_EXPORT, name: str = "tb") -> Path:
    dest = tmp_path / "in" / name / "parquet"
    shutil.copytree(src, dest)
    for p in dest.iterdir():
        p.chmod(0o644)
    return dest


def test_truncated_parquet_file(tmp_path):
    exp = _copy_export(tmp_path)
    f = exp / "CUPTI_ACTIVITY_KIND_KERNEL.parquet"
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    out = run_cli(tmp_path, "convert", exp)
    assert_fails(
        out,
        "the export's file CUPTI_ACTIVITY_KIND_KERNEL.parquet is damaged "
        "or not a Parquet file (Parquet magic bytes not found",
    )
    assert ws_files(tmp_path) == []


def test_corrupted_parquet_pages(tmp_path):
    """Footer intact, first data page scrambled: only reading the data finds it."""
    exp = _copy_export(tmp_path)
    f = exp / "CUPTI_ACTIVITY_KIND_KERNEL.parquet"
    col = pq.ParquetFile(f).metadata.row_group(0).column(0)
    data = bytearray(f.read_bytes())
    for i in range(col.data_page_offset + 30, col.data_page_offset + col.total_compressed_size - 5):
        data[i] ^= 0x5A
    f.write_bytes(bytes(data))
    out = run_cli(tmp_path, "convert", exp)
    assert_fails(out, "the export's file CUPTI_ACTIVITY_KIND_KERNEL.parquet is damaged (")
    assert ws_files(tmp_path) == []


@pytest.mark.parametrize("content", [b"", b"not parquet at all\n"])
def test_parquet_file_that_is_empty_or_text(tmp_path, content):
    exp = export(tmp_path, good_tables())
    (exp / "NVTX_EVENTS.parquet").write_bytes(content)
    out = run_cli(tmp_path, "convert", exp)
    assert_fails(out, "the export's file NVTX_EVENTS.parquet is damaged or not a Parquet file")
    assert ws_files(tmp_path) == []


def test_export_with_no_gpu_and_no_nvtx_tables(tmp_path):
    exp = export(tmp_path, {"StringIds": STRINGS})
    out = run_cli(tmp_path, "convert", exp)
    line = assert_fails(
        out,
        "no table of the export yields a trace event (no kernels, "
        "memcpy, memset, CUDA API or NVTX ranges)",
    )
    assert "skipped" not in line
    assert ws_files(tmp_path) == []


def test_kernel_table_with_zero_rows(tmp_path):
    exp = export(
        tmp_path,
        {"StringIds": STRINGS, "CUPTI_ACTIVITY_KIND_KERNEL": [], "CUPTI_ACTIVITY_KIND_RUNTIME": []},
    )
    out = run_cli(tmp_path, "convert", exp)
    assert_fails(out, "no table of the export yields a trace event")
    assert ws_files(tmp_path) == []


def test_every_row_invalid_says_how_many_were_skipped(tmp_path):
    exp = export(
        tmp_path,
        {
            "StringIds": STRINGS,
            "CUPTI_ACTIVITY_KIND_KERNEL": [kernel(2000, 1000), kernel(0, 5, start=None)],
            "NVTX_EVENTS": [nvtx(900, 100)],
        },
    )
    out = run_cli(tmp_path, "convert", exp)
    assert_fails(
        out,
        "no table of the export yields a trace event (no kernels, memcpy, "
        "memset, CUDA API or NVTX ranges); 3 rows were skipped: "
        "1 CUPTI_ACTIVITY_KIND_KERNEL (NULL start or end), "
        "1 CUPTI_ACTIVITY_KIND_KERNEL (end before start), "
        "1 NVTX_EVENTS (end before start)",
    )
    assert ws_files(tmp_path) == []


def test_string_ids_table_missing(tmp_path):
    tables = good_tables()
    del tables["StringIds"]
    exp = export(tmp_path, tables)
    (exp / "StringIds.parquet").unlink()  # make_export adds an empty one
    out = run_cli(tmp_path, "convert", exp)
    json_gz = assert_converts(tmp_path, out, "synthetic")
    names = {e["name"] for e in events_of(json_gz) if e["ph"] == "X"}
    assert names == {"kernel#2", "cudaApi#1"}


def test_unknown_extra_columns_and_tables(tmp_path):
    exp = export(tmp_path, good_tables())
    k = pq.read_table(exp / "CUPTI_ACTIVITY_KIND_KERNEL.parquet")
    k = k.append_column("futureColumn", pa.array(["x"] * k.num_rows))
    k = k.append_column("start2", pa.array([1.5] * k.num_rows))
    rewrite(exp / "CUPTI_ACTIVITY_KIND_KERNEL.parquet", k)
    rewrite(exp / "SOME_FUTURE_TABLE.parquet", pa.table({"a": [1], "b": ["two"]}))
    rewrite(exp / 'weird "name"; DROP.parquet', pa.table({"a": [1]}))
    out = run_cli(tmp_path, "convert", exp)
    assert_converts(tmp_path, out, "synthetic")
    assert summary(out)["kernels"] == "1"


def test_missing_optional_columns_read_as_null(tmp_path):
    exp = export(tmp_path, good_tables())
    k = pq.read_table(exp / "CUPTI_ACTIVITY_KIND_KERNEL.parquet")
    k = k.drop_columns(["graphNodeId", "gridX", "registersPerThread", "correlationId"])
    rewrite(exp / "CUPTI_ACTIVITY_KIND_KERNEL.parquet", k)
    n = pq.read_table(exp / "NVTX_EVENTS.parquet").drop_columns(["domainId", "textId"])
    rewrite(exp / "NVTX_EVENTS.parquet", n)
    out = run_cli(tmp_path, "convert", exp)
    json_gz = assert_converts(tmp_path, out, "synthetic")
    missing = summary(out)["export columns missing (read as NULL)"]
    for col in (
        "CUPTI_ACTIVITY_KIND_KERNEL.graphNodeId",
        "CUPTI_ACTIVITY_KIND_KERNEL.gridX",
        "CUPTI_ACTIVITY_KIND_KERNEL.correlationId",
        "NVTX_EVENTS.domainId",
        "NVTX_EVENTS.textId",
    ):
        assert col in missing
    events = events_of(json_gz)
    kinds = sorted(e["cat"] for e in events if e["ph"] == "X")
    # no correlationId: no link, no flow; the API call is drawn all the same
    assert kinds == ["cuda_api", "kernel", "kernel_core"]
    assert not [e for e in events if e["ph"] in ("s", "f")]


@pytest.mark.parametrize(
    ("table", "column"),
    [
        ("CUPTI_ACTIVITY_KIND_KERNEL", "start"),
        ("CUPTI_ACTIVITY_KIND_KERNEL", "deviceId"),
        ("CUPTI_ACTIVITY_KIND_RUNTIME", "globalTid"),
        ("NVTX_EVENTS", "eventType"),
        ("StringIds", "value"),
    ],
)
def test_missing_required_column(tmp_path, table, column):
    exp = export(tmp_path, good_tables())
    rewrite(
        exp / f"{table}.parquet", pq.read_table(exp / f"{table}.parquet").drop_columns([column])
    )
    out = run_cli(tmp_path, "convert", exp)
    assert_fails(
        out, f'the export\'s table {table} has no column "{column}", which nsys-duck needs'
    )
    assert "Binder" not in out.stderr
    assert ws_files(tmp_path) == []


def test_required_column_of_the_wrong_type(tmp_path):
    exp = export(tmp_path, good_tables())
    k = pq.read_table(exp / "CUPTI_ACTIVITY_KIND_KERNEL.parquet")
    i = k.schema.get_field_index("start")
    k = k.set_column(i, "start", pa.array([str(v) for v in k.column("start").to_pylist()]))
    rewrite(exp / "CUPTI_ACTIVITY_KIND_KERNEL.parquet", k)
    out = run_cli(tmp_path, "convert", exp)
    assert_fails(
        out,
        'the export\'s table CUPTI_ACTIVITY_KIND_KERNEL has column "start" '
        "of type string, expected integer (BIGINT)",
    )
    assert ws_files(tmp_path) == []


# --- 3. hostile rows -------------------------------------------------------------


def test_null_and_reversed_times_are_skipped_and_counted(tmp_path):
    tables = good_tables()
    tables["CUPTI_ACTIVITY_KIND_KERNEL"] += [
        kernel(5000, 6000, start=None),
        kernel(5000, 6000, end=None),
        kernel(7000, 6000),
    ]
    tables["CUPTI_ACTIVITY_KIND_RUNTIME"] += [api(400, 500, start=None), api(900, 800)]
    tables["NVTX_EVENTS"] += [
        nvtx(10, 20, start=None),
        nvtx(9000, 8000),
        nvtx(9000, 8000, eventType=60),
    ]
    exp = export(tmp_path, tables)
    out = run_cli(tmp_path, "convert", exp)
    assert_converts(tmp_path, out, "synthetic")
    s = summary(out)
    assert s["kernels"] == "1" and s["CPU NVTX ranges"] == "1"
    assert s["rows skipped: CUPTI_ACTIVITY_KIND_KERNEL (NULL start or end)"] == "2"
    assert s["rows skipped: CUPTI_ACTIVITY_KIND_KERNEL (end before start)"] == "1"
    assert s["rows skipped: CUPTI_ACTIVITY_KIND_RUNTIME (NULL start or end)"] == "1"
    assert s["rows skipped: CUPTI_ACTIVITY_KIND_RUNTIME (end before start)"] == "1"
    assert s["rows skipped: NVTX_EVENTS (NULL start)"] == "1"
    assert s["rows skipped: NVTX_EVENTS (end before start)"] == "2"


def test_null_ids_are_drawn_or_skipped_and_counted(tmp_path):
    tables = good_tables()
    tables["CUPTI_ACTIVITY_KIND_KERNEL"] += [
        kernel(5000, 6000, corr=2, deviceId=None),  # skipped: NULL deviceId
        kernel(5000, 6000, corr=3, deviceId=-1),  # skipped: never a Device -1
        kernel(7000, 8000, corr=4, globalPid=None),  # drawn (pid 0), not linked
        {"start": EPOCH + 9000, "end": EPOCH + 9500, "deviceId": 0},  # only the essentials
    ]
    tables["CUPTI_ACTIVITY_KIND_RUNTIME"] += [
        api(400, 500, corr=5, globalTid=None),
        api(600, 700, corr=6, eventClass=None),
        api(600, 700, corr=7, nameId=None),
    ]
    tables["NVTX_EVENTS"] += [nvtx(60, 70, globalTid=None), nvtx(80, 90, text=None)]
    exp = export(tmp_path, tables)
    out = run_cli(tmp_path, "convert", exp)
    json_gz = assert_converts(tmp_path, out, "synthetic")
    s = summary(out)
    assert s["kernels"] == "3"
    assert s["rows skipped: CUPTI_ACTIVITY_KIND_KERNEL (NULL deviceId)"] == "1"
    assert s["rows skipped: CUPTI_ACTIVITY_KIND_KERNEL (negative deviceId)"] == "1"
    assert s["rows skipped: CUPTI_ACTIVITY_KIND_RUNTIME (NULL globalTid)"] == "1"
    assert s["rows skipped: CUPTI_ACTIVITY_KIND_RUNTIME (NULL eventClass)"] == "1"
    assert s["rows skipped: NVTX_EVENTS (NULL globalTid)"] == "1"
    events = events_of(json_gz)
    names = {
        e["args"]["name"]
        for e in events
        if e["ph"] == "M" and e["name"] in ("process_name", "thread_name")
    }
    assert "Device -1" not in " ".join(names)
    x_names = {e["name"] for e in events if e["ph"] in "XB"}
    assert {"kA", "[unnamed kernel]", "[unnamed]"} <= x_names


def test_duplicate_rows(tmp_path):
    tables = good_tables()
    for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"):
        tables[t] = tables[t] * 2
    exp = export(tmp_path, tables)
    out = run_cli(tmp_path, "convert", exp)
    assert_converts(tmp_path, out, "synthetic")
    s = summary(out)
    assert s["kernels"] == "2" and s["CPU NVTX ranges"] == "2"


def test_correlation_id_shared_by_two_processes(tmp_path):
    tables = {
        "StringIds": STRINGS,
        "CUPTI_ACTIVITY_KIND_KERNEL": [
            kernel(1000, 2000, corr=5, pid=100, shortName=2),
            kernel(1500, 2500, corr=5, pid=200, shortName=3),
        ],
        "CUPTI_ACTIVITY_KIND_RUNTIME": [
            api(100, 300, corr=5, pid=100, tid=101),
            api(900, 1200, corr=5, pid=200, tid=201),
        ],
    }
    exp = export(tmp_path, tables)
    out = run_cli(tmp_path, "convert", exp)
    json_gz = assert_converts(tmp_path, out, "synthetic")
    s = summary(out)
    assert s["linked CUDA API launches"] == "2" and s["stream launch flows"] == "2"
    events = events_of(json_gz)
    # each process's call flows to its own kernel
    ts = {e["id"]: e for e in events if e["ph"] == "s" and e["cat"] == "launch"}
    fs = {e["id"]: e for e in events if e["ph"] == "f" and e["cat"] == "launch"}
    starts = sorted((ts[i]["ts"], fs[i]["ts"]) for i in ts)
    assert [(float(a), float(b)) for a, b in starts] == [(0.101, 1.001), (0.901, 1.501)]


HOSTILE_NAMES = [
    'say "hi"',
    "back\\slash\\",
    "tab\there\nnewline\r\x01\x1f\x7f",
    "nul\x00inside",
    "x" * 100_000,
    "literal \\uD800 text",
    "emoji 😀 ✓ 中文",
    "</script><script>alert(1)</script>",
    "",
    "   ",
]


def test_nvtx_names_with_quotes_controls_nul_and_100kb(tmp_path):
    rows = [nvtx(1000 * i, 1000 * i + 500, text=t) for i, t in enumerate(HOSTILE_NAMES)]
    exp = export(tmp_path, {"NVTX_EVENTS": rows})
    out = run_cli(tmp_path, "convert", exp)
    json_gz = assert_converts(tmp_path, out, "synthetic")
    raw = gzip.open(json_gz, "rb").read()
    assert b"\\u0000" not in raw and b"\x00" not in raw
    names = [e["name"] for e in events_of(json_gz) if e["ph"] == "B"]
    expected = [t.replace("\x00", "") for t in HOSTILE_NAMES]
    expected[expected.index("")] = "[unnamed]"
    assert names == expected


def test_invalid_utf8_and_lone_surrogates_are_replaced(tmp_path):
    tables = good_tables()
    tables["NVTX_EVENTS"] = [nvtx(50 + i, 3000 - i) for i in range(4)]
    tables["StringIds"] = STRINGS
    exp = export(tmp_path, tables)
    # raw bytes no UTF-8 decoder accepts: a CESU-8 lone surrogate, 0xFF 0xFE,
    # a truncated sequence
    raw = [b"lone \xed\xa0\x80 surrogate", b"bad \xff\xfe bytes", b"cut \xe2\x82", b"fine"]
    n = pq.read_table(exp / "NVTX_EVENTS.parquet")
    n = n.set_column(
        n.schema.get_field_index("text"), "text", pa.array(raw, pa.binary()).view(pa.string())
    )
    rewrite(exp / "NVTX_EVENTS.parquet", n)
    s = pq.read_table(exp / "StringIds.parquet")
    values = [v.encode() for v in s.column("value").to_pylist()]
    values[1] = b"k\xc3A"  # kernel name with a broken 2-byte sequence
    s = s.set_column(1, "value", pa.array(values, pa.binary()).view(pa.string()))
    rewrite(exp / "StringIds.parquet", s)
    out = run_cli(tmp_path, "convert", exp)
    json_gz = assert_converts(tmp_path, out, "synthetic")
    sm = summary(out)
    assert sm["strings with invalid UTF-8 repaired: NVTX_EVENTS.text"] == "3"
    assert sm["strings with invalid UTF-8 repaired: StringIds.value"] == "1"
    events = events_of(json_gz)
    nv = sorted(e["name"] for e in events if e["ph"] == "B" and e["cat"] == "nvtx")
    assert nv == sorted(
        ["lone \ufffd\ufffd\ufffd surrogate", "bad \ufffd\ufffd bytes", "cut \ufffd", "fine"]
    )
    assert {e["name"] for e in events if e.get("cat") == "kernel"} == {"k\ufffdA"}
    # the source export is untouched
    assert (
        pq.read_table(exp / "NVTX_EVENTS.parquet")
        .column("text")
        .chunk(0)
        .view(pa.binary())
        .to_pylist()
        == raw
    )


def test_times_perfetto_cannot_hold_are_not_published(tmp_path):
    """A kernel at 0 ns in an epoch-normalized export: the trace would span
    53 years, past Perfetto's exact range (2^42 us); the conversion refuses
    it with one sentence (trace_base), with or without the validator."""
    tables = good_tables()
    tables["CUPTI_ACTIVITY_KIND_KERNEL"].append(kernel(-EPOCH, -EPOCH + 10, corr=9))
    exp = export(tmp_path, tables)
    for extra in ([], ["--no-validate"]):
        out = run_cli(tmp_path, "convert", *extra, exp)
        line = assert_fails(out, "synthetic/parquet: the events span 19")
        assert line.endswith(
            "days, more than Perfetto can place exactly (2^42 us, about "
            "50.9 days); nothing was published"
        ), line
        assert ws_files(tmp_path) == []


BAD_STAGE = """-- test stage: replaces the event rows with one Perfetto would reject
CREATE OR REPLACE VIEW trace_events_body AS
SELECT '{"ph":"X","cat":"kernel","name":"bad","ts":-1,"dur":1,"pid":0,"tid":1}'
    AS event_json, 'X' AS ph, NULL::BIGINT AS part_ns, NULL::BIGINT AS part_ns_other,
    0 AS pid, 0 AS pid_other;
"""


def test_validator_blocks_a_bad_trace_from_a_sql_override(tmp_path):
    stage = tmp_path / "my-sql" / "40_trace" / "35_bad_event.sql"
    stage.parent.mkdir(parents=True)
    stage.write_text(BAD_STAGE)
    exp = export(tmp_path, good_tables())
    out = run_cli(tmp_path, "convert", "--sql-dir", tmp_path / "my-sql", exp)
    line = assert_fails(out, "the trace failed validation: ")
    assert "number" in line and "pid_tid" in line and "; first: [" in line
    assert ws_files(tmp_path) == []


def test_validate_command_exit_status(tmp_path):
    exp = export(tmp_path, good_tables())
    json_gz = assert_converts(tmp_path, run_cli(tmp_path, "convert", exp), "synthetic")
    ok = run_cli(tmp_path, "validate", json_gz)
    assert ok.returncode == 0 and "OK: no violations" in ok.stdout
    as_json = run_cli(tmp_path, "validate", "--json", json_gz)
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["ok"] is True
    (tmp_path / "junk.json.gz").write_bytes(b"not gzip, not json")
    bad = run_cli(tmp_path, "validate", "--max-examples", "1", tmp_path / "junk.json.gz")
    assert bad.returncode == 1 and "FAILED" in bad.stdout
    missing = run_cli(tmp_path, "validate", tmp_path / "nope.perfetto.json.gz")
    assert_fails(missing, "nope.perfetto.json.gz: no such file or directory", status=2)
    folder = run_cli(tmp_path, "validate", tmp_path)
    assert_fails(folder, "not a workspace folder", status=2)
    # a workspace (by name or folder) stands for its trace
    by_name = run_cli(tmp_path, "validate", "synthetic")
    assert by_name.returncode == 0 and "OK: no violations" in by_name.stdout
    assert run_cli(tmp_path, "validate", json_gz.parent).returncode == 0


# --- 4. names ------------------------------------------------------------------

ODD_NAMES = ["my report", 'it\'s "quoted"', "a;b && rm -rf x", "résumé 日本 😀", "-x", "--force"]


@pytest.mark.parametrize("stem", ODD_NAMES)
def test_export_folder_names(tmp_path, stem):
    exp = export(tmp_path, good_tables(), name=stem)
    out = run_cli(tmp_path, "convert", exp)  # absolute path: no leading dash
    assert_converts(tmp_path, out, stem)
    assert ws_files(tmp_path)[0] == stem


@pytest.mark.nsys
@pytest.mark.parametrize("stem", ODD_NAMES[:5])
def test_report_names(tmp_path, stem):
    need_nsys()
    name = stem + ".nsys-rep"
    shutil.copyfile(THREEBODY, tmp_path / name)
    out = run_cli(tmp_path, "convert", name)  # relative: '-x.nsys-rep' as typed
    assert_converts(tmp_path, out, stem)
    assert summary(out)["memcpy H2D"] == "75"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([name, "ws"])


def test_mistyped_option_is_not_taken_for_a_path(tmp_path):
    out = run_cli(tmp_path, "convert", "--forse", tmp_path / "x.nsys-rep")
    assert out.returncode == 2 and "No such option" in out.stderr
    assert "--forse" in out.stderr
    assert ws_files(tmp_path) == []


# --- 5. the environment --------------------------------------------------------


def test_workspace_root_under_a_regular_file(tmp_path):
    """Tests run as root, so chmod cannot make a folder unwritable: a path
    below a regular file cannot be created by anyone."""
    (tmp_path / "plainfile").write_text("x")
    exp = export(tmp_path, good_tables())
    out = run_cli(
        tmp_path, "convert", exp, env={"NSYS_WORKSPACE_ROOT": str(tmp_path / "plainfile" / "ws")}
    )
    assert_fails(
        out,
        f"cannot create the workspace folder {tmp_path}/plainfile/ws/synthetic: Not a directory",
    )
    assert (tmp_path / "plainfile").read_text() == "x"


def test_workspace_name_taken_by_a_file(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "synthetic").write_text("mine")
    exp = export(tmp_path, good_tables())
    out = run_cli(tmp_path, "convert", exp)
    assert_fails(out, "cannot create the workspace folder")
    assert (tmp_path / "ws" / "synthetic").read_text() == "mine"


@pytest.fixture
def tiny_disk(tmp_path):
    """A 24 MB tmpfs (needs root and mount rights; skipped otherwise)."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root to mount a tmpfs")
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mnt)],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {r.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


@pytest.mark.parametrize("free_kb", [1024, 3300])
def test_disk_full(tmp_path, tiny_disk, free_kb):
    """1 MB left: the JSON (2.8 MB) hits the full disk; 3.3 MB left: a later
    output does (aligned Parquet, database).

    The export sits on the same tmpfs (hard-linked into the workspace, so it
    costs no space); a trace converted before stays intact.
    """
    root = tiny_disk / "ws"
    env = {"NSYS_WORKSPACE_ROOT": str(root)}
    small = shutil.copytree(THREEBODY_EXPORT, tiny_disk / "small" / "parquet")
    assert run_cli(tmp_path, "convert", small, env=env).returncode == 0
    before = {p: sha256(p) for p in (root / "small").glob("small.*")}
    big = shutil.copytree(ABACUS_EXPORT, tiny_disk / "big" / "parquet")
    st = os.statvfs(tiny_disk)
    filler = st.f_bavail * st.f_frsize - free_kb * 1024
    assert filler > 0
    (tiny_disk / "filler").write_bytes(b"\0" * filler)
    out = run_cli(tmp_path, "convert", big, env=env)
    assert_fails(out, f"no space left on the device of {root}/big; nothing was published")
    assert not (root / "big").exists()
    assert {p: sha256(p) for p in (root / "small").glob("small.*")} == before
    assert sorted(p.name for p in root.iterdir()) == ["small"]


def test_nsys_missing(tmp_path):
    import glob

    if any(glob.glob(g) for g in nsys_mod.SEARCH_GLOBS):
        pytest.skip("an nsys is installed in a standard location")
    shutil.copyfile(THREEBODY, tmp_path / "tb.nsys-rep")
    out = run_cli(tmp_path, "convert", "tb.nsys-rep", env={"PATH": os.path.dirname(sys.executable)})
    assert_fails(out, "tb.nsys-rep: nsys was not found (looked in /opt/nvidia/")
    assert (
        "or convert an existing Parquet export folder or SQLite export (.sqlite) instead"
        in out.stderr
    )
    assert ws_files(tmp_path) == []


def test_nsys_override_that_does_not_run(tmp_path):
    shutil.copyfile(THREEBODY, tmp_path / "tb.nsys-rep")
    (tmp_path / "nsys.txt").write_text("not a program")
    out = run_cli(tmp_path, "convert", "--nsys", tmp_path / "nsys.txt", "tb.nsys-rep")
    assert_fails(out, f"nsys was not found: {tmp_path}/nsys.txt does not run as nsys")
    assert ws_files(tmp_path) == []


@pytest.mark.parametrize(
    ("script", "message"),
    [
        (
            'echo "Exportation error: Something unexpected happened." >&2; exit 1',
            "nsys 2023.4.4.54 failed to export the report (exit status 1): "
            "Exportation error: Something unexpected happened.",
        ),
        ("exit 7", "nsys 2023.4.4.54 failed to export the report (exit status 7, no message)"),
        ("kill -9 $$", "nsys 2023.4.4.54 was killed by SIGKILL while exporting the report"),
        ("exit 0", "nsys 2023.4.4.54 reported success but wrote no Parquet export"),
    ],
)
def test_nsys_failing(tmp_path, script, message):
    shutil.copyfile(THREEBODY, tmp_path / "tb.nsys-rep")
    out = run_cli(tmp_path, "convert", "--nsys", fake_nsys(tmp_path, script), "tb.nsys-rep")
    assert_fails(out, f"tb.nsys-rep: {message}")
    assert ws_files(tmp_path) == []


def test_nsys_too_old_for_the_report(tmp_path):
    """The exact text nsys 2023.4 prints for a report from a newer Nsight."""
    script = (
        'echo "Exportation error: Report was created in Nsight Systems version '
        "(2024.2.3.38-243838467081v0), newer than your current version "
        '(2023.4.4.54-234433681190v0)." >&2\n'
        'echo "Please update your Nsight Systems to the latest version to view '
        'this report." >&2; exit 1'
    )
    shutil.copyfile(THREEBODY, tmp_path / "new.nsys-rep")
    out = run_cli(tmp_path, "convert", "--nsys", fake_nsys(tmp_path, script), "new.nsys-rep")
    assert_fails(
        out,
        "new.nsys-rep: the report was created by Nsight Systems 2024.2.3.38, "
        "newer than this nsys (2023.4.4.54); install Nsight Systems "
        "2024.2.3.38 or newer, pass --nsys FILE, or convert its SQLite "
        "export (nsys export --type=sqlite, with Nsight Systems 2024.2.3.38 "
        "or newer) instead",
    )
    assert ws_files(tmp_path) == []


@pytest.mark.nsys
def test_read_only_source_report(tmp_path):
    need_nsys()
    src = tmp_path / "src" / "ro.nsys-rep"
    src.parent.mkdir()
    shutil.copyfile(THREEBODY, src)
    src.chmod(0o444)
    src.parent.chmod(0o555)
    digest = sha256(src)
    try:
        out = run_cli(tmp_path, "convert", src)
        assert_converts(tmp_path, out, "ro")
        assert sha256(src) == digest
        assert sorted(p.name for p in src.parent.iterdir()) == ["ro.nsys-rep"]
        assert stat.S_IMODE(src.stat().st_mode) == 0o444
    finally:
        src.parent.chmod(0o755)


def _large_export_or_skip() -> Path:
    if not (LARGE_EXPORT / "NVTX_EVENTS.parquet").is_file():
        pytest.skip(f"no 1M-range export at {LARGE_EXPORT}")
    return LARGE_EXPORT


def _start(tmp_path: Path, *args) -> subprocess.Popen:
    env = dict(os.environ, NSYS_WORKSPACE_ROOT=str(tmp_path / "ws"))
    return subprocess.Popen(
        [sys.executable, "-m", "nsys_duck.cli", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )


def _wait_for(cond, timeout=60.0) -> None:
    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > timeout:
            raise AssertionError("timed out")
        time.sleep(0.05)


@pytest.mark.slow
def test_two_conversions_of_the_same_report_at_once(tmp_path):
    big = _large_export_or_skip()
    first = _start(tmp_path, "convert", "--no-validate", big)
    ws = tmp_path / "ws" / "cpu_nvtx_large_1M"
    # the lock is held once the first run has its scratch folder
    _wait_for(lambda: ws.is_dir() and any(ws.glob(".duckdb-spill-*")))
    second = run_cli(tmp_path, "convert", big)
    out, err = first.communicate(timeout=600)
    assert_fails(
        second,
        "cpu_nvtx_large_1M/parquet: another nsys-duck conversion of "
        "cpu_nvtx_large_1M is running (lock ",
    )
    assert first.returncode == 0, err
    assert out.strip().splitlines()[-1] == str(ws / "cpu_nvtx_large_1M.perfetto.json.gz")
    register_trace(ws / "cpu_nvtx_large_1M.perfetto.json.gz")
    assert [f for f in ws_files(tmp_path) if "/parquet" not in f and f != "cpu_nvtx_large_1M"] == [
        "cpu_nvtx_large_1M/.nsys-duck.lock"
    ] + outputs("cpu_nvtx_large_1M")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sig", "delay"), [(signal.SIGINT, 1.0), (signal.SIGINT, 4.0), (signal.SIGTERM, 2.0)]
)
def test_interrupted_mid_run_leaves_no_half_files(tmp_path, sig, delay):
    big = _large_export_or_skip()
    proc = _start(tmp_path, "convert", big)
    time.sleep(delay)
    assert proc.poll() is None, "finished before the signal; use a bigger input"
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.strip() == "nsys-duck: interrupted; no output files were published"
    assert ws_files(tmp_path) == []


def test_temporaries_of_a_killed_run_are_cleaned_up(tmp_path):
    """SIGKILL leaves temporaries behind; the next run (holding the lock) removes them."""
    exp = export(tmp_path, good_tables())
    ws = tmp_path / "ws" / "synthetic"
    ws.mkdir(parents=True)
    (ws / ".synthetic.perfetto.json.gz.tmp-99999").write_bytes(b"half")
    (ws / ".duckdb-spill-abc").mkdir()
    (ws / ".parquet.tmp-xyz").mkdir()
    out = run_cli(tmp_path, "convert", exp)
    assert_converts(tmp_path, out, "synthetic")


def test_export_folder_that_is_its_own_workspace_folder(tmp_path):
    exp = make_export(tmp_path / "ws" / "inplace", good_tables())
    before = sorted(p.name for p in exp.iterdir())
    out = run_cli(tmp_path, "convert", exp)
    assert_fails(out, "the export folder is itself the workspace folder")
    assert sorted(p.name for p in exp.iterdir()) == before


def test_a_copy_of_an_export_folder_is_the_same_report(tmp_path):
    """An export folder copied elsewhere (a second clone of the shipped
    example: same files, new mtimes) converts into the same workspace; an
    export of the same name with other content is still refused."""
    exp = export(tmp_path, good_tables())
    assert_converts(tmp_path, run_cli(tmp_path, "convert", exp), "synthetic")
    copy = tmp_path / "clone2" / "synthetic" / "parquet"
    shutil.copytree(exp, copy)  # new mtimes
    for f in copy.iterdir():
        os.utime(f, ns=(f.stat().st_atime_ns, f.stat().st_mtime_ns + 10**9))
    assert_converts(tmp_path, run_cli(tmp_path, "convert", copy), "synthetic")
    other = export(tmp_path / "other", {**good_tables(), "NVTX_EVENTS": [nvtx(50, 4000)]})
    assert_fails(run_cli(tmp_path, "convert", other), "holds the conversion of a different report")


def test_converting_the_workspace_export_again(tmp_path):
    """A workspace's own parquet/ folder is a valid input (reused in place)."""
    exp = export(tmp_path, good_tables())
    assert_converts(tmp_path, run_cli(tmp_path, "convert", exp), "synthetic")
    again = run_cli(tmp_path, "convert", tmp_path / "ws" / "synthetic" / "parquet")
    assert_converts(tmp_path, again, "synthetic")


@pytest.mark.parametrize(
    ("limit", "message"),
    [
        ("lots", "--memory-limit lots: Memory must have a number (e.g. 1GB)"),
        ("1MB", "DuckDB ran out of memory in "),
    ],
)
def test_memory_limit_unusable(tmp_path, limit, message):
    out = run_cli(tmp_path, "convert", "--memory-limit", limit, ABACUS_EXPORT)
    line = assert_fails(out, f"abacus_many_kernels/parquet: {message}")
    if limit == "1MB":
        # names the SQL file (or step) that ran out, then what to change
        where = line.split(" ran out of memory in ", 1)[1]
        assert re.match(
            r"(\d\d_[a-z_]+/\w+\.sql|the [A-Za-z ]+) \(--memory-limit 1MB\); raise --memory-limit$",
            where,
        ), line
    assert ws_files(tmp_path) == []
