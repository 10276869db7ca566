-- check_track_named: processes and thread tracks Perfetto would show
-- without the name and order the trace means.
--
-- Reads: chk_events.
-- In convert: no (check_tracks covers it on the pipeline's ids; nsys-duck validate runs it on the written file,
-- and it can be queried in NAME.duckdb).
-- Invariants: zero rows when every pid with non-M events has process_name
-- and process_sort_index, every (pid, tid) with X/B/E/i/I/s/f events has
-- thread_name and thread_sort_index, names are non-empty strings and sort
-- indexes integers. One row per bad M event and per unnamed process or
-- track (seq: its first event). One aggregate over chk_events.

CREATE OR REPLACE VIEW check_track_named AS
WITH per_thread AS (
    SELECT pid, tid,
        min(seq) FILTER (WHERE ph IS DISTINCT FROM 'M') AS first_seq,
        min(seq) FILTER (WHERE ph IN ('X', 'B', 'E', 'i', 'I', 's', 'f')) AS first_slice_seq,
        bool_or(ph = 'M' AND name = 'process_name') AS has_pname,
        bool_or(ph = 'M' AND name = 'process_sort_index') AS has_psort,
        bool_or(ph = 'M' AND name = 'thread_name') AS has_tname,
        bool_or(ph = 'M' AND name = 'thread_sort_index') AS has_tsort
    FROM chk_events
    WHERE pid BETWEEN 1 AND 2147483647   -- others: check_pid_tid
    GROUP BY pid, tid
), per_process AS (
    SELECT pid, min(first_seq) AS first_seq,
        coalesce(bool_or(has_pname), FALSE) AS has_pname,
        coalesce(bool_or(has_psort), FALSE) AS has_psort
    FROM per_thread GROUP BY pid
)
SELECT 'pid ' || CAST(pid AS VARCHAR) || ' has events but no '
        || concat_ws(' / ', CASE WHEN NOT has_pname THEN 'process_name' END,
                     CASE WHEN NOT has_psort THEN 'process_sort_index' END) AS message,
    first_seq AS seq
FROM per_process
WHERE first_seq IS NOT NULL AND NOT (has_pname AND has_psort)
UNION ALL
SELECT 'track pid ' || CAST(pid AS VARCHAR) || ' tid ' || CAST(tid AS VARCHAR)
        || ' has slices but no '
        || concat_ws(' / ', CASE WHEN NOT coalesce(has_tname, FALSE) THEN 'thread_name' END,
                     CASE WHEN NOT coalesce(has_tsort, FALSE) THEN 'thread_sort_index' END),
    first_slice_seq
FROM per_thread
WHERE tid BETWEEN 1 AND 2147483647 AND first_slice_seq IS NOT NULL
  AND NOT (coalesce(has_tname, FALSE) AND coalesce(has_tsort, FALSE))
UNION ALL
SELECT name || CASE WHEN name LIKE '%_name' THEN ' with empty or missing args.name'
                    ELSE ' args.sort_index is missing or not an integer' END,
    seq
FROM chk_events
WHERE ph = 'M' AND (
    (name IN ('process_name', 'thread_name') AND coalesce(meta_name, '') = '')
    OR (name IN ('process_sort_index', 'thread_sort_index') AND meta_sort_index IS NULL));

COMMENT ON VIEW check_track_named IS 'Rule track_named: each pid with non-M events has process_name and process_sort_index; each (pid, tid) with X/B/E/i/I/s/f events has thread_name and thread_sort_index; names non-empty strings, sort indexes integers (output-contract.md, Tracks; perfetto-json.md, Metadata events).';
COMMENT ON COLUMN check_track_named.message IS 'What is wrong, one sentence.';
COMMENT ON COLUMN check_track_named.seq IS 'The bad M event, or the first event of the unnamed process / track.';
