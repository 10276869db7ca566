-- _chk_flow_ends: every flow event (s/f) with the slice Perfetto binds it
-- to: the innermost slice of its own thread track holding its ts.
--
-- Reads: _chk_brackets, _chk_slices, chk_events.
-- Invariants: one row per s/f event with pid, tid and ts. slice_* are NULL
-- when no slice holds it; "holds" is start <= ts < end, or ts == start for
-- a zero-length slice (see _chk_brackets). The innermost slice is the
-- latest open before the point when that is its latest open/close;
-- otherwise (a slice inside the holder ended before the point) it is the
-- latest open on the point's level, found by an ASOF join for those
-- points only.

CREATE OR REPLACE VIEW _chk_flow_ends AS
WITH points AS (
    SELECT pid, tid, seq, t, pos, lvl, last_open_seq, last_delta
    FROM _chk_brackets WHERE cls = 3
), deep AS (
    SELECT p.pid, p.tid, p.seq, o.seq AS slice_seq
    FROM (SELECT * FROM points WHERE lvl > 0 AND last_delta = -1) AS p
    ASOF LEFT JOIN (SELECT pid, tid, lvl, pos, seq FROM _chk_brackets WHERE delta = 1) AS o
        ON o.pid = p.pid AND o.tid = p.tid AND o.lvl = p.lvl AND o.pos < p.pos
), bound AS (
    SELECT p.pid, p.tid, p.seq, p.t,
        CASE WHEN p.lvl <= 0 THEN NULL WHEN p.last_delta = 1 THEN p.last_open_seq
             ELSE deep.slice_seq END AS slice_seq
    FROM points AS p LEFT JOIN deep USING (pid, tid, seq)
)
SELECT b.pid, b.tid, b.seq, e.ph, e.cat, b.t AS ts_ns, b.slice_seq,
    s.is_x AS slice_is_x, s.cat AS slice_cat,
    s.start_ns AS slice_start_ns, s.end_ns AS slice_end_ns
FROM bound AS b
JOIN chk_events AS e ON e.pid = b.pid AND e.tid = b.tid AND e.seq = b.seq
    AND e.ph IN ('s', 'f')
LEFT JOIN _chk_slices AS s ON s.pid = b.pid AND s.tid = b.tid AND s.seq = b.slice_seq;

COMMENT ON VIEW _chk_flow_ends IS 'Private to the check_* views: each flow end (s/f) with the innermost slice of its track holding it (slice_* NULL: none), where Perfetto binds it.';
