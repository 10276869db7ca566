"""The ``lanes`` hook: greedy lane assignment for overlapping slices.

``sql/30_intermediate/60_int_lanes.sql`` finds, with window functions, the
slices that share an overlap cluster with another slice on the same track
(view ``int_lane_clusters``); only those reach this function. It assigns each
the smallest lane free at its start (sweep in start order; optimal for
interval graphs: the lane count equals the largest number of slices active at
once) and registers the result as ``_lane_assignments(slice_id, lane)``.

This is the one place Python computes per-row values: the sweep is a
sequential state machine that SQL window functions cannot express, and it
touches only slices that actually overlap (a small share of real traces).
"""

from __future__ import annotations

import heapq

import duckdb
import numpy as np
import pyarrow as pa


def assign_lanes(con: duckdb.DuckDBPyConnection) -> None:
    """Create ``_lane_assignments(slice_id BIGINT, lane INTEGER)`` from ``int_lane_clusters``.

    Times are integer ns, intervals half-open ``[start_ns, end_ns)``: a slice
    starting exactly when another ends may share its lane.
    """
    table = con.sql(
        "SELECT slice_id, track_no, start_ns, end_ns FROM int_lane_clusters "
        "ORDER BY track_no, start_ns, end_ns, slice_id"
    ).to_arrow_table()
    slice_ids = table.column("slice_id").to_numpy()
    tracks = table.column("track_no").to_numpy()
    starts = table.column("start_ns").to_numpy()
    ends = table.column("end_ns").to_numpy()
    lanes = np.empty(len(slice_ids), dtype=np.int32)

    current_track = None
    busy: list[tuple[int, int]] = []   # (end_ns, lane) of slices still running
    free: list[int] = []               # lanes free right now (min-heap)
    lane_count = 0
    for i in range(len(slice_ids)):
        if tracks[i] != current_track:
            current_track, busy, free, lane_count = tracks[i], [], [], 0
        start = starts[i]
        while busy and busy[0][0] <= start:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            lane = heapq.heappop(free)
        else:
            lane_count += 1
            lane = lane_count
        lanes[i] = lane
        heapq.heappush(busy, (ends[i], lane))

    result = pa.table({"slice_id": pa.array(slice_ids, pa.int64()),
                       "lane": pa.array(lanes, pa.int32())})
    con.register("_lane_assignments_arrow", result)
    con.execute("CREATE OR REPLACE TABLE _lane_assignments AS "
                "SELECT * FROM _lane_assignments_arrow")
    con.unregister("_lane_assignments_arrow")
