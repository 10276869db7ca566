-- What perfetto_pftrace.py compares between a protobuf and a JSON import of
-- one conversion: one result per table, each row tagged by its table (t).
-- A slice's key: ts relative to the trace's first slice, dur, name, and the
-- tid (thread track) or pid (process track) its track belongs to.
CREATE PERFETTO TABLE _keyed AS
SELECT
    s.id,
    s.ts - (SELECT min(ts) FROM slice) AS rel_ts,
    s.dur,
    s.name,
    coalesce(s.category, '') AS cat,
    coalesce(th.tid, p.pid, -1) AS owner,
    t.type AS track_type,
    s.arg_set_id
FROM slice AS s
JOIN track AS t ON t.id = s.track_id
LEFT JOIN thread_track AS tt ON tt.id = s.track_id
LEFT JOIN thread AS th ON th.utid = tt.utid
LEFT JOIN process_track AS pt ON pt.id = s.track_id
LEFT JOIN process AS p ON p.upid = pt.upid;

SELECT 'stat' AS t, name, severity, value FROM stats
WHERE value != 0 AND severity IN ('error', 'data_loss');

SELECT 'slice' AS t, rel_ts, dur, name, cat, owner, track_type FROM _keyed;

SELECT 'flow' AS t,
    o.rel_ts || '/' || o.name || '/' || o.owner AS slice_out,
    i.rel_ts || '/' || i.name || '/' || i.owner AS slice_in
FROM flow AS f
JOIN _keyed AS o ON o.id = f.slice_out
JOIN _keyed AS i ON i.id = f.slice_in;

SELECT 'thread' AS t, tid, coalesce(name, '') AS name FROM thread WHERE tid != 0;

SELECT 'process' AS t, pid, coalesce(name, '') AS name FROM process WHERE pid != 0;

SELECT 'arg' AS t,
    k.rel_ts || '/' || k.dur || '/' || k.name || '/' || k.owner AS slice_key,
    k.cat,
    a.key,
    coalesce(a.display_value, '') AS value
FROM _keyed AS k
JOIN args AS a USING (arg_set_id);
