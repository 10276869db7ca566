-- int_nvtx_range_tree: every NVTX range of int_nvtx_ranges with its parent
-- on its thread (the innermost range containing it), and whether its
-- thread's ranges nest.
--
-- Reads: _int_nvtx_stack.
-- Invariants: one row per nvtx_id of int_nvtx_ranges. On a thread whose
-- ranges nest (thread_nests: every range lies inside its parent; always so
-- for push/pop ranges of one NVTX domain), the ranges containing a range R
-- are exactly R's parent chain, and the ranges containing a launch call
-- are the chain of int_nvtx_call_innermost.nvtx_id (proof below), so
-- ownership, paths and projections need no (range, call) pairs there.
-- Threads whose ranges cross (start/end ranges, several domains) keep the
-- pairs (21__int_nvtx_call_owners.sql).
--
-- Why it is exact. seq orders ranges by (start, longer first, nvtx_id), the
-- path order; depth(R) - 1 counts the ranges before R that are still open at
-- R's start. The parent of R is the last range before R with depth
-- depth(R) - 1 (ASOF JOIN). If every range lies inside its parent, R's chain
-- of parents holds depth(R) - 1 distinct ranges that contain R, all before R
-- and open at its start, so it is all of them: any range before R that
-- overlaps R contains it, i.e. the ranges are laminar. In a laminar family
-- the last range of depth d before a point with d open ranges is the
-- innermost open one, and the ranges containing it are its chain.

CREATE OR REPLACE TABLE int_nvtx_range_tree AS
WITH ranges AS (
    SELECT global_tid, seq, depth, nvtx_id, start_ns, end_ns
    FROM _int_nvtx_stack
    WHERE nvtx_id IS NOT NULL
),
linked AS (
    SELECT r.nvtx_id, r.global_tid, r.seq, r.depth, r.start_ns, r.end_ns,
        p.nvtx_id AS parent_nvtx_id,
        r.depth = 1 OR coalesce(p.end_ns >= r.end_ns, FALSE) AS inside_parent
    FROM ranges AS r
    ASOF LEFT JOIN ranges AS p
        ON p.global_tid = r.global_tid AND p.depth = r.depth - 1
        AND p.seq < r.seq
)
SELECT nvtx_id, global_tid, seq, depth, start_ns, end_ns, parent_nvtx_id,
    bool_and(inside_parent) OVER (PARTITION BY global_tid) AS thread_nests
FROM linked;

COMMENT ON TABLE int_nvtx_range_tree IS 'Every NVTX range with its parent on its thread (the innermost range containing it) and whether its thread''s ranges nest; on such threads the ranges owning a call are the chain of its innermost owner.';
COMMENT ON COLUMN int_nvtx_range_tree.nvtx_id IS 'NVTX row id (stg_nvtx_events.nvtx_id).';
COMMENT ON COLUMN int_nvtx_range_tree.global_tid IS 'Nsight globalTid of the thread that started the range.';
COMMENT ON COLUMN int_nvtx_range_tree.seq IS 'Stack order on the thread (by start, longer first, nvtx_id; calls interleaved): the path order.';
COMMENT ON COLUMN int_nvtx_range_tree.depth IS 'Ranges of the thread open at the range''s start, itself included (1: outermost).';
COMMENT ON COLUMN int_nvtx_range_tree.start_ns IS 'Range start, UTC-epoch ns.';
COMMENT ON COLUMN int_nvtx_range_tree.end_ns IS 'Range end, UTC-epoch ns.';
COMMENT ON COLUMN int_nvtx_range_tree.parent_nvtx_id IS 'The last range before it one level up (its parent when thread_nests); NULL at depth 1.';
COMMENT ON COLUMN int_nvtx_range_tree.thread_nests IS 'TRUE when every range of the thread lies inside its parent (the thread''s ranges are laminar).';
