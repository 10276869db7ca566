-- check_merge_ids: reports that lost or gained slices in the merge, and
-- slice or flow ids used twice across reports (zero rows when the merged
-- trace holds every report's slices under ids of its own).
--
-- Reads: merge_reports, int_slices_on_tracks, int_flows.
-- Invariants: each report's merged slices are as many as its own
-- conversion drew (merge_reports.slices); slice_id and flow_id are unique
-- in the merged trace (10_merge_reports' offsets). JSON pids and tids are
-- checked by check_tracks, flow ends by check_flow_targets.

CREATE OR REPLACE VIEW check_merge_ids AS
WITH merged AS (
    SELECT report, count(*) AS slices
    FROM int_slices_on_tracks
    GROUP BY report
)

SELECT
    'report ' || m.report || ' has ' || CAST(coalesce(merged.slices, 0) AS VARCHAR)
    || ' slices in the merge, its conversion has ' || CAST(m.slices AS VARCHAR)
    AS message,
    NULL::BIGINT AS seq
FROM merge_reports AS m
LEFT JOIN merged ON merged.report = m.report
WHERE coalesce(merged.slices, 0) <> m.slices
UNION ALL
SELECT
    'slice id ' || CAST(slice_id AS VARCHAR) || ' is used by '
    || CAST(count(*) AS VARCHAR) || ' slices (reports '
    || string_agg(DISTINCT report, ', ') || ')',
    -8 * slice_id - 5
FROM int_slices_on_tracks
GROUP BY slice_id
HAVING count(*) > 1
UNION ALL
SELECT
    'flow id ' || CAST(flow_id AS VARCHAR) || ' is used by '
    || CAST(count(*) AS VARCHAR) || ' flows (reports '
    || string_agg(DISTINCT report, ', ') || ')',
    NULL
FROM int_flows
GROUP BY flow_id
HAVING count(*) > 1;

COMMENT ON VIEW check_merge_ids IS 'Contract check of a merge: reports whose slice count changed in the merge, slice or flow ids used twice (zero rows when it holds).';
