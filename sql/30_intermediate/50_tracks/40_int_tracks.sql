-- int_tracks: one row per Perfetto thread track (base track x lane x
-- continuation level) with its name, sort position and JSON tid.
--
-- Reads: int_homes, int_slices_placed.
-- Invariants: json_tid is unique in the whole trace, 1..N in sort order
-- (Perfetto needs integer pid/tid in 1..2^31-1); lanes sit right after
-- their track ("NAME #2"...), and a continuation track for stacks deeper
-- than Perfetto keeps ("NAME (depth 501-1000)", 20_int_slice_levels.sql)
-- right after the track or lane it continues. thread_sort_index follows the
-- contract's order inside each device (track_classes.class_order). A
-- track_key standing for two identities (hash collision) or a track
-- without a name stops the conversion.
-- Column comments from: int_slices_placed.
-- Merge: renumbered

CREATE OR REPLACE TABLE int_tracks AS
WITH tracks AS (
    SELECT
        track_key, lane, level,
        any_value(home_id) AS home_id,
        any_value(class_order) AS class_order,
        any_value(proc_key) AS proc_key,
        any_value(key1) AS key1,
        any_value(key2) AS key2,
        any_value(key3) AS key3,
        any_value(track_base_name) AS track_base_name,
        -- a track_key must stand for one identity (64-bit hash collision)
        count(DISTINCT (home_id, class_order, proc_key, key1, key2, key3))  -- noqa: LT01
            AS identities
    FROM int_slices_placed
    GROUP BY track_key, lane, level
)
SELECT
    row_number() OVER (ORDER BY h.json_pid, t.class_order, t.key1,
        t.proc_key, t.key2, t.key3, t.lane, t.level) AS json_tid,
    h.json_pid,
    t.* EXCLUDE (identities),
    t.track_base_name || CASE WHEN t.lane > 1
        THEN ' #' || CAST(t.lane AS VARCHAR) ELSE '' END
        || CASE WHEN t.level > 0
            THEN ' (depth '
                || CAST(track_depth_levels() * t.level + 1 AS VARCHAR) || '-'
                || CAST(track_depth_levels() * (t.level + 1) AS VARCHAR) || ')'
            ELSE '' END AS track_name,
    CASE
        WHEN t.identities > 1
            THEN error('int_tracks: two tracks share a track_key (hash collision)')
        WHEN t.track_base_name IS NULL
            THEN error('int_tracks: a track has no name (NULL in its name parts)')
    END AS _collision_check
FROM tracks AS t
JOIN int_homes AS h ON h.home_id = t.home_id;

ALTER TABLE int_tracks DROP COLUMN _collision_check;

COMMENT ON TABLE int_tracks IS 'One row per Perfetto thread track (base track x lane x continuation level) with its name, sort position and JSON tid.';
COMMENT ON COLUMN int_tracks.home_id IS 'The home (int_homes.home_id): the device id, or -1 - proc_key for a host process.';
COMMENT ON COLUMN int_tracks.proc_key IS 'Process key globalPid/globalTid >> 24 (PID, VM and hardware id): the scope of correlationId.';
COMMENT ON COLUMN int_tracks.json_tid IS 'JSON tid of the track (1..N in sort order, unique in the trace).';
COMMENT ON COLUMN int_tracks.json_pid IS 'JSON pid of the track''s home.';
COMMENT ON COLUMN int_tracks.track_key IS '64-bit hash of the base track identity.';
COMMENT ON COLUMN int_tracks.track_name IS 'Full track name (thread_name metadata of the JSON).';
