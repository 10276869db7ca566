-- check_flow_targets: the flows Perfetto would not draw from the API slice
-- to the GPU slice int_flows meant them for (zero rows when every drawn
-- flow joins the two slices it means, pointing CPU -> GPU).
--
-- Reads: int_flows, int_slices_on_tracks, int_slices_placed, int_tracks,
-- int_slices, trace_base.
-- Invariants: the rule (output-contract.md, Events: what counts is
-- Perfetto's flow table; perfetto-json.md 2, 3.2, 3.3), per end and per
-- flow:
-- * the 's' of each drawn flow lies inside the CUDA API slice int_flows
--   meant (api_slice_id) and the 'f' ("bp":"e") inside the GPU slice it
--   meant (gpu_slice_id), on that slice's (pid, tid): start <= ts < end,
--   after the start when the slice is longer than 1 ns, ts = start for a
--   zero-length slice;
-- * Perfetto binds the end to that slice. It binds an end to the top of
--   its thread's stack, and pops a slice from the stack only when a later
--   one starts, even when it ended long before; X slices of one ts are read
--   longest first, flow events after them. So the end goes to the slice of
--   its track that started last at or before ts (at equal starts the
--   shortest): no other slice may start after the target and at or before
--   ts, nor with the target's start and no longer than it (one as long is
--   read in file order). This is how a 0-ns slice at the start of a longer
--   one took the longer one's flow;
-- * Perfetto draws the flow from the API slice: it orients every flow from
--   the slice that starts first (FlowTracker::EndAt; at equal starts, from
--   the s end's), so the GPU slice must not start before the API slice.
-- The rules that need no ids (each end in the innermost X slice of its
-- track, s.ts <= f.ts, one s and one f per id, the kinds of slice
-- flow_kinds allows) are the generic check_flow and check_flow_kind of
-- 50_checks/. seq: the flow event as chk_events numbers it (-8 x flow_id -
-- 6 for s, - 7 for f).

CREATE OR REPLACE VIEW check_flow_targets AS
WITH ends AS (
    -- both ends of each drawn flow, from one scan of int_flows
    SELECT
        flows.flow_id, flows.flow_cat, side.flow_end,
        CASE side.flow_end WHEN 's' THEN flows.s_pid ELSE flows.f_pid END
            AS pid,
        CASE side.flow_end WHEN 's' THEN flows.s_tid ELSE flows.f_tid END
            AS tid,
        CASE side.flow_end WHEN 's' THEN flows.s_ns ELSE flows.f_ns END
            AS ts_ns,
        CASE side.flow_end WHEN 's' THEN flows.api_slice_id
            ELSE flows.gpu_slice_id END AS target_id
    FROM int_flows AS flows
    CROSS JOIN (VALUES ('s'), ('f')) AS side (flow_end)
    WHERE flows.is_placeable
),

judged AS (
    SELECT
        ends.*,
        target.start_ns AS target_start_ns, target.end_ns AS target_end_ns,
        CASE
            WHEN target.slice_id IS NULL
                THEN 'names slice ' || CAST(ends.target_id AS VARCHAR)
                    || ', which is no X slice of the trace'
            WHEN (target.pid, target.tid) <> (ends.pid, ends.tid)
                THEN 'is not on the track (pid '
                    || CAST(target.pid AS VARCHAR) || ', tid '
                    || CAST(target.tid AS VARCHAR) || ') of its target'
            WHEN NOT (target.start_ns <= ends.ts_ns
                    AND (ends.ts_ns < target.end_ns
                        OR ends.ts_ns = target.end_ns
                            AND target.end_ns = target.start_ns)
                    AND NOT (target.end_ns - target.start_ns > 1
                        AND ends.ts_ns = target.start_ns))
                THEN 'lies outside its target'
        END AS problem
    FROM ends
    LEFT JOIN (
        SELECT
            slices.slice_id, slices.start_ns, slices.end_ns,
            tracks.json_pid AS pid, tracks.json_tid AS tid
        FROM int_slices_placed AS slices
        JOIN int_tracks AS tracks
            ON tracks.track_key = slices.track_key
            AND tracks.lane = slices.lane AND tracks.level = slices.level
        WHERE slices.ph = 'X'
    ) AS target ON target.slice_id = ends.target_id
),

x_slices AS NOT MATERIALIZED (
    -- what can take a flow end: the X slices and thread instants
    SELECT slice_id, json_tid AS tid, start_ns, end_ns
    FROM int_slices_on_tracks
    WHERE ph IN ('X', 'i')
),

near AS (
    SELECT * FROM judged
    WHERE problem IS NULL AND ts_ns - target_start_ns <= 1
),

far AS (
    SELECT * FROM judged
    WHERE problem IS NULL AND ts_ns - target_start_ns > 1
),

taken AS (
    -- the slices Perfetto pushes after the target and at or before ts: one
    -- of them, not the target, is on top of the stack when the end is read.
    -- With the target's start: those not longer than the target (X slices
    -- of one ts are read longest first, instants after them; one as long
    -- is read in file order); after it, any starting at or before ts.
    -- Flow ends lie at most 1 ns after their target's start (int_flows),
    -- found by an equi-join; the others by the slice starting last at or
    -- before ts (ASOF JOIN)
    SELECT ends.flow_id, ends.flow_end, taker.slice_id AS bound_id
    FROM (SELECT * FROM judged WHERE problem IS NULL) AS ends
    JOIN x_slices AS taker
        ON taker.tid = ends.tid AND taker.start_ns = ends.target_start_ns
    WHERE taker.slice_id <> ends.target_id
        AND taker.end_ns <= ends.target_end_ns
    UNION ALL
    SELECT near.flow_id, near.flow_end, taker.slice_id
    FROM near
    JOIN x_slices AS taker
        ON taker.tid = near.tid AND taker.start_ns = near.target_start_ns + 1
    WHERE taker.start_ns <= near.ts_ns
    UNION ALL
    SELECT far.flow_id, far.flow_end, taker.slice_id
    FROM far
    ASOF JOIN (
        SELECT * FROM x_slices WHERE tid IN (SELECT tid FROM far)
    ) AS taker
        ON taker.tid = far.tid AND taker.start_ns <= far.ts_ns
    WHERE taker.start_ns > far.target_start_ns
),

