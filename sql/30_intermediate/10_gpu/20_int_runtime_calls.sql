-- int_runtime_calls: the CUDA runtime and driver API calls the trace draws
-- (every call of stg_runtime_calls), each with a call_id and its cat.
--
-- Reads: int_gpu_ops, stg_gpu_syncs, stg_runtime_calls.
-- Invariants: one row per stg_runtime_calls row: every class 0/1 call is
-- drawn on its thread's CUDA API track, as Nsight's CUDA API row shows them
-- (output-contract.md, Tracks 5.); backtrace twins are already gone. The
-- join key is (proc_key, correlation_id): correlationId is per process
-- (nsys-tables.md 4.1, trap 7). launched_gpu_work: a GPU operation carries
-- the call's key (the calls int_runtime_links and the NVTX projection
-- read). cat: 'cuda_sync' for a synchronization call that launched no GPU
-- work (is_sync: the names of sync_apis; or has_gpu_sync: a GPU-side
-- synchronization row in stg_gpu_syncs, e.g. event synchronize, stream wait
-- event, and every synchronizing call when StringIds is missing), else
-- 'cuda_api' (launches, copies, allocations, stream, event and graph
-- calls). One call may link several operations (CUDA graphs, staged
-- copies); an operation links at most one call (int_runtime_links). Every
-- column of stg_runtime_calls is kept (return_value: args.returnValue of
-- the API slice).
-- Column comments from: stg_runtime_calls.

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
    calls.*,
    CASE WHEN (is_sync OR has_gpu_sync) AND NOT launched_gpu_work
        THEN 'cuda_sync' ELSE 'cuda_api' END AS cat
FROM calls;

COMMENT ON TABLE int_runtime_calls IS 'The CUDA runtime and driver API calls the trace draws (every call of stg_runtime_calls), each with a call_id and its cat.';
COMMENT ON COLUMN int_runtime_calls.call_id IS 'API call id (int_runtime_calls.call_id).';
COMMENT ON COLUMN int_runtime_calls.is_sync IS 'A synchronization call by its name (api_base in sync_apis): cat cuda_sync unless it launched GPU work.';
COMMENT ON COLUMN int_runtime_calls.launched_gpu_work IS 'A GPU operation (int_gpu_ops) carries the call''s (proc_key, correlation_id): a launch or copy, linked by int_runtime_links.';
COMMENT ON COLUMN int_runtime_calls.has_gpu_sync IS 'The call has a GPU-side synchronization record (stg_gpu_syncs).';
COMMENT ON COLUMN int_runtime_calls.cat IS 'cuda_sync (a synchronization call without GPU work) or cuda_api (every other call: launches, copies, allocations, stream, event and graph calls).';
