-- int_gpu_op_args: the JSON args object of each GPU operation, shared by
-- its as-executed slice and its Core/PCIe/D2D copy.
--
-- Reads: int_gpu_ops, int_nvtx_op_paths.
-- Invariants: one row per op_id. Members (output-contract.md, Events):
-- correlationId, deviceId, contextId, streamId on every op; kernels add
-- demangledName, grid, block, registersPerThread, staticSharedMemory,
-- dynamicSharedMemory, graphNodeId; memcpys copyKind (text) and bytes;
-- memsets bytes and value. Operations that NVTX ranges own also get
-- args.nvtxRanges, the last member: the owning ranges' names, outer ->
-- inner (under the conversion's --nvtx-scope). A view: the text is built
-- while the JSON is written, never stored.

CREATE OR REPLACE VIEW int_gpu_op_args AS
WITH base AS (
    SELECT
        op.op_id,
        CASE op.cat
            WHEN 'kernel' THEN json_object(
                'correlationId', op.correlation_id, 'deviceId', op.device_id,
                'contextId', op.context_id, 'streamId', op.stream_id,
                'demangledName', op.demangled_name,
                'grid', [op.grid_x, op.grid_y, op.grid_z],
                'block', [op.block_x, op.block_y, op.block_z],
                'registersPerThread', op.registers_per_thread,
                'staticSharedMemory', op.static_shared_memory,
                'dynamicSharedMemory', op.dynamic_shared_memory,
                'graphNodeId', op.graph_node_id)
            WHEN 'memcpy' THEN json_object(
                'correlationId', op.correlation_id, 'deviceId', op.device_id,
                'contextId', op.context_id, 'streamId', op.stream_id,
                'copyKind', op.copy_kind_label, 'bytes', op.bytes)
            ELSE json_object(
                'correlationId', op.correlation_id, 'deviceId', op.device_id,
                'contextId', op.context_id, 'streamId', op.stream_id,
                'bytes', op.bytes, 'value', op.memset_value)
        END AS args_json
    FROM int_gpu_ops AS op
)
SELECT
    base.op_id,
    CASE WHEN path.op_id IS NULL THEN base.args_json
        -- the last member, appended to the object's text (no re-parse)
        ELSE left(base.args_json, -1) || ',"nvtxRanges":'
            || to_json(path.nvtx_names) || '}' END AS args_json
FROM base
LEFT JOIN int_nvtx_op_paths AS path ON path.op_id = base.op_id;
