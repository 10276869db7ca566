"""Write the protobuf trace, NAME.pftrace: Perfetto's native format
(a ``Trace`` of ``TracePacket``s holding ``TrackDescriptor``s and
``TrackEvent``s; perfetto.dev, "TrackEvent" and "Interning").

The trace is the JSON trace's (output-contract.md), from views beside the
JSON's in ``sql/40_trace``: ``trace_track_descriptors`` (role
``pftrace-tracks``: a process per home, a thread per track) and
``trace_track_events`` (role ``pftrace-events``: slice begins and ends,
instants, NVTX async b/e, each with its name, category, args object and
flow ids). What is protobuf's alone is here: the wire format, and interning
(event names, categories, debug-annotation names and string values each
written once per sequence, in an ``InternedData`` packet before the first
event that uses them), one packet sequence per track (the track named once,
in the sequence's TracePacketDefaults), timestamps as the delta from the
sequence's previous packet (an incremental clock anchored to BOOTTIME, so
Perfetto shows Nsight's own integer ns), flows as ``flow_ids`` /
``terminating_flow_ids`` on the two slices' begins.

How it is encoded, and why: a column at a time with numpy
(:mod:`protobuf`), batch by batch from DuckDB's Arrow stream, with no
Python work per event; the args objects are read by Arrow's JSON reader, a
column per member, once per distinct object (:mod:`pftrace_args`), on a
second thread beside the encoder. Measured (2026-12-06, 2 cores, CPU
seconds): protobuf's own runtime (upb 7.36, the ``perfetto`` package's
TracePacket class) takes 29 µs to build and serialize one kernel begin
(17 annotations) and 2.4 µs one slice end, so abacus_many_kernels' 185,348
TrackEvents would cost about 2 s of Python before any SQL; this encoder
writes the whole file in 1.1-1.4 s wall (0.5-0.6 s for the JSON writer
on the same relations; bench/bench.py --pftrace measures both).

The file is one stream, never split, and not compressed (Perfetto reads it
as it is): 0.17-0.35 of the JSON's uncompressed size on the dev reports,
the floor being two packets per slice (README, "Traces that open").
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import duckdb
import numpy as np
import pyarrow as pa

from . import contract
from .compat import arrow_reader
from .errors import NsysDuckError
from .pftrace_args import annotations, read_args, valid_rows
from .pftrace_interning import Interner
from .protobuf import (
    Joined,
    Ragged,
    cat,
    const,
    empty,
    fixed64,
    length_delimited,
    numbers,
    present,
    tag,
    varint,
    varint_bytes,
)

BATCH_ROWS = 16_384  # TrackEvents per Arrow batch from DuckDB
PREFETCH = 1  # batches read ahead of the encoder
DESCRIPTOR_SEQUENCE = 1  # the TrackDescriptors' packet sequence
# Interned strings held before every sequence's state is cleared and
# interning starts again (bounds the writer's and Perfetto's memory on
# captures whose every NVTX range has its own name).
MAX_INTERNED = 1_000_000
# the sequences' own clock: each timestamp the delta from the previous
# packet's on the sequence (ClockSnapshot.Clock.is_incremental), anchored
# to BOOTTIME, Perfetto's default trace clock, so ns stay Nsight's own
INCREMENTAL_CLOCK = 64
BOOTTIME = 6

# trace.proto, trace_packet.proto
TRACE_PACKET = tag(1, 2)
CLOCK_SNAPSHOT = tag(6, 2)
TIMESTAMP = tag(8, 0)
SEQUENCE_ID = tag(10, 0)
TRACK_EVENT = tag(11, 2)
INTERNED_DATA = tag(12, 2)
SEQUENCE_FLAGS = tag(13, 0)
PACKET_DEFAULTS = tag(59, 2)
TRACK_DESCRIPTOR = tag(60, 2)
SEQ_INCREMENTAL_STATE_CLEARED = 1
# clock_snapshot.proto, trace_packet_defaults.proto
CLOCKS = tag(1, 2)
CLOCK_ID = tag(1, 0)
CLOCK_TIMESTAMP = tag(2, 0)
CLOCK_IS_INCREMENTAL = tag(3, 0)
DEFAULT_CLOCK_ID = tag(58, 0)
TRACK_EVENT_DEFAULTS = tag(11, 2)
DEFAULT_TRACK_UUID = tag(11, 0)
# track_event/track_event.proto
CATEGORY_IIDS = tag(3, 0)
LEGACY_EVENT = tag(6, 2)
EVENT_TYPE = tag(9, 0)
NAME_IID = tag(10, 0)
FLOW_IDS = tag(47, 1)
TERMINATING_FLOW_IDS = tag(48, 1)
LEGACY_PHASE = tag(2, 0)
LEGACY_LOCAL_ID = tag(10, 0)
# track_event/track_descriptor.proto, process_descriptor.proto, thread_descriptor.proto
TRACK_UUID = tag(1, 0)
TRACK_PROCESS = tag(3, 2)
TRACK_THREAD = tag(4, 2)
TRACK_PARENT_UUID = tag(5, 0)
TRACK_CHILD_ORDERING = tag(11, 0)
TRACK_SIBLING_ORDER_RANK = tag(12, 0)
CHILD_ORDERING_EXPLICIT = 3
PROCESS_PID = tag(1, 0)
PROCESS_LEGACY_SORT_INDEX = tag(3, 0)
PROCESS_NAME = tag(6, 2)
THREAD_PID = tag(1, 0)
THREAD_TID = tag(2, 0)
THREAD_LEGACY_SORT_INDEX = tag(3, 0)
THREAD_NAME = tag(5, 2)

TRACK_COLUMNS = "uuid, parent_uuid, pid, tid, name, sort_index"
CHUNK_COLUMNS = "lo_sequence_id, lo_ts, hi_sequence_id, hi_ts"
EVENT_COLUMNS = (
    "sequence_id, ts, type, legacy_phase, legacy_id, track_uuid, name, cat, args_json, "
    "flow_ids, terminating_flow_ids"
)


@dataclass
class PftraceStats:
    """What :func:`write_pftrace` wrote: TracePackets, of them TrackEvents,
    and the file's size in bytes."""

    packets: int
    events: int
    bytes: int


