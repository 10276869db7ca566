-- check_slice_nesting: slices that cross another slice of their thread
-- track (zero rows when, on every (pid, tid), the X and B/E slices nest or
-- are disjoint).
--
-- Reads: int_slices_on_tracks, trace_base.
-- Invariants: the rule of check_overlap (output-contract.md, Tracks;
-- perfetto-json.md, duration events: Perfetto cannot stack a partial
-- overlap), on the pipeline's ids and without chk_events, so convert can
-- afford it: one sort of the opening and closing edges of the slices of
-- positive length. At one time closes come first (a slice starting at
-- another's end is disjoint), then opens, outer (later end) first; equal
-- intervals nest, in slice_id order. A slice's depth when it opens must
-- equal the depth after it closes; a slice that crosses another closes on
-- another depth (a crossing pair gives a row for each slice whose depths
-- differ). Zero-length slices cannot cross and are left out. seq: the X
-- event as chk_events numbers it (-8 x slice_id - 5); NULL for a B/E slice.

CREATE OR REPLACE VIEW check_slice_nesting AS
WITH edges AS (
    SELECT
        s.json_pid AS pid, s.json_tid AS tid, s.slice_id, s.ph, side.delta,
        CASE side.delta WHEN 1 THEN s.start_ns ELSE s.end_ns END AS t,
        CASE side.delta WHEN 1 THEN -s.end_ns ELSE -s.start_ns END AS span_key,
        s.slice_id * side.delta AS tie
    FROM int_slices_on_tracks AS s
    CROSS JOIN (VALUES (1), (-1)) AS side (delta)
    WHERE s.ph IN ('X', 'B') AND s.end_ns > s.start_ns
),

depths AS (
    -- depth before an open, depth after a close
    SELECT
        pid, tid, slice_id, ph,
        sum(delta) OVER (
            PARTITION BY pid, tid ORDER BY t, delta, span_key, tie
            ROWS UNBOUNDED PRECEDING
        ) - greatest(delta, 0) AS depth
    FROM edges
),

crossing AS (
    SELECT pid, tid, slice_id, any_value(ph) AS ph,
        min(depth) AS low, max(depth) AS high
    FROM depths
    GROUP BY pid, tid, slice_id
    HAVING min(depth) <> max(depth)
)

SELECT
    'on pid ' || CAST(c.pid AS VARCHAR) || ' tid ' || CAST(c.tid AS VARCHAR)
    || ', ' || s.cat || ' ' || s.name || ' [' || _chk_us(s.start_ns - b.base_ns) || ' µs'
    || ', ' || _chk_us(s.end_ns - b.base_ns) || ' µs' || ') opens at depth '
    || CAST(c.low AS VARCHAR) || ' but closes at depth '
    || CAST(c.high AS VARCHAR)
    || ': it partially overlaps another slice of the track' AS message,
    CASE WHEN c.ph = 'X' THEN -8 * c.slice_id - 5 END AS seq,
    c.slice_id
FROM crossing AS c
JOIN int_slices_on_tracks AS s ON s.slice_id = c.slice_id
CROSS JOIN trace_base AS b;

COMMENT ON VIEW check_slice_nesting IS 'Rule overlap, on the pipeline''s ids (convert runs it): per (pid, tid), X and B/E slices nest or are disjoint; one row per slice that opens and closes at different stack depths (output-contract.md, Tracks; perfetto-json.md, duration events).';
COMMENT ON COLUMN check_slice_nesting.message IS 'The crossing slice, its interval (µs) and the two depths, one sentence.';
COMMENT ON COLUMN check_slice_nesting.seq IS 'The X event as chk_events numbers it (-8 x slice_id - 5); NULL for a B/E slice.';
COMMENT ON COLUMN check_slice_nesting.slice_id IS 'int_slices.slice_id of the crossing slice.';
