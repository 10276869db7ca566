-- check_tracks: slices that land on no track, and tracks or processes
-- without a valid JSON pid/tid, name or sort index (zero rows when every
-- slice is on a named, sorted track of a named process).
--
-- Reads: int_slices_placed, int_tracks, int_homes, trace_base.
-- Invariants: the rule (output-contract.md, Tracks; perfetto-json.md, pid/tid
-- and metadata): every slice of int_slices is on a track of int_tracks (the
-- writer reads int_slices_on_tracks, an inner join that would drop it
-- silently); each track has a unique json_tid, a json_pid of a process of
-- int_homes and a non-empty name (written as thread_name, with
-- thread_sort_index = json_tid); each process has a unique json_pid and a
-- non-empty name (process_name, process_sort_index = json_pid); every pid
-- and tid is an integer in 1..2^31-1. Flow ends lie on their target slice's
-- track (check_flow_targets). seq: the event as chk_events numbers it
-- (-8 x slice_id - 5 for a slice, the thread_name or process_name event).

CREATE OR REPLACE VIEW check_tracks AS
WITH homes AS (
    SELECT
        json_pid, home_name,
        count(*) OVER (PARTITION BY json_pid) AS same_pid
    FROM int_homes
),

tracks AS (
    SELECT
        json_pid, json_tid, track_name,
        count(*) OVER (PARTITION BY json_tid) AS same_tid
    FROM int_tracks
)

SELECT
    'slice ' || CAST(placed.slice_id AS VARCHAR) || ' (' || placed.cat || ' '
    || placed.name || ', start '
    || _chk_us(placed.start_ns - trace_base.base_ns) || ' µs'
    || ') is on no track of int_tracks (track ' || placed.track_base_name
    || ', lane ' || CAST(placed.lane AS VARCHAR) || ', level '
    || CAST(placed.level AS VARCHAR) || ')' AS message,
    -8 * placed.slice_id - 5 AS seq
FROM int_slices_placed AS placed
CROSS JOIN trace_base
ANTI JOIN int_tracks AS tracks
    ON tracks.track_key = placed.track_key AND tracks.lane = placed.lane
    AND tracks.level = placed.level
UNION ALL
SELECT
    'process pid ' || coalesce(CAST(homes.json_pid AS VARCHAR), 'NULL')
    || CASE
        WHEN homes.json_pid IS NULL OR homes.json_pid NOT BETWEEN 1 AND 2147483647
            THEN ' is not in 1..2^31-1'
        WHEN homes.same_pid > 1 THEN ' is used by ' || CAST(homes.same_pid
            AS VARCHAR) || ' processes'
        ELSE ' has no name'
    END,
    -8 * homes.json_pid - 1
FROM homes
WHERE homes.json_pid IS NULL OR homes.json_pid NOT BETWEEN 1 AND 2147483647
    OR homes.same_pid > 1 OR coalesce(homes.home_name, '') = ''
UNION ALL
SELECT
    'track pid ' || coalesce(CAST(tracks.json_pid AS VARCHAR), 'NULL')
    || ' tid ' || coalesce(CAST(tracks.json_tid AS VARCHAR), 'NULL')
    || ' (' || coalesce(tracks.track_name, 'no name') || ')'
    || CASE
        WHEN tracks.json_tid IS NULL OR tracks.json_tid NOT BETWEEN 1 AND 2147483647
            OR tracks.json_pid IS NULL
            OR tracks.json_pid NOT BETWEEN 1 AND 2147483647
            THEN ': pid or tid is not in 1..2^31-1'
        WHEN tracks.same_tid > 1 THEN ': the tid is used by '
            || CAST(tracks.same_tid AS VARCHAR) || ' tracks'
        WHEN coalesce(tracks.track_name, '') = '' THEN ': no name'
        ELSE ': its pid is no process of int_homes'
    END,
    -8 * tracks.json_tid - 3
FROM tracks
WHERE tracks.json_tid IS NULL OR tracks.json_tid NOT BETWEEN 1 AND 2147483647
    OR tracks.json_pid IS NULL OR tracks.json_pid NOT BETWEEN 1 AND 2147483647
    OR tracks.same_tid > 1 OR coalesce(tracks.track_name, '') = ''
    OR tracks.json_pid NOT IN (SELECT json_pid FROM int_homes
        WHERE json_pid IS NOT NULL);

COMMENT ON VIEW check_tracks IS 'Contract check (output-contract.md, Tracks; perfetto-json.md, pid/tid and metadata): every slice of int_slices is on a track of int_tracks (flow ends: check_flow_targets); tracks and processes have unique integer ids in 1..2^31-1 and non-empty names (the thread_name/process_name metadata; sort indexes are the ids). Rows = violations (message, seq as chk_events numbers the event).';
