-- copy_kinds: one row per CUPTI memcpy kind (copyKind): its label, the
-- device track a copy of that kind is projected on, its trace_summary line,
-- and whether it is a unified-memory kind.
--
-- Reads: nothing (a domain table: edit a row here to change the rule
-- everywhere: stg_memcpys, int_gpu_ops, int_slices and trace_summary read
-- it).
-- Invariants: copy_kind is CUpti_ActivityMemcpyKind (1..13, as Nsight's
-- ENUM_CUDA_MEMCPY_OPER numbers them); exactly one row has copy_kind NULL:
-- the row for a NULL copyKind or a code not listed here (label 'Unknown',
-- no projection, 'memcpy other'). label is used only when the export has no
-- ENUM_CUDA_MEMCPY_OPER label for the code. projection is the track_class
-- (track_classes) of the device-level copy of the slice: 'pcie' (PCIe
-- Usage: host <-> device), 'd2d' (D2D Copy: device-side and peer), or
-- 'none' (not projected: host-to-host, unknown). summary_bucket and
-- summary_ord: the trace_summary line counting the kind and that line's
-- position (every row of one bucket has the same summary_ord).
-- is_unified: a unified-memory kind; such a copy with no stream, context
-- or correlationId is a migration drawn on the Unified Memory track.
-- Source: output-contract.md, Tracks; CUPTI's CUpti_ActivityMemcpyKind.

CREATE OR REPLACE TABLE copy_kinds AS
SELECT * FROM (VALUES
    (1, 'Host-to-Device', 'pcie', 'memcpy H2D', 10, FALSE),
    (2, 'Device-to-Host', 'pcie', 'memcpy D2H', 11, FALSE),
    (3, 'Host-to-Array', 'pcie', 'memcpy H2D', 10, FALSE),
    (4, 'Array-to-Host', 'pcie', 'memcpy D2H', 11, FALSE),
    (5, 'Array-to-Array', 'd2d', 'memcpy D2D/peer', 12, FALSE),
    (6, 'Array-to-Device', 'd2d', 'memcpy D2D/peer', 12, FALSE),
    (7, 'Device-to-Array', 'd2d', 'memcpy D2D/peer', 12, FALSE),
    (8, 'Device-to-Device', 'd2d', 'memcpy D2D/peer', 12, FALSE),
    (9, 'Host-to-Host', 'none', 'memcpy other', 13, FALSE),
    (10, 'Peer-to-Peer', 'd2d', 'memcpy D2D/peer', 12, FALSE),
    (11, 'Unified Host-to-Device', 'pcie', 'memcpy H2D', 10, TRUE),
    (12, 'Unified Device-to-Host', 'pcie', 'memcpy D2H', 11, TRUE),
    (13, 'Unified Device-to-Device', 'd2d', 'memcpy D2D/peer', 12, TRUE),
    (NULL, 'Unknown', 'none', 'memcpy other', 13, FALSE)
) AS t (copy_kind, label, projection, summary_bucket, summary_ord, is_unified);

COMMENT ON TABLE copy_kinds IS 'Domain table: per CUPTI copyKind, its label (when the export has no ENUM_CUDA_MEMCPY_OPER), the device track its copy is projected on, its trace_summary line and whether it is unified memory. The row with copy_kind NULL stands for NULL and unlisted codes. Edit a row to change the rule everywhere.';
COMMENT ON COLUMN copy_kinds.copy_kind IS 'CUPTI_ACTIVITY_KIND_MEMCPY.copyKind (CUpti_ActivityMemcpyKind); NULL: the row for a NULL or unlisted code.';
COMMENT ON COLUMN copy_kinds.label IS 'Name shown in the memcpy slice name and args.copyKind when the export has no ENUM_CUDA_MEMCPY_OPER label for the code.';
COMMENT ON COLUMN copy_kinds.projection IS 'track_class of the copy''s device-level slice: pcie (PCIe Usage), d2d (D2D Copy) or none (not projected).';
COMMENT ON COLUMN copy_kinds.summary_bucket IS 'The trace_summary metric that counts copies of this kind.';
COMMENT ON COLUMN copy_kinds.summary_ord IS 'Print position of that trace_summary metric (the same for every row of a bucket).';
COMMENT ON COLUMN copy_kinds.is_unified IS 'A unified-memory kind: without stream, context and correlationId the copy is a migration on the Unified Memory track.';
