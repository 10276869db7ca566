-- memcpy (nsys-duck report NAME memcpy): GPU memory operations by kind,
-- time and size, as Nsight's `nsys stats --report cuda_gpu_mem_time_sum`
-- (the time columns) and `cuda_gpu_mem_size_sum` (the size columns) print
-- them, in one table.
--
-- Reads: int_gpu_ops, merge_reports.
-- Grain: one row per operation (per report and operation in a merged
-- workspace: template variable by_report), most total time first.
-- Invariants (Nsight Systems 2023.4, reports/cuda_gpu_mem_time_sum.py and
-- cuda_gpu_mem_size_sum.py):
-- - Operation is '[CUDA memcpy LABEL]' per copy kind (LABEL:
--   ENUM_CUDA_MEMCPY_OPER, int_gpu_ops.copy_kind_label) and '[CUDA
--   memset]' for every memset. A memcpy row standing for a batch
--   (copyCount > 1) counts once, as in nsys. (A copy kind the export's
--   ENUM_CUDA_MEMCPY_OPER lacks is labelled from copy_kinds here; nsys's
--   inner join leaves such rows out.)
-- - Time columns: durations end - start in ns; Time (%) is the share of
--   the summed Total Time of the operations listed (of the report, in a
--   merge), rounded to 0.1; Avg, Med, StdDev rounded to 0.1 ns; Med of an
--   even count is the mean of the two middle values; StdDev is the sample
--   standard deviation, 0 for one operation.
-- - Size columns: bytes per operation (nsys prints them in MB = 10^6 B,
--   rounded to 0.001; here exact bytes, Avg/Med/StdDev rounded to 0.1 B).
-- - Order: Total Time descending, then Operation.
-- A plain SELECT run on the read-only NAME.duckdb; nothing is created.
WITH ops AS (
    SELECT
        {% if by_report %}o.report,{% else %}NULL AS report,{% endif %}
        CASE WHEN o.cat = 'memcpy'
            THEN '[CUDA memcpy ' || o.copy_kind_label || ']'
            ELSE o.name END AS operation,
        o.end_ns - o.start_ns AS dur_ns,
        o.bytes
    FROM int_gpu_ops AS o
    WHERE o.cat IN ('memcpy', 'memset')
),

summary AS (
    SELECT
        report,
        operation,
        sum(dur_ns) AS total_ns,
        count(*) AS ops,
        avg(dur_ns) AS avg_ns,
        median(dur_ns) AS med_ns,
        min(dur_ns) AS min_ns,
        max(dur_ns) AS max_ns,
        coalesce(stddev_samp(dur_ns), 0) AS stddev_ns,
        sum(bytes) AS total_b,
        avg(bytes) AS avg_b,
        median(bytes) AS med_b,
        min(bytes) AS min_b,
        max(bytes) AS max_b,
        coalesce(stddev_samp(bytes), 0) AS stddev_b
    FROM ops
    GROUP BY report, operation
)

SELECT
    {% if by_report %}m.label AS "Report",{% endif %}
    round(s.total_ns * 100.0 / sum(s.total_ns) OVER (PARTITION BY s.report), 1)
        AS "Time (%)",
    CAST(s.total_ns AS BIGINT) AS "Total Time (ns)",
    s.ops AS "Count",
    round(s.avg_ns, 1) AS "Avg (ns)",
    round(s.med_ns, 1) AS "Med (ns)",
    s.min_ns AS "Min (ns)",
    s.max_ns AS "Max (ns)",
    round(s.stddev_ns, 1) AS "StdDev (ns)",
    CAST(s.total_b AS BIGINT) AS "Total (B)",
    round(s.avg_b, 1) AS "Avg (B)",
    round(s.med_b, 1) AS "Med (B)",
    s.min_b AS "Min (B)",
    s.max_b AS "Max (B)",
    round(s.stddev_b, 1) AS "StdDev (B)",
    s.operation AS "Operation"
FROM summary AS s
{% if by_report %}LEFT JOIN merge_reports AS m ON m.report = s.report{% endif %}
ORDER BY {% if by_report %}m.ordinal, {% endif %}s.total_ns DESC, s.operation;
