-- stg_cuda_events: CUDA event records (CUPTI_ACTIVITY_KIND_CUDA_EVENT) that
-- carry a GPU timestamp: the moment a cudaEventRecord completed on its
-- stream.
--
-- Reads: nsys.CUPTI_ACTIVITY_KIND_CUDA_EVENT, stg_context_devices,
-- stg_export_info.
-- Grain: one row per record with a timestamp. Nsight writes timestamp 0
-- (or, before schema 3.23, no timestamp column) unless the capture used
-- --cuda-event-trace=true: such rows are not here and the summary counts
-- them ("CUDA event rows without a timestamp (not drawn)").
-- Invariants: at_ns is UTC-epoch ns; NULL context/stream read as 0;
-- device_id is that of the record's (process, context), as for
-- synchronization records (stg_context_devices), else the exported one.

CREATE OR REPLACE VIEW stg_cuda_events AS
SELECT
    e.timestamp + x.time_offset_ns AS at_ns,
    context_device(nsys_proc_key(coalesce(e.globalPid, 0)),
        nsys_os_pid(coalesce(e.globalPid, 0)),
        coalesce(CAST(e.contextId AS BIGINT), 0), e.deviceId) AS device_id,
    coalesce(CAST(e.contextId AS BIGINT), 0) AS context_id,
    coalesce(CAST(e.streamId AS BIGINT), 0) AS stream_id,
    e.correlationId AS correlation_id,
    nsys_proc_key(coalesce(e.globalPid, 0)) AS proc_key,
    nsys_os_pid(coalesce(e.globalPid, 0)) AS os_pid,
    e.eventId AS event_id,
    CAST(e.eventSyncId AS BIGINT) AS event_sync_id
FROM nsys.CUPTI_ACTIVITY_KIND_CUDA_EVENT AS e
CROSS JOIN stg_export_info AS x
WHERE coalesce(e.timestamp, 0) <> 0 AND e.deviceId >= 0;

COMMENT ON VIEW stg_cuda_events IS 'CUDA event records (CUPTI_ACTIVITY_KIND_CUDA_EVENT) that carry a GPU timestamp: the moment a cudaEventRecord completed on its stream.';
COMMENT ON COLUMN stg_cuda_events.at_ns IS 'When the cudaEventRecord completed on its stream, UTC-epoch ns.';
COMMENT ON COLUMN stg_cuda_events.device_id IS 'Device of the record''s (process, context) (stg_context_devices), else the exported one.';
COMMENT ON COLUMN stg_cuda_events.context_id IS 'CUDA context id (NULL read as 0).';
COMMENT ON COLUMN stg_cuda_events.stream_id IS 'CUDA stream id (NULL read as 0).';
COMMENT ON COLUMN stg_cuda_events.correlation_id IS 'CUPTI correlationId: links API calls and GPU rows within one process (proc_key).';
COMMENT ON COLUMN stg_cuda_events.proc_key IS 'Process key globalPid/globalTid >> 24 (PID, VM and hardware id): the scope of correlationId.';
COMMENT ON COLUMN stg_cuda_events.os_pid IS 'OS process id.';
COMMENT ON COLUMN stg_cuda_events.event_id IS 'CUDA event id (NULL when not applicable).';
COMMENT ON COLUMN stg_cuda_events.event_sync_id IS 'CUDA event sync id (NULL when not applicable).';
