-- _chk_slices: every slice Perfetto draws on a thread track: X events and
-- B/E pairs.
--
-- Reads: chk_events, _chk_be_slices.
-- Invariants: half-open [start_ns, end_ns) in ns, end_ns >= start_ns;
-- seq is the X's or the B's; is_x tells X from B/E. X events without
-- pid, tid, ts or a dur >= 0 and never-closed B are left out (check_number,
-- check_pid_tid and check_be_balance report them).

CREATE OR REPLACE VIEW _chk_slices AS
SELECT pid, tid, seq, ts_ns AS start_ns, ts_ns + dur_ns AS end_ns, TRUE AS is_x, cat, name
FROM chk_events
WHERE ph = 'X' AND pid IS NOT NULL AND tid IS NOT NULL AND ts_ns IS NOT NULL
  AND dur_ns >= 0 AND ts_ns <= 9223372036854775807 - dur_ns
UNION ALL
SELECT pid, tid, seq, start_ns, end_ns, FALSE AS is_x, cat, name
FROM _chk_be_slices
WHERE end_seq IS NOT NULL;

COMMENT ON VIEW _chk_slices IS 'Private to the check_* views: every slice on a thread track (X events and B/E pairs), half-open [start_ns, end_ns).';
