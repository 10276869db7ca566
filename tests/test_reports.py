"""The real pipeline on every dev report, checked against the output contract.

Expected counts come from Nsight's own tables (read here with DuckDB), never
from our outputs.
"""

from __future__ import annotations

import gzip
import zlib
from collections import Counter

import duckdb
import pyarrow.parquet as pq
import pytest

from conftest import REPORTS, check_dev_trace, report_ids
import contract

IDS = report_ids()


def nsight_count(name: str, table: str, where: str = "TRUE") -> int:
    path = REPORTS / name / "parquet" / f"{table}.parquet"
    if not path.exists():
        return 0
    return duckdb.execute(f"SELECT count(*) FROM read_parquet('{path}') WHERE {where}").fetchall()[0][0]


def test_reports_exist():
    assert len(IDS) >= 15, f"dev reports not found under {REPORTS}"


@pytest.mark.parametrize("name", IDS)
def test_counts_equal_nsight_tables(name, converted):
    res, events = converted(name)
    summary = dict(res.summary)
    kernels = nsight_count(name, "CUPTI_ACTIVITY_KIND_KERNEL")
    memcpys = nsight_count(name, "CUPTI_ACTIVITY_KIND_MEMCPY")
    memsets = nsight_count(name, "CUPTI_ACTIVITY_KIND_MEMSET")
    h2d = nsight_count(name, "CUPTI_ACTIVITY_KIND_MEMCPY", "copyKind IN (1, 3, 11)")
    d2h = nsight_count(name, "CUPTI_ACTIVITY_KIND_MEMCPY", "copyKind IN (2, 4, 12)")
    pushpop = nsight_count(name, "NVTX_EVENTS", "eventType IN (59, 70)")
    assert summary["kernels"] == kernels
    assert summary["memcpy H2D"] == h2d and summary["memcpy D2H"] == d2h
    assert (summary["memcpy H2D"] + summary["memcpy D2H"] + summary["memcpy D2D/peer"]
            + summary["memcpy other"]) == memcpys
    assert summary["memset"] == memsets
    assert summary["CPU NVTX ranges"] == pushpop

    cats = Counter(e.get("cat") for e in events if e["ph"] == "X")
    assert cats["kernel"] == kernels and cats["kernel_core"] == kernels
    assert cats["memcpy"] == memcpys and cats["memset"] == memsets
    assert cats["memcpy_pcie"] == h2d + d2h
    # every linked kernel: exactly one launch and one launch_core flow
    flows = Counter(e["cat"] for e in events if e["ph"] == "s")
    assert flows["launch"] == flows["launch_core"] == summary["stream launch flows"]
    assert flows["copy_pcie"] == summary["PCIe copy flows"]
    linked = nsight_count(name, "CUPTI_ACTIVITY_KIND_KERNEL",
                          "correlationId IN (SELECT correlationId FROM read_parquet('"
                          + str(REPORTS / name / "parquet" / "CUPTI_ACTIVITY_KIND_RUNTIME.parquet")
                          + "') WHERE eventClass IN (0, 1))") if kernels else 0
    assert flows["launch"] == linked
    assert summary["JSON events"] == len(events)
    # one Parquet row per X, per B/E pair, per async b/e pair and per instant
    n_be = sum(1 for e in events if e["ph"] in ("B", "b", "i"))
    assert summary["Parquet rows"] == cats.total() + n_be


@pytest.mark.parametrize("name", IDS)
def test_perfetto_imports_without_loss(name, converted):
    """Perfetto's own importer (trace_processor_shell) loads the trace with no
    error or data-loss stat, and counts the slices of our aligned Parquet and
    the flows of our JSON (tests/perfetto_import.py). This is where the dev
    traces of ``converted`` are checked, once each."""
    converted(name)
    check_dev_trace(name)


@pytest.mark.parametrize("name", IDS)
def test_gzip_single_member_json_array(name, converted):
    res, events = converted(name)
    data = res.workspace.json_gz.read_bytes()
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    text = d.decompress(data)
    assert d.eof and d.unused_data == b"", "exactly one gzip member"
    assert text.startswith(b"[\n{") and text.endswith(b"}\n]"), "nothing after ]"
    assert events and all(isinstance(e, dict) for e in events)
    assert b"\\ud8" not in text.lower() and b"\\u0000" not in text


@pytest.mark.parametrize("name", IDS)
def test_tracks_named_and_ids_in_range(name, converted):
    res, events = converted(name)
    assert contract.unnamed_tracks(events) == []
    assert contract.bad_ids(events) == []
    names = [e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"]
    assert not any("Device -1" in n for n in names)
    epochs = {e["args"]["epoch_ns"] for e in events
              if e["ph"] == "M" and e["name"] == "process_name"}
    assert epochs == {res.base_ns}


@pytest.mark.parametrize("name", IDS)
def test_no_partial_overlap_on_any_track(name, converted):
    res, _ = converted(name)
    slices = contract.slices_table(res.workspace.events_parquet)
    # start/end ranges ("b"/"e") live on Perfetto async tracks, which may overlap
    assert contract.partial_overlaps([s for s in slices if s["ph"] != "b"]) == []


@pytest.mark.parametrize("name", IDS)
def test_flows_inside_slices_and_monotonic(name, converted):
    res, events = converted(name)
    slices = contract.slices_table(res.workspace.events_parquet)
    assert contract.flow_problems(events, slices, res.base_ns) == []


@pytest.mark.parametrize("name", IDS)
def test_times_are_ns_exact(name, converted):
    """round(ts*1000) + base_ns gives back Nsight's integer ns for every slice."""
    res, events = converted(name)
    slices = contract.slices_table(res.workspace.events_parquet)
    want = Counter((s["pid"], s["tid"], s["start_ns"], s["end_ns"]) for s in slices
                   if s["cat"] not in ("nvtx", "nvtx_kernel"))
    got = Counter((e["pid"], e["tid"], contract.ns(e["ts"]) + res.base_ns,
                   contract.ns(e["ts"]) + contract.ns(e["dur"]) + res.base_ns)
                  for e in events if e["ph"] == "X" and e["cat"] not in ("nvtx", "nvtx_kernel"))
    assert got == want
    assert res.base_ns % 1_000_000_000 == 0
    assert all(contract.ns(e["ts"]) >= 0 for e in events if "ts" in e)
    # the Nsight kernel times themselves survive
    path = REPORTS / name / "parquet" / "CUPTI_ACTIVITY_KIND_KERNEL.parquet"
    if path.exists():
        nsight = Counter(zip(*pq.read_table(path, columns=["start", "end"]).to_pydict().values()))
        ours = Counter((contract.ns(e["ts"]) + res.base_ns,
                        contract.ns(e["ts"]) + contract.ns(e["dur"]) + res.base_ns)
                       for e in events if e["ph"] == "X" and e["cat"] == "kernel")
        assert ours == nsight


@pytest.mark.parametrize("name", IDS)
def test_kernel_dependencies_schema(name, converted):
    res, _ = converted(name)
    table = pq.read_table(res.workspace.kernel_dependencies)
    assert table.num_rows == 0
    assert "src_correlation_id" in table.schema.names
