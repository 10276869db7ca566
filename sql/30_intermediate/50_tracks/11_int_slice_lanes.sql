-- int_slice_lanes: the lane of each slice that needs one (1 = the track
-- itself, 2.. = "NAME #2", ...), as the Python hook "lanes" placed it.
--
-- Reads: _lane_assignments.
-- Invariants: one row per slice of int_lane_clusters; slices without a row
-- are in lane 1. _lane_assignments(slice_id, lane) is registered by the
-- hook (nsys_duck/lanes.py, see 10_int_lane_clusters.sql) right before
-- this file's statement.
-- hook: lanes registers _lane_assignments

CREATE OR REPLACE TABLE int_slice_lanes AS
SELECT slice_id, lane FROM _lane_assignments;

COMMENT ON TABLE int_slice_lanes IS 'The lane of each slice that needs one (1 = the track itself, 2.. = "NAME #2", ...), as the Python hook "lanes" placed it.';
COMMENT ON COLUMN int_slice_lanes.slice_id IS 'Slice id (int_slices.slice_id), unique in the trace.';
COMMENT ON COLUMN int_slice_lanes.lane IS 'Lane (2..; slices without a row are in lane 1).';
