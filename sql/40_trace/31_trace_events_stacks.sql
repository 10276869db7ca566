-- trace_events_stacks: the B/E events and the async b/e pairs of NVTX
-- start/end ranges, with the keys the writer sorts them by (tid, ts, order).
--
-- Reads: int_slices_on_tracks, trace_base.
-- Invariants: order_phase 0 E, 1 B, 2 b, 3 e at equal ts on one track;
-- outer B first (later end), inner E first (later start); equal spans
-- keep the CPU order (nest_seq). See trace_events_body for the text rules.
-- Role: writer-input
-- Columns: order_tid BIGINT, order_ns BIGINT, order_span BIGINT,
--   order_seq BIGINT, event_json VARCHAR, ph VARCHAR

CREATE OR REPLACE VIEW trace_events_stacks AS
WITH base AS (SELECT base_ns FROM trace_base)
SELECT
    s.json_tid AS order_tid,
    s.start_ns AS order_ns,
    1 AS order_phase,                       -- after the E at the same ts
    -s.end_ns AS order_span,                -- outer (later end) first
    coalesce(s.nest_seq, s.slice_id) AS order_seq,  -- equal spans: CPU order
    '{"ph":"B","cat":"' || s.cat || '","name":' || to_json(s.name)
        || ',"ts":' || json_us(s.start_ns - base.base_ns)
        || ',"pid":' || CAST(s.json_pid AS VARCHAR)
        || ',"tid":' || CAST(s.json_tid AS VARCHAR)
        || ',"args":' || coalesce(s.args_json, '{}') || '}' AS event_json,
    'B' AS ph,
    s.start_ns AS part_ns,
    s.start_ns AS part_ns_other,
    s.json_pid AS pid,
    s.json_pid AS pid_other
FROM int_slices_on_tracks AS s, base
WHERE s.ph = 'B'
UNION ALL
SELECT
    s.json_tid,
    s.end_ns,
    0,                                      -- E first at equal ts
    -s.start_ns,                            -- inner (later start) first
    -coalesce(s.nest_seq, s.slice_id),
    '{"ph":"E","cat":"' || s.cat || '","name":' || to_json(s.name)
        || ',"ts":' || json_us(s.end_ns - base.base_ns)
        || ',"pid":' || CAST(s.json_pid AS VARCHAR)
        || ',"tid":' || CAST(s.json_tid AS VARCHAR) || '}',
    'E', s.start_ns, s.start_ns, s.json_pid, s.json_pid
FROM int_slices_on_tracks AS s, base
WHERE s.ph = 'B'
UNION ALL
SELECT
    s.json_tid,
    CASE side.ph WHEN 'b' THEN s.start_ns ELSE s.end_ns END,
    CASE side.ph WHEN 'b' THEN 2 ELSE 3 END,
    -s.end_ns,
    s.slice_id,
    '{"ph":"' || side.ph || '","cat":"' || s.cat || '","name":'
        || to_json(s.name)
        || ',"id2":{"local":' || CAST(s.nvtx_id AS VARCHAR) || '}'
        || ',"ts":' || json_us(CASE side.ph WHEN 'b' THEN s.start_ns
            ELSE s.end_ns END - base.base_ns)
        || ',"pid":' || CAST(s.json_pid AS VARCHAR)
        || ',"tid":' || CAST(s.json_tid AS VARCHAR)
        || CASE side.ph WHEN 'b'
            THEN ',"args":' || coalesce(s.args_json, '{}') || '}'
            ELSE '}' END,
    side.ph, s.start_ns, s.start_ns, s.json_pid, s.json_pid
FROM int_slices_on_tracks AS s
CROSS JOIN (VALUES ('b'), ('e')) AS side (ph)
CROSS JOIN base
WHERE s.ph = 'b';

COMMENT ON VIEW trace_events_stacks IS 'The B/E events and the async b/e pairs of NVTX start/end ranges, with the keys the writer sorts them by (tid, ts, order).';
COMMENT ON COLUMN trace_events_stacks.order_tid IS 'Sort key 1: JSON tid.';
COMMENT ON COLUMN trace_events_stacks.order_ns IS 'Sort key 2: event time, UTC-epoch ns.';
COMMENT ON COLUMN trace_events_stacks.order_phase IS 'Sort key 3: 0 E, 1 B, 2 b, 3 e.';
COMMENT ON COLUMN trace_events_stacks.order_span IS 'Sort key 4: -end for B (outer first), -start for E (inner first).';
COMMENT ON COLUMN trace_events_stacks.order_seq IS 'Sort key 5: CPU order of equal spans.';
COMMENT ON COLUMN trace_events_stacks.event_json IS 'One JSON event object (text).';
COMMENT ON COLUMN trace_events_stacks.ph IS 'The event''s Chrome Trace ph (B, E, b, e).';
COMMENT ON COLUMN trace_events_stacks.part_ns IS 'Start of the slice the event belongs to (UTC-epoch ns; for a flow, its API slice): a split trace writes the event into the part whose time window holds it. NULL for metadata (in every part).';
COMMENT ON COLUMN trace_events_stacks.part_ns_other IS 'For a flow, the start of its GPU slice (both must fall in one part); otherwise part_ns.';
COMMENT ON COLUMN trace_events_stacks.pid IS 'JSON pid of the event (its home: --devices keeps the homes of the devices named).';
COMMENT ON COLUMN trace_events_stacks.pid_other IS 'For a flow, the JSON pid of its ''f'' end; otherwise pid.';
