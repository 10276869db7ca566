-- int_device_properties: per GPU device of the trace, what Nsight recorded
-- of it (TARGET_INFO_GPU): name, memory, compute capability, SM count and
-- limits; the deviceProperties of the Kineto trace (sql/60_kineto).
--
-- Reads: _int_devices, nsys.TARGET_INFO_GPU.
-- Invariants: one row per device of _int_devices (devices with GPU
-- activity); gpu_name is _int_devices' (TARGET_INFO_GPU.name, else
-- 'GPU <id>'); the other columns are TARGET_INFO_GPU's for id = device_id
-- (any row of that id: the table repeats a GPU per VM), NULL when the
-- export lacks the table or the value. A view: only the Kineto writer reads
-- it. nsys-duck merge copies it from each report (merge.RENUMBERED).

CREATE OR REPLACE VIEW int_device_properties AS
WITH gpu AS (
    SELECT
        id,
        any_value(totalMemory) AS total_memory,
        any_value(smCount) AS sm_count,
        any_value(computeMajor) AS compute_major,
        any_value(computeMinor) AS compute_minor,
        any_value(threadsPerWarp) AS threads_per_warp,
        any_value(maxThreadsPerBlock) AS max_threads_per_block,
        any_value(maxWarpsPerSm) AS max_warps_per_sm,
        any_value(maxRegistersPerBlock) AS max_registers_per_block,
        any_value(maxRegistersPerSm) AS max_registers_per_sm,
        any_value(maxShmemPerBlock) AS max_shmem_per_block,
        any_value(maxShmemPerBlockOptin) AS max_shmem_per_block_optin,
        any_value(maxShmemPerSm) AS max_shmem_per_sm
    FROM nsys.TARGET_INFO_GPU
    GROUP BY id
)
SELECT
    d.device_id,
    d.gpu_name,
    CAST(gpu.total_memory AS BIGINT) AS total_memory,
    gpu.sm_count,
    gpu.compute_major,
    gpu.compute_minor,
    gpu.threads_per_warp,
    gpu.max_threads_per_block,
    gpu.max_warps_per_sm,
    gpu.max_registers_per_block,
    gpu.max_registers_per_sm,
    gpu.max_shmem_per_block,
    gpu.max_shmem_per_block_optin,
    gpu.max_shmem_per_sm
FROM _int_devices AS d
LEFT JOIN gpu ON gpu.id = d.device_id;

COMMENT ON VIEW int_device_properties IS 'Per GPU device of the trace, what Nsight recorded of it (TARGET_INFO_GPU): the deviceProperties of the Kineto trace.';
COMMENT ON COLUMN int_device_properties.device_id IS 'CUDA device id.';
COMMENT ON COLUMN int_device_properties.gpu_name IS 'GPU name (TARGET_INFO_GPU.name, else GPU <id>).';
COMMENT ON COLUMN int_device_properties.total_memory IS 'Global memory, bytes (TARGET_INFO_GPU.totalMemory).';
COMMENT ON COLUMN int_device_properties.sm_count IS 'Streaming multiprocessors (smCount).';
COMMENT ON COLUMN int_device_properties.compute_major IS 'Compute capability, major (computeMajor).';
COMMENT ON COLUMN int_device_properties.compute_minor IS 'Compute capability, minor (computeMinor).';
COMMENT ON COLUMN int_device_properties.threads_per_warp IS 'Warp size (threadsPerWarp).';
COMMENT ON COLUMN int_device_properties.max_threads_per_block IS 'Max threads per block (maxThreadsPerBlock).';
COMMENT ON COLUMN int_device_properties.max_warps_per_sm IS 'Max resident warps per SM (maxWarpsPerSm).';
COMMENT ON COLUMN int_device_properties.max_registers_per_block IS 'Registers per block (maxRegistersPerBlock).';
COMMENT ON COLUMN int_device_properties.max_registers_per_sm IS 'Registers per SM (maxRegistersPerSm).';
COMMENT ON COLUMN int_device_properties.max_shmem_per_block IS 'Shared memory per block, bytes (maxShmemPerBlock).';
COMMENT ON COLUMN int_device_properties.max_shmem_per_block_optin IS 'Opt-in shared memory per block, bytes (maxShmemPerBlockOptin).';
COMMENT ON COLUMN int_device_properties.max_shmem_per_sm IS 'Shared memory per SM, bytes (maxShmemPerSm).';
