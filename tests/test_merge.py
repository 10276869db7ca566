"""Many reports, one timeline (nsys-duck merge), on real multi-process
captures split into one export per process (tests/multirank.py): the merge
of the parts equals the conversion of the whole capture, slice for slice
and flow for flow, and Perfetto's importer loads it without a problem."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import duckdb
import pytest

import multirank
from conftest import register_trace
from nsys_duck.convert import Options, convert
from nsys_duck.errors import InputError
from nsys_duck.merge import MergeOptions, merge
from nsys_duck.summary import print_merge_summary
from tests.paths import NEWER, REPORTS
from tests.test_split import perfetto_counts

REPO = Path(__file__).resolve().parent.parent
MULTIPROC = REPORTS / "cpu_nvtx_multiproc" / "parquet"
TWO_GPUS = NEWER / "nsysai_h100_2gpu_1s" / "nsysai_h100_2gpu_1s.sqlite"
SMALL = REPO / "examples" / "raiderstream_tiny" / "parquet"
NSYS_DUCK = Path(sys.executable).with_name("nsys-duck")

# what makes a slice the same slice in two traces (pid/tid/slice_id are
# renumbered by the merge; os_pid/os_tid, times, names and args are not)
SLICE_KEY = (
    "cat, name, ph, start_ns, end_ns, os_pid, os_tid, device_id, context_id, stream_id, "
    "correlation_id, copy_kind, bytes, is_primary, demangled_name, nvtx_names"
)


def slices(parquet: Path) -> Counter:
    rows = duckdb.execute(f"SELECT {SLICE_KEY} FROM read_parquet('{parquet}')").fetchall()
    return Counter(tuple(str(v) for v in r) for r in rows)


def events(json_gz: Path) -> list[dict]:
    with gzip.open(json_gz, "rt", encoding="utf-8") as f:
        return json.load(f)


def flows(json_gz: Path) -> Counter:
    """Each flow as (cat, s time, f time) in absolute ns: its two ends."""
    evs = events(json_gz)
    base = next(e["args"]["epoch_ns"] for e in evs if e.get("name") == "process_name")
    ends: dict[int, dict] = {}
    for e in evs:
        if e.get("ph") in ("s", "f"):
            ends.setdefault(e["id"], {})[e["ph"]] = round(float(e["ts"]) * 1000) + base
            ends[e["id"]]["cat"] = e["cat"]
    return Counter((v["cat"], v["s"], v["f"]) for v in ends.values())


def split_sqlite(tmp_path: Path) -> Path:
    """The 2-GPU SQLite capture as an export folder (its transcription)."""
    res = convert(TWO_GPUS, Options(database=False), root=tmp_path / "whole-ws")
    folder = tmp_path / "nsysai" / "parquet"
    shutil.copytree(res.workspace.parquet_dir, folder)
    return folder


@pytest.fixture(scope="module", params=["cpu_nvtx_multiproc", "nsysai_h100_2gpu_1s"])
def split_and_merged(request, tmp_path_factory):
    """(whole conversion, per-process exports, merge result) of a capture."""
    tmp = tmp_path_factory.mktemp(request.param)
    source = MULTIPROC if request.param == "cpu_nvtx_multiproc" else split_sqlite(tmp)
    root = tmp / "ws"
    whole = convert(source, Options(), root=root)
    parts = multirank.split_export_by_pid(source, tmp / "parts", request.param)
    assert len(parts) >= 2, parts
    res = merge("merged", [str(p / "parquet") for p in parts.values()], root=root)
    register_trace(res.workspace.json_gz, res.workspace.events_parquet)
    return whole, parts, res


def test_merge_of_the_split_reports_equals_the_whole_capture(split_and_merged):
    whole, parts, res = split_and_merged
    assert not res.failed
    assert len(res.reports) == len(parts)
    assert slices(res.workspace.events_parquet) == slices(whole.workspace.events_parquet)
    assert flows(res.workspace.json_gz) == flows(whole.workspace.json_gz)
    summary = dict(res.summary)
    assert summary["slices"] == dict(whole.summary)["slices"] == summary["Parquet rows"]


def test_each_report_has_processes_and_ids_of_its_own(split_and_merged):
    _whole, parts, res = split_and_merged
    con = duckdb.connect(str(res.workspace.database), read_only=True)
    # processes are labelled with their report and sorted by it
    homes = con.execute(
        "SELECT h.json_pid, h.home_name, m.label, m.ordinal FROM int_homes AS h "
        "JOIN merge_reports AS m USING (report) ORDER BY h.json_pid"
    ).fetchall()
    assert {m for *_, m in homes} == set(range(1, len(parts) + 1))
    assert [o for *_, o in homes] == sorted(o for *_, o in homes)
    for _pid, home_name, label, _ in homes:
        assert home_name.startswith(label + " · "), home_name
    # ids never meet across reports (pid, tid, slice, flow)
    for table, column in (
        ("int_homes", "json_pid"),
        ("int_tracks", "json_tid"),
        ("merged_slices", "slice_id"),
        ("int_flows", "flow_id"),
    ):
        dup = con.execute(
            f"SELECT count(*) FROM (SELECT {column} FROM {table} GROUP BY 1 "
            "HAVING count(DISTINCT report) > 1)"
        ).fetchall()[0][0]
        assert dup == 0, (table, column)
    # one report's slices are all under its own processes
    mixed = con.execute(
        "SELECT count(*) FROM merged_slices AS s JOIN int_homes AS h ON h.json_pid = s.pid "
        "WHERE h.report <> s.report"
    ).fetchall()[0][0]
    assert mixed == 0
    # the merged file passes every check of the file validator
    from nsys_duck.validate import validate_trace

    assert validate_trace(res.workspace.json_gz).ok


def test_cross_rank_queries_of_the_docs_run_on_the_merged_database(split_and_merged):
    """docs/multirank.md's queries (each ```sql block) run on the merged
    database: the per-rank ones give every rank, the step one names ranks."""
    whole, _parts, res = split_and_merged
    text = (REPO / "docs" / "multirank.md").read_text()
    queries = [b.split("```", 1)[0] for b in text.split("```sql\n")[1:]]
    assert len(queries) == 3
    con = duckdb.connect(str(res.workspace.database), read_only=True)
    labels = {r.label for r in res.reports}
    by_cat, steps, waits = (con.execute(q).fetchall() for q in queries)
    assert {r[0] for r in by_cat} == labels
    assert [r[0] for r in waits] == [r.label for r in res.reports]  # in rank order
    assert {r[3] for r in steps} <= labels
    # time per rank and kind: the kernels' sum is the whole capture's
    kernel_ms = sum(r[3] for r in by_cat if r[1] == "kernel")
    whole_ms = duckdb.execute(
        "SELECT round(sum(dur_ns) / 1e6, 3) FROM read_parquet(?) "
        "WHERE is_primary AND cat = 'kernel'",
        [str(whole.workspace.events_parquet)],
    ).fetchall()[0][0]
    assert kernel_ms == pytest.approx(whole_ms or 0, abs=0.01)


def test_merged_database_reads_no_file(split_and_merged, tmp_path):
    """The merged NAME.duckdb moves with its folder: no view reads the
    reports/ dataset or the temporary folder it was built from."""
    _whole, _parts, res = split_and_merged
    moved = tmp_path / "moved.duckdb"
    shutil.copyfile(res.workspace.database, moved)
    con = duckdb.connect(str(moved), read_only=True)
    views = con.execute(
        "SELECT view_name FROM duckdb_views() WHERE NOT internal AND schema_name = 'main'"
    ).fetchall()
    for (view,) in views:
        con.execute(f'SELECT * FROM "{view}" LIMIT 1').fetchall()
    assert con.execute("SELECT count(*) FROM merged_slices").fetchall()[0][0] > 0
    sql = " ".join(
        r[0] for r in con.execute("SELECT sql FROM duckdb_views() WHERE NOT internal").fetchall()
    )
    assert "read_parquet" not in sql


def test_merging_again_reuses_each_report_conversion(split_and_merged):
    _whole, parts, res = split_and_merged
    root = res.workspace.dir.parent
    dbs = [r.workspace / f"{r.workspace.name}.duckdb" for r in res.reports]
    # the merge converted them into its own folder (two jobs' report_0 never meet)
    assert all(r.workspace.parent == res.workspace.dir / "ranks" for r in res.reports)
    before = [db.stat().st_mtime_ns for db in dbs]
    again = merge("merged", [str(p / "parquet") for p in parts.values()], root=root)
    assert {r.status for r in again.reports} == {"up to date"}
    assert [db.stat().st_mtime_ns for db in dbs] == before
    assert slices(again.workspace.events_parquet) == slices(res.workspace.events_parquet)


def test_a_tampered_merge_breaks_check_merge_ids(split_and_merged, tmp_path):
    """check_merge_ids can fail: two reports' slices given one id."""
    _whole, _parts, res = split_and_merged
    copy = tmp_path / "t.duckdb"
    shutil.copyfile(res.workspace.database, copy)
    con = duckdb.connect(str(copy))
    assert con.execute("SELECT count(*) FROM check_merge_ids").fetchall()[0][0] == 0
    con.execute("UPDATE int_slices_on_tracks SET slice_id = 7")
    messages = [m for (m,) in con.execute("SELECT message FROM check_merge_ids").fetchall()]
    assert any(m.startswith("slice id 7 is used by") for m in messages), messages


