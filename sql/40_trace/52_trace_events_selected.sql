-- trace_events_selected: the events of trace_events_body and
-- trace_events_stacks that trace_selection keeps, with their sort keys.
--
-- Reads: trace_events_body, trace_events_stacks, trace_selection,
-- trace_kept_pids.
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
-- The selection enters as scalar subqueries (constants), not as a join:
-- joined to the one-row trace_selection, DuckDB 2.0 turned the window test
-- into a join condition over every event, and pytorch x200 (11.8M B/E
-- events) ran out of memory at 2GB before writing a row.
WHERE ((SELECT devices IS NULL FROM trace_selection)
        OR (e.pid IN (SELECT pid FROM trace_kept_pids)
            AND e.pid_other IN (SELECT pid FROM trace_kept_pids)))
    AND (e.part_ns IS NULL OR (
        e.part_ns >= coalesce(
            (SELECT window_start_ns FROM trace_selection), e.part_ns)
        AND e.part_ns < coalesce(
            (SELECT window_end_ns FROM trace_selection), e.part_ns + 1)
        AND e.part_ns_other >= coalesce(
            (SELECT window_start_ns FROM trace_selection), e.part_ns_other)
        AND e.part_ns_other < coalesce(
            (SELECT window_end_ns FROM trace_selection),
            e.part_ns_other + 1)));

COMMENT ON VIEW trace_events_selected IS 'The events of trace_events_body and trace_events_stacks that trace_selection (--window, --devices) keeps, with their sort keys.';
COMMENT ON COLUMN trace_events_selected.ph IS 'The event''s Chrome Trace ph.';
COMMENT ON COLUMN trace_events_selected.is_stacked IS 'TRUE for B/E and async b/e events (written in sort-key order).';
COMMENT ON COLUMN trace_events_selected.order_tid IS 'Sort key 1 of stacked events: JSON tid.';
