"""The conversion SQL as documented models over domain tables (issue 11).

Checks, on real reports: every stage file creates one object named after the
file, its header's ``Reads:`` line lists exactly the relations its SQL reads
(found by DuckDB's own parser), every created object has a comment and every
column of a public object too, domain literals live only in
``sql/05_domain``, and editing one row of ``copy_kinds`` through
``--sql-dir`` changes the trace.
"""

from __future__ import annotations

import re

import duckdb
import pytest

from nsys_duck import headers
from nsys_duck.convert import Options, convert
from nsys_duck.pipeline import DEFAULT_OPTIONS, created_objects, packaged_sql_dir, sql_files
from tests.paths import SHARED

REPORTS = SHARED / "data" / "reports"
EXPORT = REPORTS / "raiderstream_tiny" / "parquet"  # H2D and D2H copies, a kernel

# Files exempt from "one object per file": the shared scalar macros, and the
# typed stand-ins for every Nsight table (Python reads that file's DDL).
MULTI_OBJECT = {"00_macros/macros.sql", "10_sources/nsys_tables.sql"}

pytestmark = pytest.mark.skipif(not EXPORT.is_dir(), reason="shared reports missing")


def _stage_files():
    return [
        f
        for f in sql_files()
        if f.relpath.split("/", 1)[0]
        in {
            "00_macros",
            "05_domain",
            "10_sources",
            "20_staging",
            "30_intermediate",
            "40_trace",
            "60_kineto",
        }
    ]


def _report_files():
    """sql/reports/: the files of ``nsys-duck report`` (nsys_duck/report.py).
    Plain SELECTs run on a read-only NAME.duckdb, not stages: they create
    no object (so no COMMENT ON), and their header's Reads: line and the
    domain-literal rule apply as to the stages."""
    return sql_files(folders=("reports",))


def _code(text: str) -> str:
    """SQL without comment lines and trailing comments (quotes respected)."""
    out = []
    for line in text.splitlines():
        if line.lstrip().startswith("--"):
            continue
        i = line.find("--")
        out.append(line[:i] if i >= 0 and line[:i].count("'") % 2 == 0 else line)
    return "\n".join(out)


def _header(text: str) -> str:
    lines = []
    for line in text.splitlines():
        if not line.startswith("--"):
            if lines and line.strip():
                break
            continue
        lines.append(line[2:].strip())
    return " ".join(lines)


def _reads_line(text: str) -> set[str] | None:
    m = re.search(r"Reads:\s*(.*?)\.(?:\s|$)", _header(text))
    if not m:
        return None
    body = m.group(1).strip()
    if body.startswith("nothing"):
        return set()
    return {item.strip() for item in body.split(",")}


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    res = convert(EXPORT, Options(), root=root)
    con = duckdb.connect(str(res.workspace.database), read_only=True)
    yield res, con
    con.close()


# Besides MULTI_OBJECT, the other files that create more than one object:
# the check messages' two scalar macros, and a merge's int_slices and
# int_slices_placed (views of the merged int_slices_on_tracks).
MORE_OBJECTS = {"50_checks/00__chk_text.sql", "merge/10_inputs/20_merge_relations.sql"}


def _every_sql_file():
    """Every .sql file of every folder of sql/ (stages, checks, merge,
    reports, validate), by relative path."""
    root = packaged_sql_dir()
    return sql_files(folders=tuple(sorted(p.name for p in root.iterdir() if p.is_dir())))


def test_each_file_creates_one_object_named_after_it():
    """In every folder: a file creates the one object it is named after
    (``NN_`` or ``NN__`` then the name, or the name alone); a report
    (sql/reports/) is a plain SELECT and creates none."""
    files = _every_sql_file()
    assert len(files) > 100
    for f in files:
        if f.relpath in MULTI_OBJECT | MORE_OBJECTS or f.relpath.startswith("reports/"):
            continue
        objects = {name for _, name in created_objects(f.text)}
        stem = re.sub(r"^\d+_", "", f.relpath.rsplit("/", 1)[1])[: -len(".sql")]
        assert objects == {stem}, f"{f.relpath} creates {sorted(objects)}"


def test_numbers_are_unique_in_each_folder():
    """A number orders a file or sub-folder among its folder's entries: no
    two entries of one folder share it (the run order never rests on the
    names after it)."""
    root = packaged_sql_dir()
    for folder in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        numbers = [
            m.group(1)
            for p in folder.iterdir()
            if (p.is_dir() or p.suffix == ".sql") and (m := re.match(r"^(\d+)_", p.name))
        ]
        dup = sorted({n for n in numbers if numbers.count(n) > 1})
        assert not dup, f"{folder.relative_to(root)}: numbers used twice: {dup}"


