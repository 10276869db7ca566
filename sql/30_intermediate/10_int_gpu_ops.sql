-- int_gpu_ops: every kernel, memcpy and memset in one table, with a
-- stable op_id, the columns every later stage needs, and the raw values of
-- its args object (the text is built at output: 55_int_gpu_op_args.sql).
--
-- Reads: stg_kernels, stg_memcpys, stg_memsets.
-- Grain: one row per GPU operation (op_id unique). Materialized because
-- op_id must be the same wherever it is read. No per-row JSON text is
-- stored: a string unique to each row (the args name the correlationId)
-- costs more to store than to build again while the JSON is written
-- (measured: `make bench`, issue 6 note).
-- Invariants: cat is the contract's slice category of the operation as
-- executed ('kernel', 'memcpy', 'memset'); projection is where its copy is
-- drawn on the device: 'core' (kernels), 'pcie' (H2D/D2H kinds), 'd2d'
-- (device-side and peer kinds) or NULL (memset, HtoH, unknown kinds).

CREATE OR REPLACE TABLE int_gpu_ops AS
WITH ops AS (
    SELECT
        'kernel' AS cat, start_ns, end_ns, device_id, context_id, stream_id,
        correlation_id, proc_key, os_pid, short_name AS name,
        'core' AS projection, FALSE AS is_unified_migration,
        NULL::BIGINT AS copy_kind, NULL::VARCHAR AS copy_kind_label,
        NULL::BIGINT AS bytes,
        demangled_name, grid_x, grid_y, grid_z, block_x, block_y, block_z,
        registers_per_thread, static_shared_memory, dynamic_shared_memory,
        graph_node_id, NULL::BIGINT AS memset_value
    FROM stg_kernels
    UNION ALL
    SELECT
        'memcpy', start_ns, end_ns, device_id, context_id, stream_id,
        correlation_id, proc_key, os_pid,
        '[CUDA memcpy ' || copy_kind_label || ']',
        CASE copy_projection WHEN 'none' THEN NULL ELSE copy_projection END,
        is_unified_migration, copy_kind, copy_kind_label, bytes,
        NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        NULL
    FROM stg_memcpys
    UNION ALL
    SELECT
        'memset', start_ns, end_ns, device_id, context_id, stream_id,
        correlation_id, proc_key, os_pid, '[CUDA memset]',
        NULL, FALSE, NULL, NULL, bytes,
        NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        memset_value
    FROM stg_memsets
)
SELECT row_number() OVER () AS op_id, *
FROM ops;
