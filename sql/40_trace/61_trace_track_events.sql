-- trace_track_events: the TrackEvents of the protobuf trace (NAME.pftrace),
-- one per row: the same slices, instants, names, categories, args and flows
-- as the JSON trace, with the keys the writer orders them by.
--
-- Reads: int_flows, int_gpu_op_args, int_slices_on_tracks,
-- trace_selection, trace_kept_pids.
-- Invariants: every slice trace_keeps keeps (those of the JSON); ts are
-- integer ns on Nsight's clock (UTC epoch), not relative to a base. A
-- slice with a duration (JSON X or B/E) is a SLICE_BEGIN and a SLICE_END
-- on its track (type 1, 2), a zero-length one or an NVTX mark an INSTANT
-- (type 3: Perfetto makes a 0 ns slice of it, as of the JSON's), an NVTX
-- start/end range a legacy async b/e pair (legacy_phase 98/101, legacy_id =
-- nvtx_id: the JSON's process-scoped async track, id2.local). Args are the
-- JSON's object (slice_args_json), which the writer turns into debug
-- annotations member by member; a projected copy (Core/PCIe/D2D) keeps its
-- operation's whole object here (int_gpu_op_args.args_json, interned: the
-- demangled name costs an iid), where the JSON writes the lighter
-- copy_args_json. Flows: the flow_id of every drawn flow
-- (is_placeable, both slices kept) on its API slice's begin (flow_ids) and
-- on its GPU slice's begin (terminating_flow_ids), so Perfetto binds each
-- arrow to the slice itself, never by time.
-- Sequences: the events of one track are one packet sequence
-- (sequence_id = json_tid + 2; 1 holds the TrackDescriptors), so the
-- writer can name the track once per sequence (TracePacketDefaults) and
-- write each timestamp as the delta from the sequence's previous one.
-- Order: by sequence, then ts; at one ts every end before every begin, as
-- [start, end) means (0 end, inner first; 1 begin or instant, outer first;
-- 2 b; 3 e). Perfetto sorts events by ts and keeps file order at equal ts.
-- The writer reads one range of trace_track_event_chunks at a time ($lo_*,
-- $hi_*: its bounds, compared column by column: DuckDB 1.4 cannot compare
-- the (sequence_id, ts) pairs as structs), so no one sort holds every
-- event and its args.
-- Role: pftrace-events
-- Columns: sequence_id BIGINT, ts BIGINT, type INTEGER, legacy_phase INTEGER,
--   legacy_id BIGINT, track_uuid BIGINT, name VARCHAR, cat VARCHAR,
--   args_json VARCHAR, flow_ids BIGINT[], terminating_flow_ids BIGINT[],
--   order_phase INTEGER, order_span BIGINT, order_seq BIGINT
-- Python reads: WHERE sequence_id BETWEEN $lo_seq AND $hi_seq AND (sequence_id > $lo_seq OR ts >= $lo_ts) AND (sequence_id < $hi_seq OR ts < $hi_ts) ORDER BY sequence_id, ts, order_phase, order_span, order_seq

CREATE OR REPLACE VIEW trace_track_events AS
WITH drawn_flows AS (
    SELECT flow_id, api_slice_id, gpu_slice_id
    FROM int_flows
    WHERE is_placeable
        AND trace_keeps(s_pid, f_pid, api_start_ns, gpu_start_ns)
),
flows_out AS (
    SELECT api_slice_id AS slice_id, list(flow_id ORDER BY flow_id) AS ids
    FROM drawn_flows GROUP BY api_slice_id
),
flows_in AS (
    SELECT gpu_slice_id AS slice_id, list(flow_id ORDER BY flow_id) AS ids
    FROM drawn_flows GROUP BY gpu_slice_id
),
kept AS (
    SELECT s.*, coalesce(s.nest_seq, s.slice_id) AS seq
    FROM int_slices_on_tracks AS s
    WHERE trace_keeps(s.json_pid, s.json_pid, s.start_ns, s.start_ns)
)
-- slice begins and instants, with their names, args and flows
SELECT
    s.json_tid + 2 AS sequence_id,
    s.start_ns AS ts,
    CASE WHEN s.ph = 'i' OR s.end_ns = s.start_ns THEN 3 ELSE 1 END AS type,
    NULL::INTEGER AS legacy_phase,
    NULL::BIGINT AS legacy_id,
    2 * s.json_tid AS track_uuid,
    s.name,
    s.cat,
    CAST(slice_args_json(s.args_json, op_args.args_json, s.call_id,
        s.correlation_id, s.api_full_name, s.event_class,
        s.return_value) AS VARCHAR) AS args_json,
    fo.ids AS flow_ids,
    fi.ids AS terminating_flow_ids,
    1 AS order_phase,                       -- after the ends at the same ts
    -s.end_ns AS order_span,                -- outer (later end) first
    s.seq AS order_seq                      -- equal spans: CPU order
FROM kept AS s
LEFT JOIN int_gpu_op_args AS op_args ON op_args.op_id = s.op_id
LEFT JOIN flows_out AS fo ON fo.slice_id = s.slice_id
LEFT JOIN flows_in AS fi ON fi.slice_id = s.slice_id
WHERE s.ph IN ('X', 'B', 'i')
-- slice ends
UNION ALL
SELECT s.json_tid + 2, s.end_ns, 2, NULL, NULL, 2 * s.json_tid, NULL, NULL, NULL,
    NULL, NULL,
    0,
    -s.start_ns,                            -- inner (later start) first
    -s.seq
FROM kept AS s
WHERE s.ph IN ('X', 'B') AND s.end_ns > s.start_ns
-- NVTX start/end ranges: legacy async b/e (the e repeats name and cat)
UNION ALL
SELECT s.json_tid + 2,
    CASE side.phase WHEN 98 THEN s.start_ns ELSE s.end_ns END,
    0, side.phase, s.nvtx_id, 2 * s.json_tid, s.name, s.cat,
    CASE side.phase WHEN 98 THEN CAST(coalesce(s.args_json, '{}') AS VARCHAR) END,
    NULL, NULL,
    CASE side.phase WHEN 98 THEN 2 ELSE 3 END,   -- b before e at equal ts
    -s.end_ns,
    s.slice_id
FROM kept AS s
CROSS JOIN (VALUES (98), (101)) AS side (phase)
WHERE s.ph = 'b';

COMMENT ON VIEW trace_track_events IS 'The TrackEvents of the protobuf trace (NAME.pftrace), one per row: the same slices, instants, names, categories, args and flows as the JSON trace, with the keys the writer orders them by.';
COMMENT ON COLUMN trace_track_events.sequence_id IS 'TracePacket.trusted_packet_sequence_id: one sequence per track, json_tid + 2.';
COMMENT ON COLUMN trace_track_events.ts IS 'Event time, integer ns on Nsight''s clock (UTC epoch); the writer writes the delta from the sequence''s previous event.';
COMMENT ON COLUMN trace_track_events.type IS 'TrackEvent.type: 1 SLICE_BEGIN, 2 SLICE_END, 3 INSTANT; 0 with legacy_phase (async b/e).';
COMMENT ON COLUMN trace_track_events.legacy_phase IS 'LegacyEvent.phase of an NVTX start/end range: 98 (b) or 101 (e); NULL otherwise.';
COMMENT ON COLUMN trace_track_events.legacy_id IS 'LegacyEvent.local_id of an async b/e: the range''s nvtx_id (the JSON''s id2.local).';
COMMENT ON COLUMN trace_track_events.track_uuid IS 'TrackEvent.track_uuid: the JSON track''s thread (trace_track_descriptors.uuid).';
COMMENT ON COLUMN trace_track_events.name IS 'Event name (interned by the writer); NULL on ends.';
COMMENT ON COLUMN trace_track_events.cat IS 'Category, the JSON''s cat (interned by the writer); NULL on ends.';
COMMENT ON COLUMN trace_track_events.args_json IS 'The slice''s args object (a projected copy''s whole one, where the JSON has the lighter set), the writer''s debug annotations; NULL on ends.';
COMMENT ON COLUMN trace_track_events.flow_ids IS 'Flows leaving this slice (its API call''s arrows), int_flows.flow_id; NULL when none.';
COMMENT ON COLUMN trace_track_events.terminating_flow_ids IS 'Flows ending on this slice, int_flows.flow_id; NULL when none.';
COMMENT ON COLUMN trace_track_events.order_phase IS 'Sort key after ts: 0 end, 1 begin or instant, 2 b, 3 e.';
COMMENT ON COLUMN trace_track_events.order_span IS 'Sort key: -end for a begin (outer first), -start for an end (inner first).';
COMMENT ON COLUMN trace_track_events.order_seq IS 'Sort key of equal spans: CPU order (nest_seq, else slice_id; negated on ends).';
