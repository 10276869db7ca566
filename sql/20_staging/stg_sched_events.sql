-- stg_sched_events: thread scheduling events (SCHED_EVENTS), one row per
-- event: a thread put on a CPU (sched in) or taken off it (sched out).
--
-- Reads: _stg_sched_event_rows, cpu_trace_sources, stg_enum_labels,
-- stg_export_info.
-- Invariants: empty unless its source ('sched') is kept (template list cpu_sources:
-- --no-sched leaves it out). Rows with a skip_reason (_stg_sched_event_rows:
-- a NULL start, isSchedIn or globalTid) are NOT here: stg_skipped_rows
-- counts them. cpu: the CPU the thread starts
-- running on (sched in) or leaves (sched out). In every real export seen
-- (7 dev reports, 3 newer ones), the events of a thread alternate in and
-- out; int_thread_states does not rely on it. Times are UTC-epoch ns
-- (+ stg_export_info.time_offset_ns).

CREATE OR REPLACE VIEW stg_sched_events AS
SELECT
    e.start + x.time_offset_ns AS at_ns,
    CAST(e.cpu AS BIGINT) AS cpu,
    e.isSchedIn AS is_sched_in,
    -- Nsight's thread state, when the export has it and it says more than
    -- 'Unknown' (0): on sched-outs, e.g. Terminated
    CASE WHEN e.threadState <> 0 THEN coalesce(
        (SELECT any_value(l.label) FROM stg_enum_labels AS l
            WHERE l.enum_table = 'ENUM_SAMPLING_THREAD_STATE'
                AND l.code = e.threadState),
        CAST(e.threadState AS VARCHAR)) END AS thread_state,
    CAST(e.globalTid AS BIGINT) AS global_tid,
    nsys_proc_key(e.globalTid) AS proc_key,
    nsys_os_pid(e.globalTid) AS os_pid,
    nsys_os_tid(e.globalTid) AS os_tid
FROM _stg_sched_event_rows AS e
CROSS JOIN stg_export_info AS x
WHERE (SELECT source FROM cpu_trace_sources WHERE table_name = 'SCHED_EVENTS')
    IN ({% for s in cpu_sources %}'{{ s }}', {% endfor %}NULL)
    AND e.skip_reason IS NULL;

COMMENT ON VIEW stg_sched_events IS 'Thread scheduling events (SCHED_EVENTS), one row per event: a thread put on a CPU (sched in) or taken off it (sched out).';
COMMENT ON COLUMN stg_sched_events.at_ns IS 'When, UTC-epoch ns (Nsight''s clock).';
COMMENT ON COLUMN stg_sched_events.cpu IS 'CPU the thread starts running on (sched in) or leaves (sched out).';
COMMENT ON COLUMN stg_sched_events.is_sched_in IS 'TRUE: the thread starts running; FALSE: it stops.';
COMMENT ON COLUMN stg_sched_events.thread_state IS 'SCHED_EVENTS.threadState labelled by ENUM_SAMPLING_THREAD_STATE (newer exports; NULL when absent or 0 = Unknown).';
COMMENT ON COLUMN stg_sched_events.global_tid IS 'Nsight globalTid of the thread.';
COMMENT ON COLUMN stg_sched_events.proc_key IS 'Process key globalTid >> 24 (PID, VM and hardware id).';
COMMENT ON COLUMN stg_sched_events.os_pid IS 'OS process id.';
COMMENT ON COLUMN stg_sched_events.os_tid IS 'OS thread id.';
