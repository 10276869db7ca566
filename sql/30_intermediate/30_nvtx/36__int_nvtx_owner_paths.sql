-- _int_nvtx_owner_paths: per range that is the innermost owner of a
-- tree-decided launch call, the ids and names of its chain, outer -> inner
-- (private helper of int_nvtx_op_paths).
--
-- Reads: _int_nvtx_owner_chains, _int_nvtx_path_ranks, _int_nvtx_path_lookup,
-- _int_nvtx_owner_batches.
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
-- batches of owners (_int_nvtx_owner_batches: about 12M chain elements
-- each), one statement each: pytorch x400 (203M chain elements) ran out of
-- memory at 2GB in one. There are `statements` statements (set below); a
-- batch past the last is taken by the last (more than 240M elements: more
-- memory). A statement whose batch has no owner reads no chain (its join's
-- build side is empty): 20-40 ms.
-- Time: the batches were owner_id % 16, 16 statements each scanning every
-- chain, whatever the size; on pytorch x40 (20M elements, 2 batches now)
-- this file took 11.0 CPU-s, now 6.3 with _int_nvtx_owner_batches' 0.2
-- (2 cores, 2026-12-07). The ranks are INTEGER:
-- list_sort sorts 4 bytes an element (30% less time than BIGINT).

{% set statements = 20 %}
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
{% for batch in range(statements) %}

-- deep chains, batch {{ batch }}{{ ' and later' if loop.last }} (no row joins unless deep)
INSERT INTO _int_nvtx_owner_paths
WITH deep_orders AS (
    SELECT c.owner_id, list_sort(list(a.path_rank)) AS ranks
    FROM _int_nvtx_owner_chains AS c
    JOIN (
        SELECT owner_id FROM _int_nvtx_owner_batches
        WHERE batch {{ '>=' if loop.last else '=' }} {{ batch }}
    ) AS b ON b.owner_id = c.owner_id
    JOIN _int_nvtx_path_ranks AS a ON a.nvtx_id = c.nvtx_id
    GROUP BY c.owner_id
)
SELECT o.owner_id,
    list_select(lookup.ids, o.ranks),
    list_select(lookup.names, list_select(lookup.name_nos, o.ranks))
FROM deep_orders AS o, _int_nvtx_path_lookup AS lookup;
{% endfor %}

COMMENT ON TABLE _int_nvtx_owner_paths IS 'Per innermost owner of a tree-decided launch call: its chain''s ids and names, outer -> inner (private helper of int_nvtx_op_paths).';
