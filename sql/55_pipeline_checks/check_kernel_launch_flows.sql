-- check_kernel_launch_flows: the kernels and CUDA graph executions whose
-- launch flows break the contract (zero rows when the rule holds).
--
-- Reads: int_runtime_links, int_gpu_ops, int_flows, trace_base.
-- Invariants: the rule (output-contract.md, Events): each linked kernel and
-- graph execution has exactly one 'launch' flow (to the slice as executed)
-- and one 'launch_core' flow (to its Core Timeline copy), and an unlinked
-- one none; a flow that cannot be drawn (the GPU work starts before its
-- call) still counts here, as it is counted in the summary. Not compared
-- with trace_summary's flow lines: evaluating that view again costs about
-- as much as all these checks (0.7 s at 1M rows), and it counts int_flows
-- as this view does. One row per offending operation; seq is NULL (an
-- operation has two events); op_id names it in int_gpu_ops.

CREATE OR REPLACE VIEW check_kernel_launch_flows AS
WITH linked_ops AS (
    SELECT DISTINCT links.op_id
    FROM int_runtime_links AS links
    WHERE links.op_cat IN ('kernel', 'cuda_graph')
),

launch_flows AS (
    SELECT
        flows.op_id,
        count(*) FILTER (WHERE flows.flow_cat = 'launch') AS launches,
        count(*) FILTER (WHERE flows.flow_cat = 'launch_core') AS core_launches
    FROM int_flows AS flows
    WHERE flows.flow_cat IN ('launch', 'launch_core')
    GROUP BY flows.op_id
),

per_op AS (
    SELECT
        ops.op_id, ops.cat, ops.name, ops.device_id, ops.correlation_id,
        ops.start_ns,
        coalesce(launch_flows.launches, 0) AS launches,
        coalesce(launch_flows.core_launches, 0) AS core_launches,
        linked_ops.op_id IS NOT NULL AS is_linked
    FROM int_gpu_ops AS ops
    LEFT JOIN linked_ops ON linked_ops.op_id = ops.op_id
    LEFT JOIN launch_flows ON launch_flows.op_id = ops.op_id
    WHERE ops.cat IN ('kernel', 'cuda_graph')
        AND (linked_ops.op_id IS NOT NULL OR launch_flows.op_id IS NOT NULL)
)

SELECT
    CASE WHEN per_op.is_linked THEN 'linked ' ELSE 'unlinked ' END
    || per_op.cat || ' (device ' || CAST(per_op.device_id AS VARCHAR)
    || ', correlationId ' || CAST(per_op.correlation_id AS VARCHAR)
    || ', start ' || _chk_us(per_op.start_ns - trace_base.base_ns) || ' µs' || ') has '
    || CAST(per_op.launches AS VARCHAR) || ' launch and '
    || CAST(per_op.core_launches AS VARCHAR) || ' launch_core flows, expected '
    || CASE WHEN per_op.is_linked THEN '1 and 1' ELSE 'none' END || ': '
    || per_op.name AS message,
    NULL::BIGINT AS seq,
    per_op.op_id
FROM per_op, trace_base
WHERE (per_op.is_linked
        AND NOT (per_op.launches = 1 AND per_op.core_launches = 1))
    OR (NOT per_op.is_linked AND per_op.launches + per_op.core_launches > 0);

COMMENT ON VIEW check_kernel_launch_flows IS 'Contract check (output-contract.md, Events): each linked kernel and CUDA graph execution has exactly one launch and one launch_core flow, an unlinked one none. Rows = violations (message, seq NULL, op_id of int_gpu_ops).';
