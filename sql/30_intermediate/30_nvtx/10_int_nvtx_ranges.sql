-- int_nvtx_ranges: every NVTX range that can own GPU work (push/pop and
-- start/end, stg_nvtx_events.nvtx_role 'range'), with its ownership rule
-- under the conversion's --nvtx-scope (see 21__int_nvtx_call_owners.sql).
--
-- Reads: int_runtime_calls, stg_nvtx_events.
-- Invariants: only ranges of processes with launch calls (no other range
-- can own GPU work) and with end_ns >= start_ns; ownership is 'thread' or
-- 'process'; one row per nvtx_id. nvtx_scope must be 'thread' or 'process'
-- (the template refuses anything else).
-- Column comments from: stg_nvtx_events.

{% if nvtx_scope not in ['thread', 'process'] %}
SELECT error('nvtx_scope must be ''thread'' or ''process''');
{% endif %}

CREATE OR REPLACE TABLE int_nvtx_ranges AS
SELECT
    nvtx_id,
    event_type,
    range_kind,
    start_ns,
    end_ns,
    global_tid,
    end_global_tid,
    proc_key,
    os_pid,
    os_tid,
    domain_id,
    domain_name,
    category,
    color,
    range_id,
    message,
    CASE WHEN '{{ nvtx_scope }}' = 'thread' AND end_global_tid IS NULL
        THEN 'thread' ELSE 'process' END AS ownership
FROM stg_nvtx_events
WHERE nvtx_role = 'range' AND end_ns >= start_ns
    -- only processes that launched GPU work can own any (CPU-only NVTX
    -- captures then cost one filtered scan)
    AND proc_key IN (SELECT proc_key FROM int_runtime_calls
        WHERE launched_gpu_work);

COMMENT ON TABLE int_nvtx_ranges IS 'Every NVTX range that can own GPU work (push/pop and start/end, stg_nvtx_events.nvtx_role ''range''), with its ownership rule under the conversion''s --nvtx-scope (see 21__int_nvtx_call_owners.sql).';
COMMENT ON COLUMN int_nvtx_ranges.nvtx_id IS 'NVTX row id (stg_nvtx_events.nvtx_id).';
COMMENT ON COLUMN int_nvtx_ranges.range_kind IS 'push_pop or start_end (nvtx_event_types.range_kind).';
COMMENT ON COLUMN int_nvtx_ranges.start_ns IS 'Range start, UTC-epoch ns.';
COMMENT ON COLUMN int_nvtx_ranges.end_ns IS 'Range end, UTC-epoch ns (unclosed ranges ended as in stg_nvtx_events).';
COMMENT ON COLUMN int_nvtx_ranges.global_tid IS 'Nsight globalTid of the thread.';
COMMENT ON COLUMN int_nvtx_ranges.end_global_tid IS 'globalTid of the thread that ended a start/end range, when exported.';
COMMENT ON COLUMN int_nvtx_ranges.proc_key IS 'Process key globalPid/globalTid >> 24 (PID, VM and hardware id): the scope of correlationId.';
COMMENT ON COLUMN int_nvtx_ranges.domain_id IS 'NVTX domain id (0: default).';
COMMENT ON COLUMN int_nvtx_ranges.domain_name IS 'NVTX domain name (''default'' for domain 0).';
COMMENT ON COLUMN int_nvtx_ranges.message IS 'NVTX message (StringIds via textId, else text; ''[unnamed]'' when empty).';
COMMENT ON COLUMN int_nvtx_ranges.ownership IS 'Ownership rule used: thread (calls on the range''s thread it contains) or process (also calls of other threads of the process starting inside it).';
