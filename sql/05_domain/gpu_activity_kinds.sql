-- gpu_activity_kinds: the JSON cat of every GPU slice: which GPU operation
-- it draws and on which class of track.
--
-- Reads: nothing (a domain table: int_gpu_ops reads it for the projected
-- copy of each operation).
-- Invariants: one row per slice_cat. op_cat is the operation as executed
-- (int_gpu_ops.cat, or gpu_sync / cuda_event for the GPU-side records);
-- is_projection marks the device-level copy of an operation (its
-- track_class 'core', 'pcie' or 'd2d'); each op_cat has at most one
-- projection per track_class. The as-executed slice of a memcpy goes on its
-- stream, or on Unified Memory when it is a migration (copy_kinds).
-- Source: output-contract.md, Events and Tracks.

CREATE OR REPLACE TABLE gpu_activity_kinds AS
SELECT * FROM (VALUES
    ('kernel', 'kernel', FALSE, 'stream'),
    ('kernel_core', 'kernel', TRUE, 'core'),
    ('cuda_graph', 'cuda_graph', FALSE, 'stream'),
    ('cuda_graph_core', 'cuda_graph', TRUE, 'core'),
    ('memcpy', 'memcpy', FALSE, 'stream'),
    ('memcpy_pcie', 'memcpy', TRUE, 'pcie'),
    ('memcpy_d2d', 'memcpy', TRUE, 'd2d'),
    ('memset', 'memset', FALSE, 'stream'),
    ('gpu_sync', 'gpu_sync', FALSE, 'cuda_sync'),
    ('cuda_event', 'cuda_event', FALSE, 'stream')
) AS t (slice_cat, op_cat, is_projection, track_class);

COMMENT ON TABLE gpu_activity_kinds IS 'Domain table: every GPU slice cat, the GPU operation it draws and the class of track it lies on (is_projection: the device-level copy of the operation).';
COMMENT ON COLUMN gpu_activity_kinds.slice_cat IS 'The slice''s JSON cat (trace_slices.cat).';
COMMENT ON COLUMN gpu_activity_kinds.op_cat IS 'The operation it draws: int_gpu_ops.cat (kernel, memcpy, memset, cuda_graph), or gpu_sync / cuda_event.';
COMMENT ON COLUMN gpu_activity_kinds.is_projection IS 'TRUE for the device-level copy of an operation (CUDA Core Timeline, PCIe Usage, D2D Copy).';
COMMENT ON COLUMN gpu_activity_kinds.track_class IS 'track_classes.track_class of the track the slice lies on (memcpy: stream, or unified for migrations).';
