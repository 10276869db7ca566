-- int_nvtx_op_paths: per GPU operation owned by some NVTX range, the owning
-- ranges' ids and names, outer -> inner (trace_slices.nvtx_ids/nvtx_names,
-- args.nvtxRanges).
--
-- Reads: _int_nvtx_call_paths, int_runtime_links.
-- Invariants: one row per owned op_id; the lists of its launch call.

CREATE OR REPLACE VIEW int_nvtx_op_paths AS
SELECT link.op_id, p.nvtx_ids, p.nvtx_names
FROM _int_nvtx_call_paths AS p
JOIN int_runtime_links AS link ON link.call_id = p.call_id;

COMMENT ON VIEW int_nvtx_op_paths IS 'Per GPU operation owned by some NVTX range, the owning ranges'' ids and names, outer -> inner (trace_slices.nvtx_ids/nvtx_names, args.nvtxRanges).';
COMMENT ON COLUMN int_nvtx_op_paths.op_id IS 'GPU operation id (int_gpu_ops.op_id).';
COMMENT ON COLUMN int_nvtx_op_paths.nvtx_ids IS 'Owning NVTX ranges'' nvtx_id, outer -> inner.';
COMMENT ON COLUMN int_nvtx_op_paths.nvtx_names IS 'Owning NVTX ranges'' messages, outer -> inner.';
