-- stg_skipped_rows: rows of the Nsight tables that the staging views drop,
-- counted per table and reason, so nothing is lost silently (the summary
-- prints every non-zero count).
--
-- Reads: nsys.CUPTI_ACTIVITY_KIND_{KERNEL,MEMCPY,MEMSET,RUNTIME}.
-- Invariants: the reasons mirror the WHERE clauses of stg_gpu_ops.sql and
-- stg_runtime_calls.sql.

CREATE OR REPLACE VIEW stg_skipped_rows AS
{% for table in ['CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_MEMCPY',
                 'CUPTI_ACTIVITY_KIND_MEMSET', 'CUPTI_ACTIVITY_KIND_RUNTIME'] %}
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
{% endif %}
{% if not loop.last %}UNION ALL{% endif %}
{% endfor %};
