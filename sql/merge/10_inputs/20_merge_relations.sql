-- The per-report relations the trace stages read (int_homes, int_tracks,
-- int_slices_on_tracks, int_flows, int_gpu_ops, int_gpu_op_args,
-- int_nvtx_op_paths, int_runtime_links, int_device_properties (the Kineto
-- trace's devices, sql/60_kineto), stg_export_info), each as one table
-- over every report of the merge with a report column, its ids renumbered
-- into one id space and its times aligned; and int_slices and
-- int_slices_placed as the views of int_slices_on_tracks they are in one
-- conversion. The 40_trace stages and the contract checks then run on them
-- unchanged.
--
-- Reads: {{ merge_reports_dir }}/report=NAME/RELATION.parquet (the
-- relations copied out of each report's NAME.duckdb by nsys_duck/merge.py),
-- merge_reports.
-- Invariants: a column is renumbered by its name (the same name means the
-- same id in every relation, as in the stages that made them): JSON pids
-- (json_pid, s_pid, f_pid) + pid_offset, JSON tids (json_tid, s_tid, f_tid)
-- + tid_offset, home_id + home_offset, slice ids (slice_id, api_slice_id,
-- gpu_slice_id) + slice_offset, op_id + op_offset, API call ids (call_id,
-- linked_call_id) + call_offset, nvtx_id and every element of nvtx_ids +
-- nvtx_offset, flow_id + flow_offset; track_key is hashed with the report's
-- ordinal (a track of one report never meets another's); every UTC-epoch
-- ns column (start_ns, end_ns, s_ns, f_ns, api_start_ns, gpu_start_ns,
-- session_start_ns) + shift_ns; a home's name is prefixed with the
-- report's label ("rank 3 · Device 0: NVIDIA H100"). Every other column
-- (CUPTI's correlationId, contexts, streams, OS pid/tid, names, args) is
-- the report's own (also nest_seq, a tie-break inside one track). stg_export_info
-- keeps one row: the first report's (merge_reports.ordinal 1), with the
-- earliest aligned session start of all reports (trace_base reads it).
-- Template variable: merge_relations, relation -> its columns (from the
-- Parquet files).
{% set renumbered = {
    'json_pid': 'pid_offset', 's_pid': 'pid_offset', 'f_pid': 'pid_offset',
    'json_tid': 'tid_offset', 's_tid': 'tid_offset', 'f_tid': 'tid_offset',
    'home_id': 'home_offset',
    'slice_id': 'slice_offset', 'api_slice_id': 'slice_offset',
    'gpu_slice_id': 'slice_offset',
    'op_id': 'op_offset',
    'call_id': 'call_offset', 'linked_call_id': 'call_offset',
    'nvtx_id': 'nvtx_offset',
    'flow_id': 'flow_offset'
} %}
{% set shifted = ['start_ns', 'end_ns', 's_ns', 'f_ns', 'api_start_ns',
    'gpu_start_ns', 'session_start_ns'] %}
{% for relation, columns in merge_relations.items() %}

CREATE OR REPLACE TABLE {{ relation }} AS
SELECT
{%- for c in columns %}
    {% if c in renumbered -%}
    r.{{ c }} + m.{{ renumbered[c] }} AS {{ c }},
    {%- elif c in shifted -%}
    r.{{ c }} + m.shift_ns AS {{ c }},
    {%- elif c == 'nvtx_ids' -%}
    list_transform(r.nvtx_ids, lambda i: i + m.nvtx_offset) AS nvtx_ids,
    {%- elif c == 'track_key' -%}
    hash(r.track_key, m.ordinal) AS track_key,
    {%- elif c == 'home_name' -%}
    m.label || ' · ' || r.home_name AS home_name,
    {%- else -%}
    r.{{ c }},
    {%- endif %}
{%- endfor %}
    m.report
FROM read_parquet('{{ merge_reports_dir }}/*/{{ relation }}.parquet',
    hive_partitioning = TRUE, hive_types = {'report': VARCHAR}, union_by_name = TRUE) AS r
INNER JOIN merge_reports AS m ON r.report = m.report
{%- if relation == 'stg_export_info' %}
QUALIFY m.ordinal = min(m.ordinal) OVER ()
{%- endif %};

COMMENT ON COLUMN {{ relation }}.report IS 'The report the row comes from (merge_reports.report).';
{%- endfor %}

-- the earliest aligned session start of all reports: trace_base's origin
UPDATE stg_export_info
SET session_start_ns = (
    SELECT min(session_start_ns + shift_ns) FROM merge_reports
);

CREATE OR REPLACE VIEW int_slices_placed AS
SELECT * EXCLUDE (json_pid, json_tid, track_name) FROM int_slices_on_tracks;

CREATE OR REPLACE VIEW int_slices AS
SELECT * EXCLUDE (lane, level) FROM int_slices_placed;

COMMENT ON VIEW int_slices_placed IS 'Merge: the slices of every report with their lanes and levels (int_slices_on_tracks without its track columns).';
COMMENT ON VIEW int_slices IS 'Merge: the slices of every report (int_slices_on_tracks without its placement).';
