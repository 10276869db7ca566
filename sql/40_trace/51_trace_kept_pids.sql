-- trace_kept_pids: the JSON pids (homes) the trace holds under
-- trace_selection.devices.
--
-- Reads: int_homes, trace_selection.
-- Invariants: one row per kept home; every home when no --devices. With a
-- device list: the homes of those devices, and the host processes whose
-- GPU work ran on one of them (int_homes.work_devices); a host process
-- without work there (a launcher, git, nvidia-smi, a rank on another
-- device) is left out.

CREATE OR REPLACE TABLE trace_kept_pids AS
SELECT h.json_pid AS pid
FROM int_homes AS h, trace_selection AS sel
WHERE sel.devices IS NULL OR list_has_any(h.work_devices, sel.devices);

COMMENT ON TABLE trace_kept_pids IS 'The JSON pids (homes) the trace holds under --devices (every home without it): the devices named and the host processes that ran GPU work on them.';
COMMENT ON COLUMN trace_kept_pids.pid IS 'JSON pid of a kept home (int_homes.json_pid).';