def _field(key: bytes, value: int) -> bytes:
    return key + varint_bytes(value & (2**64 - 1))  # an int64 as protobuf writes it


def _message(key: bytes, payload: bytes) -> bytes:
    return key + varint_bytes(len(payload)) + payload


def _packet(seq: int, payload: bytes) -> bytes:
    return _message(TRACE_PACKET, _field(SEQUENCE_ID, seq) + payload)


def track_descriptor(uuid, parent_uuid, pid, tid, name, sort_index) -> bytes:
    """One TrackDescriptor packet (a row of ``trace_track_descriptors``): a
    process (``tid`` None: ProcessDescriptor, explicit child ordering) or a
    thread (ThreadDescriptor under its process, ordered by ``sort_index``)."""
    out = _field(TRACK_UUID, uuid)
    text = (name or "").encode()
    if tid is None:
        proc = _field(PROCESS_PID, pid) + _field(PROCESS_LEGACY_SORT_INDEX, sort_index)
        proc += _message(PROCESS_NAME, text)
        out += _message(TRACK_PROCESS, proc) + _field(TRACK_CHILD_ORDERING, CHILD_ORDERING_EXPLICIT)
    else:
        thread = _field(THREAD_PID, pid) + _field(THREAD_TID, tid)
        thread += _field(THREAD_LEGACY_SORT_INDEX, sort_index) + _message(THREAD_NAME, text)
        out += _field(TRACK_PARENT_UUID, parent_uuid) + _message(TRACK_THREAD, thread)
        out += _field(TRACK_SIBLING_ORDER_RANK, sort_index)
    return _packet(DESCRIPTOR_SEQUENCE, _message(TRACK_DESCRIPTOR, out))


def sequence_start(seq: int, track_uuid: int, ts: int) -> bytes:
    """The packet that (re)starts a track's sequence: its state cleared,
    its defaults (the track; the incremental clock) and a ClockSnapshot
    placing the clock at ``ts`` (ns, BOOTTIME), so the next event's
    timestamp is its delta from ``ts``."""
    incremental = _field(CLOCK_ID, INCREMENTAL_CLOCK) + _field(CLOCK_TIMESTAMP, ts)
    incremental += _field(CLOCK_IS_INCREMENTAL, 1)
    boot = _field(CLOCK_ID, BOOTTIME) + _field(CLOCK_TIMESTAMP, ts)
    snapshot = _message(CLOCKS, incremental) + _message(CLOCKS, boot)
    defaults = _field(DEFAULT_CLOCK_ID, INCREMENTAL_CLOCK)
    defaults += _message(TRACK_EVENT_DEFAULTS, _field(DEFAULT_TRACK_UUID, track_uuid))
    payload = _field(SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED)
    payload += _message(PACKET_DEFAULTS, defaults) + _message(CLOCK_SNAPSHOT, snapshot)
    return _packet(seq, payload)


