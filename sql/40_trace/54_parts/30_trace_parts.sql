-- trace_parts: the consecutive time windows the JSON trace is written in,
-- each under max_json_bytes of uncompressed JSON (CLI --max-json-size); one
-- row (part 1, open at both ends) when it all fits.
--
-- Reads: trace_json_sizes, trace_size_grid.
-- Invariants: parts are numbered 1..N in time order; part k holds the
-- events whose slice starts in [start_ns, end_ns) (NULL: open), plus all
-- metadata; a flow is in a part when both its slices are. The sizes are
-- what the JSON writer measured writing the trace as one part
-- (trace_json_sizes), so json_bytes is exact: the part's events and what
-- every part repeats (metadata, brackets), its file's uncompressed size
-- but for the flows across two parts a split file drops. Split when the measured total passes max_json_bytes:
-- a greedy pass in time order over the buckets (at most 1,000 rows) opens
-- a new part before the bucket that would take the current one past the
-- limit, so every part is under it but a bucket alone above it. Not yet
-- measured (trace_json_sizes empty: before the JSON is written, or no JSON
-- written): one part, json_bytes NULL.
-- Role: json-parts (one JSON file per part: formats.py)
-- Python reads: ORDER BY part

CREATE OR REPLACE VIEW trace_parts AS
WITH RECURSIVE meta AS (
    SELECT coalesce(sum(bytes), 0) AS bytes
    FROM trace_json_sizes
    WHERE size_bucket IS NULL
),
bucketed AS (
    SELECT size_bucket AS bucket, bytes
    FROM trace_json_sizes
    WHERE size_bucket IS NOT NULL
),
total AS (
    SELECT coalesce(sum(bytes), 0) AS bytes, count(*) AS measured
    FROM trace_json_sizes
),
split AS (
    SELECT t.measured > 0 AND t.bytes > g.max_json_bytes AS is_split,
        -- what a part's events may take: the limit less the metadata every
        -- part repeats
        greatest(g.max_json_bytes - meta.bytes, 1) AS capacity
    FROM total AS t, trace_size_grid AS g, meta
),
ordered AS (
    SELECT b.bucket, b.bytes, row_number() OVER (ORDER BY b.bucket) AS k
    FROM bucketed AS b, split
    WHERE split.is_split
),
-- greedy, in time order: a bucket opens a new part when it would take the
-- current one past the capacity
cut (k, bucket, bytes, slot, filled) AS (
    SELECT k, bucket, bytes, 1, bytes FROM ordered WHERE k = 1
    UNION ALL
    SELECT o.k, o.bucket, o.bytes,
        CASE WHEN c.filled + o.bytes > split.capacity THEN c.slot + 1 ELSE c.slot END,
        CASE WHEN c.filled + o.bytes > split.capacity
            THEN o.bytes ELSE c.filled + o.bytes END
    FROM cut AS c
    INNER JOIN ordered AS o ON o.k = c.k + 1
    CROSS JOIN split
),
parts AS (
    SELECT dense_rank() OVER (ORDER BY slot) AS part,
        min(bucket) AS first_bucket, sum(bytes) AS bytes
    FROM cut
    GROUP BY slot
),
bounds AS (
    -- a part starts where its first bucket starts: the first ns whose
    -- bucket (trace_events_parted.size_bucket) is first_bucket
    SELECT p.part, p.bytes, p.first_bucket,
        CASE WHEN p.part > 1 THEN g.lo_ns + (p.first_bucket * (g.hi_ns - g.lo_ns)
            + g.buckets - 1) // g.buckets END AS start_ns
    FROM parts AS p, trace_size_grid AS g
)
SELECT
    CAST(b.part AS INTEGER) AS part,
    CAST(b.start_ns AS BIGINT) AS start_ns,
    CAST(lead(b.start_ns) OVER (ORDER BY b.part) AS BIGINT) AS end_ns,
    CAST(b.bytes + meta.bytes AS BIGINT) AS json_bytes,
    CAST(CASE WHEN b.part > 1 THEN b.first_bucket ELSE 0 END AS INTEGER)
        AS first_bucket
FROM bounds AS b, meta
UNION ALL
SELECT 1, NULL, NULL,
    CASE WHEN total.measured > 0 THEN CAST(total.bytes AS BIGINT) END, 0
FROM total, split
WHERE NOT split.is_split
ORDER BY part;

COMMENT ON VIEW trace_parts IS 'The consecutive time windows the JSON trace is written in, each under --max-json-size as the writer measured it; one open row when it all fits.';
COMMENT ON COLUMN trace_parts.part IS 'Part number, 1..N in time order (NAME.part-001.perfetto.json.gz, ...).';
COMMENT ON COLUMN trace_parts.start_ns IS 'First slice start of the part, UTC-epoch ns; NULL: open (part 1).';
COMMENT ON COLUMN trace_parts.end_ns IS 'Slice starts of the part are before this, UTC-epoch ns; NULL: open (last part).';
COMMENT ON COLUMN trace_parts.first_bucket IS 'The part''s first time bucket of trace_size_grid (0 for part 1): it holds the events of buckets first_bucket up to the next part''s.';
COMMENT ON COLUMN trace_parts.json_bytes IS 'Uncompressed JSON bytes of the part''s events and of the metadata it repeats, as the writer measured them (a split file drops the flows across parts); NULL before the JSON is written.';
