-- trace_notes: one-sentence notes on what the capture lacks, printed as
-- "note: ..." lines of the summary (convert and merge), in ord order.
--
-- Reads: int_gpu_ops.
-- Invariants: no row when the capture has kernels (or CUDA graph
-- executions). A capture without any GPU operation (kernel, CUDA graph
-- execution, memcpy, memset: int_gpu_ops is empty, e.g. an export with
-- none of those tables) gets the no-GPU-activity note; one with copies or
-- memsets but no kernel or graph execution (an export without a kernel
-- table) gets the no-kernel note. At most one row.
-- Role: notes (printed after the summary)
-- Python reads: ORDER BY ord

CREATE OR REPLACE VIEW trace_notes AS
WITH ops AS (
    SELECT
        count(*) AS gpu_ops,
        count(*) FILTER (WHERE cat IN ('kernel', 'cuda_graph')) AS kernels
    FROM int_gpu_ops
)
SELECT 1 AS ord,
    'this capture has no GPU activity (no kernel, CUDA graph, memcpy or '
    || 'memset rows in the export): the trace holds the CPU side only'
        AS note
FROM ops
WHERE gpu_ops = 0
UNION ALL
SELECT 2,
    'this capture has no kernels (no CUPTI_ACTIVITY_KIND_KERNEL rows in '
    || 'the export): its GPU tracks hold only copies, memsets and '
    || 'synchronization'
FROM ops
WHERE gpu_ops > 0 AND kernels = 0;

COMMENT ON VIEW trace_notes IS 'One-sentence notes on what the capture lacks (no GPU activity, no kernels), for the summary''s note: lines.';
COMMENT ON COLUMN trace_notes.ord IS 'Print order.';
COMMENT ON COLUMN trace_notes.note IS 'The sentence, without the leading "note: ".';
