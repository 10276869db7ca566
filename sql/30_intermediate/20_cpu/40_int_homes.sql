-- int_homes: the trace processes (Perfetto "processes") that hold tracks:
-- one per GPU device, then one per host process with CPU-side rows (and
-- one per profiled process when the trace has no GPU device).
--
-- Reads: _int_cpu_processes, _int_devices, int_gpu_ops, int_thread_names,
-- stg_cuda_events, stg_gpu_syncs, stg_processes.
-- Invariants: home_id is the device id (>= 0) for a device, and
-- -1 - proc_key for a host process. A host home exists for every process
-- with OS runtime / cuDNN / cuBLAS calls or thread states (they are drawn
-- once, there, never under a device: output-contract.md, Tracks), and, when
-- the trace has no GPU device at all (CPU-only NVTX captures), for every
-- profiled process, so a report always has somewhere to draw: never a
-- "Device -1". A host home is named as Nsight names the process, 'NAME
-- [PID]' (stg_processes; a process it does not list, as git or sleep
-- started during the capture, by the name of its main thread, tid = pid;
-- 'Process [PID]' without either). json_pid is 1..N in sort order: devices by id, then host
-- processes by OS pid (so process_sort_index puts them after the devices).
-- work_devices: the devices the home's GPU work ran on (its own device;
-- for a host process the devices of its kernels, copies, memsets, graph
-- executions, sync and CUDA event records, empty when it has none), what
-- --devices selects by (trace_kept_pids).
-- Merge: renumbered

CREATE OR REPLACE TABLE int_homes AS
WITH work AS (
    SELECT proc_key, list(DISTINCT device_id ORDER BY device_id) AS devices
    FROM (
        SELECT proc_key, device_id FROM int_gpu_ops
        UNION ALL
        SELECT proc_key, device_id FROM stg_gpu_syncs
        UNION ALL
        SELECT proc_key, device_id FROM stg_cuda_events
    )
    GROUP BY proc_key
),
homes AS (
    SELECT
        device_id AS home_id,
        'device' AS home_kind,
        device_id,
        NULL::BIGINT AS proc_key,
        'Device ' || CAST(device_id AS VARCHAR)
            || ': ' || clean_text(gpu_name) AS home_name,
        0 AS kind_order,
        device_id AS sort_key,
        CAST([device_id] AS BIGINT[]) AS work_devices
    FROM _int_devices
    UNION ALL
    SELECT
        -1 - proc.proc_key,
        'host',
        NULL,
        proc.proc_key,
        coalesce((SELECT any_value(nullif(p.process_name, ''))
                FROM stg_processes AS p
                WHERE p.proc_key = proc.proc_key),
            (SELECT any_value(t.thread_name) FROM int_thread_names AS t
                WHERE nsys_proc_key(t.global_tid) = proc.proc_key
                AND nsys_os_tid(t.global_tid) = proc.os_pid),
            'Process') || ' [' || CAST(proc.os_pid AS VARCHAR) || ']',
        1,
        proc.os_pid,
        coalesce(CAST(work.devices AS BIGINT[]), [])
    FROM _int_cpu_processes AS proc
    LEFT JOIN work ON work.proc_key = proc.proc_key
    WHERE proc.has_host_rows OR NOT EXISTS (SELECT 1 FROM _int_devices)
)
SELECT
    row_number() OVER (ORDER BY kind_order, sort_key, home_id) AS json_pid,
    *
FROM homes;

COMMENT ON TABLE int_homes IS 'The trace processes (Perfetto "processes") that hold tracks: one per GPU device, then one per host process with CPU-side rows (one per profiled process when the trace has no GPU device).';
COMMENT ON COLUMN int_homes.json_pid IS 'JSON pid of the home (1..N in sort order).';
COMMENT ON COLUMN int_homes.home_id IS 'The device id (>= 0), or -1 - proc_key for a host process.';
COMMENT ON COLUMN int_homes.home_kind IS 'device or host.';
COMMENT ON COLUMN int_homes.device_id IS 'The device id (device homes); NULL for host homes.';
COMMENT ON COLUMN int_homes.proc_key IS 'The process (host homes); NULL for device homes.';
COMMENT ON COLUMN int_homes.home_name IS 'Process name shown in Perfetto: ''Device N: GPU name'', or Nsight''s ''NAME [PID]'' for a host process.';
COMMENT ON COLUMN int_homes.kind_order IS '0 devices, 1 host processes.';
COMMENT ON COLUMN int_homes.sort_key IS 'Order among homes of a kind: the device id or the OS pid.';
COMMENT ON COLUMN int_homes.work_devices IS 'Devices the home''s GPU work ran on ([device_id] for a device; a host process''s devices, empty without GPU work): what --devices keeps.';
