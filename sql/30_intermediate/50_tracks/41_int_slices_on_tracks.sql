-- int_slices_on_tracks: every slice with the JSON pid, tid and full track
-- name of the track it is drawn on.
--
-- Reads: int_slices_placed, int_tracks.
-- Invariants: one row per slice of int_slices.
-- Column comments from: int_slices_placed, int_tracks.
-- Merge: renumbered

CREATE OR REPLACE VIEW int_slices_on_tracks AS
SELECT s.*, t.json_pid, t.json_tid, t.track_name
FROM int_slices_placed AS s
JOIN int_tracks AS t
    ON t.track_key = s.track_key AND t.lane = s.lane AND t.level = s.level;

COMMENT ON VIEW int_slices_on_tracks IS 'Every slice with the JSON pid, tid and full track name of the track it is drawn on.';
