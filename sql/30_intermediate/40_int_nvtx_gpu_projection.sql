-- int_nvtx_gpu_projection: NVTX push/pop ranges projected onto the GPU
-- (the "NVTX Kernel" tracks). One row per (range, device).
--
-- Reads: stg_nvtx_push_pop_ranges, int_runtime_calls, int_runtime_links,
-- int_gpu_ops.
-- Status: placeholder with the final schema and no rows; the projection
-- (Nsight's nvtx_gpu_proj_trace semantics, --nvtx-scope) lands here.
-- Invariants: start_ns/end_ns = [first GPU op start, last GPU op end] of
-- the work the range owns on that device.

CREATE OR REPLACE VIEW int_nvtx_gpu_projection AS
SELECT
    r.nvtx_id,
    CAST(NULL AS BIGINT) AS device_id,
    r.proc_key,
    r.os_pid,
    r.os_tid,
    r.global_tid,
    r.message,
    r.domain_name,
    CAST(NULL AS BIGINT) AS start_ns,
    CAST(NULL AS BIGINT) AS end_ns,
    CAST(NULL AS BIGINT) AS gpu_op_count
FROM stg_nvtx_push_pop_ranges AS r
WHERE FALSE;
