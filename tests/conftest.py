"""Shared fixtures: the real dev reports, a builder for synthetic exports, and
Perfetto's real importer run on every trace the tests produce.

Perfetto import check: ``nsys_duck.convert.convert`` is wrapped below (before
any test module imports it), so every successful conversion is recorded: a
hard link to its trace as written (a later conversion into the same
workspace, or a test removing it, cannot change what is checked) and its
Parquet slice counts, and, when ``NAME.duckdb`` is beside it, the flows its
``int_flows`` means the trace to hold (``perfetto_flows.py``). When the test
ends, each recorded trace is loaded once with ``trace_processor_shell``
(``perfetto_import.py``) and the test errors at teardown if Perfetto reports
errors or data loss, counts other slices or flows than we wrote, or (with a
database) its ``flow`` table is not ``int_flows`` slice by slice: each arrow
from the CPU slice to the GPU slice it means. Traces written by the CLI in a subprocess are
recorded with :func:`register_trace`. Dev reports converted by the session
fixture ``converted`` are checked once, by
``test_reports.py::test_perfetto_imports_without_loss[NAME]`` (or, when that
test is not selected, after the test that converted them). A test that means
to produce a trace Perfetto rejects opts out with
``@pytest.mark.perfetto_unchecked("why")``. Without the binary the check is
skipped with a note (header and summary), unless
``NSYS_DUCK_REQUIRE_PERFETTO=1`` (CI), which makes it fail.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import perfetto_flows
import perfetto_pftrace
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import nsys_duck.convert
import perfetto_import

REPO = Path(__file__).resolve().parent.parent

# Every successful conversion is recorded for the Perfetto import check
# (register_trace, below). Patched here, before the test modules run
# `from nsys_duck.convert import convert`.
_real_convert = nsys_duck.convert.convert


@functools.wraps(_real_convert)
def _convert_and_record(*args, **kwargs):
    result = _real_convert(*args, **kwargs)
    opts = args[1] if len(args) > 1 else kwargs.get("opts")
    if result.workspace.json_gz in result.files and not (
        opts is not None and (opts.window or opts.devices)
    ):
        # a split trace or a selection (--window, --devices) holds part of
        # the Parquet's slices: tests/test_split.py checks those
        register_trace(result.workspace.json_gz, result.workspace.events_parquet)
    if result.workspace.pftrace in result.files and not (
        opts is not None and (opts.window or opts.devices)
    ):
        _check_pftrace(result.workspace)
    return result


def _check_pftrace(ws) -> None:
    """Every protobuf trace a test writes is loaded by Perfetto's importer:
    no error or data-loss stat, every slice of the Parquet, and every flow
    of the JSON when it is one file (test_pftrace.py compares the two
    imports in full)."""
    slices = perfetto_import.our_slices(ws.events_parquet).slices
    flows = perfetto_import.count_flow_starts(ws.json_gz) if ws.json_gz.is_file() else None
    problems = perfetto_pftrace.light_check(ws.pftrace, slices, flows)
    _STATS["pftraces"] += 1
    assert not problems, "Perfetto import check of the pftrace:\n  " + "\n  ".join(problems)


nsys_duck.convert.convert = convert = _convert_and_record
for _module in list(sys.modules.values()):  # e.g. nsys_duck.cli, if already imported
    if (
        getattr(_module, "__name__", "").startswith("nsys_duck.")
        and getattr(_module, "convert", None) is _real_convert
    ):
        _module.convert = _convert_and_record
Options = nsys_duck.convert.Options

from paths import NEWER, REPORTS  # noqa: E402  (one place for the shared data)


def pytest_sessionstart(session):
    """Stop at once, with one message, when the real reports are not there:
    the suite runs on them, and dozens of FileNotFoundErrors would hide why.
    The rule tier alone (``-m rules``, make test-fast) needs no data."""
    if session.config.getoption("markexpr", "") == "rules":
        return
    if not any(REPORTS.glob("*/parquet")) or not any(NEWER.glob("*/*.sqlite")):
        pytest.exit(
            f"the team's data is not at {REPORTS} and {NEWER}: clone nsys-duck "
            "beside the team's shared/ folder or set NSYS_DUCK_SHARED to that "
            "folder",
            returncode=4,
        )


# The rule tier (make test-fast): every test under tests/rules/ is marked
# `rules`; they run single views on a few given rows (tests/rules/sql_rules.py)
# and need neither the dev reports, nsys nor Perfetto. Each has a time limit
# of RULE_TIMEOUT_S (pytest-timeout), far above the second or two one takes:
# a rule test running longer has met a hang, not a slow machine. (Set here:
# a conftest.py in tests/rules/ would shadow this module, which the tests
# import as `conftest`.)
RULES_DIR = Path(__file__).resolve().parent / "rules"
RULE_TIMEOUT_S = 120


def pytest_collection_modifyitems(config, items):
    for item in items:
        if RULES_DIR in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.rules)
            if item.get_closest_marker("timeout") is None:
                item.add_marker(pytest.mark.timeout(RULE_TIMEOUT_S))


def report_exports() -> list[Path]:
    """Every dev report's Parquet export folder (``REPORTS/*/parquet``)."""
    return sorted(p for p in REPORTS.glob("*/parquet") if p.is_dir())


