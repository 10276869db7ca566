-- int_slices_placed: every slice of int_slices with its lane and its
-- continuation level (int_tracks and the check_* views read it).
--
-- Reads: int_slice_lanes, int_slice_levels, int_slices.
-- Invariants: one row per slice; lane 1 and level 0 when the slice has no
-- row in int_slice_lanes / int_slice_levels.
-- Column comments from: int_slices.

CREATE OR REPLACE VIEW int_slices_placed AS
SELECT s.*, coalesce(l.lane, 1) AS lane, coalesce(v.level, 0) AS level
FROM int_slices AS s
LEFT JOIN int_slice_lanes AS l ON l.slice_id = s.slice_id
LEFT JOIN int_slice_levels AS v ON v.slice_id = s.slice_id;

COMMENT ON VIEW int_slices_placed IS 'Every slice of int_slices with its lane and its continuation level (int_tracks and the check_* views read it).';
COMMENT ON COLUMN int_slices_placed.lane IS 'Lane of the track (1 = the track itself, 2.. = ''NAME #2''...).';
COMMENT ON COLUMN int_slices_placed.level IS 'Continuation level (0 = the track itself; k >= 1 = the track for stack depths 500k+1..500(k+1)).';
