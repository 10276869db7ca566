-- _int_cpu_processes: the profiled processes with CPU rows (API calls,
-- NVTX, OS runtime / cuDNN / cuBLAS calls or scheduling events), one row
-- per proc_key (private helper of int_homes).
--
-- Reads: int_runtime_calls, stg_cpu_calls, stg_nvtx_events,
-- stg_sched_events.
-- Invariants: one row per proc_key; os_pid is its OS pid.

CREATE OR REPLACE TABLE _int_cpu_processes AS
SELECT proc_key, any_value(os_pid) AS os_pid
FROM (
    SELECT proc_key, os_pid FROM int_runtime_calls
    UNION ALL
    SELECT proc_key, os_pid FROM stg_nvtx_events
    UNION ALL
    SELECT proc_key, os_pid FROM stg_cpu_calls
    UNION ALL
    SELECT proc_key, os_pid FROM stg_sched_events
)
GROUP BY proc_key;

COMMENT ON TABLE _int_cpu_processes IS 'The profiled processes with CPU rows (API calls, NVTX, OS runtime / cuDNN / cuBLAS calls or scheduling events), one row per proc_key (private helper of int_homes).';
