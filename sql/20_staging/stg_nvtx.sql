-- stg_nvtx_events: every NVTX row with its message and domain resolved;
-- stg_nvtx_push_pop_ranges: the push/pop ranges (eventType 59, and 70 for
-- NVTXT imports) that become B/E stacks on their thread.
--
-- Reads: nsys.NVTX_EVENTS, nsys.StringIds.
-- Invariants: message = StringIds.value via textId when set, else text
-- (registered strings, nsys-tables.md 2.3); an empty or missing message
-- becomes the stable placeholder '[unnamed]', never NULL. Domain names come
-- from the eventType 75 row with the same domainId IN THE SAME PROCESS
-- (domain ids are per process, trap 11); domain 0 is 'default'.
-- Events with a NULL start or a NULL globalTid (no thread) are dropped, and
-- ranges whose end is before their start; stg_skipped_rows counts them all.
-- A NULL end (unclosed range) becomes the end of the capture (the largest
-- NVTX timestamp), as NVIDIA's reports do.

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
)
SELECT
    row_number() OVER (ORDER BY e.start, e.globalTid, e."end" DESC NULLS LAST)
        AS nvtx_id,
    e.eventType AS event_type,
    e.start AS start_ns,
    CASE WHEN e.eventType IN (59, 60, 70, 71)
        THEN coalesce(e."end", capture_end.capture_end_ns) END AS end_ns,
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
LEFT JOIN nsys.StringIds AS text_str ON text_str.id = e.textId
LEFT JOIN domains
    ON domains.proc_key = nsys_proc_key(e.globalTid)
    AND domains.domain_id = CAST(e.domainId AS BIGINT)
WHERE e.start IS NOT NULL AND e.globalTid IS NOT NULL;

CREATE OR REPLACE VIEW stg_nvtx_push_pop_ranges AS
SELECT *
FROM stg_nvtx_events
WHERE event_type IN (59, 70) AND end_ns >= start_ns;
