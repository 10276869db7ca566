-- check_ph: events whose phase is not one Perfetto's JSON importer reads.
--
-- Reads: chk_events.
-- In convert: no (the pipeline writes only known phases; nsys-duck validate runs it on the written file,
-- and it can be queried in NAME.duckdb).
-- Invariants: zero rows when every event's ph is one of X B E i I M s f b
-- e C n. One row per offending event.

CREATE OR REPLACE VIEW check_ph AS
SELECT 'ph ' || coalesce('"' || ph || '"', 'null')
        || ' is not one of X B E i I M s f b e C n' AS message,
    seq
FROM chk_events
WHERE ph IS NULL OR ph NOT IN ('X', 'B', 'E', 'i', 'I', 'M', 's', 'f', 'b', 'e', 'C', 'n');

COMMENT ON VIEW check_ph IS 'Rule ph: every event''s ph is one of X B E i I M s f b e C n (perfetto-json.md, Events; output-contract.md, Events). One row per offending event.';
COMMENT ON COLUMN check_ph.message IS 'What is wrong, one sentence.';
COMMENT ON COLUMN check_ph.seq IS 'The offending event (chk_events.seq).';
