"""SQL workbench: inspect views, edit a copy of the SQL, see it in the output."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import REPORTS, load_events
from nsys_duck.convert import Options, convert
from nsys_duck.errors import SqlStageError
from nsys_duck.workbench import copy_sql_files, explain, list_views, open_workbench

EXPORT = REPORTS / "llmc_t4_no_kernel_table" / "parquet"


def test_views_listed_in_pipeline_order_with_columns():
    wb = open_workbench(str(EXPORT))
    views = [o.name for o in list_views(wb)]
    assert views.index("stg_memsets") < views.index("int_gpu_ops") < views.index("trace_events")
    cols = {o.name: [(c, t) for c, t, _ in o.columns] for o in list_views(wb)}
    assert ("start_ns", "BIGINT") in cols["trace_slices"]
    assert "TABLE int_flows AS" in explain(wb, "int_flows")
    n = wb.con.execute("SELECT count(*) FROM stg_memsets").fetchall()[0][0]
    assert n == 98


def test_edited_sql_changes_the_trace(tmp_path):
    sql = tmp_path / "sql"
    copy_sql_files(sql)
    slices = sql / "05_domain" / "track_classes.sql"
    slices.write_text(slices.read_text().replace("'PCIe Usage'", "'PCIe Bus'"))
    ops = sql / "30_intermediate" / "10_gpu" / "10_int_gpu_ops.sql"
    ops.write_text(ops.read_text().replace("FROM stg_memsets", "FROM stg_memsets WHERE FALSE"))
    res = convert(EXPORT, Options(sql_dir=sql), root=tmp_path / "ws")
    assert set(res.overridden_sql) == {
        "05_domain/track_classes.sql",
        "30_intermediate/10_gpu/10_int_gpu_ops.sql",
    }
    events = load_events(res)
    tracks = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert "PCIe Bus" in tracks and "PCIe Usage" not in tracks
    assert not any(e.get("cat") == "memset" for e in events)
    assert dict(res.summary)["memset"] == 0
    assert dict(res.summary)["memcpy H2D"] == 72  # nothing else changed


def test_broken_sql_names_file_and_view_and_publishes_nothing(tmp_path):
    sql = tmp_path / "sql"
    copy_sql_files(sql)
    flows = sql / "30_intermediate" / "50_tracks" / "50_int_flows.sql"
    text = flows.read_text()
    assert "pairs.op_id," in text
    flows.write_text(text.replace("pairs.op_id,", "pairs.no_such_column,", 1))
    with pytest.raises(SqlStageError) as info:
        convert(EXPORT, Options(sql_dir=sql), root=tmp_path / "ws")
    msg = str(info.value)
    assert "30_intermediate/50_tracks/50_int_flows.sql" in msg and "int_flows" in msg
    assert "no_such_column" in msg
    ws = tmp_path / "ws" / "llmc_t4_no_kernel_table"
    assert not list(ws.glob("*.perfetto.*")) and not list(ws.glob(".*tmp*"))


def test_sql_command_prints_csv(tmp_path):
    env = dict(os.environ, NSYS_WORKSPACE_ROOT=str(tmp_path))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "nsys_duck.cli",
            "sql",
            str(EXPORT),
            "-c",
            "SELECT cat, count(*) AS n FROM trace_slices GROUP BY cat ORDER BY cat",
            "--format",
            "csv",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "cat,n" and "memset,98" in out.stdout


def test_readme_documents_every_aligned_parquet_column():
    from pathlib import Path

    readme = Path(__file__).resolve().parent.parent / "README.md"
    text = readme.read_text()
    wb = open_workbench(str(EXPORT))
    cols = [c for o in list_views(wb) if o.name == "trace_slices" for c, _, _ in o.columns]
    assert cols and [c for c in cols if f"`{c}`" not in text] == []


def test_saved_database_moves_with_its_workspace(tmp_path):
    import shutil

    import duckdb

    res = convert(EXPORT, Options(validate=False), root=tmp_path / "ws")
    db = res.workspace.database
    assert db in res.files and db.is_file()
    moved = tmp_path / "elsewhere" / "copy"
    shutil.copytree(res.workspace.dir, moved)
    shutil.rmtree(res.workspace.dir)
    cwd = os.getcwd()
    os.chdir(moved)
    try:
        con = duckdb.connect(db.name, read_only=True)
        assert con.execute("SELECT count(*) FROM stg_memsets").fetchall()[0][0] == 98
        views = {
            r[0]
            for r in con.execute(
                "SELECT view_name FROM duckdb_views() WHERE NOT internal"
            ).fetchall()
        }
        assert {"stg_kernels", "trace_slices", "trace_events"} <= views
        tables = {
            r[0]
            for r in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE NOT internal"
            ).fetchall()
        }
        assert {"int_slices", "int_flows"} <= tables
        assert con.execute("SELECT count(*) FROM int_flows").fetchall()[0][0] > 0
        assert (
            con.execute("SELECT count(*) FROM trace_slices").fetchall()[0][0]
            == dict(res.summary)["Parquet rows"]
        )
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        # a wrong type in the aligned Parquet view
        (
            (
                "40_trace/20_trace_slices.sql",
                "s.start_ns,",
                "CAST(s.start_ns AS VARCHAR) AS start_ns,",
            ),
            "40_trace/20_trace_slices.sql (view trace_slices): column start_ns is VARCHAR, "
            "expected BIGINT",
        ),
        # a missing column in the final trace view
        (
            ("40_trace/20_trace_slices.sql", "    s.track_name,\n", ""),
            "40_trace/20_trace_slices.sql (view trace_slices): missing column track_name",
        ),
    ],
)
def test_edit_breaking_the_output_contract_is_named(tmp_path, edit, expected):
    sql = tmp_path / "sql"
    copy_sql_files(sql)
    rel, old, new = edit
    path = sql / rel
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new, 1))
    with pytest.raises(SqlStageError) as info:
        convert(EXPORT, Options(sql_dir=sql, validate=False), root=tmp_path / "ws")
    assert expected in str(info.value)
    assert not (tmp_path / "ws" / "llmc_t4_no_kernel_table").exists() or not list(
        (tmp_path / "ws" / "llmc_t4_no_kernel_table").glob("*.perfetto.*")
    )


def test_views_descriptions_are_whole_sentences():
    """`nsys-duck views` printed each file's first comment line, cut mid-sentence
    (issue 13): it prints the header's first paragraph."""
    from nsys_duck import pipeline

    for f in pipeline.sql_files(None):
        text = f.description
        assert text.endswith((".", ")")), (f.relpath, text)
        first = next(line for line in f.text.splitlines() if line.startswith("--"))
        assert text.startswith(first.lstrip("-").strip())


