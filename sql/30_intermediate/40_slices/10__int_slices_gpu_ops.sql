-- _int_slices_gpu_ops: the slice of each GPU operation as executed (kernel,
-- memcpy, memset, graph execution), on its stream track or, for a unified
-- memory migration, on the Unified Memory track of its device (private
-- helper of int_slices, which documents the columns).
--
-- Reads: int_gpu_ops.
-- Invariants: one row per int_gpu_ops row (op_id unique), in its order;
-- is_projection FALSE, is_primary TRUE. A migration has proc_key and
-- key1..key3 0 and no name suffix; others the stream identity (os pid,
-- context, stream) and the stream_track_suffix. args: none here
-- (int_gpu_op_args, joined when the JSON is written). track_base_name is
-- the part after the class name (int_slices adds it).

CREATE OR REPLACE VIEW _int_slices_gpu_ops AS
SELECT
    op.cat, 'X' AS ph, op.name, op.start_ns, op.end_ns,
    op.device_id AS home_id,
    CASE WHEN op.is_unified_migration THEN 'unified' ELSE 'stream' END
        AS track_class,
    CASE WHEN op.is_unified_migration THEN 0 ELSE op.proc_key END
        AS proc_key,
    CASE WHEN op.is_unified_migration THEN 0 ELSE op.os_pid END AS key1,
    CASE WHEN op.is_unified_migration THEN 0 ELSE op.context_id END
        AS key2,
    CASE WHEN op.is_unified_migration THEN 0 ELSE op.stream_id END
        AS key3,
    CASE WHEN op.is_unified_migration THEN ''
        ELSE stream_track_suffix(op.stream_id, op.os_pid, op.context_id)
    END AS track_base_name,
    op.op_id, FALSE AS is_projection, TRUE AS is_primary, op.device_id,
    op.proc_key AS owner_proc_key, op.os_pid,
    op.context_id, op.stream_id, op.correlation_id, op.copy_kind_label,
    op.bytes
FROM int_gpu_ops AS op;

COMMENT ON VIEW _int_slices_gpu_ops IS 'int_slices rows of the GPU operations as executed, on their stream or Unified Memory track (private helper of int_slices).';
