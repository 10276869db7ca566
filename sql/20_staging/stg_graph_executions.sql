-- stg_graph_executions: one row per CUDA graph execution recorded in
-- graph-level trace mode (CUPTI_ACTIVITY_KIND_GRAPH_TRACE, the default
-- --cuda-graph-trace=graph of Nsight Systems 2025.5+ exports).
--
-- Reads: _stg_graph_execution_rows, stg_export_info.
-- Grain: one row per graph launch as executed on the GPU; it carries the
-- correlationId of its cudaGraphLaunch (per process, as kernels do). In
-- graph-level mode the graph's kernels have no KERNEL rows: this row is the
-- only GPU-side record of the launch.
-- Invariants: as stg_kernels (stg_kernels.sql): UTC-epoch ns, rows with
-- NULL or reversed times or a NULL/negative deviceId are counted in
-- stg_skipped_rows instead; NULL context/stream read as 0; graphId and
-- graphExecId as exported (0 and NULL mean unknown).
-- name: 'CUDA graph <graphId>' (the graph), the execution's graphExecId is in
-- args.

CREATE OR REPLACE VIEW stg_graph_executions AS
SELECT
    g.start + x.time_offset_ns AS start_ns,
    g."end" + x.time_offset_ns AS end_ns,
    g.deviceId AS device_id,
    coalesce(CAST(g.contextId AS BIGINT), 0) AS context_id,
    coalesce(CAST(g.streamId AS BIGINT), 0) AS stream_id,
    g.correlationId AS correlation_id,
    nsys_proc_key(coalesce(g.globalPid, 0)) AS proc_key,
    nsys_os_pid(coalesce(g.globalPid, 0)) AS os_pid,
    CAST(g.graphId AS BIGINT) AS graph_id,
    CAST(g.graphExecId AS BIGINT) AS graph_exec_id,
    nullif(CAST(g.greenContextId AS BIGINT), 0) AS green_context_id,
    'CUDA graph ' || coalesce(CAST(g.graphId AS VARCHAR), '?') AS name
FROM _stg_graph_execution_rows AS g
CROSS JOIN stg_export_info AS x
WHERE g.skip_reason IS NULL;

COMMENT ON VIEW stg_graph_executions IS 'One row per CUDA graph execution recorded in graph-level trace mode (CUPTI_ACTIVITY_KIND_GRAPH_TRACE, the default --cuda-graph-trace=graph of Nsight Systems 2025.5+ exports).';
COMMENT ON COLUMN stg_graph_executions.start_ns IS 'Start, UTC-epoch ns (Nsight''s clock).';
COMMENT ON COLUMN stg_graph_executions.end_ns IS 'End, UTC-epoch ns (>= start_ns).';
COMMENT ON COLUMN stg_graph_executions.device_id IS 'CUDA device id.';
COMMENT ON COLUMN stg_graph_executions.context_id IS 'CUDA context id (NULL read as 0).';
COMMENT ON COLUMN stg_graph_executions.stream_id IS 'CUDA stream id (NULL read as 0).';
COMMENT ON COLUMN stg_graph_executions.correlation_id IS 'CUPTI correlationId: links API calls and GPU rows within one process (proc_key).';
COMMENT ON COLUMN stg_graph_executions.proc_key IS 'Process key globalPid/globalTid >> 24 (PID, VM and hardware id): the scope of correlationId.';
COMMENT ON COLUMN stg_graph_executions.os_pid IS 'OS process id.';
COMMENT ON COLUMN stg_graph_executions.graph_id IS 'CUDA graph id (NULL: none or not exported).';
COMMENT ON COLUMN stg_graph_executions.graph_exec_id IS 'CUDA graph executable id (graphExecId).';
COMMENT ON COLUMN stg_graph_executions.green_context_id IS 'Green context id (NULL: none).';
COMMENT ON COLUMN stg_graph_executions.name IS 'Slice name ''CUDA graph <graphId>''.';
