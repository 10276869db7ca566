-- int_slices: every slice of the trace, on its base track (before lanes).
--
-- Reads: _int_cpu_homes, int_gpu_ops, int_homes,
-- int_nvtx_gpu_projection, int_thread_states, stg_cpu_calls,
-- int_runtime_calls, int_runtime_links, int_thread_names,
-- stg_cuda_events, stg_gpu_syncs, stg_nvtx_categories, stg_nvtx_events,
-- stg_nvtx_thread_domains, track_classes.
-- Grain: one row per drawn slice (slice_id unique). A GPU op (kernel, copy,
-- memset, graph execution) gives its as-executed slice plus at most one
-- projection slice; an API call (every call of int_runtime_calls) one
-- slice per device of its linked GPU work, or, without any, per home of its
-- process (plus the device of its GPU-side synchronization rows); an
-- NVTX range or mark one per home of its process; an OS runtime, cuDNN or
-- cuBLAS call and a thread state one slice, under the host home of its
-- process; a projected NVTX range
-- one per device its owned GPU work ran on; a GPU-side synchronization row
-- (gpu_sync) one slice on the CUDA Sync track of its device, process and
-- context; a timed CUDA event record one instant on its stream track.
-- Branches are combined BY NAME: a column a branch does not name is NULL.
-- Track identity: (home_id, class_order, proc_key, key1, key2, key3), sorted
-- in that order (output-contract.md, Tracks; the classes, their order,
-- names and lane rules are the rows of the domain table track_classes):
--   1 CUDA Core Timeline, 2 PCIe Usage, 3 D2D Copy, 4 Unified Memory,
--   5 stream tracks (key1 os pid, key2 context, key3 stream), and after
--     the streams of each (process, context) its 'CUDA Sync' track
--     (key3 = 2^32, above every stream id): the GPU-side synchronization
--     records of that context, named by their kind ('Stream sync', 'Event
--     sync', 'Stream wait sync', 'Context sync'), linked to their API call
--     by a 'sync' flow (linked_call_id). Nsight's GUI placement of these
--     records could not be checked here; this keeps them on the device,
--     beside the streams they concern, without touching the stream tracks.
--   6 per CPU thread (key1 os pid, key2 os tid, under a device or, for
--     the CPU side that is not the seed's, under its host process,
--     key3 = 4294967296 * kind + domain rank, kind 1 NVTX Kernel,
--     2 NVTX Thread, 3 CUDA API, 4 OS Runtime, 5 cuDNN, 6 cuBLAS, 7 Thread
--     State). A thread whose NVTX rows use several
--     domains gets one NVTX Thread track per domain (push/pop stacks are per
--     domain and thread, so stacks of two domains may overlap partially),
--     ordered by domain id and named "NVTX Thread [...] (DOMAIN)"; with one
--     domain the rank is 0 and the name has no domain.
-- ph: 'X' complete slice; 'B' begin/end pair (NVTX stacks: push/pop ranges
-- on NVTX Thread, projected ranges on NVTX Kernel; a zero-length range is an
-- 'X'); 'b' async begin/end pair (NVTX start/end ranges, eventType 60/71:
-- they may end on another thread and overlap freely, so they go on
-- Perfetto's per-process async tracks; the row sits on the NVTX Thread track
-- of the thread and domain that started it, which only gives the JSON tid);
-- 'i' thread instant (NVTX marks, eventType 34, and CUDA event records,
-- start = end).
-- CPU side (cpu_trace_sources): each OS runtime, cuDNN or cuBLAS call of
-- stg_cpu_calls is an X slice (cat = its source; Nsight's zero-length
-- markers too) on the thread's OS Runtime / cuDNN / cuBLAS track, args
-- returnValue (OSRT) and nestingLevel (when > 0); each state of
-- int_thread_states an X slice (cat thread_state, name Running / Not
-- running, args cpu / previousCpu, threadState when Nsight gives one) on
-- its Thread State track. Both drawn once (primary), under the host home
-- of the thread's process (int_homes), never under a device
-- (output-contract.md, Tracks), on tracks named after the thread as Nsight
-- names it (host_thread_track_suffix: 'OS Runtime · NAME [TID]').
-- NVTX args: domain, category number and name (eventType 33 rows of the same
-- process and domain), color '#AARRGGBB'; start/end ranges add Nsight's
-- rangeId and the end thread when it differs; an unclosed range (no end in
-- the export) "unclosed": true; a payload (the NVTX payload union, when
-- the row has one) "payload". Projected ranges (cat
-- nvtx_kernel, name = the range's message) carry domain, kind, the
-- ownership rule used, gpuOps and apiCalls. GPU slices (both copies of an
-- operation) carry args_json NULL here: their args live once per operation
-- in int_gpu_op_args and are joined in when the JSON is written, so the big
-- argument strings are not stored twice. CUDA API slices too: their args
-- (correlationId, name = api_full_name, eventClass runtime/driver,
-- returnValue) are built at output from api_full_name, event_class and
-- return_value (cuda_api_args_json),
-- since a text unique to each row costs more to store than to build.
-- lane_rule: NULL (the track's data nests by construction, or the slice is
-- zero-length), 'disjoint' (X slices that may overlap: a lane holds
-- disjoint slices) or 'nest' (B slices of NVTX Kernel tracks, X slices of
-- the OS Runtime / cuDNN / cuBLAS tracks: a lane may
-- hold nested slices but no partial overlap), see 10_int_lane_clusters.sql.
-- needs_lanes = lane_rule IS NOT NULL. track_key: a 64-bit hash of the
-- track identity (checked collision-free in 40_int_tracks.sql).
-- nest_seq: tie-break of B/E stacks between slices with equal intervals
-- (who opens first, closes last): the CPU order of NVTX ranges (start, then
-- longer first), so projected ranges keep their CPU parent/child order when
-- their projections coincide (an outer range whose only work is its child's).
-- NULL on other rows (callers use slice_id).
-- is_projection: on GPU operation slices (op_id set), FALSE for the slice as
-- executed (stream / Unified Memory track), TRUE for its Core/PCIe/D2D copy.
-- is_primary: TRUE on exactly one slice of each source row of the export
-- that is drawn, so a sum over the primary slices counts each kernel, copy,
-- memset, graph execution, GPU-side sync, CUDA event record, API call and
-- NVTX range or mark once: the slice as executed of a GPU operation (not
-- its Core/PCIe/D2D copy); an API call's slice under the lowest home_id it
-- is drawn under (the lowest device id); an NVTX row's slice under the
-- lowest home of its process; every gpu_sync, cuda_event and CPU-side
-- (OS runtime, cuDNN, cuBLAS, thread state) slice. FALSE on
-- the other copies and on every projected NVTX range (cat 'nvtx_kernel': a
-- copy of the range's own 'nvtx' slice). Never NULL.

-- Join order as written: every JOIN's right side is the small one (homes,
-- domains, categories, thread names). DuckDB 2.0's join-order optimizer,
-- misled by the estimates of the CTEs over NVTX_EVENTS, built a hash table
-- on the 16M NVTX rows of a 16M-range capture and ran out of memory at
-- 2GB; as written it completes (and was faster on the dev reports).
SET disabled_optimizers = 'join_order,build_side_probe_side';

CREATE OR REPLACE TABLE int_slices AS
WITH thread_label AS (
    SELECT global_tid, thread_name FROM int_thread_names
),
gpu_executed AS (
    SELECT
        op.cat, 'X' AS ph, op.name, op.start_ns, op.end_ns,
        op.device_id AS home_id,
        CASE WHEN op.is_unified_migration THEN 'unified' ELSE 'stream' END
            AS track_class,
        CASE WHEN op.is_unified_migration THEN 0 ELSE op.proc_key END
            AS proc_key,
        CASE WHEN op.is_unified_migration THEN 0 ELSE op.os_pid END AS key1,
        CASE WHEN op.is_unified_migration THEN 0 ELSE op.context_id END
            AS key2,
        CASE WHEN op.is_unified_migration THEN 0 ELSE op.stream_id END
            AS key3,
        CASE WHEN op.is_unified_migration THEN ''
            ELSE stream_track_suffix(op.stream_id, op.os_pid, op.context_id)
        END AS track_base_name,
        op.op_id, FALSE AS is_projection, TRUE AS is_primary, op.device_id,
        op.proc_key AS owner_proc_key, op.os_pid,
        op.context_id, op.stream_id, op.correlation_id, op.copy_kind_label,
        op.bytes
        -- args: int_gpu_op_args, joined when the JSON is written
    FROM int_gpu_ops AS op
),
gpu_projected AS (
    SELECT
        op.projected_cat AS cat, 'X' AS ph, op.name, op.start_ns, op.end_ns,
        op.device_id AS home_id,
        op.projection AS track_class,
        0 AS proc_key, 0 AS key1, 0 AS key2, 0 AS key3,
        '' AS track_base_name,
        op.op_id, TRUE AS is_projection, FALSE AS is_primary, op.device_id,
        op.proc_key AS owner_proc_key, op.os_pid,
        op.context_id, op.stream_id, op.correlation_id, op.copy_kind_label,
        op.bytes
    FROM int_gpu_ops AS op
    WHERE op.projection IS NOT NULL
),
-- GPU-side synchronization records and the API call each belongs to.
gpu_syncs AS (
    SELECT
        sync.*,
        (SELECT any_value(call.call_id) FROM int_runtime_calls AS call
            WHERE call.proc_key = sync.proc_key
                AND call.correlation_id = sync.correlation_id) AS call_id
    FROM stg_gpu_syncs AS sync
),
gpu_sync AS (
    SELECT
        'gpu_sync' AS cat, 'X' AS ph, sync.sync_name AS name,
        sync.start_ns, sync.end_ns, sync.device_id AS home_id,
        'cuda_sync' AS track_class, sync.proc_key, sync.os_pid AS key1,
        sync.context_id AS key2, 4294967296 AS key3,
        ' [pid ' || CAST(sync.os_pid AS VARCHAR) || ' ctx '
            || CAST(sync.context_id AS VARCHAR) || ']' AS track_base_name,
        sync.device_id, sync.proc_key AS owner_proc_key, sync.os_pid,
        sync.context_id, sync.stream_id, sync.correlation_id,
        sync.call_id AS linked_call_id, TRUE AS is_primary,
        -- members without a value are left out (never a JSON null)
        '{' || coalesce('"correlationId":'
                || CAST(sync.correlation_id AS VARCHAR) || ',', '')
            || '"deviceId":' || CAST(sync.device_id AS VARCHAR)
            || ',"contextId":' || CAST(sync.context_id AS VARCHAR)
            || coalesce(',"streamId":' || CAST(sync.stream_id AS VARCHAR), '')
            || coalesce(',"eventId":' || CAST(sync.event_id AS VARCHAR), '')
            || coalesce(',"eventSyncId":'
                || CAST(sync.event_sync_id AS VARCHAR), '')
            -- the export's own syncType number and its enum label, which
            -- may name another kind (stg_gpu_syncs.sql)
            || coalesce(',"exportedSyncType":'
                || CAST(sync.exported_sync_type AS VARCHAR), '')
            || coalesce(',"exportedSyncTypeLabel":'
                || to_json(sync.exported_sync_label), '')
            || '}' AS args_json
    FROM gpu_syncs AS sync
),
-- Timed CUDA event records: instants on their stream track.
cuda_event AS (
    SELECT
        'cuda_event' AS cat, 'i' AS ph, 'CUDA event record' AS name,
        ev.at_ns AS start_ns, ev.at_ns AS end_ns, ev.device_id AS home_id,
        'stream' AS track_class, ev.proc_key, ev.os_pid AS key1,
        ev.context_id AS key2, ev.stream_id AS key3,
        stream_track_suffix(ev.stream_id, ev.os_pid, ev.context_id)
            AS track_base_name,
        ev.device_id, ev.proc_key AS owner_proc_key, ev.os_pid,
        ev.context_id, ev.stream_id, ev.correlation_id, TRUE AS is_primary,
        -- the members with a value (json_object would write nulls)
        '{' || concat_ws(',',
            '"correlationId":' || CAST(ev.correlation_id AS VARCHAR),
            '"deviceId":' || CAST(ev.device_id AS VARCHAR),
            '"contextId":' || CAST(ev.context_id AS VARCHAR),
            '"streamId":' || CAST(ev.stream_id AS VARCHAR),
            '"eventId":' || CAST(ev.event_id AS VARCHAR),
            '"eventSyncId":' || CAST(ev.event_sync_id AS VARCHAR))
            || '}' AS args_json
    FROM stg_cuda_events AS ev
),
call_homes AS (
    SELECT
        call_id, home_id,
        -- the call's primary slice: the one under its lowest home
        home_id = min(home_id) OVER (PARTITION BY call_id) AS is_primary
    FROM (
        -- Linked calls: under each device their GPU work ran on.
        SELECT DISTINCT link.call_id, link.device_id AS home_id
        FROM int_runtime_links AS link
        UNION
        -- Calls without linked GPU work (synchronization, allocation,
        -- stream, event, graph calls...): under every home of their process,
        -- as its NVTX ranges; a call with GPU-side synchronization rows
        -- also under the device of those rows.
        SELECT call.call_id, home.home_id
        FROM int_runtime_calls AS call
        JOIN _int_cpu_homes AS home ON home.proc_key = call.proc_key
        WHERE call.call_id NOT IN (SELECT link.call_id
            FROM int_runtime_links AS link)
        UNION
        SELECT sync.call_id, sync.device_id
        FROM gpu_syncs AS sync
        WHERE sync.call_id IS NOT NULL
    )
),
-- The homes of each process's CPU tracks; an NVTX row's primary slice is
-- the one under the lowest.
cpu_homes AS (
    SELECT
        proc_key, home_id,
        home_id = min(home_id) OVER (PARTITION BY proc_key) AS is_primary
    FROM _int_cpu_homes
),
api AS (
    SELECT
        call.cat, 'X' AS ph, call.api_name AS name, call.start_ns,
        call.end_ns, ch.home_id, 'cuda_api' AS track_class, call.proc_key,
        call.os_pid AS key1, call.os_tid AS key2, 0 AS key3,
        thread_track_suffix(call.os_pid, call.os_tid, tl.thread_name)
            AS track_base_name,
        call.call_id, call.proc_key AS owner_proc_key, call.os_pid,
        call.os_tid, call.correlation_id, ch.is_primary,
        -- args built at output from these columns (cuda_api_args_json)
        call.api_full_name, CAST(call.event_class AS BIGINT) AS event_class,
        call.return_value
    FROM int_runtime_calls AS call
    JOIN call_homes AS ch ON ch.call_id = call.call_id
    LEFT JOIN thread_label AS tl ON tl.global_tid = call.global_tid
),
-- NVTX rows drawn on the NVTX Thread tracks: push/pop ranges, start/end
-- ranges (async, see header), marks.
nvtx_cpu_rows AS (
    SELECT *
    FROM stg_nvtx_events
    WHERE nvtx_role = 'mark' OR (nvtx_role = 'range' AND end_ns >= start_ns)
),
nvtx_thread AS (
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
        -- written member by member: members without a value are left out
        '{"domain":' || to_json(e.domain_name)
            || coalesce(',"category":' || CAST(e.category AS VARCHAR), '')
            || coalesce(',"categoryName":' || to_json(cn.category_name), '')
            || coalesce(',"color":"#' || lpad(upper(to_hex(e.color)), 8, '0')
                || '"', '')
            || coalesce(',"rangeId":' || CAST(e.range_id AS VARCHAR), '')
            || CASE WHEN e.end_global_tid <> e.global_tid
                THEN ',"endTid":' || CAST(nsys_os_tid(e.end_global_tid)
                    AS VARCHAR) ELSE '' END
            || CASE WHEN e.is_unclosed THEN ',"unclosed":true' ELSE '' END
            || coalesce(',"payload":' || e.payload_json, '')
            || '}' AS args_json,
        e.nvtx_id AS nest_seq, ch.is_primary
    FROM nvtx_cpu_rows AS e
    JOIN stg_nvtx_thread_domains AS td
        ON td.global_tid = e.global_tid AND td.domain_id = e.domain_id
    JOIN cpu_homes AS ch ON ch.proc_key = e.proc_key
    LEFT JOIN stg_nvtx_categories AS cn
        ON cn.proc_key = e.proc_key AND cn.domain_id = e.domain_id
        AND cn.category = e.category
    LEFT JOIN thread_label AS tl ON tl.global_tid = e.global_tid
),
-- Projected ranges (push/pop and start/end) on the NVTX Kernel track of the
-- thread that started the range, under the device the owned work ran on.
nvtx_kernel AS (
    SELECT
        'nvtx_kernel' AS cat,
        CASE WHEN p.end_ns > p.start_ns THEN 'B' ELSE 'X' END AS ph,
        p.message AS name, p.start_ns, p.end_ns,
        p.device_id AS home_id, 'nvtx_kernel' AS track_class, p.proc_key,
        p.os_pid AS key1, p.os_tid AS key2, 0 AS key3,
        thread_track_suffix(p.os_pid, p.os_tid, tl.thread_name)
            AS track_base_name,
        p.nvtx_id, p.device_id, p.proc_key AS owner_proc_key, p.os_pid,
        p.os_tid,
        json_object('domain', p.domain_name,
            'kind', replace(p.range_kind, '_', '/'),
            'ownership', p.ownership,
            'gpuOps', p.gpu_op_count, 'apiCalls', p.launch_count) AS args_json,
        p.path_order AS nest_seq, FALSE AS is_primary
    FROM int_nvtx_gpu_projection AS p
    LEFT JOIN thread_label AS tl ON tl.global_tid = p.global_tid
),
-- The host home of each process with CPU-side rows.
host_homes AS (
    SELECT proc_key, home_id FROM int_homes WHERE home_kind = 'host'
),
-- CPU-side calls (OS runtime, cuDNN, cuBLAS) on their per-thread track,
-- once, under the host home of the thread's process.
cpu_calls AS (
    SELECT
        c.source AS cat, 'X' AS ph, c.name, c.start_ns, c.end_ns,
        hh.home_id, c.source AS track_class, c.proc_key,
        c.os_pid AS key1, c.os_tid AS key2, 0 AS key3,
        host_thread_track_suffix(c.os_tid, tl.thread_name)
            AS track_base_name,
        c.proc_key AS owner_proc_key, c.os_pid, c.os_tid, TRUE AS is_primary,
        c.return_value,
        -- members without a value are left out ({} for cuDNN/cuBLAS)
        '{' || ltrim(coalesce(',"returnValue":'
                || CAST(c.return_value AS VARCHAR), '')
            || CASE WHEN c.nesting_level > 0 THEN ',"nestingLevel":'
                || CAST(c.nesting_level AS VARCHAR) ELSE '' END, ',')
            || '}' AS args_json
    FROM stg_cpu_calls AS c
    JOIN host_homes AS hh ON hh.proc_key = c.proc_key
    LEFT JOIN thread_label AS tl ON tl.global_tid = c.global_tid
),
-- Thread states from the scheduling events, on the thread's Thread State
-- track, once, under the host home of its process.
thread_state AS (
    SELECT
        'thread_state' AS cat, 'X' AS ph, st.state AS name, st.start_ns,
        st.end_ns, hh.home_id, 'thread_state' AS track_class, st.proc_key,
        st.os_pid AS key1, st.os_tid AS key2, 0 AS key3,
        host_thread_track_suffix(st.os_tid, tl.thread_name)
            AS track_base_name,
        st.proc_key AS owner_proc_key, st.os_pid, st.os_tid,
        TRUE AS is_primary,
        '{' || concat_ws(',',
            CASE WHEN st.is_running THEN '"cpu":' ELSE '"previousCpu":' END
                || CAST(st.cpu AS VARCHAR),
            '"threadState":' || to_json(st.thread_state)) || '}' AS args_json
    FROM int_thread_states AS st
    JOIN host_homes AS hh ON hh.proc_key = st.proc_key
    LEFT JOIN thread_label AS tl ON tl.global_tid = st.global_tid
),
-- Every column a branch may set, typed once (BY NAME fills the rest with
-- NULL of these types).
typed AS (
    SELECT
        NULL::VARCHAR AS cat, NULL::VARCHAR AS ph, NULL::VARCHAR AS name,
        NULL::BIGINT AS start_ns, NULL::BIGINT AS end_ns,
        NULL::BIGINT AS home_id, NULL::INTEGER AS class_order,
        NULL::BIGINT AS proc_key, NULL::BIGINT AS key1, NULL::BIGINT AS key2,
        NULL::BIGINT AS key3, NULL::VARCHAR AS track_base_name,
        NULL::BIGINT AS op_id, NULL::BOOLEAN AS is_projection,
        NULL::BOOLEAN AS is_primary,
        NULL::BIGINT AS call_id,
        NULL::BIGINT AS nvtx_id, NULL::BIGINT AS linked_call_id,
        NULL::BIGINT AS device_id, NULL::BIGINT AS owner_proc_key,
        NULL::BIGINT AS os_pid, NULL::BIGINT AS os_tid,
        NULL::BIGINT AS context_id, NULL::BIGINT AS stream_id,
        NULL::BIGINT AS correlation_id, NULL::VARCHAR AS copy_kind_label,
        NULL::BIGINT AS bytes, NULL::VARCHAR AS args_json,
        NULL::VARCHAR AS api_full_name, NULL::BIGINT AS event_class,
        NULL::BIGINT AS return_value,
        NULL::BIGINT AS nest_seq, NULL::VARCHAR AS track_class
    WHERE FALSE
),
all_slices AS (
    SELECT * FROM typed
    UNION ALL BY NAME SELECT * FROM gpu_executed
    UNION ALL BY NAME SELECT * FROM gpu_projected
    UNION ALL BY NAME SELECT * FROM gpu_sync
    UNION ALL BY NAME SELECT * FROM cuda_event
    UNION ALL BY NAME SELECT * FROM api
    UNION ALL BY NAME SELECT * FROM nvtx_thread
    UNION ALL BY NAME SELECT * FROM nvtx_kernel
    UNION ALL BY NAME SELECT * FROM cpu_calls
    UNION ALL BY NAME SELECT * FROM thread_state
),
-- The track class of each slice (track_classes, looked up in a map, not
-- joined: slice_id numbers the rows in this order): the class order, the
-- name before the branch's suffix, the per-thread kind in key3, the rule.
classed AS (
    SELECT
        * EXCLUDE (cls) REPLACE (
            cls.class_order AS class_order,
            key3 + coalesce(cls.thread_kind, 0) * 4294967296 AS key3,
            cls.track_name || track_base_name AS track_base_name),
        -- the track's rule applies to the slices it is about: X slices for
        -- 'disjoint', B slices and X slices longer than 0 ns for 'nest'
        -- (the only X slices on the NVTX Kernel tracks are zero-length)
        CASE
            WHEN ph = 'X' AND cls.lane_rule = 'disjoint' THEN 'disjoint'
            WHEN cls.lane_rule = 'nest'
                AND (ph = 'B' OR (ph = 'X' AND end_ns > start_ns))
                THEN 'nest'
        END AS lane_rule
    FROM (
        SELECT *,
            (SELECT map(list(track_class), list(tc)) FROM track_classes AS tc)[
                track_class] AS cls
        FROM all_slices
    )
)
SELECT
    row_number() OVER () AS slice_id,
    *,
    lane_rule IS NOT NULL AS needs_lanes,
    -- One key for the track identity, so later stages partition and join on
    -- one column (40_int_tracks.sql checks that it is unique per identity).
    hash(home_id, class_order, proc_key, key1, key2, key3) AS track_key
FROM classed;

RESET disabled_optimizers;

COMMENT ON TABLE int_slices IS 'Every slice of the trace, on its base track (before lanes).';
COMMENT ON COLUMN int_slices.slice_id IS 'Slice id (int_slices.slice_id), unique in the trace.';
COMMENT ON COLUMN int_slices.cat IS 'Category (JSON cat).';
COMMENT ON COLUMN int_slices.ph IS 'JSON phase: X complete, B begin/end pair, b async begin/end pair, i instant.';
COMMENT ON COLUMN int_slices.name IS 'Name drawn on the slice.';
COMMENT ON COLUMN int_slices.start_ns IS 'Start, UTC-epoch ns (Nsight''s clock).';
COMMENT ON COLUMN int_slices.end_ns IS 'End, UTC-epoch ns (>= start_ns).';
COMMENT ON COLUMN int_slices.home_id IS 'The home the slice is drawn under (int_homes.home_id).';
COMMENT ON COLUMN int_slices.class_order IS 'Track class order under the home (track_classes.class_order).';
COMMENT ON COLUMN int_slices.proc_key IS 'Process part of the track identity (0 on device-level tracks).';
COMMENT ON COLUMN int_slices.key1 IS 'Track identity key 1: the OS pid on stream and thread tracks, else 0.';
COMMENT ON COLUMN int_slices.key2 IS 'Track identity key 2: the context on stream tracks, the OS tid on thread tracks, else 0.';
COMMENT ON COLUMN int_slices.key3 IS 'Track identity key 3: the stream on stream tracks (2^32 for CUDA Sync), thread_kind * 2^32 + domain rank on thread tracks, else 0.';
COMMENT ON COLUMN int_slices.track_base_name IS 'Track name before the lane suffix (''#2'') and continuation level.';
COMMENT ON COLUMN int_slices.op_id IS 'GPU operation of a GPU slice.';
COMMENT ON COLUMN int_slices.is_projection IS 'GPU operation slices: TRUE for the device-level copy (Core/PCIe/D2D), FALSE for the slice as executed.';
COMMENT ON COLUMN int_slices.is_primary IS 'TRUE on exactly one slice per drawn source row (count each event once over WHERE is_primary).';
COMMENT ON COLUMN int_slices.call_id IS 'API call of a cuda_api / cuda_sync slice.';
COMMENT ON COLUMN int_slices.nvtx_id IS 'NVTX row of an nvtx / nvtx_kernel slice.';
COMMENT ON COLUMN int_slices.linked_call_id IS 'gpu_sync slices: the call_id of the API call the record belongs to.';
COMMENT ON COLUMN int_slices.device_id IS 'Device of a GPU or device-projected slice.';
COMMENT ON COLUMN int_slices.owner_proc_key IS 'proc_key of the process the slice belongs to.';
COMMENT ON COLUMN int_slices.os_pid IS 'OS process id.';
COMMENT ON COLUMN int_slices.os_tid IS 'OS thread id.';
COMMENT ON COLUMN int_slices.context_id IS 'CUDA context id (NULL read as 0).';
COMMENT ON COLUMN int_slices.stream_id IS 'CUDA stream id (NULL read as 0).';
COMMENT ON COLUMN int_slices.correlation_id IS 'CUPTI correlationId: links API calls and GPU rows within one process (proc_key).';
COMMENT ON COLUMN int_slices.copy_kind_label IS 'Copy kind label (ENUM_CUDA_MEMCPY_OPER, else copy_kinds.label).';
COMMENT ON COLUMN int_slices.bytes IS 'Bytes of a memcpy or memset slice.';
COMMENT ON COLUMN int_slices.args_json IS 'JSON args object text (NULL on GPU and API slices: built at output from int_gpu_op_args / cuda_api_args_json).';
COMMENT ON COLUMN int_slices.api_full_name IS 'API slices: the exported API name (args.name).';
COMMENT ON COLUMN int_slices.event_class IS 'API slices: CUPTI eventClass (0 runtime, 1 driver).';
COMMENT ON COLUMN int_slices.return_value IS 'API slices: returnValue (cudaError_t / CUresult; nonzero = failed), args.returnValue; OS runtime calls: OSRT_API.returnValue (the function''s return).';
COMMENT ON COLUMN int_slices.nest_seq IS 'Tie-break of B/E stacks between slices with equal intervals (CPU order of NVTX ranges); NULL elsewhere.';
COMMENT ON COLUMN int_slices.track_class IS 'track_classes.track_class of the slice''s track.';
COMMENT ON COLUMN int_slices.lane_rule IS 'How overlapping slices of the track go to lanes: disjoint (X), nest (B), NULL (never split).';
COMMENT ON COLUMN int_slices.needs_lanes IS 'lane_rule IS NOT NULL.';
COMMENT ON COLUMN int_slices.track_key IS '64-bit hash of the track identity (home_id, class_order, proc_key, key1, key2, key3).';