reversed AS (
    -- drawn flows whose GPU slice (the f end's) starts before their API
    -- slice (the s end's)
    SELECT
        flow_id,
        any_value(target_start_ns) FILTER (WHERE flow_end = 's')
            AS api_start_ns
    FROM judged
    GROUP BY flow_id
    HAVING any_value(target_start_ns) FILTER (WHERE flow_end = 'f')
        < any_value(target_start_ns) FILTER (WHERE flow_end = 's')
),

found AS (
    SELECT judged.* EXCLUDE (problem), judged.problem, NULL::BIGINT AS bound_id
    FROM judged
    WHERE judged.problem IS NOT NULL
    UNION ALL
    SELECT
        judged.* EXCLUDE (problem),
        'is bound by Perfetto to another slice (slice_id '
            || CAST(min(taken.bound_id) AS VARCHAR)
            || ', on its thread''s stack above the target), not to its target',
        min(taken.bound_id)
    FROM judged
    JOIN taken USING (flow_id, flow_end)
    GROUP BY ALL
    UNION ALL
    SELECT
        judged.* EXCLUDE (problem),
        'is drawn by Perfetto GPU -> CPU: its GPU slice starts before its '
            || 'API slice (at ' || _chk_us(reversed.api_start_ns
                - (SELECT base_ns FROM trace_base)) || ' µs)',
        NULL
    FROM judged
    JOIN reversed USING (flow_id)
    WHERE judged.flow_end = 'f'
)

SELECT
    'the ' || found.flow_end || ' end of ' || found.flow_cat || ' flow '
    || CAST(found.flow_id AS VARCHAR) || ' (pid '
    || CAST(found.pid AS VARCHAR) || ', tid ' || CAST(found.tid AS VARCHAR)
    || ', ts ' || _chk_us(found.ts_ns - trace_base.base_ns) || ' µs' || ') '
    || found.problem
    || coalesce(' ' || named.cat || ' ' || named.name
        || ' [' || _chk_us(found.target_start_ns - trace_base.base_ns) || ' µs'
        || ', ' || _chk_us(found.target_end_ns - trace_base.base_ns) || ' µs' || ')',
        '') AS message,
    -8 * found.flow_id
        - CASE found.flow_end WHEN 's' THEN 6 ELSE 7 END AS seq,
    found.flow_id,
    found.flow_end,
    found.target_id,
    found.bound_id
FROM found
CROSS JOIN trace_base
LEFT JOIN (
    -- names of the targets of violations only: a hash table over every
    -- slice's name ran the 16M-NVTX input out of memory at 2GB
    SELECT slice_id, cat, name FROM int_slices
    WHERE slice_id IN (SELECT target_id FROM found)
) AS named ON named.slice_id = found.target_id;

COMMENT ON VIEW check_flow_targets IS 'Contract check (output-contract.md, Events: flows; perfetto-json.md, flow binding): each drawn flow''s s end lies in its CUDA API slice and its f end in its GPU slice, the slices int_flows meant (start <= ts < end, after the start of a slice longer than 1 ns); Perfetto binds each end to exactly that slice (it is the slice of its track starting last at or before ts, the shortest at equal starts, and no other slice shares its interval); and Perfetto draws the flow CPU -> GPU (the GPU slice does not start before the API slice). Rows = violations (message, seq = the flow event in chk_events, flow_id, flow_end, target_id, bound_id).';
