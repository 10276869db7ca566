"""``NAME/NAME.duckdb``: the pipeline's views and tables, kept for ad-hoc SQL.

The conversion runs in this file itself (a temporary name, renamed into
place with the other outputs): every stage's tables are written once, and
DuckDB can evict them to the file instead of holding them in memory or
spilling them.

The file is self-contained: it reads no file path. The export tables the
SQL stages read are copied into schema ``nsys`` as tables when the export
is registered (``sources.register_export(materialize=...)``); any other
export table a saved view still reads is copied at the end, and the views
over the rest of ``parquet/`` are dropped (:func:`keep_export_tables`). So
``ATTACH`` of any number of these files, from any folder and after the
workspace moved, reads each report's own rows (issue 13's point 2; a view
over ``parquet/`` by relative path read whatever ``parquet/`` the current
folder had).

It is written in DuckDB 1.4's storage format (:data:`STORAGE_COMPATIBILITY`)
so the DuckDB CLI on PyPI (``duckdb-cli`` 1.5) and Python's DuckDB 1.4/1.5
open it, as does 2.x.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb

from .errors import WorkspaceError

# The oldest DuckDB that opens NAME.duckdb: 1.4, the long-term-support
# release; 1.5.x (the DuckDB CLI on PyPI) and 2.x read it too.
STORAGE_COMPATIBILITY = "v1.4.0"
WRITE_CONFIG = {"storage_compatibility_version": STORAGE_COMPATIBILITY}


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def keep_export_tables(con: duckdb.DuckDBPyConnection) -> tuple[list[str], list[str]]:
    """Leave no view over ``parquet/`` in the database ``con`` is writing.

    Every ``nsys.<TABLE>`` that is still a view (an export table the stages
    did not read) becomes a table when some other view or macro of the
    database names it (a ``--sql-dir`` stage may read any export table), and
    is dropped otherwise: its rows stay in ``parquet/``.

    Returns:
        (tables copied, views dropped), by table name.
    """
    remaining = [
        name
        for (name,) in con.execute(
            "SELECT view_name FROM duckdb_views() "
            "WHERE schema_name = 'nsys' AND NOT internal AND database_name = current_database()"
        ).fetchall()
    ]
    if not remaining:
        return [], []
    readers = " ".join(
        sql or ""
        for (sql,) in con.execute(
            "SELECT sql FROM duckdb_views() WHERE schema_name <> 'nsys' AND NOT internal "
            "AND database_name = current_database() "
            "UNION ALL SELECT macro_definition FROM duckdb_functions() "
            "WHERE function_type IN ('macro', 'table_macro') AND NOT internal "
            "AND database_name = current_database()"
        ).fetchall()
    )
    copied, dropped = [], []
    for name in remaining:
        named = re.compile(
            r'\bnsys\s*\.\s*(?:"'
            + re.escape(name.replace('"', '""'))
            + r'"|'
            + re.escape(name)
            + r"\b)",
            re.IGNORECASE,
        )
        if named.search(readers):
            tmp = _quote(f"{name}__copy")
            con.execute(f"CREATE TABLE nsys.{tmp} AS SELECT * FROM nsys.{_quote(name)}")
            con.execute(f"DROP VIEW nsys.{_quote(name)}")
            con.execute(f"ALTER TABLE nsys.{tmp} RENAME TO {_quote(name)}")
            copied.append(name)
        else:
            con.execute(f"DROP VIEW nsys.{_quote(name)}")
            dropped.append(name)
    return copied, dropped


def open_database(path: Path) -> duckdb.DuckDBPyConnection:
    """Open a saved ``NAME.duckdb`` read-only (it reads no other file).

    Raises:
        WorkspaceError: the file is not a DuckDB database this DuckDB reads
            (damaged, or written by a newer DuckDB), or another program
            holds it open for writing (a problem of the file, not of the
            NAME given: exit status 1, not 2).
    """
    try:
        return duckdb.connect(str(path), read_only=True)
    except duckdb.Error as exc:
        text = " ".join(str(exc).split())
        if "lock" in text.lower():
            raise WorkspaceError(
                f"{path.name} is open for writing in another program "
                "(DuckDB allows one writer); close it, or open it there "
                "read-only (duckdb -readonly)"
            ) from None
        raise WorkspaceError(
            f"cannot open {path.name} ({text[:200]}); convert the report again to rewrite it"
        ) from None
