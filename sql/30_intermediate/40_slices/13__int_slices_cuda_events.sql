-- _int_slices_cuda_events: each timed CUDA event record (stg_cuda_events)
-- as an instant on its stream track (private helper of int_slices, which
-- documents the columns).
--
-- Reads: stg_cuda_events.
-- Invariants: one row per stg_cuda_events row, in its order; cat
-- cuda_event, ph 'i', start_ns = end_ns = the record's time, is_primary
-- TRUE; the stream track identity and name of the GPU operations of that
-- stream (_int_slices_gpu_ops). args: cuda_event_args_json.

CREATE OR REPLACE VIEW _int_slices_cuda_events AS
SELECT
    'cuda_event' AS cat, 'i' AS ph, 'CUDA event record' AS name,
    ev.at_ns AS start_ns, ev.at_ns AS end_ns, ev.device_id AS home_id,
    'stream' AS track_class, ev.proc_key, ev.os_pid AS key1,
    ev.context_id AS key2, ev.stream_id AS key3,
    stream_track_suffix(ev.stream_id, ev.os_pid, ev.context_id)
        AS track_base_name,
    ev.device_id, ev.proc_key AS owner_proc_key, ev.os_pid,
    ev.context_id, ev.stream_id, ev.correlation_id, TRUE AS is_primary,
    cuda_event_args_json(ev.correlation_id, ev.device_id, ev.context_id,
        ev.stream_id, ev.event_id, ev.event_sync_id) AS args_json
FROM stg_cuda_events AS ev;

COMMENT ON VIEW _int_slices_cuda_events IS 'int_slices rows of the timed CUDA event records, instants on their stream track (private helper of int_slices).';
