"""Captures without kernels or without any GPU activity, on real reports:
the summary says so in one note line, and ``--format both|kineto`` still
writes the files the README promises (the Parquet and NAME.duckdb whatever
the format; the Perfetto trace when no Kineto trace can be written).

- llmc_t4_no_kernel_table: no kernel table, but copies and memsets (a
  Kineto rank);
- cpu_nvtx_small: NVTX ranges only, no GPU table at all (no Kineto rank:
  ``--format both`` and ``kineto`` used to fail and write nothing).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import perfetto_import
from nsys_duck.cli import main
from tests.paths import REPORTS

LLMC = REPORTS / "llmc_t4_no_kernel_table" / "parquet"
CPU_ONLY = REPORTS / "cpu_nvtx_small" / "parquet"
NO_KERNELS = (
    "note: this capture has no kernels (no CUPTI_ACTIVITY_KIND_KERNEL rows in the export): "
    "its GPU tracks hold only copies, memsets and synchronization"
)
NO_GPU = (
    "note: this capture has no GPU activity (no kernel, CUDA graph, memcpy or memset rows "
    "in the export): the trace holds the CPU side only"
)
NO_KINETO = (
    "note: no Kineto trace: no profiled process has GPU work (kernels, copies, memsets), "
    "and a Kineto trace holds one rank per such process; the Perfetto trace is written "
)


def convert_cli(src, out, *args):
    res = CliRunner().invoke(main, ["convert", str(src), "-o", str(out), *args])
    assert res.exit_code == 0, res.output
    return res


def published(out) -> set[str]:
    """The files the manifest lists for the last conversion."""
    manifest = json.loads((out / "nsys-duck.json").read_text())
    return set(manifest["conversion"]["files"])


@pytest.mark.parametrize("fmt", ["both", "kineto"])
def test_a_capture_without_kernels_says_so(fmt, tmp_path):
    """llmc's copies and memsets make a Kineto rank: the traces asked for,
    the Parquet and NAME.duckdb are written, and one note says the capture
    has no kernels."""
    out = tmp_path / "w"
    res = convert_cli(LLMC, out, "--format", fmt)
    lines = res.stdout.splitlines()
    assert lines.count(NO_KERNELS) == 1 and NO_GPU not in lines
    assert not any(line.startswith("note: no Kineto") for line in lines)
    name = "llmc_t4_no_kernel_table"
    assert (out / f"{name}.duckdb").is_file() and (out / f"{name}.perfetto.parquet").is_file()
    assert (out / f"{name}.kineto" / "rank0.json.gz").is_file()
    # --format kineto: the Kineto trace instead of the Perfetto one (README)
    assert (out / f"{name}.perfetto.json.gz").is_file() == (fmt == "both")


@pytest.mark.parametrize("fmt", ["both", "kineto"])
def test_a_capture_without_gpu_activity_still_writes_its_trace(fmt, tmp_path):
    """cpu_nvtx_small has no process with GPU work, so no Kineto rank:
    instead of failing with nothing written, the Perfetto trace, the Parquet
    and NAME.duckdb are written (and published in the manifest), and two
    notes say there is no GPU activity and why no Kineto trace."""
    out = tmp_path / "w"
    res = convert_cli(CPU_ONLY, out, "--format", fmt)
    lines = res.stdout.splitlines()
    also = "alone" if fmt == "both" else "instead"
    assert lines.count(NO_GPU) == 1 and lines.count(NO_KINETO + also) == 1
    assert NO_KERNELS not in lines
    name = "cpu_nvtx_small"
    trace = out / f"{name}.perfetto.json.gz"
    assert trace.is_file() and (out / f"{name}.duckdb").is_file()
    assert not (out / f"{name}.kineto").exists()
    assert {trace.name, f"{name}.duckdb", f"{name}.perfetto.parquet"} <= published(out)
    # the last line is the trace `open` serves: the one-file pftrace with both
    shown = out / f"{name}.pftrace" if fmt == "both" else trace
    assert lines[-1] == str(shown.resolve())
    if perfetto_import.find_binary() is not None:
        got = perfetto_import.query(
            trace, "SELECT count(*) AS n FROM slice WHERE category = 'nvtx'"
        )
        assert int(got[0]["n"]) > 0


def test_a_merge_without_gpu_activity_still_writes_its_trace(tmp_path):
    """merge --format both of a CPU-only report: the merged Perfetto trace
    and NAME.duckdb, no Kineto folder, and the two notes."""
    from nsys_duck.convert import Options
    from nsys_duck.merge import MergeOptions, merge

    res = merge(
        "job",
        [str(CPU_ONLY)],
        MergeOptions(convert=Options(database=True), trace_format="both"),
        root=tmp_path / "ws",
    )
    ws = res.workspace
    assert ws.json_gz.is_file() and ws.database.is_file() and not ws.kineto_dir.exists()
    assert NO_GPU.removeprefix("note: ") in res.notes
    assert NO_KINETO.removeprefix("note: ") + "alone" in res.notes
