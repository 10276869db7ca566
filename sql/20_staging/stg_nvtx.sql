-- stg_nvtx_events: every NVTX row with its message and domain resolved;
-- stg_nvtx_push_pop_ranges: the push/pop ranges (eventType 59, and 70 for
-- NVTXT imports) that become B/E stacks on their thread.
--
-- Reads: nsys.NVTX_EVENTS, nsys.StringIds, stg_export_info.
-- Invariants: message = StringIds.value via textId when set, else text
-- (registered strings, nsys-tables.md 2.3); an empty or missing message
-- becomes the stable placeholder '[unnamed]', never NULL. Domain names come
-- from the eventType 75 row with the same domainId IN THE SAME PROCESS
-- (domain ids are per process, trap 11); domain 0 is 'default'.
-- Events with a NULL start or a NULL globalTid (no thread) are dropped, and
-- ranges whose end is before their start; stg_skipped_rows counts them all.
-- A NULL end (unclosed range) becomes the end of the capture (the largest
-- NVTX timestamp), as NVIDIA's reports do, except that an unclosed push/pop
-- range never outlives a CLOSED push/pop range of its thread and domain
-- that it started in (its enclosing range on that stack): it then ends
-- where that range ends, so it never partially overlaps its parent (a
-- closed range is never edited). is_unclosed marks such ranges (args
-- "unclosed" and the summary count them). Times are UTC-epoch ns (Nsight's
-- value + stg_export_info.time_offset_ns).
-- The enclosing-range search joins only the unclosed rows, on keys
-- globalTid << 64 | time (an IEJoin, as in 40_int_nvtx_gpu_projection.sql).

CREATE OR REPLACE VIEW stg_nvtx_events AS
WITH domains AS (
    SELECT
        nsys_proc_key(globalTid) AS proc_key,
        CAST(domainId AS BIGINT) AS domain_id,
        clean_text(any_value(text)) AS domain_name
    FROM nsys.NVTX_EVENTS
    WHERE eventType = 75
    GROUP BY ALL
),
capture_end AS (
    SELECT greatest(max(start), max("end")) AS capture_end_ns
    FROM nsys.NVTX_EVENTS
),
-- Unclosed push/pop ranges and the earliest end among the closed push/pop
-- ranges of the same thread and domain that they started in.
unclosed_caps AS (
    SELECT u.globalTid, u.domain_id, u.start, min(p."end") AS cap_ns
    FROM (
        SELECT globalTid, CAST(coalesce(domainId, 0) AS BIGINT) AS domain_id,
            start, (CAST(globalTid AS HUGEINT) << 64) + start AS k_start
        FROM nsys.NVTX_EVENTS
        WHERE eventType IN (59, 70) AND "end" IS NULL
            AND start IS NOT NULL AND globalTid IS NOT NULL
    ) AS u
    JOIN (
        SELECT CAST(coalesce(domainId, 0) AS BIGINT) AS domain_id, "end",
            (CAST(globalTid AS HUGEINT) << 64) + start AS k_start,
            (CAST(globalTid AS HUGEINT) << 64) + "end" AS k_end
        FROM nsys.NVTX_EVENTS
        WHERE eventType IN (59, 70) AND "end" >= start
            AND globalTid IS NOT NULL
    ) AS p
        ON p.k_start <= u.k_start AND p.k_end > u.k_start
    WHERE p.domain_id = u.domain_id
    GROUP BY ALL
)
SELECT
    row_number() OVER (ORDER BY e.start, e.globalTid, e."end" DESC NULLS LAST)
        AS nvtx_id,
    e.eventType AS event_type,
    e.start + x.time_offset_ns AS start_ns,
    CASE WHEN e.eventType IN (59, 60, 70, 71)
        THEN coalesce(e."end", least(capture_end.capture_end_ns, cap.cap_ns))
            + x.time_offset_ns END AS end_ns,
    e.eventType IN (59, 60, 70, 71) AND e."end" IS NULL AS is_unclosed,
    CAST(e.globalTid AS BIGINT) AS global_tid,
    nsys_proc_key(e.globalTid) AS proc_key,
    nsys_os_pid(e.globalTid) AS os_pid,
    nsys_os_tid(e.globalTid) AS os_tid,
    CAST(e.endGlobalTid AS BIGINT) AS end_global_tid,
    CAST(e.rangeId AS BIGINT) AS range_id,
    CAST(e.category AS BIGINT) AS category,
    e.color AS color,
    CAST(coalesce(e.domainId, 0) AS BIGINT) AS domain_id,
    CASE WHEN coalesce(e.domainId, 0) = 0 THEN 'default'
        ELSE coalesce(domains.domain_name,
            'domain#' || CAST(e.domainId AS VARCHAR)) END AS domain_name,
    coalesce(nullif(clean_text(coalesce(text_str.value, e.text)), ''),
        '[unnamed]') AS message
FROM nsys.NVTX_EVENTS AS e
CROSS JOIN capture_end
CROSS JOIN stg_export_info AS x
LEFT JOIN unclosed_caps AS cap
    ON e."end" IS NULL AND e.eventType IN (59, 70)
    AND cap.globalTid = e.globalTid AND cap.start = e.start
    AND cap.domain_id = CAST(coalesce(e.domainId, 0) AS BIGINT)
LEFT JOIN nsys.StringIds AS text_str ON text_str.id = e.textId
LEFT JOIN domains
    ON domains.proc_key = nsys_proc_key(e.globalTid)
    AND domains.domain_id = CAST(e.domainId AS BIGINT)
WHERE e.start IS NOT NULL AND e.globalTid IS NOT NULL;

CREATE OR REPLACE VIEW stg_nvtx_push_pop_ranges AS
SELECT *
FROM stg_nvtx_events
WHERE event_type IN (59, 70) AND end_ns >= start_ns;
