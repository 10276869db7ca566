-- top_kernels (nsys-duck report NAME top-kernels): GPU time per kernel, as
-- Nsight's `nsys stats --report cuda_gpu_kern_sum` prints it.
--
-- Reads: int_gpu_ops, merge_reports.
-- Grain: one row per kernel name (per report and kernel name in a merged
-- workspace: template variable by_report), most total time first.
-- Invariants (cuda_gpu_kern_sum of Nsight Systems 2023.4, its
-- reports/cuda_gpu_kern_sum.py and kernel_helper.py):
-- - Name is the FULL demangled name (CUPTI demangledName via StringIds;
--   int_gpu_ops.demangled_name), nsys stats' default grouping: kernels
--   that share a short name but differ in template arguments are rows of
--   their own. Every kernel row counts (graph-node kernels too; CUDA graph
--   executions of a graph-level trace are not kernels, as in nsys).
-- - Durations are end - start in ns. Time (%) is the kernel's share of the
--   summed Total Time of all kernels listed (of its report, in a merge),
--   not of the wall time, rounded to 0.1. Avg, Med and StdDev are rounded
--   to 0.1 ns as nsys prints them; Med of an even count is the mean of the
--   two middle values; StdDev is the sample standard deviation (n - 1), 0
--   for a single instance.
-- - Order: Total Time descending, then Instances ascending, then Name
--   (nsys's ORDER BY 2 DESC, 3, "Name").
-- A plain SELECT (not a view): the command runs it on the read-only
-- NAME.duckdb; nothing is created.
WITH kernels AS (
    SELECT
        {% if by_report %}o.report,{% else %}NULL AS report,{% endif %}
        o.demangled_name AS name,
        o.end_ns - o.start_ns AS dur_ns
    FROM int_gpu_ops AS o
    WHERE o.cat = 'kernel'
),

summary AS (
    SELECT
        report,
        name,
        sum(dur_ns) AS total_ns,
        count(*) AS instances,
        avg(dur_ns) AS avg_ns,
        median(dur_ns) AS med_ns,
        min(dur_ns) AS min_ns,
        max(dur_ns) AS max_ns,
        coalesce(stddev_samp(dur_ns), 0) AS stddev_ns
    FROM kernels
    GROUP BY report, name
)

SELECT
    {% if by_report %}m.label AS "Report",{% endif %}
    round(s.total_ns * 100.0 / sum(s.total_ns) OVER (PARTITION BY s.report), 1)
        AS "Time (%)",
    CAST(s.total_ns AS BIGINT) AS "Total Time (ns)",
    s.instances AS "Instances",
    round(s.avg_ns, 1) AS "Avg (ns)",
    round(s.med_ns, 1) AS "Med (ns)",
    s.min_ns AS "Min (ns)",
    s.max_ns AS "Max (ns)",
    round(s.stddev_ns, 1) AS "StdDev (ns)",
    s.name AS "Name"
FROM summary AS s
{% if by_report %}LEFT JOIN merge_reports AS m ON m.report = s.report{% endif %}
ORDER BY {% if by_report %}m.ordinal, {% endif %}s.total_ns DESC, s.instances, s.name;
