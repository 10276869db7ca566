"""Write the output files from the ``trace_*`` views; publish atomically.

Every file is written under a temporary name in the destination folder and
renamed into place only after all files were written and checked
(output-contract.md, Files: a failed run leaves no half-written file in place
of a good one).
"""

from __future__ import annotations

import itertools
import os
import shutil
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from isal import igzip_threaded, isal_zlib

from . import contract
from .compat import arrow_reader
from .errors import NsysDuckError
from .json_spool import Spool

# Rows per Arrow batch from DuckDB. Rows can be long (a kernel's args or
# NVTX path may list thousands of range names), so batches stay small.
JSON_BATCH_ROWS = 16_384
PARQUET_BATCH_ROWS = 32_768  # also the Parquet row group size
JSON_HEADER = b"[\n"  # what opens every file of the JSON trace (an array)

KERNEL_DEPENDENCIES_SCHEMA = pa.schema(
    [
        ("src_correlation_id", pa.int64()),
        ("dst_correlation_id", pa.int64()),
        ("src_device_id", pa.int64()),
        ("dst_device_id", pa.int64()),
        ("src_end_ns", pa.int64()),
        ("dst_start_ns", pa.int64()),
        ("kind", pa.string()),
    ]
)


def human_size(n: float) -> str:
    """``n`` bytes as text for people: ``512 B``, ``1.5 KB``, ``3.2 GB``."""
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def temp_path(final: Path) -> Path:
    """Temporary sibling of ``final`` (same folder, so rename is atomic)."""
    return final.with_name(f".{final.name}.tmp-{os.getpid()}")


def _part_batches(con: duckdb.DuckDBPyConnection, query: str):
    """Yield the columns of ``query`` as Arrow arrays, batch by batch: for
    the JSON trace (INTEGER part, NULL for every part; INTEGER size bucket;
    VARCHAR event text), for the Kineto trace (rank, text)."""
    reader = arrow_reader(con.sql(query), JSON_BATCH_ROWS)
    for batch in reader:
        if batch.num_rows:
            yield batch.columns


def _concat(arr: pa.Array) -> memoryview:
    """The strings of ``arr`` back to back, as one buffer (no copy).

    An Arrow string array stores its values contiguously in one data buffer;
    the SQL already ended each event with its separator, so the used range
    of that buffer is exactly the bytes to compress (no per-event Python
    objects, no copy).
    """
    arr = _offset_string(arr)
    offsets = _offsets(arr)
    return memoryview(arr.buffers()[2])[int(offsets[0]) : int(offsets[-1])]


def _offset_string(arr: pa.Array) -> pa.Array:
    """``arr`` as an Arrow string type with an offsets buffer (string_view
    is cast to large_string)."""
    if pa.types.is_string(arr.type) or pa.types.is_binary(arr.type):
        return arr
    return arr if pa.types.is_large_string(arr.type) else arr.cast(pa.large_string())


def _offsets(arr: pa.Array) -> np.ndarray:
    """The ``len(arr) + 1`` value offsets of the string array ``arr`` (no copy)."""
    arr = _offset_string(arr)
    dtype = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    offsets = np.frombuffer(arr.buffers()[1], dtype=dtype)
    return offsets[arr.offset : arr.offset + len(arr) + 1]


@dataclass
class JsonStats:
    events: int
    bytes_uncompressed: int
    crc32: int = 0  # CRC-32 of the uncompressed text, as the gzip trailer holds it


