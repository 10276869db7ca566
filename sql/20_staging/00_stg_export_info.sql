-- stg_export_info: what made the export and how its times read (one row).
-- (File numbered 00: every other staging view reads time_offset_ns.)
--
-- Reads: nsys.CUPTI_ACTIVITY_KIND_KERNEL,
-- nsys.CUPTI_ACTIVITY_KIND_RUNTIME, nsys.META_DATA_EXPORT,
-- nsys.NVTX_EVENTS, nsys.TARGET_INFO_SESSION_START_TIME.
-- Produces: one row: the exporting nsys version, the export schema version
-- (and its major/minor/micro numbers), whether times were normalized
-- (`nsys export --ts-normalize`), the --ts-shift that was applied, the
-- session start (TARGET_INFO_SESSION_START_TIME.utcEpochNs) and
-- time_offset_ns: what every staging view adds to Nsight's times so they
-- are UTC-epoch ns (output-contract.md, Time).
-- Invariants:
--   * A normalized export already holds epoch ns (EXPORT_CONFIG_TIME_SHIFT =
--     utcEpochNs + --ts-shift): offset 0. A non-normalized one holds
--     session-relative ns (+ --ts-shift): offset = utcEpochNs. So the same
--     report exported either way gives the same absolute ns, and a
--     --ts-shift is kept (it is what the user asked the exporter for).
--   * EXPORT_PARAM_TIME_NORMALIZE decides; an export without it (older or
--     hand-made) counts as normalized when EXPORT_CONFIG_TIME_SHIFT exceeds
--     the --ts-shift (the epoch was added), else when its first event lies
--     past half the session start's epoch value (relative times are small).
--   * Never ANALYSIS_DETAILS: it is not a time origin. A session-relative
--     export without a session start keeps its relative times (offset 0)
--     and says so (time_note, printed as a note).
--   * Schema versions (EXPORT_SCHEMA_VERSION, major.minor.micro): the SQL
--     reads major version 3 only; another major version is refused here, with
--     one sentence, before any other stage runs (error('refuse: ...')). A
--     minor version newer than the newest this SQL was checked against
--     (checked_schema_minor: 3.25, Nsight Systems 2026.2) converts with a
--     one-line note (schema_note), since minor versions add columns and
--     tables. An export without a schema version (hand-made) passes.
-- Merge: renumbered (one row: the first report's, earliest session start)
-- Role: export-info

CREATE OR REPLACE TABLE stg_export_info AS
WITH meta AS (
    SELECT name, any_value(value) AS value
    FROM nsys.META_DATA_EXPORT
    GROUP BY name
),
params AS (
    SELECT
        (SELECT value FROM meta WHERE name = 'EXPORT_PRODUCT_VERSION')
            AS nsys_version,
        (SELECT value FROM meta WHERE name = 'EXPORT_SCHEMA_VERSION')
            AS schema_version,
        (SELECT lower(trim(value)) FROM meta
            WHERE name = 'EXPORT_PARAM_TIME_NORMALIZE') AS normalize_param,
        (SELECT TRY_CAST(value AS BIGINT) FROM meta
            WHERE name = 'EXPORT_PARAM_TIME_SHIFT') AS time_shift_ns,
        (SELECT TRY_CAST(value AS HUGEINT) FROM meta
            WHERE name = 'EXPORT_CONFIG_TIME_SHIFT') AS config_shift_ns,
        (SELECT CAST(min(utcEpochNs) AS BIGINT)
            FROM nsys.TARGET_INFO_SESSION_START_TIME) AS session_start_ns
),
decided AS (
    SELECT
        *,
        CASE
            WHEN normalize_param IN ('true', 'false')
                THEN normalize_param = 'true'
            WHEN config_shift_ns IS NOT NULL
                THEN config_shift_ns <> coalesce(time_shift_ns, 0)
            WHEN session_start_ns IS NULL THEN TRUE
            ELSE coalesce((
                SELECT min(first_ns) FROM (
                    SELECT min(start) AS first_ns
                    FROM nsys.CUPTI_ACTIVITY_KIND_KERNEL
                    UNION ALL
                    SELECT min(start) FROM nsys.CUPTI_ACTIVITY_KIND_RUNTIME
                    UNION ALL
                    SELECT min(start) FROM nsys.NVTX_EVENTS
                )) > session_start_ns // 2, TRUE)
        END AS time_normalized
    FROM params
),
versioned AS (
    SELECT
        *,
        TRY_CAST(split_part(schema_version, '.', 1) AS INTEGER) AS schema_major,
        TRY_CAST(split_part(schema_version, '.', 2) AS INTEGER) AS schema_minor,
        TRY_CAST(split_part(schema_version, '.', 3) AS INTEGER) AS schema_micro,
        3 AS read_schema_major,
        25 AS checked_schema_minor
    FROM decided
)
SELECT
    nsys_version,
    schema_version,
    schema_major,
    schema_minor,
    schema_micro,
    checked_schema_minor,
    CASE
        WHEN schema_version IS NOT NULL
            AND (schema_major IS DISTINCT FROM read_schema_major)
            THEN error('refuse: the export has schema version ' || schema_version
                || ' (made by Nsight Systems ' || coalesce(nsys_version, '?')
                || '); nsys-duck reads export schema '
                || CAST(read_schema_major AS VARCHAR)
                || '.x, what Nsight Systems 2023 to 2026 write')
        WHEN schema_minor > checked_schema_minor
            THEN 'export schema ' || schema_version || ' is newer than the newest '
                || 'nsys-duck was checked with (' || CAST(read_schema_major AS VARCHAR)
                || '.' || CAST(checked_schema_minor AS VARCHAR)
                || '); converted anyway, tables and columns it added are not drawn'
    END AS schema_note,
    time_normalized,
    coalesce(time_shift_ns, 0) AS time_shift_ns,
    session_start_ns,
    CASE WHEN time_normalized THEN 0 ELSE coalesce(session_start_ns, 0) END
        AS time_offset_ns,
    CASE WHEN NOT time_normalized AND session_start_ns IS NULL
        THEN 'the export holds session-relative times and no session start '
            || '(TARGET_INFO_SESSION_START_TIME): times are shown from 0 ns, '
            || 'not UTC'
    END AS time_note
FROM versioned;

COMMENT ON TABLE stg_export_info IS 'The export''s nsys and schema versions, its time normalization and --ts-shift, and time_offset_ns: what staging adds to Nsight times to reach UTC-epoch ns.';
COMMENT ON COLUMN stg_export_info.time_offset_ns IS 'ns added to every Nsight timestamp: 0 for --ts-normalize=true exports, TARGET_INFO_SESSION_START_TIME.utcEpochNs for session-relative ones.';
COMMENT ON COLUMN stg_export_info.nsys_version IS 'Nsight Systems version that wrote the export (EXPORT_PRODUCT_VERSION).';
COMMENT ON COLUMN stg_export_info.schema_version IS 'Export schema version (EXPORT_SCHEMA_VERSION), e.g. 3.7.2.';
COMMENT ON COLUMN stg_export_info.schema_major IS 'Major number of schema_version.';
COMMENT ON COLUMN stg_export_info.schema_minor IS 'Minor number of schema_version.';
COMMENT ON COLUMN stg_export_info.schema_micro IS 'Micro number of schema_version.';
COMMENT ON COLUMN stg_export_info.checked_schema_minor IS 'Newest 3.x minor version this SQL was checked with.';
COMMENT ON COLUMN stg_export_info.schema_note IS 'One-line note when the schema is newer than checked_schema_minor; else NULL.';
COMMENT ON COLUMN stg_export_info.time_normalized IS 'The export holds UTC-epoch times (nsys export --ts-normalize).';
COMMENT ON COLUMN stg_export_info.time_shift_ns IS 'The --ts-shift the export applied, ns.';
COMMENT ON COLUMN stg_export_info.session_start_ns IS 'Session start, UTC-epoch ns (TARGET_INFO_SESSION_START_TIME).';
COMMENT ON COLUMN stg_export_info.time_note IS 'Note when times cannot be made UTC (session-relative export without session start); else NULL.';
