-- trace_summary: the counts printed after a conversion, one row per
-- (metric, value), in print order.
--
-- Reads: int_gpu_ops, int_runtime_calls, int_runtime_links, int_flows,
-- int_slices, int_homes, stg_nvtx_push_pop_ranges, stg_nvtx_events,
-- int_nvtx_gpu_projection, int_nvtx_op_paths, stg_skipped_rows.
-- NVTX: "CPU NVTX ranges" counts push/pop ranges (59/70) only; start/end
-- ranges and marks have their own lines. "projected NVTX ranges" counts
-- ranges with owned GPU work (any device); "NVTX Kernel slices" counts the
-- slices drawn (one per range and device).
-- Invariants: counts come from the same views the writers read, so they
-- match the files (the JSON event count is added by the writer).

CREATE OR REPLACE VIEW trace_summary AS
WITH flows AS (
    SELECT flow_cat, is_placeable FROM int_flows
)
SELECT * FROM (VALUES
    (1, 'devices', (SELECT count(*) FROM int_homes WHERE home_kind = 'device')),
    (2, 'kernels', (SELECT count(*) FROM int_gpu_ops WHERE cat = 'kernel')),
    (3, 'linked CUDA API launches', (SELECT count(*) FROM int_runtime_calls
        WHERE cat = 'cuda_api' AND call_id IN (SELECT call_id
            FROM int_runtime_links WHERE op_cat = 'kernel'))),
    (4, 'stream launch flows', (SELECT count(*) FROM flows
        WHERE flow_cat = 'launch' AND is_placeable)),
    (5, 'Core launch flows', (SELECT count(*) FROM flows
        WHERE flow_cat = 'launch_core' AND is_placeable)),
    (6, 'CUDA synchronization calls', (SELECT count(*) FROM int_runtime_calls
        WHERE cat = 'cuda_sync')),
    (7, 'memcpy H2D', (SELECT count(*) FROM int_gpu_ops
        WHERE cat = 'memcpy' AND copy_kind IN (1, 3, 11))),
    (8, 'memcpy D2H', (SELECT count(*) FROM int_gpu_ops
        WHERE cat = 'memcpy' AND copy_kind IN (2, 4, 12))),
    (9, 'memcpy D2D/peer', (SELECT count(*) FROM int_gpu_ops
        WHERE cat = 'memcpy' AND copy_kind IN (5, 6, 7, 8, 10, 13))),
    (10, 'memcpy other', (SELECT count(*) FROM int_gpu_ops
        WHERE cat = 'memcpy' AND copy_kind NOT IN
            (1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13))),
    (11, 'memset', (SELECT count(*) FROM int_gpu_ops WHERE cat = 'memset')),
    (12, 'stream copy flows', (SELECT count(*) FROM flows
        WHERE flow_cat = 'copy' AND is_placeable)),
    (13, 'PCIe copy flows', (SELECT count(*) FROM flows
        WHERE flow_cat = 'copy_pcie' AND is_placeable)),
    (14, 'CPU NVTX ranges', (SELECT count(*) FROM stg_nvtx_push_pop_ranges)),
    (15, 'NVTX start/end ranges', (SELECT count(*) FROM stg_nvtx_events
        WHERE event_type IN (60, 71) AND end_ns >= start_ns)),
    (16, 'NVTX marks', (SELECT count(*) FROM stg_nvtx_events
        WHERE event_type = 34)),
    (17, 'projected NVTX ranges', (SELECT count(DISTINCT nvtx_id)
        FROM int_nvtx_gpu_projection)),
    (18, 'NVTX Kernel slices', (SELECT count(*)
        FROM int_nvtx_gpu_projection)),
    (19, 'GPU ops owned by an NVTX range', (SELECT count(*)
        FROM int_nvtx_op_paths)),
    (20, 'flows not drawn (GPU work ended before its call began)',
        (SELECT count(*) FROM flows WHERE NOT is_placeable)),
    (21, 'slices', (SELECT count(*) FROM int_slices))
) AS t(ord, metric, value)
UNION ALL
SELECT 100 + row_number() OVER (ORDER BY source_table, reason),
    'rows skipped: ' || source_table || ' (' || reason || ')', skipped
FROM stg_skipped_rows
WHERE skipped > 0
ORDER BY 1;