def _flow_ids(key: bytes, lists: pa.Array) -> Ragged:
    """Per row, a repeated fixed64 field of its list of flow ids (NULL: none)."""
    n = len(lists)
    if lists.null_count == n:
        return empty(n)
    offsets = numbers(lists.offsets).astype(np.int64)
    ids = numbers(lists.flatten()).astype(np.uint64)
    items = cat(const(key, len(ids)), fixed64(ids))
    counts = np.diff(offsets)
    if lists.null_count:
        counts = np.where(numbers(lists.is_valid()).astype(bool), counts, 0)
    return Ragged(items.data, counts * (len(key) + 8))


def _interned(key: bytes, arr: pa.Array, kind: str, seqs, interner: Interner) -> Joined:
    rows, iids = interner.iids(kind, arr, seqs)
    return present(rows, len(arr), cat(const(key, len(rows)), varint(iids)))


def _legacy(batch: pa.RecordBatch) -> Joined | Ragged:
    """The LegacyEvent of NVTX start/end rows (phase b/e, local_id)."""
    phase = batch.column("legacy_phase")
    n = batch.num_rows
    if phase.null_count == n:
        return empty(n)
    rows = valid_rows(phase)
    body = cat(
        const(LEGACY_PHASE, len(rows)),
        varint(numbers(phase.drop_null())),
        const(LEGACY_LOCAL_ID, len(rows)),
        varint(numbers(batch.column("legacy_id").filter(phase.is_valid()))),
    )
    return present(rows, n, length_delimited(LEGACY_EVENT, body))


def track_events(batch: pa.RecordBatch, args, deltas: np.ndarray, interner: Interner) -> Joined:
    """One TracePacket (a TrackEvent, ``deltas`` its timestamps, ``args``
    its args objects as :func:`pftrace_args.read_args` read them) per row
    of ``trace_track_events``, each framed as a Trace's ``packet`` field;
    the track is the sequence's default."""
    n = batch.num_rows
    col = batch.column
    seqs = numbers(col("sequence_id")).astype(np.int64)
    types = numbers(col("type")).astype(np.int64)
    typed = np.flatnonzero(types > 0)
    event = cat(
        present(typed, n, cat(const(EVENT_TYPE, len(typed)), varint(types[typed]))),
        _interned(NAME_IID, col("name"), "name", seqs, interner),
        _interned(CATEGORY_IIDS, col("cat"), "cat", seqs, interner),
        annotations(args, n, seqs, interner),
        _flow_ids(FLOW_IDS, col("flow_ids")),
        _flow_ids(TERMINATING_FLOW_IDS, col("terminating_flow_ids")),
        _legacy(batch),
    )
    packet = cat(
        const(SEQUENCE_ID, n),
        varint(seqs),
        const(TIMESTAMP, n),
        varint(deltas),
        length_delimited(TRACK_EVENT, event),
    )
    return length_delimited(TRACE_PACKET, packet)


class Sequences:
    """Where each track's sequence stands: its last timestamp (ns) once
    started, and whether its state was cleared since (then it is started
    again, at that timestamp)."""

    def __init__(self) -> None:
        self.last: dict[int, int] = {}
        self.stale: set[int] = set()
        self.sequence = 0  # the last batch's last sequence: none may come before it

    def clear_all(self) -> None:
        self.stale = set(self.last)

    def deltas(self, batch: pa.RecordBatch) -> tuple[np.ndarray, bytes]:
        """(each row's timestamp delta, the packets that must come before
        the batch: a start for each sequence new or cleared)."""
        seqs = numbers(batch.column("sequence_id")).astype(np.int64)
        ts = numbers(batch.column("ts")).astype(np.int64)
        prev = np.empty_like(ts)
        prev[1:] = ts[:-1]
        firsts = np.flatnonzero(np.r_[True, seqs[1:] != seqs[:-1]])
        starts = b""
        tracks = numbers(batch.column("track_uuid"))
        for i in firsts:
            seq = int(seqs[i])
            at = self.last.get(seq)
            if at is None or seq in self.stale:
                at = int(ts[i]) if at is None else at
                starts += sequence_start(seq, int(tracks[i]), at)
                self.stale.discard(seq)
            prev[i] = at
        lasts = np.r_[firsts[1:] - 1, len(ts) - 1]
        for i in lasts:
            self.last[int(seqs[i])] = int(ts[i])
        deltas = ts - prev
        back = bool(np.any(seqs[1:] < seqs[:-1])) or int(seqs[0]) < self.sequence
        if back or (len(deltas) and deltas.min() < 0):
            raise NsysDuckError("trace_track_events came out of order (by sequence, then time)")
        self.sequence = int(seqs[-1])
        return deltas, starts


