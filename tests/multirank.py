"""Per-rank Nsight Parquet exports built from real captures (tests and bench).

Two ways to get many single-process exports out of real data, for tests and
benchmarks of multi-report (multi-rank) work:

- :func:`split_export_by_pid`: one real multi-process capture (e.g.
  ``shared/data/reports/cpu_nvtx_multiproc/parquet``, a parent and two
  children) becomes one export per OS process that owns event rows.
- :func:`make_rank_exports`: one real small export becomes ``n`` copies that
  look like the ranks of one job: distinct process ids, times shifted by a
  step per rank.

Input: an Nsight Parquet export folder (``nsys export --type=parquetdir``,
one ``TABLE.parquet`` per table). An Nsight **SQLite** export is taken after
nsys-duck has transcribed it: ``nsys-duck convert X.sqlite`` (or
``nsys_duck.convert.convert(path, Options(), root=ROOT)``) writes the tables
to ``NSYS_WORKSPACE_ROOT/X/parquet/`` (``Result.workspace.dir / "parquet"``)
with the column types of Nsight's own Parquet for every column the SQL reads;
give that folder. Nothing here transcribes SQLite itself.

Process ids (shared/reference/nsys-tables.md, section 2.1, checked on the
dev reports): ``globalTid``, ``globalPid`` and NVTX's ``endGlobalTid`` are
serialized ids, bits 63..56 hardware id, 55..48 VM id (1 in every export),
47..24 the OS PID, 23..0 the OS TID (0 in a ``globalPid``). So the process
of a row is ``(globalTid >> 24) & 0xFFFFFF``. cpu_nvtx_multiproc: NVTX rows of
PIDs 23347, 23353, 23354 (``globalTid`` 281866674395955 = 1 << 48 | 23347 <<
24 | 23347: VM 1, PID 23347, TID 23347); ``OSRT_API`` also has rows with TID
bits 0. Plain OS PIDs are in ``PROCESSES.pid`` (= the PID bits of its
``globalPid`` in every row), ``TARGET_INFO_CUDA_CONTEXT_INFO.processId``,
``TARGET_INFO_CUDA_STREAM.processId``, ``TARGET_INFO_NVTX_CUDA_*.processId``,
``TARGET_INFO_CUDA_DEVICE.pid`` (newer exports) and
``OSRT_FILE_ACCESS_DESCRIPTORS.processId``. ``globalVid`` holds the VM id
only and is left alone. A process id 0 (or NULL) names no process: Nsight's
session-wide rows (``DIAGNOSTIC_EVENT`` "Profiling has started", globalPid
0xFE00_0000_0000_0000) have it.

Times: ``start``, ``end`` (NULL for NVTX marks) and ``timestamp``
(``CUPTI_ACTIVITY_KIND_CUDA_EVENT``, ``DIAGNOSTIC_EVENT``) are the event
times, integer ns (epoch ns with ``--ts-normalize=true``, else
session-relative: shifting either moves the event by the same ns). Ids
(``correlationId``, ``rangeId``, ...) and durations are never times here;
``TARGET_INFO_SESSION_START_TIME``, ``META_DATA_EXPORT`` and
``ANALYSIS_DETAILS`` (not read by the pipeline) are copied unchanged, so a
session-relative export stays session-relative after the shift.

Files: a table this does not change is copied byte for byte; a changed one is
read with pyarrow and written with pyarrow.parquet with its original Arrow
schema (names, order, types, nullability: the Parquet schema reads back
equal), the original's compression codec and, like the original, with or
without the ``ARROW:schema`` key. Only ``*.parquet`` files are taken (not the
marker nsys-duck leaves in a transcribed folder).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

PID_SHIFT = 24  # the PID field of a serialized id: bits 47..24
PID_MASK = 0xFFFFFF  # 24 bits; also the largest PID a serialized id holds
# serialized ids: hardware id | VM id | PID | TID bits
SERIALIZED_COLUMNS = ("globalTid", "globalPid", "endGlobalTid")
# plain OS process ids
PLAIN_PID_COLUMNS = ("pid", "processId")
# event times, ns
TIME_COLUMNS = ("start", "end", "timestamp")
# the columns that say which process owns a row, in order of preference
OWNER_COLUMNS = ("globalTid", "globalPid", "pid", "processId")
# tables of events that do not make a process one of the export's: what nsys
# saw of every process on the machine (scheduling, CPU samples: the SQLite
# export of fuser_nvtx_2025_1 has SCHED_EVENTS rows of 45 processes, 2 of
# which were traced), its own overhead and its messages. Filtered like the
# others.
OBSERVER_TABLES = frozenset(
    {"SCHED_EVENTS", "COMPOSITE_EVENTS", "PROFILER_OVERHEAD", "DIAGNOSTIC_EVENT"}
)


def export_tables(export_dir: Path) -> dict[str, Path]:
    """``{TABLE: export_dir / "TABLE.parquet"}`` of a Parquet export folder.

    Raises:
        ValueError: a file (an SQLite export: convert it first, see the
            module docstring) or a folder without ``*.parquet`` files.
    """
    export_dir = Path(export_dir)
    if not export_dir.is_dir():
        raise ValueError(
            f"{export_dir} is not a Parquet export folder; for an Nsight SQLite export "
            "run `nsys-duck convert X.sqlite` and give NSYS_WORKSPACE_ROOT/X/parquet"
        )
    tables = {p.stem: p for p in sorted(export_dir.glob("*.parquet")) if p.is_file()}
    if not tables:
        raise ValueError(f"{export_dir} holds no TABLE.parquet files")
    return tables


def is_event_table(name: str, schema: pa.Schema) -> bool:
    """A table of traced events: an event time (``start``/``timestamp``) and a
    serialized thread/process id (``globalTid``/``globalPid``), and not one of
    :data:`OBSERVER_TABLES`: the CUPTI_ACTIVITY_KIND_* tables, NVTX_EVENTS,
    OSRT_API, CUDA_GRAPH_EVENTS, CUDNN_EVENTS, MPI_*, ... Not PROCESSES,
    ThreadNames, StringIds, ENUM_*, TARGET_INFO_*, META_DATA_*."""
    names = set(schema.names)
    return (
        name not in OBSERVER_TABLES
        and bool(names & {"start", "timestamp"})
        and bool(names & {"globalTid", "globalPid"})
    )


def owner_column(schema: pa.Schema) -> str | None:
    """The column naming a row's process (:data:`OWNER_COLUMNS`), else None
    (a table of the whole session, copied whole)."""
    return next((c for c in OWNER_COLUMNS if c in schema.names), None)


def process_ids(column: pa.Array | pa.ChunkedArray, name: str) -> pa.Array:
    """The OS process id of each value of column ``name``: the PID bits of a
    serialized id, or the value of a plain pid column; NULL stays NULL.
    Same type as the column."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if name in SERIALIZED_COLUMNS:
        mask = pa.scalar(PID_MASK, column.type)
        return pc.bit_wise_and(pc.shift_right(column, pa.scalar(PID_SHIFT, column.type)), mask)
    return column


