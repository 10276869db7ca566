-- What tests/perfetto_import.py asks Perfetto's importer about one trace.
-- Run by hand:  trace_processor_shell -q tests/perfetto_import.sql T.perfetto.json.gz
-- The shell prints each result as a quoted header line and quoted values
-- without escaping inner quotes, so each statement returns ONE cell holding
-- a JSON document (one line: json_object escapes newlines and quotes).

-- 1. stats with errors or data loss (perfetto-json.md section 5), slice count
--    (and per category, to say which slices a mismatch is about), flow count
SELECT json_object(
    'stats', json((
        SELECT json_group_array(json_object(
            'name', name, 'idx', idx, 'severity', severity, 'source', source,
            'value', value, 'description', description))
        FROM stats
        WHERE value != 0 AND severity IN ('error', 'data_loss'))),
    'slices', (SELECT count(*) FROM slice),
    'slices_by_cat', json((
        SELECT json_group_object(cat, n)
        FROM (SELECT coalesce(category, '') AS cat, count(*) AS n
              FROM slice GROUP BY 1))),
    'flows', (SELECT count(*) FROM flow),
    -- tracks that reach the nesting limit (depths 0..511; deeper slices are
    -- dropped with slice_max_depth_exceeded), named as in the UI
    'deepest', json((
        SELECT json_group_array(json_object('track', track, 'max_depth', d, 'slices', n))
        FROM (SELECT coalesce(th.name, t.name, 'track ' || t.id) AS track,
                     max(s.depth) AS d, count(*) AS n
              FROM slice s JOIN track t ON t.id = s.track_id
              LEFT JOIN thread_track tt ON tt.id = s.track_id
              LEFT JOIN thread th ON th.utid = tt.utid
              GROUP BY s.track_id HAVING max(s.depth) >= 511
              ORDER BY n DESC LIMIT 5)))
) AS nsys_duck_import;

-- every flow, slice by slice (tests/perfetto_flows.sql, put here by
-- perfetto_import.py)
-- @flows

-- 2. the first import-log rows of each error/data_loss stat, with their args
--    (ts is trace time in ns = the JSON ts in µs * 1000). Kept last: a
--    version without _trace_import_logs fails here, after statement 1 printed.
SELECT json_group_array(json_object(
    'name', name, 'ts', ts, 'byte_offset', byte_offset,
    'args', json((SELECT json_group_object(key, display_value)
                  FROM args a WHERE a.arg_set_id = l.arg_set_id))))
    AS nsys_duck_logs
FROM (
    SELECT *, row_number() OVER (PARTITION BY name ORDER BY id) AS nth
    FROM _trace_import_logs
    WHERE severity IN ('error', 'data_loss')
) AS l
WHERE nth <= 3;
