-- trace_events_body: the Chrome Trace JSON events whose file order does not
-- matter (metadata, X slices, flows, thread instants "i" with "s":"t"),
-- one event object per row (text).
--
-- Reads: int_flows, int_gpu_op_args, int_homes, int_slices_on_tracks,
-- int_tracks, trace_base.
-- Invariants: ts/dur are exact decimal us from integer ns relative to
-- trace_base (json_us); strings go through to_json (UTF-8, control
-- characters escaped, no surrogate escapes); pid/tid are integers in
-- 1..2^31-1; every process and track has name and sort-index metadata;
-- base_ns is args.epoch_ns of every process_name event. Flows: one 's' and
-- one 'f' ("bp":"e") with the same integer id, cat and name.
-- Order of B/E in the file matters to Perfetto only between events with the
-- same ts on one track (perfetto-json.md 2): parents open first (longer
-- first) and inner ranges close first.
-- Async (NVTX start/end, perfetto-json.md 3.5): cat "nvtx", "id2":{"local":
-- nvtx_id}, so each range is its own cookie on a process-scoped async track
-- of the home (free overlap, never a global track); "e" repeats name and
-- cat. Only the b and e of one range can need an order (a zero-length
-- range): b sorts before e at equal ts (phases 2, 3, after any B/E).
-- Role: writer-input
-- Columns: event_json VARCHAR, ph VARCHAR

CREATE OR REPLACE VIEW trace_events_body AS
WITH base AS (SELECT base_ns FROM trace_base)
-- process metadata
SELECT '{"ph":"M","name":"process_name","pid":' || CAST(h.json_pid AS VARCHAR)
    || ',"args":{"name":' || to_json(h.home_name)
    || ',"epoch_ns":' || CAST(base.base_ns AS VARCHAR) || '}}' AS event_json,
    'M' AS ph, NULL::BIGINT AS part_ns, NULL::BIGINT AS part_ns_other,
    h.json_pid AS pid, h.json_pid AS pid_other
FROM int_homes AS h, base
UNION ALL
SELECT '{"ph":"M","name":"process_sort_index","pid":'
    || CAST(h.json_pid AS VARCHAR)
    || ',"args":{"sort_index":' || CAST(h.json_pid AS VARCHAR) || '}}',
    'M', NULL, NULL, h.json_pid, h.json_pid
FROM int_homes AS h
-- track metadata
UNION ALL
SELECT '{"ph":"M","name":"thread_name","pid":' || CAST(t.json_pid AS VARCHAR)
    || ',"tid":' || CAST(t.json_tid AS VARCHAR)
    || ',"args":{"name":' || to_json(t.track_name) || '}}',
    'M', NULL, NULL, t.json_pid, t.json_pid
FROM int_tracks AS t
UNION ALL
SELECT '{"ph":"M","name":"thread_sort_index","pid":'
    || CAST(t.json_pid AS VARCHAR)
    || ',"tid":' || CAST(t.json_tid AS VARCHAR)
    || ',"args":{"sort_index":' || CAST(t.json_tid AS VARCHAR) || '}}',
    'M', NULL, NULL, t.json_pid, t.json_pid
FROM int_tracks AS t
-- complete slices
UNION ALL
SELECT '{"ph":"X","cat":"' || s.cat || '","name":' || to_json(s.name)
    || ',"ts":' || json_us(s.start_ns - base.base_ns)
    || ',"dur":' || json_us(s.end_ns - s.start_ns)
    || ',"pid":' || CAST(s.json_pid AS VARCHAR)
    || ',"tid":' || CAST(s.json_tid AS VARCHAR)
    || ',"args":' || slice_args_json(s.args_json,
        -- a projected copy's lighter object (int_gpu_op_args)
        CASE WHEN s.is_projection THEN op_args.copy_args_json
            ELSE op_args.args_json END,
        s.call_id, s.correlation_id, s.api_full_name, s.event_class,
        s.return_value)
    || '}',
    'X', s.start_ns, s.start_ns, s.json_pid, s.json_pid
FROM int_slices_on_tracks AS s
CROSS JOIN base
LEFT JOIN int_gpu_op_args AS op_args ON op_args.op_id = s.op_id
WHERE s.ph = 'X'
-- thread instants (NVTX marks)
UNION ALL
SELECT '{"ph":"i","s":"t","cat":"' || s.cat || '","name":' || to_json(s.name)
    || ',"ts":' || json_us(s.start_ns - base.base_ns)
    || ',"pid":' || CAST(s.json_pid AS VARCHAR)
    || ',"tid":' || CAST(s.json_tid AS VARCHAR)
    || ',"args":' || coalesce(s.args_json, '{}') || '}',
    'i', s.start_ns, s.start_ns, s.json_pid, s.json_pid
FROM int_slices_on_tracks AS s, base
WHERE s.ph = 'i'
-- flows: both ends from one scan of int_flows
UNION ALL
SELECT '{"ph":"' || side.ph || '","cat":"' || f.flow_cat
    || '","name":"' || f.flow_cat
    || '","id":' || CAST(f.flow_id AS VARCHAR)
    || ',"ts":' || json_us(CASE side.ph WHEN 's' THEN f.s_ns ELSE f.f_ns END
        - base.base_ns)
    || ',"pid":' || CAST(CASE side.ph WHEN 's' THEN f.s_pid ELSE f.f_pid END
        AS VARCHAR)
    || ',"tid":' || CAST(CASE side.ph WHEN 's' THEN f.s_tid ELSE f.f_tid END
        AS VARCHAR)
    || CASE side.ph WHEN 'f' THEN ',"bp":"e"}' ELSE '}' END,
    side.ph, f.api_start_ns, f.gpu_start_ns, f.s_pid, f.f_pid
FROM int_flows AS f
CROSS JOIN (VALUES ('s'), ('f')) AS side (ph)
CROSS JOIN base
WHERE f.is_placeable;

COMMENT ON VIEW trace_events_body IS 'The Chrome Trace JSON events whose file order does not matter (metadata, X slices, flows, thread instants "i" with "s":"t"), one event object per row (text).';
COMMENT ON COLUMN trace_events_body.event_json IS 'One JSON event object (text).';
COMMENT ON COLUMN trace_events_body.ph IS 'The event''s Chrome Trace ph (M, X, i, s, f): the writer reads one kind at a time.';
COMMENT ON COLUMN trace_events_body.part_ns IS 'Start of the slice the event belongs to (UTC-epoch ns; for a flow, its API slice): a split trace writes the event into the part whose time window holds it. NULL for metadata (in every part).';
COMMENT ON COLUMN trace_events_body.part_ns_other IS 'For a flow, the start of its GPU slice (both must fall in one part); otherwise part_ns.';
COMMENT ON COLUMN trace_events_body.pid IS 'JSON pid of the event (its home: --devices keeps the homes of the devices named).';
COMMENT ON COLUMN trace_events_body.pid_other IS 'For a flow, the JSON pid of its ''f'' end; otherwise pid.';
