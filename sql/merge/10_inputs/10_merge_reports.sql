-- merge_reports: the reports of a merge (nsys-duck merge), one row each,
-- in timeline order, with the label their Perfetto processes carry, how
-- their rank was decided, the time shift that aligns them and the offsets
-- that keep their ids apart.
--
-- Reads: the per-report relations nsys_duck/merge.py copied out of each
-- report's NAME.duckdb into a hive-partitioned Parquet dataset,
-- {{ merge_reports_dir }}/report=NAME/RELATION.parquet (int_homes,
-- int_tracks, int_slices_on_tracks, int_flows, int_gpu_ops,
-- int_runtime_links, stg_export_info, stg_capture_rank), and the domain
-- tables rank_name_patterns and track_classes.
-- Invariants:
-- - Rank (rank_no, rank_source) when there are two reports or more, from
--   the first of these sources that gives every report a rank, no two the
--   same: the capture's environment (stg_capture_rank: RANK,
--   OMPI_COMM_WORLD_RANK, SLURM_PROCID...; rank_source 'from env VAR');
--   the report's own name (its last part) when it says a rank
--   (rank_name_patterns: report_3, rank3, x_r3, as nsys profile -o
--   report_%q{RANK} names them; not a bare trailing number such as a year:
--   rank_source 'from file name ''NAME'''); else none (rank_no NULL,
--   rank_source 'order'). Mixed sources are never combined (an env rank
--   of one report could equal a name rank of another).
-- - Order and label: by rank_no, then by report; label "rank N" when the
--   report has a rank_no, else the report itself. The report is its name
--   as nsys_duck/merge.py gives it (report_names: the workspace NAME, or
--   FOLDER/NAME where two reports share one), read back from the partition
--   folder report=NAME (percent-encoded).
-- - Time (template variable merge_align): 'utc' (default) keeps Nsight's
--   times, which are UTC epoch ns in every report (--ts-normalize, or the
--   session start added by stg_export_info), as nsys recipe aligns
--   reports; shift_ns = 0. 'start' shifts each report so its first CUDA or
--   NVTX slice (align_ns: a slice of a track_classes.cuda_side class:
--   kernels, copies, memsets, graphs, GPU syncs, CUDA API calls, NVTX
--   ranges; not the CPU side, whose OS runtime calls and thread states of
--   Nsight's own threads start long before and which --no-osrt/--no-sched
--   leave out) lies at that of the earliest report (for reports whose
--   clocks were not synchronized): shift_ns = min(align_ns) - align_ns. A
--   report with no such slice aligns on its first slice.
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
-- What a merge runs (the tag below; nsys_duck/merge.py reads it): these
-- folders in this order, the macros and domain tables, the merge's inputs,
-- the trace stages and checks of a conversion, the merge's outputs; less
-- the files whose header says "Merge: not run". What it copies out of each
-- report: the relations whose file says "Merge: renumbered" or "copied".
-- Merge runs: 00_macros, 05_domain, merge/10_inputs, 40_trace, 45_check_inputs,
--   50_checks, 55_pipeline_checks, 60_kineto, merge/60_outputs
-- Role: merge-reports (the merge summary's rows)
-- Python reads: ORDER BY ordinal

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

capture AS (
    SELECT report, any_value(rank) AS rank, any_value(rank_env_var) AS rank_env_var
    FROM read_parquet('{{ merge_reports_dir }}/*/stg_capture_rank.parquet', {{ dataset }})
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
        s.report,
        min(s.start_ns) AS first_ns,
        coalesce(min(s.start_ns) FILTER (WHERE tc.cuda_side), min(s.start_ns)) AS align_ns,
        max(s.end_ns) AS last_ns,
        count(*) AS slices
    FROM slices AS s
    LEFT JOIN track_classes AS tc ON tc.track_class = s.track_class
    GROUP BY s.report
),

candidates AS (
    -- the rank each source gives a report (NULL: none)
    SELECT
        r.report,
        r.own_name,
        capture.rank AS env_rank,
        capture.rank_env_var,
        (
            SELECT max(try_cast(regexp_extract(lower(r.own_name), p.pattern, 1) AS BIGINT))
            FROM rank_name_patterns AS p
            WHERE regexp_matches(lower(r.own_name), p.pattern)
        ) AS name_rank
    FROM (
        SELECT report, regexp_extract(report, '[^/]*$') AS own_name
        FROM (SELECT DISTINCT report FROM homes)
    ) AS r
    LEFT JOIN capture ON capture.report = r.report
),

sources AS (
    -- a source is taken when it gives each of two reports or more a distinct rank
    SELECT
        count(*) > 1 AND count(env_rank) = count(*) AND count(DISTINCT env_rank) = count(*)
            AS by_env,
        count(*) > 1 AND count(name_rank) = count(*) AND count(DISTINCT name_rank) = count(*)
            AS by_name
    FROM candidates
),

ranked AS (
    SELECT
        c.report,
        CASE WHEN s.by_env THEN c.env_rank WHEN s.by_name THEN c.name_rank END AS rank_no,
        CASE
            WHEN s.by_env THEN 'from env ' || c.rank_env_var
            WHEN s.by_name THEN 'from file name ''' || c.own_name || ''''
            ELSE 'order'
        END AS rank_source
    FROM candidates AS c, sources AS s
),

ordered AS (
    SELECT
        report,
        rank_no,
        rank_source,
        row_number() OVER (ORDER BY rank_no, report) AS ordinal
    FROM ranked
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
    ordered.rank_source,
    CASE WHEN ordered.rank_no IS NOT NULL
        THEN 'rank ' || CAST(ordered.rank_no AS VARCHAR)
        ELSE ordered.report END AS label,
    CASE '{{ merge_align }}'
        WHEN 'utc' THEN 0
        WHEN 'start' THEN min(spans.align_ns) OVER () - spans.align_ns
    END AS shift_ns,
    spans.first_ns,
    spans.align_ns,
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
COMMENT ON COLUMN merge_reports.rank_no IS 'The report''s rank, from the capture''s environment (RANK, SLURM_PROCID...) or else its name (report_3, rank3, x_r3) when that source gives every report a distinct one; else NULL.';
COMMENT ON COLUMN merge_reports.rank_source IS 'How rank_no was decided: from env VAR, from file name ''NAME'', or order (no rank: the report''s place in the order).';
COMMENT ON COLUMN merge_reports.label IS 'What the report''s Perfetto processes are prefixed with: rank N, or the report name.';
COMMENT ON COLUMN merge_reports.shift_ns IS 'ns added to every time of the report (0 under --align utc; under --align start, the earliest align_ns minus this one''s).';
COMMENT ON COLUMN merge_reports.first_ns IS 'The report''s first slice start, UTC-epoch ns, before the shift.';
COMMENT ON COLUMN merge_reports.align_ns IS 'The report''s first CUDA or NVTX slice start (track_classes.cuda_side; its first slice when it has none), UTC-epoch ns, before the shift: what --align start lines up.';
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
