-- stg_kernels, stg_memcpys, stg_memsets: one row per GPU operation, as
-- CUPTI timed it, with names and labels resolved.
--
-- Reads: nsys.CUPTI_ACTIVITY_KIND_{KERNEL,MEMCPY,MEMSET}, nsys.StringIds,
-- nsys.ENUM_CUDA_MEMCPY_OPER, stg_export_info (time_offset_ns).
-- Grain: one row per operation. Not unique on correlation_id: the kernels
-- of one CUDA-graph launch share their launch's id.
-- Invariants: times are integer UTC-epoch ns (Nsight's value plus
-- stg_export_info.time_offset_ns, so normalized and session-relative
-- exports agree); rows with NULL times, end < start, or a NULL or negative
-- deviceId are NOT here: they are counted in stg_skipped_rows. A NULL
-- globalPid reads as 0 (os_pid 0: the op is drawn, but never linked). proc_key = globalPid >> 24 is the scope
-- of correlation_id (nsys-tables.md 4.1). Empty, not missing, when the
-- report has no such operations. Never NULL where a track or slice name is
-- built from it: a NULL context or stream id reads as 0, a kernel with
-- neither name nor name id is '[unnamed kernel]'. Ids that newer exports
-- write as 0 where older ones wrote NULL (graphNodeId, greenContextId,
-- graphId) read as NULL: 0 means "none" in both. copy_count is MEMCPY's
-- copyCount (schema 3.17.2+): a row may stand for a batch of copies
-- (cudaMemcpyBatchAsync); NULL when the export has no such column or value.

CREATE OR REPLACE VIEW stg_kernels AS
SELECT
    k.start + x.time_offset_ns AS start_ns,
    k."end" + x.time_offset_ns AS end_ns,
    k.deviceId AS device_id,
    coalesce(CAST(k.contextId AS BIGINT), 0) AS context_id,
    coalesce(CAST(k.streamId AS BIGINT), 0) AS stream_id,
    k.correlationId AS correlation_id,
    nsys_proc_key(coalesce(k.globalPid, 0)) AS proc_key,
    nsys_os_pid(coalesce(k.globalPid, 0)) AS os_pid,
    clean_text(coalesce(short_str.value, demangled_str.value,
        'kernel#' || CAST(coalesce(k.shortName, k.demangledName) AS VARCHAR),
        '[unnamed kernel]')) AS short_name,
    clean_text(coalesce(demangled_str.value, short_str.value,
        'kernel#' || CAST(coalesce(k.demangledName, k.shortName) AS VARCHAR),
        '[unnamed kernel]')) AS demangled_name,
    k.gridX AS grid_x, k.gridY AS grid_y, k.gridZ AS grid_z,
    k.blockX AS block_x, k.blockY AS block_y, k.blockZ AS block_z,
    k.registersPerThread AS registers_per_thread,
    k.staticSharedMemory AS static_shared_memory,
    k.dynamicSharedMemory AS dynamic_shared_memory,
    nullif(CAST(k.graphNodeId AS BIGINT), 0) AS graph_node_id,
    nullif(CAST(k.graphId AS BIGINT), 0) AS graph_id,
    nullif(CAST(k.greenContextId AS BIGINT), 0) AS green_context_id,
    -- cluster dimensions of a thread-block-cluster launch (0: not one)
    CASE WHEN k.clusterX > 0 THEN
        [k.clusterX, coalesce(k.clusterY, 1), coalesce(k.clusterZ, 1)]
    END AS cluster_dims
FROM nsys.CUPTI_ACTIVITY_KIND_KERNEL AS k
CROSS JOIN stg_export_info AS x
LEFT JOIN nsys.StringIds AS short_str ON short_str.id = k.shortName
LEFT JOIN nsys.StringIds AS demangled_str ON demangled_str.id = k.demangledName
WHERE nsys_drawable_gpu_row(k.start, k."end", k.deviceId);

-- Copy kinds -> where the copy is projected (output-contract.md, Tracks):
-- 'pcie' host<->device, 'd2d' device-side, 'none' (HtoH, unknown).
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
    coalesce(kind_enum.label, CASE CAST(m.copyKind AS BIGINT)
        WHEN 1 THEN 'Host-to-Device' WHEN 2 THEN 'Device-to-Host'
        WHEN 3 THEN 'Host-to-Array' WHEN 4 THEN 'Array-to-Host'
        WHEN 5 THEN 'Array-to-Array' WHEN 6 THEN 'Array-to-Device'
        WHEN 7 THEN 'Device-to-Array' WHEN 8 THEN 'Device-to-Device'
        WHEN 9 THEN 'Host-to-Host' WHEN 10 THEN 'Peer-to-Peer'
        WHEN 11 THEN 'Unified Host-to-Device'
        WHEN 12 THEN 'Unified Device-to-Host'
        WHEN 13 THEN 'Unified Device-to-Device'
        ELSE 'Unknown' END) AS copy_kind_label,
    CASE
        WHEN CAST(m.copyKind AS BIGINT) IN (1, 2, 3, 4, 11, 12) THEN 'pcie'
        WHEN CAST(m.copyKind AS BIGINT) IN (5, 6, 7, 8, 10, 13) THEN 'd2d'
        ELSE 'none'
    END AS copy_projection,
    -- Unified-memory migrations carry no stream, context or API call.
    (CAST(m.copyKind AS BIGINT) IN (11, 12, 13)
        AND coalesce(m.streamId, 0) = 0 AND coalesce(m.contextId, 0) = 0
        AND coalesce(m.correlationId, 0) = 0) AS is_unified_migration,
    CAST(m.bytes AS BIGINT) AS bytes,
    m.copyCount AS copy_count,
    nullif(CAST(m.greenContextId AS BIGINT), 0) AS green_context_id
FROM nsys.CUPTI_ACTIVITY_KIND_MEMCPY AS m
CROSS JOIN stg_export_info AS x
LEFT JOIN nsys.ENUM_CUDA_MEMCPY_OPER AS kind_enum
    ON kind_enum.id = CAST(m.copyKind AS BIGINT)
WHERE nsys_drawable_gpu_row(m.start, m."end", m.deviceId);

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
    CAST(s.bytes AS BIGINT) AS bytes
FROM nsys.CUPTI_ACTIVITY_KIND_MEMSET AS s
CROSS JOIN stg_export_info AS x
WHERE nsys_drawable_gpu_row(s.start, s."end", s.deviceId);