def report_ids() -> list[str]:
    return [p.parent.name for p in report_exports()]


@pytest.fixture(scope="session")
def converted(tmp_path_factory):
    """Convert every dev report once; name -> (Result, parsed JSON events)."""
    root = tmp_path_factory.mktemp("workspace")
    cache: dict[str, tuple] = {}

    def get(name: str):
        if name not in cache:
            with _session_conversion(name):
                res = convert(REPORTS / name / "parquet", Options(), root=root)
            with gzip.open(res.workspace.json_gz, "rb") as f:
                events = json.loads(f.read(), parse_float=Decimal)
            cache[name] = (res, events)
        return cache[name]

    return get


# --- Perfetto's importer on every produced trace (see the module docstring) ----


@dataclass
class _Trace:
    origin: Path  # where the trace was written
    snapshot: Path  # hard link (or copy) of it as written
    ours: perfetto_import.Ours  # its Parquet slices, read at once
    flows: Counter | None  # int_flows as the trace should hold them; None: no NAME.duckdb
    dev_name: str | None = None  # converted by the session fixture `converted`
    problems: list[str] | None = None  # None: not checked yet
    done: bool = False  # checked, or skipped/failed for a missing binary


_PENDING: list[_Trace] = []  # recorded, not yet checked or handed on
_DEV: dict[str, _Trace] = {}  # dev report -> its trace (session fixture)
_SESSION_NAME: list[str] = []  # set while `converted` converts NAME
_SNAPSHOTS: list[Path] = []  # the folder holding the snapshots
_STATS = {"checked": 0, "seconds": 0.0, "failed": 0, "skipped": 0, "flows": 0, "pftraces": 0}
_UNCHECKED: list[str] = []  # "test id: reason" of perfetto_unchecked tests
DIRECT_TEST = "test_perfetto_imports_without_loss"


def _snapshot_dir() -> Path:
    if not _SNAPSHOTS:
        _SNAPSHOTS.append(Path(tempfile.mkdtemp(prefix="nsys-duck-perfetto-")))
    return _SNAPSHOTS[0]


def register_trace(json_gz: Path, parquet: Path | None = None) -> None:
    """Record a trace the test produced (e.g. by the CLI in a subprocess) for
    the Perfetto import check at the end of the test."""
    json_gz = Path(json_gz)
    folder = Path(tempfile.mkdtemp(prefix=json_gz.parent.name[:40] + "-", dir=_snapshot_dir()))
    snapshot = folder / json_gz.name
    try:
        os.link(json_gz, snapshot)
    except OSError:  # another file system: copy
        shutil.copyfile(json_gz, snapshot)
    ours = perfetto_import.our_slices(parquet or perfetto_import.parquet_for(json_gz))
    database = perfetto_flows.duckdb_for(json_gz)
    flows = perfetto_flows.our_flows(database) if database.is_file() else None
    trace = _Trace(json_gz, snapshot, ours, flows, _SESSION_NAME[-1] if _SESSION_NAME else None)
    if trace.dev_name is not None:
        _DEV[trace.dev_name] = trace
    _PENDING.append(trace)


@contextmanager
def _session_conversion(name: str):
    _SESSION_NAME.append(name)
    try:
        yield
    finally:
        _SESSION_NAME.pop()


