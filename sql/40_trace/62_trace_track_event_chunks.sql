-- trace_track_event_chunks: how the protobuf writer reads
-- trace_track_events: in consecutive ranges of (sequence_id, ts), each
-- sorted on its own, so that no sort holds much more than chunk_bytes of
-- events (one sort of every event with its args ran out of memory at 2GB
-- on the 1M-row pytorch x40 input: 385 MB of args text, most of it the
-- kernels' NVTX paths).
--
-- Reads: int_gpu_op_args, int_slices_on_tracks, trace_selection,
-- trace_kept_pids.
-- Invariants: the ranges [lo, hi) partition every (sequence_id, ts) from
-- the first slice start on, in order (a slice's end lies in its sequence
-- at or after its start, so every event falls in one range, and the events
-- of one sequence at one ts in the same one). A range holds the starts of
-- about chunk_bytes of slices, weighed by their args text (op args,
-- int_slices' own; an API call's, not stored, counted as 96) plus 96 bytes;
-- a small trace is one range. The last hi is 2^63 - 1.
-- Role: pftrace-chunks
-- Columns: lo_sequence_id BIGINT, lo_ts BIGINT, hi_sequence_id BIGINT,
--   hi_ts BIGINT
-- Python reads: ORDER BY lo_sequence_id, lo_ts

CREATE OR REPLACE VIEW trace_track_event_chunks AS
WITH limits AS (
    SELECT 256 * 1024 * 1024 AS chunk_bytes, 9223372036854775807 AS open_end
),
weighed AS (
    SELECT
        s.json_tid + 2 AS sequence_id,
        s.start_ns AS ts,
        96 + coalesce(length(s.args_json), length(op.args_json), 96) AS bytes
    FROM int_slices_on_tracks AS s
    LEFT JOIN int_gpu_op_args AS op ON op.op_id = s.op_id
    WHERE trace_keeps(s.json_pid, s.json_pid, s.start_ns, s.start_ns)
),
running AS (
    SELECT
        sequence_id,
        ts,
        sum(bytes) OVER (ORDER BY sequence_id, ts ROWS UNBOUNDED PRECEDING)
            // (SELECT chunk_bytes FROM limits) AS chunk
    FROM weighed
),
starts AS (
    SELECT min({'s': sequence_id, 't': ts}) AS lo
    FROM running
    GROUP BY chunk
)
SELECT
    lo.s AS lo_sequence_id,
    lo.t AS lo_ts,
    coalesce(lead(lo.s) OVER (ORDER BY lo.s, lo.t),
        (SELECT open_end FROM limits)) AS hi_sequence_id,
    coalesce(lead(lo.t) OVER (ORDER BY lo.s, lo.t),
        (SELECT open_end FROM limits)) AS hi_ts
FROM starts;

COMMENT ON VIEW trace_track_event_chunks IS 'How the protobuf writer reads trace_track_events: consecutive ranges of (sequence_id, ts), each sorted on its own, of about 256 MB of slices each (weighed by their args text); a small trace is one range.';
COMMENT ON COLUMN trace_track_event_chunks.lo_sequence_id IS 'The range starts at (lo_sequence_id, lo_ts), included.';
COMMENT ON COLUMN trace_track_event_chunks.lo_ts IS 'See lo_sequence_id (ns, Nsight''s clock).';
COMMENT ON COLUMN trace_track_event_chunks.hi_sequence_id IS 'The range ends before (hi_sequence_id, hi_ts); 2^63 - 1 for the last.';
COMMENT ON COLUMN trace_track_event_chunks.hi_ts IS 'See hi_sequence_id.';
