-- trace_keeps: whether the trace holds an event, under trace_selection
-- (--window, --devices): the one rule of the JSON (trace_events_selected)
-- and of the protobuf trace (trace_track_events).
--
-- Reads: trace_selection, trace_kept_pids.
-- Invariants: an event belongs to a slice (its start, event_ns, in UTC-epoch
-- ns, and its home, event_pid) and, for a flow, to a second one (its GPU
-- slice: other_ns, other_pid; the slice's own values otherwise). It is kept
-- when both homes are kept (trace_kept_pids; every home without --devices)
-- and both starts lie in [window_start_ns, window_end_ns) (open ends
-- without --window). Metadata (event_ns NULL) is always kept.
-- The selection enters as scalar subqueries (constants), not as a join:
-- joined to the one-row trace_selection, DuckDB 2.0 turned the window test
-- into a join condition over every event, and pytorch x200 (11.8M B/E
-- events) ran out of memory at 2GB before writing a row.

CREATE OR REPLACE MACRO trace_keeps(event_pid, other_pid, event_ns, other_ns) AS
    ((SELECT devices IS NULL FROM trace_selection)
        OR (event_pid IN (SELECT pid FROM trace_kept_pids)
            AND other_pid IN (SELECT pid FROM trace_kept_pids)))
    AND (event_ns IS NULL OR (
        event_ns >= coalesce(
            (SELECT window_start_ns FROM trace_selection), event_ns)
        AND event_ns < coalesce(
            (SELECT window_end_ns FROM trace_selection), event_ns + 1)
        AND other_ns >= coalesce(
            (SELECT window_start_ns FROM trace_selection), other_ns)
        AND other_ns < coalesce(
            (SELECT window_end_ns FROM trace_selection), other_ns + 1)));
