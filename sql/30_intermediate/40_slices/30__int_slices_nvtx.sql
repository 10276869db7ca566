-- _int_slices_nvtx: the slices of the NVTX rows drawn on the NVTX Thread
-- tracks: push/pop ranges, start/end ranges, marks (private helper of
-- int_slices, which documents the columns).
--
-- Reads: _int_cpu_homes, int_thread_names, stg_nvtx_categories,
-- stg_nvtx_events, stg_nvtx_thread_domains.
-- Invariants: one slice per home of the row's process (_int_cpu_homes)
-- for each mark and each range that ends at or after its start; is_primary
-- TRUE on the slice under the process's lowest home. ph: 'i' mark; 'b' a
-- start/end range (async: it may end on another thread and overlap
-- freely; the row sits on the NVTX Thread track of the thread and domain
-- that started it, which only gives the JSON tid); 'B' a push/pop range
-- longer than 0 ns, 'X' a zero-length one. key3 = the domain's rank among
-- the thread's domains (stg_nvtx_thread_domains); with several domains
-- the track name ends in ' (DOMAIN)'. end_ns: the start for a mark.
-- nest_seq = nvtx_id (the CPU order of the ranges). args:
-- nvtx_args_json, the category name from the eventType 33 rows of the
-- same process and domain (stg_nvtx_categories).

CREATE OR REPLACE VIEW _int_slices_nvtx AS
WITH nvtx_cpu_rows AS (
    SELECT *
    FROM stg_nvtx_events
    WHERE nvtx_role = 'mark' OR (nvtx_role = 'range' AND end_ns >= start_ns)
),

-- The homes of each process's CPU tracks; an NVTX row's primary slice is
-- the one under the lowest.
cpu_homes AS (
    SELECT
        proc_key, home_id,
        home_id = min(home_id) OVER (PARTITION BY proc_key) AS is_primary
    FROM _int_cpu_homes
)

SELECT
    'nvtx' AS cat,
    CASE
        WHEN e.nvtx_role = 'mark' THEN 'i'
        WHEN e.range_kind = 'start_end' THEN 'b'
        WHEN e.end_ns > e.start_ns THEN 'B'
        ELSE 'X'
    END AS ph,
    e.message AS name, e.start_ns,
    coalesce(e.end_ns, e.start_ns) AS end_ns,
    ch.home_id, 'nvtx_thread' AS track_class, e.proc_key,
    e.os_pid AS key1, e.os_tid AS key2, td.domain_rank AS key3,
    thread_track_suffix(e.os_pid, e.os_tid, tl.thread_name)
        || CASE WHEN td.domain_count > 1
            THEN ' (' || e.domain_name || ')' ELSE '' END
        AS track_base_name,
    e.nvtx_id, e.proc_key AS owner_proc_key, e.os_pid, e.os_tid,
    nvtx_args_json(e.domain_name, e.category, cn.category_name, e.color,
        e.range_id, e.global_tid, e.end_global_tid, e.is_unclosed,
        e.payload_json) AS args_json,
    e.nvtx_id AS nest_seq, ch.is_primary
FROM nvtx_cpu_rows AS e
JOIN stg_nvtx_thread_domains AS td
    ON td.global_tid = e.global_tid AND td.domain_id = e.domain_id
JOIN cpu_homes AS ch ON ch.proc_key = e.proc_key
LEFT JOIN stg_nvtx_categories AS cn
    ON cn.proc_key = e.proc_key AND cn.domain_id = e.domain_id
    AND cn.category = e.category
LEFT JOIN int_thread_names AS tl ON tl.global_tid = e.global_tid;

COMMENT ON VIEW _int_slices_nvtx IS 'int_slices rows of the NVTX ranges and marks, on the NVTX Thread track of their thread and domain under every home of the process (private helper of int_slices).';
