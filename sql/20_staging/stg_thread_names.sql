-- stg_thread_names: the names Nsight recorded for CPU threads
-- (ThreadNames, the name text resolved in StringIds).
--
-- Reads: nsys.StringIds, nsys.ThreadNames.
-- Invariants: one row per ThreadNames row whose nameId is in StringIds;
-- thread_name is the text cleaned for display (clean_text), possibly empty.

CREATE OR REPLACE VIEW stg_thread_names AS
SELECT
    CAST(t.globalTid AS BIGINT) AS global_tid,
    clean_text(s.value) AS thread_name
FROM nsys.ThreadNames AS t
INNER JOIN nsys.StringIds AS s ON s.id = t.nameId;

COMMENT ON VIEW stg_thread_names IS 'The names Nsight recorded for CPU threads (ThreadNames, text from StringIds).';
COMMENT ON COLUMN stg_thread_names.global_tid IS 'Nsight globalTid of the thread.';
COMMENT ON COLUMN stg_thread_names.thread_name IS 'The thread name (clean_text of its StringIds text).';
