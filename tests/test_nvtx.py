"""NVTX on the GPU (issue 3): projection, NVTX kinds, scopes, B/E lanes.

* The projection of every NVTX range is compared, to the ns, with Nsight's own
  ``nsys stats --report nvtx_gpu_proj_trace`` (tests/data/oracle, see its
  README for the rule) on the dev reports that have NVTX and GPU work.
* cpu_nvtx_small: the four NVTX kinds (push/pop, start/end, marks, domains)
  with their exact names.
* --nvtx-scope process differs from thread only by calls of other threads.
* Synthetic exports (schemas copied from real exports) for CUDA graphs,
  ranges whose kernels are launched by another thread, and lanes.

Everything is read back from the output files (aligned Parquet and JSON).
"""

from __future__ import annotations

import csv
import gzip
import json
import re
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import contract
from conftest import REPORTS
from nsys_duck import lanes
from nsys_duck.convert import Options, convert

ORACLE = Path(__file__).resolve().parent / "data" / "oracle"
GPU_NVTX = [
    "pytorch_nvtx_profiling",
    "memfusion_nvtx_d2d",
    "llmc_t4_no_kernel_table",
    "diffevo_nvtx_startend",
    "keras_darknet53_nvtx_startend",
]
OPS = ("kernel", "memcpy", "memset")


# --- helpers -----------------------------------------------------------------


class Run:
    """One conversion read back: aligned Parquet rows and JSON events."""

    def __init__(self, result):
        self.result = result
        self.slices = pq.read_table(result.workspace.events_parquet).to_pylist()
        with gzip.open(result.workspace.json_gz, "rb") as f:
            self.events = json.loads(f.read(), parse_float=Decimal)
        self.summary = dict(result.summary)

    def ranges(self) -> dict[int, dict]:
        """nvtx_id -> the CPU range (os_tid, start_ns, end_ns, name, ph)."""
        out = {}
        for s in self.slices:
            if s["cat"] == "nvtx" and s["ph"] in ("B", "X", "b"):
                out[s["nvtx_id"]] = s
        return out

    def projections(self) -> dict[int, tuple[int, int]]:
        """nvtx_id -> (projected start, end) over all devices."""
        out: dict[int, tuple[int, int]] = {}
        for s in self.slices:
            if s["cat"] == "nvtx_kernel":
                lo, hi = out.get(s["nvtx_id"], (s["start_ns"], s["end_ns"]))
                out[s["nvtx_id"]] = (min(lo, s["start_ns"]), max(hi, s["end_ns"]))
        return out

    def ops(self) -> list[dict]:
        return [s for s in self.slices if s["cat"] in OPS]

    def api_calls(self) -> dict[tuple[int, int], dict]:
        """(os_pid, correlationId) -> its CUDA API slice (one per call)."""
        return {
            (s["os_pid"], s["correlation_id"]): s for s in self.slices if s["cat"] == "cuda_api"
        }


def run_export(export: Path, root: Path, scope: str = "thread") -> Run:
    return Run(convert(export, Options(nvtx_scope=scope), root=root))


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """(name, scope) -> Run, each converted once per module."""
    cache: dict[tuple[str, str], Run] = {}

    def get(name: str, scope: str = "thread") -> Run:
        if (name, scope) not in cache:
            root = tmp_path_factory.mktemp(f"{name}-{scope}")
            cache[(name, scope)] = run_export(REPORTS / name / "parquet", root, scope)
        return cache[(name, scope)]

    return get


def read_nsys_csv(path: Path, record_start: str | None = None) -> list[dict]:
    """nsys's CSV (fields with a comma quoted, newlines raw; see oracle README).

    Physical lines are joined until the record has the header's field count,
    or, with ``record_start`` (a regex), until the next line starts a record
    (needed when a name with a newline appears twice, as in NameTree).
    """
    data = (
        gzip.open(path, "rt", encoding="utf-8").read()
        if path.suffix == ".gz"
        else path.read_text(encoding="utf-8")
    )
    lines = data.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    header = next(csv.reader([lines[0]]))
    records: list[str] = []
    for line in lines[1:]:
        if record_start is not None:
            if re.match(record_start, line) or not records:
                records.append(line)
            else:
                records[-1] += "\ue000" + line
            continue
        if records and len(next(csv.reader([records[-1]]))) < len(header):
            records[-1] += "\ue000" + line
        else:
            records.append(line)
    rows = []
    for rec in records:
        fields = next(csv.reader([rec]))
        assert len(fields) == len(header), rec[:200]
        rows.append(dict(zip(header, (x.replace("\ue000", "\n") for x in fields), strict=True)))
    return rows


def oracle_file(name: str, report_name: str) -> Path:
    for ext in (".csv", ".csv.gz"):
        p = ORACLE / f"{name}.{report_name}{ext}"
        if p.exists():
            return p
    pytest.fail(f"no oracle {name}.{report_name}")