def test_each_stage_reads_only_what_runs_before_it():
    """The run order (sorted folder by folder, pipeline.run_order) is valid:
    every relation a stage's Reads: line names (checked against DuckDB's
    parser below) is a source table (nsys.*, discovered) or is created by
    a file that runs before it; _lane_assignments is the lanes hook's."""
    made: set[str] = {"_lane_assignments"}
    checked = 0
    for f in sql_files():
        listed = _reads_line(f.text) or set()
        if any("<" in x for x in listed):
            listed = set()  # the per-export template list of stg_enum_labels
        early = {r for r in listed if not r.startswith("nsys.")} - made
        assert not early, f"{f.relpath} reads {sorted(early)} before they are created"
        made |= {name for _, name in created_objects(f.text)}
        checked += 1
    assert checked > 100


def _reads_of(con, sql: str, created: set[str]) -> set[str]:
    names: set[str] = set()
    for st in duckdb.extract_statements(sql):
        q = _code(st.query)
        if re.match(
            r"\s*(COMMENT|ALTER|CREATE\s+(OR\s+REPLACE\s+)?MACRO|CREATE\s+TABLE\s+IF)", q, re.I
        ):
            continue
        q = re.sub(r"^\s*CREATE\s+OR\s+REPLACE\s+(VIEW|TABLE)\s+[\w.]+\s+AS\s+", "", q, flags=re.I)
        q = re.sub(r"^\s*INSERT\s+INTO\s+[\w.]+\s+", "", q, flags=re.I)
        # get_table_names cannot bind an ASOF join (DuckDB 2.0); as a
        # plain join it reads the same relations
        q = re.sub(r"\bASOF\s+", "", q, flags=re.I)
        names |= {
            n.split(" AS ")[0].split(" as ")[0] for n in con.get_table_names(q, qualified=True)
        }
    return names - created


def test_reads_line_lists_exactly_what_the_sql_reads(converted):
    import jinja2

    con = duckdb.connect()
    macros = {}
    for f in _stage_files():  # the macros, so the parser knows them
        for kind, name in created_objects(f.text):
            if kind == "macro":
                macros[name] = f
    for st in duckdb.extract_statements(
        (packaged_sql_dir() / "00_macros" / "macros.sql").read_text()
    ):
        con.execute(st.query)
    con.execute("CREATE MACRO context_device(a, b, c, d) AS d")
    con.execute("CREATE MACRO trace_keeps(a, b, c, d) AS TRUE")
    # the relations a macro reads count for the files that call it
    macro_reads = {
        "context_device": {"stg_context_devices"},
        "trace_keeps": {"trace_selection", "trace_kept_pids"},
    }
    assert set(macros) >= set(macro_reads)
    checked = 0
    for f in _stage_files():
        listed = _reads_line(f.text)
        assert listed is not None, f"{f.relpath}: no 'Reads:' line in its header"
        if f.relpath in MULTI_OBJECT or any("<" in x for x in listed):
            continue  # macros; the per-export template list of stg_export_tables
        if any(kind == "macro" for kind, _ in created_objects(f.text)):
            assert listed == macro_reads[created_objects(f.text)[0][1]], f.relpath
            continue
        sql = (
            jinja2.Environment()
            .from_string(f.text)
            .render(**{**DEFAULT_OPTIONS, "devices": [0]}, export_tables=[])
        )
        created = {name for _, name in created_objects(f.text)}
        actual = _reads_of(con, sql, created)
        for name, extra in macro_reads.items():
            if re.search(rf"\b{name}\(", _code(f.text)):
                actual |= extra
        assert listed == actual, (
            f"{f.relpath}: Reads lists {sorted(listed)}, SQL reads {sorted(actual)}"
        )
        checked += 1
    assert checked > 30


