-- trace_selection: the part of the capture the JSON trace holds (CLI
-- --window START:END, --devices), one row.
--
-- Reads: trace_base, int_homes.
-- Invariants: window_start_ns/window_end_ns are UTC-epoch ns (NULL: open),
-- from seconds after the trace's first event (trace_base.first_ns, where
-- Perfetto starts the trace and its UI shows 0; not base_ns, the JSON's ts
-- 0, which lies before it: at the session start or a whole second), the
-- first event of the whole trace also under --devices; an event is in the
-- window when the slice it belongs to starts in [start, end). devices
-- NULL keeps every home; a device list keeps the homes of those devices
-- and the host processes that ran GPU work on them (trace_kept_pids). A
-- device the capture does not have is refused in one sentence.
-- Template variables: window_start_s, window_end_s (numbers or None),
-- devices (list of integers, empty: all).

SELECT CASE WHEN missing <> [] THEN error('refuse: --devices ' || array_to_string(
        missing, ',') || ': the capture has device(s) ' || coalesce(
        array_to_string(present, ','), 'none')) END
FROM (
    SELECT list_filter(CAST([{{ devices | join(', ') }}] AS BIGINT[]),
            lambda d: NOT list_contains(present, d)) AS missing, present
    FROM (SELECT list(DISTINCT device_id ORDER BY device_id) AS present
        FROM int_homes WHERE device_id IS NOT NULL)
);

CREATE OR REPLACE TABLE trace_selection AS
SELECT
    {% if window_start_s is number %}first_ns
        + CAST(round({{ window_start_s }} * 1e9) AS BIGINT)
    {% else %}CAST(NULL AS BIGINT){% endif %} AS window_start_ns,
    {% if window_end_s is number %}first_ns
        + CAST(round({{ window_end_s }} * 1e9) AS BIGINT)
    {% else %}CAST(NULL AS BIGINT){% endif %} AS window_end_ns,
    {% if devices %}[{{ devices | join(', ') }}]{% else %}CAST(NULL AS BIGINT[]){% endif %} AS devices
FROM trace_base;

COMMENT ON TABLE trace_selection IS 'The part of the capture the JSON trace holds (--window, --devices), one row.';
COMMENT ON COLUMN trace_selection.window_start_ns IS 'Window start, UTC-epoch ns (--window START, seconds after the first event, trace_base.first_ns); NULL: open.';
COMMENT ON COLUMN trace_selection.window_end_ns IS 'Window end (exclusive), UTC-epoch ns; NULL: open.';
COMMENT ON COLUMN trace_selection.devices IS 'Devices whose homes are written (--devices); NULL: every home.';