def nsight(name: str, query: str) -> list[tuple]:
    """Run ``query`` with {T} = the report's Parquet folder."""
    folder = REPORTS / name / "parquet"
    return duckdb.execute(query.replace("{T}", str(folder))).fetchall()


def cross_thread_ranges(name: str) -> set[tuple[int, int, int]]:
    """(tid, start, end) of start/end ranges ended on another thread (Nsight drops them)."""
    if not (REPORTS / name / "parquet" / "NVTX_EVENTS.parquet").exists():
        return set()
    return set(
        nsight(
            name,
            'SELECT globalTid & 16777215, start, "end" '
            "FROM '{T}/NVTX_EVENTS.parquet' WHERE endGlobalTid IS NOT NULL",
        )
    )


def replay_stacks(events: list[dict]) -> list[str]:
    """Replay B/E per (pid, tid) and b/e per (pid, cat, id2.local) in ts order.

    Perfetto sorts by ts keeping file order at equal ts; every E must close
    the innermost open B with the same name, every e its own b. Returns
    problems (empty = fine).
    """
    problems = []
    stacks: dict[tuple, list[str]] = defaultdict(list)
    open_async: dict[tuple, str] = {}
    order = sorted(range(len(events)), key=lambda i: Decimal(events[i].get("ts", 0)))
    for i in order:
        e = events[i]
        if e["ph"] == "B":
            stacks[(e["pid"], e["tid"])].append(e["name"])
        elif e["ph"] == "E":
            st = stacks[(e["pid"], e["tid"])]
            if not st or st[-1] != e["name"]:
                problems.append(f"E {e['name']!r} at {e['ts']} closes {st[-1:]!r}")
            else:
                st.pop()
        elif e["ph"] in ("b", "e"):
            key = (e["pid"], e["cat"], e["id2"]["local"])
            if e["ph"] == "b":
                if key in open_async:
                    problems.append(f"b {key} twice")
                open_async[key] = e["name"]
            elif open_async.pop(key, None) != e["name"]:
                problems.append(f"e {key} without its b")
    problems += [f"unclosed {k}: {v}" for k, v in stacks.items() if v]
    problems += [f"unclosed async {k}" for k in open_async]
    return problems[:10]


def thread_overlaps(run: Run) -> list[str]:
    """Partial overlaps on thread tracks (async b/e pairs live on async tracks)."""
    return contract.partial_overlaps([s for s in run.slices if s["ph"] != "b"])


# --- Nsight oracle -----------------------------------------------------------


@pytest.mark.parametrize("name", GPU_NVTX)
def test_projection_equals_nsight_nvtx_gpu_proj_trace(name, report):
    """Every range's projection = Nsight's, to the ns, and the same ranges."""
    run = report(name)
    oracle = [
        r for r in read_nsys_csv(oracle_file(name, "nvtx_gpu_proj_trace")) if r["RangeId"] != ""
    ]
    want = Counter(
        (
            int(r["TID"]),
            int(r["Orig Start (ns)"]),
            int(r["Orig Duration (ns)"]),
            int(r["Projected Start (ns)"]),
            int(r["Projected Duration (ns)"]),
            int(r["NumGPUOps"]),
        )
        for r in oracle
    )

    ranges, proj = run.ranges(), run.projections()
    calls = defaultdict(set)  # nvtx_id -> distinct launching calls
    for op in run.ops():
        for nid in op["nvtx_ids"]:
            calls[nid].add((op["os_pid"], op["correlation_id"]))
    dropped = cross_thread_ranges(name)
    got = Counter()
    for nid, (start, end) in proj.items():
        r = ranges[nid]
        if (r["os_tid"], r["start_ns"], r["end_ns"]) in dropped:
            continue
        got[
            (
                r["os_tid"],
                r["start_ns"],
                r["end_ns"] - r["start_ns"],
                start,
                end - start,
                len(calls[nid]),
            )
        ] += 1
    assert sum(want.values()) > 0
    assert got == want, (
        f"{sum((want - got).values())} oracle rows missing, "
        f"{sum((got - want).values())} extra: "
        f"{list((want - got).items())[:3]} / {list((got - want).items())[:3]}"
    )
    assert run.summary["projected NVTX ranges"] == len(proj)


@pytest.mark.parametrize("name", GPU_NVTX)
def test_ops_in_no_range_equal_nsight_no_range_row(name, report):
    """The oracle's "no range" row = the launched ops whose nvtx_ids is empty."""
    run = report(name)
    row = [r for r in read_nsys_csv(oracle_file(name, "nvtx_gpu_proj_trace")) if r["RangeId"] == ""]
    calls = run.api_calls()
    free = [
        op
        for op in run.ops()
        if not op["nvtx_ids"] and (op["os_pid"], op["correlation_id"]) in calls
    ]
    if not row:
        assert free == []
        return
    (row,) = row
    start = min(op["start_ns"] for op in free)
    assert (
        start,
        max(op["end_ns"] for op in free) - start,
        len({(op["os_pid"], op["correlation_id"]) for op in free}),
    ) == (
        int(row["Projected Start (ns)"]),
        int(row["Projected Duration (ns)"]),
        int(row["NumGPUOps"]),
    )


