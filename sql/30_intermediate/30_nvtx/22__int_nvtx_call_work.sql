-- _int_nvtx_call_work: per (owned launch call, device): the min start, max
-- end and count of the GPU operations the call launched there (private).
--
-- Reads: int_nvtx_call_innermost, _int_nvtx_call_owners, int_gpu_ops,
-- int_runtime_links.
-- Invariants: one row per (call_id, device_id) of calls some range owns
-- (a tree owner in int_nvtx_call_innermost, or a pair in
-- _int_nvtx_call_owners).

CREATE OR REPLACE TABLE _int_nvtx_call_work AS
SELECT
    link.call_id,
    link.device_id,
    min(op.start_ns) AS start_ns,
    max(op.end_ns) AS end_ns,
    count(*) AS op_count
FROM int_runtime_links AS link
JOIN int_gpu_ops AS op ON op.op_id = link.op_id
WHERE link.call_id IN (
    SELECT call_id FROM int_nvtx_call_innermost WHERE nvtx_id IS NOT NULL
    UNION ALL
    SELECT call_id FROM _int_nvtx_call_owners
)
GROUP BY link.call_id, link.device_id;

COMMENT ON TABLE _int_nvtx_call_work IS 'Per (owned launch call, device): the min start, max end and count of the GPU operations the call launched there (private).';
