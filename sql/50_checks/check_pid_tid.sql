-- check_pid_tid: events whose pid or tid Perfetto would not read as a
-- track.
--
-- Reads: chk_events.
-- In convert: no (check_tracks covers it on the pipeline's ids; nsys-duck validate runs it on the written file,
-- and it can be queried in NAME.duckdb).
-- Invariants: zero rows when pid and tid are integers in 1..2^31-1, every
-- event has a pid, and every event has a tid except b/e/n and M events
-- other than thread_name / thread_sort_index. One row per broken field.

CREATE OR REPLACE VIEW check_pid_tid AS
WITH found AS (
    SELECT seq, [
        CASE WHEN pid IS NULL AND NOT coalesce(regexp_matches(problem, '(^|; )pid '), FALSE)
             THEN 'ph ' || coalesce('"' || ph || '"', 'null') || ' event without pid' END,
        CASE WHEN pid < 1 OR pid > 2147483647
             THEN 'pid ' || CAST(pid AS VARCHAR) || ' outside 1..2^31-1' END,
        CASE WHEN tid IS NULL AND NOT coalesce(regexp_matches(problem, '(^|; )tid '), FALSE)
                  AND NOT coalesce(ph IN ('b', 'e', 'n'), FALSE)
                  AND NOT (coalesce(ph = 'M', FALSE)
                           AND coalesce(name NOT IN ('thread_name', 'thread_sort_index'), TRUE))
             THEN 'ph ' || coalesce('"' || ph || '"', 'null') || ' event without tid' END,
        CASE WHEN tid < 1 OR tid > 2147483647
             THEN 'tid ' || CAST(tid AS VARCHAR) || ' outside 1..2^31-1' END
    ] || CASE WHEN problem IS NULL THEN []
              ELSE list_filter(string_split(problem, '; '),
                               lambda p: p LIKE 'pid %' OR p LIKE 'tid %') END AS found
    FROM chk_events
    WHERE pid IS NULL OR tid IS NULL OR pid < 1 OR pid > 2147483647
       OR tid < 1 OR tid > 2147483647 OR problem IS NOT NULL
)
SELECT message, seq
FROM (SELECT seq, unnest(list_filter(found, lambda m: m IS NOT NULL)) AS message FROM found);

COMMENT ON VIEW check_pid_tid IS 'Rule pid_tid: pid and tid are integers in 1..2^31-1; every event has pid; every event but b/e/n and process-level M events has tid (output-contract.md, Tracks; perfetto-json.md, Events). One row per broken field.';
COMMENT ON COLUMN check_pid_tid.message IS 'What is wrong, one sentence.';
COMMENT ON COLUMN check_pid_tid.seq IS 'The offending event (chk_events.seq).';
