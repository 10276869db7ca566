-- trace_part_starts: the start of each part of a split JSON trace but the
-- first, in one list, for trace_part_of(starts, ts) (00_macros).
--
-- Reads: trace_parts.
-- Invariants: one row; starts = trace_parts.start_ns of parts 2..N in part
-- (= time) order, [] when the trace is one part. A view, as trace_parts
-- is: what the JSON writer measures changes it (trace_json_sizes).

CREATE OR REPLACE VIEW trace_part_starts AS
SELECT coalesce(list(start_ns ORDER BY part) FILTER (WHERE start_ns IS NOT NULL),
    CAST([] AS BIGINT[])) AS starts
FROM trace_parts;

COMMENT ON VIEW trace_part_starts IS 'Start (UTC-epoch ns) of parts 2..N of a split JSON trace, in order; one row.';
COMMENT ON COLUMN trace_part_starts.starts IS 'trace_parts.start_ns of parts 2..N in order; [] for one part.';
