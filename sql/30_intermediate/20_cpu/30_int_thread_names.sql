-- int_thread_names: a display name per CPU thread (globalTid) of the
-- profiled processes.
--
-- Reads: stg_nvtx_events, stg_thread_names.
-- Invariants: one row per global_tid; ThreadNames wins over NVTX naming;
-- threads without a name are absent (callers fall back to the tid).
-- Column comments from: stg_thread_names.

CREATE OR REPLACE TABLE int_thread_names AS
SELECT global_tid, arg_min(thread_name, source_rank) AS thread_name
FROM (
    SELECT global_tid, thread_name, 1 AS source_rank
    FROM stg_thread_names
    UNION ALL
    SELECT global_tid, message, 2
    FROM stg_nvtx_events
    WHERE nvtx_role = 'thread_name'
)
WHERE thread_name IS NOT NULL AND thread_name <> ''
GROUP BY global_tid;

COMMENT ON TABLE int_thread_names IS 'A display name per CPU thread (globalTid) of the profiled processes.';
COMMENT ON COLUMN int_thread_names.thread_name IS 'Thread name (ThreadNames, else nvtxNameOsThread).';
