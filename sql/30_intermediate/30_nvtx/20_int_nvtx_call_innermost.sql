-- int_nvtx_call_innermost: per launch call on a thread that started NVTX
-- ranges, the innermost range of that thread owning it under the thread
-- rule, when the range tree decides it.
--
-- Reads: _int_nvtx_stack, int_nvtx_range_tree.
-- Invariants: one row per launch call (launched_gpu_work) on a thread with
-- ranges. by_tree TRUE: the thread's ranges nest and the innermost range
-- open at the call's start also contains its end; then the call's
-- thread-rule owners are exactly nvtx_id and its parent chain (NULL
-- nvtx_id: no range of its thread contains it). by_tree FALSE: the call's
-- thread-rule owners come from the interval join of
-- 21__int_nvtx_call_owners.sql (threads whose ranges cross, or a call that
-- outlasts the innermost open range).

CREATE OR REPLACE TABLE int_nvtx_call_innermost AS
WITH calls AS (
    SELECT s.global_tid, s.seq, s.depth, s.call_id, s.end_ns
    FROM _int_nvtx_stack AS s
    WHERE s.call_id IS NOT NULL
),
open_range AS (
    SELECT c.call_id, c.global_tid, c.depth, c.end_ns AS call_end_ns,
        t.nvtx_id, t.end_ns AS range_end_ns
    FROM calls AS c
    ASOF LEFT JOIN int_nvtx_range_tree AS t
        ON t.global_tid = c.global_tid AND t.depth = c.depth
        AND t.seq < c.seq
),
nests AS (
    SELECT DISTINCT global_tid, thread_nests FROM int_nvtx_range_tree
)
SELECT call_id, global_tid,
    CASE WHEN by_tree AND depth > 0 THEN nvtx_id END AS nvtx_id, by_tree
FROM (
    SELECT o.call_id, o.global_tid, o.depth, o.nvtx_id,
        n.thread_nests AND (o.depth = 0
            OR coalesce(o.range_end_ns >= o.call_end_ns, FALSE)) AS by_tree
    FROM open_range AS o
    JOIN nests AS n ON n.global_tid = o.global_tid
);

COMMENT ON TABLE int_nvtx_call_innermost IS 'Per launch call on a thread that started NVTX ranges: the innermost range of that thread owning it (thread rule) when the range tree decides it (by_tree).';
COMMENT ON COLUMN int_nvtx_call_innermost.call_id IS 'Launch call (int_runtime_calls.call_id, launched_gpu_work).';
COMMENT ON COLUMN int_nvtx_call_innermost.global_tid IS 'Nsight globalTid of the calling thread.';
COMMENT ON COLUMN int_nvtx_call_innermost.nvtx_id IS 'Innermost owning range of the same thread (its chain in int_nvtx_range_tree owns the call); NULL when no range contains the call or by_tree is FALSE.';
COMMENT ON COLUMN int_nvtx_call_innermost.by_tree IS 'TRUE when the tree decides the call''s thread-rule owners; FALSE when they come from the interval join (_int_nvtx_call_owners).';