def test_report_files_are_plain_selects_reading_what_their_header_says():
    import jinja2

    con = duckdb.connect()
    for st in duckdb.extract_statements(
        (packaged_sql_dir() / "00_macros" / "macros.sql").read_text()
    ):
        con.execute(st.query)
    files = _report_files()
    assert {f.relpath for f in files} >= {
        "reports/top_kernels.sql",
        "reports/api_summary.sql",
        "reports/nvtx_summary.sql",
        "reports/memcpy.sql",
        "reports/gpu_idle.sql",
    }
    for f in files:
        assert not created_objects(f.text), f"{f.relpath} creates an object"
        listed = _reads_line(f.text)
        assert listed is not None, f"{f.relpath}: no 'Reads:' line in its header"
        # by_report (a merged workspace) reads merge_reports too
        sql = jinja2.Environment().from_string(f.text).render(by_report=True)
        (stmt,) = duckdb.extract_statements(sql)
        actual = _reads_of(con, stmt.query, set())
        assert listed == actual, (
            f"{f.relpath}: Reads lists {sorted(listed)}, SQL reads {sorted(actual)}"
        )


def test_every_object_and_public_column_has_a_comment(converted):
    _, con = converted
    made = {
        name
        for f in _stage_files()
        if f.relpath not in MULTI_OBJECT
        for kind, name in created_objects(f.text)
        if kind != "macro"
    }
    rows = con.execute(
        "SELECT view_name, comment FROM duckdb_views() WHERE schema_name = 'main' "
        "UNION ALL SELECT table_name, comment FROM duckdb_tables() "
        "WHERE schema_name = 'main'"
    ).fetchall()
    comments = dict(rows)
    assert made <= set(comments), sorted(made - set(comments))
    missing = sorted(n for n in made if not comments[n])
    assert not missing, f"objects without COMMENT ON: {missing}"


def test_every_public_column_has_a_comment(converted):
    _, con = converted
    made = {
        name
        for f in _stage_files()
        if f.relpath not in MULTI_OBJECT
        for kind, name in created_objects(f.text)
        if kind != "macro"
    }
    cols = con.execute(
        "SELECT table_name, column_name FROM duckdb_columns() "
        "WHERE schema_name = 'main' AND comment IS NULL"
    ).fetchall()
    bare = sorted(f"{t}.{c}" for t, c in cols if t in made and not t.startswith("_"))
    assert not bare, f"public columns without COMMENT ON COLUMN: {bare}"


# Check views whose columns were never documented (message, seq and ids as
# the view's COMMENT ON VIEW says): document them, then drop them from here.
BARE_CHECKS = {
    "check_flow_targets",
    "check_kernel_launch_flows",
    "check_source_counts",
    "check_time_range",
    "check_tracks",
}


def test_every_column_the_conversion_makes_has_a_comment(converted):
    """Every column of every public view and table a conversion's SQL
    creates (stages and checks, schema main) has a non-empty comment, its
    own COMMENT ON COLUMN or one inherited through the file header's
    "Column comments from:" line: inheritance never leaves one bare."""
    _, con = converted
    made = {
        name
        for f in _every_sql_file()
        for kind, name in created_objects(f.text)
        if kind != "macro" and not name.startswith("_") and name not in BARE_CHECKS
    }
    cols = con.execute(
        "SELECT table_name, column_name, comment FROM duckdb_columns() WHERE schema_name = 'main'"
    ).fetchall()
    seen = {t for t, _, _ in cols if t in made}
    assert len(seen) > 80, sorted(seen)
    bare = sorted(f"{t}.{c}" for t, c, text in cols if t in seen and not (text or "").strip())
    assert not bare, f"columns without a comment: {bare}"


_COLUMN_COMMENT = re.compile(
    r"^COMMENT\s+ON\s+COLUMN\s+[\w.{} ]+?\s+IS\s+'((?:[^']|'')*)'", re.IGNORECASE | re.MULTILINE
)
# Word-for-word repeated COMMENT ON COLUMN texts (statements beyond the first
# of each text) across sql/: 258 before passed-through columns inherited
# their comments (issue 27). What is left is made in each place: the staging
# views each compute os_pid, start_ns... from their own Nsight table, the
# checks each compute message and seq, int_slices unions the slice kinds.
REPEATED_COMMENTS_BOUND = 87


def test_a_column_is_documented_once_where_it_is_made():
    texts: dict[str, int] = {}
    for f in _every_sql_file():
        for text in _COLUMN_COMMENT.findall(f.text):
            key = " ".join(text.split())
            texts[key] = texts.get(key, 0) + 1
    surplus = sum(n - 1 for n in texts.values())
    assert surplus <= REPEATED_COMMENTS_BOUND, (
        f"{surplus} repeated COMMENT ON COLUMN texts (bound {REPEATED_COMMENTS_BOUND}): "
        "a column passed through unchanged takes its source's comment through the "
        "file header's 'Column comments from:' line"
    )


