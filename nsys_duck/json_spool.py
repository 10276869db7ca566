"""The rows of a one-part attempt at the JSON trace, kept so that a trace
over ``--max-json-size`` is written in parts without being formatted again
(issue 29: the write is the size estimate, also when the trace is split).

The attempt writes its rows into its gzip file until the size meter passes
the limit; :class:`Spool` remembers the size buckets of those rows
(``trace_events_parted.size_bucket`` and ``size_bucket_other``), and keeps
every later row, with its buckets, in an Arrow IPC file beside it,
LZ4-compressed (abacus x16 at a 150 MB limit: 585 MB of rows kept in 74 MB,
the rewrite in the same 1.0-1.1 s as uncompressed; zstd 29 MB but 1.6 s).
:meth:`Spool.batches` then gives every row again, in the order it was
formatted: the gzip file's rows (one per line: the SQL ends each event with
``,\\n`` and escapes newlines in its strings), then the spilled ones.

Memory: the buckets of the rows in the gzip file (4 bytes a row, at most
``--max-json-size`` of rows: 15 MB at the default 800 MB) and one batch at
a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from isal import igzip

from .errors import NsysDuckError

COMPRESSION = "lz4"  # of the IPC file's buffers (see above)
CHUNK_BYTES = 32 << 20  # decompressed bytes of the gzip file read at once
NO_BUCKET = -1  # a metadata row's bucket (NULL in SQL)
SCHEMA = pa.schema(
    [("size_bucket", pa.int16()), ("size_bucket_other", pa.int16()), ("text", pa.large_string())]
)


class SpoolMisread(NsysDuckError):
    """The gzip file does not hold one line per row noted: an event text
    with a raw newline (valid JSON, but the rows cannot be read back)."""


def _filled(bucket: pa.Array) -> np.ndarray:
    """Buckets (0..999, NO_BUCKET for NULL) as int16: 2 bytes a row kept."""
    return pc.fill_null(bucket, NO_BUCKET).to_numpy(zero_copy_only=False).astype(np.int16)


class Spool:
    """The rows of one attempt: those written to ``gz_path`` (after a
    ``header`` of ``header_bytes``) and those spilled to ``ipc_path``."""

    def __init__(self, gz_path: Path, ipc_path: Path, header_bytes: int) -> None:
        self.gz_path = gz_path
        self.ipc_path = ipc_path
        self.header_bytes = header_bytes
        self._written: list[tuple[np.ndarray, np.ndarray]] = []
        self._sink = None
        self._writer = None

    def written(self, bucket: pa.Array, other: pa.Array) -> None:
        """Note the buckets of rows routed to the gzip file, in order."""
        self._written.append((_filled(bucket), _filled(other)))

    def spill(self, bucket: pa.Array, other: pa.Array, text: pa.Array) -> None:
        """Keep rows past the limit (they are not in the gzip file)."""
        if self._writer is None:
            self._sink = pa.OSFile(str(self.ipc_path), "wb")
            options = pa.ipc.IpcWriteOptions(compression=COMPRESSION)
            self._writer = pa.ipc.new_stream(self._sink, SCHEMA, options=options)
        batch = pa.record_batch(
            [pa.array(_filled(bucket)), pa.array(_filled(other)), text.cast(pa.large_string())],
            schema=SCHEMA,
        )
        self._writer.write_batch(batch)

    def close(self) -> None:
        """Finish the IPC file (the gzip file is its writer's to close)."""
        if self._writer is not None:
            self._writer.close()
            self._sink.close()
            self._writer = None

    def batches(self) -> Iterator[tuple[np.ndarray, np.ndarray, pa.Array]]:
        """Every row in formatting order, batch by batch: (size_bucket,
        size_bucket_other, text ending in ``,\\n``), NO_BUCKET for metadata.

        Raises SpoolMisread when the gzip file does not hold one line per
        row noted (an event text with a raw newline); call it once."""
        self.close()
        written, self._written = self._written, []
        buckets = np.concatenate([b for b, _ in written] or [np.empty(0, np.int16)])
        others = np.concatenate([o for _, o in written] or [np.empty(0, np.int16)])
        del written
        at = 0
        for text in _lines(self.gz_path, self.header_bytes):
            n = len(text)
            if at + n > len(buckets):
                break
            yield buckets[at : at + n], others[at : at + n], text
            at += n
        if at != len(buckets):
            raise SpoolMisread(
                f"the JSON trace's first {len(buckets)} rows did not read back one a line "
                f"from {self.gz_path.name} (an event text with a raw newline)"
            )
        if self.ipc_path.exists():
            with pa.OSFile(str(self.ipc_path), "rb") as source:
                for batch in pa.ipc.open_stream(source):
                    yield batch.column(0).to_numpy(), batch.column(1).to_numpy(), batch.column(2)


def _lines(path: Path, skip: int) -> Iterator[pa.Array]:
    """The lines (each with its ``\\n``) of a gzip file after its first
    ``skip`` bytes, as Arrow string arrays over the decompressed chunks."""
    rest = b""
    with igzip.open(path, "rb") as src:
        src.read(skip)
        while chunk := src.read(CHUNK_BYTES):
            data = rest + chunk if rest else chunk
            ends = np.flatnonzero(np.frombuffer(data, np.uint8) == 10) + 1
            if not len(ends):
                rest = data
                continue
            offsets = np.concatenate([[0], ends]).astype(np.int64)
            buf = pa.py_buffer(data)
            yield pa.Array.from_buffers(
                pa.large_string(), len(ends), [None, pa.py_buffer(offsets), buf]
            )
            rest = data[int(ends[-1]) :]
    if rest:
        raise SpoolMisread(f"{path.name} ends inside an event (no closing newline)")
