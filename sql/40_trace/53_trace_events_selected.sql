-- trace_events_selected: the events of trace_events_body and
-- trace_events_stacks that trace_selection keeps, with their sort keys.
--
-- Reads: trace_events_body, trace_events_stacks, trace_selection,
-- trace_kept_pids.
-- Selection: the rule of trace_keeps (52_trace_keeps.sql), which reads the
-- last two.
-- Invariants: metadata of every kept home and track (part_ns NULL); a
-- slice's events when the slice starts in the window and its home is
-- kept; a flow when both its slices do (is_stacked: B/E and async b/e,
-- written in (order_tid, order_ns, order_phase, order_span, order_seq)
-- order). Without --window and --devices, every event (also one whose
-- pid is no home: the checks, not this view, judge the events).
-- Role: writer-input
-- Column comments from: trace_events_stacks.

CREATE OR REPLACE VIEW trace_events_selected AS
WITH events AS (
    SELECT event_json, ph, part_ns, part_ns_other, pid, pid_other,
        FALSE AS is_stacked, NULL::BIGINT AS order_tid,
        NULL::BIGINT AS order_ns, NULL::INTEGER AS order_phase,
        NULL::BIGINT AS order_span, NULL::BIGINT AS order_seq
    FROM trace_events_body
    UNION ALL
    SELECT event_json, ph, part_ns, part_ns_other, pid, pid_other, TRUE,
        order_tid, order_ns, order_phase, order_span, order_seq
    FROM trace_events_stacks
)
SELECT e.*
FROM events AS e
WHERE trace_keeps(e.pid, e.pid_other, e.part_ns, e.part_ns_other);

COMMENT ON VIEW trace_events_selected IS 'The events of trace_events_body and trace_events_stacks that trace_selection (--window, --devices) keeps, with their sort keys.';
COMMENT ON COLUMN trace_events_selected.ph IS 'The event''s Chrome Trace ph.';
COMMENT ON COLUMN trace_events_selected.is_stacked IS 'TRUE for B/E and async b/e events (written in sort-key order).';
COMMENT ON COLUMN trace_events_selected.order_tid IS 'Sort key 1 of stacked events: JSON tid.';