@pytest.mark.parametrize("name", GPU_NVTX)
def test_projected_stacks_nest_and_keep_cpu_parents(name, report):
    """NVTX Kernel B/E replay cleanly, no partial overlap on a track (lanes),
    and each projected slice's GPU parent is one of its CPU ancestors."""
    run = report(name)
    assert replay_stacks(run.events) == []
    assert thread_overlaps(run) == []
    ranges = run.ranges()
    by_track = defaultdict(list)
    for s in run.slices:
        if s["cat"] == "nvtx_kernel":
            by_track[(s["pid"], s["tid"])].append(s)
    checked = 0
    for items in by_track.values():
        # the JSON order: start, longer first, then CPU order (outer first)
        items.sort(
            key=lambda s: (
                s["start_ns"],
                -s["end_ns"],
                ranges[s["nvtx_id"]]["start_ns"],
                -ranges[s["nvtx_id"]]["end_ns"],
            )
        )
        stack: list[dict] = []
        for s in items:
            while (
                stack
                and stack[-1]["end_ns"] <= s["start_ns"]
                and not (stack[-1]["end_ns"] == s["start_ns"] == stack[-1]["start_ns"])
            ):
                stack.pop()
            if stack:
                parent, child = ranges[stack[-1]["nvtx_id"]], ranges[s["nvtx_id"]]
                assert parent["os_tid"] == child["os_tid"]
                assert (
                    parent["start_ns"] <= child["start_ns"] and child["end_ns"] <= parent["end_ns"]
                ), (parent["name"], child["name"])
                checked += 1
            stack.append(s)
    if name == "pytorch_nvtx_profiling":
        assert checked > 5000
        # test_outer and test project onto the same interval: outer opens first
        first = [e["name"] for e in run.events if e["ph"] == "B" and e["cat"] == "nvtx_kernel"][:2]
        assert first == ["test_outer", "test"]


def test_kernel_args_and_parquet_paths_outer_to_inner(report):
    run = report("pytorch_nvtx_profiling")
    ranges = run.ranges()
    kernels = [s for s in run.slices if s["cat"] == "kernel"]
    deep = max(kernels, key=lambda s: len(s["nvtx_ids"]))
    assert deep["nvtx_names"] == [ranges[i]["name"] for i in deep["nvtx_ids"]]
    assert deep["nvtx_names"][:2] == ["test_outer", "test"]
    assert deep["nvtx_names"][-1] == "ExecutorRunFusion::cuLaunchKernel"
    for outer, inner in zip(deep["nvtx_ids"], deep["nvtx_ids"][1:], strict=False):
        assert ranges[outer]["start_ns"] <= ranges[inner]["start_ns"]
        assert ranges[inner]["end_ns"] <= ranges[outer]["end_ns"]
    # the Core copy carries no list (each op is counted once per GROUP BY)
    assert all(s["nvtx_ids"] is None for s in run.slices if s["cat"] == "kernel_core")
    # JSON args of the same kernel: names, outer -> inner
    base = run.result.base_ns
    json_kernel = [
        e
        for e in run.events
        if e["ph"] == "X"
        and e["cat"] == "kernel"
        and contract.ns(e["ts"]) + base == deep["start_ns"]
    ]
    assert json_kernel[0]["args"]["nvtxRanges"] == deep["nvtx_names"]
    assert (
        sum(1 for s in kernels if s["nvtx_ids"])
        == run.summary["GPU ops owned by an NVTX range"]
        == 1000
    )


# --- NVTX kinds and names ----------------------------------------------------


def expected_nvtx(name: str) -> list[tuple]:
    """(eventType, tid, start, end, message) from Nsight's table (registered strings
    resolved; empty -> '[unnamed]')."""
    rows = nsight(
        name,
        """
        SELECT e.eventType, e.globalTid & 16777215, e.start, e."end",
               coalesce(s.value, e.text)
        FROM '{T}/NVTX_EVENTS.parquet' e
        LEFT JOIN '{T}/StringIds.parquet' s ON s.id = e.textId
        WHERE e.eventType IN (34, 59, 60)""",
    )
    return [
        (t, tid, start, end, (msg or "").replace("\0", "") or "[unnamed]")
        for t, tid, start, end, msg in rows
    ]