def _batches(con: duckdb.DuckDBPyConnection) -> Iterator[tuple[pa.RecordBatch, tuple]]:
    """The rows of ``trace_track_events`` in its order, range by range of
    ``trace_track_event_chunks`` (each sorted on its own), batch by batch,
    read by a second thread (DuckDB runs without the GIL) while this one
    encodes, at most PREFETCH batches ahead (memory stays bounded), each
    with its args objects read (:func:`pftrace_args.read_args`)."""
    out: queue.Queue = queue.Queue(PREFETCH)
    stop = threading.Event()  # the encoder is gone (done, failed, Ctrl-C)

    def hand(item) -> bool:
        """Queue ``item`` for the encoder; False once it has stopped."""
        while not stop.is_set():
            try:
                out.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def read() -> None:
        try:
            (plan,) = contract.writer_queries("pftrace-chunks", CHUNK_COLUMNS)
            (query,) = contract.writer_queries("pftrace-events", EVENT_COLUMNS)
            for lo_seq, lo_ts, hi_seq, hi_ts in con.execute(plan).fetchall():
                bounds = {"lo_seq": lo_seq, "lo_ts": lo_ts, "hi_seq": hi_seq, "hi_ts": hi_ts}
                for batch in arrow_reader(con.sql(query, params=bounds), BATCH_ROWS):
                    if batch.num_rows and not hand((batch, read_args(batch.column("args_json")))):
                        return
            hand(None)
        except BaseException as exc:  # handed to the encoding thread
            hand(exc)

    reader = threading.Thread(target=read, name="pftrace-reader", daemon=True)
    reader.start()
    try:
        while (item := out.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        # the connection is the caller's again only once the reader is
        # done: on an early exit its query is interrupted and waited for
        stop.set()
        if reader.is_alive():
            con.interrupt()
        reader.join()


def write_pftrace(con: duckdb.DuckDBPyConnection, path) -> PftraceStats:
    """Write the protobuf trace of the run's relations into ``path`` (a new
    file): the TrackDescriptors (``trace_track_descriptors``, processes
    first), then the TrackEvents of ``trace_track_events`` as its ``Python
    reads:`` line orders them (by sequence, then time), batch by batch:
    first each new sequence's start and each sequence's new interned
    strings, then the batch's events.

    Returns :class:`PftraceStats`. Raises NsysDuckError when there is no
    TrackEvent or the events are out of order, duckdb.Error and OSError.
    """
    # DuckDB 1.4 streams an ORDER BY out of order when insertion order is
    # not preserved (the conversion's setting): seen on every trace there
    (before,) = con.execute("SELECT current_setting('preserve_insertion_order')").fetchone()
    con.execute("SET preserve_insertion_order = true")
    try:
        return _write_packets(con, path)
    finally:
        con.execute(f"SET preserve_insertion_order = {bool(before)}")


def _write_packets(con: duckdb.DuckDBPyConnection, path) -> PftraceStats:
    interner, sequences = Interner(), Sequences()
    packets = events = 0
    with open(path, "wb") as out:
        (query,) = contract.writer_queries("pftrace-tracks", TRACK_COLUMNS)
        for row in con.execute(query).fetchall():
            out.write(track_descriptor(*row))
            packets += 1
        for batch, args in _batches(con):
            if interner.size > MAX_INTERNED:
                interner.clear()
                sequences.clear_all()
            deltas, starts = sequences.deltas(batch)
            encoded = track_events(batch, args, deltas, interner)
            out.write(starts)
            for seq, data in interner.interned_data().items():
                out.write(_packet(seq, _message(INTERNED_DATA, data)))
                packets += 1
            out.write(encoded.data)
            packets += batch.num_rows
            events += batch.num_rows
        size = out.tell()
    if not events:
        raise NsysDuckError("no trace events to write")
    return PftraceStats(packets, events, size)
