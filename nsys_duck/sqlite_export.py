"""Transcribe an Nsight Systems SQLite export into a Parquet export folder.

``nsys export --type=sqlite`` writes the same tables as ``--type=parquetdir``
(same names, same columns in the same order; nsys-tables.md), but SQLite
only knows INTEGER, TEXT and REAL. :func:`transcribe` copies every table
that holds rows into ``<TABLE>.parquet`` (like nsys's lazy Parquet export,
which omits empty tables), so everything downstream
(:func:`sources.register_export` and the SQL stages) is the same for both.

- Reading: Apache Arrow's ADBC SQLite driver streams Arrow record batches
  from C (``adbc.sqlite.query.batch_rows`` rows each), read-only (and
  ``immutable``, so no lock or journal file is needed, only when SQLite
  cannot open it read-only where it lies); each batch is written at once
  (ParquetWriter, zstd), so memory
  stays bounded by one batch whatever the file's size.
- Type witness: ADBC infers each column's Arrow type from the first batch,
  so a column that is NULL throughout it would become int64 and a later
  TEXT value would fail ("Type mismatch"). The query therefore starts with
  one row of non-NULL constants of each column's declared type
  (``UNION ALL`` emits it first), text and blob values are CAST to their
  declared type, and the witness row is dropped from the first batch. A
  value of another type in an integer or real column (never written by
  nsys) stops the transcription with one sentence rather than becoming 0.
- Column types: the columns the SQL stages read (the stand-in DDL,
  ``sql/10_sources/nsys_tables.sql``) get the type DuckDB sees in Nsight
  2023.4's Parquet (UBIGINT -> uint64, INTEGER -> int32, ...), so SQLite's
  INTEGER/TEXT/REAL never changes a result. uint64 ids above 2^63 are stored
  by SQLite as negative int64: the cast to uint64 reinterprets the bits.
  Narrowing casts are checked (an overflow is an error naming the column).
  A stand-in column whose declared SQLite type is of another kind (TEXT where
  an integer is expected, ...) keeps its SQLite type, and
  :func:`sources.register_export` refuses it exactly as it would refuse such
  a Parquet column. Other columns: INTEGER -> int64, TEXT -> string,
  REAL -> float64, BLOB -> binary, anything else -> string.
- Never read: the columns in :data:`sources.NEVER_READ`
  (``NVTX_EVENTS.binaryData``, raw bytes labelled TEXT) are left out.
- Text that is not valid UTF-8 is passed through unchanged (pyarrow writes
  the bytes as they are); :func:`sources.register_export` repairs it and the
  summary counts it, as for a Parquet export.
- Timestamps are copied as they are (META_DATA_EXPORT too): a
  non-normalized export holds session-relative ns and the SQL stages add
  ``TARGET_INFO_SESSION_START_TIME.utcEpochNs`` themselves.

The folder also gets :data:`MARKER`, a small JSON file naming the source
(path, size, mtime) and the stand-in types it was made with, so a user can
tell it was transcribed and a later run can reuse it (:func:`same_standins`;
whether the source is the same is decided by the workspace manifest).
"""

from __future__ import annotations

import hashlib
import json
import re
import urllib.parse
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .errors import ExportDataError, InputError
from .sources import NEVER_READ, Expected

SQLITE_MAGIC = b"SQLite format 3\x00"
BATCH_ROWS = 65536
BATCH_OPTION = "adbc.sqlite.query.batch_rows"
MARKER = ".nsys-duck-source.json"
# an Nsight SQLite export has at least one of these (older ones: EXPORT_META_DATA)
NSIGHT_TABLES = ("StringIds", "META_DATA_EXPORT", "EXPORT_META_DATA")

# DuckDB type of a stand-in column -> the Arrow type DuckDB reads it from
ARROW_OF_DUCKDB = {
    "UBIGINT": pa.uint64(),
    "BIGINT": pa.int64(),
    "INTEGER": pa.int32(),
    "SMALLINT": pa.int16(),
    "TINYINT": pa.int8(),
    "UINTEGER": pa.uint32(),
    "USMALLINT": pa.uint16(),
    "UTINYINT": pa.uint8(),
    "VARCHAR": pa.string(),
    "DOUBLE": pa.float64(),
    "FLOAT": pa.float32(),
    # SQLite has no boolean: a flag (SCHED_EVENTS.isSchedIn) is an INTEGER
    # 0/1 there, a bool in Nsight's Parquet; nonzero reads as TRUE
    "BOOLEAN": pa.bool_(),
}

