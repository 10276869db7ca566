-- What tests/perfetto_flows.py asks Perfetto's importer: every row of its
-- flow table, both slices named by what the JSON gave them (thread pid and
-- tid, ts and dur in ns from the trace's base, name as hex, correlationId),
-- and the flow's cat. Run by hand:
--   trace_processor_shell -q tests/perfetto_flows.sql T.perfetto.json.gz
-- One line per flow, integers and hex only (the shell does not escape quotes
-- inside values).
SELECT
    extract_arg(f.arg_set_id, 'cat') AS cat,
    po.pid AS out_pid, tho.tid AS out_tid, so.ts AS out_ts, so.dur AS out_dur,
    hex(so.name) AS out_name,
    extract_arg(so.arg_set_id, 'args.correlationId') AS out_corr,
    pi.pid AS in_pid, thi.tid AS in_tid, si.ts AS in_ts, si.dur AS in_dur,
    hex(si.name) AS in_name,
    extract_arg(si.arg_set_id, 'args.correlationId') AS in_corr
FROM flow AS f
JOIN slice AS so ON so.id = f.slice_out
JOIN slice AS si ON si.id = f.slice_in
LEFT JOIN thread_track AS tto ON tto.id = so.track_id
LEFT JOIN thread AS tho ON tho.utid = tto.utid
LEFT JOIN process AS po ON po.upid = tho.upid
LEFT JOIN thread_track AS tti ON tti.id = si.track_id
LEFT JOIN thread AS thi ON thi.utid = tti.utid
LEFT JOIN process AS pi ON pi.upid = thi.upid;
