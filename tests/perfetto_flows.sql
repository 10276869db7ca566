-- What tests/perfetto_flows.py asks Perfetto's importer: every row of its
-- flow table, both slices named by what the JSON gave them (thread pid and
-- tid, ts and dur in ns from the trace's base, name as hex, correlationId),
-- and the flow's cat. Run by hand:
--   trace_processor_shell -q tests/perfetto_flows.sql T.perfetto.json.gz
-- ONE cell (the shell does not escape quotes inside values): a JSON array
-- of 13-element rows, integers and hex only besides cat. tests/
-- perfetto_import.sql runs it too (its @flows line), so one import of a
-- trace answers both.
SELECT json_group_array(json_array(
    extract_arg(f.arg_set_id, 'cat'),
    po.pid, tho.tid, so.ts, so.dur, hex(so.name),
    extract_arg(so.arg_set_id, 'args.correlationId'),
    pi.pid, thi.tid, si.ts, si.dur, hex(si.name),
    extract_arg(si.arg_set_id, 'args.correlationId'))) AS nsys_duck_flows
FROM flow AS f
JOIN slice AS so ON so.id = f.slice_out
JOIN slice AS si ON si.id = f.slice_in
LEFT JOIN thread_track AS tto ON tto.id = so.track_id
LEFT JOIN thread AS tho ON tho.utid = tto.utid
LEFT JOIN process AS po ON po.upid = tho.upid
LEFT JOIN thread_track AS tti ON tti.id = si.track_id
LEFT JOIN thread AS thi ON thi.utid = tti.utid
LEFT JOIN process AS pi ON pi.upid = thi.upid;
