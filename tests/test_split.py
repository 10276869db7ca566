"""Traces that open: the JSON split in time windows (--max-json-size), and
part of a capture (--window, --devices), on real reports, each part loaded
by Perfetto's own importer (trace_processor_shell)."""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path

import duckdb
import perfetto_flows
import pytest

import perfetto_import
from nsys_duck.cli import main
from nsys_duck.convert import Options, convert
from nsys_duck.errors import NsysDuckError
from nsys_duck.workspace import Workspace
from tests.paths import NEWER, REPORTS

RODINIA = REPORTS / "rodinia_gaussian_8k_kernels" / "parquet"
# its first event lies 0.83 s after the time base (JSON ts 0)
PYTORCH = REPORTS / "pytorch_nvtx_profiling" / "parquet"
KERAS = REPORTS / "keras_darknet53_nvtx_startend" / "parquet"
TWO_GPUS = NEWER / "nsysai_h100_2gpu_1s" / "nsysai_h100_2gpu_1s.sqlite"
LIMIT = 2_000_000  # bytes of JSON per part: rodinia's 15 MB make ~9 parts

QUERY = """
SELECT (SELECT count(*) FROM slice) AS slices,
       (SELECT count(*) FROM flow) AS flows,
       (SELECT count(*) FROM stats WHERE severity IN ('error', 'data_loss')
            AND value > 0) AS problems;
"""


def perfetto_counts(json_gz: Path, tmp_path: Path) -> tuple[int, int, int]:
    """(slices, flows, error/data_loss stats) as Perfetto's importer sees them."""
    binary = perfetto_import.find_binary()
    if binary is None:
        pytest.skip(perfetto_import.missing_message())
    q = tmp_path / "q.sql"
    q.write_text(QUERY)
    out = (
        subprocess.run(
            [str(binary), "-q", str(q), str(json_gz)], capture_output=True, text=True, check=True
        )
        .stdout.strip()
        .splitlines()
    )
    return tuple(int(v) for v in out[-1].split(","))


def events(json_gz: Path) -> list[dict]:
    with gzip.open(json_gz, "rt", encoding="utf-8") as f:
        return json.load(f)


def summary(res) -> dict[str, object]:
    return dict(res.summary)


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    """rodinia converted in one piece (the reference)."""
    out = tmp_path_factory.mktemp("whole")
    return convert(RODINIA, Options(output_dir=out / "r", database=False))


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    out = tmp_path_factory.mktemp("split")
    return convert(RODINIA, Options(output_dir=out / "r", max_json_bytes=LIMIT))


def test_a_trace_over_the_limit_is_written_in_parts_that_each_open(whole, split, tmp_path):
    ws = split.workspace
    parts = ws.json_parts
    assert len(parts) >= 3, parts
    assert not ws.json_gz.exists()  # no single file over the limit
    assert summary(split)["trace parts (JSON over --max-json-size)"] == len(parts)
    slices = flows = 0
    for k, part in enumerate(parts, start=1):
        with gzip.open(part, "rb") as f:
            assert len(f.read()) <= LIMIT, part.name
        s, fl, problems = perfetto_counts(part, tmp_path)
        assert problems == 0, part.name
        # each arrow of the part on the slices int_flows means
        assert perfetto_flows.flow_mismatches(part, ws.database, part=k) == [], part.name
        slices += s
        flows += fl
    whole_slices, whole_flows, problems = perfetto_counts(whole.workspace.json_gz, tmp_path)
    assert problems == 0
    # no slice is lost, cut or doubled; a flow is drawn in one part or counted
    assert slices == whole_slices == summary(whole)["slices"]
    across = summary(split).get("flows across two parts (not drawn)", 0)
    assert flows + across == whole_flows
    # the Parquet stays whole and equal
    parquet = split.workspace.events_parquet
    rows = duckdb.execute(f"SELECT count(*) FROM '{parquet}'").fetchall()[0][0]
    assert rows == summary(whole)["Parquet rows"]


