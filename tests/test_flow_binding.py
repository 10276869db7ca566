"""Every arrow on the slice it means, in Perfetto's own flow table.

Perfetto binds a flow end to the top of its thread's stack and orients each
flow from the slice that starts first (perfetto-json.md 3.3; FlowTracker),
so what a user sees can differ from what the pipeline meant with no stat.
Each test loads the trace with ``trace_processor_shell`` and compares its
flow table, flow by flow and direction included, with ``int_flows`` of the
saved ``NAME.duckdb`` (``perfetto_flows.flow_mismatches``): on real dev
reports, on a newer SQLite export, and on synthetic exports (Nsight's types,
``conftest.make_export``) holding each edge case the real ones lack.
"""

from __future__ import annotations

import perfetto_flows
import pytest
from test_synthetic import STRINGS, api, kernel

import perfetto_import
from conftest import Options, convert, make_export
from nsys_duck import checks
from paths import NEWER

SKEWED = "flows not drawn (GPU work starts before its call: Perfetto would draw them GPU -> CPU)"


def memcpy(start, end, corr, pid, stream, kind=1):
    """A CUPTI_ACTIVITY_KIND_MEMCPY row (kind 1: HtoD, drawn on PCIe Usage too)."""
    row = kernel(start, end, corr, pid, stream=stream)
    keep = ("start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid")
    return {**{k: row[k] for k in keep}, "bytes": 4096, "copyKind": kind}


# (GPU rows, runtime rows) of each edge case; times in ns after the epoch;
# a GPU row with "copyKind" is a memcpy
CASES = {
    # a 0-ns kernel on stream 8 starts where a kernel of stream 7 starts:
    # both go to the device's CUDA Core Timeline
    "zero_ns_core_shares_a_start": (
        [kernel(1000, 2000, 1, 100, stream=7), kernel(1000, 1000, 2, 100, stream=8, name=3)],
        [api(100, 300, 1, 100, 101), api(400, 600, 2, 100, 101)],
    ),
    # on one stream, a 0-ns kernel then a kernel starting at the same ns
    "zero_ns_then_kernel_on_a_stream": (
        [kernel(1000, 1000, 1, 100, stream=7), kernel(1000, 2000, 2, 100, stream=7, name=3)],
        [api(100, 300, 1, 100, 101), api(400, 600, 2, 100, 101)],
    ),
    # two 0-ns kernels at one ns on one stream (and on the Core Timeline)
    "two_zero_ns_kernels_at_one_ns": (
        [kernel(1000, 1000, 1, 100, stream=7), kernel(1000, 1000, 2, 100, stream=7, name=3)],
        [api(100, 300, 1, 100, 101), api(400, 600, 2, 100, 101)],
    ),
    # a 0-ns H2D copy on stream 8 starts where one of stream 7 starts: both
    # go to the device's PCIe Usage track (copy and copy_pcie flows)
    "zero_ns_copy_shares_a_pcie_start": (
        [memcpy(1000, 2000, 1, 100, stream=7), memcpy(1000, 1000, 2, 100, stream=8)],
        [api(100, 300, 1, 100, 101), api(400, 600, 2, 100, 101)],
    ),
    # a kernel starting in the ns its call starts: s and f share a ts
    "kernel_starts_with_its_call": (
        [kernel(1000, 2000, 1, 100)],
        [api(1000, 3000, 1, 100, 101)],
    ),
}
# clock skew: the kernel's CUPTI start lies before its call's start
SKEW = {
    "skew_kernel_overlaps_the_call": (
        [kernel(1000, 2000, 1, 100)],
        [api(1500, 3000, 1, 100, 101)],
    ),
    "skew_kernel_wholly_before_the_call": (
        [kernel(1000, 2000, 1, 100)],
        [api(2500, 3000, 1, 100, 101)],
    ),
}


def convert_case(tmp_path, gpu, calls, **options):
    tables = {
        "StringIds": STRINGS,
        "CUPTI_ACTIVITY_KIND_KERNEL": [r for r in gpu if "copyKind" not in r],
        "CUPTI_ACTIVITY_KIND_MEMCPY": [r for r in gpu if "copyKind" in r],
        "CUPTI_ACTIVITY_KIND_RUNTIME": calls,
    }
    export = make_export(tmp_path / "synthetic" / "parquet", tables)
    return convert(export, Options(**options), root=tmp_path / "ws")


@pytest.mark.parametrize("case", sorted(CASES))
def test_perfetto_binds_each_flow_to_its_slices(tmp_path, case):
    gpu, calls = CASES[case]
    res = convert_case(tmp_path, gpu, calls)
    trace = res.workspace.json_gz
    ours = perfetto_flows.our_flows(perfetto_flows.duckdb_for(trace))
    # every linked kernel: launch and launch_core flows; every linked H2D
    # copy: copy and copy_pcie flows; all drawn
    assert sum(ours.values()) == 2 * len(gpu)
    assert perfetto_flows.flow_mismatches(trace) == []


