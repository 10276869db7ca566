-- _int_cpu_processes: the profiled processes with CPU rows, one row per
-- proc_key, and which side of the trace they have rows on (private helper
-- of int_homes and _int_cpu_homes).
--
-- Reads: int_runtime_calls, int_thread_states, stg_cpu_calls,
-- stg_nvtx_events.
-- Invariants: one row per proc_key; os_pid is its OS pid. has_seed_rows:
-- it has CUDA API calls or NVTX rows (drawn under devices); has_host_rows:
-- it has OS runtime / cuDNN / cuBLAS calls or thread states (drawn once,
-- under its own host process; output-contract.md, Tracks). Thread states,
-- not scheduling events: a thread with one event has no state to draw.
-- Column comments from: int_runtime_calls.

CREATE OR REPLACE TABLE _int_cpu_processes AS
SELECT
    proc_key,
    any_value(os_pid) AS os_pid,
    bool_or(is_seed) AS has_seed_rows,
    bool_or(NOT is_seed) AS has_host_rows
FROM (
    SELECT proc_key, os_pid, TRUE AS is_seed FROM int_runtime_calls
    UNION ALL
    SELECT proc_key, os_pid, TRUE FROM stg_nvtx_events
    UNION ALL
    SELECT proc_key, os_pid, FALSE FROM stg_cpu_calls
    UNION ALL
    SELECT proc_key, os_pid, FALSE FROM int_thread_states
)
GROUP BY proc_key;

COMMENT ON TABLE _int_cpu_processes IS 'The profiled processes with CPU rows, one row per proc_key, and which side of the trace they have rows on (private helper of int_homes and _int_cpu_homes).';
COMMENT ON COLUMN _int_cpu_processes.has_seed_rows IS 'TRUE when the process has CUDA API calls or NVTX rows (drawn under devices).';
COMMENT ON COLUMN _int_cpu_processes.has_host_rows IS 'TRUE when the process has OS runtime / cuDNN / cuBLAS calls or thread states (drawn under its host process).';
