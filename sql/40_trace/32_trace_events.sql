-- trace_events: every JSON event of the trace, one per row (the body and
-- the stacks, unordered; the writer orders the stacks itself).
--
-- Reads: trace_events_body, trace_events_stacks.
-- Invariants: as many rows as the JSON file has events.
-- Column comments from: trace_events_body.

CREATE OR REPLACE VIEW trace_events AS
SELECT event_json FROM trace_events_body
UNION ALL
SELECT event_json FROM trace_events_stacks;

COMMENT ON VIEW trace_events IS 'Every JSON event of the trace, one per row (the body and the stacks, unordered; the writer orders the stacks itself).';
