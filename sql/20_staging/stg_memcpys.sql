-- stg_memcpys: one row per memory copy (CUPTI_ACTIVITY_KIND_MEMCPY), as
-- CUPTI timed it, with its kind labelled and its projection decided.
--
-- Reads: _stg_memcpy_rows, copy_kinds, nsys.ENUM_CUDA_MEMCPY_OPER,
-- stg_enum_labels, stg_export_info.
-- Invariants: as stg_kernels (UTC-epoch ns, undrawable rows
-- counted in stg_skipped_rows, NULL context/stream read as 0).
-- The kind comes from copy_kinds (the row with copy_kind NULL for a NULL or
-- unlisted code): copy_projection is the track class the copy is projected
-- on ('pcie', 'd2d', 'none'); the label is the export's
-- ENUM_CUDA_MEMCPY_OPER label when it has one, else copy_kinds.label.
-- copy_count is copyCount (schema 3.17.2+): a row may stand for a batch of
-- copies (cudaMemcpyBatchAsync); NULL when the export has no such column.
-- src_kind / dst_kind: the memory kinds of source and destination
-- (srcKind/dstKind), labelled by the export's ENUM_CUDA_MEM_KIND
-- (stg_enum_labels: Pageable, Pinned, Device, Array, Managed, ...), else the
-- code as text; a pageable host side is what makes an async copy
-- synchronous (nsys recipe cuda_memcpy_async). src_device_id /
-- dst_device_id: CUPTI's peer device ids, NULL unless the export has them.

CREATE OR REPLACE VIEW stg_memcpys AS
SELECT
    m.start + x.time_offset_ns AS start_ns,
    m."end" + x.time_offset_ns AS end_ns,
    m.deviceId AS device_id,
    coalesce(CAST(m.contextId AS BIGINT), 0) AS context_id,
    coalesce(CAST(m.streamId AS BIGINT), 0) AS stream_id,
    m.correlationId AS correlation_id,
    nsys_proc_key(coalesce(m.globalPid, 0)) AS proc_key,
    nsys_os_pid(coalesce(m.globalPid, 0)) AS os_pid,
    CAST(m.copyKind AS BIGINT) AS copy_kind,
    coalesce(kind_enum.label, m.kind.label) AS copy_kind_label,
    m.kind.projection AS copy_projection,
    -- Unified-memory migrations carry no stream, context or API call.
    (m.kind.is_unified AND coalesce(m.streamId, 0) = 0 AND coalesce(m.contextId, 0) = 0
        AND coalesce(m.correlationId, 0) = 0) AS is_unified_migration,
    CAST(m.bytes AS BIGINT) AS bytes,
    m.copyCount AS copy_count,
    nullif(CAST(m.greenContextId AS BIGINT), 0) AS green_context_id,
    coalesce(mem_kinds.labels[m.srcKind], CAST(m.srcKind AS VARCHAR))
        AS src_kind,
    coalesce(mem_kinds.labels[m.dstKind], CAST(m.dstKind AS VARCHAR))
        AS dst_kind,
    CAST(m.srcDeviceId AS BIGINT) AS src_device_id,
    CAST(m.dstDeviceId AS BIGINT) AS dst_device_id
FROM (
    -- the copy_kinds row of the code (a map lookup, not a join: the rows
    -- keep the table's order, which numbers int_gpu_ops.op_id)
    SELECT *,
        coalesce(
            (SELECT map(list(copy_kind), list(k)) FROM copy_kinds AS k
                WHERE copy_kind IS NOT NULL)[CAST(copyKind AS BIGINT)],
            (SELECT any_value(k) FROM copy_kinds AS k
                WHERE copy_kind IS NULL)) AS kind
    FROM _stg_memcpy_rows
) AS m
CROSS JOIN stg_export_info AS x
-- code -> label of ENUM_CUDA_MEM_KIND, one map (one row)
CROSS JOIN (
    SELECT map(list(e.code), list(e.label)) AS labels FROM stg_enum_labels AS e
    WHERE e.enum_table = 'ENUM_CUDA_MEM_KIND'
) AS mem_kinds
LEFT JOIN nsys.ENUM_CUDA_MEMCPY_OPER AS kind_enum
    ON kind_enum.id = CAST(m.copyKind AS BIGINT)
WHERE m.skip_reason IS NULL;

COMMENT ON VIEW stg_memcpys IS 'One row per memory copy (CUPTI_ACTIVITY_KIND_MEMCPY) with UTC-epoch ns times, its kind labelled and its projection (copy_kinds).';
COMMENT ON COLUMN stg_memcpys.start_ns IS 'Start, UTC-epoch ns.';
COMMENT ON COLUMN stg_memcpys.end_ns IS 'End, UTC-epoch ns (>= start_ns).';
COMMENT ON COLUMN stg_memcpys.device_id IS 'CUDA device id (deviceId, >= 0).';
COMMENT ON COLUMN stg_memcpys.context_id IS 'CUDA context id (NULL read as 0).';
COMMENT ON COLUMN stg_memcpys.stream_id IS 'CUDA stream id (NULL read as 0).';
COMMENT ON COLUMN stg_memcpys.correlation_id IS 'CUPTI correlationId (links the copy to its API call within the process).';
COMMENT ON COLUMN stg_memcpys.proc_key IS 'globalPid >> 24: the scope of correlation_id.';
COMMENT ON COLUMN stg_memcpys.os_pid IS 'OS process id (0 when globalPid is NULL).';
COMMENT ON COLUMN stg_memcpys.copy_kind IS 'CUPTI copyKind code (copy_kinds.copy_kind).';
COMMENT ON COLUMN stg_memcpys.copy_kind_label IS 'Kind label: ENUM_CUDA_MEMCPY_OPER.label, else copy_kinds.label (Unknown for NULL or unlisted codes).';
COMMENT ON COLUMN stg_memcpys.copy_projection IS 'copy_kinds.projection: track class of the copy''s device-level slice (pcie, d2d) or none.';
COMMENT ON COLUMN stg_memcpys.is_unified_migration IS 'A unified-memory kind with no stream, context or correlationId: drawn on the Unified Memory track.';
COMMENT ON COLUMN stg_memcpys.bytes IS 'Bytes copied.';
COMMENT ON COLUMN stg_memcpys.copy_count IS 'copyCount (schema 3.17.2+): copies this row stands for (> 1: a batch); NULL when not exported.';
COMMENT ON COLUMN stg_memcpys.green_context_id IS 'Green context id (NULL: none).';
COMMENT ON COLUMN stg_memcpys.src_kind IS 'Memory kind of the source (srcKind): its ENUM_CUDA_MEM_KIND label (Pageable, Pinned, Device, ...), else the code as text; NULL when not exported.';
COMMENT ON COLUMN stg_memcpys.dst_kind IS 'Memory kind of the destination (dstKind), labelled as src_kind.';
COMMENT ON COLUMN stg_memcpys.src_device_id IS 'Source device of a peer copy (srcDeviceId); NULL when not exported.';
COMMENT ON COLUMN stg_memcpys.dst_device_id IS 'Destination device of a peer copy (dstDeviceId); NULL when not exported.';
