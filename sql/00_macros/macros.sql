-- Macros shared by every stage.
--
-- Produces: scalar macros (no tables). Reads: nothing.
-- Invariants: integer arithmetic only; no hex literals (DuckDB reads 0xFF as
-- "0 AS xFF"), no "/" on ids (DuckDB's "/" is floating-point division).

-- Plain OS process id from a globalTid / globalPid (bits 24..47).
-- Source: nsys-tables.md 2.1 (16777215 = 2^24 - 1).
CREATE OR REPLACE MACRO nsys_os_pid(global_id) AS
    CAST((CAST(global_id AS UBIGINT) >> 24) & 16777215 AS BIGINT);

-- Plain OS thread id from a globalTid (bits 0..23).
CREATE OR REPLACE MACRO nsys_os_tid(global_id) AS
    CAST(CAST(global_id AS UBIGINT) & 16777215 AS BIGINT);

-- Process key (PID + VM id + hardware id): the scope of correlationId.
-- Compare globalTid >> 24 with globalPid >> 24 (nsys-tables.md 4.1).
CREATE OR REPLACE MACRO nsys_proc_key(global_id) AS
    CAST(CAST(global_id AS UBIGINT) >> 24 AS BIGINT);

-- An unsigned 64-bit integer as the text of one JSON value that Perfetto
-- reads back exactly: a number while it fits in int64, else its decimal
-- digits as a string ("18446744073709551615"). Perfetto's JSON reader takes
-- a number past int64 through a double whose int64 part wraps around
-- (2^63 becomes -9.2e18, 2^64 - 1 becomes -1.0; perfetto-json.md 1.4).
CREATE OR REPLACE MACRO json_uint64(v) AS
    CASE WHEN try_cast(v AS BIGINT) IS NOT NULL THEN CAST(v AS VARCHAR)
        ELSE to_json(CAST(v AS VARCHAR)) END;

-- Integer ns (>= 0) as the exact JSON microsecond text the contract asks
-- for: "<int>" when whole, else "<int>.<3 digits>". Never a float.
CREATE OR REPLACE MACRO json_us(ns) AS
    CASE
        WHEN ns % 1000 = 0 THEN CAST(ns // 1000 AS VARCHAR)
        ELSE CAST(ns // 1000 AS VARCHAR) || '.'
            || lpad(CAST(ns % 1000 AS VARCHAR), 3, '0')
    END;

-- CUPTI API name without its callback version: cudaLaunchKernel_v7000 ->
-- cudaLaunchKernel. Only 4+ digit versions: driver names keep a real _v2.
CREATE OR REPLACE MACRO cuda_api_unversioned(api_name) AS
    regexp_replace(api_name, '_v[0-9]{4,}$', '');

-- Base name: also drops the per-thread-default-stream suffix (_ptsz/_ptds).
CREATE OR REPLACE MACRO cuda_api_base(api_name) AS
    regexp_replace(regexp_replace(api_name, '_v[0-9]{4,}$', ''),
                   '_pt(sz|ds)$', '');

-- Nsight strings may hold bytes that are not valid UTF-8 or NUL: keep the
-- text, drop NUL (Perfetto cuts a name at NUL). Never NULL for a non-NULL in.
CREATE OR REPLACE MACRO clean_text(s) AS replace(s, chr(0), '');

-- args of a CUDA API slice (output-contract.md, Events): correlationId,
-- the full API name (with its CUPTI version), eventClass runtime/driver,
-- returnValue (cudaError_t / CUresult: nonzero = the call failed). Written
-- as text member by member: a member without a value (a call with no
-- correlationId, an export without returnValue) is left out, never null
-- (api_full_name is never NULL: stg_runtime_calls names every call).
CREATE OR REPLACE MACRO cuda_api_args_json(correlation_id, api_full_name,
        event_class, return_value) AS
    '{' || coalesce('"correlationId":' || CAST(correlation_id AS VARCHAR)
            || ',', '')
        || '"name":' || to_json(api_full_name)
        || ',"eventClass":' || CASE event_class WHEN 0 THEN '"runtime"'
            ELSE '"driver"' END
        || coalesce(',"returnValue":' || CAST(return_value AS VARCHAR), '')
        || '}';

-- The args object of one drawn slice (output-contract.md, Events), as the
-- JSON trace and the protobuf trace write it: the slice's own (int_slices:
-- NVTX, CPU side, GPU syncs, CUDA events), else its GPU operation's
-- (int_gpu_op_args), else an API call's (cuda_api_args_json), else {}.
CREATE OR REPLACE MACRO slice_args_json(args_json, op_args_json, call_id,
        correlation_id, api_full_name, event_class, return_value) AS
    coalesce(args_json, op_args_json,
        CASE WHEN call_id IS NOT NULL THEN cuda_api_args_json(
            correlation_id, api_full_name, event_class, return_value) END,
        '{}');

-- The args objects of the slices whose args are stored in int_slices
-- (output-contract.md, Events), each written as text member by member: a
-- member without a value is left out, never a JSON null (json_object would
-- write nulls), and members keep the order given here.

-- args of a GPU-side synchronization record (int_slices, cat gpu_sync):
-- correlationId, deviceId, contextId, streamId, eventId, eventSyncId, then
-- the export's own syncType number and its enum label, which may name
-- another kind (exportedSyncType, exportedSyncTypeLabel: stg_gpu_syncs).
CREATE OR REPLACE MACRO gpu_sync_args_json(correlation_id, device_id,
        context_id, stream_id, event_id, event_sync_id, exported_sync_type,
        exported_sync_label) AS
    '{' || coalesce('"correlationId":' || CAST(correlation_id AS VARCHAR)
            || ',', '')
        || '"deviceId":' || CAST(device_id AS VARCHAR)
        || ',"contextId":' || CAST(context_id AS VARCHAR)
        || coalesce(',"streamId":' || CAST(stream_id AS VARCHAR), '')
        || coalesce(',"eventId":' || CAST(event_id AS VARCHAR), '')
        || coalesce(',"eventSyncId":' || CAST(event_sync_id AS VARCHAR), '')
        || coalesce(',"exportedSyncType":'
            || CAST(exported_sync_type AS VARCHAR), '')
        || coalesce(',"exportedSyncTypeLabel":'
            || to_json(exported_sync_label), '')
        || '}';

-- args of a timed CUDA event record (int_slices, cat cuda_event):
-- correlationId, deviceId, contextId, streamId, eventId, eventSyncId.
CREATE OR REPLACE MACRO cuda_event_args_json(correlation_id, device_id,
        context_id, stream_id, event_id, event_sync_id) AS
    '{' || concat_ws(',',
        '"correlationId":' || CAST(correlation_id AS VARCHAR),
        '"deviceId":' || CAST(device_id AS VARCHAR),
        '"contextId":' || CAST(context_id AS VARCHAR),
        '"streamId":' || CAST(stream_id AS VARCHAR),
        '"eventId":' || CAST(event_id AS VARCHAR),
        '"eventSyncId":' || CAST(event_sync_id AS VARCHAR))
    || '}';

-- args of an NVTX range or mark on its NVTX Thread track (int_slices, cat
-- nvtx): domain (never NULL), category number and name, color '#AARRGGBB'
-- (color: the ARGB integer), rangeId (start/end ranges), endTid (the OS
-- tid of end_global_tid, when the range ends on another thread than
-- global_tid), "unclosed": true (no end in the export), payload (the NVTX
-- payload union's JSON text, when the row has one).
CREATE OR REPLACE MACRO nvtx_args_json(domain_name, category, category_name,
        color, range_id, global_tid, end_global_tid, is_unclosed,
        payload_json) AS
    '{"domain":' || to_json(domain_name)
        || coalesce(',"category":' || CAST(category AS VARCHAR), '')
        || coalesce(',"categoryName":' || to_json(category_name), '')
        || coalesce(',"color":"#' || lpad(upper(to_hex(color)), 8, '0')
            || '"', '')
        || coalesce(',"rangeId":' || CAST(range_id AS VARCHAR), '')
        || CASE WHEN end_global_tid <> global_tid
            THEN ',"endTid":' || CAST(nsys_os_tid(end_global_tid)
                AS VARCHAR) ELSE '' END
        || CASE WHEN is_unclosed THEN ',"unclosed":true' ELSE '' END
        || coalesce(',"payload":' || payload_json, '')
        || '}';

-- args of an OS runtime, cuDNN or cuBLAS call (int_slices, cats osrt,
-- cudnn, cublas): returnValue (OSRT_API: the function's return),
-- nestingLevel when > 0; '{}' when neither.
CREATE OR REPLACE MACRO cpu_call_args_json(return_value, nesting_level) AS
    '{' || ltrim(coalesce(',"returnValue":'
            || CAST(return_value AS VARCHAR), '')
        || CASE WHEN nesting_level > 0 THEN ',"nestingLevel":'
            || CAST(nesting_level AS VARCHAR) ELSE '' END, ',')
    || '}';

-- args of a thread state (int_slices, cat thread_state): the CPU it runs
-- on ("cpu", is_running) or last ran on ("previousCpu"), then Nsight's
-- threadState label when the export gives one.
CREATE OR REPLACE MACRO thread_state_args_json(is_running, cpu,
        thread_state) AS
    '{' || concat_ws(',',
        CASE WHEN is_running THEN '"cpu":' ELSE '"previousCpu":' END
            || CAST(cpu AS VARCHAR),
        '"threadState":' || to_json(thread_state)) || '}';

-- The part after the class name (track_classes.track_name, 'Stream') of
-- the name of a (process, context, stream) track of a device: ' S [pid P
-- ctx C]'; every stream track (kernels, copies, graph executions, CUDA
-- event records) is named so.
CREATE OR REPLACE MACRO stream_track_suffix(stream_id, os_pid, context_id) AS
    ' ' || CAST(stream_id AS VARCHAR) || ' [pid '
    || CAST(os_pid AS VARCHAR) || ' ctx ' || CAST(context_id AS VARCHAR) || ']';

-- The part after the class name (track_classes.track_name: NVTX Kernel,
-- NVTX Thread, CUDA API) of the name of a CPU thread's track:
-- ' [pid P tid T THREAD-NAME]'.
CREATE OR REPLACE MACRO thread_track_suffix(os_pid, os_tid, thread_name) AS
    ' [pid ' || CAST(os_pid AS VARCHAR) || ' tid '
    || CAST(os_tid AS VARCHAR) || coalesce(' ' || thread_name, '') || ']';

-- The part after the class name (OS Runtime, cuDNN, cuBLAS, Thread State)
-- of the name of a thread's track under its host process, the thread as
-- Nsight names it: ' · THREAD-NAME [TID]' (' · [TID]' without a name).
CREATE OR REPLACE MACRO host_thread_track_suffix(os_tid, thread_name) AS
    ' · ' || coalesce(thread_name || ' ', '') || '['
    || CAST(os_tid AS VARCHAR) || ']';

-- Stack levels drawn per track: Perfetto keeps at most 512 nested slices
-- per track (kMaxDepth) and drops deeper ones; deeper slices continue on a
-- continuation track every this many levels (20_int_slice_levels.sql).
CREATE OR REPLACE MACRO track_depth_levels() AS 500;

-- Why a GPU activity row (kernel, copy, memset, graph execution, sync
-- record) cannot be drawn, the first reason that applies: a time missing,
-- end before start, no device, a negative device; NULL for a drawable row.
-- The staging views keep the NULL rows; stg_skipped_rows counts the others.
CREATE OR REPLACE MACRO nsys_gpu_row_skip_reason(start_ns, end_ns, device_id) AS
    CASE
        WHEN start_ns IS NULL OR end_ns IS NULL THEN 'NULL start or end'
        WHEN end_ns < start_ns THEN 'end before start'
        WHEN device_id IS NULL THEN 'NULL deviceId'
        WHEN device_id < 0 THEN 'negative deviceId'
    END;

-- The part of a split JSON trace that holds an event whose slice starts at
-- ts (UTC-epoch ns, not NULL): 1 + the number of part starts at or before
-- ts. starts: trace_part_starts.starts (start_ns of parts 2..N, in order;
-- [] for one part). Contract: traces that open (40_trace/54_parts/30_trace_parts.sql).
CREATE OR REPLACE MACRO trace_part_of(starts, ts) AS
    1 + len(list_filter(starts, lambda s: s <= ts));

-- The time bucket of trace_size_grid (lo_ns, hi_ns, buckets) that ns
-- falls in: (ns - lo_ns) * buckets // (hi_ns - lo_ns), clamped to
-- 0..buckets-1 (integer math: exact, so a bucket's first ns is
-- lo_ns + ceil(k * (hi_ns - lo_ns) / buckets)); NULL for NULL ns (the CASE:
-- greatest and least skip NULLs). Contract: traces that open
-- (40_trace/54_parts/10_trace_size_grid.sql).
CREATE OR REPLACE MACRO trace_size_bucket(lo_ns, hi_ns, buckets, ns) AS
    CASE WHEN ns IS NOT NULL THEN CAST(least(greatest(
        (ns - lo_ns) * buckets // (hi_ns - lo_ns), 0), buckets - 1) AS INTEGER)
    END;
