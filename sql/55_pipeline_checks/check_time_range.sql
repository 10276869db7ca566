-- check_time_range: emitted times outside [0, 2^42) µs of the trace's time
-- base, and a time base that is no whole second (zero rows when every
-- slice and flow end is placed exactly by Perfetto).
--
-- Reads: int_slices, trace_base.
-- Invariants: the rule (output-contract.md, Time): base_ns is a whole second
-- (the earliest emitted time, or the session start, rounded down), and every
-- JSON time lies in [0, 2^42) µs after it (Perfetto drops negative times
-- and is ns-exact only below 2^42 µs = 4398046511104000 ns): the start and
-- end of each slice, which bound the flow ends (check_flow_targets puts
-- each end inside its slice). trace_base refuses a longer trace; this
-- catches an edited stage that moves the base or a slice. seq: the event
-- as chk_events numbers it.

CREATE OR REPLACE VIEW check_time_range AS
WITH times AS (
    SELECT
        -8 * slices.slice_id - 5 AS seq,
        slices.cat || ' ' || slices.name AS what,
        slices.start_ns, slices.end_ns
    FROM int_slices AS slices
)

SELECT
    times.what || ' [' || _chk_us(times.start_ns - trace_base.base_ns) || ' µs' || ', '
    || _chk_us(times.end_ns - trace_base.base_ns) || ' µs'
    || ') lies outside [0, 2^42) µs of the time base' AS message,
    times.seq
FROM times, trace_base
WHERE times.start_ns < trace_base.base_ns
    OR times.end_ns - trace_base.base_ns >= 4398046511104000
UNION ALL
SELECT
    'the time base ' || CAST(base_ns AS VARCHAR)
    || ' ns is not a whole second', NULL
FROM trace_base
WHERE base_ns % 1000000000 <> 0;

COMMENT ON VIEW check_time_range IS 'Contract check (output-contract.md, Time): the time base is a whole second and every slice and flow end lies in [0, 2^42) µs after it, where Perfetto places times exactly. Rows = violations (message, seq as chk_events numbers the event).';
