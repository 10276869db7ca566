-- _chk_brackets: each thread track as one bracket sequence: slice opens
-- and closes and flow events (s/f) as points, with their stack level.
--
-- Reads: _chk_slices, chk_events.
-- Invariants: per (pid, tid), rows are ordered (pos) by time, then at
-- equal time: closes (inner first), opens (outer first), zero-length
-- opens, points, zero-length closes; so a slice ending at t does not hold
-- a point at t, a slice starting at t does, and a zero-length slice holds
-- only a point at its own t. delta is +1 (open), -1 (close), 0 (point).
-- lvl is the depth after an open, before a close, and the current depth at
-- a point. Slices nest (no partial overlap) iff every slice opens and
-- closes on the same level. last_open_seq / last_delta: the latest open,
-- and the delta of the latest open or close, at or before the row: when a
-- point's latest open/close is an open, that slice is the innermost one
-- holding it. One window (one sort per track), no self-join.
--
-- Example (A [0,10), B [2,5), D [3,4), C [4,8)):
--   t:     0   2   3   4   4   5   8   10
--   row:   oA  oB  oD  cD  oC  cB  cC  cA
--   lvl:   1   2   3   3   3   3   2   1     -> B (2 vs 3) and C (3 vs 2) cross

CREATE OR REPLACE VIEW _chk_brackets AS
WITH rows AS (
    SELECT pid, tid, seq, start_ns AS t, CASE WHEN end_ns > start_ns THEN 1 ELSE 2 END AS cls,
        -end_ns AS o1, seq AS o2, 1 AS delta
    FROM _chk_slices
    UNION ALL
    SELECT pid, tid, seq, end_ns, CASE WHEN end_ns > start_ns THEN 0 ELSE 4 END,
        -start_ns, -seq, -1
    FROM _chk_slices
    UNION ALL
    SELECT pid, tid, seq, ts_ns, 3, 0, seq, 0
    FROM chk_events
    WHERE ph IN ('s', 'f') AND pid IS NOT NULL AND tid IS NOT NULL AND ts_ns IS NOT NULL
)
SELECT pid, tid, seq, t, cls, delta,
    row_number() OVER track AS pos,
    sum(delta) OVER track + CASE WHEN delta < 0 THEN 1 ELSE 0 END AS lvl,
    last_value(CASE WHEN delta = 1 THEN seq END IGNORE NULLS) OVER track AS last_open_seq,
    last_value(CASE WHEN delta <> 0 THEN delta END IGNORE NULLS) OVER track AS last_delta
FROM rows
WINDOW track AS (PARTITION BY pid, tid ORDER BY t, cls, o1, o2 ROWS UNBOUNDED PRECEDING);

COMMENT ON VIEW _chk_brackets IS 'Private to the check_* views: each thread track as a bracket sequence (slice opens/closes, flow ends as points) with stack levels.';
