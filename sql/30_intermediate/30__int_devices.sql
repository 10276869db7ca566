-- _int_devices: the GPU devices of the trace and their names (private
-- helper of int_homes).
--
-- Reads: int_gpu_ops, nsys.TARGET_INFO_GPU, stg_cuda_events,
-- stg_gpu_syncs.
-- Invariants: devices come from GPU activity rows only (kernels, copies,
-- memsets, graph executions, synchronization and CUDA event records):
-- TARGET_INFO_GPU lists idle GPUs too (trap 13) and only supplies the GPU
-- name, matched on id = deviceId (as NVIDIA's cuda_gpu_trace does); a
-- device it does not list (schema 3.25 exports may lack the table) is
-- named 'GPU <deviceId>'. One row per device_id.

-- _int_devices: the GPU devices of the trace; int_homes: the trace processes
-- (Perfetto "processes") that hold tracks; _int_cpu_homes: under which homes
-- each profiled process's CPU tracks (NVTX, CUDA API) appear.
--
-- Reads: int_gpu_ops, stg_gpu_syncs, stg_cuda_events, int_runtime_calls,
-- stg_nvtx_events, nsys.TARGET_INFO_GPU, nsys.PROCESSES.
-- Invariants: devices come from GPU activity rows only (kernels, copies,
-- memsets, graph executions, synchronization and CUDA event records):
-- TARGET_INFO_GPU lists idle GPUs too (trap 13) and only supplies the GPU
-- name, matched on id = deviceId (as NVIDIA's cuda_gpu_trace does); a
-- device it does not list (schema 3.25 exports may lack the table) is
-- named 'GPU <deviceId>'. home_id is the
-- device id (>= 0) for a device, and -1 - proc_key for a host process;
-- host homes exist only when the trace has no GPU device at all (CPU-only
-- NVTX captures), so a report always has somewhere to draw. A process with
-- GPU work is shown under each device its work ran on; one without GPU work
-- under every device of the trace (output-contract.md, Tracks): never a
-- "Device -1". json_pid is 1..N in sort order.

CREATE OR REPLACE TABLE _int_devices AS
SELECT
    device_id,
    coalesce((SELECT any_value(nullif(trim(gpu.name), ''))
        FROM nsys.TARGET_INFO_GPU AS gpu WHERE gpu.id = active.device_id),
        'GPU ' || CAST(active.device_id AS VARCHAR)) AS gpu_name
FROM (
    SELECT device_id FROM int_gpu_ops
    UNION
    SELECT device_id FROM stg_gpu_syncs
    UNION
    SELECT device_id FROM stg_cuda_events
) AS active;

COMMENT ON TABLE _int_devices IS 'The GPU devices of the trace and their names (private helper of int_homes).';
