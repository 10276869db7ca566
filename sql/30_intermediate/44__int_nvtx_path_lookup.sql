-- _int_nvtx_path_lookup: when NVTX chains are deep, the ids and names of
-- all ranges of nesting threads as two lists indexed by path rank (private
-- helper of _int_nvtx_owner_paths).
--
-- Reads: _int_nvtx_path_ranks, _int_nvtx_owner_chains.
-- Invariants: one row; ids[k] and names[k] are the range of path_rank k.
-- is_deep: the chains have more elements than 3x the ranges (pytorch's
-- 1,000-deep stacks: 203M elements over 9M ranges at x400); only then are
-- the lists filled (empty otherwise: a lookup list of 16M names, for 16M
-- ranges nested 4 deep, would not fit in memory). A table of its own: built
-- inside the path statement it ran pytorch x400 out of memory at 2GB.

CREATE OR REPLACE TABLE _int_nvtx_path_lookup AS
WITH deep AS (
    SELECT (SELECT count(*) FROM _int_nvtx_owner_chains)
        > 3 * (SELECT count(*) FROM _int_nvtx_path_ranks) AS is_deep
),
lists AS (
    -- no row read unless deep
    SELECT list(nvtx_id ORDER BY path_rank) AS ids,
        list(message ORDER BY path_rank) AS names
    FROM _int_nvtx_path_ranks
    WHERE (SELECT is_deep FROM deep)
)
SELECT deep.is_deep,
    coalesce(lists.ids, CAST([] AS BIGINT[])) AS ids,
    coalesce(lists.names, CAST([] AS VARCHAR[])) AS names
FROM deep, lists;

COMMENT ON TABLE _int_nvtx_path_lookup IS 'One row: whether NVTX chains are deep, and then the ids and names of the ranges of nesting threads indexed by path rank (private helper of _int_nvtx_owner_paths).';
COMMENT ON COLUMN _int_nvtx_path_lookup.is_deep IS 'TRUE when chain elements outnumber 3x the ranges: paths are built from integer ranks.';
COMMENT ON COLUMN _int_nvtx_path_lookup.ids IS 'nvtx_id of path rank k at [k] (empty unless is_deep).';
COMMENT ON COLUMN _int_nvtx_path_lookup.names IS 'Name of path rank k at [k] (empty unless is_deep).';
