-- _int_slices_gpu_op_projections: the device-level copy of each GPU
-- operation that has one: a kernel on the CUDA Core Timeline, a host-device
-- copy on PCIe Usage, a device-side copy on D2D Copy (private helper of
-- int_slices, which documents the columns).
--
-- Reads: int_gpu_ops.
-- Invariants: one row per int_gpu_ops row with a projection (the track
-- class, int_gpu_ops.projection), in its order; cat = projected_cat,
-- is_projection TRUE, is_primary FALSE (the slice as executed is the
-- primary one); proc_key and key1..key3 0, no name suffix (one track per
-- class and device). args: none here (int_gpu_op_args).

CREATE OR REPLACE VIEW _int_slices_gpu_op_projections AS
SELECT
    op.projected_cat AS cat, 'X' AS ph, op.name, op.start_ns, op.end_ns,
    op.device_id AS home_id,
    op.projection AS track_class,
    0 AS proc_key, 0 AS key1, 0 AS key2, 0 AS key3,
    '' AS track_base_name,
    op.op_id, TRUE AS is_projection, FALSE AS is_primary, op.device_id,
    op.proc_key AS owner_proc_key, op.os_pid,
    op.context_id, op.stream_id, op.correlation_id, op.copy_kind_label,
    op.bytes
FROM int_gpu_ops AS op
WHERE op.projection IS NOT NULL;

COMMENT ON VIEW _int_slices_gpu_op_projections IS 'int_slices rows of the Core/PCIe/D2D copies of GPU operations (private helper of int_slices).';
