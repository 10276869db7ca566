-- int_gpu_op_args: the JSON args object of each GPU operation, shared by
-- its as-executed slice and its Core/PCIe/D2D copy.
--
-- Reads: int_gpu_ops, int_nvtx_op_paths.
-- Invariants: one row per op_id. Members (output-contract.md, Events):
-- correlationId, deviceId, contextId, streamId on every op; kernels add
-- demangledName, grid, block, registersPerThread, staticSharedMemory,
-- dynamicSharedMemory, and, when the export has them (0 or NULL = none):
-- graphNodeId, graphId, greenContextId, cluster [x, y, z]; memcpys copyKind
-- (text), bytes and copyCount (schema 3.17.2+: the row may stand for a
-- batch of copies); memsets bytes and value; graph executions graphId and
-- graphExecId. Operations that NVTX ranges own also get args.nvtxRanges,
-- the last member: the owning ranges' names, outer -> inner (under the
-- conversion's --nvtx-scope). A table, built once: as a view, the JSON
-- writer's X slices joined it while its NVTX path joins held their own
-- hash tables, and the 16M-NVTX input ran out of memory at 2GB there; the
-- writer now joins stored text. Optional members are appended as text only when
-- they have a value, so older exports keep their exact args.

CREATE OR REPLACE TABLE int_gpu_op_args AS
WITH base AS (
    SELECT
        op.op_id,
        CASE op.cat
            WHEN 'kernel' THEN left(json_object(
                'correlationId', op.correlation_id, 'deviceId', op.device_id,
                'contextId', op.context_id, 'streamId', op.stream_id,
                'demangledName', op.demangled_name,
                'grid', [op.grid_x, op.grid_y, op.grid_z],
                'block', [op.block_x, op.block_y, op.block_z],
                'registersPerThread', op.registers_per_thread,
                'staticSharedMemory', op.static_shared_memory,
                'dynamicSharedMemory', op.dynamic_shared_memory,
                'graphNodeId', op.graph_node_id), -1)
                || coalesce(',"graphId":' || CAST(op.graph_id AS VARCHAR), '')
                || coalesce(',"greenContextId":'
                    || CAST(op.green_context_id AS VARCHAR), '')
                || coalesce(',"cluster":' || to_json(op.cluster_dims), '')
                || '}'
            WHEN 'memcpy' THEN left(json_object(
                'correlationId', op.correlation_id, 'deviceId', op.device_id,
                'contextId', op.context_id, 'streamId', op.stream_id,
                'copyKind', op.copy_kind_label, 'bytes', op.bytes), -1)
                || coalesce(',"copyCount":' || CAST(op.copy_count AS VARCHAR),
                    '')
                || coalesce(',"greenContextId":'
                    || CAST(op.green_context_id AS VARCHAR), '')
                || '}'
            WHEN 'cuda_graph' THEN left(json_object(
                'correlationId', op.correlation_id, 'deviceId', op.device_id,
                'contextId', op.context_id, 'streamId', op.stream_id,
                'graphId', op.graph_id, 'graphExecId', op.graph_exec_id), -1)
                || coalesce(',"greenContextId":'
                    || CAST(op.green_context_id AS VARCHAR), '')
                || '}'
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

COMMENT ON TABLE int_gpu_op_args IS 'The JSON args object of each GPU operation, shared by its as-executed slice and its Core/PCIe/D2D copy.';
COMMENT ON COLUMN int_gpu_op_args.op_id IS 'GPU operation id (int_gpu_ops.op_id).';
COMMENT ON COLUMN int_gpu_op_args.args_json IS 'JSON args object of the operation (both of its slices), with nvtxRanges last when NVTX ranges own it.';
