-- int_runtime_calls: the API calls the trace draws, each with a call_id;
-- int_runtime_links: one row per (API call, GPU operation it launched).
--
-- Reads: stg_runtime_calls, int_gpu_ops, stg_gpu_syncs.
-- Invariants: the join key is (proc_key, correlation_id): correlationId is
-- per process (nsys-tables.md 4.1, trap 7); backtrace twins are already
-- gone. A call is kept when it launched GPU work (cat 'cuda_api') or is a
-- synchronization call (cat 'cuda_sync'): one the name list of
-- stg_runtime_calls marks (device and stream synchronize), or one that has a
-- GPU-side synchronization row (stg_gpu_syncs: event synchronize, stream
-- wait event... and every synchronizing call when StringIds is missing).
-- Other calls (allocations, event records...) are not drawn. One call may link several operations (CUDA
-- graphs, staged copies); an operation links at most one call.

CREATE OR REPLACE TABLE int_runtime_calls AS
WITH calls AS (
    SELECT
        call.*,
        -- a semi join: does any GPU operation carry this call's key?
        EXISTS (
            SELECT 1 FROM int_gpu_ops AS op
            WHERE op.proc_key = call.proc_key
                AND op.correlation_id = call.correlation_id
        ) AS launched_gpu_work,
        EXISTS (
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

CREATE OR REPLACE TABLE int_runtime_links AS
SELECT
    call.call_id,
    op.op_id,
    op.cat AS op_cat,
    op.device_id,
    op.projection
FROM int_runtime_calls AS call
JOIN int_gpu_ops AS op
    ON op.proc_key = call.proc_key
    AND op.correlation_id = call.correlation_id
WHERE call.cat = 'cuda_api'
-- A correlationId is unique per process among API calls; if an export ever
-- repeats one, link each operation to the latest call that started before it.
QUALIFY row_number() OVER (
    PARTITION BY op.op_id
    ORDER BY (call.start_ns <= op.start_ns) DESC, call.start_ns DESC
) = 1;
