-- nvtx_event_types: the NVTX_EVENTS.eventType codes the stages read, with
-- what each row of that type is.
--
-- Reads: nothing (a domain table: stg_nvtx_events, stg_skipped_rows,
-- int_thread_names, int_slices read it).
-- Invariants: event_type is Nsight's ENUM_NSYS_EVENT_TYPE id and
-- event_name its name; role is 'range' (push/pop and start/end ranges, with
-- range_kind 'push_pop' or 'start_end'; 70/71 are NVTXT imports), 'mark'
-- (instant), 'category' (category number -> name), 'thread_name'
-- (nvtxNameOsThread) or 'domain' (domain creation: domain id -> name).
-- Rows of other event types are read by no stage (they stay in
-- stg_nvtx_events with role NULL). Source: nsys-tables.md 2.3.

CREATE OR REPLACE TABLE nvtx_event_types AS
SELECT * FROM (VALUES
    (33, 'NvtxCategory', 'category', NULL),
    (34, 'NvtxMark', 'mark', NULL),
    (39, 'NvtxThread', 'thread_name', NULL),
    (59, 'NvtxPushPopRange', 'range', 'push_pop'),
    (60, 'NvtxStartEndRange', 'range', 'start_end'),
    (70, 'NvtxtPushPopRange', 'range', 'push_pop'),
    (71, 'NvtxtStartEndRange', 'range', 'start_end'),
    (75, 'NvtxDomainCreate', 'domain', NULL)
) AS t (event_type, event_name, role, range_kind);

COMMENT ON TABLE nvtx_event_types IS 'Domain table: the NVTX_EVENTS.eventType codes the stages read and what a row of each is (range, mark, category, thread name, domain).';
COMMENT ON COLUMN nvtx_event_types.event_type IS 'NVTX_EVENTS.eventType (ENUM_NSYS_EVENT_TYPE.id).';
COMMENT ON COLUMN nvtx_event_types.event_name IS 'ENUM_NSYS_EVENT_TYPE.name of the code.';
COMMENT ON COLUMN nvtx_event_types.role IS 'range, mark, category (category number -> name), thread_name (nvtxNameOsThread) or domain (domain id -> name).';
COMMENT ON COLUMN nvtx_event_types.range_kind IS 'For ranges: push_pop (B/E stacks per thread and domain) or start_end (async, may end on another thread); NULL otherwise.';
