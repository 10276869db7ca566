-- check_overlap: slices of one thread track that partially overlap, which
-- Perfetto cannot stack.
--
-- Reads: _chk_brackets, _chk_slices.
-- In convert: no (a sort of every slice and flow point; nsys-duck validate runs it on the written file,
-- and it can be queried in NAME.duckdb).
-- Invariants: zero rows when per (pid, tid) the X slices and B/E slices
-- are laminar: any two are disjoint or one contains the other (equal
-- intervals nest; a slice starting at another's end is disjoint). One row
-- per slice that opens and closes on different stack levels (a crossing
-- pair gives two rows). One aggregate over the bracket rows.

CREATE OR REPLACE VIEW check_overlap AS
WITH bad AS (
    SELECT pid, tid, seq,
        any_value(lvl) FILTER (WHERE delta = -1) AS close_lvl,
        any_value(pos) FILTER (WHERE delta = -1) AS close_pos
    FROM _chk_brackets
    WHERE cls <> 3
    GROUP BY pid, tid, seq
    HAVING min(lvl) <> max(lvl)
), crossed AS (
    -- the slice on top of the stack when this one closes: the latest open
    -- on the close's level (an ASOF join for the bad slices only)
    SELECT b.pid, b.tid, b.seq, o.seq AS other_seq
    FROM bad AS b
    ASOF LEFT JOIN (SELECT pid, tid, lvl, pos, seq FROM _chk_brackets WHERE delta = 1) AS o
        ON o.pid = b.pid AND o.tid = b.tid AND o.lvl = b.close_lvl AND o.pos < b.close_pos
), shown AS (
    SELECT c.pid, c.tid, c.seq, me.is_x, me.start_ns, me.end_ns,
        other.seq AS o_seq, other.is_x AS o_is_x, other.start_ns AS o_start, other.end_ns AS o_end
    FROM crossed AS c
    JOIN _chk_slices AS me ON me.pid = c.pid AND me.tid = c.tid AND me.seq = c.seq
    LEFT JOIN _chk_slices AS other
        ON other.pid = c.pid AND other.tid = c.tid AND other.seq = c.other_seq
)
SELECT 'on pid ' || CAST(pid AS VARCHAR) || ' tid ' || CAST(tid AS VARCHAR) || ', '
        || CASE WHEN is_x THEN 'X' ELSE 'B/E' END
        || ' [' || _chk_us(start_ns) || ', ' || _chk_us(end_ns) || ') '
        || CASE WHEN o_seq IS NOT NULL AND o_seq <> seq
                     AND ((o_start < start_ns AND start_ns < o_end AND o_end < end_ns)
                          OR (start_ns < o_start AND o_start < end_ns AND end_ns < o_end))
                THEN 'partially overlaps ' || CASE WHEN o_is_x THEN 'X' ELSE 'B/E' END
                     || ' [' || _chk_us(o_start) || ', ' || _chk_us(o_end) || ')'
                ELSE 'is not properly nested' END AS message,
    seq
FROM shown;

COMMENT ON VIEW check_overlap IS 'Rule overlap: per (pid, tid), X and matched B/E slices are laminar (disjoint or nested; equal intervals nest; touching is disjoint) (output-contract.md, Tracks; perfetto-json.md, Duration events). One row per slice breaking the nesting.';
COMMENT ON COLUMN check_overlap.message IS 'What is wrong, one sentence (times in µs).';
COMMENT ON COLUMN check_overlap.seq IS 'The X or B event of the offending slice.';
