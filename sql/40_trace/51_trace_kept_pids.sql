-- trace_kept_pids: the JSON pids (homes) the trace holds under
-- trace_selection.devices.
--
-- Reads: int_homes, trace_selection.
-- Invariants: one row per kept home; every home when no --devices.

CREATE OR REPLACE TABLE trace_kept_pids AS
SELECT h.json_pid AS pid
FROM int_homes AS h, trace_selection AS sel
WHERE sel.devices IS NULL OR list_contains(sel.devices, h.device_id);

COMMENT ON TABLE trace_kept_pids IS 'The JSON pids (homes) the trace holds under --devices (every home without it).';
COMMENT ON COLUMN trace_kept_pids.pid IS 'JSON pid of a kept home (int_homes.json_pid).';