def test_cpu_nvtx_small_all_kinds_with_exact_names(report):
    run = report("cpu_nvtx_small")
    want = Counter(expected_nvtx("cpu_nvtx_small"))
    kind = {"B": 59, "X": 59, "b": 60, "i": 34}
    got = Counter(
        (
            kind[s["ph"]],
            s["os_tid"],
            s["start_ns"],
            None if s["ph"] == "i" else s["end_ns"],
            s["name"],
        )
        for s in run.slices
        if s["cat"] == "nvtx"
    )
    assert got == want
    assert Counter(t for t, *_ in want) == {59: 41, 60: 10, 34: 8}
    s = run.summary
    assert (s["CPU NVTX ranges"], s["NVTX start/end ranges"], s["NVTX marks"]) == (41, 10, 8)

    names = [e["name"] for e in run.events if e.get("cat") == "nvtx"]
    assert any(len(n) == 2000 and n.startswith("LONG2000:") for n in names)
    assert "unicode: café → 日本語 🚀🔥" in names
    assert 'name with "double quotes"' in names
    assert "main: end 🏁" in names
    assert names.count("[unnamed]") == 2 * 3  # B + E on each worker
    assert "tab\there and newline\nsecond line" in names

    # marks: thread instants; start/end: async b/e with a process-local id
    marks = [e for e in run.events if e["ph"] == "i"]
    assert len(marks) == 8 and all(e["s"] == "t" and "tid" in e for e in marks)
    async_ev = [e for e in run.events if e["ph"] in ("b", "e")]
    assert len(async_ev) == 20 and all(set(e["id2"]) == {"local"} for e in async_ev)
    assert replay_stacks(run.events) == []
    cross = [e for e in async_ev if e["ph"] == "b" and e["name"].startswith("cross-thread")]
    assert cross[0]["args"]["endTid"] == 23083 and cross[0]["args"]["rangeId"] == 2

    # domains and categories in args; several domains -> one track per domain
    reg = [e for e in run.events if e["ph"] == "B" and e["name"] == "registered: compute"]
    assert reg and all(
        e["args"]
        == {
            "domain": 'DomainA "quoted"',
            "category": 1,
            "categoryName": "cat-compute",
            "color": "#FF00FF00",
        }
        for e in reg
    )
    tracks = {
        e["args"]["name"] for e in run.events if e["ph"] == "M" and e["name"] == "thread_name"
    }
    assert "NVTX Thread [pid 23075 tid 23075 main]" in tracks
    assert {
        "NVTX Thread [pid 23075 tid 23081 worker-0] (default)",
        'NVTX Thread [pid 23075 tid 23081 worker-0] (DomainA "quoted")',
        "NVTX Thread [pid 23075 tid 23081 worker-0] (DomainB)",
    } <= tracks
    assert thread_overlaps(run) == []


def test_cpu_nvtx_small_names_equal_nsight_pushpop_trace(report):
    """Push/pop names (with domains, registered strings) as nvtx_pushpop_trace shows them."""
    run = report("cpu_nvtx_small")
    oracle = read_nsys_csv(
        oracle_file("cpu_nvtx_small", "nvtx_pushpop_trace"), record_start=r"^\d+,\d+,\d+,"
    )
    want = Counter(
        (int(r["TID"]), int(r["Start (ns)"]), int(r["End (ns)"]), r["Name"]) for r in oracle
    )
    domain = {}
    for e in run.events:
        if e["ph"] in ("B", "X") and e["cat"] == "nvtx":
            domain[e["name"]] = e["args"]["domain"]
    got = Counter()
    for s in run.ranges().values():
        if s["ph"] in ("B", "X"):
            d = domain[s["name"]]
            name = "" if s["name"] == "[unnamed]" else s["name"]
            got[
                (s["os_tid"], s["start_ns"], s["end_ns"], name if d == "default" else f"{d}:{name}")
            ] += 1
    assert got == want


# --- scopes ------------------------------------------------------------------


def ownership_pairs(run: Run, name: str, scope: str) -> tuple[set, set]:
    """(nvtx_id, op key) pairs: what the output says, and what the rule says.

    The rule is recomputed here with a plain join over the output's own
    ranges and CUDA API slices: own thread, call fully inside (inclusive);
    other threads of the process, call starting inside [start, end) - for
    every range under 'process', only for start/end ranges ended on another
    thread under 'thread'.
    """
    dropped = cross_thread_ranges(name)
    ranges = pa.Table.from_pylist(
        [
            {
                "nvtx_id": nid,
                "os_pid": r["os_pid"],
                "os_tid": r["os_tid"],
                "start_ns": r["start_ns"],
                "end_ns": r["end_ns"],
                "process_rule": scope == "process"
                or (r["os_tid"], r["start_ns"], r["end_ns"]) in dropped,
            }
            for nid, r in run.ranges().items()
        ]
    )
    calls = pa.Table.from_pylist(
        [
            {
                "os_pid": c["os_pid"],
                "correlation_id": c["correlation_id"],
                "os_tid": c["os_tid"],
                "start_ns": c["start_ns"],
                "end_ns": c["end_ns"],
            }
            for c in run.api_calls().values()
        ]
    )
    ops = pa.Table.from_pylist(
        [
            {
                "os_pid": o["os_pid"],
                "correlation_id": o["correlation_id"],
                "start_ns": o["start_ns"],
                "nvtx_ids": o["nvtx_ids"],
            }
            for o in run.ops()
        ]
    )
    con = duckdb.connect()
    for t, v in (("ranges", ranges), ("calls", calls), ("ops", ops)):
        con.register(t, v)
    got = set(
        con.execute("""
        SELECT unnest(nvtx_ids), os_pid, correlation_id, start_ns FROM ops""").fetchall()
    )
    want = set(
        con.execute("""
        SELECT r.nvtx_id, o.os_pid, o.correlation_id, o.start_ns
        FROM ranges r
        JOIN calls c ON c.os_pid = r.os_pid
        JOIN ops o ON o.os_pid = c.os_pid AND o.correlation_id = c.correlation_id
        WHERE (c.os_tid = r.os_tid AND r.start_ns <= c.start_ns
               AND c.end_ns <= r.end_ns)
           OR (r.process_rule AND c.os_tid <> r.os_tid
               AND r.start_ns <= c.start_ns AND c.start_ns < r.end_ns)""").fetchall()
    )
    return got, want


