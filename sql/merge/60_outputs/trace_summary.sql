-- trace_summary (of a merge): the counts printed after a merge, one row per (metric,
-- value), in print order: the reports merged, then every metric of the
-- reports' own summaries (40_trace_summary.sql) summed over the reports.
--
-- Reads: {{ merge_reports_dir }}/report=NAME/trace_summary.parquet (each
-- report's trace_summary), merge_reports, int_slices, int_flows.
-- Invariants: a metric is printed at its first position in any report
-- (metrics from 100 on, the not-drawn and skipped lines, only when their
-- sum is not zero, as in one conversion); "slices" and "flows" (those
-- drawn: is_placeable) are counted again on the merged tables, so a report
-- lost in the merge shows. A
-- table (read once): the merged database reads no file.
-- Columns: ord BIGINT, metric VARCHAR, value BIGINT
-- Role: summary (the merge's counts, printed first)
-- Python reads: ORDER BY ord, metric

CREATE OR REPLACE TABLE trace_summary AS
WITH reported AS (
    SELECT metric, min(ord) AS ord, sum(value) AS value
    FROM read_parquet('{{ merge_reports_dir }}/*/trace_summary.parquet',
        hive_partitioning = TRUE, hive_types = {'report': VARCHAR}, union_by_name = TRUE)
    WHERE metric NOT IN ('slices')
    GROUP BY metric
)

SELECT 0 AS ord, 'reports merged' AS metric, count(*) AS value FROM merge_reports
UNION ALL
SELECT ord, metric, CAST(value AS BIGINT) FROM reported
WHERE ord < 100 OR value <> 0
UNION ALL
SELECT 99, 'slices', count(*) FROM int_slices
UNION ALL
SELECT 99, 'flows', count(*) FROM int_flows WHERE is_placeable
ORDER BY ord, metric;

COMMENT ON TABLE trace_summary IS 'The summary of a merge: reports merged, the reports'' own counts summed, slices and flows of the merged trace.';
