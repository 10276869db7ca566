-- int_slices_on_tracks: every slice with the JSON pid, tid and full track
-- name of the track it is drawn on.
--
-- Reads: int_slices_placed, int_tracks.
-- Invariants: one row per slice of int_slices.
-- Merge: renumbered

CREATE OR REPLACE VIEW int_slices_on_tracks AS
SELECT s.*, t.json_pid, t.json_tid, t.track_name
FROM int_slices_placed AS s
JOIN int_tracks AS t
    ON t.track_key = s.track_key AND t.lane = s.lane AND t.level = s.level;

COMMENT ON VIEW int_slices_on_tracks IS 'Every slice with the JSON pid, tid and full track name of the track it is drawn on.';
COMMENT ON COLUMN int_slices_on_tracks.slice_id IS 'Slice id (int_slices.slice_id), unique in the trace.';
COMMENT ON COLUMN int_slices_on_tracks.cat IS 'Category (JSON cat).';
COMMENT ON COLUMN int_slices_on_tracks.ph IS 'JSON phase: X complete, B begin/end pair, b async begin/end pair, i instant.';
COMMENT ON COLUMN int_slices_on_tracks.name IS 'Name drawn on the slice.';
COMMENT ON COLUMN int_slices_on_tracks.start_ns IS 'Start, UTC-epoch ns (Nsight''s clock).';
COMMENT ON COLUMN int_slices_on_tracks.end_ns IS 'End, UTC-epoch ns (>= start_ns).';
COMMENT ON COLUMN int_slices_on_tracks.home_id IS 'The home (int_homes.home_id): the device id, or -1 - proc_key for a host process.';
COMMENT ON COLUMN int_slices_on_tracks.class_order IS 'Track class order under the home (track_classes.class_order).';
COMMENT ON COLUMN int_slices_on_tracks.proc_key IS 'Process key globalPid/globalTid >> 24 (PID, VM and hardware id): the scope of correlationId.';
COMMENT ON COLUMN int_slices_on_tracks.key1 IS 'Track identity key 1: the OS pid on stream and thread tracks, else 0.';
COMMENT ON COLUMN int_slices_on_tracks.key2 IS 'Track identity key 2: the context on stream tracks, the OS tid on thread tracks, else 0.';
COMMENT ON COLUMN int_slices_on_tracks.key3 IS 'Track identity key 3: the stream on stream tracks (2^32 for CUDA Sync), thread_kind * 2^32 + domain rank on thread tracks, else 0.';
COMMENT ON COLUMN int_slices_on_tracks.track_base_name IS 'Track name before the lane suffix (''#2'') and continuation level.';
COMMENT ON COLUMN int_slices_on_tracks.op_id IS 'GPU operation id (int_gpu_ops.op_id).';
COMMENT ON COLUMN int_slices_on_tracks.is_projection IS 'GPU operation slices: TRUE for the device-level copy (Core/PCIe/D2D), FALSE for the slice as executed.';
COMMENT ON COLUMN int_slices_on_tracks.is_primary IS 'TRUE on exactly one slice per drawn source row (count each event once over WHERE is_primary).';
COMMENT ON COLUMN int_slices_on_tracks.call_id IS 'API call id (int_runtime_calls.call_id).';
COMMENT ON COLUMN int_slices_on_tracks.nvtx_id IS 'NVTX row id (stg_nvtx_events.nvtx_id).';
COMMENT ON COLUMN int_slices_on_tracks.linked_call_id IS 'gpu_sync slices: the call_id of the API call the record belongs to.';
COMMENT ON COLUMN int_slices_on_tracks.device_id IS 'CUDA device id.';
COMMENT ON COLUMN int_slices_on_tracks.owner_proc_key IS 'proc_key of the process the slice belongs to.';
COMMENT ON COLUMN int_slices_on_tracks.os_pid IS 'OS process id.';
COMMENT ON COLUMN int_slices_on_tracks.os_tid IS 'OS thread id.';
COMMENT ON COLUMN int_slices_on_tracks.context_id IS 'CUDA context id (NULL read as 0).';
COMMENT ON COLUMN int_slices_on_tracks.stream_id IS 'CUDA stream id (NULL read as 0).';
COMMENT ON COLUMN int_slices_on_tracks.correlation_id IS 'CUPTI correlationId: links API calls and GPU rows within one process (proc_key).';
COMMENT ON COLUMN int_slices_on_tracks.copy_kind_label IS 'Copy kind label (ENUM_CUDA_MEMCPY_OPER, else copy_kinds.label).';
COMMENT ON COLUMN int_slices_on_tracks.bytes IS 'Bytes copied or set.';
COMMENT ON COLUMN int_slices_on_tracks.args_json IS 'JSON args object text (NULL on GPU and API slices: built at output).';
COMMENT ON COLUMN int_slices_on_tracks.api_full_name IS 'API name as exported (with its CUPTI callback version, e.g. cudaLaunchKernel_v7000).';
COMMENT ON COLUMN int_slices_on_tracks.event_class IS 'CUPTI eventClass: 0 runtime, 1 driver.';
COMMENT ON COLUMN int_slices_on_tracks.return_value IS 'API slices: returnValue (cudaError_t / CUresult; nonzero = failed), args.returnValue.';
COMMENT ON COLUMN int_slices_on_tracks.nest_seq IS 'Tie-break of B/E stacks between slices with equal intervals (CPU order of NVTX ranges); NULL elsewhere.';
COMMENT ON COLUMN int_slices_on_tracks.track_class IS 'track_classes.track_class of the slice''s track.';
COMMENT ON COLUMN int_slices_on_tracks.lane_rule IS 'How overlapping slices of the track go to lanes: disjoint (X), nest (B), NULL (never split).';
COMMENT ON COLUMN int_slices_on_tracks.needs_lanes IS 'lane_rule IS NOT NULL.';
COMMENT ON COLUMN int_slices_on_tracks.track_key IS '64-bit hash of the track identity (home_id, class_order, proc_key, key1, key2, key3).';
COMMENT ON COLUMN int_slices_on_tracks.lane IS 'Lane of the track (1 = the track itself, 2.. = ''NAME #2''...).';
COMMENT ON COLUMN int_slices_on_tracks.level IS 'Continuation level (0 = the track itself; k >= 1 = the track for stack depths 500k+1..500(k+1)).';
COMMENT ON COLUMN int_slices_on_tracks.json_pid IS 'JSON pid of the home (1..N in sort order).';
COMMENT ON COLUMN int_slices_on_tracks.json_tid IS 'JSON tid of the track (1..N in sort order, unique in the trace).';
COMMENT ON COLUMN int_slices_on_tracks.track_name IS 'Full track name (thread_name metadata of the JSON).';
