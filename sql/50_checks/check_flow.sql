-- check_flow: v1 flow events (s/f) Perfetto would not draw as the one
-- arrow the trace means.
--
-- Reads: chk_events, _chk_flow_ends.
-- In convert: no (check_flow_targets covers it on the pipeline's ids; nsys-duck validate runs it on the written file,
-- and it can be queried in NAME.duckdb).
-- Invariants: zero rows when every s/f has a 64-bit integer id, each id
-- has exactly one s and one f with equal cat and name, the f has bp "e",
-- s.ts <= f.ts, and each end lies in an X slice on its own (pid, tid) that
-- is the innermost slice there (start <= ts < end, ts > start when the
-- slice is longer than 1 ns, ts == start for a zero-length slice). One row
-- per broken condition (pairing problems: one row per id and problem).

CREATE OR REPLACE VIEW check_flow AS
WITH ends AS (
    SELECT seq, ph, id, cat, name, ts_ns, bp,
        regexp_full_match(coalesce(id, ''), '-?[0-9]{1,19}')
            AND TRY_CAST(id AS BIGINT) IS NOT NULL AS id_ok
    FROM chk_events
    WHERE ph IN ('s', 'f')
), pairs AS (
    SELECT id,
        count(*) FILTER (WHERE ph = 's') AS n_s, count(*) FILTER (WHERE ph = 'f') AS n_f,
        min(seq) FILTER (WHERE ph = 's') AS s_seq, max(seq) FILTER (WHERE ph = 's') AS s_seq2,
        min(seq) FILTER (WHERE ph = 'f') AS f_seq, max(seq) FILTER (WHERE ph = 'f') AS f_seq2,
        any_value(ts_ns) FILTER (WHERE ph = 's') AS s_ts, any_value(ts_ns) FILTER (WHERE ph = 'f') AS f_ts,
        any_value(cat) FILTER (WHERE ph = 's') AS s_cat, any_value(cat) FILTER (WHERE ph = 'f') AS f_cat,
        any_value(name) FILTER (WHERE ph = 's') AS s_name, any_value(name) FILTER (WHERE ph = 'f') AS f_name
    FROM ends
    WHERE id_ok
    GROUP BY id
    HAVING count(*) <> 2 OR n_s <> 1
        OR s_cat IS DISTINCT FROM f_cat OR s_name IS DISTINCT FROM f_name OR s_ts > f_ts
), pair_rows AS (
    SELECT unnest([
        CASE WHEN n_s > 1 THEN {'message': 'flow id ' || id || ' is used by ' || n_s
                                    || ' s events (ids must be unique)', 'seq': s_seq2} END,
        CASE WHEN n_s = 0 THEN {'message': 'f with id ' || id || ' has no s', 'seq': f_seq} END,
        CASE WHEN n_f > 1 THEN {'message': 'flow id ' || id || ' has ' || n_f || ' f events',
                                'seq': f_seq2} END,
        CASE WHEN n_f = 0 AND n_s >= 1 THEN {'message': 's with id ' || id || ' has no f',
                                             'seq': s_seq} END,
        CASE WHEN n_s = 1 AND n_f = 1 AND (s_cat IS DISTINCT FROM f_cat
                                           OR s_name IS DISTINCT FROM f_name)
             THEN {'message': 'flow id ' || id || ': s is (' || _chk_q(s_cat) || ', '
                   || _chk_q(s_name) || ') but f is (' || _chk_q(f_cat) || ', '
                   || _chk_q(f_name) || '); cat and name must match', 'seq': f_seq} END,
        CASE WHEN n_s = 1 AND n_f = 1 AND s_ts > f_ts
             THEN {'message': 'flow id ' || id || ': s at ' || _chk_us(s_ts)
                   || ' is after f at ' || _chk_us(f_ts), 'seq': s_seq} END
    ]) AS r
    FROM pairs
)
SELECT 'flow id ' || coalesce(id, '(missing)') || ' is not a 64-bit integer' AS message, seq
FROM ends WHERE NOT id_ok
UNION ALL
SELECT 'f without "bp":"e" (binds to the next slice instead of the enclosing one)', seq
FROM ends WHERE ph = 'f' AND bp IS DISTINCT FROM 'e'
UNION ALL
SELECT r.message, r.seq FROM pair_rows WHERE r IS NOT NULL
UNION ALL
SELECT ph || ' (cat ' || _chk_q(cat) || ') at ' || _chk_us(ts_ns) || ' on pid '
        || CAST(pid AS VARCHAR) || ' tid ' || CAST(tid AS VARCHAR)
        || CASE WHEN slice_seq IS NULL THEN ' is not inside any slice of its track'
                WHEN NOT slice_is_x THEN ': innermost enclosing slice is a B/E slice ['
                     || _chk_us(slice_start_ns) || ', ' || _chk_us(slice_end_ns) || '), not an X'
                WHEN ts_ns = slice_start_ns THEN ' sits exactly at the start of its X ['
                     || _chk_us(slice_start_ns) || ', ' || _chk_us(slice_end_ns)
                     || ') (contract: after the start when the slice is longer than 1 ns)'
                ELSE ' is outside its X [' || _chk_us(slice_start_ns) || ', '
                     || _chk_us(slice_end_ns) || ')' END,
    seq
FROM _chk_flow_ends
WHERE slice_seq IS NULL OR NOT slice_is_x
   OR NOT (slice_start_ns <= ts_ns AND (ts_ns < slice_end_ns OR ts_ns = slice_start_ns))
   OR (slice_end_ns - slice_start_ns > 1 AND ts_ns = slice_start_ns);

COMMENT ON VIEW check_flow IS 'Rule flow: v1 flows (s/f) have a 64-bit integer id, one s and one f per id with equal cat and name, f has bp "e", s.ts <= f.ts, each end in the innermost X slice of its own (pid, tid) (start <= ts < end; ts > start when the slice is longer than 1 ns) (output-contract.md, Flows; perfetto-json.md, Flow events).';
COMMENT ON COLUMN check_flow.message IS 'What is wrong, one sentence (times in µs).';
COMMENT ON COLUMN check_flow.seq IS 'The offending s or f event.';
