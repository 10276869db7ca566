"""The ``lanes`` hook: greedy lane assignment for overlapping slices.

``sql/30_intermediate/50_tracks/10_int_lane_clusters.sql`` finds, with window functions, the
slices that share an overlap cluster with another slice on the same track
(view ``int_lane_clusters``); only those reach this function. Per track rule:

* ``disjoint`` (X slices): each slice takes the smallest lane free at its
  start (sweep in start order, longer first at equal starts; optimal for
  interval graphs: the lane count equals the largest number of slices active
  at once). A slice occupies ``[start, lane_end)``, ``lane_end_ns`` being at
  least ``start + 1``: a 0-ns slice never shares a lane with a slice starting
  at the same ns (Perfetto would nest it there and bind that slice's flow
  end to it).
* ``nest`` (B/E stacks of projected NVTX ranges): a lane may hold slices that
  nest in each other but never two that overlap partially; each slice takes
  the first lane whose open stack it nests in (sweep in start order, longer
  first at equal starts).

The result is registered as ``_lane_assignments(slice_id, lane)``.

This is the one place Python computes per-row values: the sweep is a
sequential state machine that SQL window functions cannot express, and it
touches only slices that share an overlap cluster (a small share of real
traces; for NVTX Kernel tracks, the projected ranges under an outer range).
"""

from __future__ import annotations

import heapq

import duckdb
import numpy as np
import pyarrow as pa

from . import contract
from .compat import arrow_reader

BATCH_ROWS = 1_000_000  # rows of int_lane_clusters held in Python at once


def assign_lanes(con: duckdb.DuckDBPyConnection) -> None:
    """Create ``_lane_assignments(slice_id BIGINT, lane INTEGER)`` from
    ``int_lane_clusters`` (role ``lanes-input``), read in its order
    (``-- Python reads:``: by track, start, longer first).

    Times are integer ns, intervals half-open ``[start_ns, lane_end_ns)``
    (``int_lane_clusters``): a slice starting exactly when another ends may
    share its lane. Each track follows
    its ``lane_rule``: ``disjoint`` (:class:`DisjointSweep`) or ``nest``
    (:class:`NestSweep`).

    Memory: the rows arrive sorted, in batches of :data:`BATCH_ROWS`; a
    track's sweep state (its open slices) carries over from one batch to the
    next, so Python holds one batch, the open slices and the result columns
    (12 bytes a row), never the whole table as Python objects (16M projected
    NVTX ranges took 0.9 GB more that way).
    """
    (query,) = contract.writer_queries(
        "lanes-input",
        "slice_id, track_no, start_ns, lane_end_ns AS end_ns, lane_rule = 'nest' AS nest",
    )
    reader = arrow_reader(con.sql(query), BATCH_ROWS)
    id_parts: list[np.ndarray] = []
    lane_parts: list[np.ndarray] = []
    track = None
    sweep: DisjointSweep | NestSweep | None = None
    for batch in reader:
        tracks = batch.column("track_no").to_numpy()
        starts = batch.column("start_ns").to_numpy()
        ends = batch.column("end_ns").to_numpy()
        nest = batch.column("nest").to_numpy(zero_copy_only=False)
        lanes = np.empty(len(tracks), dtype=np.int32)
        # runs of one track in this batch; each is swept on its own
        bounds = np.flatnonzero(np.diff(tracks)) + 1
        for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, len(tracks)], strict=True):
            if lo == hi:
                continue
            if sweep is None or tracks[lo] != track:
                track = tracks[lo]
                sweep = NestSweep() if nest[lo] else DisjointSweep()
            sweep.place(starts[lo:hi].tolist(), ends[lo:hi].tolist(), lanes[lo:hi])
        id_parts.append(batch.column("slice_id").to_numpy())
        lane_parts.append(lanes)

    result = pa.table(
        {
            "slice_id": pa.array(np.concatenate(id_parts or [np.empty(0, np.int64)]), pa.int64()),
            "lane": pa.array(np.concatenate(lane_parts or [np.empty(0, np.int32)]), pa.int32()),
        }
    )
    con.register("_lane_assignments_arrow", result)
    con.execute(
        "CREATE OR REPLACE TABLE _lane_assignments AS SELECT * FROM _lane_assignments_arrow"
    )
    con.unregister("_lane_assignments_arrow")


class DisjointSweep:
    """Smallest free lane at each start (rows fed in start order): lanes hold disjoint slices.

    State between calls of :meth:`place`: the slices still running and the
    free lanes, so one track may be fed in several pieces.
    """

    def __init__(self) -> None:
        self.busy: list[tuple[int, int]] = []  # (end_ns, lane) of slices still running
        self.free: list[int] = []  # lanes free right now (min-heap)
        self.lane_count = 0

    def place(self, starts: list[int], ends: list[int], out: np.ndarray) -> None:
        """Write the lane (1-based) of each slice into ``out``."""
        busy, free = self.busy, self.free
        for i, start in enumerate(starts):
            while busy and busy[0][0] <= start:
                heapq.heappush(free, heapq.heappop(busy)[1])
            if free:
                lane = heapq.heappop(free)
            else:
                self.lane_count += 1
                lane = self.lane_count
            out[i] = lane
            heapq.heappush(busy, (ends[i], lane))


class NestSweep:
    """First lane where the slice nests (rows fed sorted by start, then end descending).

    Per lane, the stack of slices still open (each nested in the one below).
    A slice fits a lane when, after dropping the slices that ended at or
    before its start, the lane's innermost open slice ends at or after the
    slice's end (or nothing is open). Slices sharing a start come longest
    first, so a parent is placed before its children. The stacks persist
    between calls of :meth:`place`.
    """

    def __init__(self) -> None:
        self.stacks: list[list[int]] = []  # per lane: ends of the open slices

    def place(self, starts: list[int], ends: list[int], out: np.ndarray) -> None:
        """Write the lane (1-based) of each slice into ``out``."""
        stacks = self.stacks
        for i, start in enumerate(starts):
            end = ends[i]
            for k, stack in enumerate(stacks):
                while stack and stack[-1] <= start:
                    stack.pop()
                if not stack or stack[-1] >= end:
                    stack.append(end)
                    out[i] = k + 1
                    break
            else:
                stacks.append([end])
                out[i] = len(stacks)