def test_the_write_is_the_size_estimate(whole, split, tmp_path):
    """trace_parts holds what the writer measured: a part's file is its
    json_bytes less the flows across two parts it drops; no part is emptier
    than it must be (its next bucket would have taken it past the limit);
    a trace under the limit is measured to the byte."""
    con = duckdb.connect(str(split.workspace.database), read_only=True)
    try:
        parts = con.execute("SELECT part, json_bytes FROM trace_parts ORDER BY part").fetchall()
        first_buckets = con.execute(
            "SELECT part, min(size_bucket) FROM trace_events_parted WHERE part IS NOT NULL "
            "GROUP BY part ORDER BY part"
        ).fetchall()
        bucket_bytes = dict(
            con.execute("SELECT size_bucket, bytes FROM trace_json_sizes").fetchall()
        )
    finally:
        con.close()
    files = split.workspace.json_parts
    assert [k for k, _ in parts] == list(range(1, len(files) + 1))
    for (_, measured), part in zip(parts, files, strict=True):
        with gzip.open(part, "rb") as f:
            written = len(f.read())
        assert written <= measured <= LIMIT, part.name
        assert measured - written < 0.01 * measured, part.name  # only dropped flows
    for (k, measured), (k_next, first) in zip(parts, first_buckets[1:], strict=False):
        assert measured + bucket_bytes[first] > LIMIT, (k, k_next)
    whole_con = convert(RODINIA, Options(output_dir=tmp_path / "w"))
    con = duckdb.connect(str(whole_con.workspace.database), read_only=True)
    try:
        ((one, measured),) = con.execute("SELECT part, json_bytes FROM trace_parts").fetchall()
    finally:
        con.close()
    with gzip.open(whole_con.workspace.json_gz, "rb") as f:
        assert one == 1 and len(f.read()) == measured


def lines_of(path: Path) -> list[bytes]:
    """A JSON trace file's rows without their separator, sorted (rows
    without an ordering key come out of DuckDB in any order at threads > 1,
    and the last one has no comma)."""
    with gzip.open(path, "rb") as f:
        return sorted(line.removesuffix(b",") for line in f.read().splitlines())


def test_a_split_trace_is_formatted_once(split, tmp_path, monkeypatch):
    """Over the limit, the rows of the one-part attempt are routed to the
    parts (trace_bucket_parts), not formatted again: the writer runs the
    JSON trace's queries once, and each part holds the rows writing
    trace_events_parted by its part column gives, spooled files removed."""
    from nsys_duck import contract, writers

    runs = []
    queries = contract.writer_queries

    def counted(role, select, *files):
        runs.append(role)
        return queries(role, select, *files)

    monkeypatch.setattr(contract, "writer_queries", counted)
    again = convert(RODINIA, Options(output_dir=tmp_path / "r", max_json_bytes=LIMIT))
    monkeypatch.undo()
    assert runs.count("json-trace") == 1, runs
    parts = again.workspace.json_parts
    assert len(parts) == len(split.workspace.json_parts) >= 3
    assert sorted(p.name for p in again.workspace.dir.iterdir() if p.name.startswith(".")) == [
        ".nsys-duck.lock"
    ]
    con = duckdb.connect(str(again.workspace.database), read_only=True)
    try:
        by_part = [tmp_path / f"p{k}.json.gz" for k in range(1, len(parts) + 1)]
        writers.write_trace_json(con, by_part)
    finally:
        con.close()
    for spooled, direct in zip(parts, by_part, strict=True):
        assert lines_of(spooled) == lines_of(direct), spooled.name


def test_a_trace_over_the_limit_in_one_bucket_is_one_file(split, tmp_path):
    """A trace past the limit whose events all fall in one time bucket
    cannot be cut: it is written whole, as one file, from the spool (the
    grid of a real conversion's database narrowed to one bucket)."""
    import shutil

    from nsys_duck import formats, writers

    db = tmp_path / "one.duckdb"
    shutil.copy(split.workspace.database, db)
    con = duckdb.connect(str(db))
    try:
        con.execute("UPDATE trace_size_grid SET buckets = 1")
        con.execute("DELETE FROM trace_json_sizes")
        ws = Workspace(dir=tmp_path, name="one")
        tmp = writers.temp_path(ws.json_gz)
        said = []
        wrote = formats.PERFETTO.write(con, ws, [tmp], said.append)
        assert con.execute("SELECT count(*) FROM trace_parts").fetchall() == [(1,)]
        direct = tmp_path / "direct.json.gz"
        (stats,) = writers.write_trace_json(con, [direct])
    finally:
        con.close()
    assert wrote.instead == () and said == []
    assert dict(wrote.rows)["JSON events"] == stats.events
    assert stats.bytes_uncompressed > LIMIT  # over the limit, yet one file
    assert lines_of(tmp) == lines_of(direct)
    assert {p.name for p in tmp_path.iterdir()} == {"direct.json.gz", "one.duckdb", tmp.name}


