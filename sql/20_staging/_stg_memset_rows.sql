-- _stg_memset_rows: every row of CUPTI_ACTIVITY_KIND_MEMSET (one per memset),
-- with why it cannot be drawn (skip_reason).
--
-- Reads: nsys.CUPTI_ACTIVITY_KIND_MEMSET.
-- Invariants: one row per table row, as exported; skip_reason is
-- nsys_gpu_row_skip_reason (the first that applies: 'NULL start or end',
-- 'end before start', 'NULL deviceId', 'negative deviceId'), NULL for a
-- drawable row. stg_memsets keeps the NULL rows; stg_skipped_rows counts the
-- others by reason.

CREATE OR REPLACE VIEW _stg_memset_rows AS
SELECT *, nsys_gpu_row_skip_reason(start, "end", deviceId) AS skip_reason
FROM nsys.CUPTI_ACTIVITY_KIND_MEMSET;

COMMENT ON VIEW _stg_memset_rows IS 'Every row of CUPTI_ACTIVITY_KIND_MEMSET, with why it cannot be drawn (skip_reason, NULL for a drawable row): stg_memsets keeps the NULL rows, stg_skipped_rows counts the others.';
