-- _int_nvtx_call_chains: (call_id, nvtx_id) for every range owning a launch
-- call through the range tree: the call's innermost owner and its parent
-- chain (private; a view, never stored).
--
-- Reads: int_nvtx_call_innermost, int_nvtx_range_tree.
-- Invariants: one row per (tree-decided call, owning range); with
-- _int_nvtx_call_owners, every ownership pair exactly once. depth orders a
-- chain outer -> inner.
-- How: on a thread whose ranges nest, the ranges containing the innermost
-- owner I are those before it in stack order that end no earlier
-- (seq <= I.seq AND end_ns >= I.end_ns): one inequality join (IEJoin) on
-- globalTid << 64 | key, as in 40__int_nvtx_call_owners.sql.

CREATE OR REPLACE VIEW _int_nvtx_call_chains AS
SELECT i.call_id, a.nvtx_id, a.depth
FROM (
    SELECT c.call_id,
        (CAST(t.global_tid AS HUGEINT) << 64) + t.seq AS k_seq,
        (CAST(t.global_tid AS HUGEINT) << 64) + t.end_ns AS k_end
    FROM int_nvtx_call_innermost AS c
    JOIN int_nvtx_range_tree AS t ON t.nvtx_id = c.nvtx_id
) AS i
JOIN (
    SELECT nvtx_id, depth,
        (CAST(global_tid AS HUGEINT) << 64) + seq AS k_seq,
        (CAST(global_tid AS HUGEINT) << 64) + end_ns AS k_end
    FROM int_nvtx_range_tree
    WHERE thread_nests
) AS a
    ON a.k_seq <= i.k_seq AND a.k_end >= i.k_end;

COMMENT ON VIEW _int_nvtx_call_chains IS '(call_id, nvtx_id, depth): the ranges owning each tree-decided launch call (its innermost owner and parent chain); private view.';
