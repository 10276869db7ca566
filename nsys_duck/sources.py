"""Register an Nsight Parquet export as DuckDB views ``nsys.<TABLE>``.

The SQL stages read Nsight's tables only through the ``nsys`` schema; the
file ``sql/10_sources/nsys_tables.sql`` then creates typed empty stand-ins
for tables a lazy export left out (nsys-tables.md 0: no file = no rows).
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from .errors import InputError


def sql_string(value: str) -> str:
    """Quote ``value`` as a DuckDB string literal (single quotes doubled).

    Used for file paths in view definitions, where bind parameters are not
    allowed; user data never reaches SQL text any other way.
    """
    return "'" + str(value).replace("'", "''") + "'"


def parquet_tables(export_dir: Path) -> dict[str, Path]:
    """Map table name -> Parquet file for every ``<TABLE>.parquet`` in the folder."""
    return {p.stem: p for p in sorted(Path(export_dir).glob("*.parquet")) if p.is_file()}


def is_export_dir(path: Path) -> bool:
    """True when ``path`` looks like ``nsys export --type=parquetdir`` output.

    Every such export has ``StringIds.parquet`` or ``META_DATA_EXPORT.parquet``
    (written even when lazy, since they are never empty).
    """
    path = Path(path)
    return path.is_dir() and any(
        (path / f"{name}.parquet").is_file() for name in ("META_DATA_EXPORT", "StringIds")
    )


def register_export(con: duckdb.DuckDBPyConnection, export_dir: Path,
                    *, relative_to: Path | None = None) -> dict[str, list[str]]:
    """Create schema ``nsys`` with one view per Parquet table of the export.

    Args:
        con: connection to register into.
        export_dir: the Parquet folder.
        relative_to: when given, view definitions use paths relative to this
            folder (for a database file that moves with its workspace).

    Returns:
        table name -> column names, as discovered from the Parquet schemas
        (the template parameters of the SQL stages).

    Raises:
        InputError: a Parquet file cannot be read (truncated, corrupted).
    """
    con.execute("CREATE SCHEMA IF NOT EXISTS nsys")
    columns: dict[str, list[str]] = {}
    for table, path in parquet_tables(export_dir).items():
        try:
            schema = pq.read_schema(path)
        except Exception as exc:  # pyarrow raises several types for bad files
            raise InputError(f"cannot read {path}: {exc}") from None
        columns[table] = list(schema.names)
        shown = path.resolve()
        if relative_to is not None:
            try:
                shown = path.resolve().relative_to(Path(relative_to).resolve())
            except ValueError:
                pass
        quoted_table = '"' + table.replace('"', '""') + '"'
        con.execute(
            f"CREATE OR REPLACE VIEW nsys.{quoted_table} AS "
            f"SELECT * FROM read_parquet({sql_string(str(shown))})"
        )
    return columns
