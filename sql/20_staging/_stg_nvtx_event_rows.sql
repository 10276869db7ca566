-- _stg_nvtx_event_rows: every row of NVTX_EVENTS, with why it cannot be
-- drawn (skip_reason).
--
-- Reads: nsys.NVTX_EVENTS, nvtx_event_types.
-- Invariants: one row per table row, as exported. skip_reason, the first
-- that applies: 'NULL start', 'NULL globalTid' (no thread), 'end before
-- start' (a range, nvtx_event_types role 'range', whose end is before its
-- start; a NULL end is an unclosed range, drawn); NULL for a drawable row.
-- stg_nvtx_events keeps the NULL rows and the reversed ranges (nvtx_id
-- numbers them; the range stages leave them out); stg_skipped_rows counts
-- every row with a skip_reason by reason.

CREATE OR REPLACE VIEW _stg_nvtx_event_rows AS
SELECT
    *,
    CASE
        WHEN start IS NULL THEN 'NULL start'
        WHEN globalTid IS NULL THEN 'NULL globalTid'
        WHEN "end" < start AND eventType IN (
            SELECT event_type FROM nvtx_event_types WHERE role = 'range')
            THEN 'end before start'
    END AS skip_reason
FROM nsys.NVTX_EVENTS;

COMMENT ON VIEW _stg_nvtx_event_rows IS 'Every row of NVTX_EVENTS, with why it cannot be drawn (skip_reason, NULL for a drawable row): stg_nvtx_events keeps the NULL rows and the reversed ranges, stg_skipped_rows counts every row with a reason.';
COMMENT ON COLUMN _stg_nvtx_event_rows.skip_reason IS 'Why the row is not drawn, the first that applies: NULL start, NULL globalTid, end before start (ranges); NULL: drawable.';
