-- stg_nvtx_categories: the names of NVTX categories (nvtxNameCategory rows,
-- nvtx_event_types role 'category'), per process and domain.
--
-- Reads: nsys.NVTX_EVENTS, nsys.StringIds, nvtx_event_types.
-- Invariants: one row per (proc_key, domain_id, category); category_name
-- is the row's text (StringIds for textId, else text), cleaned for display;
-- a category named twice keeps one of its names. Read from the raw table,
-- not stg_nvtx_events: that view numbers every NVTX row.

CREATE OR REPLACE VIEW stg_nvtx_categories AS
SELECT
    nsys_proc_key(c.globalTid) AS proc_key,
    CAST(coalesce(c.domainId, 0) AS BIGINT) AS domain_id,
    CAST(c.category AS BIGINT) AS category,
    any_value(clean_text(coalesce(s.value, c.text))) AS category_name
FROM nsys.NVTX_EVENTS AS c
LEFT JOIN nsys.StringIds AS s ON s.id = c.textId
WHERE c.eventType IN (SELECT event_type FROM nvtx_event_types
    WHERE role = 'category')
GROUP BY ALL;

COMMENT ON VIEW stg_nvtx_categories IS 'NVTX category names (nvtxNameCategory rows), per process, domain and category number.';
COMMENT ON COLUMN stg_nvtx_categories.proc_key IS 'Process key: nsys_proc_key(globalTid).';
COMMENT ON COLUMN stg_nvtx_categories.domain_id IS 'NVTX domain id (0: default).';
COMMENT ON COLUMN stg_nvtx_categories.category IS 'NVTX category number.';
COMMENT ON COLUMN stg_nvtx_categories.category_name IS 'The category''s name (clean_text).';
