-- _int_nvtx_owner_chains: (owner_id, nvtx_id) for every range that is the
-- innermost owner of a tree-decided launch call, and every range of its
-- chain (private helper of _int_nvtx_owner_paths and _int_nvtx_call_chains).
--
-- Reads: int_nvtx_call_innermost, int_nvtx_range_tree.
-- Invariants: one row per (owner, range of its chain, itself included).
-- How: on a thread whose ranges nest, the chain of O is the ranges before
-- it in stack order that end no earlier (seq <= O.seq AND end_ns >=
-- O.end_ns): one inequality join (IEJoin) on globalTid << 64 | key, in a
-- statement of its own, on the tables' columns: inside a larger query
-- (a CTE referenced twice, a join to a numbering) DuckDB 2.0 planned a
-- piecewise merge join instead (90 s instead of 1 s on pytorch x40; see
-- 21__int_nvtx_call_owners.sql, "How"). A table: deep stacks give 101M
-- rows at 5M input rows (pytorch x200), which must be able to spill.

CREATE OR REPLACE TABLE _int_nvtx_owner_chains AS
SELECT o.nvtx_id AS owner_id, t.nvtx_id
FROM (
    SELECT DISTINCT t.nvtx_id,
        (CAST(t.global_tid AS HUGEINT) << 64) + t.seq AS k_seq,
        (CAST(t.global_tid AS HUGEINT) << 64) + t.end_ns AS k_end
    FROM int_nvtx_call_innermost AS c
    JOIN int_nvtx_range_tree AS t ON t.nvtx_id = c.nvtx_id
) AS o
JOIN (
    SELECT nvtx_id,
        (CAST(global_tid AS HUGEINT) << 64) + seq AS k_seq,
        (CAST(global_tid AS HUGEINT) << 64) + end_ns AS k_end
    FROM int_nvtx_range_tree
    WHERE thread_nests
) AS t
    ON t.k_seq <= o.k_seq AND t.k_end >= o.k_end;

COMMENT ON TABLE _int_nvtx_owner_chains IS '(owner_id, nvtx_id): each innermost owner of a tree-decided call and the ranges of its chain (private helper of _int_nvtx_owner_paths).';
