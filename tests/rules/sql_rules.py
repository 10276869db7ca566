"""Rule tests of single views: given rows in a view's inputs, its output rows.

In the style of PerfettoSQL's diff tests: a test names one view (or table)
of ``sql/``, gives a few rows for the relations it reads, runs the one stage
file that creates it on a fresh in-memory DuckDB, and compares the rows the
view yields with the rows the view's header (Invariants) and the output
contract say it must yield.

What is real and what is given:

- the macros (``00_macros``), the domain tables (``05_domain``) and the
  typed stand-ins of every Nsight table (``10_sources``) are run as in a
  conversion; rows given for ``nsys.TABLE`` go into the stand-in, which has
  Nsight's exact column types;
- every other relation created before the view's file is an empty table
  with the columns and types that relation has in a conversion, unless the
  test gives its rows (:func:`relation_types`: the stages run once, on no
  rows, to learn them);
- the view's own file is rendered with the template options of a
  conversion (``options`` overrides some) as for an export that has every
  Nsight table with every column (``export`` narrows that), and run with
  the conversion's hooks (the lane assignment of ``int_slice_lanes``).

Views are named, never file paths: the file that creates a view is found by
scanning ``sql/`` for its ``CREATE``, so renumbered or renamed files keep the
tests working.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence

import duckdb
import pyarrow as pa

from nsys_duck import pipeline
from nsys_duck.convert import HOOKS, STANDINS

# folders whose files run for real before any rule test's view
REAL_FOLDERS = ("00_macros", "05_domain", "10_sources")

Rows = Sequence[Mapping[str, object]]


def _top(relpath: str) -> str:
    return relpath.split("/", 1)[0]


@functools.cache
def stage_files() -> tuple[pipeline.SqlFile, ...]:
    """The packaged stage files in run order."""
    return tuple(pipeline.sql_files())


@functools.cache
def creator_index() -> dict[str, int]:
    """Relation name -> index (in :func:`stage_files`) of the file creating it."""
    out: dict[str, int] = {}
    for i, f in enumerate(stage_files()):
        for _, name in pipeline.created_objects(f.text):
            out.setdefault(name, i)
    return out


@functools.cache
def standin_columns() -> dict[str, list[str]]:
    """Every stand-in Nsight table with every column: an export that has them all."""
    standins = next(f for f in stage_files() if f.relpath == STANDINS)
    con = duckdb.connect()
    try:
        con.execute("CREATE SCHEMA nsys")
        for st in duckdb.extract_statements(pipeline.render(standins, pipeline.Context({}))):
            con.execute(st.query)
        rows = con.execute(
            "SELECT table_name, column_name FROM duckdb_columns() "
            "WHERE schema_name = 'nsys' ORDER BY table_name, column_index"
        ).fetchall()
    finally:
        con.close()
    out: dict[str, list[str]] = {}
    for table, column in rows:
        out.setdefault(table, []).append(column)
    return out


@functools.cache
def relation_types() -> dict[str, list[tuple[str, str]]]:
    """Every relation the stages create (``main`` schema) -> its (column, type)
    list, learnt by running every stage once on an export with no rows."""
    con = duckdb.connect()
    try:
        con.execute("CREATE SCHEMA nsys")
        pipeline.run_pipeline(con, list(stage_files()), pipeline.Context(standin_columns()), HOOKS)
        rows = con.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() "
            "WHERE schema_name = 'main' ORDER BY table_name, column_index"
        ).fetchall()
    finally:
        con.close()
    out: dict[str, list[tuple[str, str]]] = {}
    for table, column, dtype in rows:
        out.setdefault(table, []).append((column, dtype))
    return out


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _insert(con: duckdb.DuckDBPyConnection, relation: str, rows: Rows) -> None:
    """Insert dict rows into an existing table (absent columns: NULL)."""
    schema, _, table = relation.rpartition(".")
    known = {
        c
        for (c,) in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE schema_name = ? AND table_name = ?",
            [schema or "main", table],
        ).fetchall()
    }
    groups: dict[tuple[str, ...], list[list[object]]] = {}
    for row in rows:
        unknown = set(row) - known
        if unknown:
            raise KeyError(f"{relation} has no column {sorted(unknown)}")
        groups.setdefault(tuple(row), []).append(list(row.values()))
    for names, values in groups.items():
        # one Arrow batch per column set (executemany costs ~5 ms a row)
        cols = ", ".join(map(_quote, names))
        try:
            batch = pa.table({n: [v[i] for v in values] for i, n in enumerate(names)})
        except (OverflowError, pa.ArrowException):  # e.g. a uint64 past int64
            con.executemany(
                f"INSERT INTO {relation} ({cols}) VALUES ({', '.join('?' * len(names))})",
                values,
            )
            continue
        con.register("_given_rows", batch)
        con.execute(f"INSERT INTO {relation} ({cols}) SELECT {cols} FROM _given_rows")
        con.unregister("_given_rows")


def _allow_nulls(con: duckdb.DuckDBPyConnection, relation: str) -> None:
    """Drop a stand-in's NOT NULLs: they say the column must exist, while
    NULL values in it are possible (nsys_tables.sql)."""
    table = relation.split(".", 1)[1]
    for (column,) in con.execute(
        "SELECT column_name FROM duckdb_columns() WHERE schema_name = 'nsys' "
        "AND table_name = ? AND NOT is_nullable",
        [table],
    ).fetchall():
        con.execute(f"ALTER TABLE {relation} ALTER COLUMN {_quote(column)} DROP NOT NULL")


def _create_empty(con: duckdb.DuckDBPyConnection, name: str) -> None:
    cols = ", ".join(f"{_quote(c)} {t}" for c, t in relation_types()[name])
    con.execute(f"CREATE TABLE {_quote(name)} ({cols})")


def run_view(
    view: str,
    given: Mapping[str, Rows] | None = None,
    *,
    options: Mapping[str, object] | None = None,
    export: Mapping[str, Iterable[str]] | None = None,
    since: str | None = None,
) -> duckdb.DuckDBPyConnection:
    """A fresh DuckDB on which the file creating ``view`` ran over ``given``.

    Args:
        view: the view/table/macro name, as its file creates it.
        given: relation -> rows (dicts, absent columns NULL); ``nsys.TABLE``
            for an Nsight table, a bare name for a stage's relation.
        options: template options (``nvtx_scope``, ``window_start_s`` ...)
            over :data:`nsys_duck.pipeline.DEFAULT_OPTIONS`.
        export: table -> columns the export has (the templates'
            ``has_table``/``col``); default every stand-in table and column.
        since: run every stage file from the one creating ``since`` up to
            the view's (a chain of views, e.g. the NVTX projection's private
            helpers), instead of the view's file alone.
    """
    given = dict(given or {})
    files = stage_files()
    index = creator_index()
    if view not in index:
        raise KeyError(f"no file of sql/ creates {view}")
    target = index[view]
    first = index[since] if since is not None else target
    columns = {t: list(c) for t, c in (export or standin_columns()).items()}
    ctx = pipeline.Context(columns, dict(options or {}))
    con = duckdb.connect()
    con.execute("CREATE SCHEMA nsys")
    real = [f for i, f in enumerate(files) if i < target and _top(f.relpath) in REAL_FOLDERS]
    if files[target].relpath != STANDINS and all(f.relpath != STANDINS for f in real):
        # the stand-ins always exist (an Nsight table the test gives goes there)
        real.append(next(f for f in files if f.relpath == STANDINS))
    pipeline.run_pipeline(con, real, ctx)
    made = set(relation_types()) & {
        n for (n,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()
    }
    made |= {
        n
        for (n,) in con.execute(
            "SELECT view_name FROM duckdb_views() WHERE NOT internal"
        ).fetchall()
    }
    for name, rows in given.items():
        if name.startswith("nsys."):
            _allow_nulls(con, name)
        elif name not in made:
            if name not in relation_types():
                raise KeyError(f"no stage creates {name}")
            _create_empty(con, name)
            made.add(name)
        _insert(con, name, rows)
    for name in relation_types():
        if name not in made and index.get(name, first) < first:
            _create_empty(con, name)
    # macro-only files of the stages before the view (context_device): real,
    # over the given rows
    macros = [
        f
        for i, f in enumerate(files)
        if i < first
        and _top(f.relpath) not in REAL_FOLDERS
        and {k for k, _ in pipeline.created_objects(f.text)} == {"macro"}
    ]
    chain = [
        f
        for i, f in enumerate(files)
        if first <= i <= target and (i == target or _top(f.relpath) not in REAL_FOLDERS)
    ]
    pipeline.run_pipeline(con, [*macros, *chain], ctx, HOOKS)
    return con


def rows(
    con: duckdb.DuckDBPyConnection,
    query: str,
    columns: str | None = None,
) -> list[tuple]:
    """The rows of a relation (or a SELECT) as tuples, sorted.

    ``columns``: a comma-separated column list (default ``*``).
    """
    sql = (
        query
        if query.lstrip().upper().startswith(("SELECT", "WITH", "FROM"))
        else (f"SELECT {columns or '*'} FROM {query}")
    )
    return sorted(con.execute(sql).fetchall(), key=lambda r: tuple((v is None, str(v)) for v in r))


def view_rows(
    view: str,
    given: Mapping[str, Rows] | None = None,
    columns: str | None = None,
    **kwargs,
) -> list[tuple]:
    """:func:`run_view`, then the view's rows (``columns`` of them), sorted."""
    con = run_view(view, given, **kwargs)
    try:
        return rows(con, view, columns)
    finally:
        con.close()
