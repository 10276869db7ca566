-- int_gpu_ops: every kernel, memcpy, memset and CUDA graph execution in one
-- table, with a stable op_id, the columns every later stage needs, and the
-- raw values of its args object (the text is built at output:
-- 55_int_gpu_op_args.sql).
--
-- Reads: stg_kernels, stg_memcpys, stg_memsets, stg_graph_executions.
-- Grain: one row per GPU operation (op_id unique). Materialized because
-- op_id must be the same wherever it is read. No per-row JSON text is
-- stored: a string unique to each row (the args name the correlationId)
-- costs more to store than to build again while the JSON is written
-- (measured: `make bench`, issue 6 note).
-- Invariants: cat is the contract's slice category of the operation as
-- executed ('kernel', 'memcpy', 'memset', 'cuda_graph'); projection is where
-- its copy is drawn on the device: 'core' (kernels and graph executions: a
-- graph occupies the GPU like a kernel), 'pcie' (H2D/D2H kinds), 'd2d'
-- (device-side and peer kinds) or NULL (memset, HtoH, unknown kinds), and
-- projected_cat the category of that copy ('kernel_core', 'cuda_graph_core',
-- 'memcpy_pcie', 'memcpy_d2d'). A memcpy row that stands for a batch
-- (copyCount > 1) says so in its name: it is never called one copy.

CREATE OR REPLACE TABLE int_gpu_ops AS
WITH ops AS (
    SELECT
        'kernel' AS cat, start_ns, end_ns, device_id, context_id, stream_id,
        correlation_id, proc_key, os_pid, short_name AS name,
        'core' AS projection, FALSE AS is_unified_migration,
        NULL::BIGINT AS copy_kind, NULL::VARCHAR AS copy_kind_label,
        NULL::BIGINT AS bytes, NULL::BIGINT AS copy_count,
        demangled_name, grid_x, grid_y, grid_z, block_x, block_y, block_z,
        registers_per_thread, static_shared_memory, dynamic_shared_memory,
        graph_node_id, graph_id, NULL::BIGINT AS graph_exec_id,
        green_context_id, cluster_dims, NULL::BIGINT AS memset_value
    FROM stg_kernels
    UNION ALL BY NAME
    SELECT
        'memcpy' AS cat, start_ns, end_ns, device_id, context_id, stream_id,
        correlation_id, proc_key, os_pid,
        '[CUDA memcpy ' || copy_kind_label || ']'
            || CASE WHEN copy_count > 1
                THEN ' (batch of ' || CAST(copy_count AS VARCHAR) || ' copies)'
                ELSE '' END AS name,
        CASE copy_projection WHEN 'none' THEN NULL ELSE copy_projection END
            AS projection,
        is_unified_migration, copy_kind, copy_kind_label, bytes, copy_count,
        green_context_id
    FROM stg_memcpys
    UNION ALL BY NAME
    SELECT
        'memset' AS cat, start_ns, end_ns, device_id, context_id, stream_id,
        correlation_id, proc_key, os_pid, '[CUDA memset]' AS name,
        FALSE AS is_unified_migration, bytes, memset_value
    FROM stg_memsets
    UNION ALL BY NAME
    SELECT
        'cuda_graph' AS cat, start_ns, end_ns, device_id, context_id,
        stream_id, correlation_id, proc_key, os_pid, name,
        'core' AS projection, FALSE AS is_unified_migration,
        graph_id, graph_exec_id, green_context_id
    FROM stg_graph_executions
)
SELECT
    row_number() OVER () AS op_id,
    *,
    CASE projection
        WHEN 'core' THEN cat || '_core'
        WHEN 'pcie' THEN 'memcpy_pcie'
        WHEN 'd2d' THEN 'memcpy_d2d'
    END AS projected_cat
FROM ops;
