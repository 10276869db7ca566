"""Many reports at once (``nsys_duck.parallel``, ``convert --jobs/--scheduler``).

On the shipped examples' real exports: a local Dask cluster converts them
as a sequential run does and skips them when up to date; a bad input is
one failed outcome among converted ones; the CLI converts on a running
scheduler (``dask scheduler`` + ``dask worker`` subprocesses on
127.0.0.1); :func:`convert.up_to_date` says no once the source or the
options change. Traces written in worker processes are handed to the
Perfetto import check with ``register_trace`` (conftest).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from distributed import Client, LocalCluster

from conftest import REPO, register_trace
from nsys_duck import __version__, manifest, parallel
from nsys_duck import convert as convert_mod
from nsys_duck.cli import main
from nsys_duck.convert import Options, up_to_date
from nsys_duck.errors import NsysDuckError

EXAMPLES = [
    REPO / "examples" / name / "parquet"
    for name in ("raiderstream_tiny", "cpu_nvtx_small", "rodinia_gaussian_8k_kernels")
]
SQLITE = (
    REPO / "examples" / "testcuda_streams_events_2026_1" / "testcuda_streams_events_2026_1.sqlite"
)
BIN = Path(sys.executable).parent
WAIT_S = 60  # for a scheduler or worker to start


def _name(export: Path) -> str:
    return export.parent.name


def _mtimes(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}


def _children() -> set[int]:
    """Child processes, but multiprocessing's resource tracker (it lives as
    long as this process once a spawned process started)."""
    found = set()
    for p in psutil.Process().children(recursive=True):
        try:
            if not any("resource_tracker" in arg for arg in p.cmdline()):
                found.add(p.pid)
        except psutil.Error:  # gone meanwhile
            pass
    return found


@pytest.fixture(scope="module")
def client():
    """One local cluster for the tests that pass ``client=`` (2 one-thread
    worker processes on 127.0.0.1, as convert_many starts them)."""
    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        scheduler_port=0,
        dashboard_address=None,
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
        silence_logs=logging.ERROR,
    )
    c = Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()


def test_local_cluster_converts_then_skips(tmp_path, monkeypatch):
    seq = parallel.convert_many(EXAMPLES, jobs=1, root=tmp_path / "seq")  # in this process
    assert [o.status for o in seq] == ["converted"] * 3, [o.message for o in seq]
    before = _children()
    updates = []
    outcomes = parallel.convert_many(
        [str(p) for p in EXAMPLES],
        jobs=2,
        root=tmp_path / "ws",
        on_update=lambda *args: updates.append(args),
    )
    assert [o.status for o in outcomes] == ["converted"] * 3, [o.message for o in outcomes]
    assert [o.path for o in outcomes] == [str(p) for p in EXAMPLES]  # in the order given
    # one update per outcome: (done, failed, running, outcome)
    assert [u[:3] for u in updates] == [(1, 0, 2), (2, 0, 1), (3, 0, 0)]
    assert {u[3].path for u in updates} == {str(p) for p in EXAMPLES}
    for export, o, s in zip(EXAMPLES, outcomes, seq, strict=True):
        name = _name(export)
        assert o.workspace == tmp_path / "ws" / name and o.name == name and o.message == ""
        assert o.trace == o.workspace / f"{name}.perfetto.json.gz"
        for suffix in (".perfetto.json.gz", ".perfetto.parquet", ".duckdb"):
            assert (o.workspace / f"{name}{suffix}").is_file(), suffix
        assert o.summary == s.summary and dict(o.summary)["slices"] > 0
        assert o.base_ns == s.base_ns and o.seconds > 0
        register_trace(o.trace)  # written in a worker process: not seen by conftest
    # the cluster it started is gone (bounded wait for the worker processes)
    deadline = time.monotonic() + 20
    while _children() - before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _children() - before
    # again: every report is up to date, decided here (no cluster started),
    # and nothing is written
    stamps = _mtimes(tmp_path / "ws")
    monkeypatch.setattr(parallel, "_run_on_dask", lambda *a: pytest.fail("Dask started"))
    again = parallel.convert_many(EXAMPLES, jobs=2, root=tmp_path / "ws")
    assert [o.status for o in again] == ["up to date"] * 3
    assert [o.trace for o in again] == [o.trace for o in outcomes]
    assert all(o.summary == [] and o.message == "" for o in again)
    assert _mtimes(tmp_path / "ws") == stamps


def test_task_decides_up_to_date_on_the_worker(tmp_path, client):
    root = tmp_path / "ws"
    path = str(EXAMPLES[1])
    args = (path, path, Options(), root, True, {"127.0.0.1": 2})
    first = client.submit(parallel._convert_one, *args, pure=False).result()
    assert first.status == "converted", first.message
    register_trace(first.trace)
    stamps = _mtimes(root)
    second = client.submit(parallel._convert_one, *args, pure=False).result()
    assert second.status == "up to date" and second.workspace == first.workspace
    assert _mtimes(root) == stamps
    # DuckDB threads: the host's cores shared by the tasks that run there at once
    cpus = client.submit(parallel._cpus, pure=False).result()
    threads = client.submit(parallel._task_threads, {"127.0.0.1": 2}, pure=False).result()
    assert threads == max(1, cpus // 2)
    alone = client.submit(parallel._task_threads, {}, pure=False).result()
    assert alone == cpus  # an unknown host: this worker's one thread


def test_a_bad_input_fails_alone(tmp_path, client):
    empty = tmp_path / "empty.nsys-rep"
    empty.write_bytes(b"")
    folder = tmp_path / "not_an_export"
    folder.mkdir()
    paths = [str(EXAMPLES[0]), str(tmp_path / "missing.nsys-rep"), str(empty), str(folder)]
    paths.append(str(EXAMPLES[2]))
    outcomes = parallel.convert_many(paths, root=tmp_path / "ws", client=client)
    assert [o.status for o in outcomes] == ["converted", "failed", "failed", "failed", "converted"]
    for o in outcomes[1:4]:
        # the message a sequential convert raises, one line
        with pytest.raises(NsysDuckError) as raised:
            convert_mod.convert(o.path, Options(), root=tmp_path / "seq")
        assert o.message == str(raised.value) and "\n" not in o.message
        assert o.workspace is None and o.trace is None and o.summary == []
    assert outcomes[1].message == "no such file or directory"
    assert outcomes[2].message == "the report is empty (0 bytes)"
    for o in (outcomes[0], outcomes[4]):
        assert o.trace.is_file()
        register_trace(o.trace)
    assert client.status == "running"  # the client passed in is left open


def test_one_workspace_runs_in_the_order_given(tmp_path, client):
    """Inputs of one workspace NAME run one after the other, as without Dask:
    another report of that NAME is refused (not a lock clash), the first
    one given again is up to date by then."""
    other = tmp_path / "b" / _name(EXAMPLES[1]) / "parquet"
    shutil.copytree(EXAMPLES[0], other)  # other content, the same NAME
    paths = [str(EXAMPLES[1]), str(other), str(EXAMPLES[1])]
    seq = parallel.convert_many(paths, root=tmp_path / "seq")
    par = parallel.convert_many(paths, root=tmp_path / "ws", client=client)
    assert [o.status for o in par] == ["converted", "failed", "up to date"]
    assert [o.status for o in seq] == [o.status for o in par]
    assert "holds the conversion of a different report" in par[1].message
    assert par[1].message == seq[1].message.replace(str(tmp_path / "seq"), str(tmp_path / "ws"))
    register_trace(par[0].trace)


def test_an_unexpected_error_is_one_failed_outcome(tmp_path, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(convert_mod, "convert", boom)
    outcomes = parallel.convert_many([EXAMPLES[0], EXAMPLES[1]], root=tmp_path)
    assert [(o.status, o.message) for o in outcomes] == [
        ("failed", "unexpected error: RuntimeError: boom second line")
    ] * 2


def test_refusals(tmp_path, monkeypatch):
    with pytest.raises(NsysDuckError, match="lower --jobs or --memory-limit"):
        parallel.convert_many(
            [tmp_path / "x.nsys-rep"], Options(memory_limit="100GB"), jobs=2, root=tmp_path
        )
    with pytest.raises(NsysDuckError, match="no such scheduler file"):
        parallel.convert_many(
            [tmp_path / "x.nsys-rep"], scheduler=str(tmp_path / "none.json"), root=tmp_path
        )
    monkeypatch.setitem(sys.modules, "distributed", None)  # not installed
    with pytest.raises(NsysDuckError) as raised:
        parallel.convert_many([tmp_path / "x.nsys-rep"], jobs=2, root=tmp_path)
    assert str(raised.value).endswith("pip install 'nsys-duck[dask]'")
    runner = CliRunner()
    out = runner.invoke(main, ["convert", "--jobs", "2", "-o", str(tmp_path), "a", "b"])
    assert out.exit_code == 2 and "one report with it" in out.output
    out = runner.invoke(main, ["convert", "--jobs", "2", "--timings", str(EXAMPLES[0])])
    assert out.exit_code == 2 and "--timings" in out.output
    out = runner.invoke(main, ["convert", "--jobs", "0", str(EXAMPLES[0])])
    assert out.exit_code == 2


def _popen(args, log: Path, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        args,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own group: stopped as one below
    )


@pytest.fixture
def scheduler_file(tmp_path):
    """A ``dask scheduler`` and one ``dask worker`` (one process, one
    thread) on 127.0.0.1, no dashboard; the scheduler file's path. Both
    are stopped (their process groups) when the test ends."""
    procs: list[subprocess.Popen] = []
    file = tmp_path / "scheduler.json"
    dask = [str(BIN / "dask")] if (BIN / "dask").exists() else [sys.executable, "-m", "dask"]
    try:
        procs.append(
            _popen(
                [*dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard"]
                + ["--dashboard-address", "127.0.0.1:0", "--scheduler-file", str(file)]
                + ["--idle-timeout", "600"],
                tmp_path / "scheduler.log",
                tmp_path,
            )
        )
        deadline = time.monotonic() + WAIT_S
        while not file.is_file() and time.monotonic() < deadline:
            assert procs[0].poll() is None, (tmp_path / "scheduler.log").read_text()
            time.sleep(0.1)
        assert file.is_file(), (tmp_path / "scheduler.log").read_text()
        procs.append(
            _popen(
                [*dask, "worker", "--scheduler-file", str(file), "--nthreads", "1"]
                + ["--nworkers", "1", "--host", "127.0.0.1", "--no-dashboard"]
                + ["--death-timeout", "120", "--memory-limit", "6GB"],
                tmp_path / "worker.log",
                tmp_path,
            )
        )
        with Client(scheduler_file=str(file), timeout=WAIT_S) as c:
            c.wait_for_workers(1, timeout=WAIT_S)
        yield file
    finally:
        for p in reversed(procs):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in reversed(procs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=15)


def test_cli_converts_on_a_running_scheduler(tmp_path, scheduler_file):
    env = dict(os.environ, NSYS_WORKSPACE_ROOT=str(tmp_path / "ws"))
    nsys_duck = str(BIN / "nsys-duck")
    inputs = [str(EXAMPLES[0]), str(EXAMPLES[2]), str(tmp_path / "missing.nsys-rep")]

    def run(*args):
        return subprocess.run(
            [nsys_duck, "convert", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )

    out = run("--scheduler", str(scheduler_file), *inputs)
    assert out.returncode == 1, out.stderr  # the missing one
    assert out.stderr.strip().splitlines() == [
        f"nsys-duck: {inputs[2]}: no such file or directory"
    ], out.stderr
    lines = sorted(out.stdout.strip().splitlines())
    assert len(lines) == 3, out.stdout
    assert lines[0].startswith(f"{inputs[2]}: failed")
    for line, export in zip(lines[1:], (EXAMPLES[0], EXAMPLES[2]), strict=True):
        name = _name(export)
        trace = tmp_path / "ws" / name / f"{name}.perfetto.json.gz"
        assert line.startswith(f"{name}: converted (") and line.endswith(f" {trace}"), line
        assert trace.is_file() and (trace.parent / f"{name}.duckdb").is_file()
        rec = manifest.read(trace.parent)
        assert rec["conversion"]["nsys_duck_version"] == __version__
        register_trace(trace)
    # by address this time; both are up to date now
    address = json.loads(scheduler_file.read_text())["address"]
    stamps = _mtimes(tmp_path / "ws")
    out = run("--scheduler", address, *inputs[:2])
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert [line.split(" (")[0] for line in out.stdout.strip().splitlines()] == [
        f"{_name(EXAMPLES[0])}: up to date",
        f"{_name(EXAMPLES[2])}: up to date",
    ], out.stdout
    assert _mtimes(tmp_path / "ws") == stamps


def test_up_to_date_until_the_source_or_the_options_change(tmp_path):
    root = tmp_path / "ws"
    export = tmp_path / "cpu_nvtx_small"
    shutil.copytree(EXAMPLES[1], export)  # a copy this test may change
    res = convert_mod.convert(export, Options(), root=root)
    ws = up_to_date(export, Options(), root)
    assert ws == res.workspace
    assert up_to_date(str(export), Options(threads=1), root) == ws  # not recorded
    # change no file: the memory limit; no checks asked for (they ran)
    assert up_to_date(export, Options(memory_limit="1GB"), root) == ws
    assert up_to_date(export, Options(validate=False), root) == ws
    for changed in (
        Options(nvtx_scope="process"),
        Options(database=False),
        Options(max_json_bytes=10**6),
        Options(window=(0.0, None)),
        Options(devices=(0,)),
        Options(force=True),
        Options(sql_dir=tmp_path),
        Options(output_dir=tmp_path / "elsewhere"),
    ):
        assert up_to_date(export, changed, root) is None, changed
    assert up_to_date(export, Options(), tmp_path / "other_root") is None
    for bad in (tmp_path / "missing.nsys-rep", tmp_path, tmp_path / "x.txt"):
        assert up_to_date(bad, Options(), root) is None
    # an output gone or of another size
    db = ws.database
    db.rename(db.with_suffix(".moved"))
    assert up_to_date(export, Options(), root) is None
    db.with_suffix(".moved").rename(db)
    assert up_to_date(export, Options(), root) == ws
    # another nsys-duck version, a damaged manifest
    text = (ws.dir / manifest.FILE_NAME).read_text()
    rec = json.loads(text)
    rec["conversion"]["nsys_duck_version"] = "0.0.1"
    (ws.dir / manifest.FILE_NAME).write_text(json.dumps(rec))
    assert up_to_date(export, Options(), root) is None
    (ws.dir / manifest.FILE_NAME).write_text('{"format": 1, "name": 3, "conversion": []}')
    assert up_to_date(export, Options(), root) is None
    (ws.dir / manifest.FILE_NAME).write_text(text)
    assert up_to_date(export, Options(), root) == ws
    # the export changes: one more string
    strings = pq.read_table(export / "StringIds.parquet")
    extra = pa.table({"id": pa.array([10**6], strings["id"].type), "value": ["new"]})
    pq.write_table(
        pa.concat_tables([strings, extra.cast(strings.schema)]), export / "StringIds.parquet"
    )
    assert up_to_date(export, Options(), root) is None


def test_up_to_date_follows_a_files_content(tmp_path):
    root = tmp_path / "ws"
    sqlite = tmp_path / SQLITE.name
    shutil.copy2(SQLITE, sqlite)
    res = convert_mod.convert(sqlite, Options(), root=root)
    assert up_to_date(sqlite, Options(), root) == res.workspace
    os.utime(sqlite, ns=(1, 1))  # new mtime and ctime, same content: hashed again
    assert up_to_date(sqlite, Options(), root) == res.workspace
    with open(sqlite, "ab") as f:
        f.write(b"\0")
    assert up_to_date(sqlite, Options(), root) is None
