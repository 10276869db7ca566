-- _int_cpu_homes: under which homes each profiled process's seed CPU
-- tracks (NVTX, CUDA API) appear (private helper of int_slices).
--
-- Reads: _int_cpu_processes, _int_devices, int_gpu_ops, int_homes.
-- Invariants: only processes with CUDA API or NVTX rows; a process with GPU
-- work is shown under each device its work ran on; one without GPU work
-- under every device of the trace (output-contract.md, Tracks); with no
-- device in the trace, under its own host home. Never under a host home
-- when the trace has devices: host homes then hold the CPU side that is not
-- the seed's (OS runtime, cuDNN, cuBLAS, thread states), drawn there by
-- int_slices.

CREATE OR REPLACE TABLE _int_cpu_homes AS
WITH own_devices AS (
    SELECT DISTINCT proc_key, device_id FROM int_gpu_ops
)
SELECT proc.proc_key, home.home_id
FROM _int_cpu_processes AS proc
JOIN int_homes AS home
    ON (home.home_kind = 'host' AND home.proc_key = proc.proc_key
        AND NOT EXISTS (SELECT 1 FROM _int_devices))
    OR (home.home_kind = 'device' AND (
        EXISTS (SELECT 1 FROM own_devices AS own
            WHERE own.proc_key = proc.proc_key
            AND own.device_id = home.device_id)
        OR NOT EXISTS (SELECT 1 FROM own_devices AS own
            WHERE own.proc_key = proc.proc_key)))
WHERE proc.has_seed_rows;

COMMENT ON TABLE _int_cpu_homes IS 'Under which homes each profiled process''s seed CPU tracks (NVTX, CUDA API) appear (private helper of int_slices).';
