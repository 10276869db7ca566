-- trace_summary: the counts printed after a conversion, one row per
-- (metric, value), in print order.
--
-- Reads: copy_kinds, cpu_trace_sources, flow_summary_metrics, int_flows, int_gpu_ops,
-- int_homes, int_nvtx_gpu_projection, int_nvtx_op_paths,
-- int_runtime_calls, int_runtime_links, int_slices, int_tracks,
-- stg_cuda_events, stg_export_tables, stg_gpu_syncs, stg_name_fallbacks, stg_nvtx_events,
-- stg_skipped_rows, stg_cpu_calls, stg_sched_events,
-- stg_untimed_cuda_events, int_thread_states.
-- CPU side: one line per cpu_trace_sources row (OS runtime, cuDNN, cuBLAS
-- calls drawn; scheduling events read) and 'thread state slices', each
-- printed only when not zero.
-- CUDA API: "CUDA API calls" counts the calls drawn (their primary
-- slices: every class 0/1 call once); it shares ord 4 with "linked CUDA API
-- launches" and prints before it (ties print in metric order, here and in
-- a merge's summary). "linked CUDA API launches" and "CUDA synchronization
-- calls" count the calls that launched kernels or graphs, and the cuda_sync
-- calls.
-- NVTX: "CPU NVTX ranges" counts push/pop ranges only; start/end
-- ranges and marks have their own lines. "projected NVTX ranges" counts
-- ranges with owned GPU work (any device); "NVTX Kernel slices" counts the
-- slices drawn (one per range and device).
-- Memcpy lines count rows of CUPTI_ACTIVITY_KIND_MEMCPY, one line per
-- copy_kinds.summary_bucket at its summary_ord (a NULL or unlisted
-- copyKind counts in the bucket of copy_kinds' NULL row, 'memcpy other');
-- every bucket is printed, also at 0. A row standing for
-- a batch (copyCount > 1) is counted once there and, with its copies, on
-- its own line.
-- Lines numbered from 100 are only printed when their count is not zero:
-- rows skipped, names that fell back (with no StringIds table at all,
-- synchronization calls are found only by their GPU-side rows), tables with
-- rows that are not drawn.
-- Invariants: counts come from the same views the writers read, so they
-- match the files (the JSON event count is added by the writer).
-- Columns: ord BIGINT, metric VARCHAR, value BIGINT
-- Role: summary (the run's counts, printed first)
-- Python reads: ORDER BY ord, metric
-- Merge: copied, not run (merge/60_outputs/trace_summary.sql sums them)

CREATE OR REPLACE VIEW trace_summary AS
WITH flows AS (
    SELECT flow_cat, is_placeable FROM int_flows
),
memcpys AS (
    SELECT copy_kind, copy_count FROM int_gpu_ops WHERE cat = 'memcpy'
),
cpu_rows AS (
    SELECT source FROM stg_cpu_calls
    UNION ALL
    SELECT src.source
    FROM stg_sched_events
    CROSS JOIN cpu_trace_sources AS src
    WHERE src.table_name = 'SCHED_EVENTS'
),
memcpy_buckets AS (
    SELECT m.copy_kind,
        coalesce(k.summary_bucket, (SELECT summary_bucket FROM copy_kinds
            WHERE copy_kind IS NULL)) AS summary_bucket
    FROM memcpys AS m
    LEFT JOIN copy_kinds AS k ON k.copy_kind = m.copy_kind
)
SELECT ord, metric, CAST(value AS BIGINT) AS value FROM (VALUES
    (1, 'devices', (SELECT count(*) FROM int_homes WHERE home_kind = 'device')),
    (2, 'kernels', (SELECT count(*) FROM int_gpu_ops WHERE cat = 'kernel')),
    (3, 'CUDA graph executions', (SELECT count(*) FROM int_gpu_ops
        WHERE cat = 'cuda_graph')),
    (4, 'CUDA API calls', (SELECT count(*) FROM int_slices
        WHERE call_id IS NOT NULL AND is_primary)),
    (4, 'linked CUDA API launches', (SELECT count(*) FROM int_runtime_calls
        WHERE cat = 'cuda_api' AND call_id IN (SELECT call_id
            FROM int_runtime_links WHERE op_cat IN ('kernel', 'cuda_graph')))),
    (7, 'CUDA synchronization calls', (SELECT count(*) FROM int_runtime_calls
        WHERE cat = 'cuda_sync')),
    (8, 'GPU-side synchronization rows', (SELECT count(*) FROM stg_gpu_syncs)),
    (14, 'memset', (SELECT count(*) FROM int_gpu_ops WHERE cat = 'memset')),
    (17, 'CUDA event records', (SELECT count(*) FROM stg_cuda_events)),
    (18, 'CPU NVTX ranges', (SELECT count(*) FROM stg_nvtx_events
        WHERE range_kind = 'push_pop' AND end_ns >= start_ns)),
    (19, 'NVTX start/end ranges', (SELECT count(*) FROM stg_nvtx_events
        WHERE range_kind = 'start_end' AND end_ns >= start_ns)),
    (20, 'NVTX marks', (SELECT count(*) FROM stg_nvtx_events
        WHERE nvtx_role = 'mark')),
    (21, 'projected NVTX ranges', (SELECT count(DISTINCT nvtx_id)
        FROM int_nvtx_gpu_projection)),
    (22, 'NVTX Kernel slices', (SELECT count(*)
        FROM int_nvtx_gpu_projection)),
    (23, 'GPU ops owned by an NVTX range', (SELECT count(*)
        FROM int_nvtx_op_paths)),
    (24, 'slices', (SELECT count(*) FROM int_slices))
) AS t (ord, metric, value)
UNION ALL
-- flow lines: one per flow_summary_metrics row, in its place
SELECT m.summary_ord, m.metric, CAST(count(f.flow_cat) AS BIGINT)
FROM flow_summary_metrics AS m
LEFT JOIN flows AS f ON f.flow_cat = m.flow_cat AND f.is_placeable
GROUP BY m.summary_ord, m.metric
UNION ALL
-- memcpy lines: every bucket of copy_kinds, in its place
SELECT b.summary_ord, b.summary_bucket, CAST(count(m.summary_bucket) AS BIGINT)
FROM (SELECT DISTINCT summary_ord, summary_bucket FROM copy_kinds) AS b
LEFT JOIN memcpy_buckets AS m ON m.summary_bucket = b.summary_bucket
GROUP BY b.summary_ord, b.summary_bucket
UNION ALL
-- CPU-side lines: one per cpu_trace_sources row (rows drawn), and the
-- Thread State slices they give; printed when not zero
SELECT ord, metric, value FROM (
    SELECT src.summary_ord AS ord, src.metric,
        CAST(count(cpu.source) AS BIGINT) AS value
    FROM cpu_trace_sources AS src
    LEFT JOIN cpu_rows AS cpu ON cpu.source = src.source
    GROUP BY src.summary_ord, src.metric
    UNION ALL
    SELECT 29, 'thread state slices', count(*) FROM int_thread_states
)
WHERE value <> 0
UNION ALL
SELECT ord, metric, CAST(value AS BIGINT) FROM (VALUES
    (100, 'memcpy rows standing for a batch (copyCount > 1)',
        (SELECT count(*) FROM memcpys WHERE copy_count > 1)),
    (101, 'copies in those batched memcpy rows',
        (SELECT coalesce(sum(copy_count), 0) FROM memcpys
            WHERE copy_count > 1)),
    (102, 'unclosed NVTX ranges (ended at their enclosing range or capture end)',
        (SELECT count(*) FROM stg_nvtx_events WHERE is_unclosed)),
    (103, 'tracks continued past Perfetto''s depth limit (512 levels)',
        (SELECT count(*) FROM int_tracks WHERE level > 0)),
    (104, 'flows not drawn (GPU work starts before its call: Perfetto would draw them GPU -> CPU)',
        (SELECT count(*) FROM flows WHERE NOT is_placeable)),
    (105, 'GPU-side synchronization rows without their API call',
        (SELECT count(*) FROM stg_gpu_syncs AS sync WHERE NOT EXISTS (
            SELECT 1 FROM int_runtime_calls AS call
            WHERE call.proc_key = sync.proc_key
                AND call.correlation_id = sync.correlation_id))),
    (106, 'CUDA event rows without a timestamp (not drawn)',
        (SELECT untimed FROM stg_untimed_cuda_events)),
    (108, 'of the memcpy rows: unified-memory migrations',
        (SELECT count(*) FROM int_gpu_ops WHERE is_unified_migration))
) AS optional (ord, metric, value)
WHERE value <> 0
UNION ALL
SELECT 200 + row_number() OVER (ORDER BY source_table, reason),
    'rows skipped: ' || source_table || ' (' || reason || ')', skipped
FROM stg_skipped_rows
WHERE skipped > 0
UNION ALL
SELECT 300 + row_number() OVER (ORDER BY source),
    CASE WHEN string_ids_missing
        THEN 'no StringIds table, names as ids: '
        ELSE 'names not in StringIds: ' END || source,
    distinct_ids
FROM stg_name_fallbacks
UNION ALL
SELECT 400 + row_number() OVER (ORDER BY table_name),
    'table with rows, not drawn: ' || table_name, row_count
FROM stg_export_tables
WHERE role = 'not drawn' AND row_count > 0
ORDER BY 1, 2;

COMMENT ON VIEW trace_summary IS 'The counts printed after a conversion, one row per (metric, value), in print order.';
COMMENT ON COLUMN trace_summary.ord IS 'Print order.';
COMMENT ON COLUMN trace_summary.metric IS 'What is counted.';
COMMENT ON COLUMN trace_summary.value IS 'The count.';
