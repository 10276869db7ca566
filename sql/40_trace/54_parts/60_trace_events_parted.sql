-- trace_events_parted: the events of the JSON trace with the part each one
-- is written in; the JSON writer reads it in one pass and routes each row to
-- its part's file (NAME.part-NNN.perfetto.json.gz, or NAME.perfetto.json.gz
-- when trace_parts has one row).
--
-- Reads: trace_events_selected, trace_part_starts, trace_size_grid.
-- Invariants: part = trace_part_of(starts, part_ns) (00_macros, trace_parts),
-- in 1..N; NULL for metadata (part_ns NULL), which every part holds; a flow
-- is kept only when both its slices start in one part (part_ns and
-- part_ns_other), the others are counted by trace_split_summary; no event
-- text is changed. One part: every selected event, part 1. size_bucket:
-- the event's time bucket of trace_size_grid (trace_size_bucket of
-- part_ns: integer, so part k starts at the first ns of its first bucket),
-- NULL for metadata; the writer adds each row's bytes to its bucket
-- (trace_json_sizes). size_bucket_other: that of part_ns_other (a flow's
-- other slice; otherwise size_bucket), so a writer that kept the rows of
-- a one-part attempt can route them to parts by bucket
-- (trace_bucket_parts) with the same drops as part and part_other.
-- Role: json-trace, writer-input
-- Columns: part INTEGER, size_bucket INTEGER, size_bucket_other INTEGER,
--   event_json VARCHAR, ph VARCHAR,
--   is_stacked BOOLEAN,
--   order_tid BIGINT, order_ns BIGINT, order_phase INTEGER, order_span BIGINT,
--   order_seq BIGINT
-- How the JSON writer reads it (nsys_duck/writers.py): the unordered events
-- one kind (ph) at a time, so one query holds only the hash tables of its
-- kind (on the 16M-NVTX input the X slices' query alone ran out of memory
-- at 2GB while int_gpu_op_args was a view; that the split itself is needed
-- was not measured). Every flow start comes before every flow end: an s
-- and its f may share a ts, and at equal ts Perfetto reads such events in
-- file order (perfetto-json.md 2), so an f read first would find no flow
-- (flow_end_without_start, an info stat) and the arrow would be lost. The
-- fourth query takes every other kind, so a kind added here is still
-- written. Then the B/E and async b/e events in their sort-key order.
-- Python reads: WHERE NOT is_stacked AND ph = 'X'
-- Python reads: WHERE NOT is_stacked AND ph = 's'
-- Python reads: WHERE NOT is_stacked AND ph = 'f'
-- Python reads: WHERE NOT is_stacked AND (ph IS NULL OR ph NOT IN ('X', 's', 'f'))
-- Python reads: WHERE is_stacked ORDER BY order_tid, order_ns, order_phase, order_span, order_seq
-- Column comments from: trace_events_selected.

CREATE OR REPLACE VIEW trace_events_parted AS
WITH located AS (
    SELECT
        e.*,
        CASE WHEN e.part_ns IS NOT NULL
            THEN trace_part_of(b.starts, e.part_ns) END AS part,
        CASE WHEN e.part_ns IS NOT NULL
            THEN trace_part_of(b.starts, e.part_ns_other) END AS part_other,
        trace_size_bucket(g.lo_ns, g.hi_ns, g.buckets, e.part_ns)
            AS size_bucket,
        trace_size_bucket(g.lo_ns, g.hi_ns, g.buckets, e.part_ns_other)
            AS size_bucket_other
    FROM trace_events_selected AS e, trace_part_starts AS b, trace_size_grid AS g
)
SELECT
    CAST(part AS INTEGER) AS part, size_bucket, size_bucket_other, event_json,
    ph, is_stacked,
    order_tid, order_ns, order_phase, order_span, order_seq
FROM located
WHERE part IS NOT DISTINCT FROM part_other;

COMMENT ON VIEW trace_events_parted IS 'The events of the JSON trace (trace_events_selected) with the part of a split trace each is written in (NULL: metadata, in every part); flows across two parts are left out.';
COMMENT ON COLUMN trace_events_parted.part IS 'Part number (trace_parts.part) whose window holds the start of the event''s slice; NULL for metadata (written in every part).';
COMMENT ON COLUMN trace_events_parted.size_bucket_other IS 'Time bucket of the start of a flow''s other slice (otherwise size_bucket); NULL for metadata.';
COMMENT ON COLUMN trace_events_parted.size_bucket IS 'Time bucket of trace_size_grid (0..buckets-1) of the start of the event''s slice, where the writer counts its bytes (trace_json_sizes); NULL for metadata.';
COMMENT ON COLUMN trace_events_parted.ph IS 'The event''s Chrome Trace ph: the writer reads the unordered events one kind at a time (X slices, flows, the rest), so one query never holds the hash tables of every kind at once.';
