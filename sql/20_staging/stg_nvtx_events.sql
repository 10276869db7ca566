-- stg_nvtx_events: every NVTX row with its message and domain resolved and
-- its event type named (nvtx_event_types: nvtx_role, range_kind).
--
-- Reads: _stg_nvtx_event_rows, nsys.NVTX_EVENTS, nsys.StringIds,
-- nvtx_event_types, stg_export_info.
-- Invariants: message = StringIds.value via textId when set, else text
-- (registered strings, nsys-tables.md 2.3); an empty or missing message
-- becomes the stable placeholder '[unnamed]', never NULL. Domain names come
-- from the eventType 75 row with the same domainId IN THE SAME PROCESS
-- (domain ids are per process, trap 11); domain 0 is 'default'.
-- Events with a NULL start or a NULL globalTid (no thread) are dropped
-- (_stg_nvtx_event_rows.skip_reason); ranges whose end is before their
-- start stay (nvtx_id numbers them) and are dropped by the range stages;
-- stg_skipped_rows counts them all.
-- A NULL end (unclosed range) becomes the end of the capture (the largest
-- NVTX timestamp), as NVIDIA's reports do, except that an unclosed push/pop
-- range never outlives a CLOSED push/pop range of its thread and domain
-- that it started in (its enclosing range on that stack): it then ends
-- where that range ends, so it never partially overlaps its parent (a
-- closed range is never edited). Event types: nvtx_event_types (push/pop:
-- 59 and 70 for NVTXT imports; start/end 60/71). is_unclosed marks such ranges (args
-- "unclosed" and the summary count them). Times are UTC-epoch ns (Nsight's
-- value + stg_export_info.time_offset_ns).
-- The enclosing-range search joins only the unclosed rows, on keys
-- globalTid << 64 | time (an IEJoin, as in 21__int_nvtx_call_owners.sql).
-- A table, not a view: eight stages read it, and as a view each of them
-- sorted every NVTX row again for nvtx_id (2.1 s each on a 5M-row trace).
-- payload_json: the event's payload (nvtxEventAttributes_t payload, the
-- NVTX_EVENTS union columns, nsys-tables.md 1.7) as the text of one JSON
-- value, for args.payload: a number for uint64Value, int64Value,
-- doubleValue, uint32Value, int32Value, floatValue (a NaN or infinite
-- float as the string "nan"/"inf", which JSON has no number for; a
-- uint64Value past int64, 2^63 and up, as its decimal digits in a string,
-- json_uint64: Perfetto would read such a number wrapped around), a string
-- for jsonText or the StringIds text of jsonTextId (the JSON text as it
-- is, not parsed); the first non-NULL member in that order (Nsight fills
-- only the one of the payload's type); NULL when the event has no payload
-- or the export no such columns.

CREATE OR REPLACE TABLE stg_nvtx_events AS
WITH domains AS (
    SELECT
        nsys_proc_key(globalTid) AS proc_key,
        CAST(domainId AS BIGINT) AS domain_id,
        clean_text(any_value(text)) AS domain_name
    FROM nsys.NVTX_EVENTS
    WHERE eventType IN (SELECT event_type FROM nvtx_event_types
        WHERE role = 'domain')
    GROUP BY ALL
),
push_pop_types AS (
    SELECT event_type FROM nvtx_event_types WHERE range_kind = 'push_pop'
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
        WHERE eventType IN (SELECT event_type FROM push_pop_types)
            AND "end" IS NULL
            AND start IS NOT NULL AND globalTid IS NOT NULL
    ) AS u
    JOIN (
        SELECT CAST(coalesce(domainId, 0) AS BIGINT) AS domain_id, "end",
            (CAST(globalTid AS HUGEINT) << 64) + start AS k_start,
            (CAST(globalTid AS HUGEINT) << 64) + "end" AS k_end
        FROM nsys.NVTX_EVENTS
        WHERE eventType IN (SELECT event_type FROM push_pop_types)
            AND "end" >= start
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
    CASE WHEN kind.role = 'range'
        THEN coalesce(e."end", least(capture_end.capture_end_ns, cap.cap_ns))
            + x.time_offset_ns END AS end_ns,
    coalesce(kind.role = 'range', FALSE) AND e."end" IS NULL AS is_unclosed,
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
        '[unnamed]') AS message,
    kind.role AS nvtx_role,
    kind.range_kind,
    CASE
        WHEN e.uint64Value IS NOT NULL THEN json_uint64(e.uint64Value)
        WHEN e.int64Value IS NOT NULL THEN CAST(e.int64Value AS VARCHAR)
        WHEN e.doubleValue IS NOT NULL THEN CASE WHEN isfinite(e.doubleValue)
            THEN CAST(e.doubleValue AS VARCHAR)
            ELSE to_json(lower(CAST(e.doubleValue AS VARCHAR))) END
        WHEN e.uint32Value IS NOT NULL THEN CAST(e.uint32Value AS VARCHAR)
        WHEN e.int32Value IS NOT NULL THEN CAST(e.int32Value AS VARCHAR)
        WHEN e.floatValue IS NOT NULL THEN CASE WHEN isfinite(e.floatValue)
            THEN CAST(e.floatValue AS VARCHAR)
            ELSE to_json(lower(CAST(e.floatValue AS VARCHAR))) END
        WHEN e.jsonText IS NOT NULL THEN to_json(clean_text(e.jsonText))
        WHEN e.jsonTextId IS NOT NULL
            THEN to_json(clean_text(json_str.value))
    END AS payload_json
FROM _stg_nvtx_event_rows AS e
LEFT JOIN nvtx_event_types AS kind ON kind.event_type = e.eventType
CROSS JOIN capture_end
CROSS JOIN stg_export_info AS x
LEFT JOIN unclosed_caps AS cap
    ON e."end" IS NULL AND kind.range_kind = 'push_pop'
    AND cap.globalTid = e.globalTid AND cap.start = e.start
    AND cap.domain_id = CAST(coalesce(e.domainId, 0) AS BIGINT)
LEFT JOIN nsys.StringIds AS text_str ON text_str.id = e.textId
LEFT JOIN nsys.StringIds AS json_str ON json_str.id = e.jsonTextId
LEFT JOIN domains
    ON domains.proc_key = nsys_proc_key(e.globalTid)
    AND domains.domain_id = CAST(e.domainId AS BIGINT)
WHERE e.skip_reason IS NULL OR e.skip_reason = 'end before start';

COMMENT ON TABLE stg_nvtx_events IS 'Every NVTX_EVENTS row with a start and a thread: message and domain resolved, UTC-epoch ns, unclosed ranges ended (is_unclosed), event type named (nvtx_role, range_kind).';
COMMENT ON COLUMN stg_nvtx_events.nvtx_id IS 'Row number in (start, globalTid, end DESC) order: the id of the NVTX row (trace_slices.nvtx_id).';
COMMENT ON COLUMN stg_nvtx_events.event_type IS 'NVTX_EVENTS.eventType (nvtx_event_types).';
COMMENT ON COLUMN stg_nvtx_events.start_ns IS 'Start (or time of a mark), UTC-epoch ns.';
COMMENT ON COLUMN stg_nvtx_events.end_ns IS 'Ranges: end, UTC-epoch ns (an unclosed range ends at its enclosing range or the capture end); NULL for other rows.';
COMMENT ON COLUMN stg_nvtx_events.is_unclosed IS 'A range the export left without an end.';
COMMENT ON COLUMN stg_nvtx_events.global_tid IS 'Nsight globalTid of the thread that started the row.';
COMMENT ON COLUMN stg_nvtx_events.proc_key IS 'globalTid >> 24: the process (PID, VM and hardware id).';
COMMENT ON COLUMN stg_nvtx_events.os_pid IS 'OS process id.';
COMMENT ON COLUMN stg_nvtx_events.os_tid IS 'OS thread id.';
COMMENT ON COLUMN stg_nvtx_events.end_global_tid IS 'globalTid of the thread that ended a start/end range, when the export gives it.';
COMMENT ON COLUMN stg_nvtx_events.range_id IS 'Nsight rangeId of a start/end range.';
COMMENT ON COLUMN stg_nvtx_events.category IS 'NVTX category number.';
COMMENT ON COLUMN stg_nvtx_events.color IS 'NVTX color (ARGB integer).';
COMMENT ON COLUMN stg_nvtx_events.domain_id IS 'NVTX domain id (0: default), per process.';
COMMENT ON COLUMN stg_nvtx_events.domain_name IS 'Domain name: ''default'' for domain 0, the domain-create row of the same process, else domain#ID.';
COMMENT ON COLUMN stg_nvtx_events.message IS 'Text (StringIds via textId, else text); ''[unnamed]'' when empty or missing.';
COMMENT ON COLUMN stg_nvtx_events.nvtx_role IS 'nvtx_event_types.role of the event type: range, mark, category, thread_name, domain; NULL for types no stage reads.';
COMMENT ON COLUMN stg_nvtx_events.range_kind IS 'nvtx_event_types.range_kind: push_pop or start_end for ranges, else NULL.';
COMMENT ON COLUMN stg_nvtx_events.payload_json IS 'The payload as the text of one JSON value (args.payload): a number (uint64Value, int64Value, doubleValue, uint32Value, int32Value, floatValue; NaN/inf, and a uint64Value of 2^63 or more, as a string of its text) or a string (jsonText, or jsonTextId via StringIds); NULL when there is none.';
