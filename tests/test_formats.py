"""The trace formats are records (nsys_duck/formats.py): a format added as
one record and its writer is written, summarised, listed in the manifest,
published and removed again by a later run that does not write it, with no
other module changed. The format here is a real writer over a real view
(``trace_slices``: one line per slice) of a real conversion.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil

import pytest

from conftest import REPO, Options, convert
from nsys_duck import formats
from nsys_duck.errors import InputError
from nsys_duck.serve import NotConvertedError, resolve_trace
from nsys_duck.summary import print_summary, trace_path

EXAMPLE = REPO / "examples" / "raiderstream_tiny" / "parquet"


def _write_slice_list(con, ws, tmps, say):
    """A text file of one slice per line (name, start ns, duration ns), in trace order."""
    (tmp,) = tmps
    query = "SELECT name, start_ns, dur_ns FROM trace_slices ORDER BY start_ns, name"
    rows = con.execute(query).fetchall()
    tmp.write_text("".join(f"{n}\t{start}\t{dur}\n" for n, start, dur in rows))
    return formats.Wrote([("slice list lines", len(rows))])


SLICE_LIST = formats.TraceFormat(
    name="slicelist",
    help="slicelist (NAME.slices.tsv)",
    doing="writing the slice list",
    timing="write slice list",
    folder=False,
    targets=lambda con, ws: [ws.dir / f"{ws.name}.slices.tsv"],
    left=lambda ws: [p for p in (ws.dir / f"{ws.name}.slices.tsv",) if p.exists()],
    write=_write_slice_list,
    opens=None,
    endings=(),
    content_type="text/tab-separated-values",
)


@pytest.fixture
def with_slice_list(monkeypatch):
    """formats.FORMATS with the slice list added (and --format slicelist)."""
    monkeypatch.setattr(formats, "FORMATS", (*formats.FORMATS, SLICE_LIST))
    monkeypatch.setattr(formats, "CHOICES", {**formats.CHOICES, SLICE_LIST.name: (SLICE_LIST,)})
    return SLICE_LIST


def test_a_format_added_as_a_record_is_written_listed_and_replaced(with_slice_list, tmp_path):
    res = convert(EXAMPLE, Options(trace_format="slicelist"), root=tmp_path)
    ws = res.workspace
    listing = ws.dir / f"{ws.name}.slices.tsv"
    lines = listing.read_text().splitlines()
    summary = dict(res.summary)
    assert len(lines) == summary["slice list lines"] == summary["Parquet rows"] > 0
    assert listing in res.files and not ws.json_gz.exists() and not ws.pftrace.exists()
    manifest = json.loads((ws.dir / "nsys-duck.json").read_text())["conversion"]["files"]
    assert manifest[listing.name] == listing.stat().st_size
    # not a trace Perfetto opens: open says there is none rather than serve it
    with pytest.raises(NotConvertedError):
        resolve_trace(str(ws.dir))

    again = convert(EXAMPLE, Options(trace_format="pftrace"), root=tmp_path)
    assert again.workspace == ws
    assert not listing.exists()  # an earlier run's format: it would disagree
    assert resolve_trace(str(ws.dir)) == ws.pftrace.resolve()
    assert ws.pftrace in again.files and listing not in again.files
    with pytest.raises(InputError, match=r"not split \(one file, .*\.pftrace\)"):
        resolve_trace(str(ws.dir), part=1)


def test_a_name_with_part_in_it_is_no_split_trace(tmp_path):
    """A report named like a part (run.part-007) converted to the pftrace
    alone: no JSON, so no "--part K" hint, and the last line is the pftrace."""
    copy = tmp_path / "run.part-007"
    shutil.copytree(EXAMPLE, copy)
    res = convert(copy, Options(trace_format="pftrace"), root=tmp_path / "ws")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_summary(res, timings=False)
    lines = out.getvalue().splitlines()
    assert not any("--part K" in line for line in lines)
    assert lines[-1] == str(res.workspace.pftrace.resolve())


def test_open_and_the_summary_prefer_the_one_file_trace(tmp_path):
    res = convert(EXAMPLE, Options(trace_format="both"), root=tmp_path)
    ws = res.workspace
    assert [f.name for f in formats.OPENED] == ["pftrace", "perfetto"]
    assert resolve_trace(str(ws.dir)) == ws.pftrace.resolve()
    assert resolve_trace(str(ws.dir), part=None) == formats.opened_trace(ws).resolve()
    assert formats.format_of(ws.json_gz) is formats.PERFETTO
    assert formats.format_of(ws.pftrace) is formats.PFTRACE
    assert formats.format_of(ws.events_parquet) is None
    assert trace_path(res.files, ws) == ws.pftrace  # the summary's last line
    assert formats.KINETO.left(ws) == [ws.kineto_dir] and not formats.kineto_only(ws)
    ranks = sorted(ws.kineto_dir.glob("rank*.json.gz"))
    assert ranks and all(r in res.files for r in ranks)