class SizeMeter:
    """The uncompressed bytes of the JSON trace per size bucket, counted as
    it is written (``trace_events_parted.size_bucket``: a time bucket of
    ``trace_size_grid``, NULL for metadata): the measurement
    ``trace_parts`` cuts a split trace from (``trace_json_sizes``).

    ``buckets`` and ``limit`` (``max_json_bytes``, bytes) come from
    ``trace_size_grid``; :attr:`over` says the trace is past the limit (the
    rule of ``trace_parts``: every event and the metadata once, ``> limit``).
    """

    def __init__(self, buckets: int, limit: int) -> None:
        self.buckets = buckets
        self.limit = limit
        # float64 sums are exact below 2**53 bytes; the last slot: metadata
        self._bytes = np.zeros(buckets + 1, dtype=np.float64)
        self.total = 0

    def add(self, bucket: pa.Array, text: pa.Array) -> None:
        """Count the rows of one batch: ``text``'s lengths in bytes (with
        their separator) into the ``bucket`` of each row."""
        lengths = np.diff(_offsets(text)).astype(np.float64)
        slots = pc.fill_null(bucket, self.buckets).to_numpy(zero_copy_only=False)
        self._bytes += np.bincount(slots, weights=lengths, minlength=self.buckets + 1)
        self.total += int(lengths.sum())

    def add_metadata(self, nbytes: int) -> None:
        """Count ``nbytes`` every file holds (the array's opening ``[\n``;
        its closing ``\n]`` takes the place of the last ``,\n``), so a
        part's measured bytes are its file's size."""
        self._bytes[-1] += nbytes
        self.total += nbytes

    @property
    def over(self) -> bool:
        return self.total > self.limit

    def rows(self) -> pa.Table:
        """The ``trace_json_sizes`` rows: (size_bucket, bytes) of every
        bucket with bytes, then (NULL, the metadata's bytes)."""
        sizes = self._bytes.astype(np.int64)
        held = np.flatnonzero(sizes[:-1])
        return pa.table(
            {
                "size_bucket": pa.array([*held.tolist(), None], pa.int32()),
                "bytes": pa.array([*sizes[held].tolist(), int(sizes[-1])], pa.int64()),
            }
        )


class _PartStream:
    """One gzip file of a trace being written: its size, CRC-32, event
    count, and the last buffer, held back so the final ``,\n`` can be
    replaced by the closing text.

    ``header`` opens the file (``[\n``: a Perfetto JSON array; a Kineto
    file's header line up to ``"traceEvents": [``), ``footer`` closes it
    after the last event; ``empty_ok``: a file with no event is closed too
    (a Kineto rank's ``traceEvents`` may be empty), else it is an error."""

    def __init__(
        self, out, header: bytes = JSON_HEADER, footer: bytes = b"\n]", empty_ok: bool = False
    ) -> None:
        self.out = out
        self.size = 0
        self.crc = 0
        self.events = 0
        self.pending: memoryview | bytes | None = None
        self.footer = footer
        self.empty_ok = empty_ok
        self.emit(header)

    def emit(self, buf) -> None:
        self.out.write(buf)
        self.size += len(buf)
        self.crc = isal_zlib.crc32(buf, self.crc)

    def add(self, arr: pa.Array) -> None:
        if not len(arr):
            return
        if self.pending is not None:
            self.emit(self.pending)
        self.pending = _concat(arr)
        self.events += len(arr)

    def flush(self) -> None:
        """Write the held-back buffer now (the stream takes no more rows:
        a one-part attempt stopped at the size limit)."""
        if self.pending is not None:
            self.emit(self.pending)
            self.pending = None

    def close(self) -> JsonStats:
        if self.pending is None and not self.empty_ok:
            raise NsysDuckError("no trace events to write")
        tail = b"" if self.pending is None else bytes(self.pending[:-2])  # drop ",\n"
        self.emit(tail + self.footer)
        return JsonStats(self.events, self.size, self.crc)