@pytest.mark.parametrize("name", GPU_NVTX)
def test_process_scope_differs_only_by_other_threads(name, report):
    """thread: own-thread calls fully inside the range; process adds exactly the
    calls of other threads of the process that start inside it."""
    thread, process = report(name, "thread"), report(name, "process")
    t_got, t_want = ownership_pairs(thread, name, "thread")
    p_got, p_want = ownership_pairs(process, name, "process")
    assert t_got == t_want
    assert p_got == p_want
    assert t_got <= p_got
    # every pair process scope adds comes from a call of another thread
    ranges, calls = thread.ranges(), thread.api_calls()
    for nid, pid, corr, _ in p_got - t_got:
        assert calls[(pid, corr)]["os_tid"] != ranges[nid]["os_tid"]
    t_proj, p_proj = thread.projections(), process.projections()
    for nid, (start, end) in t_proj.items():
        assert p_proj[nid][0] <= start and end <= p_proj[nid][1]
    extra = len(p_got - t_got)
    if name == "keras_darknet53_nvtx_startend":
        # kernels launched by TensorFlow's worker threads during "Forward:Model"
        assert extra > 4000
        assert (
            process.summary["GPU ops owned by an NVTX range"]
            > thread.summary["GPU ops owned by an NVTX range"]
        )
    if name in ("pytorch_nvtx_profiling", "memfusion_nvtx_d2d"):
        assert extra == 0 and t_proj == p_proj


# --- synthetic exports -------------------------------------------------------

EPOCH = 1_700_000_000_000_000_000
SCHEMA_FROM = {  # table -> a real export that has it (its schema is copied)
    "StringIds": "keras_darknet53_nvtx_startend",
    "CUPTI_ACTIVITY_KIND_KERNEL": "keras_darknet53_nvtx_startend",
    "CUPTI_ACTIVITY_KIND_RUNTIME": "keras_darknet53_nvtx_startend",
    "NVTX_EVENTS": "cpu_nvtx_small",
    "TARGET_INFO_SESSION_START_TIME": "pytorch_nvtx_profiling",
}


def gtid(pid: int, tid: int = 0) -> int:
    return (1 << 48) | (pid << 24) | tid


def build_export(folder: Path, tables: dict[str, list[dict]]) -> Path:
    """Write ``tables`` with the exact Parquet schema of a real export's tables
    (missing nullable columns NULL, missing required ones 0)."""
    folder.mkdir(parents=True, exist_ok=True)
    tables = {"TARGET_INFO_SESSION_START_TIME": [{"utcEpochNs": EPOCH}], **tables}
    for table, rows in tables.items():
        schema = pq.read_schema(REPORTS / SCHEMA_FROM[table] / "parquet" / f"{table}.parquet")
        schema = schema.remove_metadata()
        full = []
        for row in rows:
            r = dict(row)
            for f in schema:
                if f.name not in r:
                    r[f.name] = None if f.nullable else ("" if pa.types.is_string(f.type) else 0)
            full.append(r)
        pq.write_table(pa.Table.from_pylist(full, schema=schema), folder / f"{table}.parquet")
    return folder


STRINGS = [
    {"id": 1, "value": "cudaLaunchKernel_v7000"},
    {"id": 2, "value": "cudaGraphLaunch_v10000"},
    {"id": 3, "value": "cudaGraphLaunch"},
    {"id": 4, "value": "k"},
]


def kernel(start, end, corr, pid=100, node=None):
    return {
        "start": EPOCH + start,
        "end": EPOCH + end,
        "deviceId": 0,
        "contextId": 1,
        "streamId": 7,
        "correlationId": corr,
        "globalPid": gtid(pid),
        "shortName": 4,
        "demangledName": 4,
        "graphNodeId": node,
    }


def call(start, end, corr, pid, tid, name=1, event_class=0):
    return {
        "start": EPOCH + start,
        "end": EPOCH + end,
        "eventClass": event_class,
        "globalTid": gtid(pid, tid),
        "correlationId": corr,
        "nameId": name,
    }


def push(start, end, text, pid=100, tid=101):
    return {
        "start": EPOCH + start,
        "end": EPOCH + end,
        "eventType": 59,
        "text": text,
        "globalTid": gtid(pid, tid),
    }


