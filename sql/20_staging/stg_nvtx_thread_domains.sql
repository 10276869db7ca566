-- stg_nvtx_thread_domains: the NVTX domains each CPU thread draws rows in,
-- ranked, so a thread with several gets one NVTX Thread track per domain.
--
-- Reads: nsys.NVTX_EVENTS, nvtx_event_types.
-- Invariants: one row per (global_tid, domain_id) of the NVTX rows that are
-- drawn on a thread (marks, and ranges that do not end before their start,
-- with a start and a thread: the rows of stg_nvtx_events that int_slices
-- draws); domain_rank is 0..domain_count - 1 by domain id (the default
-- domain, id 0, first). Read from the raw table, not stg_nvtx_events:
-- that view numbers every NVTX row, which this count does not need.

CREATE OR REPLACE VIEW stg_nvtx_thread_domains AS
SELECT
    global_tid,
    domain_id,
    dense_rank() OVER (PARTITION BY global_tid ORDER BY domain_id) - 1
        AS domain_rank,
    count(*) OVER (PARTITION BY global_tid) AS domain_count
FROM (
    SELECT DISTINCT
        CAST(globalTid AS BIGINT) AS global_tid,
        CAST(coalesce(domainId, 0) AS BIGINT) AS domain_id
    FROM nsys.NVTX_EVENTS
    WHERE start IS NOT NULL AND globalTid IS NOT NULL AND (eventType IN (
            SELECT event_type FROM nvtx_event_types WHERE role = 'mark')
        OR (eventType IN (
            SELECT event_type FROM nvtx_event_types WHERE role = 'range')
            AND coalesce("end", start) >= start))
);

COMMENT ON VIEW stg_nvtx_thread_domains IS 'The NVTX domains each CPU thread draws rows in, ranked by domain id (one NVTX Thread track per domain).';
COMMENT ON COLUMN stg_nvtx_thread_domains.global_tid IS 'Nsight globalTid of the thread.';
COMMENT ON COLUMN stg_nvtx_thread_domains.domain_id IS 'NVTX domain id (0: default).';
COMMENT ON COLUMN stg_nvtx_thread_domains.domain_rank IS 'The domain''s rank on its thread, 0-based by domain id.';
COMMENT ON COLUMN stg_nvtx_thread_domains.domain_count IS 'How many domains the thread draws rows in.';