def _check(trace: _Trace) -> list[str]:
    """Import the trace once (cached on the record); [] = fine."""
    if trace.problems is None:
        problems, imported = perfetto_import.check(trace.snapshot, trace.ours)
        if imported is not None and trace.flows is not None:
            # Perfetto's flow table, slice by slice, is int_flows (contract: flows)
            theirs = perfetto_flows.flow_counter(imported.flow_rows)
            problems += perfetto_flows.compare(trace.flows, theirs)
            _STATS["flows"] += 1
        _STATS["checked"] += 1
        _STATS["seconds"] += imported.seconds if imported else 0.0
        if problems:
            _STATS["failed"] += 1
            problems.append(f"(the trace as checked: {trace.snapshot}; written as {trace.origin})")
        else:
            shutil.rmtree(trace.snapshot.parent, ignore_errors=True)
        trace.problems = problems
        trace.done = True
    return trace.problems


def _report(traces: list[_Trace]) -> str:
    return "\n\n".join(
        f"Perfetto import check of {t.origin.name}:\n  " + "\n  ".join(t.problems) for t in traces
    )


def check_dev_trace(name: str) -> None:
    """The import check of dev report NAME as converted by ``converted``."""
    trace = _DEV[name]
    if perfetto_import.find_binary() is None:
        trace.done = True
        if perfetto_import.required():
            pytest.fail(perfetto_import.missing_message(), pytrace=False)
        pytest.skip(perfetto_import.missing_message())
    if _check(trace):
        pytest.fail(_report([trace]), pytrace=False)


def _direct_tests(session) -> set[str]:
    """Dev reports whose test_perfetto_imports_without_loss[NAME] is selected."""
    if not hasattr(session, "_nsys_duck_direct"):
        session._nsys_duck_direct = {
            item.callspec.params["name"]
            for item in session.items
            if getattr(item, "originalname", None) == DIRECT_TEST and hasattr(item, "callspec")
        }
    return session._nsys_duck_direct


@pytest.fixture(scope="session", autouse=True)
def _perfetto_snapshots(tmp_path_factory):
    """Snapshots live under pytest's base temp (kept for failing traces)."""
    if not _SNAPSHOTS:
        _SNAPSHOTS.append(tmp_path_factory.mktemp("perfetto-import"))


@pytest.fixture(autouse=True)
def _perfetto_import_check(request):
    """After each test: load every trace it produced with Perfetto's importer."""
    yield
    direct = _direct_tests(request.session)
    todo = []
    for trace in _PENDING:
        if trace.done:
            continue  # by test_perfetto_imports_without_loss
        if trace.dev_name in direct and DIRECT_TEST not in request.node.name:
            continue  # test_perfetto_imports_without_loss[NAME] will check it
        todo.append(trace)
    _PENDING.clear()
    if not todo:
        return
    marker = request.node.get_closest_marker("perfetto_unchecked")
    if marker is not None or perfetto_import.find_binary() is None:
        for trace in todo:
            shutil.rmtree(trace.snapshot.parent, ignore_errors=True)
    if marker is not None:
        reason = (marker.args[0] if marker.args else marker.kwargs.get("reason")) or ""
        if not reason.strip():
            pytest.fail("@pytest.mark.perfetto_unchecked needs a reason", pytrace=False)
        _UNCHECKED.append(f"{request.node.nodeid}: {reason}")
        return
    if perfetto_import.find_binary() is None:
        if perfetto_import.required():
            pytest.fail(perfetto_import.missing_message(), pytrace=False)
        _STATS["skipped"] += len(todo)
        return
    failed = [t for t in todo if _check(t)]
    if failed:
        pytest.fail(_report(failed), pytrace=False)


def pytest_report_header(config):
    binary = perfetto_import.find_binary()
    if binary is None:
        return f"perfetto import check: {perfetto_import.missing_message()}"
    return f"perfetto import check: {binary} ({perfetto_import.version(binary)})"


# pytest-xdist (make test runs the suite on -n workers): each worker checks
# the traces its own tests write; at its end it hands its counts and
# perfetto_unchecked lines to the controller, which prints their sums below.
def pytest_sessionfinish(session):
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker
        workeroutput["nsys_duck_perfetto"] = {"stats": _STATS, "unchecked": _UNCHECKED}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    handed = getattr(node, "workeroutput", {}).get("nsys_duck_perfetto")
    if handed:
        for key, value in handed["stats"].items():
            _STATS[key] += value
        _UNCHECKED.extend(handed["unchecked"])