Progress = Callable[[str, int], None]  # (table, rows written so far)


@dataclass(frozen=True)
class _Column:
    name: str
    declared: str  # the declared SQLite type, as written in the DDL
    affinity: str  # 'integer', 'text', 'real' or 'blob' (how it is read)


@dataclass
class Transcription:
    """What :func:`transcribe` wrote: rows per table (tables with rows only)."""

    tables: dict[str, int] = field(default_factory=dict)
    empty: list[str] = field(default_factory=list)  # no rows: no file
    skipped: list[str] = field(default_factory=list)  # names no file can have


# --- opening -----------------------------------------------------------------


def _uri(path: Path, immutable: bool = False) -> str:
    """Read-only SQLite URI; ``immutable`` also skips locks and journals (for
    a database SQLite cannot open read-only where it lies, e.g. one in WAL
    mode in a read-only folder; a pending -wal file is then not read)."""
    return (
        "file:"
        + urllib.parse.quote(str(Path(path).resolve()), safe="/")
        + "?mode=ro"
        + ("&immutable=1" if immutable else "")
    )


_PREFIXES = re.compile(
    r"^(?:[A-Z_]+: )?(?:\[SQLite\] )?(?:Failed to (?:prepare|step|"
    r"execute) (?:query|statement): )?"
)


def sqlite_message(exc: BaseException) -> str:
    """SQLite's own words from an ADBC error (no status prefix, no query text)."""
    text = str(exc).split("\nquery:", 1)[0]
    text = " ".join(_PREFIXES.sub("", text.strip()).split())
    return text[:300] or type(exc).__name__


def _damaged(exc: BaseException) -> ExportDataError:
    return ExportDataError(f"the SQLite export is damaged (SQLite: {sqlite_message(exc)})")


def _connect(path: Path):
    """Open read-only (so committed data in a -wal file is read too); if
    SQLite cannot (it would need to write a -shm file beside it), open it
    immutable."""
    import adbc_driver_manager
    import adbc_driver_sqlite.dbapi as dbapi

    try:
        con = dbapi.connect(_uri(path), autocommit=True)
        try:
            with closing(con.cursor()) as cur:
                cur.execute("SELECT count(*) FROM sqlite_master")
                cur.fetchall()
            return con
        except (adbc_driver_manager.Error, OSError):
            con.close()
        return dbapi.connect(_uri(path, immutable=True), autocommit=True)
    except adbc_driver_manager.Error as exc:
        raise _damaged(exc) from None


def _query(con, sql: str) -> list[tuple]:
    import adbc_driver_manager

    try:
        with closing(con.cursor()) as cur:
            cur.execute(sql)
            return cur.fetchall()
    except (adbc_driver_manager.Error, OSError) as exc:
        raise _damaged(exc) from None


