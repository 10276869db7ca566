-- sync_types: the kinds of CUPTI synchronization record
-- (CUpti_ActivitySynchronizationType), told apart by which ids CUPTI
-- filled in, with the label Nsight exports for each.
--
-- Reads: nothing (a domain table: stg_gpu_syncs reads it).
-- Invariants: one row per (has_stream, has_event) combination, so every
-- record gets exactly one kind; sync_name is the gpu_sync slice's name.
-- Why not the exported syncType number: it disagrees with its own enum
-- table in every export seen (stg_gpu_syncs.sql).

CREATE OR REPLACE TABLE sync_types AS
SELECT * FROM (VALUES
    (1, FALSE, TRUE, 'Event sync'),
    (2, TRUE, TRUE, 'Stream wait sync'),
    (3, TRUE, FALSE, 'Stream sync'),
    (4, FALSE, FALSE, 'Context sync')
) AS t (sync_type, has_stream, has_event, sync_name);

COMMENT ON TABLE sync_types IS 'Domain table: the CUPTI synchronization kinds, told apart by which of stream and event id the record has, and the name drawn for each.';
COMMENT ON COLUMN sync_types.sync_type IS 'CUpti_ActivitySynchronizationType: 1 event, 2 stream wait event, 3 stream, 4 context synchronize.';
COMMENT ON COLUMN sync_types.has_stream IS 'The record has a stream id (CUPTI sets it for stream synchronize and stream wait event).';
COMMENT ON COLUMN sync_types.has_event IS 'The record has an event id (event synchronize and stream wait event).';
COMMENT ON COLUMN sync_types.sync_name IS 'Name of the gpu_sync slice (ENUM_CUPTI_SYNC_TYPE''s labels).';
