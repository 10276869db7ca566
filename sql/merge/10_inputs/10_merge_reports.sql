-- merge_reports: the reports of a merge (nsys-duck merge), one row each,
-- in timeline order, with the label their Perfetto processes carry, the
-- time shift that aligns them and the offsets that keep their ids apart.
--
-- Reads: the per-report relations nsys_duck/merge.py copied out of each
-- report's NAME.duckdb into a hive-partitioned Parquet dataset,
-- {{ merge_reports_dir }}/report=NAME/RELATION.parquet (int_homes,
-- int_tracks, int_slices_on_tracks, int_flows, int_gpu_ops,
-- int_runtime_links, stg_export_info).
-- Invariants:
-- - Order and label: when there are two reports or more, every report's
--   name ends in a number and the numbers differ (nsys profile -o
--   report_%q{RANK}: report_0, report_1, ...), report k is "rank N",
--   ordered by N; otherwise the report's name, ordered by name. rank_no is
--   that number (NULL otherwise). The report is its name as
--   nsys_duck/merge.py gives it (report_names: the workspace NAME, or
--   FOLDER/NAME where two reports share one), read back from the partition
--   folder report=NAME (percent-encoded).
-- - Time (template variable merge_align): 'utc' (default) keeps Nsight's
--   times, which are UTC epoch ns in every report (--ts-normalize, or the
--   session start added by stg_export_info), as nsys recipe aligns
--   reports; shift_ns = 0. 'start' shifts each report so its first event
--   lies at the first event of the earliest report (for reports whose
--   clocks were not synchronized): shift_ns = min(first_ns) - first_ns.
-- - Ids: for each kind of id (JSON pid, JSON tid, home, slice, GPU
--   operation, API call, NVTX row, flow) report k's ids
--   [lo_k, hi_k] move to [base + sum of the ranges (hi - lo + 1) of the
--   reports before it, ...): the offset added is that start minus lo_k.
--   So ranges never meet across reports (whatever the sign of the ids:
--   CPU homes have negative ids), order inside a report is kept, JSON pids
--   and tids count from 1 (base 1; other ids base 0) and pids follow the
--   report order (process_sort_index = pid).
-- - JSON pids and tids of the last report must stay below 2^31 (Perfetto's
--   limit): check_tracks (55_pipeline_checks) refuses the merge otherwise.

CREATE OR REPLACE TABLE merge_reports AS
{% set dataset = "hive_partitioning = TRUE, hive_types = {'report': VARCHAR}, union_by_name = TRUE" %}
WITH
homes AS (
    SELECT * FROM read_parquet('{{ merge_reports_dir }}/*/int_homes.parquet', {{ dataset }})
),

tracks AS (
    SELECT * FROM read_parquet('{{ merge_reports_dir }}/*/int_tracks.parquet', {{ dataset }})
),

slices AS (
    SELECT * FROM read_parquet(
        '{{ merge_reports_dir }}/*/int_slices_on_tracks.parquet', {{ dataset }})
),

ops AS (
    SELECT * FROM read_parquet('{{ merge_reports_dir }}/*/int_gpu_ops.parquet', {{ dataset }})
),

links AS (
    SELECT * FROM read_parquet(
        '{{ merge_reports_dir }}/*/int_runtime_links.parquet', {{ dataset }})
),

flows AS (
    SELECT * FROM read_parquet('{{ merge_reports_dir }}/*/int_flows.parquet', {{ dataset }})
),

info AS (
    SELECT report, any_value(session_start_ns) AS session_start_ns
    FROM read_parquet('{{ merge_reports_dir }}/*/stg_export_info.parquet', {{ dataset }})
    GROUP BY report
),

-- every id of each kind a report uses: its range [lo, hi]
ids AS (
    SELECT report, 'pid' AS kind, json_pid AS id FROM homes
    UNION ALL SELECT report, 'home', home_id FROM homes
    UNION ALL SELECT report, 'tid', json_tid FROM tracks
    UNION ALL SELECT report, 'slice', slice_id FROM slices
    UNION ALL SELECT report, 'nvtx', nvtx_id FROM slices
    UNION ALL SELECT report, 'call', call_id FROM slices
    UNION ALL SELECT report, 'call', linked_call_id FROM slices
    UNION ALL SELECT report, 'call', call_id FROM links
    UNION ALL SELECT report, 'call', call_id FROM flows
    UNION ALL SELECT report, 'op', op_id FROM slices
    UNION ALL SELECT report, 'op', op_id FROM ops
    UNION ALL SELECT report, 'op', op_id FROM links
    UNION ALL SELECT report, 'op', op_id FROM flows
    UNION ALL SELECT report, 'flow', flow_id FROM flows
),

ranges AS (
    SELECT report, kind, min(id) AS lo, max(id) AS hi
    FROM ids
    WHERE id IS NOT NULL
    GROUP BY report, kind
),

spans AS (
    SELECT
        report,
        min(start_ns) AS first_ns,
        max(end_ns) AS last_ns,
        count(*) AS slices
    FROM slices
    GROUP BY report
),

