-- _chk_be_events: every B and E event of a thread track with its stack
-- level, in the order Perfetto reads them.
--
-- Reads: chk_events.
-- Invariants: per (pid, tid), pos orders B/E by (ts, E before other events
-- at equal ts, seq). The stack depth is the running count of open B,
-- clamped at 0: an E met with no B open is ignored (ignored = TRUE, level
-- NULL), as Perfetto ignores it. level is the stack level a B opens (1 =
-- outermost) or the level an E closes; the B an E closes is the last B
-- before it on the same level, so B and E alternate within (pid, tid,
-- level). O(n log n): two windows over the B/E events only.

CREATE OR REPLACE VIEW _chk_be_events AS
WITH ordered AS (
    SELECT pid, tid, seq, ph, name, cat, ts_ns,
        row_number() OVER track AS pos,
        sum(CASE WHEN ph = 'B' THEN 1 ELSE -1 END) OVER track AS d
    FROM chk_events
    WHERE ph IN ('B', 'E') AND pid IS NOT NULL AND tid IS NOT NULL AND ts_ns IS NOT NULL
    WINDOW track AS (PARTITION BY pid, tid ORDER BY ts_ns, ph <> 'E', seq
                     ROWS UNBOUNDED PRECEDING)
), floored AS (
    -- the lowest unclamped depth before this event (0 at the start): the
    -- clamped depth is d - floor
    SELECT *, least(0, coalesce(min(d) OVER (
        PARTITION BY pid, tid ORDER BY pos
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)) AS floor_d
    FROM ordered
)
SELECT pid, tid, seq, ph, name, cat, ts_ns, pos,
    ph = 'E' AND d < floor_d AS ignored,
    CASE WHEN ph = 'B' THEN d - floor_d
         WHEN d >= floor_d THEN d + 1 - floor_d END AS level
FROM floored;

COMMENT ON VIEW _chk_be_events IS 'Private to the check_* views: B/E events per thread track in Perfetto''s order (pos), with the stack level each B opens or E closes (ignored: an E with no B open).';