# --- views / explain show what ran (issue 11, part 5) -----------------------------


def _cli(tmp_path, *args):
    env = dict(os.environ, NSYS_WORKSPACE_ROOT=str(tmp_path / "ws"))
    out = subprocess.run(
        [sys.executable, "-m", "nsys_duck.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_explain_shows_the_nvtx_scope_the_conversion_ran(tmp_path):
    """`explain` re-rendered the packaged files with --nvtx-scope thread, so
    after `convert --nvtx-scope process` it showed SQL that did not run."""
    import difflib

    shown = {}
    for scope in ("thread", "process"):
        res = convert(EXPORT, Options(nvtx_scope=scope, validate=False), root=tmp_path / scope)
        with open_workbench(str(res.workspace.dir)) as wb:
            assert wb.database == res.workspace.database  # the saved NAME.duckdb
            shown[scope] = explain(wb, "int_nvtx_ranges")
    assert (
        "{{" not in shown["process"]
        and "CREATE OR REPLACE TABLE int_nvtx_ranges" in shown["process"]
    )
    diff = list(difflib.ndiff(shown["thread"].splitlines(), shown["process"].splitlines()))
    only_process = [line[2:] for line in diff if line.startswith("+ ")]
    only_thread = [line[2:] for line in diff if line.startswith("- ")]
    assert only_process and all("'process'" in line for line in only_process), only_process
    assert only_thread and all("'thread'" in line for line in only_thread), only_thread
    cli = _cli(
        tmp_path / "process",
        "explain",
        str(tmp_path / "process" / "llmc_t4_no_kernel_table"),
        "int_nvtx_ranges",
    )
    assert cli.strip() == shown["process"].strip()


def _file_creating(sql_root, name):
    """The SQL file under ``sql_root`` whose statements create ``name``."""
    from nsys_duck import pipeline

    return next(
        p
        for p in sorted(sql_root.rglob("*.sql"))
        if any(n == name for _, n in pipeline.created_objects(p.read_text()))
    )


def test_views_and_explain_show_sql_dir_files_as_they_ran(tmp_path):
    """A view added by --sql-dir is listed and explained; an overridden
    file's SQL is the edited one, as it ran, even when the folder has been
    edited again since."""
    sql = tmp_path / "sql"
    copy_sql_files(sql)
    ops = _file_creating(sql, "int_gpu_ops")
    rel = ops.relative_to(sql).as_posix()
    create = "CREATE OR REPLACE TABLE int_gpu_ops AS\n"
    assert create in ops.read_text()
    ops.write_text(ops.read_text().replace(create, create + "-- edited: run 1\n"))
    added = sql / "45_extra" / "10_memset_count.sql"
    added.parent.mkdir()
    added.write_text(
        "-- memset_count: how many memsets the trace draws.\n--\n"
        "-- Reads: trace_slices.\n\n"
        "CREATE OR REPLACE VIEW memset_count AS\n"
        "SELECT count(*) AS n FROM trace_slices WHERE cat = 'memset';\n\n"
        "COMMENT ON VIEW memset_count IS 'Memsets drawn (a --sql-dir test view).';\n"
        "COMMENT ON COLUMN memset_count.n IS 'Their number.';\n"
    )
    res = convert(EXPORT, Options(sql_dir=sql, validate=False), root=tmp_path / "ws")
    ops.write_text(ops.read_text().replace("-- edited: run 1", "-- edited: run 2"))
    with open_workbench(str(res.workspace.dir)) as wb:
        objects = {o.name: o for o in list_views(wb)}
        extra = objects["memset_count"]
        assert (extra.kind, extra.file, extra.origin) == (
            "view",
            "45_extra/10_memset_count.sql",
            "added",
        )
        assert extra.description == "Memsets drawn (a --sql-dir test view)."
        assert extra.columns == [("n", "BIGINT", "Their number.")]
        assert list(objects).index("memset_count") > list(objects).index("trace_events")
        assert (objects["int_gpu_ops"].file, objects["int_gpu_ops"].origin) == (rel, "overridden")
        assert objects["trace_slices"].origin == "packaged"
        text = explain(wb, "int_gpu_ops")
        assert create + "-- edited: run 1\n" in text and "run 2" not in text
        assert "overridden by --sql-dir" in text.splitlines()[0]
        memsets = explain(wb, "memset_count")
        assert "SELECT count(*) AS n FROM trace_slices WHERE cat = 'memset';" in memsets
        assert "-- n BIGINT: Their number." in memsets.replace("--   ", "-- ")
        assert wb.con.execute("SELECT n FROM memset_count").fetchall() == [(98,)]
    listed = _cli(tmp_path, "views", "llmc_t4_no_kernel_table")
    assert "memset_count  (view, 45_extra/10_memset_count.sql, added by --sql-dir)" in listed
    assert f"int_gpu_ops  (table, {rel}, overridden by --sql-dir)" in listed


def test_explain_unknown_name_fails_with_one_line(tmp_path):
    env = dict(os.environ, NSYS_WORKSPACE_ROOT=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-m", "nsys_duck.cli", "explain", str(EXPORT), "no_such_view"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 1
    assert "no view, table or macro named 'no_such_view'" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["views", "nosuch"],
        ["explain", "nosuch", "trace_slices"],
        ["sql", "nosuch", "-c", "SELECT 1"],
    ],
)
def test_no_such_workspace_is_a_usage_error(tmp_path, args):
    """views / explain / sql on a NAME that names nothing exit 2, as
    `report nosuch` and click's usage errors do (was 1), with one line."""
    env = dict(os.environ, NSYS_WORKSPACE_ROOT=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-m", "nsys_duck.cli", *args], capture_output=True, text=True, env=env
    )
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("nsys-duck: nosuch: no such file or directory, and no workspace")
    assert out.stderr.count("\n") == 1
