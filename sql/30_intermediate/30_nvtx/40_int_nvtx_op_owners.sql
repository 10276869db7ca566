-- int_nvtx_op_owners: (nvtx_id, op_id, device_id, call_id): the GPU
-- operations (kernel, memcpy, memset, graph execution) each NVTX range owns.
--
-- Reads: _int_nvtx_call_chains, _int_nvtx_call_owners, int_runtime_links.
-- Invariants: one row per (range, operation) pair; an op of a call owned
-- by k ranges appears k times. A view for queries: the conversion itself
-- never expands these pairs (paths and projections come from the range
-- tree).
-- Column comments from: int_runtime_links.

CREATE OR REPLACE VIEW int_nvtx_op_owners AS
SELECT o.nvtx_id, link.op_id, link.device_id, o.call_id
FROM (
    SELECT call_id, nvtx_id FROM _int_nvtx_call_chains
    UNION ALL
    SELECT call_id, nvtx_id FROM _int_nvtx_call_owners
) AS o
JOIN int_runtime_links AS link ON link.call_id = o.call_id;

COMMENT ON VIEW int_nvtx_op_owners IS '(nvtx_id, op_id, device_id, call_id): the GPU operations (kernel, memcpy, memset, graph execution) each NVTX range owns.';
COMMENT ON COLUMN int_nvtx_op_owners.nvtx_id IS 'NVTX row id (stg_nvtx_events.nvtx_id).';
COMMENT ON COLUMN int_nvtx_op_owners.call_id IS 'The launch call through which the range owns the operation.';
