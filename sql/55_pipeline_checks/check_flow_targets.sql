-- check_flow_targets: the flow ends that Perfetto would not bind to the
-- slice int_flows meant them for, or that lie outside it (zero rows when
-- every flow lands on its API call and its GPU slice).
--
-- Reads: int_flows, int_slices_on_tracks, int_slices_placed, int_tracks,
-- int_slices, trace_base.
-- Invariants: the rule (output-contract.md, Events; perfetto-json.md, flows):
-- the 's' of each drawn flow lies inside the CUDA API slice int_flows meant
-- (api_slice_id) and the 'f' ("bp":"e") inside the GPU slice it meant
-- (gpu_slice_id), on that slice's (pid, tid): start <= ts < end, after the
-- start when the slice is longer than 1 ns, ts = start for a zero-length
-- slice; and Perfetto binds the end to that slice, i.e. no other X slice of
-- the track holds ts more tightly. Slices of a track nest or are disjoint
-- (check_overlap), so only a slice starting inside the target at or before ts
-- and holding ts can take the end. The rules that need no ids (each end in the
-- innermost X slice of its track, s.ts <= f.ts, one s and one f per id, the
-- kinds of slice flow_kinds allows) are the generic check_flow and
-- check_flow_kind of 50_checks/. seq: the flow event as chk_events numbers it
-- (-8 x flow_id - 6 for s, - 7 for f).

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

x_slices AS NOT MATERIALIZED (
    SELECT slice_id, json_tid AS tid, start_ns, end_ns
    FROM int_slices_on_tracks
    WHERE ph = 'X'
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

near AS (
    SELECT * FROM judged
    WHERE problem IS NULL AND ts_ns - target_start_ns <= 1
),

far AS (
    SELECT * FROM judged
    WHERE problem IS NULL AND ts_ns - target_start_ns > 1
),

taken AS (
    -- the slices of the track that start inside the target at or before
    -- ts and hold ts: they, not the target, would take the end (a slice
    -- with the target's start and a later end encloses it and does not).
    -- Flow ends lie at most 1 ns after their target's start (int_flows),
    -- found by an equi-join; the others by the slice starting last at or
    -- before ts (ASOF JOIN)
    SELECT near.flow_id, near.flow_end, taker.slice_id AS bound_id
    FROM near
    CROSS JOIN (VALUES (0), (1)) AS step (start_delta)
    JOIN x_slices AS taker
        ON taker.tid = near.tid
        AND taker.start_ns = near.target_start_ns + step.start_delta
    WHERE taker.slice_id <> near.target_id
        AND (near.ts_ns < taker.end_ns
            OR near.ts_ns = taker.start_ns AND taker.end_ns = taker.start_ns)
        AND CASE step.start_delta
            -- a slice with the target's start takes the end unless it
            -- ends after the target (then it encloses the target)
            WHEN 0 THEN taker.end_ns <= near.target_end_ns
            -- one starting 1 ns later takes an end placed after the start
            ELSE near.ts_ns > near.target_start_ns END
    UNION ALL
    SELECT far.flow_id, far.flow_end, taker.slice_id
    FROM far
    ASOF JOIN (
        SELECT * FROM x_slices WHERE tid IN (SELECT tid FROM far)
    ) AS taker
        ON taker.tid = far.tid AND taker.start_ns <= far.ts_ns
    WHERE taker.slice_id <> far.target_id
        AND taker.start_ns >= far.target_start_ns
        AND (far.ts_ns < taker.end_ns
            OR far.ts_ns = taker.start_ns AND taker.end_ns = taker.start_ns)
        AND NOT (taker.start_ns = far.target_start_ns
            AND taker.end_ns > far.target_end_ns)
),

found AS (
    SELECT judged.* EXCLUDE (problem), judged.problem, NULL::BIGINT AS bound_id
    FROM judged
    WHERE judged.problem IS NOT NULL
    UNION ALL
    SELECT
        judged.* EXCLUDE (problem),
        'is bound by Perfetto to another slice (slice_id '
            || CAST(taken.bound_id AS VARCHAR)
            || ', the innermost one holding it), not to its target',
        taken.bound_id
    FROM judged
    JOIN taken USING (flow_id, flow_end)
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

COMMENT ON VIEW check_flow_targets IS 'Contract check (output-contract.md, Events: flows; perfetto-json.md, flow binding): each drawn flow''s s end lies in its CUDA API slice and its f end in its GPU slice, the slices int_flows meant (start <= ts < end, after the start of a slice longer than 1 ns), and Perfetto binds each end to exactly that slice (no slice nested in it holds the end). Rows = violations (message, seq = the flow event in chk_events, flow_id, flow_end, target_id, bound_id).';
