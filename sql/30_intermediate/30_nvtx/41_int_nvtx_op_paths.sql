-- int_nvtx_op_paths: per GPU operation owned by some NVTX range, the owning
-- ranges' ids and names, outer -> inner (trace_slices.nvtx_ids/nvtx_names,
-- args.nvtxRanges).
--
-- Reads: int_runtime_links, _int_nvtx_call_paths, int_nvtx_call_innermost,
-- _int_nvtx_owner_paths.
-- Invariants: one row per owned op_id; the lists of its launch call: from
-- _int_nvtx_call_paths when the call has pair owners, else the chain of its
-- innermost owner.
-- Column comments from: int_runtime_links.
-- Merge: renumbered

CREATE OR REPLACE VIEW int_nvtx_op_paths AS
SELECT link.op_id,
    coalesce(cp.nvtx_ids, op.nvtx_ids) AS nvtx_ids,
    coalesce(cp.nvtx_names, op.nvtx_names) AS nvtx_names
FROM int_runtime_links AS link
LEFT JOIN _int_nvtx_call_paths AS cp ON cp.call_id = link.call_id
LEFT JOIN int_nvtx_call_innermost AS ci ON ci.call_id = link.call_id
LEFT JOIN _int_nvtx_owner_paths AS op ON op.nvtx_id = ci.nvtx_id
WHERE cp.call_id IS NOT NULL OR op.nvtx_id IS NOT NULL;

COMMENT ON VIEW int_nvtx_op_paths IS 'Per GPU operation owned by some NVTX range, the owning ranges'' ids and names, outer -> inner (trace_slices.nvtx_ids/nvtx_names, args.nvtxRanges).';
COMMENT ON COLUMN int_nvtx_op_paths.nvtx_ids IS 'Owning NVTX ranges'' nvtx_id, outer -> inner.';
COMMENT ON COLUMN int_nvtx_op_paths.nvtx_names IS 'Owning NVTX ranges'' messages, outer -> inner.';