numbered AS (
    SELECT
        r.report,
        try_cast(regexp_extract(r.report, '(\d+)$', 1) AS BIGINT) AS number
    FROM (SELECT DISTINCT report FROM homes) AS r
),

by_rank AS (
    -- two reports or more, every name ends in a number, no two in the same one
    SELECT
        count(*) > 1 AND count(number) = count(*) AND count(DISTINCT number) = count(*)
            AS ok
    FROM numbered
),

ordered AS (
    SELECT
        numbered.report,
        CASE WHEN by_rank.ok THEN numbered.number END AS rank_no,
        row_number() OVER (
            ORDER BY CASE WHEN by_rank.ok THEN numbered.number END, numbered.report
        ) AS ordinal
    FROM numbered, by_rank
),

offsets AS (
    SELECT
        ordered.report,
        ranges.kind,
        CAST(CASE WHEN ranges.kind IN ('pid', 'tid') THEN 1 ELSE 0 END
            + coalesce(sum(ranges.hi - ranges.lo + 1) OVER (
                PARTITION BY ranges.kind ORDER BY ordered.ordinal
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)
            - ranges.lo AS BIGINT) AS added
    FROM ordered
    INNER JOIN ranges ON ranges.report = ordered.report
)

SELECT
    ordered.report,
    CAST(ordered.ordinal AS INTEGER) AS ordinal,
    ordered.rank_no,
    CASE WHEN ordered.rank_no IS NOT NULL
        THEN 'rank ' || CAST(ordered.rank_no AS VARCHAR)
        ELSE ordered.report END AS label,
    CASE '{{ merge_align }}'
        WHEN 'utc' THEN 0
        WHEN 'start' THEN min(spans.first_ns) OVER () - spans.first_ns
    END AS shift_ns,
    spans.first_ns,
    spans.last_ns,
    info.session_start_ns,
    coalesce(spans.slices, 0) AS slices,
{%- for kind in ['pid', 'tid', 'home', 'slice', 'op', 'call', 'nvtx', 'flow'] %}
    coalesce((
        SELECT offsets.added FROM offsets
        WHERE offsets.report = ordered.report AND offsets.kind = '{{ kind }}'
    ), 0) AS {{ kind }}_offset{{ "," if not loop.last }}
{%- endfor %}
FROM ordered
LEFT JOIN spans ON spans.report = ordered.report
LEFT JOIN info ON info.report = ordered.report
ORDER BY ordered.ordinal;

COMMENT ON TABLE merge_reports IS 'The reports of a merge, one row each in timeline order: label, time shift and id offsets (sql/merge/10_inputs/10_merge_reports.sql).';
COMMENT ON COLUMN merge_reports.report IS 'The report: its workspace name (the hive partition report=NAME).';
COMMENT ON COLUMN merge_reports.ordinal IS 'Position in the merged timeline, 1..N (processes are grouped and sorted by it).';
COMMENT ON COLUMN merge_reports.rank_no IS 'The number the report name ends in, when every name ends in a distinct one (report_%q{RANK}); else NULL.';
COMMENT ON COLUMN merge_reports.label IS 'What the report''s Perfetto processes are prefixed with: rank N, or the report name.';
COMMENT ON COLUMN merge_reports.shift_ns IS 'ns added to every time of the report (0 under --align utc; under --align start, the earliest report''s first event minus this one''s).';
COMMENT ON COLUMN merge_reports.first_ns IS 'The report''s first slice start, UTC-epoch ns, before the shift.';
COMMENT ON COLUMN merge_reports.last_ns IS 'The report''s last slice end, UTC-epoch ns, before the shift.';
COMMENT ON COLUMN merge_reports.session_start_ns IS 'TARGET_INFO_SESSION_START_TIME.utcEpochNs of the report (stg_export_info), before the shift.';
COMMENT ON COLUMN merge_reports.slices IS 'Slices of the report''s own conversion (int_slices_on_tracks rows).';
COMMENT ON COLUMN merge_reports.pid_offset IS 'Added to the report''s JSON pids (json_pid, s_pid, f_pid).';
COMMENT ON COLUMN merge_reports.tid_offset IS 'Added to the report''s JSON tids (json_tid, s_tid, f_tid).';
COMMENT ON COLUMN merge_reports.home_offset IS 'Added to the report''s home ids.';
COMMENT ON COLUMN merge_reports.slice_offset IS 'Added to the report''s slice ids (slice_id, api_slice_id, gpu_slice_id).';
COMMENT ON COLUMN merge_reports.op_offset IS 'Added to the report''s GPU operation ids (op_id).';
COMMENT ON COLUMN merge_reports.call_offset IS 'Added to the report''s API call ids (call_id, linked_call_id).';
COMMENT ON COLUMN merge_reports.nvtx_offset IS 'Added to the report''s NVTX row ids (nvtx_id, nvtx_ids).';
COMMENT ON COLUMN merge_reports.flow_offset IS 'Added to the report''s flow ids (the JSON flow "id").';