def event_pids(export_dir: Path) -> list[int]:
    """Sorted distinct OS process ids (not 0) owning rows of the export's
    event tables (:func:`is_event_table`)."""
    pids: set[int] = set()
    for name, path in export_tables(export_dir).items():
        schema = pq.read_schema(path)
        if not is_event_table(name, schema):
            continue
        owner = owner_column(schema)
        col = pq.read_table(path, columns=[owner]).column(owner)
        pids.update(v for v in pc.unique(process_ids(col, owner)).to_pylist() if v)
    return sorted(pids)


def write_options(original: Path) -> dict:
    """``pq.write_table`` keywords that write a table as ``original`` was
    written: same compression codec, ``ARROW:schema`` key kept or left out."""
    meta = pq.ParquetFile(original).metadata
    codec = "none"
    if meta.num_row_groups and meta.num_columns:
        codec = meta.row_group(0).column(0).compression.lower()
        codec = {"uncompressed": "none", "lz4_raw": "lz4"}.get(codec, codec)
    return {"compression": codec, "store_schema": b"ARROW:schema" in (meta.metadata or {})}


def _new_export_dir(folder: Path) -> Path:
    """``folder/parquet``, created; refused if it already holds files (a
    stale table of an earlier run would be read as part of the export)."""
    out = folder / "parquet"
    if out.is_dir() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty")
    out.mkdir(parents=True, exist_ok=True)
    return out


