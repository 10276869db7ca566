-- _int_nvtx_stack: per thread, every NVTX range start and every launch call
-- start in stack order, with the number of ranges open there (private
-- helper of the NVTX projection; see 12_int_nvtx_range_tree.sql).
--
-- Reads: int_nvtx_ranges, int_runtime_calls.
-- Invariants: one row per range of int_nvtx_ranges (call_id NULL) and per
-- launch call (launched_gpu_work, nvtx_id NULL) on a thread that started
-- some range; seq numbers them per global_tid in stack order: by time, at equal
-- time range starts (longer first, then nvtx_id) before calls before range
-- ends (the ends are not kept). depth of a range = the ranges open at its
-- start counting itself; depth of a call = the ranges open at its start
-- (start <= call start <= end: the thread rule is inclusive at both ends).
-- How: one sort per thread (a running sum and row_number over one window);
-- no (range, call) pair is built. Ranges that end before they start are
-- not in int_nvtx_ranges.

CREATE OR REPLACE TABLE _int_nvtx_stack AS
WITH edges AS (
    SELECT global_tid, start_ns AS at_ns, 0 AS phase, end_ns, nvtx_id,
        CAST(NULL AS BIGINT) AS call_id, 1 AS delta
    FROM int_nvtx_ranges
    UNION ALL
    SELECT global_tid, end_ns, 2, end_ns, nvtx_id, NULL, -1
    FROM int_nvtx_ranges
    UNION ALL
    SELECT global_tid, start_ns, 1, end_ns, NULL, call_id, 0
    FROM int_runtime_calls
    WHERE launched_gpu_work
        AND global_tid IN (SELECT global_tid FROM int_nvtx_ranges)
),
counted AS (
    SELECT *,
        sum(delta) OVER stack AS depth,
        row_number() OVER stack AS seq
    FROM edges
    WINDOW stack AS (PARTITION BY global_tid
        ORDER BY at_ns, phase, end_ns DESC, nvtx_id
        ROWS UNBOUNDED PRECEDING)
)
SELECT global_tid, CAST(seq AS BIGINT) AS seq, CAST(depth AS BIGINT) AS depth,
    nvtx_id, call_id, at_ns AS start_ns, end_ns
FROM counted
WHERE phase <> 2;

COMMENT ON TABLE _int_nvtx_stack IS 'Per thread, every NVTX range start and launch call start in stack order (seq), with the number of ranges open there (depth); private helper of int_nvtx_range_tree and int_nvtx_call_innermost.';