def startend(start, end, text, pid, tid, end_tid=None, range_id=1):
    return {
        "start": EPOCH + start,
        "end": EPOCH + end,
        "eventType": 60,
        "text": text,
        "globalTid": gtid(pid, tid),
        "rangeId": range_id,
        "endGlobalTid": None if end_tid is None else gtid(pid, end_tid),
    }


def synthetic(tmp_path, tables, scope="thread") -> Run:
    export = build_export(tmp_path / "synthetic" / "parquet", tables)
    run = run_export(export, tmp_path / f"ws-{scope}", scope)
    assert replay_stacks(run.events) == []
    assert thread_overlaps(run) == []
    assert contract.unnamed_tracks(run.events) == []
    assert contract.bad_ids(run.events) == []
    return run


def rel(run: Run, name: str, cat: str = "nvtx_kernel") -> list[tuple[int, int]]:
    return sorted(
        (s["start_ns"] - EPOCH, s["end_ns"] - EPOCH)
        for s in run.slices
        if s["cat"] == cat and s["name"] == name
    )


def test_graph_launch_inside_range_counts_every_kernel(tmp_path):
    #  thread 101: R [0 ............................................ 5000]
    #                C [50 ........... 2000]
    #                   graph launch [100, 1500] (+ backtrace twin [90, 1510])
    #  GPU:                      k1 [1000,1200] k2 [1300,1500] k3 [1600,1800]
    run = synthetic(
        tmp_path,
        {
            "StringIds": STRINGS,
            "NVTX_EVENTS": [push(0, 5000, "R"), push(50, 2000, "C")],
            "CUPTI_ACTIVITY_KIND_RUNTIME": [
                call(100, 1500, 9, 100, 101, name=2),
                call(90, 1510, 9, 100, 101, name=3, event_class=67),
            ],
            "CUPTI_ACTIVITY_KIND_KERNEL": [
                kernel(1000 + 300 * i, 1200 + 300 * i, 9, node=i + 1) for i in range(3)
            ],
        },
    )
    assert rel(run, "R") == rel(run, "C") == [(1000, 1800)]
    proj = [e for e in run.events if e["ph"] == "B" and e["cat"] == "nvtx_kernel"]
    assert [e["name"] for e in proj] == ["R", "C"]  # outer opens first
    assert all(e["args"]["gpuOps"] == 3 and e["args"]["apiCalls"] == 1 for e in proj)
    ops = run.ops()
    assert len(ops) == 3 and all(s["nvtx_names"] == ["R", "C"] for s in ops)
    kernels = [e for e in run.events if e["ph"] == "X" and e["cat"] == "kernel"]
    assert len(kernels) == 3 and all(e["args"]["nvtxRanges"] == ["R", "C"] for e in kernels)
    # the Core copies carry the lighter set, without the path (int_gpu_op_args)
    cores = [e for e in run.events if e["ph"] == "X" and e["cat"] == "kernel_core"]
    assert len(cores) == 3 and not any("nvtxRanges" in e["args"] for e in cores)


def test_twin_rows_do_not_change_the_projection(tmp_path):
    """Nsight joins RUNTIME rows of every eventClass, nsys-duck only 0/1. A
    backtrace twin (67) spans its call or more, so a range containing the twin
    contains the call: here B contains the call but not its twin, and the
    owners are the same with and without the twin."""
    base = {
        "StringIds": STRINGS,
        "NVTX_EVENTS": [push(0, 1000, "A"), push(95, 400, "B")],
        "CUPTI_ACTIVITY_KIND_KERNEL": [kernel(500, 600, 1)],
    }
    plain = synthetic(
        tmp_path / "plain", {**base, "CUPTI_ACTIVITY_KIND_RUNTIME": [call(100, 300, 1, 100, 101)]}
    )
    twin = synthetic(
        tmp_path / "twin",
        {
            **base,
            "CUPTI_ACTIVITY_KIND_RUNTIME": [
                call(100, 300, 1, 100, 101),
                call(90, 310, 1, 100, 101, name=3, event_class=67),
            ],
        },
    )
    assert plain.projections() == twin.projections()
    assert [s["nvtx_names"] for s in twin.ops()] == [["A", "B"]]


