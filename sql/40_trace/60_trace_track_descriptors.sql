-- trace_track_descriptors: the tracks of the protobuf trace (NAME.pftrace),
-- one TrackDescriptor each: a process per home of the JSON trace, a thread
-- per JSON track, named and ordered as the JSON's metadata names them.
--
-- Reads: int_homes, int_tracks, trace_selection, trace_kept_pids.
-- Invariants: the homes and tracks the JSON holds (trace_keeps: under
-- --devices the kept homes, never cut by --window). uuid is
-- 2 * json_pid + 1 for a process and 2 * json_tid for a thread (json_tid is
-- unique in the trace), so TrackEvents name their track in one or two
-- bytes; a thread's parent_uuid is its home's. pid/tid are the JSON's;
-- sort_index is the JSON's process_sort_index / thread_sort_index (json_pid,
-- json_tid), written as legacy_sort_index and as the sibling_order_rank of
-- the process's explicit child ordering (Perfetto's TrackDescriptor).
-- Role: pftrace-tracks
-- Columns: uuid BIGINT, parent_uuid BIGINT, pid BIGINT, tid BIGINT,
--   name VARCHAR, sort_index BIGINT
-- Python reads: ORDER BY tid NULLS FIRST, pid

CREATE OR REPLACE VIEW trace_track_descriptors AS
SELECT
    2 * h.json_pid + 1 AS uuid,
    NULL::BIGINT AS parent_uuid,
    h.json_pid AS pid,
    NULL::BIGINT AS tid,
    h.home_name AS name,
    h.json_pid AS sort_index
FROM int_homes AS h
WHERE trace_keeps(h.json_pid, h.json_pid, NULL, NULL)
UNION ALL
SELECT
    2 * t.json_tid,
    2 * t.json_pid + 1,
    t.json_pid,
    t.json_tid,
    t.track_name,
    t.json_tid
FROM int_tracks AS t
WHERE trace_keeps(t.json_pid, t.json_pid, NULL, NULL);

COMMENT ON VIEW trace_track_descriptors IS 'The tracks of the protobuf trace (NAME.pftrace), one TrackDescriptor each: a process per home of the JSON trace, a thread per JSON track, named and ordered as the JSON''s metadata names them.';
COMMENT ON COLUMN trace_track_descriptors.uuid IS 'TrackDescriptor.uuid: 2 * json_pid + 1 for a process, 2 * json_tid for a thread.';
COMMENT ON COLUMN trace_track_descriptors.parent_uuid IS 'A thread''s process (its home''s uuid); NULL for a process.';
COMMENT ON COLUMN trace_track_descriptors.pid IS 'JSON pid (ProcessDescriptor / ThreadDescriptor pid).';
COMMENT ON COLUMN trace_track_descriptors.tid IS 'JSON tid (ThreadDescriptor tid); NULL for a process.';
COMMENT ON COLUMN trace_track_descriptors.name IS 'Process or thread name, as the JSON''s process_name / thread_name.';
COMMENT ON COLUMN trace_track_descriptors.sort_index IS 'The JSON''s process_sort_index / thread_sort_index: legacy_sort_index and sibling_order_rank.';
