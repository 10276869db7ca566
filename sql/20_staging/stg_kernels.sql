-- stg_kernels: one row per kernel (CUPTI_ACTIVITY_KIND_KERNEL), as CUPTI
-- timed it, with its names resolved.
--
-- Reads: _stg_kernel_rows, nsys.StringIds, stg_enum_labels,
-- stg_export_info.
-- Grain: one row per kernel execution. Not unique on correlation_id: the
-- kernels of one CUDA-graph launch share their launch's id.
-- Invariants: times are integer UTC-epoch ns (Nsight's value plus
-- stg_export_info.time_offset_ns, so normalized and session-relative
-- exports agree); rows with NULL times, end < start, or a NULL or negative
-- deviceId are NOT here: they are counted in stg_skipped_rows. A NULL
-- globalPid reads as 0 (os_pid 0: the op is drawn, but never linked).
-- proc_key = globalPid >> 24 is the scope of correlation_id
-- (nsys-tables.md 4.1). Empty, not missing, when the report has no kernels.
-- Never NULL where a track or slice name is built from it: a NULL context
-- or stream id reads as 0, a kernel with neither name nor name id is
-- '[unnamed kernel]'. Ids that newer exports write as 0 where older ones
-- wrote NULL (graphNodeId, greenContextId, graphId) read as NULL: 0 means
-- "none" in both.
-- Launch details as Nsight exports them (nsys-tables.md 1.2): launch_type
-- and cache_config are the labels of the export's ENUM tables
-- (stg_enum_labels: ENUM_CUDA_KERNEL_LAUNCH_TYPE, ENUM_CUDA_FUNC_CACHE_CONFIG;
-- the user guide says cacheConfig references the latter), else the code as
-- text; NULL when the export has no such value. Nsight exports one
-- cacheConfig number, not CUPTI's requested/executed pair, so there is one
-- cache_config. Looked up in maps, not joined: the rows keep the table's
-- order, which numbers int_gpu_ops.op_id.

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
    END AS cluster_dims,
    coalesce((SELECT map(list(e.code), list(e.label)) FROM stg_enum_labels AS e
        WHERE e.enum_table = 'ENUM_CUDA_KERNEL_LAUNCH_TYPE')[k.launchType],
        CAST(k.launchType AS VARCHAR)) AS launch_type,
    coalesce((SELECT map(list(e.code), list(e.label)) FROM stg_enum_labels AS e
        WHERE e.enum_table = 'ENUM_CUDA_FUNC_CACHE_CONFIG')[k.cacheConfig],
        CAST(k.cacheConfig AS VARCHAR)) AS cache_config,
    CAST(k.localMemoryPerThread AS BIGINT) AS local_memory_per_thread,
    CAST(k.localMemoryTotal AS BIGINT) AS local_memory_total,
    CAST(k.sharedMemoryExecuted AS BIGINT) AS shared_memory_executed,
    CAST(k.gridId AS BIGINT) AS grid_id
FROM _stg_kernel_rows AS k
CROSS JOIN stg_export_info AS x
LEFT JOIN nsys.StringIds AS short_str ON short_str.id = k.shortName
LEFT JOIN nsys.StringIds AS demangled_str ON demangled_str.id = k.demangledName
WHERE k.skip_reason IS NULL;

COMMENT ON VIEW stg_kernels IS 'One row per kernel execution (CUPTI_ACTIVITY_KIND_KERNEL) with UTC-epoch ns times and names resolved through StringIds; undrawable rows are counted in stg_skipped_rows instead.';
COMMENT ON COLUMN stg_kernels.start_ns IS 'Start, UTC-epoch ns.';
COMMENT ON COLUMN stg_kernels.end_ns IS 'End, UTC-epoch ns (>= start_ns).';
COMMENT ON COLUMN stg_kernels.device_id IS 'CUDA device id (deviceId, >= 0).';
COMMENT ON COLUMN stg_kernels.context_id IS 'CUDA context id (NULL read as 0).';
COMMENT ON COLUMN stg_kernels.stream_id IS 'CUDA stream id (NULL read as 0).';
COMMENT ON COLUMN stg_kernels.correlation_id IS 'CUPTI correlationId, unique per process among API calls (links the kernel to its launch call).';
COMMENT ON COLUMN stg_kernels.proc_key IS 'globalPid >> 24 (PID, VM and hardware id): the scope of correlation_id.';
COMMENT ON COLUMN stg_kernels.os_pid IS 'OS process id (bits 24..47 of globalPid; 0 when globalPid is NULL).';
COMMENT ON COLUMN stg_kernels.short_name IS 'Short kernel name (shortName via StringIds, else the demangled name, else kernel#ID): the name drawn.';
COMMENT ON COLUMN stg_kernels.demangled_name IS 'Demangled kernel name (demangledName via StringIds, else the short name).';
COMMENT ON COLUMN stg_kernels.grid_x IS 'Grid size, x.';
COMMENT ON COLUMN stg_kernels.grid_y IS 'Grid size, y.';
COMMENT ON COLUMN stg_kernels.grid_z IS 'Grid size, z.';
COMMENT ON COLUMN stg_kernels.block_x IS 'Block size, x.';
COMMENT ON COLUMN stg_kernels.block_y IS 'Block size, y.';
COMMENT ON COLUMN stg_kernels.block_z IS 'Block size, z.';
COMMENT ON COLUMN stg_kernels.registers_per_thread IS 'Registers per thread.';
COMMENT ON COLUMN stg_kernels.static_shared_memory IS 'Static shared memory per block, bytes.';
COMMENT ON COLUMN stg_kernels.dynamic_shared_memory IS 'Dynamic shared memory per block, bytes.';
COMMENT ON COLUMN stg_kernels.graph_node_id IS 'CUDA graph node id (NULL: not launched from a graph).';
COMMENT ON COLUMN stg_kernels.graph_id IS 'CUDA graph id (schema 3.23.3+; NULL: none or not exported).';
COMMENT ON COLUMN stg_kernels.green_context_id IS 'Green context id (NULL: none).';
COMMENT ON COLUMN stg_kernels.cluster_dims IS 'Thread-block-cluster dimensions [x, y, z] of a cluster launch; NULL otherwise.';
COMMENT ON COLUMN stg_kernels.launch_type IS 'launchType''s label (ENUM_CUDA_KERNEL_LAUNCH_TYPE via stg_enum_labels: Regular, Coop Single Device, ...), else the code as text; NULL when not exported.';
COMMENT ON COLUMN stg_kernels.cache_config IS 'cacheConfig''s label (ENUM_CUDA_FUNC_CACHE_CONFIG via stg_enum_labels: None, Shared, L1, Equal), else the code as text; NULL when not exported.';
COMMENT ON COLUMN stg_kernels.local_memory_per_thread IS 'Local memory reserved per thread, bytes (localMemoryPerThread).';
COMMENT ON COLUMN stg_kernels.local_memory_total IS 'Local memory reserved for the kernel in total, bytes (localMemoryTotal).';
COMMENT ON COLUMN stg_kernels.shared_memory_executed IS 'Shared memory size the driver set for the launch, bytes (sharedMemoryExecuted).';
COMMENT ON COLUMN stg_kernels.grid_id IS 'Unique grid id of the launch, assigned at run time (gridId).';
