-- NVTX ranges projected onto the GPU (the "NVTX Kernel" tracks) and the
-- NVTX ranges that own each GPU operation (the analysis columns).
--
-- Produces:
--   int_nvtx_ranges          every NVTX range that can own GPU work (push/pop
--                            59/70 and start/end 60/71), with its ownership rule.
--   int_nvtx_call_owners     (nvtx_id, call_id): the launch calls a range owns.
--   int_nvtx_op_owners       (nvtx_id, op_id, device_id): the GPU operations
--                            (kernel, memcpy, memset) a range owns.
--   int_nvtx_op_paths        per owned op: nvtx_ids / nvtx_names, outer -> inner.
--   int_nvtx_gpu_projection  one row per (range, device) with GPU work:
--                            [first op start, last op end] of what it owns there.
-- Reads: stg_nvtx_events, int_runtime_calls, int_runtime_links, int_gpu_ops.
--
-- Ownership (template variable nvtx_scope, CLI --nvtx-scope):
--   'thread' (default) is Nsight's `nsys stats --report nvtx_gpu_proj_trace`
--     (nsys-tables.md 5.1, checked against its CSVs in tests/data/oracle): a
--     range owns the API calls made on ITS OWN THREAD (same globalTid) that it
--     fully contains, inclusive at both ends:
--         range.start <= call.start AND call.end <= range.end
--     Nested ranges all own the call (an outer projection covers its
--     children). Candidates are push/pop AND start/end ranges that end on the
--     thread that started them (endGlobalTid NULL).
--     Extension (Nsight drops them): a start/end range that ENDS ON ANOTHER
--     THREAD has no single owning thread, so it always uses the process rule.
--   'process': every range owns, in addition to the thread rule's calls, the
--     calls from the OTHER threads of the same process (proc_key: PID + VM +
--     HW id, never across processes) that START inside it:
--         range.start <= call.start < range.end
--     So process scope only ever adds calls launched by other threads;
--     on the range's own thread both scopes agree.
-- The calls: int_runtime_calls with cat 'cuda_api' (class 0/1 calls that
-- launched GPU work). Nsight joins GPU rows to RUNTIME rows of any
-- eventClass; the only other class seen, the backtrace twins (67), spans the
-- same or a wider interval than its real call, so a range containing the twin
-- contains the call and the twins add nothing (a synthetic test checks it).
-- GPU work of a call: int_runtime_links ((proc_key, correlationId), so a
-- CUDA graph launch brings every kernel of the launch).
--
-- int_nvtx_ranges only holds ranges of processes with launch calls (no
-- other range can own GPU work).
-- Invariants: start_ns/end_ns of a projection = [min op start, max op end] of
-- the ops the range owns on that device (Nsight reports one row per range
-- over all devices; here it is split per device because it is drawn under
-- each device). gpu_op_count counts operations, launch_count distinct
-- launching calls (Nsight's NumGPUOps, a graph launch counts once). Ranges
-- without owned GPU work have no row. An unclosed range ends at the capture
-- end of stg_nvtx_events (Nsight: the largest range timestamp; the same in
-- every export seen, where the exporter closes open ranges itself).
-- How: the containment joins are inequality joins (IEJoin) on keys
-- band << 64 | time, where band numbers the thread (or process): ranges and
-- calls match only inside the same band, without an equality condition that
-- would turn the join into a per-thread cross product.

{% if nvtx_scope not in ['thread', 'process'] %}
SELECT error('nvtx_scope must be ''thread'' or ''process''');
{% endif %}

CREATE OR REPLACE TABLE int_nvtx_ranges AS
SELECT
    nvtx_id,
    event_type,
    CASE WHEN event_type IN (59, 70) THEN 'push_pop' ELSE 'start_end' END
        AS range_kind,
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
WHERE event_type IN (59, 60, 70, 71) AND end_ns >= start_ns
    -- only processes that launched GPU work can own any (CPU-only NVTX
    -- captures then cost one filtered scan)
    AND proc_key IN (SELECT proc_key FROM int_runtime_calls
        WHERE cat = 'cuda_api');

CREATE OR REPLACE TABLE int_nvtx_call_owners AS
WITH launch_calls AS (
    SELECT call_id, global_tid, proc_key, start_ns, end_ns
    FROM int_runtime_calls
    WHERE cat = 'cuda_api'
),
thread_band AS (
    SELECT global_tid,
        CAST(row_number() OVER (ORDER BY global_tid) AS HUGEINT) << 64 AS band
    FROM (SELECT DISTINCT global_tid FROM launch_calls)
),
proc_band AS (
    SELECT proc_key,
        CAST(row_number() OVER (ORDER BY proc_key) AS HUGEINT) << 64 AS band
    FROM (SELECT DISTINCT proc_key FROM launch_calls)
),
-- Thread rule, every range: own thread, full containment (inclusive).
same_thread AS (
    SELECT r.nvtx_id, c.call_id
    FROM (
        SELECT r.nvtx_id, b.band + r.start_ns AS k_start,
            b.band + r.end_ns AS k_end
        FROM int_nvtx_ranges AS r
        JOIN thread_band AS b ON b.global_tid = r.global_tid
    ) AS r
    JOIN (
        SELECT c.call_id, b.band + c.start_ns AS k_start,
            b.band + c.end_ns AS k_end
        FROM launch_calls AS c
        JOIN thread_band AS b ON b.global_tid = c.global_tid
    ) AS c
        ON c.k_start >= r.k_start AND c.k_end <= r.k_end
),
-- Process rule: other threads of the same process, call starts inside.
other_threads AS (
    SELECT r.nvtx_id, c.call_id
    FROM (
        SELECT r.nvtx_id, r.global_tid, b.band + r.start_ns AS k_start,
            b.band + r.end_ns AS k_end
        FROM int_nvtx_ranges AS r
        JOIN proc_band AS b ON b.proc_key = r.proc_key
        WHERE r.ownership = 'process'
    ) AS r
    JOIN (
        SELECT c.call_id, c.global_tid, b.band + c.start_ns AS k_start
        FROM launch_calls AS c
        JOIN proc_band AS b ON b.proc_key = c.proc_key
    ) AS c
        ON c.k_start >= r.k_start AND c.k_start < r.k_end
    WHERE c.global_tid <> r.global_tid
)
SELECT nvtx_id, call_id FROM same_thread
UNION ALL
SELECT nvtx_id, call_id FROM other_threads;

CREATE OR REPLACE TABLE int_nvtx_op_owners AS
SELECT o.nvtx_id, link.op_id, link.device_id, o.call_id
FROM int_nvtx_call_owners AS o
JOIN int_runtime_links AS link ON link.call_id = o.call_id;

-- Outer -> inner: by range start, then the longer range first (a parent
-- before the children that share its start), then nvtx_id.
CREATE OR REPLACE TABLE int_nvtx_op_paths AS
SELECT
    o.op_id,
    list(r.nvtx_id ORDER BY r.start_ns, r.end_ns DESC, r.nvtx_id) AS nvtx_ids,
    list(r.message ORDER BY r.start_ns, r.end_ns DESC, r.nvtx_id)
        AS nvtx_names
FROM int_nvtx_op_owners AS o
JOIN int_nvtx_ranges AS r ON r.nvtx_id = o.nvtx_id
GROUP BY o.op_id;

CREATE OR REPLACE TABLE int_nvtx_gpu_projection AS
WITH per_device AS (
    SELECT
        o.nvtx_id,
        o.device_id,
        min(op.start_ns) AS start_ns,
        max(op.end_ns) AS end_ns,
        count(*) AS gpu_op_count,
        count(DISTINCT o.call_id) AS launch_count
    FROM int_nvtx_op_owners AS o
    JOIN int_gpu_ops AS op ON op.op_id = o.op_id
    GROUP BY o.nvtx_id, o.device_id
)
SELECT
    r.nvtx_id,
    p.device_id,
    r.proc_key,
    r.os_pid,
    r.os_tid,
    r.global_tid,
    r.message,
    r.domain_name,
    p.start_ns,
    p.end_ns,
    p.gpu_op_count,
    p.launch_count,
    r.event_type,
    r.range_kind,
    r.ownership,
    r.start_ns AS range_start_ns,
    r.end_ns AS range_end_ns,
    -- CPU order (start, longer first, nvtx_id): outer before inner, the
    -- tie-break of projections with equal intervals (int_slices.nest_seq)
    dense_rank() OVER (ORDER BY r.start_ns, r.end_ns DESC, r.nvtx_id)
        AS path_order
FROM per_device AS p
JOIN int_nvtx_ranges AS r ON r.nvtx_id = p.nvtx_id;