def test_a_window_with_only_metadata_over_the_limit_is_one_file(tmp_path):
    """No slice starts in the window, so trace_parts has no row to cut, and
    the metadata alone passes a tiny limit: one file, as before the spool."""
    res = convert(
        KERAS,
        Options(output_dir=tmp_path / "k", database=False, window=(1.0, 1.01), max_json_bytes=1000),
    )
    ws = res.workspace
    assert ws.json_gz.exists() and ws.json_parts == []
    rows = events(ws.json_gz)
    assert rows and {e["ph"] for e in rows} == {"M"}
    assert [p.name for p in ws.dir.iterdir() if ".tmp-" in p.name] == []


def test_event_text_with_a_raw_newline_is_split_by_formatting_again(tmp_path):
    """An edited stage may write an event over two lines (valid JSON); its
    rows do not read back one a line from the spool, so the parts are
    written as before it: formatted again by their part column."""
    from nsys_duck import pipeline

    rel = "40_trace/30_trace_events_body.sql"
    target = tmp_path / "sql" / rel
    target.parent.mkdir(parents=True)
    text = (pipeline.packaged_sql_dir() / rel).read_text(encoding="utf-8")
    edited = text.replace(
        """SELECT '{"ph":"X","cat":"'""", """SELECT '{"ph":"X",' || chr(10) || '"cat":"'"""
    )
    assert edited != text
    target.write_text(edited, encoding="utf-8")
    res = convert(
        RODINIA,
        Options(output_dir=tmp_path / "r", sql_dir=tmp_path / "sql", max_json_bytes=LIMIT),
    )
    parts = res.workspace.json_parts
    assert len(parts) >= 3
    assert sum(len(events(p)) for p in parts) == summary(res)["JSON events"]
    with gzip.open(parts[0], "rb") as f:  # the edit took: more lines than events
        assert f.read().count(b"\n") > len(events(parts[0])) + 1
    assert [p.name for p in res.workspace.dir.iterdir() if ".tmp-" in p.name] == []


def test_parts_share_tracks_names_and_time_base(split):
    metas = []
    for part in split.workspace.json_parts:
        meta = sorted(json.dumps(e, sort_keys=True) for e in events(part) if e["ph"] == "M")
        metas.append(meta)
        assert any('"epoch_ns"' in m for m in meta)
    assert all(m == metas[0] for m in metas)


def test_parts_are_consecutive_windows_by_slice_start(split):
    last_end = None
    for part in split.workspace.json_parts:
        starts = [e["ts"] for e in events(part) if e["ph"] in ("X", "B", "i", "b")]
        assert starts
        if last_end is not None:
            assert min(starts) >= last_end  # a slice goes to the part where it starts
        last_end = max(starts)


def test_converting_again_unsplit_removes_the_parts(split, tmp_path):
    out = split.workspace.dir
    res = convert(RODINIA, Options(output_dir=out, database=False))
    assert res.workspace.json_gz.exists()
    assert res.workspace.json_parts == []


def test_window_keeps_the_slices_starting_in_it(whole, tmp_path):
    """--window counts seconds from the trace's first event (the earliest
    slice start, where Perfetto starts the trace), not from the time base."""
    first, lo_ns, hi_ns = duckdb.execute(
        f"SELECT min(start_ns), quantile_disc(start_ns, 0.3), quantile_disc(start_ns, 0.6) "
        f"FROM '{whole.workspace.events_parquet}'"
    ).fetchall()[0]
    start_s, end_s = (lo_ns - first) / 1e9, (hi_ns - first) / 1e9
    res = convert(RODINIA, Options(output_dir=tmp_path / "w", window=(start_s, end_s)))
    lo = first + round(start_s * 1e9)
    hi = first + round(end_s * 1e9)
    starts = [e["ts"] for e in events(res.workspace.json_gz) if e["ph"] in ("X", "B", "i", "b")]
    base = res.base_ns
    assert starts and min(starts) * 1000 >= lo - base - 1 and max(starts) * 1000 < hi - base
    expected = duckdb.execute(
        f"SELECT count(*) FROM '{whole.workspace.events_parquet}' "
        f"WHERE start_ns >= {lo} AND start_ns < {hi}"
    ).fetchall()[0][0]
    slices, flows, problems = perfetto_counts(res.workspace.json_gz, tmp_path)
    assert problems == 0 and slices == expected == res.window["slices"]
    assert flows > 0 and perfetto_flows.flow_mismatches(res.workspace.json_gz) == []