def write_trace_json(
    con: duckdb.DuckDBPyConnection,
    paths: list[Path],
    *,
    meter: SizeMeter | None = None,
    spool: Spool | None = None,
    threads: int = 2,
    compresslevel: int = 1,
) -> list[JsonStats] | Spool:
    """Stream the JSON trace's view (role ``json-trace``:
    ``trace_events_parted``) into ``paths[k]``, the file of part k + 1
    (``trace_parts``; one path: the whole trace), each one gzip member
    holding one JSON array.

    One pass over the events, whatever the number of parts: rows come from
    DuckDB in Arrow batches, query by query as the view's header says
    (``-- Python reads:``: the unordered events one kind at a time, then
    the B/E and async b/e events ordered by track and time), each row goes
    to its part's file (metadata, part NULL, to every file), and Python
    only concatenates buffers. Each file is gzip-compressed by ISA-L (``threads`` threads in
    all) into a single member; nothing follows the closing ``]``.

    ``meter`` (one path only, with ``spool``): every row's bytes are
    counted into it as they are written; once it is :attr:`SizeMeter.over`
    the limit, the file is no longer written: the rest is measured and kept
    in ``spool`` (:mod:`json_spool`, which also notes the buckets of the
    rows written), which is returned, so that :func:`write_spooled_parts`
    writes the parts ``trace_parts`` cuts from the measurement without
    formatting the trace again.

    Returns: per path, event count, uncompressed size in bytes and CRC-32
    (for :func:`check_gzip_trailer`); ``spool`` when ``meter`` stopped the
    write.

    Raises:
        NsysDuckError: a row without event text (NULL: a bug in the SQL
            stages), a part number outside 1..len(paths), or a part with
            no events.
    """
    if meter is not None and (len(paths) != 1 or spool is None):
        raise ValueError("a size meter measures a trace written as one file, into a spool")
    with ExitStack() as stack:
        parts = _open_parts(stack, paths, threads, compresslevel)
        if meter is not None:
            meter.add_metadata(parts[0].size)  # the header written
        view = contract.view_with_role("json-trace").view
        select = "part, size_bucket, size_bucket_other, event_json || ',\n'"
        for query in contract.writer_queries("json-trace", select):
            for part, bucket, other, text in _part_batches(con, query):
                _refuse_nulls(text, view)
                if meter is not None:
                    meter.add(bucket, text)
                    if meter.over:  # measured and spooled only: written in parts
                        parts[0].flush()
                        spool.spill(bucket, other, text)
                        continue
                    spool.written(bucket, other)
                _route(parts, part, text, view)
        if meter is not None and meter.over:
            spool.close()
            return spool
        return [stream.close() for stream in parts]


def write_spooled_parts(
    spool: Spool,
    paths: list[Path],
    bucket_part: np.ndarray,
    *,
    threads: int = 2,
    compresslevel: int = 1,
) -> list[JsonStats]:
    """Write the rows ``spool`` kept of a one-part attempt into the files
    of the parts (``paths[k]``: part k + 1), each row to the part of its
    bucket (``bucket_part[b]``: the part of bucket b, from the view with
    role ``json-bucket-parts``), metadata to every part, and a flow only
    when both its slices' buckets are in one part: the rows and drops of
    writing ``trace_events_parted`` by its ``part`` column, each part in
    the order the rows were formatted.

    Returns per path what :func:`write_trace_json` returns. Raises
    json_spool.SpoolMisread when the rows do not read back
    (:meth:`Spool.batches`), NsysDuckError when a part has no events."""
    # index bucket + 1 (json_spool.NO_BUCKET, metadata: 0, no part)
    lookup = np.concatenate([[0], np.asarray(bucket_part, np.int32)])
    view = contract.view_with_role("json-bucket-parts").view
    with ExitStack() as stack:
        parts = _open_parts(stack, paths, threads, compresslevel)
        for bucket, other, text in spool.batches():
            part, part_other = lookup[bucket + 1], lookup[other + 1]
            keep = part == part_other
            if not keep.all():
                part, text = part[keep], text.filter(pa.array(keep))
            _route(parts, pa.array(part, mask=part == 0), text, view)
        return [stream.close() for stream in parts]


