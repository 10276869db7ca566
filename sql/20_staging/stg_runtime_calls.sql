-- stg_runtime_calls: CUDA runtime and driver API calls, one row per call.
--
-- Reads: _stg_runtime_call_rows, nsys.StringIds, stg_export_info,
-- sync_apis.
-- Invariants: only eventClass 0 (runtime) and 1 (driver): the class-67
-- backtrace twins would double every link (nsys-tables.md 1.5, trap 6).
-- api_name drops the CUPTI callback version (_v7000, _v10000) but keeps a
-- driver's real _v2; api_base also drops _ptsz/_ptds. is_sync marks the
-- synchronization calls, drawn as cuda_sync even without a GPU-side
-- synchronization row: the names of the domain table sync_apis (edit a row
-- there). Every row is drawn (int_runtime_calls).
-- correlation_id 0/NULL never links (nsys-tables.md 4.4). Rows with a
-- skip_reason (_stg_runtime_call_rows: NULL times, end < start, a NULL
-- eventClass or globalTid) are NOT here: stg_skipped_rows counts them.
-- Names are resolved and classified once per distinct nameId, not per call.
-- Times are UTC-epoch ns (+ stg_export_info.time_offset_ns). Without
-- StringIds every name is 'cudaApi#N' and is_sync is false; calls that have
-- a GPU-side synchronization row are still cuda_sync (int_runtime_calls).
-- return_value: the call's returnValue (cudaError_t for runtime calls,
-- CUresult for driver calls): 0 is success, any other value a failed call
-- (args.returnValue); NULL when the export has none.

CREATE OR REPLACE VIEW stg_runtime_calls AS
WITH api_names AS (
    SELECT
        name_id,
        api_full_name,
        cuda_api_unversioned(api_full_name) AS api_name,
        cuda_api_base(api_full_name) AS api_base,
        cuda_api_base(api_full_name) IN (SELECT api_name FROM sync_apis)
            AS is_sync
    FROM (
        SELECT
            ids.name_id,
            clean_text(coalesce(name_str.value,
                'cudaApi#' || CAST(ids.name_id AS VARCHAR), '[unnamed API]'))
                AS api_full_name
        FROM (
            SELECT DISTINCT nameId AS name_id
            FROM _stg_runtime_call_rows
        ) AS ids
        LEFT JOIN nsys.StringIds AS name_str ON name_str.id = ids.name_id
    )
)
SELECT
    r.start + x.time_offset_ns AS start_ns,
    r."end" + x.time_offset_ns AS end_ns,
    r.eventClass AS event_class,
    CAST(r.globalTid AS BIGINT) AS global_tid,
    nsys_proc_key(r.globalTid) AS proc_key,
    nsys_os_pid(r.globalTid) AS os_pid,
    nsys_os_tid(r.globalTid) AS os_tid,
    nullif(r.correlationId, 0) AS correlation_id,
    n.api_full_name,
    n.api_name,
    n.api_base,
    n.is_sync,
    CAST(r.returnValue AS BIGINT) AS return_value
FROM _stg_runtime_call_rows AS r
CROSS JOIN stg_export_info AS x
JOIN api_names AS n ON n.name_id IS NOT DISTINCT FROM r.nameId
WHERE r.skip_reason IS NULL AND r.eventClass IN (0, 1);

COMMENT ON VIEW stg_runtime_calls IS 'CUDA runtime and driver API calls, one row per call.';
COMMENT ON COLUMN stg_runtime_calls.start_ns IS 'Start, UTC-epoch ns (Nsight''s clock).';
COMMENT ON COLUMN stg_runtime_calls.end_ns IS 'End, UTC-epoch ns (>= start_ns).';
COMMENT ON COLUMN stg_runtime_calls.event_class IS 'CUPTI eventClass: 0 runtime, 1 driver.';
COMMENT ON COLUMN stg_runtime_calls.global_tid IS 'Nsight globalTid of the thread.';
COMMENT ON COLUMN stg_runtime_calls.proc_key IS 'Process key globalPid/globalTid >> 24 (PID, VM and hardware id): the scope of correlationId.';
COMMENT ON COLUMN stg_runtime_calls.os_pid IS 'OS process id.';
COMMENT ON COLUMN stg_runtime_calls.os_tid IS 'OS thread id.';
COMMENT ON COLUMN stg_runtime_calls.correlation_id IS 'CUPTI correlationId (0 read as NULL: never links).';
COMMENT ON COLUMN stg_runtime_calls.api_full_name IS 'API name as exported (with its CUPTI callback version, e.g. cudaLaunchKernel_v7000).';
COMMENT ON COLUMN stg_runtime_calls.api_name IS 'API name without the CUPTI callback version (a driver''s real _v2 kept): the name drawn.';
COMMENT ON COLUMN stg_runtime_calls.api_base IS 'api_name without _ptsz/_ptds: the name sync_apis lists.';
COMMENT ON COLUMN stg_runtime_calls.is_sync IS 'A synchronization call by its name (api_base in sync_apis): cuda_sync even without a GPU-side synchronization row.';
COMMENT ON COLUMN stg_runtime_calls.return_value IS 'returnValue: cudaError_t (runtime) or CUresult (driver); 0 success, nonzero a failed call; NULL when not exported.';
