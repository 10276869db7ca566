-- _stg_sched_event_rows: every row of SCHED_EVENTS (one per scheduling
-- event), with why it cannot be drawn (skip_reason).
--
-- Reads: nsys.SCHED_EVENTS.
-- Invariants: one row per table row, as exported, whether or not --no-sched
-- leaves the source out (the bad rows are counted either way).
-- skip_reason, the first that applies: 'NULL start or isSchedIn',
-- 'NULL globalTid' (no thread); NULL for a drawable row. stg_sched_events
-- keeps the NULL rows; stg_skipped_rows counts the others by reason.

CREATE OR REPLACE VIEW _stg_sched_event_rows AS
SELECT
    *,
    CASE
        WHEN start IS NULL OR isSchedIn IS NULL
            THEN 'NULL start or isSchedIn'
        WHEN globalTid IS NULL THEN 'NULL globalTid'
    END AS skip_reason
FROM nsys.SCHED_EVENTS;

COMMENT ON VIEW _stg_sched_event_rows IS 'Every row of SCHED_EVENTS, with why it cannot be drawn (skip_reason, NULL for a drawable row): stg_sched_events keeps the NULL rows, stg_skipped_rows counts the others.';
COMMENT ON COLUMN _stg_sched_event_rows.skip_reason IS 'Why the row is not drawn, the first that applies: NULL start or isSchedIn, NULL globalTid; NULL: drawable.';
