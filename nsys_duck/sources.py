"""Register an Nsight Parquet export as DuckDB views ``nsys.<TABLE>``.

The SQL stages read Nsight's tables only through the ``nsys`` schema; the
file ``sql/10_sources/nsys_tables.sql`` then creates typed empty stand-ins
for tables a lazy export left out (nsys-tables.md 0: no file = no rows).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from .errors import ExportDataError

# Columns nsys-duck never reads, whatever the export: NVTX_EVENTS.binaryData
# (schema 3.16+) holds raw bytes labelled as text. They are left out of the
# nsys.<TABLE> views, of the invalid-UTF-8 scan and of SQLite transcriptions.
NEVER_READ: dict[str, tuple[str, ...]] = {"NVTX_EVENTS": ("binaryData",)}


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


@dataclass(frozen=True)
class ExpectedColumn:
    """A column the SQL stages read, from ``sql/10_sources/nsys_tables.sql``."""

    name: str
    type: str  # DuckDB type of the stand-in, e.g. BIGINT
    required: bool  # declared NOT NULL there: the export must have it


Expected = dict[str, list[ExpectedColumn]]


@dataclass
class ExportNotes:
    """What :func:`register_export` changed so the export could be read.

    Reported in the summary: nothing is repaired or filled in silently.
    """

    filled_columns: list[tuple[str, str]] = field(default_factory=list)
    repaired_strings: list[tuple[str, str, int]] = field(default_factory=list)


def expected_columns(standin_sql: str) -> Expected:
    """Run the stand-in DDL in a scratch database and read back its columns.

    ``NOT NULL`` on a stand-in column marks it required (the export's table,
    when present, must have it); every other column the export lacks reads
    as NULL.
    """
    scratch = duckdb.connect(":memory:")
    try:
        scratch.execute("CREATE SCHEMA nsys")
        for stmt in duckdb.extract_statements(standin_sql):
            scratch.execute(stmt.query)
        rows = scratch.execute(
            "SELECT table_name, column_name, data_type, NOT is_nullable "
            "FROM duckdb_columns() WHERE schema_name = 'nsys' "
            "ORDER BY table_name, column_index"
        ).fetchall()
    finally:
        scratch.close()
    out: Expected = {}
    for table, column, dtype, required in rows:
        out.setdefault(table, []).append(ExpectedColumn(column, dtype, bool(required)))
    return out


_INT_TYPES = (
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
    "UHUGEINT",
)


def _kind_of_arrow(t: pa.DataType) -> str:
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_null(t):
        return "null"
    if pa.types.is_integer(t):
        return "integer"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_floating(t):
        return "floating-point"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "binary"
    if pa.types.is_boolean(t):
        return "boolean"
    return str(t)


def _kind_of_duckdb(t: str) -> str:
    if t in _INT_TYPES:
        return "integer"
    if t == "VARCHAR":
        return "string"
    if t in ("DOUBLE", "FLOAT"):
        return "floating-point"
    if t == "BOOLEAN":
        return "boolean"
    return t


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] or type(exc).__name__


def _string_problems(path: Path, schema: pa.Schema, skip: tuple[str, ...] = ()) -> list[str]:
    """Names of the string columns of ``path`` holding invalid UTF-8
    (``skip``: columns never read, not scanned)."""
    cols = [f.name for f in schema if _kind_of_arrow(f.type) == "string" and f.name not in skip]
    if not cols:
        return []
    table = pq.read_table(path, columns=cols)
    bad = []
    for name, column in zip(cols, table.columns, strict=True):
        for chunk in column.chunks:
            try:
                chunk.validate(full=True)
            except pa.ArrowInvalid:
                bad.append(name)
                break
    return bad


def _repair_strings(
    path: Path, columns: list[str], dest: Path, skip: tuple[str, ...] = ()
) -> list[tuple[str, int]]:
    """Copy ``path`` to ``dest`` with invalid UTF-8 bytes replaced by U+FFFD
    (``skip``: columns never read, left out of the copy).

    Returns (column, number of values repaired).
    """
    names = pq.read_schema(path).names
    table = pq.read_table(path, columns=[n for n in names if n not in skip])
    counts = []
    for name in columns:
        i = table.schema.get_field_index(name)
        column = table.column(i)
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        fixed, n = [], 0
        for chunk in column.chunks:
            raw = chunk.view(
                pa.large_binary() if pa.types.is_large_string(chunk.type) else pa.binary()
            )
            values = []
            for v in raw.to_pylist():
                if v is None:
                    values.append(None)
                    continue
                try:
                    values.append(v.decode("utf-8"))
                except UnicodeDecodeError:
                    values.append(v.decode("utf-8", "replace"))
                    n += 1
            fixed.append(pa.array(values, pa.string()))
        table = table.set_column(
            i, pa.field(name, pa.string()), pa.chunked_array(fixed, pa.string())
        )
        counts.append((name, n))
    pq.write_table(table, dest, compression="zstd")
    return counts


def register_export(
    con: duckdb.DuckDBPyConnection,
    export_dir: Path,
    *,
    expected: Expected | None = None,
    scratch: Path | None = None,
    notes: ExportNotes | None = None,
    materialize: Callable[[str], bool] | None = None,
) -> dict[str, list[str]]:
    """Create schema ``nsys`` with one view (or table) per Parquet table of the export.

    Args:
        con: connection to register into.
        export_dir: the Parquet folder.
        expected: the columns the SQL stages read (:func:`expected_columns`).
            A table of the export that lacks a required one is refused; an
            optional one it lacks is added to its view as a typed NULL.
        scratch: a folder for repaired copies of tables whose strings are not
            valid UTF-8 (bytes replaced by U+FFFD); without it such tables
            are left as they are.
        notes: collects what was filled in or repaired (for the summary).
        materialize: tables for which it returns True are copied into
            ``con`` as DuckDB tables (same columns as the view would have),
            so a database file holds their rows itself and reads no Parquet
            path later (``NAME.duckdb``); the others stay views.

    Returns:
        table name -> column names, as discovered from the Parquet schemas
        (the template parameters of the SQL stages). Columns in
        :data:`NEVER_READ` are left out here and of the views, and are never
        scanned.

    Raises:
        ExportDataError: a Parquet file cannot be read (truncated, damaged,
            not Parquet), a required column is missing or has the wrong kind
            of type.
    """
    expected = expected or {}
    notes = notes if notes is not None else ExportNotes()
    con.execute("CREATE SCHEMA IF NOT EXISTS nsys")
    columns: dict[str, list[str]] = {}
    for table, path in parquet_tables(export_dir).items():
        schema = _read_schema(path)
        never = tuple(c for c in NEVER_READ.get(table, ()) if c in schema.names)
        columns[table] = [n for n in schema.names if n not in never]
        filled, replace = _column_fixes(table, schema, expected.get(table, []), notes)
        source = path
        if table in expected and scratch is not None:
            source = _repaired(table, path, schema, never, Path(scratch), notes)
        star = "*"
        if never and source == path:  # a repaired copy has left them out already
            star += " EXCLUDE (" + ", ".join(_quote(c) for c in never) + ")"
        if replace:
            star += " REPLACE (" + ", ".join(replace) + ")"
        kind = "TABLE" if materialize is not None and materialize(table) else "VIEW"
        con.execute(
            f"CREATE OR REPLACE {kind} nsys.{_quote(table)} AS "
            f"SELECT {', '.join([star, *filled])} "
            f"FROM read_parquet({sql_string(str(source.resolve()))})"
        )
    return columns


def _read_schema(path: Path) -> pa.Schema:
    """The Arrow schema of one table's Parquet file; ExportDataError (one
    sentence) when it is damaged or no Parquet."""
    try:
        return pq.read_schema(path)
    except Exception as exc:  # pyarrow raises several types for bad files
        raise ExportDataError(
            f"the export's file {path.name} is damaged or not a Parquet file ({_first_line(exc)})"
        ) from None


def _column_fixes(
    table: str, schema: pa.Schema, wanted: list, notes: ExportNotes
) -> tuple[list[str], list[str]]:
    """(select items, REPLACE items) that give ``table``'s view the columns
    the stages read (``wanted``: :func:`expected_columns`' entries): a
    missing optional column as a typed NULL (noted in ``notes``), an
    all-NULL or integer-as-flag column cast to its type. Raises
    ExportDataError for a missing required column or a wrong kind of type."""
    filled, replace = [], []
    for want in wanted:
        if want.name not in schema.names:
            if want.required:
                raise ExportDataError(
                    f'the export\'s table {table} has no column "{want.name}", '
                    "which nsys-duck needs (export the report again with "
                    "an unmodified nsys export)"
                )
            filled.append(f"CAST(NULL AS {want.type}) AS {_quote(want.name)}")
            notes.filled_columns.append((table, want.name))
            continue
        have = _kind_of_arrow(schema.field(want.name).type)
        need = _kind_of_duckdb(want.type)
        # a flag stored as an integer (SQLite has no boolean type:
        # SCHED_EVENTS.isSchedIn is 0/1 there) reads as nonzero = TRUE
        if have == "null" or (have, need) == ("integer", "boolean"):
            replace.append(f"CAST({_quote(want.name)} AS {want.type}) AS {_quote(want.name)}")
        elif have != need:
            raise ExportDataError(
                f'the export\'s table {table} has column "{want.name}" of type '
                f"{schema.field(want.name).type}, expected {need} ({want.type})"
            )
    return filled, replace


def _repaired(
    table: str, path: Path, schema: pa.Schema, never: tuple, scratch: Path, notes: ExportNotes
) -> Path:
    """``path``, or a copy in ``scratch`` with its invalid UTF-8 strings
    repaired (U+FFFD; each column's count noted in ``notes``)."""
    try:
        bad = _string_problems(path, schema, never)
    except Exception as exc:
        raise ExportDataError(
            f"the export's file {path.name} is damaged ({_first_line(exc)})"
        ) from None
    if not bad:
        return path
    source = scratch / f"repaired-{table}.parquet"
    for column, n in _repair_strings(path, bad, source, never):
        notes.repaired_strings.append((table, column, n))
    return source


def find_damaged(export_dir: Path) -> tuple[str, str] | None:
    """(file name, reason) of the first export file pyarrow cannot fully read.

    Used after DuckDB failed on the export, to tell a damaged file from a bug
    (reads every file completely, so only on the failure path).
    """
    for path in parquet_tables(export_dir).values():
        try:
            pf = pq.ParquetFile(path)
            for i in range(pf.num_row_groups):
                pf.read_row_group(i)
        except Exception as exc:
            return path.name, _first_line(exc)
    return None
