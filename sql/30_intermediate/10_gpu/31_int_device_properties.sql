-- int_device_properties: per GPU device of the trace, what Nsight recorded
-- of it (TARGET_INFO_GPU): name, memory, compute capability, SM count and
-- limits; the deviceProperties of the Kineto trace (sql/60_kineto).
--
-- Reads: _int_devices, stg_gpus.
-- Invariants: one row per device of _int_devices (devices with GPU
-- activity); gpu_name is _int_devices' (TARGET_INFO_GPU.name, else
-- 'GPU <id>'); the other columns are TARGET_INFO_GPU's for id = device_id
-- (any row of that id: the table repeats a GPU per VM), NULL when the
-- export lacks the table or the value. A view: only the Kineto writer reads
-- it (in a merge too: the Merge tag below).
-- Column comments from: stg_gpus.
-- Merge: renumbered (the merged Kineto trace's devices)

CREATE OR REPLACE VIEW int_device_properties AS
WITH gpu AS (
    SELECT
        device_id,
        any_value(total_memory) AS total_memory,
        any_value(sm_count) AS sm_count,
        any_value(compute_major) AS compute_major,
        any_value(compute_minor) AS compute_minor,
        any_value(threads_per_warp) AS threads_per_warp,
        any_value(max_threads_per_block) AS max_threads_per_block,
        any_value(max_warps_per_sm) AS max_warps_per_sm,
        any_value(max_registers_per_block) AS max_registers_per_block,
        any_value(max_registers_per_sm) AS max_registers_per_sm,
        any_value(max_shmem_per_block) AS max_shmem_per_block,
        any_value(max_shmem_per_block_optin) AS max_shmem_per_block_optin,
        any_value(max_shmem_per_sm) AS max_shmem_per_sm
    FROM stg_gpus
    GROUP BY device_id
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
LEFT JOIN gpu ON gpu.device_id = d.device_id;

COMMENT ON VIEW int_device_properties IS 'Per GPU device of the trace, what Nsight recorded of it (TARGET_INFO_GPU): the deviceProperties of the Kineto trace.';
COMMENT ON COLUMN int_device_properties.device_id IS 'CUDA device id.';
COMMENT ON COLUMN int_device_properties.gpu_name IS 'GPU name (TARGET_INFO_GPU.name, else GPU <id>).';
