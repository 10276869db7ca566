"""A slice's args object as TrackEvent debug annotations, a column at a
time: the JSON text the SQL wrote (``trace_track_events.args_json``, the
JSON trace's own ``args``, ``slice_args_json``) is read by Arrow's JSON
reader into a column per member, and each column becomes one
``DebugAnnotation`` a row (track_event/debug_annotation.proto): integers
``int_value`` (``uint_value`` past int64), reals ``double_value``, booleans
``bool_value``, strings an interned ``string_value_iid``, arrays
``array_values``, objects ``dict_entries``; the member's name is an interned
``name_iid``. Perfetto shows them as ``debug.NAME`` args (the JSON import's
``args.NAME``).
"""

from __future__ import annotations

import io
import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from .errors import NsysDuckError
from .pftrace_interning import Interner
from .protobuf import (
    Joined,
    Ragged,
    as_arrow,
    cat,
    const,
    empty,
    fixed64,
    grouped,
    length_delimited,
    numbers,
    present,
    strings,
    tag,
    take,
    varint,
    varint_bytes,
)

ANNOTATIONS = tag(4, 2)  # TrackEvent.debug_annotations
NAME_IID = tag(1, 0)
BOOL = tag(2, 0)
UINT = tag(3, 0)
INT = tag(4, 0)
DOUBLE = tag(5, 1)
STRING = tag(6, 2)
NAME = tag(10, 2)
DICT_ENTRIES = tag(11, 2)
ARRAY_VALUES = tag(12, 2)
STRING_IID = tag(17, 0)


def valid_rows(arr: pa.Array) -> np.ndarray:
    """Indices of the rows of ``arr`` that are not null."""
    if arr.null_count == 0:
        return np.arange(len(arr))
    return np.flatnonzero(numbers(arr.is_valid()))


def _value(arr: pa.Array, seqs: np.ndarray, interner: Interner):
    """(rows with a value, the DebugAnnotation value field of each) of one
    member's column, row r on sequence ``seqs[r]``; None when the column
    has no value (Arrow's null type)."""
    t = arr.type
    if pa.types.is_null(t):
        return None
    if pa.types.is_dictionary(t):
        arr = arr.cast(t.value_type)
        t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        rows, iids = interner.iids("str", arr, seqs)
        return rows, cat(const(STRING_IID, len(rows)), varint(iids))
    rows = valid_rows(arr)
    values = arr.drop_null() if arr.null_count else arr
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return rows, _distinct_arrays(values, seqs[rows], interner)
    if pa.types.is_struct(t):
        return rows, _dict_entries(values, seqs[rows], interner)
    v = numbers(values)
    if pa.types.is_boolean(t):
        return rows, cat(const(BOOL, len(rows)), varint(v.astype(np.int64)))
    if pa.types.is_unsigned_integer(t):
        return rows, cat(const(UINT, len(rows)), varint(v.astype(np.uint64)))
    if pa.types.is_integer(t):
        return rows, cat(const(INT, len(rows)), varint(v.astype(np.int64)))
    if pa.types.is_floating(t):
        return rows, cat(const(DOUBLE, len(rows)), fixed64(v.astype(np.float64)))
    text = strings(pc.cast(values, pa.large_string()))  # anything else, as text
    return rows, cat(const(STRING, len(rows)), varint(text.lengths), text)


def _list_keys(lists: pa.Array) -> pa.Array | None:
    """Bytes per list that only an equal list has (None for a list type
    this does not know): its elements' own bytes for numbers, for strings
    the int32 index of each in the batch's dictionary of them (-1: null),
    a view of one buffer either way."""
    offsets = numbers(lists.offsets).astype(np.int64)
    items = lists.flatten()
    if pa.types.is_string(items.type) or pa.types.is_large_string(items.type):
        items = pc.fill_null(pc.dictionary_encode(items).indices, -1).cast(pa.int32())
    if items.type not in (pa.int32(), pa.int64(), pa.float64(), pa.bool_()):
        return None
    if pa.types.is_boolean(items.type):
        items = items.cast(pa.uint8())
    width = items.type.bit_width // 8
    data = np.ascontiguousarray(numbers(pc.fill_null(items, 0))).view(np.uint8)
    return as_arrow(Ragged(data, np.diff(offsets) * width))


def _distinct_arrays(lists: pa.Array, seqs: np.ndarray, interner: Interner) -> Ragged:
    """:func:`_array_values` of each distinct (sequence, list) once, then
    repeated (a kernel's NVTX path, hundreds of names, is the same for every
    launch of one iteration)."""
    known = _list_keys(lists)
    if known is None:
        return _array_values(lists, seqs, interner)
    keys = pc.dictionary_encode(known)
    width = max(1, len(keys.dictionary))
    _, first, inverse = np.unique(
        seqs * width + numbers(keys.indices).astype(np.int64),
        return_index=True,
        return_inverse=True,
    )
    encoded = _array_values(lists.take(pa.array(first)), seqs[first], interner)
    return take(encoded, inverse.reshape(-1))


