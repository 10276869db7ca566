-- check_source_counts: the kinds of slice whose count in the trace differs
-- from the rows they are drawn from, or whose count in the emitted events
-- differs from int_slices (zero rows when every count agrees).
--
-- Reads: int_slices, chk_events, int_gpu_ops, int_runtime_calls,
-- stg_gpu_syncs, stg_cuda_events,
-- stg_nvtx_events, int_nvtx_gpu_projection, cpu_trace_sources,
-- stg_cpu_calls, stg_sched_events.
-- Invariants: the rule (output-contract.md, Tracks and Events; Summary:
-- nothing is lost silently): each GPU operation of int_gpu_ops (kernel,
-- memcpy, memset, graph execution) is drawn once as its primary slice and once
-- more as its Core/PCIe/D2D copy when it has a projection; each GPU-side sync,
-- timed CUDA event record, NVTX mark or range (start <= end) and CPU-side
-- call (stg_cpu_calls) of the staging views once as its primary slice; each
-- CUDA API call of int_runtime_calls (every class 0/1 call) once as its
-- primary slice, per cat (cuda_api, cuda_sync); the
-- scheduling events of each thread as one thread_state slice fewer; each projected NVTX range and device once
-- as an nvtx_kernel slice; and the writer emits one X, i, B or b event per
-- int_slices row, per cat. GPU operations are counted from int_gpu_ops, not
-- the staging views, so an edited int_gpu_ops that leaves work out on purpose
-- (docs/sql.md: drop memsets) passes; API calls likewise from
-- int_runtime_calls. seq is NULL (a count).
-- Merge: not run (check_merge_ids counts against each report's conversion)

CREATE OR REPLACE VIEW check_source_counts AS
WITH expected (cat, primary_only, source, expected_slices) AS (
    SELECT ops.cat, TRUE, 'int_gpu_ops (' || ops.cat || ')', count(*)
    FROM int_gpu_ops AS ops
    GROUP BY ops.cat
    UNION ALL
    SELECT ops.projected_cat, FALSE,
        'int_gpu_ops (projection ' || any_value(ops.projection) || ')', count(*)
    FROM int_gpu_ops AS ops
    WHERE ops.projection IS NOT NULL
    GROUP BY ops.projected_cat
    UNION ALL
    SELECT 'gpu_sync', TRUE, 'stg_gpu_syncs',
        (SELECT count(*) FROM stg_gpu_syncs)
    UNION ALL
    SELECT 'cuda_event', TRUE, 'stg_cuda_events',
        (SELECT count(*) FROM stg_cuda_events)
    UNION ALL
    SELECT 'nvtx', TRUE, 'stg_nvtx_events (marks and ranges)',
        (SELECT count(*) FROM stg_nvtx_events
            WHERE nvtx_role = 'mark'
                OR (nvtx_role = 'range' AND end_ns >= start_ns))
    UNION ALL
    -- every CUDA API call once (cuda_api or cuda_sync, its cat)
    SELECT call.cat, TRUE, 'int_runtime_calls (' || call.cat || ')', count(*)
    FROM int_runtime_calls AS call
    GROUP BY call.cat
    UNION ALL
    SELECT 'nvtx_kernel', FALSE, 'int_nvtx_gpu_projection',
        (SELECT count(*) FROM int_nvtx_gpu_projection)
    UNION ALL
    -- every CPU-side call of a kept source once (its cat is its source)
    SELECT src.source, TRUE, 'stg_cpu_calls (' || src.table_name || ')',
        (SELECT count(*) FROM stg_cpu_calls AS c WHERE c.source = src.source)
    FROM cpu_trace_sources AS src
    WHERE src.table_name <> 'SCHED_EVENTS'
    UNION ALL
    -- a thread's n scheduling events bound n - 1 states
    SELECT 'thread_state', TRUE, 'stg_sched_events (rows - threads)',
        (SELECT count(*) - count(DISTINCT global_tid) FROM stg_sched_events)
),

slices AS (
    SELECT
        cat,
        count(*) AS slices,
        count(*) FILTER (WHERE is_primary) AS primary_slices
    FROM int_slices
    GROUP BY cat
),

emitted AS (
    SELECT cat, count(*) AS events
    FROM chk_events
    WHERE ph IN ('X', 'i', 'B', 'b')
    GROUP BY cat
)

SELECT
    expected.cat || ': ' || CAST(coalesce(CASE WHEN expected.primary_only
        THEN slices.primary_slices ELSE slices.slices END, 0) AS VARCHAR)
    || CASE WHEN expected.primary_only THEN ' primary slices' ELSE ' slices' END
    || ' in the trace, but ' || expected.source || ' has '
    || CAST(expected.expected_slices AS VARCHAR) || ' rows'
        AS message,
    NULL::BIGINT AS seq
FROM expected
LEFT JOIN slices ON slices.cat = expected.cat
WHERE coalesce(CASE WHEN expected.primary_only
        THEN slices.primary_slices ELSE slices.slices END, 0)
    <> expected.expected_slices
UNION ALL
SELECT
    coalesce(slices.cat, emitted.cat) || ': '
    || CAST(coalesce(slices.slices, 0) AS VARCHAR)
    || ' rows in int_slices, but the writer emits '
    || CAST(coalesce(emitted.events, 0) AS VARCHAR)
    || ' slice events (X, i, B or b)',
    NULL
FROM slices
FULL JOIN emitted ON emitted.cat = slices.cat
WHERE coalesce(slices.slices, 0) <> coalesce(emitted.events, 0);

COMMENT ON VIEW check_source_counts IS 'Contract check (output-contract.md, Tracks and Events; Summary: nothing lost silently): per kind of slice, the trace draws each GPU operation of int_gpu_ops, each CUDA API call of int_runtime_calls and each GPU-side sync, CUDA event record and NVTX row of the staging views once (and the Core/PCIe/D2D/NVTX Kernel copies), and the writer emits one event per int_slices row. Rows = violations (message, seq NULL).';
