-- int_flows: one row per flow arrow from an API call to the GPU slice it
-- launched or synchronized with, with both endpoints placed.
--
-- Reads: flow_kinds, int_runtime_links, int_slices_on_tracks.
-- Kinds (output-contract.md, Events): 'launch' API -> kernel or CUDA graph
-- execution on its stream, 'launch_core' API -> its CUDA Core Timeline
-- copy, 'copy' API -> memcpy or memset on its stream, 'copy_pcie' API ->
-- the H2D/D2H copy on PCIe Usage, 'sync' API -> its GPU-side
-- synchronization record (gpu_sync, on the CUDA Sync track of the same
-- device). Never kernel -> kernel. Which flow ends in which kind of GPU
-- slice: the 'f' rows of the domain table flow_kinds.
-- Placement: s_ns inside the API slice, f_ns inside the GPU slice
-- (start <= t < end; strictly after the start when the slice is longer than
-- 1 ns), and s_ns <= f_ns even when the GPU work starts before the call
-- returns (nsys-tables.md 4.3): f is the earliest allowed point not before
-- the API slice's earliest point, s the earliest point not after f.
-- is_placeable is false when the GPU slice starts before the API slice
-- (clock skew: CUPTI's start before its call's, seen in Kineto-derived
-- captures). Perfetto orients every flow from the slice that starts first
-- to the other, whatever the times of its s and f (FlowTracker::EndAt), so
-- no placement makes it draw such a flow CPU -> GPU (output-contract.md,
-- Events: never drawn wrong): it is not drawn and is counted in
-- trace_summary. A GPU slice starting in the same ns as its call is drawn
-- (at equal starts Perfetto keeps the s end's slice as the source).
-- A table, built once: the JSON writer, trace_summary, the split and three
-- checks read it; as a view each of them re-ran its joins of every slice,
-- and check_flow_targets ran out of memory at 2GB on the 20M-event bench
-- input (abacus x112) with those joins inside its own.
-- Column comments from: int_runtime_links.
-- Merge: renumbered

CREATE OR REPLACE TABLE int_flows AS
WITH targets AS (
    -- which flow ends in which kind of GPU slice
    SELECT slice_cat AS gpu_cat, flow_cat FROM flow_kinds WHERE flow_end = 'f'
),
pairs AS (
    -- GPU operations and the call that launched them
    SELECT gpu.* REPLACE (link.call_id AS call_id)
    FROM int_runtime_links AS link
    JOIN int_slices_on_tracks AS gpu ON gpu.op_id = link.op_id
    UNION ALL BY NAME
    -- GPU-side synchronization records and their call
    SELECT gpu.* REPLACE (gpu.linked_call_id AS call_id)
    FROM int_slices_on_tracks AS gpu
    WHERE gpu.cat = 'gpu_sync' AND gpu.linked_call_id IS NOT NULL
),
endpoints AS (
    SELECT
        targets.flow_cat,
        pairs.call_id,
        pairs.op_id,
        api.slice_id AS api_slice_id,
        pairs.slice_id AS gpu_slice_id,
        api.json_pid AS s_pid, api.json_tid AS s_tid,
        pairs.json_pid AS f_pid, pairs.json_tid AS f_tid,
        api.start_ns AS api_start_ns, api.end_ns AS api_end_ns,
        pairs.start_ns AS gpu_start_ns, pairs.end_ns AS gpu_end_ns,
        api.start_ns + CASE WHEN api.end_ns - api.start_ns > 1 THEN 1
            ELSE 0 END AS s_lo,
        pairs.start_ns + CASE WHEN pairs.end_ns - pairs.start_ns > 1 THEN 1
            ELSE 0 END AS f_lo,
        CASE WHEN pairs.end_ns > pairs.start_ns THEN pairs.end_ns - 1
            ELSE pairs.start_ns END AS f_hi
    FROM pairs
    JOIN targets ON targets.gpu_cat = pairs.cat
    JOIN int_slices_on_tracks AS api
        ON api.call_id = pairs.call_id AND api.home_id = pairs.home_id
),
placed AS (
    SELECT *, least(greatest(f_lo, s_lo), f_hi) AS f_ns
    FROM endpoints
)
SELECT
    gpu_slice_id AS flow_id,  -- each GPU slice receives at most one flow
    flow_cat, call_id, op_id, api_slice_id, gpu_slice_id,
    s_pid, s_tid, f_pid, f_tid,
    least(s_lo, f_ns) AS s_ns,
    f_ns,
    gpu_start_ns >= api_start_ns AS is_placeable,
    api_start_ns,
    gpu_start_ns
FROM placed;

COMMENT ON TABLE int_flows IS 'One row per flow arrow from an API call to the GPU slice it launched or synchronized with, with both endpoints placed.';
COMMENT ON COLUMN int_flows.flow_id IS 'JSON id of the flow''s two events (= gpu_slice_id: a GPU slice receives at most one flow).';
COMMENT ON COLUMN int_flows.flow_cat IS 'JSON cat and name of the flow (flow_kinds.flow_cat).';
COMMENT ON COLUMN int_flows.op_id IS 'The GPU operation (NULL for sync flows).';
COMMENT ON COLUMN int_flows.api_slice_id IS 'Slice of the API call (the ''s'' end).';
COMMENT ON COLUMN int_flows.gpu_slice_id IS 'GPU slice (the ''f'' end).';
COMMENT ON COLUMN int_flows.s_pid IS 'JSON pid of the ''s'' event.';
COMMENT ON COLUMN int_flows.s_tid IS 'JSON tid of the ''s'' event.';
COMMENT ON COLUMN int_flows.f_pid IS 'JSON pid of the ''f'' event.';
COMMENT ON COLUMN int_flows.f_tid IS 'JSON tid of the ''f'' event.';
COMMENT ON COLUMN int_flows.s_ns IS 'Time of the ''s'' event, UTC-epoch ns (inside the API slice, <= f_ns).';
COMMENT ON COLUMN int_flows.f_ns IS 'Time of the ''f'' event, UTC-epoch ns (inside the GPU slice).';
COMMENT ON COLUMN int_flows.api_start_ns IS 'Start of the API slice (the ''s'' end''s slice), UTC-epoch ns.';
COMMENT ON COLUMN int_flows.gpu_start_ns IS 'Start of the GPU slice (the ''f'' end''s slice), UTC-epoch ns.';
COMMENT ON COLUMN int_flows.is_placeable IS 'FALSE when the GPU slice starts before the API slice (clock skew; Perfetto would draw it GPU -> CPU): not drawn, counted in trace_summary.';
