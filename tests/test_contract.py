"""The Python-SQL contract: what Python reads of the SQL (which views the
writers read, the columns they promise, how a writer reads them, the hooks)
is declared in the SQL files' headers, and a ``--sql-dir`` edit of any view
the JSON writer is made of makes convert run the file validator.
"""

from __future__ import annotations

import ast
import re
import shutil
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
    "40_trace/53_trace_events_selected.sql",
    "40_trace/54_parts/60_trace_events_parted.sql",
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
    files = pipeline.sql_files(_override(tmp_path, "40_trace/59_trace_notes.sql"))
    assert checks.writer_sql_edited(files) == []


@pytest.mark.parametrize(
    "rel", ["40_trace/53_trace_events_selected.sql", "40_trace/54_parts/60_trace_events_parted.sql"]
)
def test_an_edited_writer_input_triggers_the_file_validator(tmp_path, rel):
    res = convert(
        SMALL, Options(sql_dir=_override(tmp_path, rel), database=False), root=tmp_path / "ws"
    )
    assert res.file_validated


ORCHESTRATION_ROLES = (
    "slices",
    "time-base",
    "json-parts",
    "json-bucket-parts",
    "kineto-ranks",
    "notes",
    "window",
    "export-info",
    "columns-not-in-schema",
    "skipped-rows",
    "merge-reports",
)


@pytest.fixture(scope="module")
def small_database(tmp_path_factory):
    """cpu_nvtx_small converted: its NAME.duckdb."""
    res = convert(SMALL, Options(), root=tmp_path_factory.mktemp("contract-ws"))
    return res.workspace.database


def test_each_view_python_reads_is_declared_once(small_database):
    """Every view the orchestration reads is one packaged file's role, and
    its query runs on a real conversion's database (merge-reports: the view
    is the merge's, sql/merge/10_inputs)."""
    from nsys_duck import merge

    con = duckdb.connect(str(small_database), read_only=True)
    try:
        for role in ORCHESTRATION_ROLES:
            query = contract.query(role, "*")
            if role == "merge-reports":
                made = {n for f in merge.merge_files() for _, n in pipeline.created_objects(f.text)}
                assert contract.view_with_role(role).view in made
                continue
            con.execute(query).fetchall()
    finally:
        con.close()


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
    """The writers, the checks, the pipeline and the orchestration (convert,
    merge, outputs, formats, report) name no SQL object in a query string
    (docstrings aside): they read the SQL's header tags (``-- Role:``).
    What is left names views to the user (help, hints, error messages) or
    is validate's own SQL over a written file."""
    root = pipeline.packaged_sql_dir()
    names = {
        name
        for path in root.rglob("*.sql")
        for _, name in pipeline.created_objects(path.read_text(encoding="utf-8"))
    }
    modules = ("writers", "lanes", "checks", "pipeline", "contract")
    for module in (*modules, "convert", "merge", "outputs", "formats", "report"):
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
    rel = "40_trace/54_parts/60_trace_events_parted.sql"
    sql = _override(tmp_path, rel)
    path = sql / rel
    path.write_text(
        path.read_text().replace("CAST(part AS INTEGER) AS part", "part"), encoding="utf-8"
    )
    with pytest.raises(SqlStageError, match=rf"{rel} \(view trace_events_parted\): column part"):
        convert(SMALL, Options(sql_dir=sql, database=False), root=tmp_path / "ws")


# A merge's composition is the SQL's: the "-- Merge" and "-- Merge runs"
# tags (docs/sql.md, "Header tags"); these tests fail when a tag goes
# missing or is wrong.


def _code(text: str) -> str:
    """A SQL file's statements: comments and COMMENT ON statements left out."""
    return re.sub(r"(?is)COMMENT ON .*?;", "", re.sub(r"--[^\n]*", "", text))


def _merge_faults() -> list[str]:
    """What the packaged SQL's Merge tags would break in a merge: a relation
    a merge file reads that no merge file creates, made in a conversion
    and not renumbered (it would be missing, or a report's own); a Parquet
    file read that is not copied; a relation copied that no merge file
    reads; an object two merge files create (a file not left out)."""
    from nsys_duck import merge

    plan = contract.merge_composition()
    files = merge.merge_files()
    run = {f.relpath for f in files}
    made = {n: f.relpath for f in files for _, n in pipeline.created_objects(f.text)}
    outside = {
        name.split(".")[-1]
        for f in pipeline.sql_files()
        if f.relpath not in run
        for _, name in pipeline.created_objects(f.text)
    }
    faults = []
    read: set[str] = set()
    for f in files:
        code = _code(f.text)
        parquet = set(re.findall(r"(\w+)\.parquet", code))
        words = set(re.findall(r"\w+", re.sub(r"'(?:[^']|'')*'", "", code)))  # no strings
        read |= parquet | words
        faults += [
            f"{f.relpath} reads {r}.parquet, not copied" for r in parquet - set(plan.relations)
        ]
        unmet = (words & outside) - set(made) - set(plan.renumbered)
        faults += [f"{f.relpath} reads {r}, not renumbered" for r in sorted(unmet)]
        for _, name in pipeline.created_objects(f.text):
            if made[name] != f.relpath:
                faults.append(f"{f.relpath} creates {name}, as {made[name]} does")
    faults += [f"{r} is copied, no merge file reads it" for r in plan.relations if r not in read]
    return faults


