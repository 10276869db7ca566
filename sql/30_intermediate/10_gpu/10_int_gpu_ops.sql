-- int_gpu_ops: every kernel, memcpy, memset and CUDA graph execution in one
-- table, with a stable op_id, the columns every later stage needs, and the
-- raw values of its args object (the text is built at output:
-- 60_int_gpu_op_args.sql).
--
-- Reads: gpu_activity_kinds, stg_graph_executions, stg_kernels,
-- stg_memcpys, stg_memsets.
-- Grain: one row per GPU operation (op_id unique). Materialized because
-- op_id must be the same wherever it is read. No per-row JSON text is
-- stored: a string unique to each row (the args name the correlationId)
-- costs more to store than to build again while the JSON is written
-- (measured: `make bench`, issue 6 note).
-- Invariants: cat is the contract's slice category of the operation as
-- executed (gpu_activity_kinds.op_cat: kernel, memcpy, memset,
-- cuda_graph); projection is the track class its copy is drawn on at
-- device level, and projected_cat the JSON cat of that copy, both from
-- gpu_activity_kinds: the single projection row of the op_cat (kernels and
-- graph executions: core, a graph occupies the GPU like a kernel), or for a
-- memcpy the row of its copy_kinds.projection (pcie, d2d); NULL when there
-- is none (memsets, copy kinds projected 'none'). A memcpy row that stands for a batch
-- (copyCount > 1) says so in its name: it is never called one copy.
-- The launch details of kernels (launch_type, cache_config, local and
-- executed shared memory, grid_id) and the memory kinds of copies
-- (src_kind, dst_kind, peer device ids) and memsets (mem_kind) are the
-- staging views' columns, NULL on the other kinds of operation.
-- Column comments from: stg_graph_executions, stg_kernels, stg_memcpys.
-- Merge: renumbered

CREATE OR REPLACE TABLE int_gpu_ops AS
WITH ops AS (
    SELECT
        'kernel' AS cat, start_ns, end_ns, device_id, context_id, stream_id,
        correlation_id, proc_key, os_pid, short_name AS name,
        NULL::VARCHAR AS projection, FALSE AS is_unified_migration,
        NULL::BIGINT AS copy_kind, NULL::VARCHAR AS copy_kind_label,
        NULL::BIGINT AS bytes, NULL::BIGINT AS copy_count,
        demangled_name, grid_x, grid_y, grid_z, block_x, block_y, block_z,
        registers_per_thread, static_shared_memory, dynamic_shared_memory,
        graph_node_id, graph_id, NULL::BIGINT AS graph_exec_id,
        green_context_id, cluster_dims, NULL::BIGINT AS memset_value,
        launch_type, cache_config, local_memory_per_thread,
        local_memory_total, shared_memory_executed, grid_id
    FROM stg_kernels
    UNION ALL BY NAME
    SELECT
        'memcpy' AS cat, start_ns, end_ns, device_id, context_id, stream_id,
        correlation_id, proc_key, os_pid,
        '[CUDA memcpy ' || copy_kind_label || ']'
            || CASE WHEN copy_count > 1
                THEN ' (batch of ' || CAST(copy_count AS VARCHAR) || ' copies)'
                ELSE '' END AS name,
        copy_projection AS projection,
        is_unified_migration, copy_kind, copy_kind_label, bytes, copy_count,
        green_context_id, src_kind, dst_kind, src_device_id, dst_device_id
    FROM stg_memcpys
    UNION ALL BY NAME
    SELECT
        'memset' AS cat, start_ns, end_ns, device_id, context_id, stream_id,
        correlation_id, proc_key, os_pid, '[CUDA memset]' AS name,
        FALSE AS is_unified_migration, bytes, memset_value, mem_kind
    FROM stg_memsets
    UNION ALL BY NAME
    SELECT
        'cuda_graph' AS cat, start_ns, end_ns, device_id, context_id,
        stream_id, correlation_id, proc_key, os_pid, name,
        FALSE AS is_unified_migration,
        graph_id, graph_exec_id, green_context_id
    FROM stg_graph_executions
)
SELECT
    row_number() OVER () AS op_id,
    ops.* EXCLUDE (projected) REPLACE (projected.track_class AS projection),
    projected.slice_cat AS projected_cat
