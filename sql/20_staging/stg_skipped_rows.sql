-- stg_skipped_rows: rows of the Nsight tables that the staging views drop,
-- counted per table and reason, so nothing is lost silently (the summary
-- prints every non-zero count).
--
-- Reads: nsys.CUPTI_ACTIVITY_KIND_GRAPH_TRACE,
-- nsys.CUPTI_ACTIVITY_KIND_KERNEL, nsys.CUPTI_ACTIVITY_KIND_MEMCPY,
-- nsys.CUPTI_ACTIVITY_KIND_MEMSET, nsys.CUPTI_ACTIVITY_KIND_RUNTIME,
-- nsys.CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, nsys.NVTX_EVENTS,
-- nvtx_event_types, nsys.OSRT_API, nsys.CUDNN_EVENTS, nsys.CUBLAS_EVENTS,
-- nsys.SCHED_EVENTS.
-- Invariants: the reasons mirror the WHERE clauses of stg_kernels.sql,
-- stg_runtime_calls.sql and stg_nvtx.sql; each dropped row is counted under
-- exactly one reason (the first that applies, in the order listed here).
-- The GPU tables are those of stg_kernels.sql, stg_graph_executions.sql and
-- stg_gpu_syncs.sql; the CPU-side tables those of stg_cpu_calls.sql and
-- stg_sched_events.sql (their bad rows are counted whether or not
-- --no-osrt... leaves the table out).
-- Rows left out on purpose (runtime eventClass other than 0/1, the class-67
-- backtrace twins) are not "skipped" and not counted.

CREATE OR REPLACE VIEW stg_skipped_rows AS
{% for table in ['CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_MEMCPY',
                 'CUPTI_ACTIVITY_KIND_MEMSET', 'CUPTI_ACTIVITY_KIND_GRAPH_TRACE',
                 'CUPTI_ACTIVITY_KIND_SYNCHRONIZATION',
                 'CUPTI_ACTIVITY_KIND_RUNTIME'] %}
SELECT '{{ table }}' AS source_table, 'NULL start or end' AS reason,
    count(*) AS skipped
FROM nsys.{{ table }} WHERE start IS NULL OR "end" IS NULL
UNION ALL
SELECT '{{ table }}', 'end before start', count(*)
FROM nsys.{{ table }} WHERE "end" < start
{% if table != 'CUPTI_ACTIVITY_KIND_RUNTIME' %}
UNION ALL
SELECT '{{ table }}', 'NULL deviceId', count(*)
FROM nsys.{{ table }} WHERE deviceId IS NULL
    AND start IS NOT NULL AND "end" >= start
UNION ALL
SELECT '{{ table }}', 'negative deviceId', count(*)
FROM nsys.{{ table }} WHERE deviceId < 0
    AND start IS NOT NULL AND "end" >= start
{% else %}
UNION ALL
SELECT '{{ table }}', 'NULL eventClass', count(*)
FROM nsys.{{ table }} WHERE eventClass IS NULL
    AND start IS NOT NULL AND "end" >= start
UNION ALL
SELECT '{{ table }}', 'NULL globalTid', count(*)
FROM nsys.{{ table }} WHERE globalTid IS NULL AND eventClass IN (0, 1)
    AND start IS NOT NULL AND "end" >= start
{% endif %}
UNION ALL
{% endfor %}
-- NVTX: every event needs a start and a thread; ranges (nvtx_event_types)
-- whose end is before their start are dropped (a NULL end is an unclosed
-- range and kept, ending at the end of the capture).
SELECT 'NVTX_EVENTS', 'NULL start', count(*)
FROM nsys.NVTX_EVENTS WHERE start IS NULL
UNION ALL
SELECT 'NVTX_EVENTS', 'NULL globalTid', count(*)
FROM nsys.NVTX_EVENTS WHERE globalTid IS NULL AND start IS NOT NULL
UNION ALL
SELECT 'NVTX_EVENTS', 'end before start', count(*)
FROM nsys.NVTX_EVENTS
WHERE eventType IN (SELECT event_type FROM nvtx_event_types
        WHERE role = 'range')
    AND "end" < start
    AND globalTid IS NOT NULL
{%- for table in ['OSRT_API', 'CUDNN_EVENTS', 'CUBLAS_EVENTS'] %}
UNION ALL
SELECT '{{ table }}', 'NULL start or end', count(*)
FROM nsys.{{ table }} WHERE start IS NULL OR "end" IS NULL
UNION ALL
SELECT '{{ table }}', 'end before start', count(*)
FROM nsys.{{ table }} WHERE "end" < start
UNION ALL
SELECT '{{ table }}', 'NULL globalTid', count(*)
FROM nsys.{{ table }} WHERE globalTid IS NULL AND "end" >= start
{%- endfor %}
UNION ALL
SELECT 'SCHED_EVENTS', 'NULL start or isSchedIn', count(*)
FROM nsys.SCHED_EVENTS WHERE start IS NULL OR isSchedIn IS NULL
UNION ALL
SELECT 'SCHED_EVENTS', 'NULL globalTid', count(*)
FROM nsys.SCHED_EVENTS
WHERE globalTid IS NULL AND start IS NOT NULL AND isSchedIn IS NOT NULL;

COMMENT ON VIEW stg_skipped_rows IS 'Rows of the Nsight tables that the staging views drop, counted per table and reason, so nothing is lost silently (the summary prints every non-zero count).';
COMMENT ON COLUMN stg_skipped_rows.source_table IS 'Nsight table.';
COMMENT ON COLUMN stg_skipped_rows.reason IS 'Why the rows were dropped.';
COMMENT ON COLUMN stg_skipped_rows.skipped IS 'Rows dropped for that reason.';
