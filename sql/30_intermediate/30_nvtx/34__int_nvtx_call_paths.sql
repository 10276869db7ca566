-- _int_nvtx_call_paths: per launch call with owners the range tree does not
-- decide (_int_nvtx_call_owners), the ids and names of all its owning
-- ranges, outer -> inner (private helper of int_nvtx_op_paths).
--
-- Reads: _int_nvtx_call_owners, _int_nvtx_call_chains, int_nvtx_ranges.
-- Invariants: one row per call_id of _int_nvtx_call_owners; nvtx_ids and
-- nvtx_names have the same length and order: by range start, then the
-- longer range first, then nvtx_id (the order of a chain, too).

CREATE OR REPLACE TABLE _int_nvtx_call_paths AS
WITH owners AS (
    SELECT call_id, nvtx_id FROM _int_nvtx_call_owners
    UNION ALL
    SELECT call_id, nvtx_id FROM _int_nvtx_call_chains
    WHERE call_id IN (SELECT call_id FROM _int_nvtx_call_owners)
)
SELECT o.call_id,
    list(r.nvtx_id ORDER BY r.start_ns, r.end_ns DESC, r.nvtx_id) AS nvtx_ids,
    list(r.message ORDER BY r.start_ns, r.end_ns DESC, r.nvtx_id)
        AS nvtx_names
FROM owners AS o
JOIN int_nvtx_ranges AS r ON r.nvtx_id = o.nvtx_id
GROUP BY o.call_id;

COMMENT ON TABLE _int_nvtx_call_paths IS 'Per launch call with owners the range tree does not decide: all its owning ranges'' ids and names, outer -> inner (private helper of int_nvtx_op_paths).';
