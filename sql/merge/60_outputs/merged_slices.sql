-- merged_slices: the aligned event table of a merge (NAME.perfetto.parquet
-- of nsys-duck merge): trace_slices of the merged trace with the report
-- each slice comes from, one row per slice in the JSON.
--
-- Reads: trace_slices, int_slices_on_tracks, merge_reports.
-- Invariants: the columns of trace_slices (README, "Aligned Parquet"),
-- after report, report_label and rank_no; times are the aligned ones
-- (Nsight's UTC-epoch ns plus merge_reports.shift_ns, 0 under --align
-- utc); slice_id, pid and tid are unique across reports, correlation_id,
-- os_pid, os_tid, context_id, stream_id are the report's own (join on
-- report with them).
-- Role: parquet (NAME.perfetto.parquet of the merge)
-- Python reads: ORDER BY slice_id

CREATE OR REPLACE VIEW merged_slices AS
SELECT
    m.report,
    m.label AS report_label,
    m.rank_no,
    t.*
FROM trace_slices AS t
INNER JOIN int_slices_on_tracks AS s ON s.slice_id = t.slice_id
INNER JOIN merge_reports AS m ON m.report = s.report;

COMMENT ON VIEW merged_slices IS 'The aligned event table of a merge: trace_slices with the report each slice comes from (NAME.perfetto.parquet).';
COMMENT ON COLUMN merged_slices.report IS 'The report (its workspace name).';
COMMENT ON COLUMN merged_slices.report_label IS 'The label of the report''s Perfetto processes (rank N, or the report name).';
COMMENT ON COLUMN merged_slices.rank_no IS 'The rank number the report names end in (report_%q{RANK}); NULL when they do not all end in distinct numbers.';
