-- int_lane_clusters: the slices that share an overlap cluster with another
-- slice of the same base track: the only ones the lanes hook
-- (nsys_duck/lanes.py) has to place.
--
-- Reads: int_slices.
-- Two lane rules (int_slices.lane_rule, one per track):
--   'disjoint' (X slices: GPU work, CUDA API calls): two slices in one lane
--     never overlap, so concurrent work never looks like a call stack. A
--     slice occupies [start, lane_end) with lane_end = max(end, start + 1
--     ns): a 0-ns slice occupies its nanosecond, so two slices of a lane
--     never start at the same ns. Perfetto nests a 0-ns slice in a slice
--     starting at the same ns and keeps it on top of its thread's stack
--     until the next slice starts (perfetto-json.md 3.2, 3.3), so the flow
--     end of the longer slice would bind to the 0-ns one. Lanes are as few
--     as these intervals' overlap requires (the maximum number active at
--     once; greedy smallest-free-lane sweep in start order, longer first at
--     equal starts, optimal for intervals): a 0-ns slice sharing the start
--     of a longer one goes to the extra lane.
--   'nest' (B/E stacks of the NVTX Kernel tracks): a slice may share a lane
--     with slices it nests in or that nest in it (equal intervals count as
--     nested), never with one it partially overlaps
--     (a.start < b.start < a.end < b.end). Sweep in (start, end DESC) order,
--     keeping per lane the stack of slices still open; a slice goes to the
--     first lane whose innermost open slice (the one ending first; the open
--     slices of a lane are nested, so it is the only one to check) ends at
--     or after it, after popping the slices that ended at or before its
--     start; else to a new lane. Projected siblings whose GPU work
--     interleaves thus move to "#2"..., parents and children stay together.
--     First fit is not always minimal here (the fewest lanes is a
--     circle-graph colouring, NP-hard), but every lane nests correctly.
-- Invariants: no lane holds partially overlapping slices (output-contract.md,
-- Tracks); times are never changed; slices without a rule (NVTX Thread
-- stacks, whose push/pop nest per thread and domain; zero-length slices of
-- the nest tracks)
-- stay in lane 1.
-- How: one window pass per track: a slice opens a new overlap cluster
-- when it starts at or after every earlier slice's lane_end (earlier: in
-- (start, lane_end, slice_id) order), and is alone in its cluster when it
-- and the next slice both open one; that is nearly every slice of a real
-- trace, and it takes lane 1 with no further work. (Numbering the
-- clusters and counting their slices, two more windows, made this 2x
-- slower: 1.44 s against 0.74 s on abacus x16, 2.49 s against 1.51 s on
-- abacus x80, at the 2GB default.) Slices of shared clusters are handed,
-- sorted, to the Python hook "lanes" (nsys_duck/lanes.py), which runs the
-- sweep of the track's rule and registers _lane_assignments(slice_id,
-- lane) right before 11_int_slice_lanes.sql reads it.
-- Role: lanes-input (the lanes hook's rows, nsys_duck/lanes.py)
-- Python reads: ORDER BY track_no, start_ns, lane_end_ns DESC, seq, slice_id
-- Column comments from: int_slices.

CREATE OR REPLACE VIEW int_lane_clusters AS
WITH occupied AS (
    SELECT
        slice_id, track_key, start_ns, end_ns, lane_rule,
        coalesce(nest_seq, slice_id) AS seq,
        CASE WHEN lane_rule = 'disjoint'
            THEN greatest(end_ns, start_ns + 1) ELSE end_ns END AS lane_end_ns
    FROM int_slices
    WHERE needs_lanes
),
opening AS (
    SELECT
        *,
        coalesce(start_ns >= max(lane_end_ns) OVER (
            track_order ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
            TRUE) AS opens
    FROM occupied
    WINDOW track_order AS (
        PARTITION BY track_key ORDER BY start_ns, lane_end_ns, slice_id)
)
SELECT
    slice_id,
    track_key AS track_no,
    start_ns,
    end_ns,
    lane_end_ns,
    lane_rule,
    seq
FROM opening
QUALIFY NOT (opens AND lead(opens, 1, TRUE) OVER (
    PARTITION BY track_key ORDER BY start_ns, lane_end_ns, slice_id));

COMMENT ON VIEW int_lane_clusters IS 'The slices that share an overlap cluster with another slice of the same base track: the only ones the lanes hook (nsys_duck/lanes.py) has to place.';
COMMENT ON COLUMN int_lane_clusters.track_no IS 'The slice''s track_key.';
COMMENT ON COLUMN int_lane_clusters.lane_end_ns IS 'End of the interval the slice occupies in its lane: end_ns, on disjoint tracks at least start_ns + 1 (a 0-ns slice occupies its ns).';
COMMENT ON COLUMN int_lane_clusters.seq IS 'Order tie-break: nest_seq, else slice_id.';
