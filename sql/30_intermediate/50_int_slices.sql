-- int_slices: every slice of the trace, on its base track (before lanes).
--
-- Reads: int_gpu_ops, int_runtime_calls, int_runtime_links, int_homes,
-- int_cpu_homes, int_thread_names, stg_nvtx_push_pop_ranges,
-- int_nvtx_gpu_projection.
-- Grain: one row per drawn slice (slice_id unique). A GPU op gives its
-- as-executed slice plus at most one projection slice; an API call one slice
-- per device it is drawn under; an NVTX range one per home of its process.
-- Track identity: (home_id, class_order, proc_key, key1, key2, key3), sorted
-- in that order (output-contract.md, Tracks):
--   1 CUDA Core Timeline, 2 PCIe Usage, 3 D2D Copy, 4 Unified Memory,
--   5 stream tracks (key1 os pid, key2 context, key3 stream),
--   6 per CPU thread (key1 os pid, key2 os tid, key3 1 NVTX Kernel,
--     2 NVTX Thread, 3 CUDA API).
-- ph is 'X' (complete slice) or 'B' (begin/end pair, NVTX stacks).
-- needs_lanes: slices on this track may overlap and go to lanes (#2, #3).

CREATE OR REPLACE TABLE int_slices AS
WITH thread_label AS (
    SELECT global_tid, thread_name FROM int_thread_names
),
gpu_executed AS (
    SELECT
        op.cat, 'X' AS ph, op.name, op.start_ns, op.end_ns,
        op.device_id AS home_id,
        CASE WHEN op.is_unified_migration THEN 4 ELSE 5 END AS class_order,
        CASE WHEN op.is_unified_migration THEN 0 ELSE op.proc_key END
            AS proc_key,
        CASE WHEN op.is_unified_migration THEN 0 ELSE op.os_pid END AS key1,
        CASE WHEN op.is_unified_migration THEN 0 ELSE op.context_id END
            AS key2,
        CASE WHEN op.is_unified_migration THEN 0 ELSE op.stream_id END
            AS key3,
        CASE WHEN op.is_unified_migration THEN 'Unified Memory'
            ELSE 'Stream ' || CAST(op.stream_id AS VARCHAR)
                || ' [pid ' || CAST(op.os_pid AS VARCHAR)
                || ' ctx ' || CAST(op.context_id AS VARCHAR) || ']'
        END AS track_base_name,
        op.op_id, NULL::BIGINT AS call_id, NULL::BIGINT AS nvtx_id,
        op.device_id, op.proc_key AS owner_proc_key, op.os_pid,
        NULL::BIGINT AS os_tid, op.context_id, op.stream_id,
        op.correlation_id, op.copy_kind_label, op.bytes, op.args_json
    FROM int_gpu_ops AS op
),
gpu_projected AS (
    SELECT
        CASE op.projection WHEN 'core' THEN 'kernel_core'
            WHEN 'pcie' THEN 'memcpy_pcie' ELSE 'memcpy_d2d' END,
        'X', op.name, op.start_ns, op.end_ns, op.device_id,
        CASE op.projection WHEN 'core' THEN 1 WHEN 'pcie' THEN 2 ELSE 3 END,
        0, 0, 0, 0,
        CASE op.projection WHEN 'core' THEN 'CUDA Core Timeline'
            WHEN 'pcie' THEN 'PCIe Usage' ELSE 'D2D Copy' END,
        op.op_id, NULL, NULL,
        op.device_id, op.proc_key, op.os_pid, NULL, op.context_id,
        op.stream_id, op.correlation_id, op.copy_kind_label, op.bytes,
        op.args_json
    FROM int_gpu_ops AS op
    WHERE op.projection IS NOT NULL
),
call_homes AS (
    -- Linked calls: under each device their GPU work ran on.
    SELECT DISTINCT link.call_id, link.device_id AS home_id
    FROM int_runtime_links AS link
    UNION ALL
    -- Synchronization calls: under every home of their process.
    SELECT call.call_id, home.home_id
    FROM int_runtime_calls AS call
    JOIN int_cpu_homes AS home ON home.proc_key = call.proc_key
    WHERE call.cat = 'cuda_sync'
),
api AS (
    SELECT
        call.cat, 'X', call.api_name, call.start_ns, call.end_ns,
        ch.home_id, 6, call.proc_key, call.os_pid, call.os_tid, 3,
        'CUDA API [pid ' || CAST(call.os_pid AS VARCHAR)
            || ' tid ' || CAST(call.os_tid AS VARCHAR)
            || coalesce(' ' || tl.thread_name, '') || ']',
        NULL, call.call_id, NULL,
        NULL, call.proc_key, call.os_pid, call.os_tid, NULL, NULL,
        call.correlation_id, NULL, NULL,
        json_object('correlationId', call.correlation_id,
            'name', call.api_full_name,
            'eventClass', CASE call.event_class WHEN 0 THEN 'runtime'
                ELSE 'driver' END)
    FROM int_runtime_calls AS call
    JOIN call_homes AS ch ON ch.call_id = call.call_id
    LEFT JOIN thread_label AS tl ON tl.global_tid = call.global_tid
),
nvtx_thread AS (
    SELECT
        'nvtx', CASE WHEN r.end_ns > r.start_ns THEN 'B' ELSE 'X' END,
        r.message, r.start_ns, r.end_ns,
        ch.home_id, 6, r.proc_key, r.os_pid, r.os_tid, 2,
        'NVTX Thread [pid ' || CAST(r.os_pid AS VARCHAR)
            || ' tid ' || CAST(r.os_tid AS VARCHAR)
            || coalesce(' ' || tl.thread_name, '') || ']',
        NULL, NULL, r.nvtx_id,
        NULL, r.proc_key, r.os_pid, r.os_tid, NULL, NULL, NULL, NULL, NULL,
        json_object('domain', r.domain_name, 'category', r.category,
            'color', CASE WHEN r.color IS NOT NULL
                THEN '#' || lpad(upper(to_hex(r.color)), 8, '0') END)
    FROM stg_nvtx_push_pop_ranges AS r
    JOIN int_cpu_homes AS ch ON ch.proc_key = r.proc_key
    LEFT JOIN thread_label AS tl ON tl.global_tid = r.global_tid
),
nvtx_kernel AS (
    SELECT
        'nvtx_kernel', CASE WHEN p.end_ns > p.start_ns THEN 'B' ELSE 'X' END,
        p.message, p.start_ns, p.end_ns,
        p.device_id, 6, p.proc_key, p.os_pid, p.os_tid, 1,
        'NVTX Kernel [pid ' || CAST(p.os_pid AS VARCHAR)
            || ' tid ' || CAST(p.os_tid AS VARCHAR)
            || coalesce(' ' || tl.thread_name, '') || ']',
        NULL, NULL, p.nvtx_id,
        p.device_id, p.proc_key, p.os_pid, p.os_tid, NULL, NULL, NULL, NULL,
        NULL,
        json_object('domain', p.domain_name, 'gpuOps', p.gpu_op_count)
    FROM int_nvtx_gpu_projection AS p
    LEFT JOIN thread_label AS tl ON tl.global_tid = p.global_tid
),
all_slices AS (
    SELECT * FROM gpu_executed
    UNION ALL SELECT * FROM gpu_projected
    UNION ALL SELECT * FROM api
    UNION ALL SELECT * FROM nvtx_thread
    UNION ALL SELECT * FROM nvtx_kernel
)
SELECT
    row_number() OVER () AS slice_id,
    *,
    -- B/E stacks nest by construction; X tracks may overlap and get lanes.
    ph = 'X' AND cat NOT IN ('nvtx', 'nvtx_kernel') AS needs_lanes
FROM all_slices;
