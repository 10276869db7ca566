-- trace_split_summary: what --window, --devices and the split into parts
-- leave out of the JSON, one row per (metric, value) in print order.
--
-- Reads: int_flows, trace_parts, trace_part_starts, trace_selection,
-- trace_kept_pids.
-- Invariants: only lines with a count above zero; "trace parts" when the
-- trace is split. A flow is drawn when both its slices are in the
-- selection and in one part; the others are counted here, never cut.
-- Role: split-summary (printed after the summary)
-- Columns: metric VARCHAR, value BIGINT

CREATE OR REPLACE VIEW trace_split_summary AS
WITH flows AS (
    SELECT f.api_start_ns, f.gpu_start_ns,
        f.s_pid IN (SELECT pid FROM trace_kept_pids)
        AND f.f_pid IN (SELECT pid FROM trace_kept_pids)
        AND f.api_start_ns >= coalesce(sel.window_start_ns, f.api_start_ns)
        AND f.gpu_start_ns >= coalesce(sel.window_start_ns, f.gpu_start_ns)
        AND f.api_start_ns < coalesce(sel.window_end_ns, f.api_start_ns + 1)
        AND f.gpu_start_ns < coalesce(sel.window_end_ns, f.gpu_start_ns + 1)
            AS is_selected,
        trace_part_of(b.starts, f.api_start_ns) AS api_part,
        trace_part_of(b.starts, f.gpu_start_ns) AS gpu_part
    FROM int_flows AS f, trace_selection AS sel, trace_part_starts AS b
    WHERE f.is_placeable
),
lines AS (
    SELECT 1 AS ord, 'trace parts (JSON over --max-json-size)' AS metric,
        CASE WHEN count(*) > 1 THEN count(*) ELSE 0 END AS value
    FROM trace_parts
    UNION ALL
    SELECT 2, 'flows with an end outside --window/--devices (not drawn)',
        count(*) FILTER (WHERE NOT is_selected)
    FROM flows
    UNION ALL
    SELECT 3, 'flows across two parts (not drawn)',
        count(*) FILTER (WHERE is_selected AND api_part <> gpu_part)
    FROM flows
)
SELECT metric, CAST(value AS BIGINT) AS value
FROM lines
WHERE value > 0
ORDER BY ord;

COMMENT ON VIEW trace_split_summary IS 'What --window, --devices and the split into parts leave out of the JSON: (metric, value) lines with a count above zero.';
COMMENT ON COLUMN trace_split_summary.metric IS 'What is counted.';
COMMENT ON COLUMN trace_split_summary.value IS 'The count.';
