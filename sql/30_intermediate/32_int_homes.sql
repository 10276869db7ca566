-- int_homes: the trace processes (Perfetto "processes") that hold tracks:
-- one per GPU device, or one per profiled process when the trace has no
-- GPU device.
--
-- Reads: _int_cpu_processes, _int_devices, nsys.PROCESSES.
-- Invariants: home_id is the device id (>= 0) for a device, and
-- -1 - proc_key for a host process; host homes exist only when the trace
-- has no GPU device at all (CPU-only NVTX captures), so a report always
-- has somewhere to draw: never a "Device -1". json_pid is 1..N in sort
-- order (devices by id, then processes by pid).

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
    FROM _int_devices
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
    FROM _int_cpu_processes AS proc
    WHERE NOT EXISTS (SELECT 1 FROM _int_devices)
)
SELECT
    row_number() OVER (ORDER BY kind_order, sort_key, home_id) AS json_pid,
    *
FROM homes;

COMMENT ON TABLE int_homes IS 'The trace processes (Perfetto "processes") that hold tracks: one per GPU device, or one per profiled process when the trace has no GPU device.';
COMMENT ON COLUMN int_homes.json_pid IS 'JSON pid of the home (1..N in sort order).';
COMMENT ON COLUMN int_homes.home_id IS 'The device id (>= 0), or -1 - proc_key for a host process.';
COMMENT ON COLUMN int_homes.home_kind IS 'device or host.';
COMMENT ON COLUMN int_homes.device_id IS 'The device id (device homes); NULL for host homes.';
COMMENT ON COLUMN int_homes.proc_key IS 'The process (host homes); NULL for device homes.';
COMMENT ON COLUMN int_homes.home_name IS 'Process name shown in Perfetto: ''Device N: GPU name'' or ''Process PID (name)''.';
COMMENT ON COLUMN int_homes.kind_order IS '0 devices, 1 host processes.';
COMMENT ON COLUMN int_homes.sort_key IS 'Order among homes of a kind: the device id or the OS pid.';
