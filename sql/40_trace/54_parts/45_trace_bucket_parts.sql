-- trace_bucket_parts: the part of the JSON trace each time bucket of
-- trace_size_grid goes to, for a writer that routes the rows it kept from a
-- one-part attempt by their size_bucket (nsys_duck/writers.py: the trace is
-- formatted once, also when it is split).
--
-- Reads: trace_parts, trace_size_grid.
-- Invariants: one row per bucket 0..buckets-1; part = the number of parts
-- whose first_bucket is at or before the bucket (at least 1: buckets
-- before part 1's first event hold none), which is trace_part_of of every
-- ns in the bucket, since a part starts at the first ns of its first
-- bucket (trace_size_bucket). One part: every bucket in part 1. A view, as
-- trace_parts is.
-- Role: json-bucket-parts
-- Columns: size_bucket INTEGER, part INTEGER
-- Python reads: ORDER BY size_bucket

CREATE OR REPLACE VIEW trace_bucket_parts AS
SELECT
    CAST(k.size_bucket AS INTEGER) AS size_bucket,
    CAST(greatest((
        SELECT count(*) FROM trace_parts AS p
        WHERE p.first_bucket <= k.size_bucket
    ), 1) AS INTEGER) AS part
FROM trace_size_grid AS g,
    LATERAL range(g.buckets) AS k (size_bucket);

COMMENT ON VIEW trace_bucket_parts IS 'The part of the JSON trace each time bucket of trace_size_grid goes to (one row per bucket): how the writer routes the rows of a one-part attempt into parts without formatting them again.';
COMMENT ON COLUMN trace_bucket_parts.size_bucket IS 'Time bucket of trace_size_grid, 0..buckets-1 (trace_events_parted.size_bucket).';
COMMENT ON COLUMN trace_bucket_parts.part IS 'The part (trace_parts.part) its events are written in.';
