"""The Python-SQL contract: what Python reads of the SQL (which views the
writers read, the columns they promise, how a writer reads them, the hooks)
is declared in the SQL files' headers, and a ``--sql-dir`` edit of any view
the JSON writer is made of makes convert run the file validator.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import duckdb
import pytest

import nsys_duck
from conftest import Options, convert
from nsys_duck import checks, contract, pipeline
from nsys_duck.errors import SqlStageError
from paths import REPORTS

SMALL = REPORTS / "cpu_nvtx_small" / "parquet"

# the views the JSON writer reads, one from the other, and the checks' input
WRITER_FILES = [
    "40_trace/30_trace_events_body.sql",
    "40_trace/31_trace_events_stacks.sql",
    "40_trace/52_trace_events_selected.sql",
    "40_trace/56_trace_events_parted.sql",
    "45_check_inputs/chk_events.sql",
]


def _override(tmp_path, rel: str):
    """A --sql-dir holding ``rel`` with one comment line added (a changed
    file, not an unchanged copy, which the pipeline ignores)."""
    sql = tmp_path / "sql"
    target = sql / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    packaged = pipeline.packaged_sql_dir() / rel
    target.write_text(packaged.read_text(encoding="utf-8") + "-- edited\n", encoding="utf-8")
    return sql


@pytest.mark.parametrize("rel", WRITER_FILES)
def test_an_edited_writer_input_is_named(tmp_path, rel):
    files = pipeline.sql_files(_override(tmp_path, rel))
    assert checks.writer_sql_edited(files) == [rel]


def test_an_edited_file_the_writer_does_not_read_is_not_named(tmp_path):
    files = pipeline.sql_files(_override(tmp_path, "40_trace/58_trace_notes.sql"))
    assert checks.writer_sql_edited(files) == []


@pytest.mark.parametrize(
    "rel", ["40_trace/52_trace_events_selected.sql", "40_trace/56_trace_events_parted.sql"]
)
def test_an_edited_writer_input_triggers_the_file_validator(tmp_path, rel):
    res = convert(
        SMALL, Options(sql_dir=_override(tmp_path, rel), database=False), root=tmp_path / "ws"
    )
    assert res.file_validated


def test_the_writers_views_are_declared_once():
    """Each role a writer looks up is declared by one packaged file, and the
    JSON writer's view is a writer input whose columns are promised."""
    for role in ("json-trace", "kineto-headers", "kineto-events", "lanes-input"):
        assert contract.view_with_role(role).view
    parted = contract.view_with_role("json-trace")
    assert parted.view in contract.views_with_role("writer-input")
    assert {"part", "event_json", "ph", "is_stacked"} <= set(parted.columns)
    assert parted.reads[-1].startswith("WHERE is_stacked ORDER BY order_tid")
    # a merge writes its own Parquet view: the run's last file with the role
    from nsys_duck import merge

    assert "FROM trace_slices" in contract.parquet_query(pipeline.sql_files())
    assert contract.parquet_query(merge.merge_files()).endswith(
        "FROM merged_slices ORDER BY slice_id"
    )


def test_python_names_no_view_the_contract_declares():
    """The writers, the checks and the pipeline name no SQL object in a
    string (docstrings aside): they read the SQL's header tags."""
    root = pipeline.packaged_sql_dir()
    names = {
        name
        for path in root.rglob("*.sql")
        for _, name in pipeline.created_objects(path.read_text(encoding="utf-8"))
    }
    for module in ("writers", "lanes", "checks", "pipeline", "contract"):
        tree = ast.parse(Path(nsys_duck.__file__).with_name(f"{module}.py").read_text())
        docs = {
            id(n.value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if id(node) in docs:
                    continue
                found = names & set(re.findall(r"\w+", node.value))
                assert not found, f"nsys_duck/{module}.py names {sorted(found)}"


def test_a_hook_tag_must_say_what_it_creates(tmp_path):
    sql = tmp_path / "sql"
    rel = "30_intermediate/50_tracks/11_int_slice_lanes.sql"
    (sql / rel).parent.mkdir(parents=True)
    text = (pipeline.packaged_sql_dir() / rel).read_text(encoding="utf-8")
    (sql / rel).write_text(text.replace(" registers _lane_assignments", ""), encoding="utf-8")
    (f,) = [f for f in pipeline.sql_files(sql) if f.relpath == rel]
    con = duckdb.connect()
    with pytest.raises(SqlStageError, match=r"hook lanes: say what it creates"):
        pipeline.run_pipeline(con, [f], pipeline.Context({}), {"lanes": lambda con: None})


def test_an_edited_json_view_of_another_type_is_named(tmp_path):
    """The Columns tag of the JSON writer's view guards its types."""
    rel = "40_trace/56_trace_events_parted.sql"
    sql = _override(tmp_path, rel)
    path = sql / rel
    path.write_text(
        path.read_text().replace("CAST(part AS INTEGER) AS part", "part"), encoding="utf-8"
    )
    with pytest.raises(SqlStageError, match=rf"{rel} \(view trace_events_parted\): column part"):
        convert(SMALL, Options(sql_dir=sql, database=False), root=tmp_path / "ws")
