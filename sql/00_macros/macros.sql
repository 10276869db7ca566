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

-- A GPU activity row (kernel, copy, memset, graph execution, sync record)
-- that can be drawn: both times, end not before start, a device (>= 0).
-- Rows failing it are counted by reason in stg_skipped_rows.
CREATE OR REPLACE MACRO nsys_drawable_gpu_row(start_ns, end_ns, device_id) AS
    start_ns IS NOT NULL AND end_ns IS NOT NULL AND end_ns >= start_ns
    AND device_id >= 0;

-- The part of a split JSON trace that holds an event whose slice starts at
-- ts (UTC-epoch ns, not NULL): 1 + the number of part starts at or before
-- ts. starts: trace_part_starts.starts (start_ns of parts 2..N, in order;
-- [] for one part). Contract: traces that open (40_trace/53_trace_parts.sql).
CREATE OR REPLACE MACRO trace_part_of(starts, ts) AS
    1 + len(list_filter(starts, lambda s: s <= ts));
