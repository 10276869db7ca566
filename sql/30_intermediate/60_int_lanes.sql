-- int_lane_clusters: slices that share an overlap cluster with another
-- slice of the same base track; int_slice_lanes: the lane of each slice
-- (1 = the track itself, 2.. = "NAME #2", ...).
--
-- Reads: int_slices, and _lane_assignments (computed by Python, see below).
-- Invariants: two slices in one lane never overlap (half-open [start, end)),
-- so no track holds partially overlapping slices (output-contract.md,
-- Tracks) and concurrent GPU work never looks like a call stack. Lanes are
-- as few as the overlap requires (the maximum number of slices active at
-- once), times are never changed.
-- How: a window pass splits each track into overlap clusters (a new
-- cluster starts when a slice starts at or after every earlier end). A
-- slice alone in its cluster takes lane 1 with no further work; that is
-- nearly every slice of a real trace. Slices of shared clusters are handed,
-- sorted, to the Python hook "lanes" (nsys_duck/lanes.py), which runs the
-- greedy smallest-free-lane sweep (optimal for intervals) and registers
-- _lane_assignments(slice_id, lane) before this file's second statement.
-- hook: lanes

CREATE OR REPLACE VIEW int_lane_clusters AS
WITH ordered AS (
    SELECT
        slice_id, home_id, class_order, proc_key, key1, key2, key3,
        start_ns, end_ns,
        max(end_ns) OVER track_before AS end_before
    FROM int_slices
    WHERE needs_lanes
    WINDOW track_before AS (
        PARTITION BY home_id, class_order, proc_key, key1, key2, key3
        ORDER BY start_ns, end_ns, slice_id
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
),
clustered AS (
    SELECT
        *,
        sum(CASE WHEN end_before IS NULL OR start_ns >= end_before
            THEN 1 ELSE 0 END) OVER (
            PARTITION BY home_id, class_order, proc_key, key1, key2, key3
            ORDER BY start_ns, end_ns, slice_id
            ROWS UNBOUNDED PRECEDING) AS cluster_no
    FROM ordered
)
SELECT
    slice_id,
    dense_rank() OVER (ORDER BY home_id, class_order, proc_key, key1, key2,
        key3) AS track_no,
    start_ns,
    end_ns
FROM clustered
QUALIFY count(*) OVER (
    PARTITION BY home_id, class_order, proc_key, key1, key2, key3,
        cluster_no) > 1;

CREATE OR REPLACE TABLE int_slice_lanes AS
SELECT slice_id, lane FROM _lane_assignments;
