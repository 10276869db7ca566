-- _int_nvtx_path_lookup: when NVTX chains are deep, the ids and names of
-- all ranges of nesting threads as two lists indexed by path rank (private
-- helper of _int_nvtx_owner_paths).
--
-- Reads: _int_nvtx_path_ranks, _int_nvtx_owner_chains.
-- Invariants: one row; ids[k] and names[name_nos[k]] are the id and name of
-- the range of path_rank k (names: the distinct names, so a 1,000-deep
-- stack of a few names costs 4 bytes a range, not a string).
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
ranks AS (
    -- no row read unless deep
    SELECT nvtx_id, path_rank, message FROM _int_nvtx_path_ranks
    WHERE (SELECT is_deep FROM deep)
),
names AS (
    -- distinct names, numbered (deep stacks repeat a few names)
    SELECT message, CAST(row_number() OVER (ORDER BY message) AS INTEGER)
        AS name_no
    FROM (SELECT DISTINCT message FROM ranks)
),
lists AS (
    SELECT list(r.nvtx_id ORDER BY r.path_rank) AS ids,
        list(n.name_no ORDER BY r.path_rank) AS name_nos
    FROM ranks AS r
    JOIN names AS n ON n.message IS NOT DISTINCT FROM r.message
)
SELECT deep.is_deep,
    coalesce(lists.ids, CAST([] AS BIGINT[])) AS ids,
    coalesce(lists.name_nos, CAST([] AS INTEGER[])) AS name_nos,
    coalesce((SELECT list(message ORDER BY name_no) FROM names),
        CAST([] AS VARCHAR[])) AS names
FROM deep, lists;

COMMENT ON TABLE _int_nvtx_path_lookup IS 'One row: whether NVTX chains are deep, and then the ids and name numbers of the ranges of nesting threads indexed by path rank, and the distinct names (private helper of _int_nvtx_owner_paths).';
COMMENT ON COLUMN _int_nvtx_path_lookup.is_deep IS 'TRUE when chain elements outnumber 3x the ranges: paths are built from integer ranks.';
COMMENT ON COLUMN _int_nvtx_path_lookup.ids IS 'nvtx_id of path rank k at [k] (empty unless is_deep).';
COMMENT ON COLUMN _int_nvtx_path_lookup.name_nos IS 'Name number (into names) of path rank k at [k] (empty unless is_deep).';
COMMENT ON COLUMN _int_nvtx_path_lookup.names IS 'The distinct range names, by name number (empty unless is_deep).';
