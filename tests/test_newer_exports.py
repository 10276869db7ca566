"""Today's captures: the real SQLite exports of Nsight Systems 2024.6 - 2026.2
(export schema 3.16.1 - 3.25.0) in shared/data/newer, through the real
pipeline, checked against their own tables (read here with sqlite3, never
from our outputs) and the output contract.
"""

from __future__ import annotations

import gzip
import json
import re
import sqlite3
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest

import contract
from nsys_duck.convert import Options, convert
from paths import NEWER

FILES = sorted(NEWER.glob("*/*.sqlite"))
IDS = [p.stem for p in FILES]
PCIE_KINDS = (1, 2, 3, 4, 11, 12)


def test_newer_exports_exist():
    assert len(FILES) >= 6, f"the newer exports are not under {NEWER}"


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    root = tmp_path_factory.mktemp("newer")
    cache = {}

    def get(path: Path):
        if path not in cache:
            res = convert(path, Options(), root=root)
            with gzip.open(res.workspace.json_gz, "rb") as f:
                events = json.loads(f.read(), parse_float=Decimal)
            slices = contract.slices_table(res.workspace.events_parquet)
            cache[path] = (res, events, slices)
        return cache[path]

    return get


class Tables:
    """Counts straight from the SQLite export (the ground truth)."""

    def __init__(self, path: Path):
        self.con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        self.names = {
            r[0] for r in self.con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }

    def count(self, table: str, where: str = "1") -> int:
        if table not in self.names:
            return 0
        return self.con.execute(f'SELECT count(*) FROM "{table}" WHERE {where}').fetchone()[0]

    def linked(self, table: str) -> int:
        """Rows of a GPU table whose (process, correlationId) has a runtime or
        driver API call (eventClass 0/1): the ones that get launch/copy/sync flows."""
        if table not in self.names:
            return 0
        return self.con.execute(f"""
            SELECT count(*) FROM "{table}" AS g WHERE EXISTS (
                SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r
                WHERE r.eventClass IN (0, 1) AND r.correlationId = g.correlationId
                    AND (r.globalTid >> 24) = (g.globalPid >> 24))""").fetchone()[0]

    def epoch(self) -> int:
        return self.con.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()[
            0
        ]


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_counts_equal_the_export_tables(path, converted):
    res, events, slices = converted(path)
    t = Tables(path)
    summary = dict(res.summary)
    kernels = t.count("CUPTI_ACTIVITY_KIND_KERNEL")
    graphs = t.count("CUPTI_ACTIVITY_KIND_GRAPH_TRACE")
    memcpys = t.count("CUPTI_ACTIVITY_KIND_MEMCPY")
    memsets = t.count("CUPTI_ACTIVITY_KIND_MEMSET")
    syncs = t.count("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION")
    pcie = t.count("CUPTI_ACTIVITY_KIND_MEMCPY", f"copyKind IN {PCIE_KINDS}")
    assert summary["kernels"] == kernels
    assert summary["CUDA graph executions"] == graphs
    assert summary["memset"] == memsets
    assert (
        sum(summary[m] for m in ("memcpy H2D", "memcpy D2H", "memcpy D2D/peer", "memcpy other"))
        == memcpys
    )
    assert summary["GPU-side synchronization rows"] == syncs
    cats = Counter(s["cat"] for s in slices)
    assert cats["kernel"] == cats["kernel_core"] == kernels
    assert cats["cuda_graph"] == cats["cuda_graph_core"] == graphs
    assert cats["memcpy"] == memcpys and cats["memset"] == memsets
    assert cats["memcpy_pcie"] == pcie
    assert cats["gpu_sync"] == syncs
    flows = Counter(e["cat"] for e in events if e["ph"] == "s")
    launched = t.linked("CUPTI_ACTIVITY_KIND_KERNEL") + t.linked("CUPTI_ACTIVITY_KIND_GRAPH_TRACE")
    assert flows["launch"] == flows["launch_core"] == launched
    assert flows["copy"] == (
        t.linked("CUPTI_ACTIVITY_KIND_MEMCPY") + t.linked("CUPTI_ACTIVITY_KIND_MEMSET")
    )
    assert flows["sync"] == t.linked("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION")
    assert summary["CPU NVTX ranges"] == t.count("NVTX_EVENTS", "eventType IN (59, 70)")
    # every table with rows that is not drawn is named, with its row count
    not_drawn = {
        m.split(": ", 1)[1]: v
        for m, v in summary.items()
        if m.startswith("table with rows, not drawn: ")
    }
    for table in ("OSRT_API", "SCHED_EVENTS"):  # drawn now: the CPU side
        assert table not in not_drawn
    for table in (
        "COMPOSITE_EVENTS",
        "CUDA_GRAPH_EVENTS",
        "CUPTI_ACTIVITY_KIND_OVERHEAD",
        "NVTX_PAYLOAD_SCHEMAS",
    ):
        if t.count(table):
            assert not_drawn[table] == t.count(table), table
    assert "CUPTI_ACTIVITY_KIND_KERNEL" not in not_drawn and "StringIds" not in not_drawn


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_contract_holds(path, converted):
    res, events, slices = converted(path)
    assert contract.partial_overlaps([s for s in slices if s["ph"] != "b"]) == []
    assert contract.unnamed_tracks(events) == []
    assert contract.bad_ids(events) == []
    assert contract.flow_problems(events, slices, res.base_ns) == []
    assert res.validated
    names = [e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"]
    assert names and not any("Device -1" in n for n in names)


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_times_are_the_exports_plus_the_session_start(path, converted):
    """Session-relative exports (all of these): absolute ns = Nsight's value +
    TARGET_INFO_SESSION_START_TIME.utcEpochNs, exactly, in JSON and Parquet;
    every JSON time in [0, 2^42) us."""
    res, events, slices = converted(path)
    t = Tables(path)
    epoch = t.epoch()
    rows = (
        t.con.execute('SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_KERNEL').fetchall()
        if "CUPTI_ACTIVITY_KIND_KERNEL" in t.names
        else []
    )
    want = Counter((s + epoch, e + epoch) for s, e in rows)
    assert Counter((s["start_ns"], s["end_ns"]) for s in slices if s["cat"] == "kernel") == want
    got = Counter(
        (
            contract.ns(e["ts"]) + res.base_ns,
            contract.ns(e["ts"]) + contract.ns(e["dur"]) + res.base_ns,
        )
        for e in events
        if e.get("cat") == "kernel"
    )
    assert got == want
    assert all(0 <= contract.ns(e["ts"]) < 2**42 * 1000 for e in events if "ts" in e)
    assert res.base_ns % 10**9 == 0 and res.base_ns <= epoch


def _process_names(events):
    return sorted(
        e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"
    )


def test_graph_level_launches_have_their_gpu_side(converted):
    """flameox: two cudaGraphLaunch calls whose GPU side is only in
    CUPTI_ACTIVITY_KIND_GRAPH_TRACE: each execution is drawn on stream 13 and
    the Core Timeline, with a launch and a launch_core flow from its call."""
    res, _events, slices = converted(
        NEWER / "flameox_graph_trace_2025_5" / "flameox_graph_trace_2025_5.sqlite"
    )
    graphs = [s for s in slices if s["cat"] == "cuda_graph"]
    assert [
        (s["name"], s["correlation_id"], s["track_name"])
        for s in sorted(graphs, key=lambda s: s["start_ns"])
    ] == [
        ("CUDA graph 1", 141, "Stream 13 [pid 945961 ctx 1]"),
        ("CUDA graph 1", 142, "Stream 13 [pid 945961 ctx 1]"),
    ]
    assert dict(res.summary)["linked CUDA API launches"] == 5
    calls = {s["correlation_id"]: s["name"] for s in slices if s["cat"] == "cuda_api"}
    assert calls[141] == calls[142] == "cudaGraphLaunch"


def test_graph_capture_and_allocation_calls_are_drawn(converted):
    """flameox: every CUDA API call of the export is a slice on its thread's
    CUDA API track, also those without GPU work, which were not drawn before:
    cudaMalloc, cudaFree, cudaEventRecord, the stream capture
    (cudaStreamBeginCapture, the cudaLaunchKernel calls captured into the
    graph) and cudaGraphInstantiate."""
    path = NEWER / "flameox_graph_trace_2025_5" / "flameox_graph_trace_2025_5.sqlite"
    res, _events, slices = converted(path)
    t = Tables(path)
    want = Counter(
        (tid, re.sub(r"_v[0-9]{4,}$", "", name))
        for tid, name in t.con.execute("""
        SELECT r.globalTid % 16777216, s.value
        FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r JOIN StringIds AS s ON s.id = r.nameId
        WHERE r.eventClass IN (0, 1)""")
    )
    api = [s for s in slices if s["cat"] in ("cuda_api", "cuda_sync") and s["is_primary"]]
    assert Counter((s["os_tid"], s["name"]) for s in api) == want
    names = {s["name"]: s for s in api}
    for name in ("cudaMalloc", "cudaFree", "cudaEventRecord", "cudaStreamBeginCapture"):
        assert names[name]["cat"] == "cuda_api"
        assert names[name]["track_name"].startswith("CUDA API [pid 945961 ")
    assert names["cudaGraphInstantiate"]["cat"] == "cuda_api"
    assert dict(res.summary)["CUDA API calls"] == want.total() == 33


def test_devices_without_target_info_gpu_are_named_by_id(converted):
    """nsysai: no TARGET_INFO_GPU; two processes on two H100s; the GPU-side
    sync rows (all exported with deviceId 0) go to each context's device."""
    _res, events, slices = converted(NEWER / "nsysai_h100_2gpu_1s" / "nsysai_h100_2gpu_1s.sqlite")
    assert _process_names(events) == ["Device 0: GPU 0", "Device 1: GPU 1"]
    sync_tracks = {(s["device_id"], s["track_name"]) for s in slices if s["cat"] == "gpu_sync"}
    assert sync_tracks == {(0, "CUDA Sync [pid 111 ctx 1]"), (1, "CUDA Sync [pid 112 ctx 2]")}


def test_idle_gpus_of_target_info_are_not_drawn(converted):
    """fuser_h100x8: eight H100s listed out of id order, work on device 0
    (the other Perfetto process is the host process of its OS runtime calls)."""
    _res, events, _ = converted(NEWER / "fuser_h100x8_2024_6" / "fuser_h100x8_2024_6.sqlite")
    names = _process_names(events)
    assert [n for n in names if n.startswith("Device ")] == ["Device 0: NVIDIA H100 80GB HBM3"]
    assert sorted(names) == ["./bin/test_matmul [3410277]", "Device 0: NVIDIA H100 80GB HBM3"]


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_one_stream_track_per_process_context_and_stream(path, converted):
    """greenContextId is NULL on some tables and 0 on others in these exports:
    either way one track per (process, context, stream) of the GPU tables
    (unified-memory migrations, with no stream, go to Unified Memory)."""
    _res, _events, slices = converted(path)
    t = Tables(path)
    keys = set()
    for table in (
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET",
        "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
    ):
        if table not in t.names:
            continue
        um = (
            (
                "copyKind IN (11, 12, 13) AND streamId = 0 AND contextId = 0 "
                "AND coalesce(correlationId, 0) = 0"
            )
            if table.endswith("MEMCPY")
            else "0"
        )
        keys |= set(
            t.con.execute(
                f"SELECT DISTINCT deviceId, (globalPid >> 24) & 16777215, contextId, streamId "
                f'FROM "{table}" WHERE NOT ({um})'
            ).fetchall()
        )
    ours = {
        (s["device_id"], s["os_pid"], s["context_id"], s["stream_id"])
        for s in slices
        if s["cat"] in ("kernel", "memcpy", "memset", "cuda_graph")
        and s["track_name"].startswith("Stream ")
    }
    assert ours == keys
    tracks = {
        (s["pid"], s["track_name"].split(" #")[0])
        for s in slices
        if s["track_name"].startswith("Stream ")
    }
    assert len(tracks) == len(keys)


# --- NVIDIA's own reports on the same files (nsys stats, the ground truth) ----


def _nsys_stats(tmp_path, path: Path, report: str) -> list[dict] | None:
    """Run ``nsys stats --report REPORT`` (the installed nsys, 2023.4 here) on a
    copy of the export; its CSV rows, or None when the report wrote nothing
    (2023.4's reports need tables some newer exports lack)."""
    import shutil
    import subprocess

    from test_nvtx import read_nsys_csv

    from nsys_duck.errors import NsysNotFoundError
    from nsys_duck.nsys import find_nsys

    try:
        nsys = find_nsys()
    except NsysNotFoundError:
        pytest.skip("no nsys installed (make test installs Debian's nsight-systems)")
    copy = tmp_path / path.name
    shutil.copyfile(path, copy)
    subprocess.run(
        [
            str(nsys.path),
            "stats",
            "--report",
            report,
            "--format",
            "csv",
            "--output",
            str(tmp_path / "out"),
            str(copy),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    csv = tmp_path / f"out_{report}.csv"
    if not csv.exists() or csv.stat().st_size == 0:
        return None
    return read_nsys_csv(csv)


@pytest.mark.nsys
@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_gpu_rows_equal_nsight_cuda_gpu_trace(tmp_path, path, converted):
    """Every kernel, memcpy and memset NVIDIA's cuda_gpu_trace lists is drawn
    as executed with the same start (+ session start), duration, correlation
    id and stream, and nothing else (memcpy/memset names equal too)."""
    rows = _nsys_stats(tmp_path, path, "cuda_gpu_trace")
    if rows is None:
        pytest.skip(
            "nsys 2023.4's cuda_gpu_trace writes nothing for this export "
            "(it joins TARGET_INFO_GPU, which the export lacks)"
        )
    _res, _events, slices = converted(path)
    epoch = Tables(path).epoch()
    want = Counter(
        (
            int(r["Start (ns)"]) + epoch,
            int(r["Duration (ns)"]),
            int(r["CorrId"]),
            int(r["Strm"]),
            r["Name"] if r["Name"].startswith("[CUDA") else "kernel",
        )
        for r in rows
    )
    got = Counter(
        (
            s["start_ns"],
            s["dur_ns"],
            s["correlation_id"] or 0,
            s["stream_id"],
            s["name"] if s["cat"] != "kernel" else "kernel",
        )
        for s in slices
        if s["cat"] in ("kernel", "memcpy", "memset")
    )
    assert sum(want.values()) == sum(got.values()) > 0
    assert got == want, (list((want - got).items())[:3], list((got - want).items())[:3])


@pytest.mark.nsys
@pytest.mark.parametrize(
    "path",
    [p for p in FILES if "nvtx" in p.stem or "fuser" in p.stem or "nsysai" in p.stem],
    ids=lambda p: p.stem,
)
def test_projection_equals_nsight_nvtx_gpu_proj_trace(tmp_path, path, converted):
    """NVTX ranges projected onto the GPU = NVIDIA's nvtx_gpu_proj_trace on
    the same file, to the ns (times + session start), with its NumGPUOps."""
    rows = _nsys_stats(tmp_path, path, "nvtx_gpu_proj_trace")
    if rows is None:
        pytest.skip("nsys 2023.4's nvtx_gpu_proj_trace writes nothing for this export")
    _res, _events, slices = converted(path)
    epoch = Tables(path).epoch()
    want = Counter(
        (
            int(r["TID"]),
            int(r["Orig Start (ns)"]) + epoch,
            int(r["Orig Duration (ns)"]),
            int(r["Projected Start (ns)"]) + epoch,
            int(r["Projected Duration (ns)"]),
            int(r["NumGPUOps"]),
        )
        for r in rows
        if r["RangeId"] != ""
    )
    ranges = {s["nvtx_id"]: s for s in slices if s["cat"] == "nvtx"}
    spans: dict[int, list[int]] = {}
    for s in slices:
        if s["cat"] == "nvtx_kernel":
            lo_hi = spans.setdefault(s["nvtx_id"], [s["start_ns"], s["end_ns"]])
            lo_hi[0], lo_hi[1] = min(lo_hi[0], s["start_ns"]), max(lo_hi[1], s["end_ns"])
    calls: dict[int, set] = {}
    for s in slices:
        for nid in s["nvtx_ids"] or []:
            calls.setdefault(nid, set()).add((s["os_pid"], s["correlation_id"]))
    got = Counter(
        (
            ranges[n]["os_tid"],
            ranges[n]["start_ns"],
            ranges[n]["dur_ns"],
            lo,
            hi - lo,
            len(calls[n]),
        )
        for n, (lo, hi) in spans.items()
    )
    assert sum(want.values()) > 0
    assert got == want, (list((want - got).items())[:3], list((got - want).items())[:3])


SYNC_CALL = re.compile(
    r"^(cudaDeviceSynchronize|cudaThreadSynchronize|cudaStreamSynchronize"
    r"|cuCtxSynchronize|cuStreamSynchronize)(_pt(sz|ds))?(_v[0-9]{4,})?$"
)


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_primary_rows_are_each_export_row_once(path, converted):
    """``WHERE is_primary`` gives each drawn row of the export exactly once:
    kernels, graph executions (flameox), copies, memsets, GPU-side syncs,
    timed CUDA event records, NVTX rows and every API call (synchronization
    calls as cuda_sync; two processes on two GPUs in nsysai), never a
    Core/PCIe/D2D copy or an NVTX projection, and no event twice."""
    _res, _events, slices = converted(path)
    assert contract.primary_problems(slices) == []
    t = Tables(path)
    drawable = 'start IS NOT NULL AND "end" >= start AND deviceId >= 0'

    def keys(table: str) -> set:
        if table not in t.names:
            return set()
        return set(
            t.con.execute(
                f'SELECT globalPid >> 24, correlationId FROM "{table}" '
                f"WHERE {drawable} AND correlationId <> 0"
            ).fetchall()
        )

    gpu = set().union(
        *(keys(f"CUPTI_ACTIVITY_KIND_{k}") for k in ("KERNEL", "MEMCPY", "MEMSET", "GRAPH_TRACE"))
    )
    sync = keys("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION")
    calls = (
        t.con.execute("""
        SELECT r.globalTid >> 24, r.correlationId, s.value
        FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r LEFT JOIN StringIds AS s ON s.id = r.nameId
        WHERE r.eventClass IN (0, 1) AND r.start IS NOT NULL AND r."end" >= r.start
            AND r.globalTid IS NOT NULL""").fetchall()
        if "CUPTI_ACTIVITY_KIND_RUNTIME" in t.names
        else []
    )
    # every call is drawn: cuda_sync when it synchronizes without GPU work
    syncs = sum(
        1
        for pk, corr, api in calls
        if (pk, corr) not in gpu and ((pk, corr) in sync or SYNC_CALL.match(api or ""))
    )
    want = Counter(
        {
            "kernel": t.count("CUPTI_ACTIVITY_KIND_KERNEL", drawable),
            "cuda_graph": t.count("CUPTI_ACTIVITY_KIND_GRAPH_TRACE", drawable),
            "memcpy": t.count("CUPTI_ACTIVITY_KIND_MEMCPY", drawable),
            "memset": t.count("CUPTI_ACTIVITY_KIND_MEMSET", drawable),
            "gpu_sync": t.count("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", drawable),
            "cuda_event": t.count(
                "CUPTI_ACTIVITY_KIND_CUDA_EVENT", "coalesce(timestamp, 0) <> 0 AND deviceId >= 0"
            ),
            "cuda_api": len(calls) - syncs,
            "cuda_sync": syncs,
            # the CPU side (test_cpu_side_rows_equal_the_export_tables)
            "osrt": t.count("OSRT_API"),
            "thread_state": t.count("SCHED_EVENTS")
            - (
                t.con.execute("SELECT count(DISTINCT globalTid) FROM SCHED_EVENTS").fetchone()[0]
                if "SCHED_EVENTS" in t.names
                else 0
            ),
            "nvtx": t.count(
                "NVTX_EVENTS",
                """start IS NOT NULL AND globalTid IS NOT NULL
            AND (eventType = 34 OR (eventType IN (59, 60, 70, 71)
                AND coalesce("end", start) >= start))""",
            ),
        }
    )
    assert Counter(s["cat"] for s in slices if s["is_primary"]) == +want


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_cpu_side_rows_equal_the_export_tables(path, converted):
    """OSRT_API rows are OS runtime slices, one primary each with its exact
    times; SCHED_EVENTS (isSchedIn an INTEGER in SQLite) give rows - threads
    Thread State slices, 'Running' exactly after each sched-in."""
    res, _, slices = converted(path)
    t = Tables(path)
    epoch = t.epoch()
    summary = dict(res.summary)
    osrt = (
        t.con.execute('SELECT start, "end", globalTid & 16777215 FROM OSRT_API').fetchall()
        if "OSRT_API" in t.names
        else []
    )
    want = Counter((s + epoch, e + epoch, tid) for s, e, tid in osrt)
    got = Counter(
        (s["start_ns"], s["end_ns"], s["os_tid"])
        for s in slices
        if s["cat"] == "osrt" and s["is_primary"]
    )
    assert got == want
    assert summary.get("OS runtime calls", 0) == len(osrt)
    rows = t.count("SCHED_EVENTS")
    threads = (
        t.con.execute("SELECT count(DISTINCT globalTid) FROM SCHED_EVENTS").fetchone()[0]
        if rows
        else 0
    )
    states = [s for s in slices if s["cat"] == "thread_state" and s["is_primary"]]
    assert len(states) == rows - threads == summary.get("thread state slices", 0)
    running = t.count("SCHED_EVENTS", "isSchedIn <> 0") if rows else 0
    last_in = (
        t.con.execute(
            "SELECT count(*) FROM (SELECT isSchedIn, row_number() OVER (PARTITION BY globalTid "
            "ORDER BY start DESC, isSchedIn DESC) AS k FROM SCHED_EVENTS) WHERE k = 1 "
            "AND isSchedIn <> 0"
        ).fetchone()[0]
        if rows
        else 0
    )
    assert sum(1 for s in states if s["name"] == "Running") == running - last_in
