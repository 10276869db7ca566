-- _int_nvtx_path_ranks: the ranges of nesting threads numbered in path
-- order (private helper of _int_nvtx_owner_paths).
--
-- Reads: int_nvtx_range_tree, int_nvtx_ranges.
-- Invariants: one row per range of a thread whose ranges nest
-- (thread_nests); path_rank = 1..N, dense, by (global_tid, seq), so on one
-- thread an enclosing range ranks before the ranges inside it, and sorting a
-- chain's ranks gives its path order, outer -> inner.

CREATE OR REPLACE TABLE _int_nvtx_path_ranks AS
SELECT t.nvtx_id, t.depth, r.message,
    -- INTEGER: list_sort of a chain's ranks sorts 4 bytes an element
    CAST(row_number() OVER (ORDER BY t.global_tid, t.seq) AS INTEGER)
        AS path_rank
FROM int_nvtx_range_tree AS t
JOIN int_nvtx_ranges AS r ON r.nvtx_id = t.nvtx_id
WHERE t.thread_nests;

COMMENT ON TABLE _int_nvtx_path_ranks IS 'The ranges of nesting threads numbered in path order (thread, then stack order): sorting a chain''s ranks gives its path outer -> inner (private helper of _int_nvtx_owner_paths).';
COMMENT ON COLUMN _int_nvtx_path_ranks.nvtx_id IS 'The range (int_nvtx_ranges.nvtx_id).';
COMMENT ON COLUMN _int_nvtx_path_ranks.depth IS 'Its depth on its thread (int_nvtx_range_tree.depth).';
COMMENT ON COLUMN _int_nvtx_path_ranks.message IS 'Its name (int_nvtx_ranges.message).';
COMMENT ON COLUMN _int_nvtx_path_ranks.path_rank IS 'Rank 1..N by (global_tid, seq).';