def rank_exports(tmp_path: Path, n: int, step_ns: int) -> list[Path]:
    return [
        p / "parquet"
        for p in multirank.make_rank_exports(
            SMALL, tmp_path / "ranks", n, name="report_", offset_step_ns=step_ns
        )
    ]


def test_ranks_are_labelled_and_sorted_by_rank_number(tmp_path):
    paths = rank_exports(tmp_path, 11, 1_000_000)
    res = merge("job", [str(p) for p in reversed(paths)], root=tmp_path / "ws")
    register_trace(res.workspace.json_gz, res.workspace.events_parquet)
    assert [r.label for r in res.reports] == [f"rank {k}" for k in range(11)]
    names = [
        e["args"]["name"]
        for e in sorted(events(res.workspace.json_gz), key=lambda e: e.get("pid", 0))
        if e.get("name") == "process_name"
    ]
    ranks = [int(n.split(" · ")[0].split()[1]) for n in names]
    assert ranks == sorted(ranks) and set(ranks) == set(range(11))  # rank 2 before rank 10
    # UTC alignment keeps Nsight's times: report k starts k ms after report 0
    firsts = {r.label: r.first_ns + r.shift_ns for r in res.reports}
    assert firsts["rank 10"] - firsts["rank 0"] == 10 * 1_000_000
    assert all(r.shift_ns == 0 for r in res.reports)


