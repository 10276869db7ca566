-- trace_parts: the consecutive time windows the JSON trace is written in,
-- each estimated under max_json_bytes of uncompressed JSON (CLI
-- --max-json-size); one row (part 1, open at both ends) when it all fits.
--
-- Reads: trace_events_selected, int_slices_on_tracks.
-- Invariants: parts are numbered 1..N in time order; part k holds the
-- events whose slice starts in [start_ns, end_ns) (NULL: open), plus all
-- metadata; a flow is in a part when both its slices are. est_json_bytes
-- is the part's estimated size, in 1,000 time buckets: exact below 2M
-- slices; above, metadata exact and the other events from a 1-in-61
-- sample by slice start (part_ns % 61 = 0), times 61. A part
-- is cut before the bucket that would take its estimate past FILL of the
-- limit (room for the sample's error), so no part is estimated past it; a
-- bucket alone above it is a part of its own.
-- Template variable: max_json_bytes (integer).
-- Which part an event is in: trace_part_of(trace_part_starts.starts, ts).
-- Role: json-parts (one JSON file per part: formats.py)
-- Python reads: ORDER BY part

CREATE OR REPLACE TABLE trace_parts AS
WITH RECURSIVE params AS (
    SELECT
        -- exact below 2M slices (cheap there), else 1 slice start in 61
        CASE WHEN (SELECT count(*) FROM int_slices_on_tracks) < 2000000
            THEN 1 ELSE 61 END AS sample,
        0.85 AS fill, 1000 AS buckets,
        CAST({{ max_json_bytes }} AS BIGINT) AS max_json_bytes
),
meta AS (
    SELECT coalesce(sum(strlen(event_json) + 2), 0) AS bytes
    FROM trace_events_selected
    WHERE part_ns IS NULL
),
sampled AS (
    SELECT part_ns, strlen(event_json) + 2 AS bytes
    FROM trace_events_selected, params
    WHERE part_ns % params.sample = 0
),
span AS (
    SELECT min(part_ns) AS lo, max(part_ns) + 1 AS hi FROM sampled
),
bucketed AS (
    SELECT
        CAST(floor((s.part_ns - span.lo) * p.buckets
            / (span.hi - span.lo)) AS BIGINT) AS bucket,
        sum(s.bytes) * any_value(p.sample) AS bytes
    FROM sampled AS s, span, params AS p
    GROUP BY ALL
),
total AS (
    SELECT coalesce(sum(bytes), 0) AS bytes FROM bucketed
),
capacity AS (
    -- what a part's events may take: FILL of the limit, less the metadata
    -- every part repeats
    SELECT greatest(p.max_json_bytes * p.fill - meta.bytes, 1) AS bytes
    FROM params AS p, meta
),
ordered AS (
    SELECT bucket, bytes, row_number() OVER (ORDER BY bucket) AS k
    FROM bucketed
),
-- greedy, in time order (at most `buckets` rows): a bucket opens a new part
-- when it would take the current one past the capacity, so every part is
-- under it but a bucket alone above it
cut (k, bucket, bytes, slot, filled) AS (
    SELECT k, bucket, bytes, 1, bytes FROM ordered WHERE k = 1
    UNION ALL
    SELECT o.k, o.bucket, o.bytes,
        CASE WHEN c.filled + o.bytes > capacity.bytes THEN c.slot + 1 ELSE c.slot END,
        CASE WHEN c.filled + o.bytes > capacity.bytes
            THEN o.bytes ELSE c.filled + o.bytes END
    FROM cut AS c
    INNER JOIN ordered AS o ON o.k = c.k + 1
    CROSS JOIN capacity
),
parts AS (
    SELECT dense_rank() OVER (ORDER BY slot) AS part,
        min(bucket) AS first_bucket, sum(bytes) AS bytes
    FROM cut
    GROUP BY slot
),
split AS (
    SELECT total.bytes + meta.bytes > p.max_json_bytes AS is_split
    FROM total, meta, params AS p
)
SELECT
    CAST(part AS INTEGER) AS part,
    CASE WHEN part > 1 THEN span.lo + CAST(ceil(first_bucket
        * (span.hi - span.lo) / p.buckets) AS BIGINT) END AS start_ns,
    CAST(lead(CASE WHEN part > 1 THEN span.lo + CAST(ceil(first_bucket
        * (span.hi - span.lo) / p.buckets) AS BIGINT) END)
        OVER (ORDER BY part) AS BIGINT) AS end_ns,
    CAST(parts.bytes + meta.bytes AS BIGINT) AS est_json_bytes
FROM parts, span, params AS p, meta, split
WHERE split.is_split
UNION ALL
SELECT 1, NULL, NULL, CAST(total.bytes + meta.bytes AS BIGINT)
FROM total, meta, split
WHERE NOT split.is_split
ORDER BY part;

COMMENT ON TABLE trace_parts IS 'The consecutive time windows the JSON trace is written in, each estimated under --max-json-size; one open row when it all fits.';
COMMENT ON COLUMN trace_parts.part IS 'Part number, 1..N in time order (NAME.part-001.perfetto.json.gz, ...).';
COMMENT ON COLUMN trace_parts.start_ns IS 'First slice start of the part, UTC-epoch ns; NULL: open (part 1).';
COMMENT ON COLUMN trace_parts.end_ns IS 'Slice starts of the part are before this, UTC-epoch ns; NULL: open (last part).';
COMMENT ON COLUMN trace_parts.est_json_bytes IS 'Estimated uncompressed JSON bytes of the part (metadata exact, the rest from a 1-in-61 sample by slice start).';