def test_column_comments_come_from_relations_the_file_reads():
    for f in _every_sql_file():
        sources = set(headers.comment_sources(f.text))
        if not sources:
            continue
        reads = _reads_line(f.text) or set()
        assert sources <= reads, f"{f.relpath}: comments from {sorted(sources - reads)}, not read"


def test_domain_literals_live_only_in_05_domain():
    domain = {
        f.relpath: _code(f.text) for f in _stage_files() if f.relpath.startswith("05_domain/")
    }
    for table in (
        "copy_kinds",
        "nvtx_event_types",
        "track_classes",
        "sync_apis",
        "gpu_activity_kinds",
        "flow_kinds",
    ):
        assert f"05_domain/{table}.sql" in domain
    words = [
        "'PCIe Usage'",
        "'CUDA Core Timeline'",
        "'D2D Copy'",
        "'Unified Memory'",
        "'NVTX Kernel'",
        "'NVTX Thread'",
        "'CUDA API'",
        "'CUDA Sync'",
        "'Host-to-Device'",
        "'memcpy H2D'",
        "'memcpy other'",
        "'cudaDeviceSynchronize'",
        "'cuStreamSynchronize'",
        "'launch_core'",
        "'copy_pcie'",
    ]
    for f in [*_stage_files(), *_report_files()]:
        if f.relpath.startswith("05_domain/"):
            continue
        code = _code(f.text)
        for w in words:
            assert w not in code, f"{f.relpath} writes the domain literal {w}"
        # copyKind codes and NVTX eventType codes
        assert not re.search(r"copy_?[kK]ind\w*\s*(IN\s*\(|=\s*\d)", code), f.relpath
        assert not re.search(r"event_?[tT]ype\s*(IN\s*\(\s*\d|=\s*\d)", code), f.relpath


def _summary(res):
    return dict(res.summary)


def test_one_row_of_copy_kinds_moves_h2d_copies_off_pcie(converted, tmp_path):
    base, con = converted
    sql = tmp_path / "sql" / "05_domain"
    sql.mkdir(parents=True)
    src = (packaged_sql_dir() / "05_domain" / "copy_kinds.sql").read_text()
    row = "(1, 'Host-to-Device', 'pcie', 'memcpy H2D', 10, FALSE)"
    assert row in src
    (sql / "copy_kinds.sql").write_text(
        src.replace(row, "(1, 'Host-to-Device', 'none', 'memcpy other', 13, FALSE)")
    )
    edited = convert(EXPORT, Options(sql_dir=tmp_path / "sql"), root=tmp_path / "ws")
    assert edited.overridden_sql == ["05_domain/copy_kinds.sql"]
    e = duckdb.connect(str(edited.workspace.database), read_only=True)

    def count(c, q):
        return c.execute(q).fetchall()[0][0]

    h2d = count(con, "SELECT count(*) FROM int_gpu_ops WHERE copy_kind = 1")
    assert h2d > 0
    pcie = "SELECT count(*) FROM trace_slices WHERE cat = 'memcpy_pcie'"
    flows = "SELECT count(*) FROM int_flows WHERE flow_cat = 'copy_pcie' AND is_placeable"
    assert count(e, pcie) == count(con, pcie) - h2d
    assert count(e, flows) == count(con, flows) - h2d
    before, after = _summary(base), _summary(edited)
    assert after["memcpy H2D"] == 0 and before["memcpy H2D"] == h2d
    assert after["memcpy other"] == before["memcpy other"] + h2d
    assert after["PCIe copy flows"] == before["PCIe copy flows"] - h2d
    e.close()


def test_null_or_unknown_copy_kind_counts_as_memcpy_other(tmp_path):
    """copy_kinds' NULL row is the bucket of NULL and unlisted codes."""
    con = duckdb.connect()
    for f in _stage_files():
        if f.relpath == "05_domain/copy_kinds.sql":
            for st in duckdb.extract_statements(f.text):
                con.execute(st.query)
    assert con.execute("SELECT count(*) FROM copy_kinds WHERE copy_kind IS NULL").fetchall() == [
        (1,)
    ]
    assert con.execute(
        "SELECT summary_bucket, projection FROM copy_kinds WHERE copy_kind IS NULL"
    ).fetchall() == [("memcpy other", "none")]


