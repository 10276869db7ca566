-- stg_gpu_syncs: CUPTI's synchronization records
-- (CUPTI_ACTIVITY_KIND_SYNCHRONIZATION), one row each, with the kind of
-- synchronization named.
--
-- Reads: _stg_gpu_sync_rows, nsys.ENUM_CUPTI_SYNC_TYPE,
-- stg_context_devices, stg_export_info, sync_types.
-- Grain: one row per record: the interval CUPTI gives the synchronizing
-- call (cudaStreamSynchronize, cudaEventSynchronize, cudaStreamWaitEvent,
-- cudaDeviceSynchronize, cuCtxSynchronize ...), linked to that call by
-- (process, correlationId).
-- The kind (sync_type, sync_name, the labels of ENUM_CUPTI_SYNC_TYPE) is
-- read from which ids CUPTI filled in, not from the exported syncType
-- number: CUPTI leaves streamId unset (4294967295) for context and event
-- synchronization and the event id unset for context and stream
-- synchronization (CUpti_ActivitySynchronization). The exported number
-- disagrees with its own enum table in every export we have: 2023.4
-- (schema 3.7.2) writes 1 for cudaDeviceSynchronize, 2 for
-- cudaEventSynchronize, 3 for both stream kinds; 2024.6-2026.2 (3.16-3.25)
-- write 2 for cudaStreamSynchronize and cudaStreamWaitEvent alike. The
-- exported number and its enum label stay in args (exportedSyncType,
-- exportedSyncTypeLabel).
-- device_id is the device of the record's (process, context)
-- (stg_context_devices: the exported deviceId is 0 on every row we have,
-- whatever the device); the exported value stays in exported_device_id.
-- Invariants: UTC-epoch ns; rows with NULL or reversed times or a
-- NULL/negative deviceId are counted in stg_skipped_rows instead;
-- stream_id / event_id / event_sync_id are NULL when CUPTI marked them not
-- applicable (all bits set; event_sync_id 0 also means none).

CREATE OR REPLACE VIEW stg_gpu_syncs AS
WITH rows AS (
    SELECT
        s.start + x.time_offset_ns AS start_ns,
        s."end" + x.time_offset_ns AS end_ns,
        s.deviceId AS exported_device_id,
        coalesce(CAST(s.contextId AS BIGINT), 0) AS context_id,
        nullif(CAST(s.streamId AS BIGINT), 4294967295) AS stream_id,
        nullif(nullif(s.eventId, 4294967295), -1) AS event_id,
        nullif(nullif(CAST(s.eventSyncId AS BIGINT), 4294967295), 0)
            AS event_sync_id,
        s.correlationId AS correlation_id,
        nsys_proc_key(coalesce(s.globalPid, 0)) AS proc_key,
        nsys_os_pid(coalesce(s.globalPid, 0)) AS os_pid,
        s.syncType AS exported_sync_type
    FROM _stg_gpu_sync_rows AS s
    CROSS JOIN stg_export_info AS x
    WHERE s.skip_reason IS NULL
)
SELECT
    rows.*,
    context_device(rows.proc_key, rows.os_pid, rows.context_id,
        rows.exported_device_id) AS device_id,
    kinds.sync_type,
    kinds.sync_name,
    enum.label AS exported_sync_label
FROM rows
-- the kind: the domain table sync_types
JOIN sync_types AS kinds
    ON kinds.has_stream = (rows.stream_id IS NOT NULL)
    AND kinds.has_event = (rows.event_id IS NOT NULL)
LEFT JOIN nsys.ENUM_CUPTI_SYNC_TYPE AS enum
    ON enum.id = rows.exported_sync_type;

COMMENT ON VIEW stg_gpu_syncs IS 'CUPTI''s synchronization records (CUPTI_ACTIVITY_KIND_SYNCHRONIZATION), one row each, with the kind of synchronization named.';
COMMENT ON COLUMN stg_gpu_syncs.start_ns IS 'Start, UTC-epoch ns (Nsight''s clock).';
COMMENT ON COLUMN stg_gpu_syncs.end_ns IS 'End, UTC-epoch ns (>= start_ns).';
COMMENT ON COLUMN stg_gpu_syncs.exported_device_id IS 'deviceId as exported (0 on every row seen, whatever the device).';
COMMENT ON COLUMN stg_gpu_syncs.context_id IS 'CUDA context id (NULL read as 0).';
COMMENT ON COLUMN stg_gpu_syncs.stream_id IS 'Stream waited for (NULL when not applicable).';
COMMENT ON COLUMN stg_gpu_syncs.event_id IS 'CUDA event id (NULL when not applicable).';
COMMENT ON COLUMN stg_gpu_syncs.event_sync_id IS 'CUDA event sync id (NULL when not applicable).';
COMMENT ON COLUMN stg_gpu_syncs.correlation_id IS 'CUPTI correlationId: links API calls and GPU rows within one process (proc_key).';
COMMENT ON COLUMN stg_gpu_syncs.proc_key IS 'Process key globalPid/globalTid >> 24 (PID, VM and hardware id): the scope of correlationId.';
COMMENT ON COLUMN stg_gpu_syncs.os_pid IS 'OS process id.';
COMMENT ON COLUMN stg_gpu_syncs.exported_sync_type IS 'syncType as exported (disagrees with its own enum in every export seen).';
COMMENT ON COLUMN stg_gpu_syncs.device_id IS 'Device of the record''s (process, context) (stg_context_devices), else the exported one.';
COMMENT ON COLUMN stg_gpu_syncs.sync_type IS 'CUpti_ActivitySynchronizationType read from which ids are set: 1 event, 2 stream wait, 3 stream, 4 context.';
COMMENT ON COLUMN stg_gpu_syncs.sync_name IS 'Slice name: Event sync, Stream wait sync, Stream sync, Context sync.';
COMMENT ON COLUMN stg_gpu_syncs.exported_sync_label IS 'ENUM_CUPTI_SYNC_TYPE label of exported_sync_type.';