def test_range_on_thread_a_kernels_launched_from_thread_b(tmp_path):
    #  pid 100, thread 101: range "A" [0, 10000]; start/end "S" [500, 1200] started
    #                       on 101, ended on 102; own launch k5 [9000, 10500]
    #                       crossing A's end
    #  pid 100, thread 102: k1 call [1000, 1100], k2 call [9990, 10100] (starts inside
    #                       A), k3 call [10000, 10100] (starts at A's end)
    #  pid 200, thread 201: k4 call [2000, 2100] (another process: never A's)
    tables = {
        "StringIds": STRINGS,
        "NVTX_EVENTS": [push(0, 10000, "A"), startend(500, 1200, "S", 100, 101, end_tid=102)],
        "CUPTI_ACTIVITY_KIND_RUNTIME": [
            call(1000, 1100, 1, 100, 102),
            call(9990, 10100, 2, 100, 102),
            call(10000, 10100, 3, 100, 102),
            call(2000, 2100, 4, 200, 201),
            call(9000, 10500, 5, 100, 101),
        ],
        "CUPTI_ACTIVITY_KIND_KERNEL": [
            kernel(1200, 1300, 1),
            kernel(10200, 10300, 2),
            kernel(10400, 10500, 3),
            kernel(2200, 2300, 4, pid=200),
            kernel(10600, 10700, 5),
        ],
    }
    thread = synthetic(tmp_path / "t", tables, "thread")
    process = synthetic(tmp_path / "p", tables, "process")
    # thread scope: A owns nothing (no own call fully inside); S ended on another
    # thread, so it always uses the process rule: it owns k1 (call starts inside)
    assert rel(thread, "A") == []
    assert rel(thread, "S") == rel(process, "S") == [(1200, 1300)]
    # process scope: A also owns k1 and k2 (thread 102 calls starting inside A)
    assert rel(process, "A") == [(1200, 10300)]
    names = {s["correlation_id"]: s["nvtx_names"] for s in process.ops()}
    assert names == {1: ["A", "S"], 2: ["A"], 3: [], 4: [], 5: []}
    assert {s["correlation_id"]: s["nvtx_names"] for s in thread.ops()} == {
        1: ["S"],
        2: [],
        3: [],
        4: [],
        5: [],
    }
    # the start/end range is drawn as an async pair, cat nvtx, under each home
    b = [e for e in thread.events if e["ph"] == "b"]
    assert len(b) == 1 and b[0]["cat"] == "nvtx" and b[0]["args"]["endTid"] == 102


def test_projected_siblings_that_interleave_get_a_lane(tmp_path):
    #  CPU thread 101: P [0 ............................................. 10000]
    #                   R1 [100 ........ 1000]  R2 [1100 ... 2000]
    #                    C1 [150 .. 350]
    #  calls:            k1 [200,300] k3 [400,500]  k2 [1200,1300]
    #  GPU:  k1 [1000,2000]  k2 [3000,6000]  k3 [4000,5000]
    #  projections: P [1000,6000], R1 [1000,5000], C1 [1000,2000], R2 [3000,6000]
    #  R1 and R2 overlap partially -> R2 goes to "NVTX Kernel [...] #2".
    run = synthetic(
        tmp_path,
        {
            "StringIds": STRINGS,
            "NVTX_EVENTS": [
                push(0, 10000, "P"),
                push(100, 1000, "R1"),
                push(150, 350, "C1"),
                push(1100, 2000, "R2"),
            ],
            "CUPTI_ACTIVITY_KIND_RUNTIME": [
                call(200, 300, 1, 100, 101),
                call(400, 500, 3, 100, 101),
                call(1200, 1300, 2, 100, 101),
            ],
            "CUPTI_ACTIVITY_KIND_KERNEL": [
                kernel(1000, 2000, 1),
                kernel(3000, 6000, 2),
                kernel(4000, 5000, 3),
            ],
        },
    )
    tracks = {s["name"]: s["track_name"] for s in run.slices if s["cat"] == "nvtx_kernel"}
    base = "NVTX Kernel [pid 100 tid 101]"
    assert tracks == {"P": base, "R1": base, "C1": base, "R2": base + " #2"}
    assert rel(run, "R1") == [(1000, 5000)] and rel(run, "R2") == [(3000, 6000)]
    assert rel(run, "P") == [(1000, 6000)] and rel(run, "C1") == [(1000, 2000)]


def test_nest_lanes_rule():
    import numpy as np

    #   a [0,100) b [10,50) c [20,30) d [40,60) e [60,70) f [0,100)
    starts = [0, 0, 10, 20, 40, 60]
    ends = [100, 100, 50, 30, 60, 70]
    out = np.zeros(6, dtype=np.int32)
    lanes.NestSweep().place(starts, ends, out)
    # equal intervals nest; d partially overlaps b -> lane 2; e after b ends -> lane 1
    assert out.tolist() == [1, 1, 1, 1, 2, 1]