def _open_parts(stack: ExitStack, paths: list[Path], threads: int, level: int) -> list[_PartStream]:
    """A JSON part stream per path, gzip-compressed by ISA-L (``threads``
    threads in all), closed with ``stack``."""
    per_file = max(1, threads // len(paths))
    return [
        _PartStream(
            stack.enter_context(igzip_threaded.open(p, "wb", compresslevel=level, threads=per_file))
        )
        for p in paths
    ]


def _refuse_nulls(text: pa.Array, view: str) -> None:
    """A NULL row would vanish from the buffer and break the array: refuse
    rather than write a damaged trace."""
    if text.null_count:
        raise NsysDuckError(
            f"{text.null_count} rows of {view} have no event "
            "text (NULL event_json: a bug in the SQL stages)"
        )


def _route(parts: list[_PartStream], part: pa.Array, text: pa.Array, view: str) -> None:
    """Add each row of ``text`` to the stream of its ``part`` (1-based;
    NULL: metadata, to every stream), each stream in the rows' order."""
    n = len(parts)
    if n == 1 or part.null_count == len(part):
        for stream in parts:
            stream.add(text)
        return
    if part.null_count:  # runs of metadata and of events, in order
        meta = pc.is_null(part).to_numpy(zero_copy_only=False)
        cuts = [0, *(np.flatnonzero(np.diff(meta)) + 1).tolist(), len(meta)]
        for lo, hi in itertools.pairwise(cuts):
            _route(parts, part.slice(lo, hi - lo), text.slice(lo, hi - lo), view)
        return
    for k in pc.unique(part).to_pylist():
        if not 1 <= k <= n:
            raise NsysDuckError(f"{view} names part {k} of a trace written in {n} parts")
        parts[k - 1].add(pc.filter(text, pc.equal(part, k)))


def save_json_sizes(con: duckdb.DuckDBPyConnection, meter: SizeMeter) -> None:
    """Put what ``meter`` measured into the table with role ``json-sizes``
    (``trace_json_sizes``), in place of what it held: ``trace_parts`` cuts
    the trace from it."""
    table = contract.view_with_role("json-sizes").view
    rows = meter.rows()
    con.register("_json_size_rows", rows)
    try:
        con.execute(f"DELETE FROM {table}")
        con.execute(f"INSERT INTO {table} SELECT size_bucket, bytes FROM _json_size_rows")
    finally:
        con.unregister("_json_size_rows")


@dataclass
class KinetoFiles:
    """What :func:`write_kineto_json` wrote: per rank file (in rank order)
    its path and :class:`JsonStats`."""

    files: list[tuple[Path, JsonStats]]

    @property
    def events(self) -> int:
        return sum(s.events for _, s in self.files)

    @property
    def bytes_uncompressed(self) -> int:
        return sum(s.bytes_uncompressed for _, s in self.files)


def write_kineto_json(
    con: duckdb.DuckDBPyConnection,
    folder: Path,
    *,
    threads: int = 2,
    compresslevel: int = 1,
) -> KinetoFiles:
    """Write the Kineto trace (``sql/60_kineto``) into the new folder
    ``folder``: one gzip file per rank of ``kineto_ranks``
    (``kineto_trace_headers.file_name``), each one JSON object, the header
    line first (``kineto_trace_headers``), then ``kineto_events`` of the
    rank in its order (``event_order``, ``order_key``: the events HTA
    pairs by correlation first), then ``]}``.

    One pass over ``kineto_events`` in Arrow batches, each row to its rank's
    file (as :func:`write_trace_json` does with parts); ISA-L compresses
    each file into a single gzip member (threaded when there are no more
    files than ``threads``). Every file's gzip trailer is checked
    (:func:`check_gzip_trailer`).

    Raises:
        NsysDuckError: no rank (no process with GPU work), a row without
            event text, or a rank that is not in ``kineto_ranks``.
    """
    (head_query,) = contract.writer_queries("kineto-headers", "rank, file_name, header_json")
    heads = con.execute(head_query).fetchall()
    if not heads:
        raise NsysDuckError(
            "the Kineto trace has no rank: no profiled process has GPU work "
            "(kernels, copies, memsets)"
        )
    folder.mkdir()
    n = len(heads)
    per_file = threads // n if n <= threads else 0
    index = {rank: k for k, (rank, _, _) in enumerate(heads)}
    paths = [folder / name for _, name, _ in heads]
    with ExitStack() as stack:
        streams = [
            _PartStream(
                stack.enter_context(
                    igzip_threaded.open(path, "wb", compresslevel=compresslevel, threads=per_file)
                ),
                header=header.encode("utf-8"),
                footer=b"\n]}\n",
                empty_ok=True,
            )
            for path, (_, _, header) in zip(paths, heads, strict=True)
        ]
        # each file in the SQL's order (HTA's row indices: 30_kineto_events.sql)
        events = contract.view_with_role("kineto-events").view
        (query,) = contract.writer_queries("kineto-events", "rank, event_json || ',\n'")
        for rank, text in _part_batches(con, query):
            if text.null_count:
                raise NsysDuckError(
                    f"{text.null_count} rows of {events} have no event text "
                    "(NULL event_json: a bug in the SQL stages)"
                )
            ranks = pc.unique(rank).to_pylist()
            for r in ranks:
                if r not in index:
                    raise NsysDuckError(f"{events} names rank {r}, which has no file header")
                arr = text if len(ranks) == 1 else pc.filter(text, pc.equal(rank, r))
                streams[index[r]].add(arr)
        stats = [s.close() for s in streams]
    for path, st in zip(paths, stats, strict=True):
        check_gzip_trailer(path, st)
    return KinetoFiles(list(zip(paths, stats, strict=True)))


def publish_folder(tmp: Path, final: Path) -> None:
    """Put the finished folder ``tmp`` in place of ``final`` (two renames:
    the old folder aside, the new one in; the old one is then removed)."""
    old = None
    if final.exists():
        old = final.with_name(f".{final.name}.old-{os.getpid()}")
        os.replace(final, old)
    os.replace(tmp, final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def check_gzip_trailer(path: Path, stats: JsonStats) -> None:
    """Cheap check of a written trace: gzip header, and a trailer whose CRC-32
    and length (mod 2^32) are those of the text :func:`write_trace_json` fed in.

    Catches a truncated or damaged end without inflating the file (the full
    check, every member and byte, is the validator's ``gzip`` rule, which
    ``convert`` runs unless ``--no-validate``). Raises NsysDuckError.
    """
    with open(path, "rb") as f:
        head = f.read(3)
        f.seek(0, os.SEEK_END)
        if f.tell() < 18 or head != b"\x1f\x8b\x08":
            raise NsysDuckError(f"{path.name}: not a gzip file")
        f.seek(-8, os.SEEK_END)
        trailer = f.read(8)
    crc = int.from_bytes(trailer[:4], "little")
    isize = int.from_bytes(trailer[4:], "little")
    if crc != stats.crc32 or isize != stats.bytes_uncompressed % (1 << 32):
        raise NsysDuckError(
            f"{path.name}: the gzip trailer does not match the text "
            "written (truncated or damaged file)"
        )


def write_parquet(con: duckdb.DuckDBPyConnection, query: str, path: Path) -> int:
    """Stream ``query`` into a zstd Parquet file, one row group per batch of
    PARQUET_BATCH_ROWS rows; returns the row count."""
    reader = arrow_reader(con.sql(query), PARQUET_BATCH_ROWS)
    rows = 0
    with pq.ParquetWriter(path, reader.schema, compression="zstd") as writer:
        for batch in reader:
            writer.write_batch(batch)
            rows += batch.num_rows
    return rows


def write_kernel_dependencies(path: Path) -> int:
    """The v1 compatibility table: fixed schema, zero rows."""
    pq.write_table(KERNEL_DEPENDENCIES_SCHEMA.empty_table(), path, compression="zstd")
    return 0


def publish(pairs: list[tuple[Path, Path]]) -> None:
    """Rename each (temporary, final) pair into place."""
    for tmp, final in pairs:
        os.replace(tmp, final)


def discard(paths: list[Path]) -> None:
    """Remove temporary files left by a failed run."""
    for p in paths:
        try:
            p.unlink()
        except FileNotFoundError:
            pass
