-- int_gpu_op_args: the JSON args object of each GPU operation, shared by
-- its as-executed slice and its Core/PCIe/D2D copy.
--
-- Reads: int_gpu_ops, int_nvtx_op_paths.
-- Invariants: one row per op_id. Operations that NVTX ranges own also get
-- args.nvtxRanges: the owning ranges' names, outer -> inner (under the
-- conversion's --nvtx-scope). A view: the strings are built while the JSON
-- is written, not stored once more.

CREATE OR REPLACE VIEW int_gpu_op_args AS
SELECT
    op.op_id,
    CASE WHEN path.op_id IS NULL THEN op.args_json
        ELSE json_merge_patch(op.args_json,
            json_object('nvtxRanges', path.nvtx_names)) END AS args_json
FROM int_gpu_ops AS op
LEFT JOIN int_nvtx_op_paths AS path ON path.op_id = op.op_id;