def pytest_terminal_summary(terminalreporter):
    s = _STATS
    if s["checked"]:
        terminalreporter.write_line(
            f"perfetto import check: {s['checked']} traces loaded by trace_processor_shell "
            f"in {s['seconds']:.1f} s, {s['failed']} with problems; the flow table of "
            f"{s['flows']} compared with int_flows slice by slice (the others have no NAME.duckdb)"
        )
    if s["pftraces"]:
        terminalreporter.write_line(
            f"perfetto import check: {s['pftraces']} protobuf traces (NAME.pftrace) loaded, "
            "each with every slice of its Parquet and every flow of its JSON"
        )
    if s["skipped"]:
        terminalreporter.write_line(
            f"perfetto import check SKIPPED ({s['skipped']} traces not "
            f"loaded): {perfetto_import.missing_message()}"
        )
    for line in _UNCHECKED:
        terminalreporter.write_line(f"perfetto import check not run (perfetto_unchecked): {line}")


# --- synthetic exports -------------------------------------------------------

_TYPES = {
    "StringIds": {"id": pa.int32(), "value": pa.string()},
    "CUPTI_ACTIVITY_KIND_KERNEL": {
        "start": pa.int64(),
        "end": pa.int64(),
        "deviceId": pa.int64(),
        "contextId": pa.uint64(),
        "streamId": pa.uint64(),
        "correlationId": pa.int64(),
        "globalPid": pa.uint64(),
        "demangledName": pa.uint64(),
        "shortName": pa.uint64(),
        "registersPerThread": pa.int64(),
        "gridX": pa.int32(),
        "gridY": pa.int32(),
        "gridZ": pa.int32(),
        "blockX": pa.int32(),
        "blockY": pa.int32(),
        "blockZ": pa.int32(),
        "staticSharedMemory": pa.int32(),
        "dynamicSharedMemory": pa.int32(),
        "graphNodeId": pa.uint64(),
        "greenContextId": pa.uint64(),
        # schema 3.23+ columns: no public Parquet export shows their types;
        # those of the stand-ins (sql/10_sources/nsys_tables.sql)
        "graphId": pa.uint64(),
        "clusterX": pa.int64(),
        "clusterY": pa.int64(),
        "clusterZ": pa.int64(),
    },
    "CUPTI_ACTIVITY_KIND_MEMCPY": {
        "start": pa.int64(),
        "end": pa.int64(),
        "deviceId": pa.int64(),
        "contextId": pa.uint64(),
        "streamId": pa.uint64(),
        "correlationId": pa.int64(),
        "globalPid": pa.uint64(),
        "bytes": pa.uint64(),
        "copyKind": pa.uint64(),
        # copyCount: schema 3.17.2+; no public Parquet export shows its type
        # (newer nsys), so it has the stand-in's (sql/10_sources) type
        "copyCount": pa.int64(),
    },
    # 2023.4.4's own Parquet types (a real export of the dev set)
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION": {
        "start": pa.int64(),
        "end": pa.int64(),
        "deviceId": pa.int64(),
        "contextId": pa.uint64(),
        "greenContextId": pa.uint64(),
        "streamId": pa.uint64(),
        "correlationId": pa.int64(),
        "globalPid": pa.uint64(),
        "syncType": pa.int64(),
        "eventId": pa.int64(),
    },
    # Tables 2023.4.4 never wrote as Parquet (schema 3.23+/3.24+): the types
    # an Nsight SQLite export of them is transcribed to (sql/10_sources)
    "CUPTI_ACTIVITY_KIND_GRAPH_TRACE": {
        "start": pa.int64(),
        "end": pa.int64(),
        "deviceId": pa.int64(),
        "contextId": pa.uint64(),
        "greenContextId": pa.uint64(),
        "streamId": pa.uint64(),
        "correlationId": pa.int64(),
        "globalPid": pa.uint64(),
        "graphId": pa.uint64(),
        "graphExecId": pa.uint64(),
    },
    "CUPTI_ACTIVITY_KIND_CUDA_EVENT": {
        "deviceId": pa.int64(),
        "contextId": pa.uint64(),
        "streamId": pa.uint64(),
        "correlationId": pa.int64(),
        "globalPid": pa.uint64(),
        "eventId": pa.int64(),
        "timestamp": pa.int64(),
        "eventSyncId": pa.uint64(),
    },
    "CUPTI_ACTIVITY_KIND_MEMSET": {
        "start": pa.int64(),
        "end": pa.int64(),
        "deviceId": pa.int64(),
        "contextId": pa.uint64(),
        "streamId": pa.uint64(),
        "correlationId": pa.int64(),
        "globalPid": pa.uint64(),
        "value": pa.int64(),
        "bytes": pa.uint64(),
    },
    "CUPTI_ACTIVITY_KIND_RUNTIME": {
        "start": pa.int64(),
        "end": pa.int64(),
        "eventClass": pa.int64(),
        "globalTid": pa.uint64(),
        "correlationId": pa.int64(),
        "nameId": pa.uint64(),
        "returnValue": pa.int64(),
        "callchainId": pa.int64(),
    },
    "NVTX_EVENTS": {
        "start": pa.int64(),
        "end": pa.int64(),
        "eventType": pa.int64(),
        "rangeId": pa.uint64(),
        "category": pa.uint64(),
        "color": pa.int64(),
        "text": pa.string(),
        "globalTid": pa.uint64(),
        "endGlobalTid": pa.uint64(),
        "textId": pa.int64(),
        "domainId": pa.uint64(),
    },
    # the CPU side, as nsys 2023.4's Parquet export types them
    "OSRT_API": {
        "start": pa.int64(),
        "end": pa.int64(),
        "eventClass": pa.int64(),
        "globalTid": pa.uint64(),
        "nameId": pa.uint64(),
        "returnValue": pa.int64(),
        "nestingLevel": pa.int64(),
        "callchainId": pa.int64(),
    },
    "CUDNN_EVENTS": {
        "start": pa.int64(),
        "end": pa.int64(),
        "eventClass": pa.int64(),
        "globalTid": pa.uint64(),
        "nameId": pa.uint64(),
    },
    "CUBLAS_EVENTS": {
        "start": pa.int64(),
        "end": pa.int64(),
        "eventClass": pa.int64(),
        "globalTid": pa.uint64(),
        "nameId": pa.uint64(),
    },
    "SCHED_EVENTS": {
        "start": pa.int64(),
        "cpu": pa.int64(),
        "isSchedIn": pa.bool_(),
        "globalTid": pa.uint64(),
    },
    "TARGET_INFO_GPU": {"id": pa.int64(), "name": pa.string()},
    "TARGET_INFO_SESSION_START_TIME": {"utcEpochNs": pa.uint64()},
    "META_DATA_EXPORT": {"name": pa.string(), "value": pa.string()},
}

