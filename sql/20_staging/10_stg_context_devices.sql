-- stg_context_devices: the GPU device of each CUDA context of each process.
--
-- Reads: nsys.CUPTI_ACTIVITY_KIND_GRAPH_TRACE,
-- nsys.CUPTI_ACTIVITY_KIND_KERNEL, nsys.CUPTI_ACTIVITY_KIND_MEMCPY,
-- nsys.CUPTI_ACTIVITY_KIND_MEMSET, nsys.TARGET_INFO_CUDA_CONTEXT_INFO.
-- Why: CUPTI's synchronization and CUDA event records carry a context, not
-- a device, and the deviceId Nsight exports for them is 0 whatever the
-- device (cori_omp_offload_dev5: kernels on device 5, its sync rows say
-- 0; nsysai_h100_2gpu_1s: process 112 runs on device 1, its sync rows say
-- 0). A context belongs to one device, so their device is that of the
-- context: from the GPU work of the same (process, context), else from
-- TARGET_INFO_CUDA_CONTEXT_INFO (processId is the OS pid there); callers
-- fall back to the exported deviceId only when neither knows the context.
-- Invariants: one row per (proc_key, context_id) (or, from CONTEXT_INFO,
-- per (os_pid, context_id) with proc_key NULL); the activity tables win
-- over CONTEXT_INFO. Macro context_device(proc_key, os_pid, context_id,
-- exported_device_id): the lookup every such record uses.

CREATE OR REPLACE TABLE stg_context_devices AS
WITH from_work AS (
    SELECT DISTINCT globalPid, contextId, deviceId
    FROM nsys.CUPTI_ACTIVITY_KIND_KERNEL
    UNION
    SELECT DISTINCT globalPid, contextId, deviceId
    FROM nsys.CUPTI_ACTIVITY_KIND_MEMCPY
    UNION
    SELECT DISTINCT globalPid, contextId, deviceId
    FROM nsys.CUPTI_ACTIVITY_KIND_MEMSET
    UNION
    SELECT DISTINCT globalPid, contextId, deviceId
    FROM nsys.CUPTI_ACTIVITY_KIND_GRAPH_TRACE
),
known AS (
    SELECT
        nsys_proc_key(coalesce(globalPid, 0)) AS proc_key,
        nsys_os_pid(coalesce(globalPid, 0)) AS os_pid,
        coalesce(CAST(contextId AS BIGINT), 0) AS context_id,
        min(deviceId) AS device_id
    FROM from_work
    WHERE deviceId >= 0
    GROUP BY ALL
)
SELECT proc_key, os_pid, context_id, device_id, 'activity' AS source
FROM known
UNION ALL
SELECT NULL, info.processId, info.contextId, min(info.deviceId),
    'TARGET_INFO_CUDA_CONTEXT_INFO'
FROM nsys.TARGET_INFO_CUDA_CONTEXT_INFO AS info
WHERE info.deviceId >= 0 AND NOT EXISTS (
    SELECT 1 FROM known
    WHERE known.os_pid = info.processId AND known.context_id = info.contextId)
GROUP BY info.processId, info.contextId;

COMMENT ON TABLE stg_context_devices IS 'The GPU device of each CUDA context of each process.';
COMMENT ON COLUMN stg_context_devices.proc_key IS 'Process key (NULL on rows from TARGET_INFO_CUDA_CONTEXT_INFO, which knows the OS pid only).';
COMMENT ON COLUMN stg_context_devices.os_pid IS 'OS process id.';
COMMENT ON COLUMN stg_context_devices.context_id IS 'CUDA context id (NULL read as 0).';
COMMENT ON COLUMN stg_context_devices.device_id IS 'Device of the context.';
COMMENT ON COLUMN stg_context_devices.source IS 'Where the pair comes from: activity (kernel/copy/memset/graph rows) or TARGET_INFO_CUDA_CONTEXT_INFO.';
