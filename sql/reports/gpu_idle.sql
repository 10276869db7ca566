-- gpu_idle (nsys-duck report NAME gpu-idle): how much of its active span
-- each GPU, and each of its streams, spent with no work. nsys stats has no
-- such report; the definition is this file's.
--
-- Reads: int_gpu_ops, merge_reports.
-- Grain: one row per device (Stream 'all') followed by one row per stream
-- of that device (per report too in a merged workspace: template variable
-- by_report).
-- Invariants:
-- - Work is every GPU operation of int_gpu_ops: kernels, memcpys
--   (unified-memory migrations too), memsets and CUDA graph executions
--   (graph-level traces), each the interval [start, end) in ns.
-- - Span (ns): from the device's first operation's start to its last
--   operation's end; a stream row uses its device's span, so its Busy and
--   Idle add up to the same span as the device's.
-- - Busy (ns): the length of the union of the operations' intervals
--   (overlapping or concurrent work counts once). Idle (ns) = Span - Busy:
--   the summed gaps where no operation of the device (or stream) runs,
--   including, for a stream, the time before its first and after its last
--   operation. Idle (%) = Idle / Span * 100, rounded to 0.1.
-- - Gaps: the number of idle intervals between operations of the row
--   (inside the row's own first start and last end); Longest Gap (ns): the
--   longest of them (0 when none).
-- - Order: device, the device row first, then streams by id.
-- A plain SELECT run on the read-only NAME.duckdb; nothing is created.
WITH ops AS (
    SELECT
        {% if by_report %}o.report,{% else %}NULL AS report,{% endif %}
        o.device_id,
        o.stream_id,
        o.start_ns,
        o.end_ns
    FROM int_gpu_ops AS o
),

lanes AS (
    -- each operation once per row it counts for: its device (stream NULL)
    -- and its stream
    SELECT report, device_id, NULL::BIGINT AS stream_id, start_ns, end_ns FROM ops
    UNION ALL
    SELECT report, device_id, stream_id, start_ns, end_ns FROM ops
),

ordered AS (
    SELECT
        *,
        max(end_ns) OVER (
            PARTITION BY report, device_id, stream_id ORDER BY start_ns, end_ns
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ) AS covered_until_ns
    FROM lanes
),

per_lane AS (
    SELECT
        report,
        device_id,
        stream_id,
        count(*) AS ops,
        min(start_ns) AS first_ns,
        max(end_ns) AS last_ns,
        coalesce(sum(start_ns - covered_until_ns)
            FILTER (WHERE start_ns > covered_until_ns), 0) AS inner_gap_ns,
        count(*) FILTER (WHERE start_ns > covered_until_ns) AS gaps,
        coalesce(max(start_ns - covered_until_ns)
            FILTER (WHERE start_ns > covered_until_ns), 0) AS longest_gap_ns
    FROM ordered
    GROUP BY report, device_id, stream_id
),

rows AS (
    SELECT
        l.*,
        dev.last_ns - dev.first_ns AS span_ns,
        l.last_ns - l.first_ns - l.inner_gap_ns AS busy_ns
    FROM per_lane AS l
    JOIN per_lane AS dev
        ON dev.report IS NOT DISTINCT FROM l.report
        AND dev.device_id = l.device_id AND dev.stream_id IS NULL
)

SELECT
    {% if by_report %}m.label AS "Report",{% endif %}
    r.device_id AS "Device",
    coalesce(CAST(r.stream_id AS VARCHAR), 'all') AS "Stream",
    r.ops AS "Operations",
    r.span_ns AS "Span (ns)",
    r.busy_ns AS "Busy (ns)",
    r.span_ns - r.busy_ns AS "Idle (ns)",
    round(CASE WHEN r.span_ns > 0
        THEN (r.span_ns - r.busy_ns) * 100.0 / r.span_ns ELSE 0 END, 1)
        AS "Idle (%)",
    r.gaps AS "Gaps",
    r.longest_gap_ns AS "Longest Gap (ns)"
FROM rows AS r
{% if by_report %}LEFT JOIN merge_reports AS m ON m.report = r.report{% endif %}
ORDER BY {% if by_report %}m.ordinal, {% endif %}r.device_id, r.stream_id NULLS FIRST;
