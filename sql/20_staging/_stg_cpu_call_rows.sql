-- _stg_cpu_call_rows: every row of the CPU-side call tables (OSRT_API,
-- CUDNN_EVENTS, CUBLAS_EVENTS), with its table and why it cannot be drawn
-- (skip_reason).
--
-- Reads: nsys.CUBLAS_EVENTS, nsys.CUDNN_EVENTS, nsys.OSRT_API.
-- Invariants: one row per table row, whatever --no-osrt, --no-cudnn,
-- --no-cublas leave out (stg_cpu_calls picks the sources kept; the bad rows
-- of a table left out are still counted). table_name: the Nsight table;
-- returnValue and nestingLevel are NULL for the libraries (OSRT only).
-- skip_reason, the first that applies: 'NULL start or end',
-- 'end before start', 'NULL globalTid' (no thread); NULL for a drawable
-- row. stg_cpu_calls keeps the NULL rows; stg_skipped_rows counts the
-- others by reason.

CREATE OR REPLACE VIEW _stg_cpu_call_rows AS
WITH calls AS (
    SELECT
        'OSRT_API' AS table_name, start, "end", eventClass, globalTid, nameId,
        returnValue, nestingLevel
    FROM nsys.OSRT_API
    UNION ALL BY NAME
    SELECT
        'CUDNN_EVENTS' AS table_name, start, "end", eventClass, globalTid, nameId
    FROM nsys.CUDNN_EVENTS
    UNION ALL BY NAME
    SELECT
        'CUBLAS_EVENTS' AS table_name, start, "end", eventClass, globalTid, nameId
    FROM nsys.CUBLAS_EVENTS
)
SELECT
    *,
    CASE
        WHEN start IS NULL OR "end" IS NULL THEN 'NULL start or end'
        WHEN "end" < start THEN 'end before start'
        WHEN globalTid IS NULL THEN 'NULL globalTid'
    END AS skip_reason
FROM calls;

COMMENT ON VIEW _stg_cpu_call_rows IS 'Every row of OSRT_API, CUDNN_EVENTS and CUBLAS_EVENTS (table_name), with why it cannot be drawn (skip_reason, NULL for a drawable row): stg_cpu_calls keeps the NULL rows of the sources kept, stg_skipped_rows counts the others.';
COMMENT ON COLUMN _stg_cpu_call_rows.table_name IS 'The Nsight table of the row: OSRT_API, CUDNN_EVENTS or CUBLAS_EVENTS.';
COMMENT ON COLUMN _stg_cpu_call_rows.skip_reason IS 'Why the row is not drawn, the first that applies: NULL start or end, end before start, NULL globalTid; NULL: drawable.';