def test_align_start_lines_up_first_events_and_utc_refuses_a_too_long_span(tmp_path):
    day_ns = 86_400 * 10**9
    paths = [str(p) for p in rank_exports(tmp_path, 2, 60 * day_ns)]
    with pytest.raises(InputError, match=r"--align start"):
        merge("far", paths, root=tmp_path / "ws")
    res = merge("far", paths, MergeOptions(align="start"), root=tmp_path / "ws")
    register_trace(res.workspace.json_gz, res.workspace.events_parquet)
    first = {r.label: r.align_ns + r.shift_ns for r in res.reports}
    assert first["rank 0"] == first["rank 1"]
    shifts = {r.label: r.shift_ns for r in res.reports}
    assert shifts == {"rank 0": 0, "rank 1": -60 * day_ns}
    # the aligned Parquet holds the aligned times
    per_rank = duckdb.execute(
        f"SELECT rank_no, min(start_ns) FROM read_parquet('{res.workspace.events_parquet}') "
        "GROUP BY 1 ORDER BY 1"
    ).fetchall()
    assert per_rank[0][1] == per_rank[1][1]


def test_a_big_merge_is_written_in_parts_that_each_open(tmp_path):
    paths = [str(p) for p in rank_exports(tmp_path, 4, 10**9)]
    opts = MergeOptions(max_json_bytes=20_000)
    res = merge("big", paths, opts, root=tmp_path / "ws")
    parts = res.workspace.json_parts
    assert len(parts) >= 2
    seen = 0
    for part in parts:
        s, _flows, problems = perfetto_counts(part, tmp_path)
        assert problems == 0, part.name
        seen += s
    assert seen == dict(res.summary)["slices"]


