-- trace_size_grid: the time buckets the JSON writer measures its bytes in,
-- and the limit a part of the JSON trace is kept under (one row).
--
-- Reads: int_slices, trace_selection.
-- Invariants: buckets time buckets of equal width cover [lo_ns, hi_ns),
-- the slice starts the selection keeps (--window narrows it); an event's
-- bucket is that of its part_ns, clamped to 0..buckets-1, so every event
-- with a slice has one (trace_events_parted.size_bucket). A part of
-- a split trace starts at a bucket's start: the finer the grid, the closer
-- a part comes to the limit; 1,000 buckets keep the cut (trace_parts, a
-- greedy pass over them) to milliseconds.
-- Template variable: max_json_bytes (integer, CLI --max-json-size).
-- Role: json-size-grid (the JSON writer stops compressing a one-part
-- attempt past max_json_bytes: nsys_duck/writers.py)
-- Columns: lo_ns BIGINT, hi_ns BIGINT, buckets INTEGER, max_json_bytes BIGINT

CREATE OR REPLACE TABLE trace_size_grid AS
WITH starts AS (
    SELECT min(start_ns) AS first_ns, max(start_ns) AS last_ns FROM int_slices
),
span AS (
    SELECT
        greatest(s.first_ns, coalesce(sel.window_start_ns, s.first_ns)) AS lo_ns,
        least(s.last_ns + 1, coalesce(sel.window_end_ns, s.last_ns + 1)) AS hi_ns
    FROM starts AS s, trace_selection AS sel
)
SELECT
    CAST(coalesce(lo_ns, 0) AS BIGINT) AS lo_ns,
    -- at least 1 ns wide: a capture, or a window, with one slice start
    CAST(greatest(coalesce(hi_ns, 0), coalesce(lo_ns, 0) + 1) AS BIGINT) AS hi_ns,
    CAST(1000 AS INTEGER) AS buckets,
    CAST({{ max_json_bytes }} AS BIGINT) AS max_json_bytes
FROM span;

COMMENT ON TABLE trace_size_grid IS 'The time buckets the JSON writer measures its bytes in, and the limit (--max-json-size) a part of the JSON trace is kept under; one row.';
COMMENT ON COLUMN trace_size_grid.lo_ns IS 'Start of bucket 0: the first slice start the selection keeps, UTC-epoch ns.';
COMMENT ON COLUMN trace_size_grid.hi_ns IS 'End (exclusive) of the last bucket: after the last slice start the selection keeps, UTC-epoch ns.';
COMMENT ON COLUMN trace_size_grid.buckets IS 'Number of equal time buckets in [lo_ns, hi_ns).';
COMMENT ON COLUMN trace_size_grid.max_json_bytes IS 'Uncompressed bytes a JSON file is kept under (CLI --max-json-size); a part is cut before the bucket that would take it past.';
