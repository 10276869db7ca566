"""Protocol Buffers wire format, a column at a time (numpy).

A :class:`Ragged` holds one byte string per row, back to back (``data``,
``uint8``) with each row's length (``lengths``, ``int64``). The functions
here build the fields of many messages at once, one numpy pass per field,
so that encoding a trace of millions of events runs no Python loop per
event: :func:`varint` (base-128 varints), :func:`const` (a tag, the same
bytes on every row), :func:`cat` (rows concatenated field after field),
:func:`length_delimited` (wire type 2: a string or a nested message), and
:func:`present` (a field that only some rows have).

Only what Perfetto's TracePacket needs is here: varints (wire type 0), fixed
64-bit values (wire type 1) and length-delimited fields (wire type 2);
field order inside a message is free in protobuf, so a message is the
concatenation of its fields in any order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


@dataclass
class Ragged:
    """One byte string per row: ``data`` (uint8, rows back to back) and
    ``lengths`` (int64, bytes of each row; ``lengths.sum() == len(data)``)."""

    data: np.ndarray
    lengths: np.ndarray

    def __len__(self) -> int:
        return len(self.lengths)

    def tobytes(self) -> bytes:
        return self.data.tobytes()


_NUMPY_TYPES = {
    pa.int8(): np.int8,
    pa.int16(): np.int16,
    pa.int32(): np.int32,
    pa.int64(): np.int64,
    pa.uint8(): np.uint8,
    pa.uint16(): np.uint16,
    pa.uint32(): np.uint32,
    pa.uint64(): np.uint64,
    pa.float32(): np.float32,
    pa.float64(): np.float64,
}


def numbers(arr: pa.Array) -> np.ndarray:
    """The values of a numeric or boolean Arrow array without nulls, as
    numpy (from its buffer; booleans as 0/1). pyarrow's own ``to_numpy``
    imports pandas the first time, 0.4 s a process."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_boolean(arr.type):
        arr = pc.cast(arr, pa.uint8())
    dtype = _NUMPY_TYPES[arr.type]
    return np.frombuffer(arr.buffers()[1], dtype)[arr.offset : arr.offset + len(arr)]


def _starts(lengths: np.ndarray) -> np.ndarray:
    return np.cumsum(lengths) - lengths


def varint_bytes(value: int) -> bytes:
    """One unsigned value (< 2^64) as a base-128 varint."""
    out = bytearray()
    while True:
        byte = value & 127
        value >>= 7
        if value:
            out.append(byte | 128)
        else:
            out.append(byte)
            return bytes(out)


def tag(field: int, wire_type: int) -> bytes:
    """A field's key: ``field << 3 | wire_type`` as a varint."""
    return varint_bytes(field << 3 | wire_type)


# the smallest value of each varint length: 2^7, 2^14, ... 2^63
_VARINT_LIMITS = np.array([1 << (7 * k) for k in range(1, 10)], np.uint64)


def varint(values: np.ndarray) -> Ragged:
    """Each value as a base-128 varint (1-10 bytes; a negative int64 as its
    two's complement, 10 bytes, as protobuf writes an int64)."""
    v = np.asarray(values)
    v = v.view(np.uint64) if v.dtype == np.int64 else v.astype(np.uint64)
    n = np.searchsorted(_VARINT_LIMITS, v, side="right").astype(np.int64) + 1
    out = np.empty(int(n.sum()), np.uint8)
    at = _starts(n)
    rows = np.arange(len(v))
    for k in range(int(n.max()) if len(n) else 0):
        if k:
            rows = rows[n[rows] > k]
        byte = (v[rows] >> np.uint64(7 * k)) & np.uint64(127)
        byte |= np.where(n[rows] > k + 1, np.uint64(128), np.uint64(0))
        out[at[rows] + k] = byte.astype(np.uint8)
    return Ragged(out, n)


def fixed64(values: np.ndarray) -> Ragged:
    """Each value as 8 little-endian bytes (wire type 1: fixed64, double)."""
    v = np.ascontiguousarray(values)
    data = v.astype(v.dtype.newbyteorder("<"), copy=False).view(np.uint8)
    return Ragged(data, np.full(len(v), 8, np.int64))


def const(b: bytes, rows: int) -> Ragged:
    """The same bytes on each of ``rows`` rows (a field's tag)."""
    return Ragged(np.tile(np.frombuffer(b, np.uint8), rows), np.full(rows, len(b), np.int64))


