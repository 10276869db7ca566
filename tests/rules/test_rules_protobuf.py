"""The protobuf wire format of NAME.pftrace (nsys_duck/protobuf.py) and
the args-to-annotations rule (nsys_duck/pftrace.py), on given values."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from nsys_duck import protobuf
from nsys_duck.pftrace_args import annotations, read_args
from nsys_duck.pftrace_interning import Interner


@pytest.mark.rules
def test_varints_are_protobufs():
    values = [0, 1, 127, 128, 300, 16383, 16384, 2**35, 2**63 - 1, 1_780_000_000_123_456_789]
    got = protobuf.varint(np.array(values, np.int64))
    assert got.lengths.tolist() == [len(protobuf.varint_bytes(v)) for v in values]
    assert got.tobytes() == b"".join(protobuf.varint_bytes(v) for v in values)
    assert protobuf.varint_bytes(300) == b"\xac\x02"  # protobuf's own example
    # a negative int64 is its two's complement, ten bytes
    assert protobuf.varint(np.array([-1], np.int64)).tobytes() == b"\xff" * 9 + b"\x01"


@pytest.mark.rules
def test_nested_fields_and_absent_ones():
    rows = 3
    inner = protobuf.cat(protobuf.const(b"\x08", rows), protobuf.varint(np.array([1, 200, 3])))
    msg = protobuf.length_delimited(b"\x12", inner)
    assert msg.tobytes() == b"\x12\x02\x08\x01" + b"\x12\x03\x08\xc8\x01" + b"\x12\x02\x08\x03"
    # a field on rows 0 and 2 only
    some = protobuf.present(np.array([0, 2]), rows, protobuf.const(b"\x18\x05", 2))
    both = protobuf.cat(msg, some)
    assert both.lengths.tolist() == [6, 5, 6]


@pytest.mark.rules
def test_args_of_mixed_json_types_are_kept_as_text():
    """A member that is a number in one row and text in another (Arrow's
    reader refuses such a column) still becomes one annotation a row; a
    row without args has none; strings are interned per sequence."""
    texts = pa.array(['{"a":1,"b":[1,2]}', '{"a":"x"}', None, "{}", '{"a":"x"}'], pa.string())
    seqs = np.array([2, 2, 2, 2, 3])
    interner = Interner()
    out = annotations(read_args(texts), len(texts), seqs, interner)
    lengths = out.lengths.tolist()
    assert lengths[2:4] == [0, 0] and min(lengths[0], lengths[1], lengths[4]) > 0
    assert lengths[1] == lengths[4]  # the same object, on another sequence
    assert set(interner.tables[(2, "key")]) == {"a", "b"}
    assert set(interner.tables[(2, "str")]) == {"1", "x"}  # 1 as written, text
    assert set(interner.tables[(3, "str")]) == {"x"}
    assert json.loads(texts[0].as_py())["b"] == [1, 2]


@pytest.mark.rules
def test_a_ragged_take_repeats_rows():
    rows = protobuf.Ragged(np.frombuffer(b"abcdef", np.uint8), np.array([1, 2, 3]))
    got = protobuf.take(rows, np.array([2, 0, 2, 1]))
    assert got.tobytes() == b"def" + b"a" + b"def" + b"bc"
    assert got.lengths.tolist() == [3, 1, 3, 2]
