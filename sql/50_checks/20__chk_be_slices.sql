-- _chk_be_slices: every B with the E that closes it (a B/E slice), or
-- with no E when it is never closed.
--
-- Reads: _chk_be_events.
-- Invariants: one row per B event. end_seq/end_ns/end_name/end_cat are the
-- closing E's (NULL: never closed). matched is TRUE when that E's name and
-- cat equal the B's (an E without name or cat matches any). One window
-- over the B/E events (B and its E are neighbours within (pid, tid,
-- level)).

CREATE OR REPLACE VIEW _chk_be_slices AS
WITH paired AS (
    SELECT *,
        lead(seq) OVER lvl AS end_seq, lead(ts_ns) OVER lvl AS end_ns,
        lead(name) OVER lvl AS end_name, lead(cat) OVER lvl AS end_cat,
        lead(ph) OVER lvl AS next_ph
    FROM _chk_be_events
    WHERE NOT ignored
    WINDOW lvl AS (PARTITION BY pid, tid, level ORDER BY pos)
)
SELECT pid, tid, seq, ts_ns AS start_ns, name, cat,
    CASE WHEN next_ph = 'E' THEN end_seq END AS end_seq,
    CASE WHEN next_ph = 'E' THEN end_ns END AS end_ns,
    CASE WHEN next_ph = 'E' THEN end_name END AS end_name,
    CASE WHEN next_ph = 'E' THEN end_cat END AS end_cat,
    next_ph = 'E'
        AND (end_name IS NULL OR end_name IS NOT DISTINCT FROM name)
        AND (end_cat IS NULL OR end_cat IS NOT DISTINCT FROM cat) AS matched
FROM paired
WHERE ph = 'B';

COMMENT ON VIEW _chk_be_slices IS 'Private to the check_* views: each B with the E that closes it (end_* NULL: never closed; matched: same name and cat).';
