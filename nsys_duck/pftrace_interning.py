"""Interning for the protobuf trace (perfetto.dev, "Interning"): each
string a TrackEvent names (event name, category, debug-annotation name or
string value) is written once per packet sequence, in an ``InternedData``
packet before the first event that uses it, and the events carry its iid.

Interning state is per sequence (NAME.pftrace has one sequence per track,
``trace_track_events.sequence_id``), so :class:`Interner` keeps one table
per (sequence, kind) and works a column at a time: the Python work is per
distinct (sequence, string) of a batch, never per event.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .protobuf import cat, const, length_delimited, numbers, strings, tag, varint

# interned_data/interned_data.proto: InternedData's fields by kind
KINDS = {
    "name": tag(2, 2),  # event_names (EventName)
    "cat": tag(1, 2),  # event_categories (EventCategory)
    "key": tag(3, 2),  # debug_annotation_names (DebugAnnotationName)
    "str": tag(29, 2),  # debug_annotation_string_values (InternedString)
}
ENTRY_IID = tag(1, 0)  # every entry: iid = 1, its string = 2
ENTRY_STRING = tag(2, 2)


class Interner:
    """The interning tables of every sequence: per (sequence, kind), string
    -> iid (1, 2, ... in the order first seen), and the entries made since
    they were last written (:meth:`interned_data`)."""

    def __init__(self) -> None:
        self.tables: dict[tuple[int, str], dict[str, int]] = defaultdict(dict)
        self.new: dict[int, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        self.size = 0  # strings held, all sequences

    def clear(self) -> None:
        """Forget every iid (the writer clears every sequence's state)."""
        self.__init__()

    def _iid(self, seq: int, kind: str, s: str) -> int:
        table = self.tables[(seq, kind)]
        iid = table.get(s)
        if iid is None:
            iid = table[s] = len(table) + 1
            self.new[seq][kind].append(s)
            self.size += 1
        return iid

    def iids(self, kind: str, arr: pa.Array, seqs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(rows with a value, their iids) of the string column ``arr``,
        row r interned on sequence ``seqs[r]``."""
        enc = pc.dictionary_encode(arr)
        if isinstance(enc, pa.ChunkedArray):
            enc = enc.combine_chunks()
        indices = enc.indices
        rows = np.flatnonzero(numbers(indices.is_valid()))
        idx = numbers(indices.drop_null()).astype(np.int64)
        width = max(1, len(enc.dictionary))
        pairs, inverse = np.unique(seqs[rows].astype(np.int64) * width + idx, return_inverse=True)
        words = enc.dictionary.to_pylist()
        ids = np.array(
            [self._iid(int(p // width), kind, words[int(p % width)]) for p in pairs], np.int64
        )
        return rows, ids[inverse.reshape(-1)]

    def iid_of(self, kind: str, s: str, seqs: np.ndarray) -> np.ndarray:
        """The iid of the one string ``s`` on each sequence of ``seqs``."""
        uniq, inverse = np.unique(seqs, return_inverse=True)
        ids = np.array([self._iid(int(q), kind, s) for q in uniq], np.int64)
        return ids[inverse.reshape(-1)]

    def interned_data(self) -> dict[int, bytes]:
        """Per sequence with entries made since the last call, its
        ``InternedData`` message (the entries, kind by kind)."""
        out = {}
        for seq, kinds in self.new.items():
            payload = b""
            for kind, added in kinds.items():
                if not added:
                    continue
                first = self.tables[(seq, kind)][added[0]]
                entry = cat(
                    const(ENTRY_IID, len(added)),
                    varint(np.arange(first, first + len(added), dtype=np.int64)),
                    length_delimited(ENTRY_STRING, strings(pa.array(added, pa.large_string()))),
                )
                payload += length_delimited(KINDS[kind], entry).tobytes()
            if payload:
                out[seq] = payload
        self.new.clear()
        return out
