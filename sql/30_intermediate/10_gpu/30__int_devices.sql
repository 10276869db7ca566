-- _int_devices: the GPU devices of the trace and their names (private
-- helper of int_homes).
--
-- Reads: int_gpu_ops, stg_cuda_events, stg_gpu_syncs, stg_gpus.
-- Invariants: devices come from GPU activity rows only (kernels, copies,
-- memsets, graph executions, synchronization and CUDA event records):
-- TARGET_INFO_GPU lists idle GPUs too (trap 13) and only supplies the GPU
-- name, matched on id = deviceId (as NVIDIA's cuda_gpu_trace does); a
-- device it does not list (schema 3.25 exports may lack the table) is
-- named 'GPU <deviceId>'. One row per device_id.

CREATE OR REPLACE TABLE _int_devices AS
SELECT
    device_id,
    coalesce((SELECT any_value(nullif(trim(gpu.gpu_name), ''))
        FROM stg_gpus AS gpu WHERE gpu.device_id = active.device_id),
        'GPU ' || CAST(active.device_id AS VARCHAR)) AS gpu_name
FROM (
    SELECT device_id FROM int_gpu_ops
    UNION
    SELECT device_id FROM stg_gpu_syncs
    UNION
    SELECT device_id FROM stg_cuda_events
) AS active;

COMMENT ON TABLE _int_devices IS 'The GPU devices of the trace and their names (private helper of int_homes).';