def _array_values(lists: pa.Array, seqs: np.ndarray, interner: Interner) -> Ragged:
    """Per list, its elements as repeated ``array_values`` annotations."""
    offsets = numbers(lists.offsets).astype(np.int64)
    offsets -= offsets[0]
    items = lists.flatten()
    found = _value(items, np.repeat(seqs, np.diff(offsets)), interner)
    if found is None:
        return empty(len(lists))
    rows, value = found
    return grouped(present(rows, len(items), length_delimited(ARRAY_VALUES, value)), offsets)


def _dict_entries(structs: pa.StructArray, seqs: np.ndarray, interner: Interner) -> Joined:
    """Per object, its members as ``dict_entries`` annotations (named by
    ``name``: nested names are not interned)."""
    n = len(structs)
    parts = [empty(n)]
    for k in range(structs.type.num_fields):
        found = _value(structs.field(k), seqs, interner)
        if found is None:
            continue
        rows, value = found
        name = NAME + varint_bytes(len(structs.type.field(k).name.encode()))
        named = cat(const(name + structs.type.field(k).name.encode(), len(rows)), value)
        parts.append(present(rows, n, length_delimited(DICT_ENTRIES, named)))
    return cat(*parts)


def parse_args(texts: pa.Array) -> pa.Table:
    """The args objects (JSON text, one per row, none null) as a table with
    a column per member (Arrow's JSON reader infers each member's type). A
    batch where a member has several JSON types (number and text) is read
    in Python instead, that member as text.

    Raises NsysDuckError when the text does not give one object a row."""
    # each object followed by a newline: the reader's one-object-a-line input
    lines = strings(pc.binary_join_element_wise(texts, "", "\n"))
    try:
        table = pa_json.read_json(
            io.BytesIO(lines.data),
            read_options=pa_json.ReadOptions(block_size=max(1 << 20, len(lines.data) + 1)),
        )
    except pa.ArrowInvalid:
        table = _parse_mixed(texts)
    if table.num_rows != len(texts):
        raise NsysDuckError("the args objects of trace_track_events did not parse one per row")
    return table


def _parse_mixed(texts: pa.Array) -> pa.Table:
    """The slow path of :func:`parse_args`: a member with several JSON types
    in the batch becomes text (its values as JSON writes them)."""
    rows = [json.loads(t) for t in texts.to_pylist()]
    keys: dict[str, None] = {}
    for r in rows:
        keys.update(dict.fromkeys(r))
    columns = {}
    for k in keys:
        values = [r.get(k) for r in rows]
        if len({type(v) for v in values if v is not None}) > 1:
            values = [v if v is None or isinstance(v, str) else json.dumps(v) for v in values]
        columns[k] = pa.array(values)
    return pa.table(columns) if columns else pa.table({"_": pa.nulls(len(rows))})


def read_args(texts: pa.Array) -> tuple[np.ndarray, pa.Table | None, np.ndarray]:
    """(rows with an args object, the distinct objects as
    :func:`parse_args` reads them, which of them each such row has) of a
    column of args text (NULL: none); the table is None when no row has
    one. Each distinct text is read once (an OS runtime call's
    ``{"returnValue":0}`` stands for thousands of rows). Only Arrow's
    work, so it can run beside the encoder."""
    rows = valid_rows(texts)
    if not len(rows):
        return rows, None, rows
    present_texts = texts.filter(texts.is_valid()) if len(rows) < len(texts) else texts
    distinct = pc.dictionary_encode(present_texts)
    return rows, parse_args(distinct.dictionary), numbers(distinct.indices).astype(np.int64)


def annotations(args: tuple, n: int, seqs: np.ndarray, interner: Interner) -> Joined | Ragged:
    """Per row of ``n``, the DebugAnnotations (TrackEvent field 4) of its
    args object (``args``: :func:`read_args`), a member each in the
    object's order, row r's strings interned on sequence ``seqs[r]``;
    encoded once per distinct (sequence, object)."""
    rows, distinct, which = args
    if distinct is None:
        return empty(n)
    width = len(distinct)
    pairs, inverse = np.unique(seqs[rows] * width + which, return_inverse=True)
    encoded = _encode(distinct.take(pa.array(pairs % width)), pairs // width, interner)
    return present(rows, n, take(encoded, inverse.reshape(-1)))


def _encode(table: pa.Table, on: np.ndarray, interner: Interner) -> Joined:
    """Row r of ``table`` (one args object) as its annotations, interned on
    sequence ``on[r]``."""
    rows = np.arange(len(on))
    parts = [empty(len(rows))]
    for name in table.column_names:
        found = _value(table.column(name).combine_chunks(), on, interner)
        if found is None:
            continue
        at, value = found
        key = cat(const(NAME_IID, len(at)), varint(interner.iid_of("key", name, on[at])))
        parts.append(present(at, len(rows), length_delimited(ANNOTATIONS, cat(key, value))))
    return cat(*parts)
