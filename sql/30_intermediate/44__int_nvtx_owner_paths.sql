-- _int_nvtx_owner_paths: per range that is the innermost owner of a
-- tree-decided launch call, the ids and names of its chain, outer -> inner
-- (private helper of int_nvtx_op_paths).
--
-- Reads: int_nvtx_call_innermost, _int_nvtx_call_owners,
-- int_nvtx_range_tree, int_nvtx_ranges.
-- Invariants: one row per such nvtx_id; nvtx_ids and nvtx_names have the
-- same length and order (by depth: the path order of a chain). Calls that
-- also have pair owners (_int_nvtx_call_owners) take their path from
-- _int_nvtx_call_paths instead, so their innermost owners are not listed
-- for them.
-- How: a path is built once per innermost owner (many launches share one
-- in most captures), from the same inequality join as
-- _int_nvtx_call_chains; lists are ordered by depth.

CREATE OR REPLACE TABLE _int_nvtx_owner_paths AS
WITH owners AS (
    SELECT DISTINCT t.nvtx_id,
        (CAST(t.global_tid AS HUGEINT) << 64) + t.seq AS k_seq,
        (CAST(t.global_tid AS HUGEINT) << 64) + t.end_ns AS k_end
    FROM int_nvtx_call_innermost AS c
    JOIN int_nvtx_range_tree AS t ON t.nvtx_id = c.nvtx_id
    WHERE c.call_id NOT IN (SELECT call_id FROM _int_nvtx_call_owners)
),
chains AS (
    SELECT o.nvtx_id AS owner_id, a.nvtx_id, a.depth
    FROM owners AS o
    JOIN (
        SELECT nvtx_id, depth,
            (CAST(global_tid AS HUGEINT) << 64) + seq AS k_seq,
            (CAST(global_tid AS HUGEINT) << 64) + end_ns AS k_end
        FROM int_nvtx_range_tree
        WHERE thread_nests
    ) AS a
        ON a.k_seq <= o.k_seq AND a.k_end >= o.k_end
),
named AS (
    SELECT ch.owner_id, ch.nvtx_id, ch.depth, r.message
    FROM chains AS ch
    JOIN int_nvtx_ranges AS r ON r.nvtx_id = ch.nvtx_id
)
SELECT owner_id AS nvtx_id,
    list(nvtx_id ORDER BY depth) AS nvtx_ids,
    list(message ORDER BY depth) AS nvtx_names
FROM named
GROUP BY owner_id;

COMMENT ON TABLE _int_nvtx_owner_paths IS 'Per innermost owner of a tree-decided launch call: its chain''s ids and names, outer -> inner (private helper of int_nvtx_op_paths).';