def test_window_counts_from_the_first_event_as_perfetto_shows_it(tmp_path):
    """pytorch_nvtx_profiling's first slice starts 0.83 s after the time
    base: --window 0:0.5 holds the slices of the first 0.5 s after it (the
    0 of ui.perfetto.dev; it selected nothing when counted from the base),
    the summary prints the window in UTC-epoch ns, and Perfetto's slices
    are those of the aligned Parquet starting in it."""
    from click.testing import CliRunner

    out = tmp_path / "w"
    cli = CliRunner().invoke(
        main, ["convert", str(PYTORCH), "-o", str(out), "--no-database", "--window", "0:0.5"]
    )
    assert cli.exit_code == 0, cli.output
    parquet = out / "pytorch_nvtx_profiling.perfetto.parquet"  # every slice
    first = duckdb.execute(f"SELECT min(start_ns) FROM '{parquet}'").fetchall()[0][0]
    lo, hi = first, first + 500_000_000
    want = duckdb.execute(
        f"SELECT count(*) FROM '{parquet}' WHERE start_ns >= {lo} AND start_ns < {hi}"
    ).fetchall()[0][0]
    assert want > 1000
    json_gz = out / "pytorch_nvtx_profiling.perfetto.json.gz"
    got = perfetto_import.query(
        json_gz,
        "SELECT count(*) AS n, min(ts) AS lo, max(ts) AS hi, "
        "(SELECT start_ts FROM trace_bounds) AS start FROM slice",
    )[0]
    base = int(
        next(e for e in events(json_gz) if e.get("name") == "process_name")["args"]["epoch_ns"]
    )
    assert int(got["n"]) == want
    assert int(got["start"]) == int(got["lo"]) == lo - base  # the window starts at the UI's 0
    assert int(got["hi"]) < hi - base
    line = f"window: [{lo}, {hi}) UTC-epoch ns = [0, 0.5) s after the first event ({first} ns); "
    assert line + f"{want:,} slices" in cli.stdout.splitlines()
    assert "warning" not in cli.stderr


def test_a_window_past_the_end_warns_in_one_line(tmp_path):
    """A window that selects no slice still converts, and says so on stderr."""
    from click.testing import CliRunner

    cli = CliRunner().invoke(
        main,
        ["convert", str(PYTORCH), "-o", str(tmp_path / "w"), "--no-database", "--window", "100:"],
    )
    assert cli.exit_code == 0, cli.output
    warnings = [line for line in cli.stderr.splitlines() if "warning" in line]
    assert warnings == [
        "nsys-duck: warning: --window selects no slice: the trace's slices start from 0 s "
        "to 3.644204843 s after its first event (1697235357827948789 ns)"
    ]
    assert any(
        line.startswith("window: [1697235457827948789, end) ") for line in cli.stdout.splitlines()
    )
    assert cli.stdout.splitlines()[-1].endswith("pytorch_nvtx_profiling.perfetto.json.gz")


@pytest.mark.skipif(not TWO_GPUS.exists(), reason="needs shared/data/newer")
def test_devices_keeps_only_the_homes_of_those_devices(tmp_path):
    res = convert(TWO_GPUS, Options(output_dir=tmp_path / "d", devices=(1,)))
    evs = events(res.workspace.json_gz)
    names = {e["pid"]: e["args"]["name"] for e in evs if e.get("name") == "process_name"}
    assert names and all("Device 1" in n or "GPU 1" in n for n in names.values()), names
    assert {e["pid"] for e in evs} <= set(names)
    slices, _, problems = perfetto_counts(res.workspace.json_gz, tmp_path)
    expected = duckdb.execute(
        f"SELECT count(*) FROM '{res.workspace.events_parquet}' "
        f"WHERE pid IN ({','.join(map(str, names))})"
    ).fetchall()[0][0]
    assert problems == 0 and slices == expected > 0
    assert perfetto_flows.flow_mismatches(res.workspace.json_gz) == []


def test_a_device_the_capture_lacks_is_refused_in_one_sentence(tmp_path):
    with pytest.raises(NsysDuckError) as exc:
        convert(RODINIA, Options(output_dir=tmp_path / "x", database=False, devices=(7,)))
    msg = str(exc.value)
    assert "--devices 7" in msg and "device(s) 0" in msg and "\n" not in msg.strip()


@pytest.mark.parametrize(
    "args",
    [["--window", "5"], ["--window", "4:2"], ["--devices", "a"], ["--max-json-size", "lots"]],
)
def test_bad_selection_options_are_refused(args, tmp_path):
    from click.testing import CliRunner

    res = CliRunner().invoke(main, ["convert", str(RODINIA), "-o", str(tmp_path / "o"), *args])
    assert res.exit_code == 2 and args[0] in res.output
