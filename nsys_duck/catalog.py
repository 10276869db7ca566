"""``nsys_duck_sql``: the SQL a conversion ran, kept in its database.

DuckDB keeps a view's defining SQL (``duckdb_views().sql``) but not the query
of a ``CREATE TABLE ... AS``, nor the statements that later change a table
(``INSERT INTO``, ``ALTER TABLE``). :func:`save` records every statement the
SQL stages ran, rendered (``--nvtx-scope`` and the export's columns filled
in), with the file it came from (packaged, overridden or added by
``--sql-dir``), into the table ``nsys_duck_sql`` of the same database, so
``nsys-duck views`` and ``nsys-duck explain`` show what ran, not what the
packaged files would render to today.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import duckdb
import pyarrow as pa

from . import pipeline

TABLE = "nsys_duck_sql"

# The object a statement acts on, for the statements that do not create one.
_TARGET = re.compile(
    r"^\s*(?:(INSERT)\s+(?:OR\s+\w+\s+)?INTO|(ALTER)\s+(?:TABLE|VIEW)|(UPDATE)|"
    r"(DELETE)\s+FROM|(DROP)\s+(?:TABLE|VIEW|MACRO)(?:\s+IF\s+EXISTS)?|"
    r"(COMMENT)\s+ON\s+(?:TABLE|VIEW|MACRO)|(COMMENT)\s+ON\s+COLUMN)\s+"
    r"([\w\"]+(?:\s*\.\s*[\w\"]+){0,2})",
    re.IGNORECASE,
)


@dataclass
class Statement:
    """One statement the stages ran: ``seq`` is its position in the run
    (0-based), ``kind`` ``view``/``table``/``macro`` for a CREATE, else the
    verb (``insert``, ``alter``, ``update``, ``delete``, ``drop``,
    ``comment``, ``other``); ``object`` the name it creates or acts on
    (schema-qualified as written, e.g. ``nsys.StringIds``), None for others;
    ``origin`` ``packaged``, ``overridden`` or ``added`` (``--sql-dir``)."""

    seq: int
    file: str
    origin: str
    path: str
    kind: str
    object: str | None
    description: str
    sql: str


def origin(sql_file: pipeline.SqlFile) -> str:
    """``packaged``, ``overridden`` (a ``--sql-dir`` file replacing the
    packaged one) or ``added`` (a ``--sql-dir`` file with no packaged twin)."""
    return "overridden" if sql_file.overridden else "added" if sql_file.added else "packaged"


def classify(query: str) -> tuple[str, str | None]:
    """(kind, object) of one SQL statement (see :class:`Statement`)."""
    created = pipeline.created_objects(query)
    if created:
        return created[0]
    stripped = "\n".join(line.split("--", 1)[0] for line in query.splitlines())
    m = _TARGET.match(stripped)
    if not m:
        return "other", None
    verb = next(g for g in m.groups()[:-1] if g).lower()
    name = re.sub(r"\s+", "", m.group(m.lastindex))
    if m.group(7):  # COMMENT ON COLUMN t.c: the table
        name = name.rsplit(".", 1)[0]
    return verb, name.replace('"', "")


def statements(files: list[pipeline.SqlFile], ctx: pipeline.Context) -> list[Statement]:
    """Every statement of ``files`` rendered with ``ctx``, in run order (what
    :func:`pipeline.run_pipeline` runs with the same arguments).

    Raises:
        SqlStageError: a file's template fails to render.
        duckdb.Error: a rendered file does not split into statements.
    """
    out: list[Statement] = []
    for f in files:
        text = pipeline.render(f, ctx)
        for stmt in duckdb.extract_statements(text):
            query = stmt.query.strip()
            if not query:
                continue
            kind, name = classify(query)
            out.append(
                Statement(
                    len(out),
                    f.relpath,
                    origin(f),
                    str(f.path),
                    kind,
                    name,
                    f.description,
                    query.rstrip(";") + ";",
                )
            )
    return out


def save(
    con: duckdb.DuckDBPyConnection, files: list[pipeline.SqlFile], ctx: pipeline.Context
) -> int:
    """Create (replace) ``nsys_duck_sql`` in ``con`` with the statements
    ``files`` ran rendered with ``ctx``: call it right after
    :func:`pipeline.run_pipeline` with the same ``files`` and ``ctx``.

    Returns:
        the number of statements recorded.
    """
    rows = statements(files, ctx)
    con.execute(f"""CREATE OR REPLACE TABLE {TABLE} (
        seq INTEGER, file VARCHAR, origin VARCHAR, path VARCHAR, kind VARCHAR,
        object VARCHAR, description VARCHAR, sql VARCHAR)""")
    if rows:
        fields = ("seq", "file", "origin", "path", "kind", "object", "description", "sql")
        batch = pa.table({name: [getattr(r, name) for r in rows] for name in fields})
        con.register("_nsys_duck_sql_rows", batch)
        try:
            con.execute(f"INSERT INTO {TABLE} SELECT * FROM _nsys_duck_sql_rows")
        finally:
            con.unregister("_nsys_duck_sql_rows")
    for sql in _COMMENTS:
        con.execute(sql)
    return len(rows)


_COMMENTS = [
    f"COMMENT ON TABLE {TABLE} IS 'Every SQL statement the conversion''s stages ran, "
    "rendered (--nvtx-scope and the export''s columns filled in), in run order: what "
    "nsys-duck views and explain show.'",
    f"COMMENT ON COLUMN {TABLE}.seq IS 'Position in the run (0-based).'",
    f"COMMENT ON COLUMN {TABLE}.file IS 'The SQL file, relative to the SQL root "
    "(e.g. 30_intermediate/50_tracks/50_int_flows.sql).'",
    f"COMMENT ON COLUMN {TABLE}.origin IS 'packaged, overridden (a --sql-dir file "
    "replacing the packaged one) or added (a --sql-dir file with no packaged twin).'",
    f"COMMENT ON COLUMN {TABLE}.path IS 'The file that ran, as the conversion found it.'",
    f"COMMENT ON COLUMN {TABLE}.kind IS 'view, table or macro for a CREATE; else the "
    "verb: insert, alter, update, delete, drop, comment or other.'",
    f"COMMENT ON COLUMN {TABLE}.object IS 'The view, table or macro the statement creates "
    "or acts on (schema-qualified as written); NULL for other statements.'",
    f"COMMENT ON COLUMN {TABLE}.description IS 'The file header''s first paragraph.'",
    f"COMMENT ON COLUMN {TABLE}.sql IS 'The statement as it ran.'",
]


def read(con: duckdb.DuckDBPyConnection) -> list[Statement] | None:
    """The statements recorded in ``con``'s ``nsys_duck_sql``, in run order;
    None when the database has no such table (converted before it existed)."""
    exists = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'main' "
        "AND table_name = ? AND database_name = current_database()",
        [TABLE],
    ).fetchall()
    if not exists[0][0]:
        return None
    return [
        Statement(*row)
        for row in con.execute(
            f"SELECT seq, file, origin, path, kind, object, description, sql FROM {TABLE} "
            "ORDER BY seq"
        ).fetchall()
    ]
