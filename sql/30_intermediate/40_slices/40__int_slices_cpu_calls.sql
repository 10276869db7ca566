-- _int_slices_cpu_calls: the CPU-side calls Nsight traced outside CUDA (OS
-- runtime, cuDNN, cuBLAS: stg_cpu_calls) on the OS Runtime / cuDNN / cuBLAS
-- track of their thread (private helper of int_slices, which documents the
-- columns).
--
-- Reads: int_homes, int_thread_names, stg_cpu_calls.
-- Invariants: one X slice per call (Nsight's zero-length markers too),
-- drawn once (is_primary TRUE), under the host home of the thread's
-- process (int_homes), never under a device (output-contract.md, Tracks);
-- cat and track_class = the call's source (cpu_trace_sources); the track
-- named after the thread as Nsight names it (host_thread_track_suffix:
-- 'OS Runtime · NAME [TID]'). args: cpu_call_args_json (returnValue,
-- nestingLevel when > 0; {} for cuDNN/cuBLAS).

CREATE OR REPLACE VIEW _int_slices_cpu_calls AS
WITH host_homes AS (
    SELECT proc_key, home_id FROM int_homes WHERE home_kind = 'host'
)

SELECT
    c.source AS cat, 'X' AS ph, c.name, c.start_ns, c.end_ns,
    hh.home_id, c.source AS track_class, c.proc_key,
    c.os_pid AS key1, c.os_tid AS key2, 0 AS key3,
    host_thread_track_suffix(c.os_tid, tl.thread_name)
        AS track_base_name,
    c.proc_key AS owner_proc_key, c.os_pid, c.os_tid, TRUE AS is_primary,
    c.return_value,
    cpu_call_args_json(c.return_value, c.nesting_level) AS args_json
FROM stg_cpu_calls AS c
JOIN host_homes AS hh ON hh.proc_key = c.proc_key
LEFT JOIN int_thread_names AS tl ON tl.global_tid = c.global_tid;

COMMENT ON VIEW _int_slices_cpu_calls IS 'int_slices rows of the OS runtime, cuDNN and cuBLAS calls, on their thread''s track under the host home of its process (private helper of int_slices).';
