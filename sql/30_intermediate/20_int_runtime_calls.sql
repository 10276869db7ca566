-- int_runtime_calls: the API calls the trace draws, each with a call_id.
--
-- Reads: int_gpu_ops, stg_gpu_syncs, stg_runtime_calls.
-- Invariants: the join key is (proc_key, correlation_id): correlationId is
-- per process (nsys-tables.md 4.1, trap 7); backtrace twins are already
-- gone. A call is kept when it launched GPU work (cat 'cuda_api') or is a
-- synchronization call (cat 'cuda_sync'): one stg_runtime_calls marks
-- is_sync (the names of sync_apis), or one that has a GPU-side
-- synchronization row (stg_gpu_syncs: event synchronize, stream wait
-- event... and every synchronizing call when StringIds is missing). Other
-- calls (allocations, event records...) are not drawn. One call may link
-- several operations (CUDA graphs, staged copies); an operation links at
-- most one call (int_runtime_links). Every column of stg_runtime_calls is
-- kept (return_value: args.returnValue of the API slice).

CREATE OR REPLACE TABLE int_runtime_calls AS
WITH calls AS (
    SELECT
        call.*,
        -- a semi join: does any GPU operation carry this call's key?
        EXISTS (  -- noqa: LT01
            SELECT 1 FROM int_gpu_ops AS op
            WHERE op.proc_key = call.proc_key
                AND op.correlation_id = call.correlation_id
        ) AS launched_gpu_work,
        EXISTS (  -- noqa: LT01
            SELECT 1 FROM stg_gpu_syncs AS sync
            WHERE sync.proc_key = call.proc_key
                AND sync.correlation_id = call.correlation_id
        ) AS has_gpu_sync
    FROM stg_runtime_calls AS call
)
SELECT
    row_number() OVER () AS call_id,
    calls.* EXCLUDE (launched_gpu_work),
    CASE WHEN launched_gpu_work THEN 'cuda_api' ELSE 'cuda_sync' END AS cat
FROM calls
WHERE launched_gpu_work OR is_sync OR has_gpu_sync;

COMMENT ON TABLE int_runtime_calls IS 'The API calls the trace draws, each with a call_id.';
COMMENT ON COLUMN int_runtime_calls.call_id IS 'API call id (int_runtime_calls.call_id).';
COMMENT ON COLUMN int_runtime_calls.start_ns IS 'Start, UTC-epoch ns (Nsight''s clock).';
COMMENT ON COLUMN int_runtime_calls.end_ns IS 'End, UTC-epoch ns (>= start_ns).';
COMMENT ON COLUMN int_runtime_calls.event_class IS 'CUPTI eventClass: 0 runtime, 1 driver.';
COMMENT ON COLUMN int_runtime_calls.global_tid IS 'Nsight globalTid of the thread.';
COMMENT ON COLUMN int_runtime_calls.proc_key IS 'Process key globalPid/globalTid >> 24 (PID, VM and hardware id): the scope of correlationId.';
COMMENT ON COLUMN int_runtime_calls.os_pid IS 'OS process id.';
COMMENT ON COLUMN int_runtime_calls.os_tid IS 'OS thread id.';
COMMENT ON COLUMN int_runtime_calls.correlation_id IS 'CUPTI correlationId (0 read as NULL: never links).';
COMMENT ON COLUMN int_runtime_calls.api_full_name IS 'API name as exported (with its CUPTI callback version, e.g. cudaLaunchKernel_v7000).';
COMMENT ON COLUMN int_runtime_calls.api_name IS 'API name without the CUPTI callback version (a driver''s real _v2 kept): the name drawn.';
COMMENT ON COLUMN int_runtime_calls.api_base IS 'api_name without _ptsz/_ptds: the name sync_apis lists.';
COMMENT ON COLUMN int_runtime_calls.is_sync IS 'A synchronization call kept even without GPU work (api_base in sync_apis).';
COMMENT ON COLUMN int_runtime_calls.has_gpu_sync IS 'The call has a GPU-side synchronization record (stg_gpu_syncs).';
COMMENT ON COLUMN int_runtime_calls.cat IS 'cuda_api (launched GPU work) or cuda_sync (a synchronization call).';
COMMENT ON COLUMN int_runtime_calls.return_value IS 'returnValue: cudaError_t (runtime) or CUresult (driver); 0 success, nonzero a failed call; NULL when not exported.';
