-- _int_nvtx_owner_paths: per range that is the innermost owner of a
-- tree-decided launch call, the ids and names of its chain, outer -> inner
-- (private helper of int_nvtx_op_paths).
--
-- Reads: _int_nvtx_owner_chains, _int_nvtx_path_ranks, _int_nvtx_path_lookup.
-- Invariants: one row per such nvtx_id; nvtx_ids and nvtx_names have the
-- same length and order (by depth: the path order of a chain). Calls that
-- also have pair owners (_int_nvtx_call_owners) take their path from
-- _int_nvtx_call_paths instead (int_nvtx_op_paths).
-- How: a path is built once per innermost owner (many launches share one
-- in most captures), from _int_nvtx_owner_chains, in one of two ways with
-- the same result. Deep chains (more chain elements than 3x the ranges: pytorch's 1,000-deep
-- stacks give 101M elements over 4.5M ranges at 5M rows) aggregate only
-- integers: each range's rank in path order, sorted per owner, then mapped
-- to ids and names through _int_nvtx_path_lookup (an ordered list() carrying the
-- names needs memory for every element and ran out at 2GB). Shallow chains
-- (16M ranges nested 4 deep: a lookup list of 16M names would not fit)
-- use ordered list() aggregates.
-- Memory: the list aggregates cannot spill, so deep chains are taken in
-- batches of owners (owner_id % batches, set below), one statement each:
-- pytorch x400 (203M chain elements) ran out of memory at 2GB in one.

{% set batches = 16 %}
-- shallow chains: one statement (no row joins when deep)
CREATE OR REPLACE TABLE _int_nvtx_owner_paths AS
SELECT c.owner_id AS nvtx_id,
    list(c.nvtx_id ORDER BY a.depth) AS nvtx_ids,
    list(a.message ORDER BY a.depth) AS nvtx_names
FROM _int_nvtx_owner_chains AS c
JOIN (
    SELECT nvtx_id, depth, message FROM _int_nvtx_path_ranks
    WHERE NOT (SELECT is_deep FROM _int_nvtx_path_lookup)
) AS a ON a.nvtx_id = c.nvtx_id
GROUP BY c.owner_id;
{% for batch in range(batches) %}

-- deep chains, batch {{ batch }} (no row joins unless deep)
INSERT INTO _int_nvtx_owner_paths
WITH deep_orders AS (
    SELECT c.owner_id, list_sort(list(a.path_rank)) AS ranks
    FROM _int_nvtx_owner_chains AS c
    JOIN (
        SELECT nvtx_id, path_rank FROM _int_nvtx_path_ranks
        WHERE (SELECT is_deep FROM _int_nvtx_path_lookup)
    ) AS a ON a.nvtx_id = c.nvtx_id
    WHERE c.owner_id % {{ batches }} = {{ batch }}
    GROUP BY c.owner_id
)
SELECT o.owner_id,
    list_select(lookup.ids, o.ranks),
    list_select(lookup.names, list_select(lookup.name_nos, o.ranks))
FROM deep_orders AS o, _int_nvtx_path_lookup AS lookup;
{% endfor %}

COMMENT ON TABLE _int_nvtx_owner_paths IS 'Per innermost owner of a tree-decided launch call: its chain''s ids and names, outer -> inner (private helper of int_nvtx_op_paths).';
