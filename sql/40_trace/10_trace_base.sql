-- trace_base: the time origin of the JSON trace (one row).
--
-- Reads: nsys.TARGET_INFO_SESSION_START_TIME, int_slices.
-- Invariants (output-contract.md, Time): base_ns = the earliest of the
-- session start and every emitted timestamp, rounded DOWN to a whole second,
-- so every JSON ts is >= 0 and far below 2^42 us (Perfetto is ns-exact
-- there). Flow endpoints lie inside slices, so slices bound them.

CREATE OR REPLACE TABLE trace_base AS
WITH candidates AS (
    SELECT CAST(min(utcEpochNs) AS BIGINT) AS t_ns
    FROM nsys.TARGET_INFO_SESSION_START_TIME
    UNION ALL
    SELECT min(start_ns) FROM int_slices
)
SELECT coalesce((min(t_ns) // 1000000000) * 1000000000, 0) AS base_ns
FROM candidates;
