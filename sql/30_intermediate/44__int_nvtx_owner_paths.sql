-- _int_nvtx_owner_paths: per range that is the innermost owner of a
-- tree-decided launch call, the ids and names of its chain, outer -> inner
-- (private helper of int_nvtx_op_paths).
--
-- Reads: _int_nvtx_owner_chains, int_nvtx_range_tree, int_nvtx_ranges.
-- Invariants: one row per such nvtx_id; nvtx_ids and nvtx_names have the
-- same length and order (by depth: the path order of a chain). Calls that
-- also have pair owners (_int_nvtx_call_owners) take their path from
-- _int_nvtx_call_paths instead (int_nvtx_op_paths).
-- How: a path is built once per innermost owner (many launches share one
-- in most captures), from _int_nvtx_owner_chains, in one of two ways with
-- the same result. Deep chains (more chain elements than 3x the ranges: pytorch's 1,000-deep
-- stacks give 101M elements over 4.5M ranges at 5M rows) aggregate only
-- integers: each range's rank in path order, sorted per owner, then mapped
-- to ids and names through one lookup list (an ordered list() carrying the
-- names needs memory for every element and ran out at 2GB). Shallow chains
-- (16M ranges nested 4 deep: a lookup list of 16M names would not fit)
-- use ordered list() aggregates.

CREATE OR REPLACE TABLE _int_nvtx_owner_paths AS
WITH ranked AS MATERIALIZED (
    -- the ranges of nesting threads, numbered in path order (thread, seq)
    SELECT t.nvtx_id, t.depth, r.message,
        CAST(row_number() OVER (ORDER BY t.global_tid, t.seq) AS BIGINT)
            AS path_rank
    FROM int_nvtx_range_tree AS t
    JOIN int_nvtx_ranges AS r ON r.nvtx_id = t.nvtx_id
    WHERE t.thread_nests
),
deep AS (
    -- chain elements against ranges
    SELECT (SELECT count(*) FROM _int_nvtx_owner_chains)
        > 3 * (SELECT count(*) FROM ranked) AS is_deep
),
chains AS (
    SELECT c.owner_id, c.nvtx_id, a.depth, a.path_rank, a.message
    FROM _int_nvtx_owner_chains AS c
    JOIN ranked AS a ON a.nvtx_id = c.nvtx_id
),
lookup AS (
    SELECT list(nvtx_id ORDER BY path_rank) AS ids,
        list(message ORDER BY path_rank) AS names
    FROM ranked
    WHERE (SELECT is_deep FROM deep)
),
deep_orders AS (
    SELECT owner_id, list_sort(list(path_rank)) AS ranks
    FROM chains
    WHERE (SELECT is_deep FROM deep)
    GROUP BY owner_id
)
SELECT o.owner_id AS nvtx_id,
    list_transform(o.ranks, lambda k: lookup.ids[k]) AS nvtx_ids,
    list_transform(o.ranks, lambda k: lookup.names[k]) AS nvtx_names
FROM deep_orders AS o, lookup
UNION ALL
SELECT owner_id,
    list(nvtx_id ORDER BY depth),
    list(message ORDER BY depth)
FROM chains
WHERE NOT (SELECT is_deep FROM deep)
GROUP BY owner_id;

COMMENT ON TABLE _int_nvtx_owner_paths IS 'Per innermost owner of a tree-decided launch call: its chain''s ids and names, outer -> inner (private helper of int_nvtx_op_paths).';