FROM (
    -- the gpu_activity_kinds row of the operation's device-level copy, if
    -- any (a map lookup, not a join: op_id numbers the rows in scan order)
    SELECT *,
        (SELECT map(list(op_cat || '/' || track_class), list(g))
            FROM gpu_activity_kinds AS g WHERE is_projection)[cat || '/' || coalesce(projection,
                -- kernels and graph executions: the one projection of
                -- their op_cat (memcpys: the copy_kinds projection)
                (SELECT map(list(op_cat), list(track_class)) FROM (
                    SELECT op_cat, any_value(track_class) AS track_class
                    FROM gpu_activity_kinds WHERE is_projection
                    GROUP BY op_cat HAVING count(*) = 1))[cat])]
            AS projected
    FROM ops
) AS ops;

COMMENT ON TABLE int_gpu_ops IS 'Every kernel, memcpy, memset and CUDA graph execution in one table, with a stable op_id, the columns every later stage needs, and the raw values of its args object (the text is built at output: 60_int_gpu_op_args.sql).';
COMMENT ON COLUMN int_gpu_ops.op_id IS 'GPU operation id (int_gpu_ops.op_id).';
COMMENT ON COLUMN int_gpu_ops.cat IS 'Operation as executed: kernel, memcpy, memset, cuda_graph (gpu_activity_kinds.op_cat).';
COMMENT ON COLUMN int_gpu_ops.device_id IS 'CUDA device id (>= 0).';
COMMENT ON COLUMN int_gpu_ops.name IS 'Slice name: the kernel''s short name, ''[CUDA memcpy KIND]'' (with the batch size when copyCount > 1), ''[CUDA memset]'', ''CUDA graph ID''.';
COMMENT ON COLUMN int_gpu_ops.projection IS 'track_class of the operation''s device-level copy: core, pcie, d2d; NULL when it has none.';
COMMENT ON COLUMN int_gpu_ops.is_unified_migration IS 'A unified-memory copy kind with no stream, context or correlationId: drawn on the Unified Memory track.';
COMMENT ON COLUMN int_gpu_ops.copy_kind_label IS 'Copy kind label (ENUM_CUDA_MEMCPY_OPER, else copy_kinds.label).';
COMMENT ON COLUMN int_gpu_ops.bytes IS 'Bytes copied or set.';
COMMENT ON COLUMN int_gpu_ops.copy_count IS 'copyCount (schema 3.17.2+): copies the row stands for (> 1: a batch); NULL when not exported.';
COMMENT ON COLUMN int_gpu_ops.demangled_name IS 'Demangled kernel name (CUPTI demangledName via StringIds, else the short name).';
COMMENT ON COLUMN int_gpu_ops.memset_value IS 'Byte value a memset writes.';
COMMENT ON COLUMN int_gpu_ops.projected_cat IS 'JSON cat of that copy (gpu_activity_kinds.slice_cat): kernel_core, cuda_graph_core, memcpy_pcie, memcpy_d2d.';
COMMENT ON COLUMN int_gpu_ops.launch_type IS 'Kernels: launchType''s ENUM_CUDA_KERNEL_LAUNCH_TYPE label (Regular, ...), else the code as text.';
COMMENT ON COLUMN int_gpu_ops.cache_config IS 'Kernels: cacheConfig''s ENUM_CUDA_FUNC_CACHE_CONFIG label, else the code as text.';
COMMENT ON COLUMN int_gpu_ops.local_memory_per_thread IS 'Kernels: local memory per thread, bytes (localMemoryPerThread).';
COMMENT ON COLUMN int_gpu_ops.local_memory_total IS 'Kernels: local memory reserved in total, bytes (localMemoryTotal).';
COMMENT ON COLUMN int_gpu_ops.shared_memory_executed IS 'Kernels: shared memory size set by the driver, bytes (sharedMemoryExecuted).';
COMMENT ON COLUMN int_gpu_ops.grid_id IS 'Kernels: unique grid id assigned at run time (gridId).';
COMMENT ON COLUMN int_gpu_ops.src_kind IS 'Memcpys: memory kind of the source (srcKind''s ENUM_CUDA_MEM_KIND label: Pageable, Pinned, Device, ...).';
COMMENT ON COLUMN int_gpu_ops.dst_kind IS 'Memcpys: memory kind of the destination (dstKind''s ENUM_CUDA_MEM_KIND label).';
COMMENT ON COLUMN int_gpu_ops.src_device_id IS 'Memcpys: source device of a peer copy (srcDeviceId), when exported.';
COMMENT ON COLUMN int_gpu_ops.dst_device_id IS 'Memcpys: destination device of a peer copy (dstDeviceId), when exported.';
COMMENT ON COLUMN int_gpu_ops.mem_kind IS 'Memsets: memory kind set (memKind''s ENUM_CUDA_MEM_KIND label).';
