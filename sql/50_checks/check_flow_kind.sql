-- check_flow_kind: flows that join the wrong kinds of slice, or several
-- flows of one kind arriving at one slice.
--
-- Reads: _chk_flow_ends, chk_events, flow_kinds.
-- In convert: no (check_kernel_launch_flows and check_flow_targets cover it on the pipeline's ids; nsys-duck validate runs it on the written file,
-- and it can be queried in NAME.duckdb).
-- Invariants: zero rows when each end of a flow whose cat is a flow_kinds
-- flow_cat that lies in an X lies in an X of a slice_cat flow_kinds allows
-- for that end, no X receives two f of one such cat, and there are as
-- many launch as launch_core flows (s events). One row per offending end,
-- per over-fed slice, and one for unequal launch counts.

CREATE OR REPLACE VIEW check_flow_kind AS
WITH kinds AS (
    SELECT flow_cat, flow_end, list(slice_cat ORDER BY slice_cat) AS slice_cats
    FROM flow_kinds GROUP BY ALL
), ends AS (
    SELECT e.*, k.slice_cats
    FROM _chk_flow_ends AS e
    JOIN kinds AS k ON k.flow_cat = e.cat AND k.flow_end = e.ph
    WHERE e.slice_is_x
)
SELECT cat || ' flow ' || ph || ' at ' || _chk_us(ts_ns) || ' on pid ' || CAST(pid AS VARCHAR)
        || ' tid ' || CAST(tid AS VARCHAR) || ' lies in an X of cat ' || _chk_q(slice_cat)
        || ', expected ' || array_to_string(slice_cats, ' or ') AS message,
    seq
FROM ends
WHERE NOT coalesce(list_contains(slice_cats, slice_cat), FALSE)
UNION ALL
SELECT 'one ' || _chk_q(any_value(slice_cat)) || ' X on pid ' || CAST(pid AS VARCHAR) || ' tid '
        || CAST(tid AS VARCHAR) || ' receives ' || count(*) || ' ' || _chk_q(cat)
        || ' flows (at most one)',
    max(seq)
FROM ends
WHERE ph = 'f'
GROUP BY pid, tid, slice_seq, cat
HAVING count(*) > 1
UNION ALL
SELECT n_launch || ' launch flows but ' || n_core || ' launch_core flows (must be equal)', NULL
FROM (SELECT count(*) FILTER (WHERE cat = 'launch') AS n_launch,
             count(*) FILTER (WHERE cat = 'launch_core') AS n_core
      FROM chk_events WHERE ph = 's')
WHERE n_launch <> n_core;

COMMENT ON VIEW check_flow_kind IS 'Rule flow_kind: flows of a flow_kinds cat start and end in X slices of the cats flow_kinds lists; no slice receives two flows of one such cat; #launch == #launch_core (output-contract.md, Flows; sql/05_domain/flow_kinds.sql).';
COMMENT ON COLUMN check_flow_kind.message IS 'What is wrong, one sentence (times in µs).';
COMMENT ON COLUMN check_flow_kind.seq IS 'The offending flow event (NULL for the launch count).';
