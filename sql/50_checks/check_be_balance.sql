-- check_be_balance: B/E events Perfetto would pair differently from what
-- the trace means, or not at all.
--
-- Reads: _chk_be_events, _chk_be_slices.
-- In convert: no (a sort of every B/E event; nsys-duck validate runs it on the written file,
-- and it can be queried in NAME.duckdb).
-- Invariants: zero rows when, per (pid, tid) in Perfetto's order (ts, E
-- before other events at equal ts, then seq), each E closes the innermost
-- open B with the same name and cat (an E without name/cat matches any)
-- and no B is left open. One row per E that closes nothing, per E that
-- closes a B of another name/cat, and per B never closed.

CREATE OR REPLACE VIEW check_be_balance AS
SELECT 'E ' || _chk_q(name) || ' (cat ' || _chk_q(cat) || ') at ' || _chk_us(ts_ns)
        || ' on pid ' || CAST(pid AS VARCHAR) || ' tid ' || CAST(tid AS VARCHAR)
        || ' matches no open B (no B is open); Perfetto ignores it' AS message,
    seq
FROM _chk_be_events
WHERE ignored
UNION ALL
SELECT 'E ' || _chk_q(end_name) || ' (cat ' || _chk_q(end_cat) || ') at ' || _chk_us(end_ns)
        || ' on pid ' || CAST(pid AS VARCHAR) || ' tid ' || CAST(tid AS VARCHAR)
        || ' does not match the innermost open B ' || _chk_q(name) || ' (cat '
        || _chk_q(cat) || ', from ' || _chk_us(start_ns) || '), which is still open',
    end_seq
FROM _chk_be_slices
WHERE end_seq IS NOT NULL AND NOT matched
UNION ALL
SELECT 'B ' || _chk_q(name) || ' (cat ' || _chk_q(cat) || ') at ' || _chk_us(start_ns)
        || ' on pid ' || CAST(pid AS VARCHAR) || ' tid ' || CAST(tid AS VARCHAR)
        || ' is never closed',
    seq
FROM _chk_be_slices
WHERE end_seq IS NULL;

COMMENT ON VIEW check_be_balance IS 'Rule be_balance: per (pid, tid), ordered by ts (E first at equal ts), each E closes the innermost open B with the same name and cat; no B left open (perfetto-json.md, Duration events; output-contract.md, Events).';
COMMENT ON COLUMN check_be_balance.message IS 'What is wrong, one sentence (times in µs).';
COMMENT ON COLUMN check_be_balance.seq IS 'The offending E, or the B never closed.';
