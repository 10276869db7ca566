-- stg_memsets: one row per memset (CUPTI_ACTIVITY_KIND_MEMSET), as CUPTI
-- timed it.
--
-- Reads: _stg_memset_rows, stg_enum_labels, stg_export_info.
-- Invariants: as stg_kernels (UTC-epoch ns, undrawable rows
-- counted in stg_skipped_rows, NULL context/stream read as 0).
-- mem_kind: the memory kind set (memKind), labelled by the export's
-- ENUM_CUDA_MEM_KIND (stg_enum_labels), else the code as text; NULL when
-- not exported. Looked up in a map, not joined (rows keep the table's
-- order, which numbers int_gpu_ops.op_id).

CREATE OR REPLACE VIEW stg_memsets AS
SELECT
    s.start + x.time_offset_ns AS start_ns,
    s."end" + x.time_offset_ns AS end_ns,
    s.deviceId AS device_id,
    coalesce(CAST(s.contextId AS BIGINT), 0) AS context_id,
    coalesce(CAST(s.streamId AS BIGINT), 0) AS stream_id,
    s.correlationId AS correlation_id,
    nsys_proc_key(coalesce(s.globalPid, 0)) AS proc_key,
    nsys_os_pid(coalesce(s.globalPid, 0)) AS os_pid,
    s.value AS memset_value,
    CAST(s.bytes AS BIGINT) AS bytes,
    coalesce((SELECT map(list(e.code), list(e.label)) FROM stg_enum_labels AS e
        WHERE e.enum_table = 'ENUM_CUDA_MEM_KIND')[s.memKind],
        CAST(s.memKind AS VARCHAR)) AS mem_kind
FROM _stg_memset_rows AS s
CROSS JOIN stg_export_info AS x
WHERE s.skip_reason IS NULL;

COMMENT ON VIEW stg_memsets IS 'One row per memset (CUPTI_ACTIVITY_KIND_MEMSET) with UTC-epoch ns times.';
COMMENT ON COLUMN stg_memsets.start_ns IS 'Start, UTC-epoch ns.';
COMMENT ON COLUMN stg_memsets.end_ns IS 'End, UTC-epoch ns (>= start_ns).';
COMMENT ON COLUMN stg_memsets.device_id IS 'CUDA device id (deviceId, >= 0).';
COMMENT ON COLUMN stg_memsets.context_id IS 'CUDA context id (NULL read as 0).';
COMMENT ON COLUMN stg_memsets.stream_id IS 'CUDA stream id (NULL read as 0).';
COMMENT ON COLUMN stg_memsets.correlation_id IS 'CUPTI correlationId (links the memset to its API call within the process).';
COMMENT ON COLUMN stg_memsets.proc_key IS 'globalPid >> 24: the scope of correlation_id.';
COMMENT ON COLUMN stg_memsets.os_pid IS 'OS process id (0 when globalPid is NULL).';
COMMENT ON COLUMN stg_memsets.memset_value IS 'The byte value written.';
COMMENT ON COLUMN stg_memsets.bytes IS 'Bytes set.';
COMMENT ON COLUMN stg_memsets.mem_kind IS 'Memory kind set (memKind): its ENUM_CUDA_MEM_KIND label (Device, Managed, ...), else the code as text; NULL when not exported.';
