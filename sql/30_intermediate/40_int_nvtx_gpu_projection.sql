-- NVTX ranges projected onto the GPU (the "NVTX Kernel" tracks) and the
-- NVTX ranges that own each GPU operation (the analysis columns).
--
-- Produces:
--   int_nvtx_ranges          every NVTX range that can own GPU work (push/pop
--                            59/70 and start/end 60/71), with its ownership rule.
--   int_nvtx_call_owners     (nvtx_id, call_id): the launch calls a range owns.
--   int_nvtx_call_work       per (owned call, device): its ops' min start,
--                            max end and count.
--   int_nvtx_op_owners       view (nvtx_id, op_id, device_id, call_id): the
--                            GPU operations (kernel, memcpy, memset) a range
--                            owns.
--   int_nvtx_call_paths      per owned call: nvtx_ids / nvtx_names, outer ->
--                            inner; int_nvtx_op_paths: the same per op (view).
--   int_nvtx_gpu_projection  one row per (range, device) with GPU work:
--                            [first op start, last op end] of what it owns there.
-- Reads: stg_nvtx_events, int_runtime_calls, int_runtime_links, int_gpu_ops.
-- Everything is computed per launch call, not per operation: a graph launch
-- or a staged copy has several operations but one set of owners.
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
-- How: the containment joins are inequality joins (IEJoin) on HUGEINT keys
-- globalTid << 64 | time (proc_key << 64 | time for the process rule):
-- two keys compare like the times only inside the same thread (process),
-- since times are in (-2^63, 2^63) and ids >= 0, so no equality condition
-- is needed, which would turn the join into a per-thread cross product. The
-- key columns are computed straight from the tables, one join per statement:
-- with a numbering-table join, a shared CTE or a UNION around it DuckDB
-- 2.0 picked a piecewise merge join that tests the second condition row by
-- row (87 s instead of 1 s for 15M owner pairs in a 30x pytorch trace).

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

-- Thread rule, every range: calls on its own thread that it fully contains
-- (inclusive). Two statements with one plain join each (see "How").
CREATE OR REPLACE TABLE int_nvtx_call_owners AS
SELECT r.nvtx_id, c.call_id
FROM (
    SELECT nvtx_id,
        (CAST(global_tid AS HUGEINT) << 64) + start_ns AS k_start,
        (CAST(global_tid AS HUGEINT) << 64) + end_ns AS k_end
    FROM int_nvtx_ranges
) AS r
JOIN (
    SELECT call_id,
        (CAST(global_tid AS HUGEINT) << 64) + start_ns AS k_start,
        (CAST(global_tid AS HUGEINT) << 64) + end_ns AS k_end
    FROM int_runtime_calls
    WHERE cat = 'cuda_api'
) AS c
    ON c.k_start >= r.k_start AND c.k_end <= r.k_end;

-- Process rule: calls of the other threads of the same process that start
-- inside the range.
INSERT INTO int_nvtx_call_owners
SELECT r.nvtx_id, c.call_id
FROM (
    SELECT nvtx_id, global_tid,
        (CAST(proc_key AS HUGEINT) << 64) + start_ns AS k_start,
        (CAST(proc_key AS HUGEINT) << 64) + end_ns AS k_end
    FROM int_nvtx_ranges
    WHERE ownership = 'process'
) AS r
JOIN (
    SELECT call_id, global_tid,
        (CAST(proc_key AS HUGEINT) << 64) + start_ns AS k_start
    FROM int_runtime_calls
    WHERE cat = 'cuda_api'
) AS c
    ON c.k_start >= r.k_start AND c.k_start < r.k_end
WHERE c.global_tid <> r.global_tid;

-- What each launch call brings to each device (most calls: one op).
CREATE OR REPLACE TABLE int_nvtx_call_work AS
SELECT
    link.call_id,
    link.device_id,
    min(op.start_ns) AS start_ns,
    max(op.end_ns) AS end_ns,
    count(*) AS op_count
FROM int_runtime_links AS link
JOIN int_gpu_ops AS op ON op.op_id = link.op_id
WHERE link.call_id IN (SELECT call_id FROM int_nvtx_call_owners)
GROUP BY link.call_id, link.device_id;

CREATE OR REPLACE VIEW int_nvtx_op_owners AS
SELECT o.nvtx_id, link.op_id, link.device_id, o.call_id
FROM int_nvtx_call_owners AS o
JOIN int_runtime_links AS link ON link.call_id = o.call_id;

-- Paths are per call (every op of a call has the same owners), outer ->
-- inner: by range start, then the longer range first (a parent before the
-- children that share its start), then nvtx_id. The owning ranges are
-- numbered once in that order; each call sorts only those integers and maps
-- them back through two lookup lists (sorting ids and names per call, or
-- list_sort on structs, took 4-10x longer on deep stacks).
CREATE OR REPLACE TABLE int_nvtx_call_paths AS
WITH owning AS MATERIALIZED (
    SELECT nvtx_id, message,
        CAST(row_number() OVER (ORDER BY start_ns, end_ns DESC, nvtx_id)
            AS BIGINT) AS path_order
    FROM int_nvtx_ranges
    WHERE nvtx_id IN (SELECT nvtx_id FROM int_nvtx_call_owners)
),
lk AS (
    SELECT list(nvtx_id ORDER BY path_order) AS ids,
        list(message ORDER BY path_order) AS names
    FROM owning
),
orders AS (
    SELECT o.call_id, list(w.path_order ORDER BY w.path_order) AS orders
    FROM int_nvtx_call_owners AS o
    JOIN owning AS w ON w.nvtx_id = o.nvtx_id
    GROUP BY o.call_id
)
SELECT
    orders.call_id,
    list_transform(orders.orders, lambda k: lk.ids[k]) AS nvtx_ids,
    list_transform(orders.orders, lambda k: lk.names[k]) AS nvtx_names
FROM orders, lk;

CREATE OR REPLACE VIEW int_nvtx_op_paths AS
SELECT link.op_id, p.nvtx_ids, p.nvtx_names
FROM int_nvtx_call_paths AS p
JOIN int_runtime_links AS link ON link.call_id = p.call_id;

CREATE OR REPLACE TABLE int_nvtx_gpu_projection AS
WITH per_device AS (
    SELECT
        o.nvtx_id,
        w.device_id,
        min(w.start_ns) AS start_ns,
        max(w.end_ns) AS end_ns,
        sum(w.op_count) AS gpu_op_count,
        count(*) AS launch_count
    FROM int_nvtx_call_owners AS o
    JOIN int_nvtx_call_work AS w ON w.call_id = o.call_id
    GROUP BY o.nvtx_id, w.device_id
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
    CAST(p.gpu_op_count AS BIGINT) AS gpu_op_count,
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