def test_lanes_hook_in_batches_equals_whole(monkeypatch):
    """The lanes hook streams int_lane_clusters in batches; a track cut
    across batches keeps its sweep state, so any batch size gives the same
    lanes (here 1, 2 and 7 rows against all at once)."""
    import duckdb
    import numpy as np

    rng = np.random.default_rng(7)
    rows = []
    for track_no, rule in ((1, "nest"), (2, "disjoint"), (3, "nest")):
        starts = np.sort(rng.integers(0, 1000, 40))
        for i, st in enumerate(starts):
            end = int(st + rng.integers(1, 300))
            rows.append((track_no * 100 + i, track_no, int(st), end, end, rule, i))
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE int_lane_clusters (slice_id BIGINT, track_no BIGINT, start_ns BIGINT, "
        "end_ns BIGINT, lane_end_ns BIGINT, lane_rule VARCHAR, seq BIGINT)"
    )
    con.executemany("INSERT INTO int_lane_clusters VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    got = {}
    for size in (10**6, 1, 2, 7):
        monkeypatch.setattr(lanes, "BATCH_ROWS", size)
        lanes.assign_lanes(con)
        got[size] = con.execute(
            "SELECT slice_id, lane FROM _lane_assignments ORDER BY 1"
        ).fetchall()
    assert len(got[10**6]) == len(rows)
    assert max(lane for _, lane in got[10**6]) > 1  # the data does need lanes
    assert got[1] == got[10**6] and got[2] == got[10**6] and got[7] == got[10**6]


def test_unknown_scope_fails_loudly(tmp_path):
    from nsys_duck.errors import NsysDuckError

    export = build_export(
        tmp_path / "synthetic" / "parquet",
        {"StringIds": STRINGS, "NVTX_EVENTS": [push(0, 10, "A")]},
    )
    with pytest.raises(NsysDuckError, match="nvtx_scope"):
        convert(export, Options(nvtx_scope="device"), root=tmp_path / "ws")


def test_zero_length_ranges_and_marks(tmp_path):
    """A zero-length start/end range keeps b before e; zero-length push/pop is
    an X; a mark is an instant; all on the thread's NVTX Thread track."""
    run = synthetic(
        tmp_path,
        {
            "StringIds": STRINGS,
            "NVTX_EVENTS": [
                push(0, 1000, "outer"),
                push(500, 500, "zero"),
                startend(700, 700, "Z", 100, 101),
                {"start": EPOCH + 800, "eventType": 34, "text": "m", "globalTid": gtid(100, 101)},
            ],
            "CUPTI_ACTIVITY_KIND_RUNTIME": [call(100, 200, 1, 100, 101)],
            "CUPTI_ACTIVITY_KIND_KERNEL": [kernel(300, 400, 1)],
        },
    )
    phs = [(e["ph"], e["name"]) for e in run.events if e.get("cat") == "nvtx"]
    assert phs.index(("b", "Z")) < phs.index(("e", "Z"))
    assert ("X", "zero") in phs and ("i", "m") in phs
    tracks = {s["track_name"] for s in run.slices if s["cat"] == "nvtx"}
    assert tracks == {"NVTX Thread [pid 100 tid 101]"}


DOCS = Path(__file__).resolve().parent.parent / "docs" / "nvtx.md"
# a docs block: ```sql, its first line `-- nsys-duck sql NAME -c "..."` (and
# `(converted with --nvtx-scope process)` when so), then the output blocks
DOCS_QUERY = re.compile(
    r"```sql\n(-- nsys-duck sql (\S+) -c \"\.\.\.\"(?:  \(converted with --nvtx-scope (\w+)\))?"
    r"\n.*?)```(.*?)(?=```sql|\Z)",
    re.S,
)


def docs_queries() -> list[tuple[str, str, str, list[str]]]:
    """docs/nvtx.md's SQL blocks: (workspace name, --nvtx-scope, query, the
    output blocks after it: the first for that scope, a second for process)."""
    found = []
    for m in DOCS_QUERY.finditer(DOCS.read_text(encoding="utf-8")):
        outputs = re.findall(r"```\n(.*?)```", m.group(4), re.S)
        found.append((m.group(2), m.group(3) or "thread", m.group(1), outputs))
    return found


def test_docs_queries_are_run_as_the_docs_say():
    """Every SQL block of docs/nvtx.md says which workspace it runs on and
    reads the views of NAME.duckdb, not a relative NAME.perfetto.parquet
    (which `nsys-duck sql NAME -c` cannot find from another folder)."""
    text = DOCS.read_text(encoding="utf-8")
    assert len(docs_queries()) == text.count("```sql") == 4
    assert ".perfetto.parquet'" not in text
    assert all(outputs for *_, outputs in docs_queries())


@pytest.mark.parametrize(
    ("name", "scope", "query", "outputs"),
    docs_queries(),
    ids=[f"{n}-{i}" for i, (n, *_) in enumerate(docs_queries())],
)
def test_docs_tables_are_what_nsys_duck_sql_prints(report, name, scope, query, outputs):
    """docs/nvtx.md's tables are what `nsys-duck sql NAME -c QUERY` prints
    for the query above them, on a real conversion (a second table: with
    --nvtx-scope process; issue 13: the thread-scope table had the process
    scope's memset row)."""
    import subprocess
    import sys

    nsys_duck = Path(sys.executable).with_name("nsys-duck")
    for table, table_scope in zip(outputs, (scope, "process"), strict=False):
        ws = report(name, table_scope).result.workspace
        out = subprocess.run(
            [str(nsys_duck), "sql", str(ws.dir), "-c", query],
            capture_output=True,
            text=True,
            cwd=ws.dir.parent,  # not the workspace: the query must not need it
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == table.strip(), f"--nvtx-scope {table_scope}:\n{out.stdout}"
