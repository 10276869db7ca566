-- check_b_e_async: async (b/e) events Perfetto would not pair into the
-- async slice the trace means.
--
-- Reads: chk_events.
-- In convert: no (a sort of every b/e event; nsys-duck validate runs it on the written file,
-- and it can be queried in NAME.duckdb).
-- Invariants: zero rows when every b/e/n has pid, cat and an id (an
-- integer or string), and per (pid, cat, id), ordered by (ts, seq), each e
-- closes an earlier open b with the same name (an e without name closes
-- the latest b) and no b is left open. One row per broken event.
-- Matching counts open b per (pid, cat, id, name) with a running sum
-- clamped at 0 (an e with nothing open closes nothing); two windows.

CREATE OR REPLACE VIEW check_b_e_async AS
WITH async AS (
    SELECT pid, cat, id, seq, ph, ts_ns,
        coalesce(name, CASE WHEN ph = 'e' THEN last_value(CASE WHEN ph = 'b' THEN name END
            IGNORE NULLS) OVER (PARTITION BY pid, cat, id ORDER BY ts_ns, seq
                                ROWS UNBOUNDED PRECEDING) END) AS key_name,
        name
    FROM chk_events
    WHERE ph IN ('b', 'e') AND pid IS NOT NULL AND id IS NOT NULL AND ts_ns IS NOT NULL
), counted AS (
    SELECT *, sum(CASE WHEN ph = 'b' THEN 1 ELSE -1 END) OVER w AS d,
        row_number() OVER w AS pos
    FROM async
    WINDOW w AS (PARTITION BY pid, cat, id, key_name ORDER BY ts_ns, seq
                 ROWS UNBOUNDED PRECEDING)
), floored AS (
    SELECT *, least(0, coalesce(min(d) OVER (
            PARTITION BY pid, cat, id, key_name ORDER BY pos
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)) AS floor_d
    FROM counted
), matched AS (
    -- c: open b after this row (clamped); a b opening level c is never
    -- closed iff the clamped depth stays >= c from it on
    SELECT *, min(c) OVER (PARTITION BY pid, cat, id, key_name ORDER BY pos
                           ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS min_after
    FROM (SELECT *, d - least(floor_d, d) AS c FROM floored)
)
SELECT 'async ' || ph || ' without cat' AS message, seq
FROM chk_events
WHERE ph IN ('b', 'e', 'n') AND coalesce(cat, '') = ''
UNION ALL
SELECT 'async ' || ph || ' event without id2.local / id', seq
FROM chk_events
WHERE ph IN ('b', 'e', 'n') AND id IS NULL
  AND NOT coalesce(regexp_matches(problem, '(^|; )async id '), FALSE)
UNION ALL
SELECT p, seq
FROM (SELECT seq, unnest(list_filter(string_split(problem, '; '), lambda p: p LIKE 'async id %')) AS p
      FROM chk_events WHERE problem IS NOT NULL AND ph IN ('b', 'e', 'n'))
UNION ALL
SELECT 'async e ' || _chk_q(name) || ' (cat ' || _chk_q(cat) || ', id ' || id || ') at '
        || _chk_us(ts_ns) || ' on pid ' || CAST(pid AS VARCHAR)
        || ' matches no earlier open b', seq
FROM matched
WHERE ph = 'e' AND d < floor_d
UNION ALL
SELECT 'async b ' || _chk_q(name) || ' (cat ' || _chk_q(cat) || ', id ' || id || ') at '
        || _chk_us(ts_ns) || ' on pid ' || CAST(pid AS VARCHAR) || ' is never closed by an e',
    seq
FROM matched
WHERE ph = 'b' AND min_after >= c;

COMMENT ON VIEW check_b_e_async IS 'Rule b_e_async: b/e have pid, cat and an integer or string id (id2.local, id2.global or id); per (pid, cat, id) each e closes an earlier open b with the same name; no b left open (perfetto-json.md, Async events; output-contract.md, Events).';
COMMENT ON COLUMN check_b_e_async.message IS 'What is wrong, one sentence (times in µs).';
COMMENT ON COLUMN check_b_e_async.seq IS 'The offending b or e event.';
