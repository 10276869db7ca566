-- trace_base: the time origin of the JSON trace (one row).
--
-- Reads: int_slices, stg_export_info.
-- Invariants (output-contract.md, Time): base_ns = the earliest emitted
-- timestamp, or the session start (TARGET_INFO_SESSION_START_TIME) when
-- that is not later and less than a day before it, rounded DOWN (toward
-- minus infinity) to a whole second. The base comes from the events, so an
-- export made with --ts-shift (negative, or many days: the session start
-- is not shifted) still gives every JSON time in [0, 2^42) us, where
-- Perfetto is ns-exact. Flow endpoints lie inside slices, so slices bound
-- every emitted time. A trace longer than 2^42 us (50.9 days) cannot be
-- shown exactly: the conversion is refused here with one sentence
-- (error('refuse: ...'), see nsys_duck/pipeline.py).
-- first_ns: the earliest slice start (every emitted time lies in a slice),
-- which Perfetto takes as the trace's start (trace_bounds.start_ts) and
-- ui.perfetto.dev shows as 0; --window counts from it (trace_selection).
-- Columns: base_ns BIGINT, first_ns BIGINT
-- Role: time-base

CREATE OR REPLACE TABLE trace_base AS
WITH span AS (
    SELECT min(start_ns) AS first_ns, max(end_ns) AS last_ns
    FROM int_slices
),
origin AS (
    SELECT
        CASE
            WHEN span.first_ns IS NULL THEN coalesce(x.session_start_ns, 0)
            WHEN x.session_start_ns <= span.first_ns
                AND span.first_ns - x.session_start_ns < 86400000000000
                THEN x.session_start_ns
            ELSE span.first_ns
        END AS origin_ns,
        span.first_ns, span.last_ns
    FROM span, stg_export_info AS x
),
based AS (
    SELECT
        -- floor to a whole second, also for negative times (DuckDB's %
        -- keeps the sign of the dividend)
        origin_ns - (((origin_ns % 1000000000) + 1000000000) % 1000000000)
            AS base_ns,
        first_ns, last_ns
    FROM origin
)
SELECT
    CASE
        WHEN last_ns - base_ns >= 4398046511104000
            THEN error('refuse: the events span '
                || CAST((last_ns - base_ns) // 86400000000000 AS VARCHAR)
                || ' days, more than Perfetto can place exactly (2^42 us, '
                || 'about 50.9 days); nothing was published')
        ELSE base_ns
    END AS base_ns,
    coalesce(first_ns, base_ns) AS first_ns
FROM based;

COMMENT ON TABLE trace_base IS 'The time origin of the JSON trace (one row).';
COMMENT ON COLUMN trace_base.base_ns IS 'Time origin: JSON ts 0 in UTC-epoch ns (a whole second).';
COMMENT ON COLUMN trace_base.first_ns IS 'The earliest slice start, UTC-epoch ns: where Perfetto starts the trace (the UI''s 0), the origin of --window; base_ns when there is no slice.';
