-- int_devices: the GPU devices of the trace; int_homes: the trace processes
-- (Perfetto "processes") that hold tracks; int_cpu_homes: under which homes
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

CREATE OR REPLACE TABLE int_devices AS
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

CREATE OR REPLACE TABLE int_cpu_processes AS
SELECT proc_key, any_value(os_pid) AS os_pid
FROM (
    SELECT proc_key, os_pid FROM int_runtime_calls
    UNION ALL
    SELECT proc_key, os_pid FROM stg_nvtx_events
)
GROUP BY proc_key;

CREATE OR REPLACE TABLE int_homes AS
WITH homes AS (
    SELECT
        device_id AS home_id,
        'device' AS home_kind,
        device_id,
        NULL::BIGINT AS proc_key,
        'Device ' || CAST(device_id AS VARCHAR)
            || ': ' || clean_text(gpu_name) AS home_name,
        0 AS kind_order,
        device_id AS sort_key
    FROM int_devices
    UNION ALL
    SELECT
        -1 - proc.proc_key,
        'host',
        NULL,
        proc.proc_key,
        'Process ' || CAST(proc.os_pid AS VARCHAR) || coalesce(' ('
            || (SELECT any_value(clean_text(p.name)) FROM nsys.PROCESSES AS p
                WHERE nsys_proc_key(p.globalPid) = proc.proc_key) || ')', ''),
        1,
        proc.os_pid
    FROM int_cpu_processes AS proc
    WHERE NOT EXISTS (SELECT 1 FROM int_devices)
)
SELECT
    row_number() OVER (ORDER BY kind_order, sort_key, home_id) AS json_pid,
    *
FROM homes;

CREATE OR REPLACE TABLE int_cpu_homes AS
WITH own_devices AS (
    SELECT DISTINCT proc_key, device_id FROM int_gpu_ops
)
SELECT proc.proc_key, home.home_id
FROM int_cpu_processes AS proc
JOIN int_homes AS home
    ON (home.home_kind = 'host' AND home.proc_key = proc.proc_key)
    OR (home.home_kind = 'device' AND (
        EXISTS (SELECT 1 FROM own_devices AS own
            WHERE own.proc_key = proc.proc_key
            AND own.device_id = home.device_id)
        OR NOT EXISTS (SELECT 1 FROM own_devices AS own
            WHERE own.proc_key = proc.proc_key)));
