-- int_gpu_op_args: the JSON args objects of each GPU operation: the whole
-- object of its as-executed slice, and the lighter one of its Core/PCIe/D2D
-- copy in the JSON trace.
--
-- Reads: int_gpu_ops, int_nvtx_op_paths.
-- Invariants: one row per op_id. Members (output-contract.md, Events):
-- correlationId, deviceId, contextId, streamId on every op; kernels add
-- demangledName, grid, block, registersPerThread, staticSharedMemory,
-- dynamicSharedMemory, graphNodeId, graphId, greenContextId, cluster
-- [x, y, z], then Nsight's launch details: launchType (label),
-- cacheConfig (label), localMemoryPerThread, localMemoryTotal,
-- sharedMemoryExecuted, gridId; memcpys copyKind (text), bytes, copyCount
-- (schema 3.17.2+: the row may stand for a batch of copies),
-- greenContextId, srcKind and dstKind (memory kind labels: Pageable,
-- Pinned, Device...), srcDeviceId, dstDeviceId and throughputGBps (bytes /
-- duration in ns = decimal GB/s, rounded to 6 decimals; left out for a
-- zero-length copy); memsets bytes, value and memKind (label); graph
-- executions graphId, graphExecId, greenContextId. No member is ever JSON
-- null: a member without a value (0 or NULL where 0 means none, a column
-- the export lacks) is left out: each member is one operand of concat(),
-- which skips NULL operands, and a member's text is NULL when its value is
-- (',"x":' || NULL). That is the text-append pattern of the other args
-- (coalesce(',"x":' || v, '')) in one call: 3M kernels' args in 2.2 s
-- instead of 2.9 s on the 2-core dev machine. The members that were
-- written before keep their order and text (graphNodeId is now left out
-- when NULL instead of written as null). Operations that
-- NVTX ranges own also get args.nvtxRanges, the last member: the owning
-- ranges' names, outer -> inner (under the conversion's --nvtx-scope). A
-- table, built once: as a view, the JSON writer's X slices joined it while
-- its NVTX path joins held their own hash tables, and the 16M-NVTX input
-- ran out of memory at 2GB there; the writer now joins stored text.
-- copy_args_json, the projected copy's object in the JSON trace
-- (output-contract.md, Events: "a projected copy may carry a lighter
-- set"), decided with a user's eye: a Core Timeline copy of a kernel
-- carries the members every operation has (correlationId, deviceId,
-- contextId, streamId: the ids that find its original, the kernel on
-- stream streamId, which its launch_core flow's API call also joins), not
-- the demangled name and NVTX path that were most of its bytes (the slice
-- name is the short name); a graph execution's Core copy and a copy's
-- PCIe/D2D copy keep their whole object without nvtxRanges (a few short
-- members, all about the graph or the transfer: direction, bytes, memory
-- kinds, throughput). The Parquet rows and the protobuf trace keep every
-- member (args_json).
-- Column comments from: int_gpu_ops.
-- Merge: renumbered

CREATE OR REPLACE TABLE int_gpu_op_args AS
WITH heads AS (
    SELECT
        op.*,
        -- the members every operation has, without the closing brace
        '{' || coalesce('"correlationId":' || CAST(op.correlation_id AS VARCHAR)
                || ',', '')
            || '"deviceId":' || CAST(op.device_id AS VARCHAR)
            || ',"contextId":' || CAST(op.context_id AS VARCHAR)
            || ',"streamId":' || CAST(op.stream_id AS VARCHAR) AS head
    FROM int_gpu_ops AS op
),
base AS (
    SELECT
        op.op_id,
        op.cat,
        op.head,
        -- concat skips NULL operands: a member whose value is NULL is
        -- NULL as a whole and left out
        CASE op.cat
            WHEN 'kernel' THEN concat(op.head,
                ',"demangledName":' || to_json(op.demangled_name),
                ',"grid":[' || CAST(op.grid_x AS VARCHAR) || ','
                    || CAST(op.grid_y AS VARCHAR) || ','
                    || CAST(op.grid_z AS VARCHAR) || ']',
                ',"block":[' || CAST(op.block_x AS VARCHAR) || ','
                    || CAST(op.block_y AS VARCHAR) || ','
                    || CAST(op.block_z AS VARCHAR) || ']',
                ',"registersPerThread":'
                    || CAST(op.registers_per_thread AS VARCHAR),
                ',"staticSharedMemory":'
                    || CAST(op.static_shared_memory AS VARCHAR),
                ',"dynamicSharedMemory":'
                    || CAST(op.dynamic_shared_memory AS VARCHAR),
                ',"graphNodeId":' || CAST(op.graph_node_id AS VARCHAR),
                ',"graphId":' || CAST(op.graph_id AS VARCHAR),
                ',"greenContextId":' || CAST(op.green_context_id AS VARCHAR),
                ',"cluster":' || to_json(op.cluster_dims),
                ',"launchType":' || to_json(op.launch_type),
                ',"cacheConfig":' || to_json(op.cache_config),
                ',"localMemoryPerThread":'
                    || CAST(op.local_memory_per_thread AS VARCHAR),
                ',"localMemoryTotal":'
                    || CAST(op.local_memory_total AS VARCHAR),
                ',"sharedMemoryExecuted":'
                    || CAST(op.shared_memory_executed AS VARCHAR),
                ',"gridId":' || CAST(op.grid_id AS VARCHAR),
                '}')
            WHEN 'memcpy' THEN concat(op.head,
                ',"copyKind":' || to_json(op.copy_kind_label),
                ',"bytes":' || CAST(op.bytes AS VARCHAR),
                ',"copyCount":' || CAST(op.copy_count AS VARCHAR),
                ',"greenContextId":' || CAST(op.green_context_id AS VARCHAR),
                ',"srcKind":' || to_json(op.src_kind),
                ',"dstKind":' || to_json(op.dst_kind),
                ',"srcDeviceId":' || CAST(op.src_device_id AS VARCHAR),
                ',"dstDeviceId":' || CAST(op.dst_device_id AS VARCHAR),
                -- bytes per ns = 10^9 bytes/s (decimal GB/s)
                CASE WHEN op.end_ns > op.start_ns
                    THEN ',"throughputGBps":' || CAST(round(
                        op.bytes / (op.end_ns - op.start_ns), 6) AS VARCHAR)
                END,
                '}')
            WHEN 'cuda_graph' THEN concat(op.head,
                ',"graphId":' || CAST(op.graph_id AS VARCHAR),
                ',"graphExecId":' || CAST(op.graph_exec_id AS VARCHAR),
                ',"greenContextId":' || CAST(op.green_context_id AS VARCHAR),
                '}')
            ELSE concat(op.head,
                ',"bytes":' || CAST(op.bytes AS VARCHAR),
                ',"value":' || CAST(op.memset_value AS VARCHAR),
                ',"memKind":' || to_json(op.mem_kind),
                '}')
        END AS args_json
    FROM heads AS op
)
SELECT
    base.op_id,
    CASE WHEN path.op_id IS NULL THEN base.args_json
        -- the last member, appended to the object's text (no re-parse)
        ELSE left(base.args_json, -1) || ',"nvtxRanges":'
            || to_json(path.nvtx_names) || '}' END AS args_json,
    CASE WHEN base.cat = 'kernel' THEN base.head || '}'
        ELSE base.args_json END AS copy_args_json
FROM base
LEFT JOIN int_nvtx_op_paths AS path ON path.op_id = base.op_id;

COMMENT ON TABLE int_gpu_op_args IS 'The JSON args objects of each GPU operation: the whole one of its as-executed slice, and the lighter one of its Core/PCIe/D2D copy in the JSON trace.';
COMMENT ON COLUMN int_gpu_op_args.args_json IS 'JSON args object of the operation''s as-executed slice (and of every slice in the protobuf trace), with nvtxRanges last when NVTX ranges own it.';
COMMENT ON COLUMN int_gpu_op_args.copy_args_json IS 'JSON args object of its projected copy in the JSON trace: a kernel''s the ids every operation has (correlationId, deviceId, contextId, streamId); others their whole object without nvtxRanges.';
