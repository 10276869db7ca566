-- _int_nvtx_call_owners: (nvtx_id, call_id) pairs for the ownership the
-- range tree does not decide (private helper of the NVTX projection).
--
-- Reads: int_nvtx_ranges, int_runtime_calls, int_nvtx_call_innermost.
-- Invariants: the thread rule's pairs of every launch call whose
-- int_nvtx_call_innermost.by_tree is FALSE (threads whose ranges cross,
-- calls outlasting the innermost open range), and the process rule's pairs
-- of every call; together with the chains of int_nvtx_call_innermost they
-- are exactly the ownership defined below, each pair once. On captures
-- whose threads nest their ranges (push/pop) and use the default scope,
-- the table is empty.
--
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
-- The calls: int_runtime_calls with launched_gpu_work (class 0/1 calls
-- that launched GPU work; the other calls bring none). Nsight joins GPU
-- rows to RUNTIME rows of any eventClass; the only other class seen, the
-- backtrace twins (67), spans the same or a wider interval than its real
-- call, so a range containing the twin contains the call and the twins add
-- nothing (a synthetic test checks it).
-- GPU work of a call: int_runtime_links ((proc_key, correlationId), so a
-- CUDA graph launch brings every kernel of the launch).
--
-- int_nvtx_ranges only holds ranges of processes with launch calls (no
-- other range can own GPU work).
-- How: the containment joins are inequality joins (IEJoin) on HUGEINT keys
-- globalTid << 64 | time (proc_key << 64 | time for the process rule):
-- two keys compare like the times only inside the same thread (process),
-- since times are in (-2^63, 2^63) and ids >= 0, so no equality condition
-- is needed, which would turn the join into a per-thread cross product. The
-- key columns are computed straight from the tables, one join per statement:
-- with a numbering-table join, a shared CTE or a UNION around it DuckDB
-- 2.0 picked a piecewise merge join that tests the second condition row by
-- row (87 s instead of 1 s for 15M owner pairs in a 30x pytorch trace).

-- Thread rule, where the tree does not decide: calls on the range's own
-- thread that it fully contains (inclusive). Two statements with one plain
-- join each (see "How").
CREATE OR REPLACE TABLE _int_nvtx_call_owners AS
SELECT r.nvtx_id, c.call_id
FROM (
    SELECT nvtx_id,
        (CAST(global_tid AS HUGEINT) << 64) + start_ns AS k_start,
        (CAST(global_tid AS HUGEINT) << 64) + end_ns AS k_end
    FROM int_nvtx_ranges
    WHERE global_tid IN (SELECT global_tid FROM int_nvtx_call_innermost
        WHERE NOT by_tree)
) AS r
JOIN (
    SELECT call_id,
        (CAST(global_tid AS HUGEINT) << 64) + start_ns AS k_start,
        (CAST(global_tid AS HUGEINT) << 64) + end_ns AS k_end
    FROM int_runtime_calls
    WHERE launched_gpu_work
        AND call_id IN (SELECT call_id FROM int_nvtx_call_innermost
            WHERE NOT by_tree)
) AS c
    ON c.k_start >= r.k_start AND c.k_end <= r.k_end;

-- Process rule: calls of the other threads of the same process that start
-- inside the range.
INSERT INTO _int_nvtx_call_owners
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
    WHERE launched_gpu_work
) AS c
    ON c.k_start >= r.k_start AND c.k_start < r.k_end
WHERE c.global_tid <> r.global_tid;

COMMENT ON TABLE _int_nvtx_call_owners IS '(nvtx_id, call_id) pairs of the ownership the range tree does not decide: the thread rule for calls with int_nvtx_call_innermost.by_tree FALSE, and the process rule (private helper of the NVTX projection).';
