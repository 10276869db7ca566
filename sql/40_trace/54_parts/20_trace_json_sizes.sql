-- trace_json_sizes: the uncompressed bytes of the JSON trace per size
-- bucket, as the JSON writer wrote them (the write is the measurement: no
-- stage formats the events to estimate their size).
--
-- Reads: nothing (created empty).
-- Invariants: empty until the JSON writer (nsys_duck/writers.py) has
-- written the trace as one part; then one row per bucket of
-- trace_size_grid that holds an event (size_bucket 0..buckets-1) and one
-- row for what every part holds (size_bucket NULL: the metadata and the
-- array's opening "[\n"), bytes = the events' text and its ",\n"
-- separator (the closing "\n]" takes the last one's place), so a part's
-- bytes are its file's uncompressed size. It stays empty when the run
-- writes no JSON (--format pftrace or kineto): trace_parts is then one
-- part. A trace under the limit is written once; past it the writer stops
-- compressing, measures to the end, and writes the parts trace_parts cuts
-- from these rows.
-- Role: json-sizes (the JSON writer inserts its measurement)
-- Columns: size_bucket INTEGER, bytes BIGINT

CREATE OR REPLACE TABLE trace_json_sizes (
    size_bucket INTEGER,
    bytes BIGINT
);

COMMENT ON TABLE trace_json_sizes IS 'Uncompressed bytes of the JSON trace per size bucket (trace_size_grid), as the JSON writer wrote them; empty when no JSON was written.';
COMMENT ON COLUMN trace_json_sizes.size_bucket IS 'Bucket of trace_size_grid (0..buckets-1), by the start of the slice an event belongs to; NULL: what every part holds (the metadata, the array''s opening bracket).';
COMMENT ON COLUMN trace_json_sizes.bytes IS 'Bytes of the bucket''s events in the JSON, each with its ",\n" separator.';