def _where_things_live() -> dict[str, str]:
    """README's "Where things live" block: each sql/ folder it lists (a
    sub-folder as an indented ``NN_name/`` line under its parent), with its
    words."""
    text = (packaged_sql_dir().parent / "README.md").read_text(encoding="utf-8")
    block = text.split("### Where things live", 1)[1].split("```", 2)[1]
    listed: dict[str, str] = {}
    parent = None
    for line in block.splitlines():
        m = re.match(r"^(sql/[\w]+/)\s+(.*)$", line)
        if m:
            parent = m.group(1)
            listed[parent] = m.group(2)
            continue
        m = re.match(r"^\s+(\w+/)\s+(.*)$", line)
        if m and parent:
            listed[parent + m.group(1)] = m.group(2)
        elif not line.startswith(" "):
            parent = None
    return listed


def test_readme_lists_every_sql_folder():
    """README's "Where things live" names every folder of sql/ (and no
    other), sub-folders under their parent, in the order the tree sorts."""
    root = packaged_sql_dir()
    if not (root.parent / "README.md").is_file():
        pytest.skip("README.md is not beside the SQL folder (installed wheel)")
    tree = [
        "sql/" + p.relative_to(root).as_posix() + "/"
        for p in sorted(root.rglob("*"), key=lambda p: p.relative_to(root).parts)
        if p.is_dir()
    ]
    listed = _where_things_live()
    assert list(listed) == tree
    assert all(listed.values())


def test_only_sources_and_staging_read_the_nsight_tables():
    """The raw nsys.* tables are read in 10_sources/ and 20_staging/ only:
    every later stage reads stg_* views (their Reads: lines, which the
    parser check above holds to the SQL)."""
    for f in sql_files():
        if f.relpath.split("/", 1)[0] in {"10_sources", "20_staging"}:
            continue
        raw = sorted(r for r in _reads_line(f.text) or () if r.startswith("nsys."))
        assert not raw, f"{f.relpath} reads {raw}: read them through a stg_ view"


def test_readme_names_only_modules_that_exist():
    """The nsys_duck/ lines of "Where things live" name modules that exist
    (a module renamed or removed makes the block stale)."""
    root = packaged_sql_dir()
    if not (root.parent / "README.md").is_file():
        pytest.skip("README.md is not beside the SQL folder (installed wheel)")
    text = (root.parent / "README.md").read_text(encoding="utf-8")
    block = text.split("### Where things live", 1)[1].split("```", 2)[1]
    named = set(re.findall(r"\b(\w+)\.py\b", block))
    modules = {p.stem for p in (root.parent / "nsys_duck").glob("*.py")}
    assert named and named <= modules, sorted(named - modules)


def test_each_stage_has_one_header():
    """One header a file (what it produces, reads, its invariants): a file
    split from an older one must not keep that file's header too, whose
    second Reads: line would contradict the first. Macros and the typed
    stand-ins read nothing."""
    root = packaged_sql_dir()
    readless = {"00_macros/macros.sql", "10_sources/nsys_tables.sql"}
    readless.add("10_sources/nsys_column_versions.sql")
    for path in sorted(root.rglob("*.sql")):
        rel = path.relative_to(root).as_posix()
        n = len(re.findall(r"^-- Reads:", path.read_text(encoding="utf-8"), re.MULTILINE))
        assert n == (0 if rel in readless else 1), f"{rel}: {n} Reads: lines"


def test_readme_parquet_table_is_the_declared_columns():
    """README's table of NAME.perfetto.parquet lists the columns and types
    trace_slices declares (``-- Columns:``, role parquet; every run checks
    the view has them, contract.check_outputs): a column added, renamed or
    retyped in the SQL makes the table stale."""
    from nsys_duck import contract

    root = packaged_sql_dir()
    if not (root.parent / "README.md").is_file():
        pytest.skip("README.md is not beside the SQL folder (installed wheel)")
    text = (root.parent / "README.md").read_text(encoding="utf-8")
    section = text.split("### Aligned Parquet (`NAME.perfetto.parquet`)", 1)[1]
    rows = section.split("| column | type | meaning |", 1)[1].split("\n\n", 1)[0]
    listed = []
    for row in rows.strip().splitlines()[1:]:
        names, kind = row.split("|")[1:3]
        types = [t.strip() for t in kind.split(",")]
        cols = re.findall(r"`(\w+)`", names)
        listed += zip(cols, types * len(cols) if len(types) == 1 else types, strict=True)
    declared = contract.view_with_role("parquet", sql_files()).columns
    assert sorted(listed) == sorted(declared.items())