def _quote_id(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _quote_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _tables(con) -> list[str]:
    return [
        r[0]
        for r in _query(
            con,
            "SELECT name FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
        )
    ]


def check_export(path: Path) -> list[str]:
    """Make sure ``path`` is an Nsight SQLite export; returns its table names.

    Raises:
        InputError: not SQLite at all, no Nsight tables in it, or damaged
            (SQLite cannot read its schema).
    """
    try:
        with open(path, "rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise InputError(f"cannot read the SQLite export: {exc.strerror or exc}") from None
    if head != SQLITE_MAGIC:
        raise InputError(
            "not an SQLite database (a .sqlite file must be made by nsys export --type=sqlite)"
        )
    with closing(_connect(path)) as con:
        tables = _tables(con)
    if not set(NSIGHT_TABLES) & set(tables):
        raise InputError(
            "not an Nsight Systems SQLite export (no StringIds or META_DATA_EXPORT table in it)"
        )
    return tables


# --- types -------------------------------------------------------------------


def _affinity(declared: str) -> str:
    """How a column is read, from its declared type (SQLite's affinity rules,
    except that a type SQLite would give NUMERIC or no affinity is read as text)."""
    d = declared.upper()
    if "INT" in d:
        return "integer"
    if "CHAR" in d or "CLOB" in d or "TEXT" in d:
        return "text"
    if "BLOB" in d:
        return "blob"
    if "REAL" in d or "FLOA" in d or "DOUB" in d:
        return "real"
    return "text"


_WITNESS = {
    "integer": ("0", "INTEGER"),
    "text": ("''", "TEXT"),
    "real": ("0.0", "REAL"),
    "blob": ("X''", "BLOB"),
}
_KIND = {"integer": "integer", "text": "string", "real": "floating-point", "blob": "binary"}


def _kind_of(t: pa.DataType) -> str:
    if pa.types.is_integer(t):
        return "integer"
    if pa.types.is_string(t):
        return "string"
    if pa.types.is_floating(t):
        return "floating-point"
    return str(t)


def _select(table: str, columns: list[_Column]) -> str:
    """The witness row (non-NULL constants of each declared type), then every
    row: the first batch types every column. Text and blob columns are CAST
    to their declared type (a number stored there reads as its text);
    integer and real columns are not, so a value of another type (text in
    an INTEGER column) makes the driver stop with a type mismatch instead of
    SQLite's CAST turning it silently into 0."""
    witness = ", ".join(f"{_WITNESS[c.affinity][0]} AS {_quote_id(c.name)}" for c in columns)
    rows = ", ".join(
        f"CAST({_quote_id(c.name)} AS {_WITNESS[c.affinity][1]})"
        if c.affinity in ("text", "blob")
        else _quote_id(c.name)
        for c in columns
    )
    return f"SELECT {witness} UNION ALL SELECT {rows} FROM {_quote_id(table)}"


def _read_failure(table: str, exc: BaseException) -> ExportDataError:
    """A value of another type than its column's (the driver's type mismatch),
    else a page SQLite cannot read."""
    message = sqlite_message(exc)
    if "Type mismatch" in message:
        return ExportDataError(
            f"the SQLite export's table {table} holds a value whose type differs from "
            f"its column's declared type ({message}); it was not written by nsys, "
            "or was edited"
        )
    return _damaged(exc)


def _targets(
    table: str, columns: list[_Column], expected: Expected
) -> dict[str, tuple[pa.DataType, str]]:
    """column -> (Arrow type, DuckDB type) for the stand-in columns it can take."""
    out = {}
    for want in expected.get(table, []):
        col = next((c for c in columns if c.name == want.name), None)
        arrow = ARROW_OF_DUCKDB.get(want.type)
        if col is None or arrow is None:
            continue
        if _KIND[col.affinity] == _kind_of(arrow) or (
            col.affinity == "integer" and pa.types.is_boolean(arrow)
        ):
            out[col.name] = (arrow, want.type)
    return out


def _convert(
    table: str, batch: pa.RecordBatch, targets: dict[str, tuple[pa.DataType, str]]
) -> pa.RecordBatch:
    if not targets:
        return batch
    arrays = []
    for name, array in zip(batch.schema.names, batch.columns, strict=True):
        target = targets.get(name)
        if target is not None and array.type != target[0]:
            arrow, duck = target
            if pa.types.is_int64(array.type) and pa.types.is_uint64(arrow):
                array = pc.cast(array, arrow, safe=False)  # reinterprets the bits
            else:
                try:
                    array = pc.cast(array, arrow)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    raise ExportDataError(
                        f"the SQLite export's table {table} has a value in column "
                        f'"{name}" that does not fit {duck} '
                        f"({' '.join(str(exc).split())[:200]})"
                    ) from None
        arrays.append(array)
    return pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)


def standin_digest(expected: Expected) -> str:
    """A short digest of the stand-in column types (a transcription depends on them)."""
    text = json.dumps(
        {t: [[c.name, c.type] for c in cols] for t, cols in sorted(expected.items())},
        sort_keys=True,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# --- transcription -----------------------------------------------------------


def _usable_file_name(table: str) -> bool:
    return (
        table not in ("", ".", "..")
        and "/" not in table
        and "\0" not in table
        and len(table.encode("utf-8", "surrogateescape")) <= 200
    )


def transcribe(
    sqlite_path: Path,
    dest: Path,
    expected: Expected | None = None,
    *,
    progress: Progress | None = None,
    batch_rows: int = BATCH_ROWS,
) -> Transcription:
    """Write every table of ``sqlite_path`` that has rows as ``dest/<TABLE>.parquet``.

    ``dest`` must not exist yet (the caller renames it into place when this
    returns); :data:`MARKER` is written last. ``expected`` holds the
    stand-in columns (:func:`sources.expected_columns`), whose types the
    Parquet files get. ``progress(table, rows)`` is called at the start of
    each table and after each batch.

    Raises:
        InputError / ExportDataError: not an Nsight SQLite export, damaged,
            or a value that does not fit its stand-in column.
        OSError: writing ``dest`` failed (disk full, ...).
    """
    import adbc_driver_manager

    sqlite_path = Path(sqlite_path)
    expected = expected or {}
    st = sqlite_path.stat()
    dest = Path(dest)
    dest.mkdir()
    result = Transcription()
    with closing(_connect(sqlite_path)) as con:
        tables = _tables(con)
        if not set(NSIGHT_TABLES) & set(tables):
            raise InputError(
                "not an Nsight Systems SQLite export (no StringIds or META_DATA_EXPORT table in it)"
            )
        for table in tables:
            if not _usable_file_name(table):
                result.skipped.append(table)  # no Nsight table has such a name
                continue
            never = NEVER_READ.get(table, ())
            columns = [
                _Column(name, decl or "", _affinity(decl or ""))
                for name, decl in _query(
                    con,
                    f"SELECT name, type FROM pragma_table_info({_quote_str(table)}) ORDER BY cid",
                )
                if name not in never
            ]
            if not columns:
                result.empty.append(table)
                continue
            if progress:
                progress(table, 0)
            targets = _targets(table, columns, expected)
            rows = _copy_table(
                con, table, columns, targets, dest, batch_rows, progress, adbc_driver_manager.Error
            )
            if rows:
                result.tables[table] = rows
            else:
                result.empty.append(table)
    marker = {
        "source": str(sqlite_path.resolve()),
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "standins": standin_digest(expected),
        "tables": result.tables,
    }
    (dest / MARKER).write_text(json.dumps(marker, indent=1) + "\n")
    return result


def _copy_table(
    con,
    table: str,
    columns: list[_Column],
    targets: dict[str, tuple[pa.DataType, str]],
    dest: Path,
    batch_rows: int,
    progress: Progress | None,
    adbc_error,
) -> int:
    rows = 0
    writer: pq.ParquetWriter | None = None
    try:
        with closing(con.cursor()) as cur:
            try:
                cur.adbc_statement.set_options(**{BATCH_OPTION: str(int(batch_rows))})
                cur.execute(_select(table, columns))
                reader = cur.fetch_record_batch()
            except (adbc_error, OSError) as exc:
                raise _read_failure(table, exc) from None
            first = True
            while True:
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    break
                except (adbc_error, OSError) as exc:  # a bad value or page
                    raise _read_failure(table, exc) from None
                if first:
                    first = False
                    _check_witness(table, batch, columns)
                    batch = batch.slice(1)
                if batch.num_rows == 0:
                    continue
                batch = _convert(table, batch, targets)
                if writer is None:
                    writer = pq.ParquetWriter(
                        dest / f"{table}.parquet", batch.schema, compression="zstd"
                    )
                writer.write_batch(batch)
                rows += batch.num_rows
                if progress:
                    progress(table, rows)
            if first:
                raise ExportDataError(
                    f"the SQLite export's table {table} gave no rows, "
                    "not even the type witness (a bug)"
                )
    finally:
        if writer is not None:
            writer.close()
    return rows


_WITNESS_VALUE = {"integer": 0, "text": "", "real": 0.0, "blob": b""}


def _check_witness(table: str, batch: pa.RecordBatch, columns: list[_Column]) -> None:
    """Row 0 of the first batch must be the type witness (SQLite emits the
    left side of UNION ALL first); dropping anything else would lose a row."""
    for column, field_ in zip(columns, batch.schema, strict=True):
        if _kind_of(field_.type) != _KIND[column.affinity]:
            # the driver typed the column from a value of another type in
            # the first batch (text in an INTEGER column...)
            raise ExportDataError(
                f"the SQLite export's table {table} holds a value whose type differs "
                f'from its column\'s declared type (column "{column.name}" is declared '
                f"{column.affinity} and holds {_kind_of(field_.type)} values); it was "
                "not written by nsys, or was edited"
            )
    row = batch.slice(0, 1).to_pylist()
    if not row or list(row[0].values()) != [_WITNESS_VALUE[c.affinity] for c in columns]:
        raise ExportDataError(
            f"the SQLite export's table {table} did not start with the type witness row (a bug)"
        )


def read_marker(parquet_dir: Path) -> dict | None:
    """The transcription marker of ``parquet_dir``, or None (not a transcription)."""
    try:
        data = json.loads((Path(parquet_dir) / MARKER).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def same_standins(parquet_dir: Path, expected: Expected) -> bool:
    """True when ``parquet_dir`` holds a transcription made with the stand-in
    types of ``expected`` (which source it came from is the workspace
    manifest's business, ``manifest.check_source``)."""
    marker = read_marker(parquet_dir)
    return marker is not None and marker.get("standins") == standin_digest(expected)