def test_a_merge_copies_what_its_sql_reads():
    plan = contract.merge_composition()
    assert _merge_faults() == []
    assert "merge/10_inputs" in plan.folders and "int_slices_on_tracks" in plan.renumbered
    from nsys_duck import merge

    assert not {f.relpath for f in merge.merge_files()} & set(plan.not_run)


@pytest.mark.parametrize(
    ("rel", "old", "new", "fault"),
    [
        # a relation the trace stages read is no longer renumbered
        ("30_intermediate/50_tracks/50_int_flows.sql", "-- Merge: renumbered\n", "", "int_flows"),
        # the rank merge_reports reads as Parquet is no longer copied
        ("20_staging/stg_capture_rank.sql", "-- Merge: copied", "--", "stg_capture_rank.parquet"),
        # the conversion's summary runs again beside the merge's
        ("40_trace/40_trace_summary.sql", "copied, not run", "copied", "creates trace_summary"),
        # the check that counts against the export's tables runs in the merge
        ("55_pipeline_checks/check_source_counts.sql", "-- Merge: not run", "--", "not renumbered"),
        # a folder left out: int_device_properties, the Kineto trace's, is read by none
        ("merge/10_inputs/10_merge_reports.sql", " 60_kineto,", "", "int_device_properties"),
    ],
)
def test_a_missing_merge_tag_is_found(tmp_path, monkeypatch, rel, old, new, fault):
    root = tmp_path / "sql"
    shutil.copytree(pipeline.packaged_sql_dir(), root)
    text = (root / rel).read_text(encoding="utf-8")
    assert old in text
    (root / rel).write_text(text.replace(old, new, 1), encoding="utf-8")
    monkeypatch.setattr(pipeline, "packaged_sql_dir", lambda: root)
    monkeypatch.setattr(contract, "packaged_sql_dir", lambda: root)
    faults = _merge_faults()
    assert any(fault in f for f in faults), faults


@pytest.mark.parametrize("tag", ["renumbred", "renumbered, copied"])
def test_an_unknown_merge_tag_is_refused(tmp_path, tag):
    path = tmp_path / "x.sql"
    path.write_text(f"-- x: a view\n-- Merge: {tag}\n\nCREATE VIEW x AS SELECT 1;\n")
    with pytest.raises(SqlStageError, match=r"x\.sql: Merge tag"):
        contract.declaration(pipeline.SqlFile("x.sql", path))


def test_the_summary_a_run_prints_is_declared_in_the_sql():
    """convert and merge print the rows of the views with roles summary and
    split-summary, in that order; a merge's own trace_summary replaces the
    conversion's (40_trace_summary.sql is not run in a merge)."""
    from nsys_duck import merge

    convert_queries = contract.summary_queries(pipeline.sql_files())
    merge_queries = contract.summary_queries(merge.merge_files())
    split = "SELECT metric, value FROM trace_split_summary"
    assert convert_queries == [
        "SELECT metric, value FROM trace_summary ORDER BY ord, metric",
        split,
    ]
    assert merge_queries == convert_queries  # same views by name, the merge's file
    assert not any(f.relpath == "40_trace/40_trace_summary.sql" for f in merge.merge_files())


def test_each_header_tag_is_parsed_in_one_module():
    """The pattern of every header tag Python reads is written once, in
    nsys_duck/headers.py; the other modules call it."""
    tags = ("hook:", "Column comments from", "In convert", "Python reads", "Merge runs")
    package = Path(nsys_duck.__file__).parent
    for path in sorted(package.glob("*.py")):
        if path.name == "headers.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            is_compile = (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", getattr(node.func, "id", "")) == "compile"
            )
            if is_compile and node.args and isinstance(node.args[0], ast.Constant):
                pattern = str(node.args[0].value)
                assert not any(t in pattern for t in tags), f"{path.name} parses {pattern!r}"


def test_a_sql_dir_copy_at_an_old_path_is_named(tmp_path):
    """A --sql-dir file kept at a path the packaged file left (before the
    stages moved into domain folders) runs beside it, not instead: the
    summary says so and where to put it."""
    (packaged,) = [f.relpath for f in pipeline.sql_files() if f.relpath.endswith("_int_flows.sql")]
    sql = tmp_path / "sql"
    old = sql / "30_intermediate" / "80_int_flows.sql"
    old.parent.mkdir(parents=True)
    old.write_text((pipeline.packaged_sql_dir() / packaged).read_text(encoding="utf-8"))
    assert pipeline.shadowing(pipeline.sql_files(sql)) == [
        ("30_intermediate/80_int_flows.sql", "int_flows", packaged)
    ]
    res = convert(SMALL, Options(sql_dir=sql, database=False), root=tmp_path / "ws")
    assert res.added_sql == ["30_intermediate/80_int_flows.sql"]
    (note,) = [n for n in res.notes if "80_int_flows" in n]
    assert f"put your file at {packaged}" in note


def test_every_role_is_documented():
    """Each role a packaged file declares is named in docs/sql.md's header
    tags and in contract.py's docstring (where a maintainer looks first)."""
    docs = (Path(nsys_duck.__file__).parent.parent / "docs" / "sql.md").read_text()
    roles = {r for d in contract.packaged().values() for r in d.roles}
    assert roles
    for role in sorted(roles):
        assert f"`{role}`" in docs, f"docs/sql.md does not name role {role}"
        assert f"``{role}``" in contract.__doc__, f"contract.py does not name role {role}"
