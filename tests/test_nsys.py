"""The report path through a real ``nsys export`` (skipped where no nsys is installed)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPORTS, register_trace
from nsys_duck.convert import Options, convert
from nsys_duck.errors import NsysDuckError, NsysNotFoundError
from nsys_duck.nsys import find_nsys


def _nsys_or_skip():
    try:
        return find_nsys()
    except NsysNotFoundError:
        pytest.skip("no nsys installed (make test installs Debian's nsight-systems)")


@pytest.mark.nsys
def test_report_through_nsys_export_matches_shipped_export(tmp_path):
    nsys = _nsys_or_skip()
    report = REPORTS / "threebody_2023_3" / "threebody_2023_3.nsys-rep"
    src = tmp_path / "in" / report.name
    src.parent.mkdir()
    shutil.copy2(report, src)
    before = src.read_bytes()
    via_nsys = convert(src, Options(), root=tmp_path / "a")
    via_parquet = convert(REPORTS / "threebody_2023_3" / "parquet", Options(), root=tmp_path / "b")
    assert via_nsys.nsys_version == nsys.version and not via_nsys.export_reused
    assert via_nsys.workspace.dir == tmp_path / "a" / "threebody_2023_3"
    assert (via_nsys.workspace.parquet_dir / "CUPTI_ACTIVITY_KIND_KERNEL.parquet").exists()
    assert dict(via_nsys.summary) == dict(via_parquet.summary)
    assert src.read_bytes() == before, "the source report is never modified"
    assert sorted(p.name for p in src.parent.iterdir()) == [report.name]
    # second run reuses the export, --force re-exports
    again = convert(src, Options(), root=tmp_path / "a")
    assert again.export_reused and again.nsys_version is None
    forced = convert(src, Options(force=True), root=tmp_path / "a")
    assert not forced.export_reused and forced.nsys_version == nsys.version


@pytest.mark.nsys
def test_qdrep_through_cli(tmp_path):
    _nsys_or_skip()
    report = REPORTS / "raiderstream_tiny" / "raiderstream_tiny.qdrep"
    env = dict(os.environ, NSYS_WORKSPACE_ROOT=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-m", "nsys_duck.cli", "convert", str(report)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    last = out.stdout.strip().splitlines()[-1]
    assert last == str(tmp_path / "raiderstream_tiny" / "raiderstream_tiny.perfetto.json.gz")
    assert "nsys: 20" in out.stdout
    register_trace(last)


def test_no_nsys_gives_one_sentence(tmp_path):
    report = REPORTS / "threebody_2023_3" / "threebody_2023_3.nsys-rep"
    env = dict(os.environ, NSYS_WORKSPACE_ROOT=str(tmp_path), PATH=os.path.dirname(sys.executable))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "nsys_duck.cli",
            "convert",
            str(report),
            "--nsys",
            str(tmp_path / "no-such-nsys"),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 1
    assert "nsys was not found" in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_one_failure_does_not_stop_the_rest(tmp_path):
    env = dict(os.environ, NSYS_WORKSPACE_ROOT=str(tmp_path))
    good = REPORTS / "raiderstream_tiny" / "parquet"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "nsys_duck.cli",
            "convert",
            str(tmp_path / "missing.nsys-rep"),
            str(good),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 1
    assert "no such file or directory" in out.stderr
    assert (tmp_path / "raiderstream_tiny" / "raiderstream_tiny.perfetto.json.gz").exists()
    register_trace(tmp_path / "raiderstream_tiny" / "raiderstream_tiny.perfetto.json.gz")


def test_not_an_export_folder(tmp_path):
    with pytest.raises(NsysDuckError, match="not an Nsight Parquet export"):
        convert(tmp_path, Options(), root=tmp_path / "ws")