EPOCH = 1_700_000_000_000_000_000


def gtid(pid: int, tid: int | None = None) -> int:
    """Nsight's serialized globalTid/globalPid (VM id 1, as real exports have)."""
    return (1 << 48) | (pid << 24) | (tid if tid is not None else 0)


def make_export(folder: Path, tables: dict[str, list[dict]]) -> Path:
    """Write a synthetic Nsight Parquet export with the real column types.

    ``tables`` maps table name -> rows (dicts; absent columns are NULL).
    StringIds, META_DATA_EXPORT and the session start are added if absent.
    """
    folder.mkdir(parents=True, exist_ok=True)
    tables = dict(tables)
    tables.setdefault(
        "META_DATA_EXPORT", [{"name": "EXPORT_PRODUCT_VERSION", "value": "synthetic"}]
    )
    tables.setdefault("TARGET_INFO_SESSION_START_TIME", [{"utcEpochNs": EPOCH}])
    tables.setdefault("StringIds", [])
    for name, rows in tables.items():
        types = _TYPES[name]
        cols = {c: pa.array([r.get(c) for r in rows], t) for c, t in types.items()}
        pq.write_table(pa.table(cols), folder / f"{name}.parquet")
    return folder


def load_events(result) -> list[dict]:
    with gzip.open(result.workspace.json_gz, "rb") as f:
        return json.loads(f.read(), parse_float=Decimal)