@pytest.mark.parametrize("case", sorted(SKEW))
def test_skewed_flows_are_counted_and_left_out(tmp_path, case):
    """Perfetto orients a flow from the slice starting first: a kernel that
    starts before its call would be drawn GPU -> CPU whatever the s and f
    times, so its two flows are left out and counted in the summary."""
    gpu, calls = SKEW[case]
    res = convert_case(tmp_path, gpu, calls)
    summary = dict(res.summary)
    assert summary[SKEWED] == 2
    assert summary.get("stream launch flows", 0) == 0
    assert perfetto_flows.perfetto_flows(res.workspace.json_gz) == {}
    assert perfetto_flows.flow_mismatches(res.workspace.json_gz) == []


@pytest.mark.parametrize("name", ["abacus_many_kernels", "raiderstream_tiny", "memfusion_nvtx_d2d"])
def test_dev_report_flows_are_perfettos(name, converted):
    res, _events = converted(name)
    trace = res.workspace.json_gz
    assert sum(perfetto_flows.our_flows(perfetto_flows.duckdb_for(trace)).values()) > 0
    assert perfetto_flows.flow_mismatches(trace) == []


def test_newer_export_flows_are_perfettos(tmp_path):
    """flameox: CUDA graph launches (graph-level trace) and kernels."""
    sqlite = NEWER / "flameox_graph_trace_2025_5" / "flameox_graph_trace_2025_5.sqlite"
    res = convert(sqlite, Options(), root=tmp_path / "ws")
    trace = res.workspace.json_gz
    assert sum(perfetto_flows.our_flows(perfetto_flows.duckdb_for(trace)).values()) > 0
    assert perfetto_flows.flow_mismatches(trace) == []


# --- our own check catches what Perfetto would misdraw -----------------------

# the lanes as they were: no slice leaves lane 1 for sharing a start
SHARED_START_LANES = """-- test stage: slices sharing a start stay in one lane
CREATE OR REPLACE TABLE _test_lanes AS
SELECT lanes.* FROM int_slice_lanes AS lanes
JOIN int_slices AS s USING (slice_id)
WHERE s.end_ns > s.start_ns;
CREATE OR REPLACE TABLE int_slice_lanes AS SELECT * FROM _test_lanes;
"""

# the flows as they were: drawn whenever the GPU slice does not end first
SKEWED_FLOWS = """-- test stage: skewed flows drawn
CREATE OR REPLACE TABLE _test_flows AS
SELECT * REPLACE (f_ns >= api_start_ns AS is_placeable) FROM int_flows;
CREATE OR REPLACE TABLE int_flows AS SELECT * FROM _test_flows;
"""


def _stage(tmp_path, rel: str, text: str):
    sql = tmp_path / "my-sql"
    (sql / rel).parent.mkdir(parents=True, exist_ok=True)
    (sql / rel).write_text(text)
    return sql


@pytest.mark.parametrize("case", ["zero_ns_core_shares_a_start", "zero_ns_then_kernel_on_a_stream"])
def test_check_flow_targets_refuses_a_zero_ns_slice_under_a_flow_end(tmp_path, case):
    sql = _stage(tmp_path, "30_intermediate/50_tracks/12_test_lanes.sql", SHARED_START_LANES)
    gpu, calls = CASES[case]
    with pytest.raises(
        checks.CheckFailed,
        match=r"check_flow_targets.*is bound by Perfetto to another slice",
    ):
        convert_case(tmp_path, gpu, calls, sql_dir=sql)


def test_check_flow_targets_refuses_a_flow_drawn_gpu_to_cpu(tmp_path):
    sql = _stage(tmp_path, "30_intermediate/50_tracks/60_test_flows.sql", SKEWED_FLOWS)
    gpu, calls = SKEW["skew_kernel_overlaps_the_call"]
    with pytest.raises(checks.CheckFailed, match=r"check_flow_targets.*GPU -> CPU"):
        convert_case(tmp_path, gpu, calls, sql_dir=sql)


# --- the suite's import check (conftest) fails on a misbound arrow --------------


@pytest.mark.perfetto_unchecked("writes, on purpose, a trace whose arrows Perfetto misbinds")
@pytest.mark.parametrize("case", ["zero_ns_core_shares_a_start", "zero_ns_then_kernel_on_a_stream"])
def test_the_import_check_finds_an_arrow_on_another_slice(tmp_path, case):
    """The lanes as they were, checks off: Perfetto binds a launch arrow to
    the 0-ns kernel's neighbour, and the comparison every imported trace
    gets (perfetto_flows.compare on the importer's flow rows) says which."""
    sql = _stage(tmp_path, "30_intermediate/50_tracks/12_test_lanes.sql", SHARED_START_LANES)
    gpu, calls = CASES[case]
    res = convert_case(tmp_path, gpu, calls, sql_dir=sql, validate=False)
    trace = res.workspace.json_gz
    ours = perfetto_flows.our_flows(perfetto_flows.duckdb_for(trace))
    theirs = perfetto_flows.flow_counter(perfetto_import.run(trace).flow_rows)
    problems = perfetto_flows.compare(ours, theirs)
    assert problems and "are not in Perfetto's flow table" in problems[0], problems
    assert any("not drawn" in line or "GPU -> CPU" in line for line in problems[1:]), problems
