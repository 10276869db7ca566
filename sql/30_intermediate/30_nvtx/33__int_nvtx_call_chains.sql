-- _int_nvtx_call_chains: (call_id, nvtx_id) for every range owning a launch
-- call through the range tree: the call's innermost owner and its parent
-- chain (private; a view, never stored).
--
-- Reads: int_nvtx_call_innermost, _int_nvtx_owner_chains,
-- int_nvtx_range_tree.
-- Invariants: one row per (tree-decided call, owning range); with
-- _int_nvtx_call_owners, every ownership pair exactly once. depth orders a
-- chain outer -> inner.
-- How: the chain of the call's innermost owner (_int_nvtx_owner_chains).

CREATE OR REPLACE VIEW _int_nvtx_call_chains AS
SELECT c.call_id, ch.nvtx_id, t.depth
FROM int_nvtx_call_innermost AS c
JOIN _int_nvtx_owner_chains AS ch ON ch.owner_id = c.nvtx_id
JOIN int_nvtx_range_tree AS t ON t.nvtx_id = ch.nvtx_id;

COMMENT ON VIEW _int_nvtx_call_chains IS '(call_id, nvtx_id, depth): the ranges owning each tree-decided launch call (its innermost owner and parent chain); private view.';
