"""The CPU side of the timeline (issue 15, part 1): OS runtime calls
(OSRT_API), cuDNN/cuBLAS calls (CUDNN_EVENTS, CUBLAS_EVENTS) and thread
states from scheduling (SCHED_EVENTS), through the real pipeline on every dev
report, checked against Nsight's own tables (read here with DuckDB, never
from our outputs); a synthetic export covers cuBLAS (no real capture here
holds cuBLAS rows) and rows Nsight should not write.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter, defaultdict

import duckdb
import pytest
from click.testing import CliRunner

import contract
from conftest import EPOCH, REPORTS, gtid, load_events, make_export, report_ids
from nsys_duck import pipeline
from nsys_duck.cli import main
from nsys_duck.convert import Options, convert

IDS = report_ids()
CALL_TABLES = {"osrt": "OSRT_API", "cudnn": "CUDNN_EVENTS", "cublas": "CUBLAS_EVENTS"}
TRACK_OF = {
    "osrt": "OS Runtime",
    "cudnn": "cuDNN",
    "cublas": "cuBLAS",
    "thread_state": "Thread State",
}


def _table(name: str, table: str) -> str | None:
    path = REPORTS / name / "parquet" / f"{table}.parquet"
    return f"read_parquet('{path}')" if path.exists() else None


def _rows(name: str, sql: str, table: str) -> list[tuple]:
    src = _table(name, table)
    if src is None:
        return []
    strings = REPORTS / name / "parquet" / "StringIds.parquet"
    return duckdb.execute(sql.format(t=src, s=f"read_parquet('{strings}')")).fetchall()


def test_the_flags_are_the_domain_tables_sources():
    """pipeline.CPU_SOURCES (the --no-SOURCE words) = cpu_trace_sources."""
    con = duckdb.connect()
    sql = (pipeline.packaged_sql_dir() / "05_domain" / "cpu_trace_sources.sql").read_text()
    for st in duckdb.extract_statements(sql):
        con.execute(st.query)
    assert {r[0] for r in con.execute("SELECT source FROM cpu_trace_sources").fetchall()} == set(
        pipeline.CPU_SOURCES
    )
    tracks = (pipeline.packaged_sql_dir() / "05_domain" / "track_classes.sql").read_text()
    for source, track in TRACK_OF.items():
        assert f"('{source}', 6, " in tracks and f"'{track}'" in tracks


@pytest.mark.parametrize("name", IDS)
def test_cpu_side_counts_equal_the_tables(name, converted):
    """Every OSRT_API / CUDNN_EVENTS row is one primary slice with its name
    (StringIds), thread and exact ns times; a thread's n SCHED_EVENTS rows give
    n - 1 Thread State slices, Running after a sched-in; the summary says so."""
    res, _ = converted(name)
    summary = dict(res.summary)
    slices = contract.slices_table(res.workspace.events_parquet)
    primary = [s for s in slices if s["is_primary"]]
    for source, table in CALL_TABLES.items():
        want = Counter(
            _rows(
                name,
                "SELECT coalesce(s.value, '[unnamed call]'), c.start, c.\"end\", "
                "(c.globalTid >> 24) & 16777215, c.globalTid & 16777215 "
                "FROM {t} AS c LEFT JOIN {s} AS s ON s.id = c.nameId",
                table,
            )
        )
        got = Counter(
            (s["name"], s["start_ns"], s["end_ns"], s["os_pid"], s["os_tid"])
            for s in primary
            if s["cat"] == source
        )
        assert got == want, f"{source}: slices differ from {table}"
        metric = {"osrt": "OS runtime calls", "cudnn": "cuDNN calls", "cublas": "cuBLAS calls"}
        assert summary.get(metric[source], 0) == sum(want.values())
    events = _rows(
        name,
        "SELECT globalTid, start, isSchedIn, cpu FROM {t} ORDER BY globalTid, start, isSchedIn",
        "SCHED_EVENTS",
    )
    per_thread = defaultdict(list)
    for g, start, is_in, cpu in events:
        per_thread[g].append((start, is_in, cpu))
    want_states = Counter()
    for g, evs in per_thread.items():
        for (start, is_in, _), (end, _, _) in itertools.pairwise(evs):
            name_ = "Running" if is_in else "Not running"
            want_states[(name_, start, end, (g >> 24) & 0xFFFFFF, g & 0xFFFFFF)] += 1
    got_states = Counter(
        (s["name"], s["start_ns"], s["end_ns"], s["os_pid"], s["os_tid"])
        for s in primary
        if s["cat"] == "thread_state"
    )
    assert got_states == want_states
    assert summary.get("thread scheduling events", 0) == len(events)
    assert summary.get("thread state slices", 0) == len(events) - len(per_thread)
    # no CPU-side table is reported "not drawn" any more
    assert not [m for m in summary if re.search(r"not drawn: (OSRT_API|SCHED_EVENTS|CUDNN)", m)]


@pytest.mark.parametrize("name", [n for n in IDS if _table(n, "OSRT_API")])
def test_each_cpu_track_sits_with_its_thread(name, converted):
    """A thread's CPU-side slices are on its own 'OS Runtime · NAME [TID]'
    track (and 'Thread State · ...', ...), drawn once, under the Perfetto
    process of its host process ('NAME [PID]', as Nsight names it), never
    under a device (output-contract.md, Tracks, 2026-12-03)."""
    res, events = converted(name)
    slices = contract.slices_table(res.workspace.events_parquet)
    process = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    homes = defaultdict(set)  # OS pid -> JSON pids of its CPU-side slices
    for s in slices:
        if s["cat"] in TRACK_OF:
            assert s["track_name"].startswith(f"{TRACK_OF[s['cat']]} · "), s["track_name"]
            tid = re.escape(f"[{s['os_tid']}]")
            assert re.search(rf"{tid}( #\d+)?( \(depth .*\))?$", s["track_name"]), s
            assert process[s["pid"]].endswith(f" [{s['os_pid']}]"), process[s["pid"]]
            assert not process[s["pid"]].startswith("Device ")
            assert s["is_primary"]
            homes[s["os_pid"]].add(s["pid"])
    assert homes and all(len(pids) == 1 for pids in homes.values())
    assert len({next(iter(pids)) for pids in homes.values()}) == len(homes)


def test_nested_os_runtime_calls_nest_on_one_track(converted):
    """abacus: 32 OS runtime calls made inside another (nestingLevel 1+) stay
    on their parent's track and lane, nested in it (Perfetto's importer, run
    on every trace by conftest, keeps every slice), with args.nestingLevel."""
    res, events = converted("abacus_many_kernels")
    slices = contract.slices_table(res.workspace.events_parquet)
    osrt = [s for s in slices if s["cat"] == "osrt" and s["is_primary"]]
    by_track = defaultdict(list)
    for s in osrt:
        by_track[s["tid"]].append(s)
    nested = 0
    for track in by_track.values():
        track.sort(key=lambda s: (s["start_ns"], -s["end_ns"]))
        for a, b in itertools.pairwise(track):
            if b["start_ns"] < a["end_ns"]:
                assert b["end_ns"] <= a["end_ns"], "partial overlap on one track"
                nested += 1
    assert nested > 0
    assert not any(
        s["track_name"].startswith("OS Runtime") and " #2" in s["track_name"] for s in osrt
    )
    levels = [
        e["args"].get("nestingLevel") for e in events if e.get("cat") == "osrt" and e["ph"] == "X"
    ]
    assert sum(1 for v in levels if v) >= 32


def test_keras_cudnn_calls_are_drawn(converted):
    """The one real capture with cuDNN rows: 383 calls, 2 of them Nsight's
    zero-length 'started'/'finished' markers, on a cuDNN track."""
    res, events = converted("keras_darknet53_nvtx_startend")
    summary = dict(res.summary)
    assert summary["cuDNN calls"] == 383
    names = Counter(e["name"] for e in events if e.get("cat") == "cudnn" and e["ph"] == "X")
    assert names["cudnnConvolutionForward"] >= 276
    threads = [e for e in events if e["ph"] == "M" and e["name"] == "thread_name"]
    assert any(t["args"]["name"].startswith("cuDNN · ") for t in threads)


def test_flags_leave_each_source_out(tmp_path):
    """--no-osrt --no-sched: no such slice, the tables are named 'not drawn',
    and the conversion is not up to date for the defaults (options recorded)."""
    root = tmp_path / "ws"
    src = REPORTS / "raiderstream_tiny" / "parquet"
    runner = CliRunner()
    out = runner.invoke(
        main,
        ["convert", str(src), "-o", str(root / "r"), "--no-osrt", "--no-sched"],
        catch_exceptions=False,
    )
    assert out.exit_code == 0, out.output
    assert "table with rows, not drawn: OSRT_API" in out.output
    assert "table with rows, not drawn: SCHED_EVENTS" in out.output
    assert "OS runtime calls" not in out.output
    slices = contract.slices_table(root / "r" / "raiderstream_tiny.perfetto.parquet")
    assert not [s for s in slices if s["cat"] in ("osrt", "thread_state")]
    full = convert(src, Options(output_dir=root / "r", force=True), root=root)
    assert dict(full.summary)["OS runtime calls"] == 1212
    assert dict(full.summary)["thread scheduling events"] == 8470


def test_synthetic_cublas_osrt_and_bad_rows(tmp_path):
    """cuBLAS (no real capture here has it), a failed OS runtime call, rows
    Nsight should not write (NULL end, NULL thread) counted as skipped, a
    process with nothing but OS runtime calls (its own host process, named
    'Process [PID]' as the export has no PROCESSES table),
    and a thread whose states have equal timestamps."""
    t1, t2 = gtid(100, 101), gtid(200, 201)
    export = make_export(
        tmp_path / "x",
        {
            "StringIds": [
                {"id": 1, "value": "cublasSgemm_v2"},
                {"id": 2, "value": "read"},
                {"id": 3, "value": "pthread_mutex_lock"},
            ],
            "CUBLAS_EVENTS": [
                {
                    "start": EPOCH + 10,
                    "end": EPOCH + 50,
                    "eventClass": 35,
                    "globalTid": t1,
                    "nameId": 1,
                },
                {"start": EPOCH + 60, "end": None, "eventClass": 35, "globalTid": t1, "nameId": 1},
            ],
            "OSRT_API": [
                {
                    "start": EPOCH + 5,
                    "end": EPOCH + 9,
                    "eventClass": 27,
                    "globalTid": t2,
                    "nameId": 2,
                    "returnValue": -1,
                    "nestingLevel": 0,
                    "callchainId": None,
                },
                {
                    "start": EPOCH + 20,
                    "end": EPOCH + 90,
                    "eventClass": 27,
                    "globalTid": t2,
                    "nameId": 3,
                    "returnValue": 0,
                    "nestingLevel": 0,
                    "callchainId": None,
                },
                {
                    "start": EPOCH + 30,
                    "end": EPOCH + 40,
                    "eventClass": 27,
                    "globalTid": t2,
                    "nameId": 2,
                    "returnValue": 8,
                    "nestingLevel": 1,
                    "callchainId": None,
                },
                {
                    "start": EPOCH + 1,
                    "end": EPOCH + 2,
                    "eventClass": 27,
                    "globalTid": None,
                    "nameId": 2,
                    "returnValue": 0,
                    "nestingLevel": 0,
                    "callchainId": None,
                },
            ],
            "SCHED_EVENTS": [
                {"start": EPOCH + 0, "cpu": 3, "isSchedIn": True, "globalTid": t2},
                {"start": EPOCH + 40, "cpu": 3, "isSchedIn": False, "globalTid": t2},
                {"start": EPOCH + 40, "cpu": 5, "isSchedIn": True, "globalTid": t2},
                {"start": EPOCH + 95, "cpu": 5, "isSchedIn": False, "globalTid": t2},
            ],
        },
    )
    res = convert(export, Options(), root=tmp_path / "ws")
    summary = dict(res.summary)
    assert summary["cuBLAS calls"] == 1 and summary["OS runtime calls"] == 3
    assert summary["rows skipped: CUBLAS_EVENTS (NULL start or end)"] == 1
    assert summary["rows skipped: OSRT_API (NULL globalTid)"] == 1
    assert summary["thread state slices"] == 3
    events = load_events(res)
    x = [e for e in events if e["ph"] == "X"]
    failed = [e for e in x if e["cat"] == "osrt" and e["args"].get("returnValue") == -1]
    assert len(failed) == 1 and failed[0]["name"] == "read"
    assert [e["args"] for e in x if e["cat"] == "cublas"] == [{}]
    states = sorted((e["ts"], e["name"], e["args"]) for e in x if e["cat"] == "thread_state")
    assert [(n, a) for _, n, a in states] == [
        ("Running", {"cpu": 3}),
        ("Not running", {"previousCpu": 3}),  # zero-length: out and in at 40 ns
        ("Running", {"cpu": 5}),
    ]
    processes = {
        e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"
    }
    assert processes == {"Process [100]", "Process [200]"}
