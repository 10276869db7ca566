-- check_number: events whose ts/dur Perfetto cannot place exactly.
--
-- Reads: chk_events.
-- In convert: no (check_time_range covers it on the pipeline's ids; nsys-duck validate runs it on the written file,
-- and it can be queried in NAME.duckdb).
-- Invariants: zero rows when 0 <= ts < 2^42 µs, dur >= 0, ts + dur < 2^42
-- µs, every non-M event has ts and every X has dur, and every ts/dur was
-- read exactly (problem). One row per broken condition of an event (the
-- number syntax, exponents and fraction digits, is checked on the bytes by
-- the file validator). One scan of chk_events.

CREATE OR REPLACE VIEW check_number AS
WITH found AS (
    SELECT seq, [
        CASE WHEN ts_ns < 0 THEN 'ts ' || _chk_us(ts_ns) || ' is negative' END,
        CASE WHEN ts_ns >= 4398046511104000
             THEN 'ts ' || _chk_us(ts_ns) || ' >= 2^42 µs (not ns-exact in Perfetto)' END,
        CASE WHEN dur_ns < 0 THEN 'dur ' || _chk_us(dur_ns) || ' is negative' END,
        CASE WHEN ts_ns >= 0 AND ts_ns < 4398046511104000 AND dur_ns >= 0
                  AND dur_ns >= 4398046511104000 - ts_ns
             THEN 'end ts+dur = ' || _chk_us(ts_ns) || ' + ' || _chk_us(dur_ns)
                  || ' µs >= 2^42 µs' END,
        CASE WHEN ts_ns IS NULL AND (ph IS NULL OR ph <> 'M')
                  AND NOT coalesce(regexp_matches(problem, '(^|; )ts '), FALSE)
             THEN 'ph ' || coalesce('"' || ph || '"', 'null') || ' event without ts' END,
        CASE WHEN ph = 'X' AND dur_ns IS NULL AND NOT coalesce(regexp_matches(problem, '(^|; )dur '), FALSE)
             THEN 'X event without dur' END
    ] || CASE WHEN problem IS NULL THEN []
              ELSE list_filter(string_split(problem, '; '),
                               lambda p: p LIKE 'ts %' OR p LIKE 'dur %') END AS found
    FROM chk_events
    WHERE ts_ns IS NULL OR ts_ns < 0 OR ts_ns >= 4398046511104000 OR dur_ns < 0
       OR (dur_ns IS NULL AND ph = 'X') OR dur_ns >= 4398046511104000 - ts_ns
       OR problem IS NOT NULL
)
SELECT message, seq
FROM (SELECT seq, unnest(list_filter(found, lambda m: m IS NOT NULL)) AS message FROM found);

COMMENT ON VIEW check_number IS 'Rule number: 0 <= ts < 2^42 µs, dur >= 0, ts + dur < 2^42 µs, every non-M event has ts, every X has dur, ts/dur are JSON numbers (output-contract.md, Time; perfetto-json.md, Timestamps). One row per broken condition.';
COMMENT ON COLUMN check_number.message IS 'What is wrong, one sentence (times in µs with 3 decimals).';
COMMENT ON COLUMN check_number.seq IS 'The offending event (chk_events.seq).';
