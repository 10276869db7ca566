-- _int_slices_gpu_syncs: the slice of each GPU-side synchronization record
-- (stg_gpu_syncs) on the CUDA Sync track of its device, process and
-- context, linked to the API call it belongs to (private helper of
-- int_slices, which documents the columns).
--
-- Reads: int_runtime_calls, stg_gpu_syncs.
-- Invariants: one row per stg_gpu_syncs row, in its order; cat gpu_sync,
-- name the record's kind ('Stream sync', 'Event sync', 'Stream wait sync',
-- 'Context sync'), is_primary TRUE; key3 = 2^32 (above every stream id,
-- so the track sorts after the streams of its context); linked_call_id:
-- the call_id of an API call of the same process with the record's
-- correlationId (any one, if several), NULL without one (the 'sync'
-- flow's source). args: gpu_sync_args_json.

CREATE OR REPLACE VIEW _int_slices_gpu_syncs AS
WITH gpu_syncs AS (
    SELECT
        sync.*,
        (SELECT any_value(call.call_id) FROM int_runtime_calls AS call
            WHERE call.proc_key = sync.proc_key
                AND call.correlation_id = sync.correlation_id) AS call_id
    FROM stg_gpu_syncs AS sync
)

SELECT
    'gpu_sync' AS cat, 'X' AS ph, sync.sync_name AS name,
    sync.start_ns, sync.end_ns, sync.device_id AS home_id,
    'cuda_sync' AS track_class, sync.proc_key, sync.os_pid AS key1,
    sync.context_id AS key2, 4294967296 AS key3,
    ' [pid ' || CAST(sync.os_pid AS VARCHAR) || ' ctx '
        || CAST(sync.context_id AS VARCHAR) || ']' AS track_base_name,
    sync.device_id, sync.proc_key AS owner_proc_key, sync.os_pid,
    sync.context_id, sync.stream_id, sync.correlation_id,
    sync.call_id AS linked_call_id, TRUE AS is_primary,
    gpu_sync_args_json(sync.correlation_id, sync.device_id,
        sync.context_id, sync.stream_id, sync.event_id, sync.event_sync_id,
        sync.exported_sync_type, sync.exported_sync_label) AS args_json
FROM gpu_syncs AS sync;

COMMENT ON VIEW _int_slices_gpu_syncs IS 'int_slices rows of the GPU-side synchronization records, on the CUDA Sync track of their context (private helper of int_slices).';