def strings(arr: pa.Array) -> Ragged:
    """An Arrow string or binary array without nulls, its bytes as they are
    (no copy of the data buffer)."""
    if pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type):
        dtype = np.int64
    elif pa.types.is_string(arr.type) or pa.types.is_binary(arr.type):
        dtype = np.int32
    else:
        arr = arr.cast(pa.large_string())
        dtype = np.int64
    offsets = np.frombuffer(arr.buffers()[1], dtype)[arr.offset : arr.offset + len(arr) + 1]
    buf = arr.buffers()[2]
    data = np.frombuffer(buf, np.uint8) if buf is not None else np.empty(0, np.uint8)
    return Ragged(data[offsets[0] : offsets[-1]], np.diff(offsets).astype(np.int64))


class Joined:
    """Rows made of several :class:`Ragged` parts, one after the other (a
    message's fields), not yet copied together: nesting a message in
    another (:func:`length_delimited`) only needs its lengths, so each byte
    is copied once, when the outermost message is written (``data``)."""

    def __init__(self, parts: list[Ragged], lengths: np.ndarray) -> None:
        self.parts = parts
        self.lengths = lengths  # the sum of the parts' lengths

    def __len__(self) -> int:
        return len(self.lengths)

    @property
    def data(self) -> np.ndarray:
        return _copy_together(self.parts, self.lengths)

    def tobytes(self) -> bytes:
        return self.data.tobytes()


def _leaves(x: Ragged | Joined) -> list[Ragged]:
    return x.parts if isinstance(x, Joined) else [x]


def _copy_together(parts: list[Ragged], lengths: np.ndarray) -> np.ndarray:
    """The parts' rows one after the other, row by row, in one buffer:
    Arrow's element-wise join (a memcpy a row and part); past 2 GB, which
    its 32-bit offsets cannot hold, numpy's index of every byte."""
    total = int(lengths.sum())
    if total < 2**31 - 1:
        joined = pc.binary_join_element_wise(
            *(as_arrow(p, large=False) for p in parts), pa.scalar(b"", pa.binary())
        )
        return strings(joined).data
    out = np.empty(total, np.uint8)
    at = _starts(lengths)
    for p in parts:
        if len(p.data):
            move = np.repeat(at - _starts(p.lengths), p.lengths)
            out[move + np.arange(len(p.data))] = p.data
        at = at + p.lengths
    return out


def cat(*parts: Ragged | Joined) -> Joined:
    """Row by row, the parts' bytes one after the other (the fields of one
    message; every part has the same number of rows)."""
    lengths = parts[0].lengths.copy()
    for p in parts[1:]:
        lengths += p.lengths
    return Joined([leaf for p in parts for leaf in _leaves(p)], lengths)


def length_delimited(key: bytes, payload: Ragged | Joined) -> Joined:
    """A wire-type-2 field on every row: ``key``, the payload's length as a
    varint, the payload (a string or a nested message)."""
    return cat(const(key, len(payload)), varint(payload.lengths), payload)


def present(rows: np.ndarray, n: int, field: Ragged | Joined) -> Joined:
    """``field`` (one row per index in ``rows``, ascending) placed on those
    rows of ``n``; the other rows have no bytes (the field is absent)."""
    placed = []
    for leaf in _leaves(field):
        lengths = np.zeros(n, np.int64)
        lengths[rows] = leaf.lengths
        placed.append(Ragged(leaf.data, lengths))
    total = np.zeros(n, np.int64)
    total[rows] = field.lengths
    return Joined(placed, total)


def as_arrow(rows: Ragged | Joined, large: bool = True) -> pa.Array:
    """The rows as an Arrow large_binary array (``large=False``: binary,
    32-bit offsets, under 2 GB), the data buffer shared."""
    offsets = np.zeros(len(rows.lengths) + 1, np.int64 if large else np.int32)
    np.cumsum(rows.lengths, out=offsets[1:])
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(rows.data))]
    return pa.Array.from_buffers(pa.large_binary() if large else pa.binary(), len(rows), buffers)


def empty(n: int) -> Ragged:
    """``n`` rows without a byte (a field no row has)."""
    return Ragged(np.empty(0, np.uint8), np.zeros(n, np.int64))


def take(rows: Ragged | Joined, indices: np.ndarray) -> Ragged:
    """Row ``indices[i]`` of ``rows`` as row i (rows may repeat), copied by
    Arrow's take (a memcpy a row, no index of every byte)."""
    return strings(as_arrow(rows).take(pa.array(indices, pa.int64())))


def grouped(items: Ragged | Joined, offsets: np.ndarray) -> Ragged:
    """Items (a repeated field's elements, each already encoded) joined into
    rows: row r holds items ``offsets[r]`` to ``offsets[r + 1]``."""
    cum = np.concatenate([[0], np.cumsum(items.lengths)])
    return Ragged(items.data, (cum[offsets[1:]] - cum[offsets[:-1]]).astype(np.int64))
