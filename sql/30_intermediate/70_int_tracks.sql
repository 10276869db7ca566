-- int_tracks: one row per Perfetto thread track (base track x lane) with
-- its name, sort position and JSON tid; int_slices_placed: every slice with
-- its lane, JSON pid and tid.
--
-- Reads: int_slices, int_slice_lanes, int_homes.
-- Invariants: json_tid is unique in the whole trace, 1..N in sort order
-- (Perfetto needs integer pid/tid in 1..2^31-1); lanes sit right after
-- their track ("NAME #2"...). thread_sort_index follows the contract's order
-- inside each device.

CREATE OR REPLACE VIEW int_slices_placed AS
SELECT s.*, coalesce(l.lane, 1) AS lane
FROM int_slices AS s
LEFT JOIN int_slice_lanes AS l ON l.slice_id = s.slice_id;

CREATE OR REPLACE TABLE int_tracks AS
WITH tracks AS (
    SELECT
        home_id, class_order, proc_key, key1, key2, key3, lane,
        any_value(track_base_name) AS track_base_name
    FROM int_slices_placed
    GROUP BY ALL
)
SELECT
    row_number() OVER (ORDER BY h.json_pid, t.class_order, t.key1,
        t.proc_key, t.key2, t.key3, t.lane) AS json_tid,
    h.json_pid,
    t.*,
    t.track_base_name || CASE WHEN t.lane > 1
        THEN ' #' || CAST(t.lane AS VARCHAR) ELSE '' END AS track_name
FROM tracks AS t
JOIN int_homes AS h ON h.home_id = t.home_id;

CREATE OR REPLACE VIEW int_slices_on_tracks AS
SELECT s.*, t.json_pid, t.json_tid, t.track_name
FROM int_slices_placed AS s
JOIN int_tracks AS t
    ON t.home_id = s.home_id AND t.class_order = s.class_order
    AND t.proc_key = s.proc_key AND t.key1 = s.key1 AND t.key2 = s.key2
    AND t.key3 = s.key3 AND t.lane = s.lane;
