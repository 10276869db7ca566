-- _int_slices_cuda_api: the slices of each CUDA API call (every call of
-- int_runtime_calls: runtime and driver, launches, copies, syncs...) on
-- the CUDA API track of its thread (private helper of int_slices, which
-- documents the columns).
--
-- Reads: _int_cpu_homes, _int_slices_gpu_syncs, int_runtime_calls,
-- int_runtime_links, int_thread_names.
-- Invariants: a call linked to GPU work (int_runtime_links) has one slice
-- per device that work ran on; a call without any, one per home of its
-- process (_int_cpu_homes), as its NVTX ranges; a call with GPU-side
-- synchronization records also one under the device of those records
-- (never two under one home). is_primary: TRUE on the slice under the
-- call's lowest home_id, FALSE on the others. args_json NULL: the args
-- are built at output from api_full_name, event_class and return_value
-- with correlation_id (cuda_api_args_json), since a text unique to each
-- row costs more to store than to build.

CREATE OR REPLACE VIEW _int_slices_cuda_api AS
WITH call_homes AS (
    SELECT
        call_id, home_id,
        -- the call's primary slice: the one under its lowest home
        home_id = min(home_id) OVER (PARTITION BY call_id) AS is_primary
    FROM (
        -- Linked calls: under each device their GPU work ran on.
        SELECT DISTINCT link.call_id, link.device_id AS home_id
        FROM int_runtime_links AS link
        UNION
        -- Calls without linked GPU work (synchronization, allocation,
        -- stream, event, graph calls...): under every home of their process,
        -- as its NVTX ranges; a call with GPU-side synchronization rows
        -- also under the device of those rows.
        SELECT call.call_id, home.home_id
        FROM int_runtime_calls AS call
        JOIN _int_cpu_homes AS home ON home.proc_key = call.proc_key
        WHERE call.call_id NOT IN (SELECT link.call_id
            FROM int_runtime_links AS link)
        UNION
        SELECT sync.linked_call_id, sync.device_id
        FROM _int_slices_gpu_syncs AS sync
        WHERE sync.linked_call_id IS NOT NULL
    )
)

SELECT
    call.cat, 'X' AS ph, call.api_name AS name, call.start_ns,
    call.end_ns, ch.home_id, 'cuda_api' AS track_class, call.proc_key,
    call.os_pid AS key1, call.os_tid AS key2, 0 AS key3,
    thread_track_suffix(call.os_pid, call.os_tid, tl.thread_name)
        AS track_base_name,
    call.call_id, call.proc_key AS owner_proc_key, call.os_pid,
    call.os_tid, call.correlation_id, ch.is_primary,
    -- args built at output from these columns (cuda_api_args_json)
    call.api_full_name, CAST(call.event_class AS BIGINT) AS event_class,
    call.return_value
FROM int_runtime_calls AS call
JOIN call_homes AS ch ON ch.call_id = call.call_id
LEFT JOIN int_thread_names AS tl ON tl.global_tid = call.global_tid;

COMMENT ON VIEW _int_slices_cuda_api IS 'int_slices rows of the CUDA API calls, on the CUDA API track of their thread under each home they are drawn under (private helper of int_slices).';
