"""``NAME/NAME.duckdb``: the pipeline's views and tables, kept for ad-hoc SQL.

The conversion runs in this file itself (a temporary name, renamed into
place with the other outputs): every stage's tables are written once, and
DuckDB can evict them to the file instead of holding them in memory or
spilling them. Its catalog holds the macros, the ``nsys.*`` views over
``parquet/`` (by RELATIVE path once the run ends) and every stage's views
and tables. Relative paths resolve against DuckDB's
``file_search_path`` (or the working directory), so the workspace folder can
be moved: open it with ``cd WORKSPACE && duckdb NAME.duckdb`` or
``nsys-duck sql NAME``.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from .sources import sql_string


def open_database(path: Path, workspace_dir: Path) -> duckdb.DuckDBPyConnection:
    """Open a saved ``NAME.duckdb`` read-only, resolving ``parquet/`` paths in ``workspace_dir``."""
    con = duckdb.connect(str(path), read_only=True)
    con.execute(f"SET file_search_path = {sql_string(str(workspace_dir))}")
    return con


def relativize_sources(path: Path, export_dir: Path, workspace_dir: Path) -> None:
    """Point the saved ``nsys.*`` views at ``parquet/...`` relative to the workspace.

    The conversion itself reads the export by absolute path (a relative path
    would resolve against the user's working directory); the saved copy gets
    paths relative to ``workspace_dir`` so the folder can move.
    """
    try:
        rel = Path(export_dir).resolve().relative_to(Path(workspace_dir).resolve())
    except ValueError:
        return
    abs_prefix = sql_string(str(Path(export_dir).resolve()) + "/")[:-1]
    rel_prefix = sql_string(rel.as_posix() + "/")[:-1]
    con = duckdb.connect(str(path))
    try:
        # CREATE VIEW binds now: resolve the relative paths in the workspace
        con.execute(f"SET file_search_path = {sql_string(str(workspace_dir))}")
        views = con.execute(
            "SELECT view_name, sql FROM duckdb_views() "
            "WHERE schema_name = 'nsys' AND NOT internal").fetchall()
        for _, sql in views:
            if abs_prefix in sql:
                con.execute(sql.replace("CREATE VIEW", "CREATE OR REPLACE VIEW", 1)
                            .replace(abs_prefix, rel_prefix))
    finally:
        con.close()
