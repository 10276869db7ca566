-- int_slice_levels: slices nested deeper than Perfetto keeps, and the
-- continuation track (level) each goes to.
--
-- Reads: int_slice_lanes, int_slices.
-- Why: Perfetto keeps at most 512 nested slices per track (kMaxDepth in its
-- slice_tracker.h) and silently drops deeper ones (stat
-- slice_max_depth_exceeded). Real captures nest NVTX push/pop ranges past
-- that (pushes never popped: pytorch_nvtx_profiling reaches ~1,000).
-- Rule (output-contract.md, Tracks): on every track (base track x lane)
-- that holds B/E stacks, a slice at stack depth d (0 = outermost) goes to
-- continuation level d // track_depth_levels() (500: a margin of 12 below
-- the limit); level 0
-- is the track itself, level k >= 1 a track named "NAME (depth A-B)" placed
-- right after it (40_int_tracks.sql). Times are never changed. A slice at
-- depth 500k is a root on its continuation track and everything below it
-- keeps its nesting there, since a slice's ancestors have smaller depths.
-- Depth is counted as Perfetto counts it: the B/E events of the track in
-- the order the writer emits them (trace_events_stacks: time, E before B,
-- outer B first, inner E first), and a zero-length X or an instant at time
-- t sits above the slices still open after the E events at t (Perfetto
-- sorts, at equal time, E first, then X, then the rest in file order, and
-- instants are written before the stacks).
-- Invariants: only slices at depth >= 500 have a row (level >= 1); a track
-- with fewer than 500 B slices cannot reach that depth and is not scanned.
-- Column comments from: int_slice_lanes.

CREATE OR REPLACE TABLE int_slice_levels AS
WITH placed AS (
    SELECT s.slice_id, s.track_key, coalesce(l.lane, 1) AS lane, s.ph,
        s.start_ns, s.end_ns, coalesce(s.nest_seq, s.slice_id) AS seq
    FROM int_slices AS s
    LEFT JOIN int_slice_lanes AS l ON l.slice_id = s.slice_id
    WHERE s.ph IN ('B', 'X', 'i')
),
deep_tracks AS (
    SELECT track_key, lane
    FROM placed
    GROUP BY track_key, lane
    HAVING count(*) FILTER (WHERE ph = 'B') >= track_depth_levels()
),
stack_events AS (
    -- B opens (+1) after the E at its time, outer (later end) first
    SELECT p.slice_id, p.track_key, p.lane, p.start_ns AS t, 2 AS phase,
        -p.end_ns AS span, p.seq AS seq, 1 AS delta
    FROM placed AS p JOIN deep_tracks USING (track_key, lane)
    WHERE p.ph = 'B'
    UNION ALL
    -- E closes (-1) first at its time, inner (later start) first
    SELECT p.slice_id, p.track_key, p.lane, p.end_ns, 0, -p.start_ns,
        -p.seq, -1
    FROM placed AS p JOIN deep_tracks USING (track_key, lane)
    WHERE p.ph = 'B'
    UNION ALL
    -- zero-length X and instants: between the E and the B of their time
    SELECT p.slice_id, p.track_key, p.lane, p.start_ns, 1, 0, p.seq, 0
    FROM placed AS p JOIN deep_tracks USING (track_key, lane)
    WHERE p.ph IN ('X', 'i')
),
depths AS (
    SELECT slice_id, delta,
        sum(delta) OVER (
            PARTITION BY track_key, lane
            ORDER BY t, phase, span, seq
            ROWS UNBOUNDED PRECEDING) - greatest(delta, 0) AS depth
    FROM stack_events
)
SELECT slice_id, CAST(depth // track_depth_levels() AS INTEGER) AS level
FROM depths
WHERE delta >= 0 AND depth >= track_depth_levels();

COMMENT ON TABLE int_slice_levels IS 'Slices nested deeper than Perfetto keeps, and the continuation track (level) each goes to.';
COMMENT ON COLUMN int_slice_levels.level IS 'Continuation level (>= 1).';
