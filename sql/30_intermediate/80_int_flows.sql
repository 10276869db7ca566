-- int_flows: one row per flow arrow from an API call to the GPU slice it
-- launched, with both endpoints placed.
--
-- Reads: int_runtime_links, int_slices_on_tracks.
-- Kinds (output-contract.md, Events): 'launch' API -> kernel on its stream,
-- 'launch_core' API -> the kernel's CUDA Core Timeline copy, 'copy' API ->
-- memcpy or memset on its stream, 'copy_pcie' API -> the H2D/D2H copy on
-- PCIe Usage. Never kernel -> kernel.
-- Placement: s_ns inside the API slice, f_ns inside the GPU slice
-- (start <= t < end; strictly after the start when the slice is longer than
-- 1 ns), and s_ns <= f_ns even when the GPU work starts before the call
-- returns (nsys-tables.md 4.3): f is the earliest allowed point not before
-- the API slice's earliest point, s the earliest point not after f.
-- is_placeable is false only if the GPU work ended before the call began;
-- such flows are not drawn and are counted in trace_summary.

CREATE OR REPLACE VIEW int_flows AS
WITH endpoints AS (
    SELECT
        CASE
            WHEN gpu.cat = 'kernel' THEN 'launch'
            WHEN gpu.cat = 'kernel_core' THEN 'launch_core'
            WHEN gpu.cat IN ('memcpy', 'memset') THEN 'copy'
            WHEN gpu.cat = 'memcpy_pcie' THEN 'copy_pcie'
        END AS flow_cat,
        link.call_id,
        link.op_id,
        api.slice_id AS api_slice_id,
        gpu.slice_id AS gpu_slice_id,
        api.json_pid AS s_pid, api.json_tid AS s_tid,
        gpu.json_pid AS f_pid, gpu.json_tid AS f_tid,
        api.start_ns AS api_start_ns, api.end_ns AS api_end_ns,
        gpu.start_ns AS gpu_start_ns, gpu.end_ns AS gpu_end_ns,
        api.start_ns + CASE WHEN api.end_ns - api.start_ns > 1 THEN 1
            ELSE 0 END AS s_lo,
        gpu.start_ns + CASE WHEN gpu.end_ns - gpu.start_ns > 1 THEN 1
            ELSE 0 END AS f_lo,
        CASE WHEN gpu.end_ns > gpu.start_ns THEN gpu.end_ns - 1
            ELSE gpu.start_ns END AS f_hi
    FROM int_runtime_links AS link
    JOIN int_slices_on_tracks AS gpu
        ON gpu.op_id = link.op_id
        AND gpu.cat IN ('kernel', 'kernel_core', 'memcpy', 'memset',
            'memcpy_pcie')
    JOIN int_slices_on_tracks AS api
        ON api.call_id = link.call_id AND api.home_id = link.device_id
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
    f_ns >= api_start_ns AS is_placeable
FROM placed;
