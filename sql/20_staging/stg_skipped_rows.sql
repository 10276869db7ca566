-- stg_skipped_rows: rows of the Nsight tables that the staging views drop,
-- counted per table and reason, so nothing is lost silently (the summary
-- prints every non-zero count).
--
-- Reads: nsys.CUPTI_ACTIVITY_KIND_{KERNEL,MEMCPY,MEMSET,GRAPH_TRACE,
-- SYNCHRONIZATION,RUNTIME}, nsys.NVTX_EVENTS.
-- Invariants: the reasons mirror the WHERE clauses of stg_gpu_ops.sql,
-- stg_runtime_calls.sql and stg_nvtx.sql; each dropped row is counted under
-- exactly one reason (the first that applies, in the order listed here).
-- The GPU tables are those of stg_gpu_ops.sql, stg_graph_executions.sql and
-- stg_gpu_syncs.sql.
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
-- NVTX: every event needs a start and a thread; ranges (push/pop 59/70, start/end 60/71)
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
WHERE eventType IN (59, 60, 70, 71) AND "end" < start
    AND globalTid IS NOT NULL;
