-- chk_events: the trace events the JSON writer is about to emit, one row per
-- event, as fields (no JSON text): what the contract checks of
-- sql/50_checks/ read, here from the pipeline's own tables before anything
-- is written (the file validator builds the same view from a JSON file in
-- sql/validate/).
--
-- Reads: trace_base, int_homes, int_tracks, int_slices_on_tracks, int_flows.
-- Invariants: exactly the events of trace_events_body and
-- trace_events_stacks (40_trace/30_trace_events_body.sql,
-- 31_trace_events_stacks.sql), branch by branch, with
-- the same WHERE clauses: metadata (process_name, process_sort_index,
-- thread_name, thread_sort_index), X slices, NVTX marks ('i', "s":"t"),
-- both ends of each placeable flow ("bp":"e" on the f), then the B/E and
-- async b/e events of the stacks. ts_ns / dur_ns are the integer ns the JSON
-- writes as us (json_us of t - base_ns), so ts_ns = JSON ts x 1000 exactly.
-- seq: the B/E and b/e events are numbered 0, 1, ... in the writer's
-- ORDER BY (order_tid, order_ns, order_phase, order_span, order_seq), so
-- the seq order of the stack events of one (pid, tid) is their file order
-- (the writer emits them after the body, in this order). The body events,
-- whose order in the file does not matter, get unique negative numbers
-- computed from their ids (-8 x json_pid, json_tid, slice_id or flow_id,
-- minus the branch 1..7), so no window function stands between a check's
-- filter and the tables.
-- problem is NULL (the pipeline's fields are exact by construction).
-- Role: check-input

CREATE OR REPLACE VIEW chk_events AS
WITH base AS (
    SELECT base_ns FROM trace_base
),

body AS (
    -- process metadata
    SELECT
        -8 * homes.json_pid - 1 AS seq,
        'M' AS ph, NULL AS cat, 'process_name' AS name,
        homes.json_pid AS pid, NULL::BIGINT AS tid,
        NULL::BIGINT AS ts_ns, NULL::BIGINT AS dur_ns,
        NULL AS id, NULL AS bp, NULL AS scope,
        homes.home_name AS meta_name, NULL::BIGINT AS meta_sort_index,
        base.base_ns AS epoch_ns
    FROM int_homes AS homes, base
    UNION ALL
    SELECT
        -8 * homes.json_pid - 2,
        'M', NULL, 'process_sort_index', homes.json_pid, NULL, NULL, NULL,
        NULL, NULL, NULL, NULL, homes.json_pid, NULL
    FROM int_homes AS homes
    -- track metadata
    UNION ALL
    SELECT
        -8 * tracks.json_tid - 3,
        'M', NULL, 'thread_name', tracks.json_pid, tracks.json_tid, NULL,
        NULL, NULL, NULL, NULL, tracks.track_name, NULL, NULL
    FROM int_tracks AS tracks
    UNION ALL
    SELECT
        -8 * tracks.json_tid - 4,
        'M', NULL, 'thread_sort_index', tracks.json_pid, tracks.json_tid,
        NULL, NULL, NULL, NULL, NULL, NULL, tracks.json_tid, NULL
    FROM int_tracks AS tracks
    -- complete slices and NVTX marks (thread instants)
    UNION ALL
    SELECT
        -8 * slices.slice_id - 5,
        slices.ph, slices.cat, slices.name, slices.json_pid,
        slices.json_tid, slices.start_ns - base.base_ns,
        CASE WHEN slices.ph = 'X' THEN slices.end_ns - slices.start_ns END,
        NULL, NULL, CASE WHEN slices.ph = 'i' THEN 't' END, NULL, NULL, NULL
    FROM int_slices_on_tracks AS slices, base
    WHERE slices.ph IN ('X', 'i')
    -- flows: both ends of each placeable flow
    UNION ALL
    SELECT
        -8 * flows.flow_id - CASE side.ph WHEN 's' THEN 6 ELSE 7 END,
        side.ph, flows.flow_cat, flows.flow_cat,
        CASE side.ph WHEN 's' THEN flows.s_pid ELSE flows.f_pid END,
        CASE side.ph WHEN 's' THEN flows.s_tid ELSE flows.f_tid END,
        CASE side.ph WHEN 's' THEN flows.s_ns ELSE flows.f_ns END
            - base.base_ns,
        NULL, CAST(flows.flow_id AS VARCHAR),
        CASE side.ph WHEN 'f' THEN 'e' END, NULL, NULL, NULL, NULL
    FROM int_flows AS flows
    CROSS JOIN (VALUES ('s'), ('f')) AS side (ph)
    CROSS JOIN base
    WHERE flows.is_placeable
),

stacks AS (
    -- B/E pairs of NVTX stacks, with the writer's order keys
    SELECT
        'B' AS ph, slices.cat, slices.name, slices.json_pid AS pid,
        slices.json_tid AS tid, slices.start_ns - base.base_ns AS ts_ns,
        NULL AS id,
        slices.start_ns AS order_ns, 1 AS order_phase,
        -slices.end_ns AS order_span,
        coalesce(slices.nest_seq, slices.slice_id) AS order_seq
    FROM int_slices_on_tracks AS slices, base
    WHERE slices.ph = 'B'
    UNION ALL
    SELECT
        'E', slices.cat, slices.name, slices.json_pid, slices.json_tid,
        slices.end_ns - base.base_ns, NULL,
        slices.end_ns, 0, -slices.start_ns,
        -coalesce(slices.nest_seq, slices.slice_id)
    FROM int_slices_on_tracks AS slices, base
    WHERE slices.ph = 'B'
    -- async b/e pairs of NVTX start/end ranges ("id2":{"local": nvtx_id})
    UNION ALL
    SELECT
        side.ph, slices.cat, slices.name, slices.json_pid, slices.json_tid,
        CASE side.ph WHEN 'b' THEN slices.start_ns ELSE slices.end_ns END
            - base.base_ns,
        CAST(slices.nvtx_id AS VARCHAR),
        CASE side.ph WHEN 'b' THEN slices.start_ns ELSE slices.end_ns END,
        CASE side.ph WHEN 'b' THEN 2 ELSE 3 END,
        -slices.end_ns, slices.slice_id
    FROM int_slices_on_tracks AS slices
    CROSS JOIN (VALUES ('b'), ('e')) AS side (ph)
    CROSS JOIN base
    WHERE slices.ph = 'b'
),


stacks_numbered AS (
    SELECT
        row_number() OVER (
            ORDER BY tid, order_ns, order_phase, order_span, order_seq
        ) - 1 AS seq,
        ph, cat, name, pid, tid, ts_ns, NULL::BIGINT AS dur_ns, id,
        NULL AS bp, NULL AS scope, NULL AS meta_name,
        NULL::BIGINT AS meta_sort_index, NULL::BIGINT AS epoch_ns
    FROM stacks
)

SELECT
    CAST(seq AS BIGINT) AS seq, ph, cat, name, pid, tid, ts_ns, dur_ns,
    id, bp, scope, meta_name, meta_sort_index, epoch_ns,
    NULL::VARCHAR AS problem
FROM body
UNION ALL
SELECT
    CAST(seq AS BIGINT), ph, cat, name, pid, tid, ts_ns, dur_ns, id, bp,
    scope, meta_name, meta_sort_index, epoch_ns, NULL::VARCHAR
FROM stacks_numbered;

COMMENT ON VIEW chk_events IS 'The trace events the writer emits, one row per event, as fields (no JSON text): the input of the check_* contract views. Built from the pipeline''s tables before any file is written; the file validator builds the same view from a JSON file.';
COMMENT ON COLUMN chk_events.seq IS 'Unique per event. B/E and b/e events: 0, 1, ... in the order the writer emits them (after the body), so seq orders the stack events of one (pid, tid) as the file does. Other events (whose file order does not matter): a negative number computed from the event''s ids.';
COMMENT ON COLUMN chk_events.ph IS 'JSON "ph": M, X, i, s, f, B, E, b or e.';
COMMENT ON COLUMN chk_events.cat IS 'JSON "cat" (NULL on metadata events).';
COMMENT ON COLUMN chk_events.name IS 'JSON "name" (process_name, thread_name... on metadata events; the flow kind on flow events).';
COMMENT ON COLUMN chk_events.pid IS 'JSON "pid".';
COMMENT ON COLUMN chk_events.tid IS 'JSON "tid" (NULL on process metadata).';
COMMENT ON COLUMN chk_events.ts_ns IS 'JSON "ts" x 1000: integer ns relative to trace_base.base_ns (NULL on metadata).';
COMMENT ON COLUMN chk_events.dur_ns IS 'JSON "dur" x 1000 (X events only).';
COMMENT ON COLUMN chk_events.id IS 'Flow id (s/f) or async id (b/e: id2.local) as text; NULL otherwise.';
COMMENT ON COLUMN chk_events.bp IS '"bp" of f events (always e).';
COMMENT ON COLUMN chk_events.scope IS '"s" of instant events (always t: thread instants).';
COMMENT ON COLUMN chk_events.meta_name IS 'M process_name / thread_name: args.name.';
COMMENT ON COLUMN chk_events.meta_sort_index IS 'M process_sort_index / thread_sort_index: args.sort_index.';
COMMENT ON COLUMN chk_events.epoch_ns IS 'M process_name: args.epoch_ns (= trace_base.base_ns).';
COMMENT ON COLUMN chk_events.problem IS 'Why a field could not be read exactly: always NULL here (the file validator fills it).';
