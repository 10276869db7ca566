-- track_classes: the kinds of Perfetto thread track under a device (or
-- host) home, in the order they are drawn, with their name and lane rule.
--
-- Reads: nothing (a domain table: int_slices reads it; its names and
-- orders reach int_tracks and the JSON).
-- Invariants: class_order sorts the tracks of a home (output-contract.md,
-- Tracks): 1 CUDA Core Timeline, 2 PCIe Usage, 3 D2D Copy, 4 Unified
-- Memory, 5 stream tracks (and after the streams of each process and
-- context, its CUDA Sync track), 6 per CPU thread: NVTX Kernel, NVTX
-- Thread, CUDA API, OS Runtime, cuDNN, cuBLAS, Thread State, ordered by
-- thread_kind (the CPU-side classes' track_class is cpu_trace_sources'
-- source for the call tables). track_name is the whole name of
-- a device-level track (classes 1-4) and the prefix of the others
-- ('Stream 7 [pid ...]', 'CUDA API [pid ... tid ...]'). lane_rule: how
-- overlapping slices of such a track are split into lanes (10_int_lane_clusters):
-- 'disjoint' (X slices: a lane holds disjoint slices), 'nest' (B slices,
-- and X slices longer than 0 ns: nested, never partially overlapping; an
-- OS runtime call made inside another, nestingLevel 1+, stays under it),
-- NULL (never split: the data nests by construction, as the Thread State
-- slices of a thread, which are disjoint). track_class is the key the
-- stages and copy_kinds use. cuda_side: TRUE for the classes of the CUDA
-- and NVTX rows (GPU work, CUDA API calls, NVTX ranges), FALSE for the CPU
-- side (cpu_trace_sources: OS runtime, cuDNN, cuBLAS, thread states), which
-- a capture may hold or not (--no-osrt ...): merge --align start lines
-- reports up on their first cuda_side slice (merge_reports).

CREATE OR REPLACE TABLE track_classes AS
SELECT * FROM (VALUES
    ('core', 1, NULL, 'CUDA Core Timeline', 'disjoint', TRUE),
    ('pcie', 2, NULL, 'PCIe Usage', 'disjoint', TRUE),
    ('d2d', 3, NULL, 'D2D Copy', 'disjoint', TRUE),
    ('unified', 4, NULL, 'Unified Memory', 'disjoint', TRUE),
    ('stream', 5, NULL, 'Stream', 'disjoint', TRUE),
    ('cuda_sync', 5, NULL, 'CUDA Sync', 'disjoint', TRUE),
    ('nvtx_kernel', 6, 1, 'NVTX Kernel', 'nest', TRUE),
    ('nvtx_thread', 6, 2, 'NVTX Thread', NULL, TRUE),
    ('cuda_api', 6, 3, 'CUDA API', 'disjoint', TRUE),
    ('osrt', 6, 4, 'OS Runtime', 'nest', FALSE),
    ('cudnn', 6, 5, 'cuDNN', 'nest', FALSE),
    ('cublas', 6, 6, 'cuBLAS', 'nest', FALSE),
    ('thread_state', 6, 7, 'Thread State', NULL, FALSE)
) AS t (track_class, class_order, thread_kind, track_name, lane_rule, cuda_side);

COMMENT ON TABLE track_classes IS 'Domain table: the kinds of track under a device, their order, name (or name prefix) and lane rule. Rename a track or change its rule here.';
COMMENT ON COLUMN track_classes.track_class IS 'Key used by the stages and by copy_kinds.projection.';
COMMENT ON COLUMN track_classes.class_order IS 'Sort position of the class under its device (int_tracks orders by it first).';
COMMENT ON COLUMN track_classes.thread_kind IS 'For per-CPU-thread tracks (class 6): their order among the thread''s tracks; NULL otherwise.';
COMMENT ON COLUMN track_classes.track_name IS 'The track''s name (device-level classes) or the prefix of its name (stream, CUDA Sync and thread tracks).';
COMMENT ON COLUMN track_classes.lane_rule IS 'disjoint (overlapping X slices go to lanes #2...), nest (B slices: lanes hold nested slices only) or NULL (never split).';
COMMENT ON COLUMN track_classes.cuda_side IS 'TRUE for CUDA/NVTX rows (GPU work, CUDA API, NVTX), FALSE for the CPU side (OS runtime, cuDNN, cuBLAS, thread states): merge --align start lines reports up on their first cuda_side slice.';