def test_cli_merges_a_folder_and_leaves_out_a_failed_report(tmp_path):
    paths = rank_exports(tmp_path, 3, 10**6)
    bad = tmp_path / "ranks" / "report_0099.sqlite"
    bad.write_bytes(b"not sqlite")
    env = dict(os.environ, NSYS_WORKSPACE_ROOT=str(tmp_path / "ws"))
    run = subprocess.run(
        [str(NSYS_DUCK), "merge", "job", str(tmp_path / "ranks")],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert run.returncode == 1, run.stderr
    assert "report_0099.sqlite: not an SQLite database" in run.stderr
    assert "(left out of the merge)" in run.stderr
    out = run.stdout.strip().splitlines()
    assert out[0] == "== job (merge of 3 reports)"
    assert out[1].startswith("time alignment: UTC epoch")
    trace = Path(out[-1])
    assert trace == tmp_path / "ws" / "job" / "job.perfetto.json.gz"
    register_trace(trace)
    for p in paths:
        assert (tmp_path / "ws" / "job" / "reports" / f"report={p.parent.name}").is_dir()


def test_bad_merges_are_refused_in_one_sentence(tmp_path):
    paths = [str(p) for p in rank_exports(tmp_path, 2, 10**6)]
    with pytest.raises(InputError, match=r"^the merge's name report_0000 is also the name"):
        merge("report_0000", paths, root=tmp_path / "ws")
    bad = tmp_path / "empty.nsys-rep"
    bad.write_bytes(b"")
    with pytest.raises(
        InputError,
        match=r"^no report could be converted, nothing to merge \(1 failed; first: .*empty",
    ):
        merge("job", [str(bad)], root=tmp_path / "ws")
    (tmp_path / "nothing").mkdir()
    with pytest.raises(InputError, match=r"no report in this folder"):
        merge("job", [str(tmp_path / "nothing")], root=tmp_path / "ws2")
    assert not (tmp_path / "ws" / "job" / "job.perfetto.json.gz").exists()


def test_many_ranks_convert_on_a_local_dask_cluster_and_merge(tmp_path):
    """merge --jobs 2: the ranks convert as Dask tasks on a LocalCluster,
    progress counts every report, and the merge holds each rank's slices."""
    n = 12
    paths = [str(p) for p in rank_exports(tmp_path, n, 10**6)]
    updates: list[tuple[int, int, int]] = []
    res = merge(
        "job",
        paths,
        MergeOptions(jobs=2),
        root=tmp_path / "ws",
        on_report=lambda done, failed, running, _o: updates.append((done, failed, running)),
    )
    register_trace(res.workspace.json_gz, res.workspace.events_parquet)
    assert [r.status for r in res.reports] == ["converted"] * n
    assert updates[-1] == (n, 0, 0) and len(updates) == n
    summary = dict(res.summary)
    assert summary["reports merged"] == n
    one = convert(paths[0], Options(), root=tmp_path / "one")
    assert summary["slices"] == n * dict(one.summary)["slices"]
    assert summary["kernels"] == n * dict(one.summary)["kernels"]


def test_the_merge_semantics_are_sql_a_user_can_edit(tmp_path):
    """--sql-dir reaches the merge's own files: a label rule edited in
    sql/merge/10_inputs/10_merge_reports.sql names the processes."""
    from nsys_duck.workbench import copy_sql_files

    edits = tmp_path / "sql"
    copy_sql_files(edits)
    rule = edits / "merge" / "10_inputs" / "10_merge_reports.sql"
    text = rule.read_text()
    assert "THEN 'rank ' ||" in text
    rule.write_text(text.replace("THEN 'rank ' ||", "THEN 'node ' ||"))
    paths = [str(p) for p in rank_exports(tmp_path, 2, 10**6)]
    res = merge("job", paths, MergeOptions(convert=Options(sql_dir=edits)), root=tmp_path / "ws")
    register_trace(res.workspace.json_gz, res.workspace.events_parquet)
    assert [r.label for r in res.reports] == ["node 0", "node 1"]
    names = {
        e["args"]["name"] for e in events(res.workspace.json_gz) if e.get("name") == "process_name"
    }
    assert all(n.startswith(("node 0 · ", "node 1 · ")) for n in names), names


def test_window_selects_part_of_a_merged_job(tmp_path, capsys):
    """--window on a merge: ranks 100 s apart, a window over the first 50 s
    holds rank 0's slices only; the Parquet stays whole."""
    # 100 s apart: a rank's thread states (SCHED_EVENTS) span ~10 s
    paths = [str(p) for p in rank_exports(tmp_path, 3, 100 * 10**9)]
    # seconds after the merged trace's first event (rank 0's)
    res = merge("job", paths, MergeOptions(window=(None, 50)), root=tmp_path / "ws")
    per_rank = dict(
        duckdb.execute(
            f"SELECT report_label, count(*) FROM read_parquet('{res.workspace.events_parquet}') "
            "GROUP BY 1"
        ).fetchall()
    )
    assert len(per_rank) == 3  # the Parquet holds every rank
    s, _flows, problems = perfetto_counts(res.workspace.json_gz, tmp_path)
    assert problems == 0
    assert s == per_rank["rank 0"] == res.window["slices"]
    first = min(r.first_ns + r.shift_ns for r in res.reports)
    assert res.window["window_end_ns"] == first + 50 * 10**9 and res.first_ns == first
    # the summary: the window, and each report's first CUDA/NVTX event in
    # seconds after the merged trace's first event (a thread state of rank
    # 0's): rank k's at rank 0's + k * 100 s
    print_merge_summary(res)
    out = capsys.readouterr().out.splitlines()
    assert (
        f"window: [start, {first + 50 * 10**9}) UTC-epoch ns = [start, 50) s after the "
        in "\n".join(out)
    )
    firsts = [re.search(r" (\d+\.\d{6}) s ", line)[1] for line in out if line.startswith("  rank ")]
    rank0 = min(r.align_ns + r.shift_ns for r in res.reports)
    assert firsts == [f"{(rank0 - first) / 1e9 + 100 * k:.6f}" for k in range(3)], out


def test_reports_of_one_name_in_two_folders_and_two_jobs_never_meet(tmp_path):
    """node0/report_0 and node1/report_0 are two reports; a second job with
    the same report names is merged without touching the first job's."""
    a = rank_exports(tmp_path / "a", 1, 10**6)[0]  # .../report_0000/parquet
    b = rank_exports(tmp_path / "b", 1, 10**6)[0]
    root = tmp_path / "ws"
    res = merge("job", [str(a), str(b)], root=root)
    register_trace(res.workspace.json_gz, res.workspace.events_parquet)
    assert sorted(r.label for r in res.reports) == ["a/ranks/report_0000", "b/ranks/report_0000"]
    assert dict(res.summary)["reports merged"] == 2
    first = merge("jobA", [str(a)], root=root)
    second = merge("jobB", [str(b)], root=root)
    assert first.reports[0].workspace != second.reports[0].workspace
    again = merge("jobA", [str(a)], root=root)
    assert again.reports[0].status == "up to date"


def test_names_are_kept_whatever_their_characters(tmp_path):
    """Report names with spaces, '=' and non-ASCII letters are the report
    column as they are (the partition folder is percent-encoded)."""
    built = multirank.make_rank_exports(SMALL, tmp_path / "src", 2, name="r")
    named = []
    for folder, new in zip(built, ["my run=0", "альфа 1"], strict=True):
        target = tmp_path / "in" / new
        shutil.copytree(folder, target)
        named.append(target)  # a folder holding parquet/: given as it is
    res = merge("odd", [str(p) for p in named], root=tmp_path / "ws")
    register_trace(res.workspace.json_gz, res.workspace.events_parquet)
    assert sorted(r.report for r in res.reports) == ["my run=0", "альфа 1"]
    reports = duckdb.execute(
        f"SELECT DISTINCT report FROM read_parquet('{res.workspace.events_parquet}')"
    ).fetchall()
    assert sorted(r for (r,) in reports) == ["my run=0", "альфа 1"]


def test_a_folder_is_searched_below_and_each_capture_taken_once(tmp_path):
    """Sub-folders are searched; a report given twice, or with its SQLite
    export beside it, is merged once, and the summary says so."""
    fuser = NEWER / "fuser_nvtx_2025_1"
    runs = tmp_path / "runs"
    (runs / "node1").mkdir(parents=True)
    shutil.copy(fuser / "fuser_nvtx_2025_1.sqlite", runs / "report_0.sqlite")
    shutil.copy(fuser / "fuser_nvtx_2025_1.nsys-rep", runs / "report_0.nsys-rep")
    for p in rank_exports(tmp_path, 2, 10**6)[1:]:
        shutil.copytree(p.parent, runs / "node1" / "report_1")
    res = merge(
        "job",
        [str(runs), str(runs / "report_0.sqlite")],
        MergeOptions(align="start"),
        root=tmp_path / "ws",
    )
    register_trace(res.workspace.json_gz, res.workspace.events_parquet)
    assert [r.label for r in res.reports] == ["rank 0", "rank 1"]
    assert any("report_0.nsys-rep left out: its SQLite export" in n for n in res.notes)
    assert any("given twice" in n for n in res.notes)


def test_merge_and_convert_never_replace_each_other_silently(tmp_path):
    root = tmp_path / "ws"
    convert(SMALL, Options(), root=root)  # workspace raiderstream_tiny
    paths = [str(p) for p in rank_exports(tmp_path, 2, 10**6)]
    with pytest.raises(InputError, match=r"holds the conversion of .*choose another NAME"):
        merge("raiderstream_tiny", paths, root=root)
    res = merge("job", paths, root=root)
    from nsys_duck.errors import WorkspaceError

    with pytest.raises(WorkspaceError, match=r"holds a merge of several reports"):
        convert(SMALL, Options(output_dir=res.workspace.dir))


def gpu_offsets(res) -> dict[str, int]:
    """Per report, its first GPU slice (kernel, memcpy, memset) in the merged
    timeline, ns after the earliest report's."""
    rows = duckdb.execute(
        f"SELECT report, min(start_ns) FROM read_parquet('{res.workspace.events_parquet}') "
        "WHERE cat IN ('kernel', 'memcpy', 'memset') GROUP BY 1"
    ).fetchall()
    first = min(t for _, t in rows)
    return {report: t - first for report, t in rows}


def test_align_start_lines_up_the_cuda_work_whatever_the_cpu_side(tmp_path):
    """--align start lines reports up on their first CUDA/NVTX event: two
    captures whose CPU side (OS runtime calls, thread states) starts 0.92 s
    and 0.14 s before their CUDA work give the same GPU offsets with the
    CPU side as without it (--no-osrt --no-sched)."""
    paths = [str(SMALL), str(REPORTS / "threebody_2023_3" / "parquet")]
    with_cpu = merge("job", paths, MergeOptions(align="start"), root=tmp_path / "a")
    register_trace(with_cpu.workspace.json_gz, with_cpu.workspace.events_parquet)
    bare = MergeOptions(convert=Options(cpu_sources=()), align="start")
    without = merge("job", paths, bare, root=tmp_path / "b")
    assert dict(with_cpu.summary)["OS runtime calls"] > 0
    assert dict(without.summary).get("OS runtime calls", 0) == 0
    assert gpu_offsets(with_cpu) == gpu_offsets(without)
    shifts = {r.report: r.shift_ns for r in with_cpu.reports}
    assert shifts == {r.report: r.shift_ns for r in without.reports}
    # the first CUDA/NVTX events coincide; the CPU side starts before them
    aligned = {r.align_ns + r.shift_ns for r in with_cpu.reports}
    assert len(aligned) == 1
    assert all(r.first_ns < r.align_ns for r in with_cpu.reports)


def named_copies(tmp_path: Path, names: list[str]) -> list[str]:
    """Copies of SMALL (as distinct ranks: tests/multirank.py) in folders
    named ``names``; each copy's environment says SLURM_PROCID=0, as the
    capture's does, so no rank comes from the environment."""
    built = multirank.make_rank_exports(SMALL, tmp_path / "src", len(names), name="copy")
    out = []
    for folder, name in zip(built, names, strict=True):
        target = tmp_path / "in" / name
        shutil.copytree(folder, target)
        out.append(str(target / "parquet"))
    return out


def test_rank_labels_come_from_names_that_say_a_rank(tmp_path, capsys):
    """report_3, rank4 and x_r5 say their rank; a trailing year/version
    (flameox_graph_trace_2025_5) does not: those reports keep their names.
    The summary says, per report, how its rank was decided."""
    from nsys_duck.summary import print_merge_summary

    paths = named_copies(tmp_path / "one", ["x_r5", "report_3", "rank4"])
    res = merge("job", paths, root=tmp_path / "ws")
    register_trace(res.workspace.json_gz, res.workspace.events_parquet)
    assert [(r.report, r.label, r.rank_no) for r in res.reports] == [
        ("report_3", "rank 3", 3),
        ("rank4", "rank 4", 4),
        ("x_r5", "rank 5", 5),
    ]
    print_merge_summary(res)
    out = capsys.readouterr().out.splitlines()
    assert "report report_3: rank 3 (from file name 'report_3')" in out
    assert "report x_r5: rank 5 (from file name 'x_r5')" in out
    names = ["flameox_graph_trace_2025_5", "flameox_graph_trace_2025_6"]
    plain = merge("plain", named_copies(tmp_path / "two", names), root=tmp_path / "ws")
    assert [(r.label, r.rank_no, r.rank_source) for r in plain.reports] == [
        (names[0], None, "order"),
        (names[1], None, "order"),
    ]
    print_merge_summary(plain)
    out = capsys.readouterr().out.splitlines()
    assert f"report {names[1]}: rank 1 (order)" in out


def test_rank_labels_come_from_the_captures_environment(tmp_path):
    """Two real captures whose environment says their rank (cori: PMI_RANK=5
    and SLURM_PROCID=5; raiderstream: SLURM_PROCID=0): the env decides, PMI's
    before Slurm's, whatever their names; the manifest records it."""
    cori = REPORTS / "cori_omp_offload_dev5" / "parquet"
    res = merge("job", [str(cori), str(SMALL)], MergeOptions(align="start"), root=tmp_path / "ws")
    register_trace(res.workspace.json_gz, res.workspace.events_parquet)
    assert [(r.report, r.label, r.rank_source) for r in res.reports] == [
        ("raiderstream_tiny", "rank 0", "from env SLURM_PROCID"),
        ("cori_omp_offload_dev5", "rank 5", "from env PMI_RANK"),
    ]
    recorded = json.loads((res.workspace.dir / "nsys-duck.json").read_text())["merge"]["reports"]
    assert [(r["rank"], r["rank_source"]) for r in recorded] == [
        (0, "from env SLURM_PROCID"),
        (5, "from env PMI_RANK"),
    ]
    assert all(len(r["source"]["sha256"]) > 40 for r in recorded)
