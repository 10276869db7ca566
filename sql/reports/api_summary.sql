-- api_summary (nsys-duck report NAME api-summary): time per CUDA API
-- function, as Nsight's `nsys stats --report cuda_api_sum` prints it.
--
-- Reads: stg_runtime_calls.
-- Grain: one row per API name (runtime and driver calls alike), most total
-- time first.
-- Invariants (cuda_api_sum of Nsight Systems 2023.4, its
-- reports/cuda_api_sum.py):
-- - Every CUDA runtime (eventClass 0) and driver (eventClass 1) call,
--   whether or not the trace draws it (stg_runtime_calls, not
--   int_runtime_calls, which keeps the calls with GPU work or
--   synchronization only). nsys reads every row of
--   CUPTI_ACTIVITY_KIND_RUNTIME; stg_runtime_calls leaves out other
--   eventClass values (none in any export we have) and rows without times
--   or thread (counted in stg_skipped_rows).
-- - Name is the exported name with its CUPTI callback version removed the
--   way nsys stats removes it: the last 6 characters when they start with
--   '_v' (cudaLaunchKernel_v7000 -> cudaLaunchKernel), so a 5-digit
--   version stays (cudaStreamIsCapturing_v10000,
--   cudaGetDeviceProperties_v2_v12000), unlike stg_runtime_calls.api_name.
-- - Durations are end - start in ns; Time (%) is the share of the summed
--   Total Time of all API rows listed, rounded to 0.1; Avg, Med, StdDev
--   rounded to 0.1 ns; Med of an even count is the mean of the two middle
--   values; StdDev is the sample standard deviation, 0 for one call.
-- - Order: Total Time descending, then Name.
-- A plain SELECT run on the read-only NAME.duckdb; nothing is created.
WITH calls AS (
    SELECT
        CASE WHEN length(api_full_name) >= 6
                AND substr(api_full_name, length(api_full_name) - 5, 2) = '_v'
            THEN left(api_full_name, length(api_full_name) - 6)
            ELSE api_full_name END AS name,
        end_ns - start_ns AS dur_ns
    FROM stg_runtime_calls
),

summary AS (
    SELECT
        name,
        sum(dur_ns) AS total_ns,
        count(*) AS calls,
        avg(dur_ns) AS avg_ns,
        median(dur_ns) AS med_ns,
        min(dur_ns) AS min_ns,
        max(dur_ns) AS max_ns,
        coalesce(stddev_samp(dur_ns), 0) AS stddev_ns
    FROM calls
    GROUP BY name
)

SELECT
    round(total_ns * 100.0 / sum(total_ns) OVER (), 1) AS "Time (%)",
    CAST(total_ns AS BIGINT) AS "Total Time (ns)",
    calls AS "Num Calls",
    round(avg_ns, 1) AS "Avg (ns)",
    round(med_ns, 1) AS "Med (ns)",
    min_ns AS "Min (ns)",
    max_ns AS "Max (ns)",
    round(stddev_ns, 1) AS "StdDev (ns)",
    name AS "Name"
FROM summary
ORDER BY total_ns DESC, name;
