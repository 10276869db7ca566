-- stg_gpus: the GPUs Nsight recorded on the target (TARGET_INFO_GPU), idle
-- ones included, with their names and properties.
--
-- Reads: nsys.TARGET_INFO_GPU.
-- Invariants: one row per TARGET_INFO_GPU row (the table may repeat a GPU,
-- one row per VM); device_id is its id, the deviceId of the GPU activity
-- (as NVIDIA's cuda_gpu_trace matches them); the values keep the export's
-- types. An export without the table (schema 3.25 may lack it) has no row.

CREATE OR REPLACE VIEW stg_gpus AS
SELECT
    id AS device_id,
    name AS gpu_name,
    totalMemory AS total_memory,
    smCount AS sm_count,
    computeMajor AS compute_major,
    computeMinor AS compute_minor,
    threadsPerWarp AS threads_per_warp,
    maxThreadsPerBlock AS max_threads_per_block,
    maxWarpsPerSm AS max_warps_per_sm,
    maxRegistersPerBlock AS max_registers_per_block,
    maxRegistersPerSm AS max_registers_per_sm,
    maxShmemPerBlock AS max_shmem_per_block,
    maxShmemPerBlockOptin AS max_shmem_per_block_optin,
    maxShmemPerSm AS max_shmem_per_sm
FROM nsys.TARGET_INFO_GPU;

COMMENT ON VIEW stg_gpus IS 'The GPUs Nsight recorded on the target (TARGET_INFO_GPU, idle ones too): one row per table row, columns renamed.';
COMMENT ON COLUMN stg_gpus.device_id IS 'CUDA device id (TARGET_INFO_GPU.id).';
COMMENT ON COLUMN stg_gpus.gpu_name IS 'GPU name as exported (TARGET_INFO_GPU.name).';
COMMENT ON COLUMN stg_gpus.total_memory IS 'Global memory, bytes (TARGET_INFO_GPU.totalMemory).';
COMMENT ON COLUMN stg_gpus.sm_count IS 'Streaming multiprocessors (smCount).';
COMMENT ON COLUMN stg_gpus.compute_major IS 'Compute capability, major (computeMajor).';
COMMENT ON COLUMN stg_gpus.compute_minor IS 'Compute capability, minor (computeMinor).';
COMMENT ON COLUMN stg_gpus.threads_per_warp IS 'Warp size (threadsPerWarp).';
COMMENT ON COLUMN stg_gpus.max_threads_per_block IS 'Max threads per block (maxThreadsPerBlock).';
COMMENT ON COLUMN stg_gpus.max_warps_per_sm IS 'Max resident warps per SM (maxWarpsPerSm).';
COMMENT ON COLUMN stg_gpus.max_registers_per_block IS 'Registers per block (maxRegistersPerBlock).';
COMMENT ON COLUMN stg_gpus.max_registers_per_sm IS 'Registers per SM (maxRegistersPerSm).';
COMMENT ON COLUMN stg_gpus.max_shmem_per_block IS 'Shared memory per block, bytes (maxShmemPerBlock).';
COMMENT ON COLUMN stg_gpus.max_shmem_per_block_optin IS 'Opt-in shared memory per block, bytes (maxShmemPerBlockOptin).';
COMMENT ON COLUMN stg_gpus.max_shmem_per_sm IS 'Shared memory per SM, bytes (maxShmemPerSm).';