def split_export_by_pid(export_dir: Path, out_root: Path, name: str) -> dict[int, Path]:
    """One Parquet export per OS process of a multi-process export.

    Args:
        export_dir: an Nsight Parquet export folder (``TABLE.parquet`` per
            table), or the ``parquet/`` folder nsys-duck transcribed an
            SQLite export into (module docstring).
        out_root: where the parts go, ``out_root/f"{name}_pid{PID}"/parquet/``.
        name: prefix of the parts' folder names.

    Returns:
        ``{pid: out_root / f"{name}_pid{pid}"}`` (the folder holding
        ``parquet/``; convert ``folder / "parquet"``), one per OS process id
        with rows in an event table (:func:`event_pids`), ascending.

    Every part has every table of the export (an empty file where the process
    has no rows, same schema). A table with an owner column
    (:func:`owner_column`: ``globalTid``, else ``globalPid``, else a plain
    ``pid``/``processId``) keeps the rows of that process (PID bits
    ``(id >> 24) & 0xFFFFFF`` of a serialized id), plus the rows whose process
    id is 0 or NULL (they name no process: every part keeps them). So
    PROCESSES, ThreadNames, TARGET_INFO_CUDA_CONTEXT_INFO/STREAM (processId)
    and the :data:`OBSERVER_TABLES` are filtered too (rows of processes that
    get no part, e.g. other programs' scheduling, are in no part); every other
    table (StringIds, ENUM_*, META_DATA_*, TARGET_INFO_GPU/SESSION_START_TIME/
    SYSTEM_ENV, OSRT_CALLCHAINS, ...) is copied whole, byte for byte. The
    rows of an event table over all parts therefore add up to the original's
    (plus one copy per extra part of its pid-0/NULL rows).

    A part can still be one the pipeline refuses to convert (NoEventsError):
    a process that owns rows of no table nsys-duck draws (fuser_nvtx_2025_1's
    process 50922 owns only 2 CUDA API calls, which are drawn).
    """
    tables = export_tables(export_dir)
    pids = event_pids(export_dir)
    folders = {pid: Path(out_root) / f"{name}_pid{pid}" for pid in pids}
    outs = {pid: _new_export_dir(folder) for pid, folder in folders.items()}
    for path in tables.values():
        owner = owner_column(pq.read_schema(path))
        if owner is None:
            for out in outs.values():
                shutil.copyfile(path, out / path.name)
            continue
        table = pq.read_table(path)
        options = write_options(path)
        owners = process_ids(table.column(owner), owner)
        unowned = pc.fill_null(pc.equal(owners, pa.scalar(0, owners.type)), True)
        for pid, out in outs.items():
            mine = pc.fill_null(pc.equal(owners, pa.scalar(pid, owners.type)), False)
            part = table.filter(pc.or_(mine, unowned))
            pq.write_table(part, out / path.name, **options)
    return folders


@dataclass
class _Rewrite:
    """How one column of one table changes from rank to rank."""

    kind: str  # "serialized", "plain" or "time"
    column: pa.Array  # the original values
    keep: pa.Array | None = None  # True: value unchanged (pid 0 or NULL)
    index: pa.Array | None = None  # position of its pid in the export's pids (column type)
    rest: pa.Array | None = None  # serialized: the value with the PID bits cleared

    def apply(self, pid_offset: int, time_shift: int) -> pa.Array:
        typ = self.column.type
        if self.kind == "time":
            if not time_shift:
                return self.column
            return pc.add_checked(self.column, pa.scalar(time_shift, typ)).cast(typ)
        new_pid = pc.add(self.index, pa.scalar(pid_offset, typ))
        if self.kind == "serialized":
            new_pid = pc.bit_wise_or(self.rest, pc.shift_left(new_pid, pa.scalar(PID_SHIFT, typ)))
        return pc.if_else(self.keep, self.column, new_pid).cast(typ)


def _rewrites(table: pa.Table, pids: pa.Array) -> dict[int, _Rewrite]:
    """{column position: _Rewrite} of the pid and time columns of a table."""
    out = {}
    for i, field in enumerate(table.schema):
        if field.name not in SERIALIZED_COLUMNS + PLAIN_PID_COLUMNS + TIME_COLUMNS:
            continue
        if not pa.types.is_integer(field.type):
            raise TypeError(f"{field.name} is {field.type}, not an integer column")
        col = table.column(i).combine_chunks()
        if field.name in TIME_COLUMNS:
            out[i] = _Rewrite("time", col)
            continue
        index = pc.index_in(process_ids(col, field.name), value_set=pids.cast(field.type))
        rw = _Rewrite(
            "serialized" if field.name in SERIALIZED_COLUMNS else "plain",
            col,
            keep=pc.is_null(index),  # NULL, pid 0
            index=index.cast(field.type),
        )
        if rw.kind == "serialized":
            width = field.type.bit_width
            cleared = ((1 << width) - 1) ^ (PID_MASK << PID_SHIFT)  # all bits but the PID's
            if pa.types.is_signed_integer(field.type) and cleared >= 1 << (width - 1):
                cleared -= 1 << width  # the same bits as a signed value
            rw.rest = pc.bit_wise_and(col, pa.scalar(cleared, field.type))
        out[i] = rw
    return out


