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
        track_key, lane,
        any_value(home_id) AS home_id,
        any_value(class_order) AS class_order,
        any_value(proc_key) AS proc_key,
        any_value(key1) AS key1,
        any_value(key2) AS key2,
        any_value(key3) AS key3,
        any_value(track_base_name) AS track_base_name,
        -- a track_key must stand for one identity (64-bit hash collision)
        count(DISTINCT (home_id, class_order, proc_key, key1, key2, key3))
            AS identities
    FROM int_slices_placed
    GROUP BY track_key, lane
)
SELECT
    row_number() OVER (ORDER BY h.json_pid, t.class_order, t.key1,
        t.proc_key, t.key2, t.key3, t.lane) AS json_tid,
    h.json_pid,
    t.* EXCLUDE (identities),
    t.track_base_name || CASE WHEN t.lane > 1
        THEN ' #' || CAST(t.lane AS VARCHAR) ELSE '' END AS track_name,
    CASE
        WHEN t.identities > 1
            THEN error('int_tracks: two tracks share a track_key (hash collision)')
        WHEN t.track_base_name IS NULL
            THEN error('int_tracks: a track has no name (NULL in its name parts)')
    END AS _collision_check
FROM tracks AS t
JOIN int_homes AS h ON h.home_id = t.home_id;

ALTER TABLE int_tracks DROP COLUMN _collision_check;

CREATE OR REPLACE VIEW int_slices_on_tracks AS
SELECT s.*, t.json_pid, t.json_tid, t.track_name
FROM int_slices_placed AS s
JOIN int_tracks AS t ON t.track_key = s.track_key AND t.lane = s.lane;
