-- int_nvtx_gpu_projection: NVTX ranges projected onto the GPU (the "NVTX
-- Kernel" tracks): one row per (range, device) with owned GPU work.
--
-- Reads: _int_nvtx_call_owners, _int_nvtx_call_work, int_nvtx_ranges.
-- Invariants: start_ns/end_ns = [min op start, max op end] of the ops the
-- range owns on that device (Nsight reports one row per range over all
-- devices; here it is split per device because it is drawn under each
-- device). gpu_op_count counts operations, launch_count distinct launching
-- calls (Nsight's NumGPUOps, a graph launch counts once). Ranges without
-- owned GPU work have no row. An unclosed range ends at the capture end of
-- stg_nvtx_events (Nsight: the largest range timestamp).

CREATE OR REPLACE TABLE int_nvtx_gpu_projection AS
WITH per_device AS (
    SELECT
        o.nvtx_id,
        w.device_id,
        min(w.start_ns) AS start_ns,
        max(w.end_ns) AS end_ns,
        sum(w.op_count) AS gpu_op_count,
        count(*) AS launch_count
    FROM _int_nvtx_call_owners AS o
    JOIN _int_nvtx_call_work AS w ON w.call_id = o.call_id
    GROUP BY o.nvtx_id, w.device_id
)
SELECT
    r.nvtx_id,
    p.device_id,
    r.proc_key,
    r.os_pid,
    r.os_tid,
    r.global_tid,
    r.message,
    r.domain_name,
    p.start_ns,
    p.end_ns,
    CAST(p.gpu_op_count AS BIGINT) AS gpu_op_count,
    p.launch_count,
    r.event_type,
    r.range_kind,
    r.ownership,
    r.start_ns AS range_start_ns,
    r.end_ns AS range_end_ns,
    -- CPU order (start, longer first, nvtx_id): outer before inner, the
    -- tie-break of projections with equal intervals (int_slices.nest_seq)
    dense_rank() OVER (ORDER BY r.start_ns, r.end_ns DESC, r.nvtx_id)
        AS path_order
FROM per_device AS p
JOIN int_nvtx_ranges AS r ON r.nvtx_id = p.nvtx_id;

COMMENT ON TABLE int_nvtx_gpu_projection IS 'NVTX ranges projected onto the GPU (the "NVTX Kernel" tracks): one row per (range, device) with owned GPU work.';
COMMENT ON COLUMN int_nvtx_gpu_projection.nvtx_id IS 'NVTX row id (stg_nvtx_events.nvtx_id).';
COMMENT ON COLUMN int_nvtx_gpu_projection.device_id IS 'Device the owned GPU work ran on.';
COMMENT ON COLUMN int_nvtx_gpu_projection.proc_key IS 'Process key globalPid/globalTid >> 24 (PID, VM and hardware id): the scope of correlationId.';
COMMENT ON COLUMN int_nvtx_gpu_projection.os_pid IS 'OS process id.';
COMMENT ON COLUMN int_nvtx_gpu_projection.os_tid IS 'OS thread id.';
COMMENT ON COLUMN int_nvtx_gpu_projection.global_tid IS 'Nsight globalTid of the thread.';
COMMENT ON COLUMN int_nvtx_gpu_projection.message IS 'NVTX message (StringIds via textId, else text; ''[unnamed]'' when empty).';
COMMENT ON COLUMN int_nvtx_gpu_projection.domain_name IS 'NVTX domain name (''default'' for domain 0).';
COMMENT ON COLUMN int_nvtx_gpu_projection.start_ns IS 'Start of the first owned GPU operation on the device, UTC-epoch ns.';
COMMENT ON COLUMN int_nvtx_gpu_projection.end_ns IS 'End of the last owned GPU operation on the device, UTC-epoch ns.';
COMMENT ON COLUMN int_nvtx_gpu_projection.gpu_op_count IS 'Owned GPU operations on the device.';
COMMENT ON COLUMN int_nvtx_gpu_projection.launch_count IS 'Distinct owned launching calls (Nsight''s NumGPUOps: a graph launch counts once).';
COMMENT ON COLUMN int_nvtx_gpu_projection.event_type IS 'NVTX_EVENTS.eventType (nvtx_event_types).';
COMMENT ON COLUMN int_nvtx_gpu_projection.range_kind IS 'push_pop or start_end (nvtx_event_types.range_kind).';
COMMENT ON COLUMN int_nvtx_gpu_projection.ownership IS 'Ownership rule used: thread (calls on the range''s thread it contains) or process (also calls of other threads of the process starting inside it).';
COMMENT ON COLUMN int_nvtx_gpu_projection.range_start_ns IS 'The range''s own (CPU) start, UTC-epoch ns.';
COMMENT ON COLUMN int_nvtx_gpu_projection.range_end_ns IS 'The range''s own (CPU) end, UTC-epoch ns.';
COMMENT ON COLUMN int_nvtx_gpu_projection.path_order IS 'CPU order of the range (start, longer first, nvtx_id): tie-break of equal projections.';
