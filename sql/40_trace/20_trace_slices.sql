-- trace_slices: the aligned event table (NAME.perfetto.parquet): one row
-- per slice in the JSON: X, B/E pair, NVTX mark (i) or NVTX start/end async
-- b/e pair; same count.
--
-- Reads: int_slices_on_tracks, int_nvtx_op_paths.
-- Invariants: times are absolute integer ns (Nsight's clock), so traces of
-- several reports line up; pid/tid are the JSON ones (for ph 'b' the tid of
-- the NVTX Thread track the JSON event names, although Perfetto draws it
-- on a per-process async track; for ph 'i' start = end). Column names and
-- types are stable and documented in README.md ("Aligned Parquet") and
-- docs/nvtx.md (the NVTX columns).
-- nvtx_ids / nvtx_names: on the as-executed rows of GPU operations (cat
-- kernel, memcpy, memset, cuda_graph), the NVTX ranges that own the operation under the
-- conversion's --nvtx-scope (40_int_nvtx_gpu_projection.sql), outer ->
-- inner, ids = nvtx_id of the ranges' own rows (cat 'nvtx'); an empty list
-- when no range owns it; NULL on every other row (also on the Core/PCIe/D2D
-- copies of the same operation, is_projection, so a GROUP BY over unnest(nvtx_ids) counts
-- each operation once).

CREATE OR REPLACE VIEW trace_slices AS
SELECT
    s.slice_id,
    s.start_ns,
    s.end_ns,
    s.end_ns - s.start_ns AS dur_ns,
    s.json_pid AS pid,
    s.json_tid AS tid,
    s.track_name,
    s.cat,
    s.name,
    s.device_id,
    s.os_pid,
    s.os_tid,
    s.context_id,
    s.stream_id,
    s.correlation_id,
    s.copy_kind_label AS copy_kind,
    s.bytes,
    s.nvtx_id,
    s.ph,
    CASE WHEN NOT s.is_projection
        THEN coalesce(p.nvtx_ids, []::BIGINT[]) END AS nvtx_ids,
    CASE WHEN NOT s.is_projection
        THEN coalesce(p.nvtx_names, []::VARCHAR[]) END AS nvtx_names
FROM int_slices_on_tracks AS s
LEFT JOIN int_nvtx_op_paths AS p
    ON p.op_id = s.op_id AND NOT s.is_projection;
