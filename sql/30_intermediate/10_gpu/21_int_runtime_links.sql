-- int_runtime_links: one row per (API call, GPU operation it launched).
--
-- Reads: int_gpu_ops, int_runtime_calls.
-- Invariants: joined on (proc_key, correlation_id), only calls that
-- launched GPU work (int_runtime_calls.launched_gpu_work; all of cat
-- 'cuda_api'). One call may link several operations (CUDA graphs, staged
-- copies); an operation links at most one call.
-- Column comments from: int_gpu_ops, int_runtime_calls.
-- Merge: renumbered

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
WHERE call.launched_gpu_work
-- A correlationId is unique per process among API calls; if an export ever
-- repeats one, link each operation to the latest call that started before it.
QUALIFY row_number() OVER (
    PARTITION BY op.op_id
    ORDER BY (call.start_ns <= op.start_ns) DESC, call.start_ns DESC
) = 1;

COMMENT ON TABLE int_runtime_links IS 'One row per (API call, GPU operation it launched).';
COMMENT ON COLUMN int_runtime_links.op_cat IS 'int_gpu_ops.cat of the operation.';
COMMENT ON COLUMN int_runtime_links.device_id IS 'Device of the operation.';
COMMENT ON COLUMN int_runtime_links.projection IS 'int_gpu_ops.projection of the operation.';
