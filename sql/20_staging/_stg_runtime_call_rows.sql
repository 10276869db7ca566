-- _stg_runtime_call_rows: every row of CUPTI_ACTIVITY_KIND_RUNTIME (CUDA
-- runtime and driver API calls, and the rows of other event classes), with
-- why it cannot be drawn (skip_reason).
--
-- Reads: nsys.CUPTI_ACTIVITY_KIND_RUNTIME.
-- Invariants: one row per table row, as exported. skip_reason, the first
-- that applies: 'NULL start or end', 'end before start' (any class),
-- 'NULL eventClass', 'NULL globalTid' (no thread to draw the call on;
-- classes 0 and 1 only); NULL otherwise. stg_runtime_calls keeps the NULL
-- rows of eventClass 0 (runtime) and 1 (driver); stg_skipped_rows counts
-- the others by reason. Rows of other classes (the class-67 backtrace
-- twins) are left out on purpose, not skipped: their skip_reason is NULL
-- unless their times are bad.

CREATE OR REPLACE VIEW _stg_runtime_call_rows AS
SELECT
    *,
    CASE
        WHEN start IS NULL OR "end" IS NULL THEN 'NULL start or end'
        WHEN "end" < start THEN 'end before start'
        WHEN eventClass IS NULL THEN 'NULL eventClass'
        WHEN eventClass IN (0, 1) AND globalTid IS NULL THEN 'NULL globalTid'
    END AS skip_reason
FROM nsys.CUPTI_ACTIVITY_KIND_RUNTIME;

COMMENT ON VIEW _stg_runtime_call_rows IS 'Every row of CUPTI_ACTIVITY_KIND_RUNTIME, with why it cannot be drawn (skip_reason, NULL for a drawable row or one of another event class): stg_runtime_calls keeps the NULL rows of classes 0/1, stg_skipped_rows counts the others.';
COMMENT ON COLUMN _stg_runtime_call_rows.skip_reason IS 'Why the row is not drawn, the first that applies: NULL start or end, end before start, NULL eventClass, NULL globalTid (classes 0/1); NULL otherwise.';
