-- kineto_trace_headers: per rank, the text of its Kineto trace file up to
-- the first event: {"schemaVersion": 1, "distributedInfo": {...},
-- "deviceProperties": [...], ..., "traceEvents": [ and a newline.
--
-- Reads: int_device_properties, int_gpu_ops, kineto_ranks, trace_base.
-- Invariants (Kineto's ChromeTraceLogger, what HTA reads): one line, the
-- first of the file, so HTA's rank lookup (the regex "rank":\s+(\d+) over
-- the file's lines, the first match wins) finds distributedInfo.rank
-- there: written "rank": R with a space. distributedInfo holds rank and
-- world_size (no backend: the export says nothing of NCCL).
-- deviceProperties: one object per device the rank's GPU work ran on, by
-- device id, with Kineto's keys (id, name, totalGlobalMem, computeMajor,
-- computeMinor, numSms, warpSize, maxThreadsPerBlock,
-- maxThreadsPerMultiprocessor, regsPerBlock, regsPerMultiprocessor,
-- sharedMemPerBlock, sharedMemPerBlockOptin, sharedMemPerMultiprocessor)
-- where TARGET_INFO_GPU has the value (a key without one is left out).
-- baseTimeNanoseconds is trace_base.base_ns (UTC epoch ns): every ts of the
-- file is in us after it, as Kineto writes relative times. In a merge the
-- devices of a rank are those of its report.
-- Role: kineto-headers
-- Columns: rank INTEGER, file_name VARCHAR, header_json VARCHAR
-- Python reads: ORDER BY rank
{% set merged = merge_relations is defined %}

CREATE OR REPLACE VIEW kineto_trace_headers AS
WITH devices AS (
    SELECT DISTINCT
        {{ 'report' if merged else 'NULL::VARCHAR' }} AS report,
        proc_key,
        device_id
    FROM int_gpu_ops
),
props AS (
    SELECT
        {{ 'report' if merged else 'NULL::VARCHAR' }} AS report,
        device_id,
        '{"id": ' || CAST(device_id AS VARCHAR)
            || ', "name": ' || to_json(gpu_name)
            || coalesce(', "totalGlobalMem": ' || CAST(total_memory AS VARCHAR), '')
            || coalesce(', "computeMajor": ' || CAST(compute_major AS VARCHAR), '')
            || coalesce(', "computeMinor": ' || CAST(compute_minor AS VARCHAR), '')
            || coalesce(', "numSms": ' || CAST(sm_count AS VARCHAR), '')
            || coalesce(', "warpSize": ' || CAST(threads_per_warp AS VARCHAR), '')
            || coalesce(', "maxThreadsPerBlock": '
                || CAST(max_threads_per_block AS VARCHAR), '')
            || coalesce(', "maxThreadsPerMultiprocessor": '
                || CAST(max_warps_per_sm * threads_per_warp AS VARCHAR), '')
            || coalesce(', "regsPerBlock": ' || CAST(max_registers_per_block AS VARCHAR), '')
            || coalesce(', "regsPerMultiprocessor": '
                || CAST(max_registers_per_sm AS VARCHAR), '')
            || coalesce(', "sharedMemPerBlock": ' || CAST(max_shmem_per_block AS VARCHAR), '')
            || coalesce(', "sharedMemPerBlockOptin": '
                || CAST(max_shmem_per_block_optin AS VARCHAR), '')
            || coalesce(', "sharedMemPerMultiprocessor": '
                || CAST(max_shmem_per_sm AS VARCHAR), '')
            || '}' AS property_json
    FROM int_device_properties
),
per_rank AS (
    SELECT
        r.rank,
        string_agg(p.property_json, ', ' ORDER BY d.device_id) AS properties_json
    FROM kineto_ranks AS r
    INNER JOIN devices AS d
        ON d.report IS NOT DISTINCT FROM r.report AND d.proc_key = r.proc_key
    INNER JOIN props AS p
        ON p.report IS NOT DISTINCT FROM d.report AND p.device_id = d.device_id
    GROUP BY r.rank
)
SELECT
    r.rank,
    r.file_name,
    '{"schemaVersion": 1, "distributedInfo": {"rank": ' || CAST(r.rank AS VARCHAR)
        || ', "world_size": ' || CAST(r.world_size AS VARCHAR) || '}'
        || ', "deviceProperties": [' || coalesce(pr.properties_json, '') || ']'
        || ', "baseTimeNanoseconds": ' || CAST(b.base_ns AS VARCHAR)
        || ', "displayTimeUnit": "ms"'
        || ', "traceName": ' || to_json(r.file_name)
        || ', "traceEvents": [' || chr(10) AS header_json
FROM kineto_ranks AS r
CROSS JOIN trace_base AS b
LEFT JOIN per_rank AS pr ON pr.rank = r.rank;

COMMENT ON VIEW kineto_trace_headers IS 'Per rank, the first line of its Kineto trace file: schemaVersion, distributedInfo (rank, world_size), deviceProperties, baseTimeNanoseconds, and the opening of traceEvents.';
COMMENT ON COLUMN kineto_trace_headers.rank IS 'The rank (kineto_ranks.rank).';
COMMENT ON COLUMN kineto_trace_headers.file_name IS 'The rank''s file in NAME.kineto/.';
COMMENT ON COLUMN kineto_trace_headers.header_json IS 'The file''s text up to and including "traceEvents": [ and a newline.';