def make_rank_exports(
    export_dir: Path,
    out_root: Path,
    n: int,
    *,
    name: str = "rank",
    offset_step_ns: int = 1_000_000,
    pid_base: int = 1000,
) -> list[Path]:
    """``n`` copies of one export, as if captured by the ranks of one job.

    Args:
        export_dir: an Nsight Parquet export folder (or a transcribed SQLite
            export's ``parquet/``, module docstring); small, since every table
            is held in memory.
        out_root: where the copies go, ``out_root/f"{name}{k:04d}"/parquet/``.
        n: number of copies (ranks), k = 0 .. n-1.
        name: prefix of the copies' folder names.
        offset_step_ns: ns added to every event time of copy k, times k.
        pid_base: first process id of copy 0.

    Returns:
        ``[out_root / f"{name}{k:04d}" for k in range(n)]`` (the folders
        holding ``parquet/``; convert ``folder / "parquet"``).

    Process ids: every process id P of the export (every non-zero PID in any
    serialized or plain pid column of any table, PROCESSES and ThreadNames
    included, sorted: ``pids``) becomes ``pid_base + k * len(pids) +
    pids.index(P)`` in copy k, so no two copies share a process id and none
    keeps an original one. The PID bits (47..24) of ``globalTid``,
    ``globalPid`` and ``endGlobalTid`` are rewritten, their TID, VM and
    hardware bits kept; ``pid``/``processId`` columns get the new PID. 0 and
    NULL stay. Times: ``start``, ``end``, ``timestamp`` (every table) +
    ``k * offset_step_ns`` ns, NULL stays NULL. Every other column and table
    is unchanged; results are cast back to the original field types and
    tables without such columns are copied byte for byte.

    Speed: every table is read once; per copy only Arrow compute kernels over
    whole columns and the writes run (1,000 copies of cpu_nvtx_small's 450 KB
    export: about 3 s; raiderstream_tiny's 2.3 MB: about 26 s).

    Raises:
        ValueError: n < 0, pid_base < 1, or a new PID beyond 24 bits.
        pyarrow.ArrowInvalid: a shifted time overflows its column's type.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, not {n}")
    if pid_base < 1:
        raise ValueError(f"pid_base must be >= 1 (0 names no process), not {pid_base}")
    tables = export_tables(export_dir)
    read: dict[str, pa.Table] = {}
    copied: dict[str, bytes] = {}
    found: set[int] = set()
    for table_name, path in tables.items():
        schema = pq.read_schema(path)
        if not set(schema.names) & set(SERIALIZED_COLUMNS + PLAIN_PID_COLUMNS + TIME_COLUMNS):
            copied[table_name] = path.read_bytes()
            continue
        table = pq.read_table(path)
        read[table_name] = table
        for c in schema.names:
            if c in SERIALIZED_COLUMNS + PLAIN_PID_COLUMNS:
                found.update(v for v in pc.unique(process_ids(table.column(c), c)).to_pylist() if v)
    pids = sorted(found)
    if pid_base + n * len(pids) - 1 > PID_MASK:
        raise ValueError(
            f"{n} copies of {len(pids)} processes from pid {pid_base} need pids up to "
            f"{pid_base + n * len(pids) - 1}, beyond the 24 bits of a serialized id"
        )
    value_set = pa.array(pids, pa.uint64())
    plans = {t: _rewrites(table, value_set) for t, table in read.items()}
    options = {t: write_options(tables[t]) for t in read}
    folders = []
    for k in range(n):
        folder = Path(out_root) / f"{name}{k:04d}"
        out = _new_export_dir(folder)
        for table_name, data in copied.items():
            (out / tables[table_name].name).write_bytes(data)
        for table_name, table in read.items():
            columns = list(table.columns)
            for i, rw in plans[table_name].items():
                columns[i] = rw.apply(pid_base + k * len(pids), k * offset_step_ns)
            new = pa.Table.from_arrays(columns, schema=table.schema)
            pq.write_table(new, out / tables[table_name].name, **options[table_name])
        folders.append(folder)
    return folders
