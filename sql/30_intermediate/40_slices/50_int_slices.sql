-- int_slices: every slice of the trace, on its base track (before lanes).
--
-- Reads: _int_slices_cpu_calls, _int_slices_cuda_api,
-- _int_slices_cuda_events, _int_slices_gpu_op_projections,
-- _int_slices_gpu_ops, _int_slices_gpu_syncs, _int_slices_nvtx,
-- _int_slices_nvtx_kernel, _int_slices_thread_states, track_classes.
-- Each kind of slice is one view, in its own file before this one (its
-- header gives the rows it makes, their args and ph); this file unions
-- them, looks up their track class and numbers them.
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
-- The kinds are combined BY NAME: a column a kind's view does not name is
-- NULL. slice_id numbers the rows in the order of the union below (GPU
-- operations as executed, their projections, GPU syncs, CUDA events, API
-- calls, NVTX, projected NVTX, CPU calls, thread states), each kind's rows
-- in its view's order.
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
-- args_json: the args object text of the kinds that store it, each built
-- by a macro of 00_macros (gpu_sync_args_json, cuda_event_args_json,
-- nvtx_args_json, cpu_call_args_json, thread_state_args_json; projected
-- NVTX ranges json_object), see each kind's view. GPU slices (both copies
-- of an operation) carry args_json NULL here: their args live once per
-- operation in int_gpu_op_args and are joined in when the JSON is written,
-- so the big argument strings are not stored twice. CUDA API slices too:
-- their args are built at output (cuda_api_args_json), since a text unique
-- to each row costs more to store than to build.
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
-- Role: slices (none: the run stops with one sentence)

-- Join order as written: every JOIN's right side is the small one (homes,
-- domains, categories, thread names). DuckDB 2.0's join-order optimizer,
-- misled by the estimates of the views over the NVTX rows
-- (_int_slices_nvtx, _int_slices_nvtx_kernel), built a hash table on the
-- 16M NVTX rows of a 16M-range capture and ran out of memory at 2GB; as
-- written it completes (and was faster on the dev reports). The views are
-- planned here, inlined into this statement, so the override is set around
-- it (it does not apply when a view of its own is queried alone).
SET disabled_optimizers = 'join_order,build_side_probe_side';

CREATE OR REPLACE TABLE int_slices AS
-- Every column a kind may set, typed once (BY NAME fills the rest with
-- NULL of these types); this gives the column order.
WITH typed AS (
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
    UNION ALL BY NAME SELECT * FROM _int_slices_gpu_ops
    UNION ALL BY NAME SELECT * FROM _int_slices_gpu_op_projections
    UNION ALL BY NAME SELECT * FROM _int_slices_gpu_syncs
    UNION ALL BY NAME SELECT * FROM _int_slices_cuda_events
    UNION ALL BY NAME SELECT * FROM _int_slices_cuda_api
    UNION ALL BY NAME SELECT * FROM _int_slices_nvtx
    UNION ALL BY NAME SELECT * FROM _int_slices_nvtx_kernel
    UNION ALL BY NAME SELECT * FROM _int_slices_cpu_calls
    UNION ALL BY NAME SELECT * FROM _int_slices_thread_states
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
