-- nvtx_summary (nsys-duck report NAME nvtx-summary): time per NVTX range
-- name and style, as Nsight's `nsys stats --report nvtx_sum` prints it.
--
-- Reads: nsys.NVTX_EVENTS, nsys.StringIds, nvtx_event_types.
-- Grain: one row per (Range, Style), most total time first.
-- Invariants (nvtx_sum of Nsight Systems 2023.4, its reports/nvtx_sum.py,
-- whose rules this file repeats on the export's own NVTX rows rather than
-- on stg_nvtx_events, which names, domains and ends ranges for drawing):
-- - Every push/pop and start/end range (nvtx_event_types role 'range':
--   range_kind push_pop is Style PushPop, start_end StartEnd, nsys stats'
--   own words), on the CPU timeline (no GPU projection); rows without a
--   thread or with end < start count too, as in nsys.
-- - Range is the message (StringIds via textId, else text; empty when
--   neither, where stg_nvtx_events says '[unnamed]'), prefixed with
--   'DOMAIN:' when a domain-create row of the same process (the pid bits
--   of globalTid, nsys_os_pid) names the range's domainId: the default
--   domain and domains without such a row get no prefix. nsys joins the
--   domain rows per (domainId, thread): a domain created on two threads
--   of one process counts each of its ranges twice there, and so here.
-- - Duration is end - start; a range the export left unclosed ends at the
--   largest start or end of any NVTX row, as nsys does
--   (stg_nvtx_events.end_ns ends an unclosed push/pop range at its
--   enclosing range instead).
-- - Time (%) is the share of the summed Total Time of all ranges listed,
--   rounded to 0.1; Avg, Med, StdDev rounded to 0.1 ns; Med of an even
--   count is the mean of the two middle values; StdDev is the sample
--   standard deviation, 0 for one instance.
-- - Order: Total Time descending, then Range, then Style.
-- A plain SELECT run on the read-only NAME.duckdb; nothing is created.
WITH styles AS (
    -- nsys stats' Style label of each range_kind of nvtx_event_types
    SELECT t.range_kind, t.style, k.event_type
    FROM (VALUES ('push_pop', 'PushPop'), ('start_end', 'StartEnd'))
        AS t (range_kind, style)
    JOIN nvtx_event_types AS k ON k.range_kind = t.range_kind AND k.role = 'range'
),

capture AS (
    SELECT greatest(max(start), max("end")) AS last_ns FROM nsys.NVTX_EVENTS
),

domains AS (
    SELECT
        domainId AS domain_id,
        globalTid AS global_tid,
        min(text) AS domain_name
    FROM nsys.NVTX_EVENTS
    WHERE eventType IN (SELECT event_type FROM nvtx_event_types WHERE role = 'domain')
    GROUP BY domainId, globalTid
),

ranges AS (
    SELECT
        CASE WHEN d.domain_name IS NOT NULL
            THEN d.domain_name || ':' || coalesce(s.value, e.text)
            ELSE coalesce(s.value, e.text) END AS name,
        st.style,
        coalesce(e."end", c.last_ns) - e.start AS dur_ns
    FROM nsys.NVTX_EVENTS AS e
    JOIN styles AS st ON st.event_type = e.eventType
    CROSS JOIN capture AS c
    LEFT JOIN nsys.StringIds AS s ON s.id = e.textId
    LEFT JOIN domains AS d
        ON d.domain_id = e.domainId
        AND nsys_os_pid(e.globalTid) = nsys_os_pid(d.global_tid)
),

summary AS (
    SELECT
        name,
        style,
        sum(dur_ns) AS total_ns,
        count(*) AS instances,
        avg(dur_ns) AS avg_ns,
        median(dur_ns) AS med_ns,
        min(dur_ns) AS min_ns,
        max(dur_ns) AS max_ns,
        coalesce(stddev_samp(dur_ns), 0) AS stddev_ns
    FROM ranges
    GROUP BY name, style
)

SELECT
    round(total_ns * 100.0 / sum(total_ns) OVER (), 1) AS "Time (%)",
    CAST(total_ns AS BIGINT) AS "Total Time (ns)",
    instances AS "Instances",
    round(avg_ns, 1) AS "Avg (ns)",
    round(med_ns, 1) AS "Med (ns)",
    min_ns AS "Min (ns)",
    max_ns AS "Max (ns)",
    round(stddev_ns, 1) AS "StdDev (ns)",
    style AS "Style",
    name AS "Range"
FROM summary
ORDER BY total_ns DESC, name, style;
