-- trace_window: what --window selects, for the summary line and the
-- warning of a window that selects no slice; one row with --window, none
-- without it.
--
-- Reads: trace_base, trace_selection, trace_kept_pids,
-- int_slices_on_tracks.
-- Invariants: window_start_ns/window_end_ns are trace_selection's (UTC-epoch
-- ns, NULL: open); start_after_first_ns/end_after_first_ns the same times
-- after trace_base.first_ns (the trace's first event, the UI's 0); slices
-- counts the slices the JSON holds (slice start in the window, home kept
-- by --devices), as trace_events_selected keeps them; last_start_ns is the
-- latest slice start of the whole trace (with first_ns, for the warning:
-- where a window could have found slices).
-- Column comments from: trace_selection.
-- Role: window (what --window selected, printed)

CREATE OR REPLACE VIEW trace_window AS
WITH span AS (
    SELECT max(start_ns) AS last_start_ns,
        count(*) FILTER (WHERE
            start_ns >= coalesce(sel.window_start_ns, start_ns)
            AND start_ns < coalesce(sel.window_end_ns, start_ns + 1)
            AND (sel.devices IS NULL
                OR json_pid IN (SELECT pid FROM trace_kept_pids))) AS slices
    FROM int_slices_on_tracks, trace_selection AS sel
)
SELECT
    sel.window_start_ns,
    sel.window_end_ns,
    sel.window_start_ns - b.first_ns AS start_after_first_ns,
    sel.window_end_ns - b.first_ns AS end_after_first_ns,
    b.first_ns,
    b.base_ns,
    span.slices,
    span.last_start_ns
FROM trace_selection AS sel, trace_base AS b, span
WHERE sel.window_start_ns IS NOT NULL OR sel.window_end_ns IS NOT NULL;

COMMENT ON VIEW trace_window IS 'What --window selects (one row with --window, none without): the window in UTC-epoch ns and after the first event, and the slices it holds.';
COMMENT ON COLUMN trace_window.window_start_ns IS 'Window start, UTC-epoch ns (trace_selection); NULL: open.';
COMMENT ON COLUMN trace_window.start_after_first_ns IS 'Window start in ns after the trace''s first event (trace_base.first_ns); NULL: open.';
COMMENT ON COLUMN trace_window.end_after_first_ns IS 'Window end in ns after the first event; NULL: open.';
COMMENT ON COLUMN trace_window.first_ns IS 'The trace''s first event, UTC-epoch ns (trace_base.first_ns): the origin of --window.';
COMMENT ON COLUMN trace_window.base_ns IS 'JSON ts 0, UTC-epoch ns (trace_base.base_ns).';
COMMENT ON COLUMN trace_window.slices IS 'Slices the JSON holds: starting in the window, on a home --devices keeps.';
COMMENT ON COLUMN trace_window.last_start_ns IS 'Latest slice start of the whole trace, UTC-epoch ns.';
