-- trace_slices: the aligned event table (NAME.perfetto.parquet): one row
-- per slice in the JSON: X, B/E pair, NVTX mark (i) or NVTX start/end async
-- b/e pair; same count.
--
-- Reads: int_gpu_ops, int_nvtx_op_paths, int_slices_on_tracks.
-- Invariants: times are absolute integer ns (Nsight's clock), so traces of
-- several reports line up; pid/tid are the JSON ones (for ph 'b' the tid of
-- the NVTX Thread track the JSON event names, although Perfetto draws it
-- on a per-process async track; for ph 'i' start = end). Column names and
-- types are stable and documented in README.md ("Aligned Parquet") and
-- docs/nvtx.md (the NVTX columns).
-- nvtx_ids / nvtx_names: on the as-executed rows of GPU operations (cat
-- kernel, memcpy, memset, cuda_graph), the NVTX ranges that own the operation under the
-- conversion's --nvtx-scope (21__int_nvtx_call_owners.sql), outer ->
-- inner, ids = nvtx_id of the ranges' own rows (cat 'nvtx'); an empty list
-- when no range owns it; NULL on every other row (also on the Core/PCIe/D2D
-- copies of the same operation, is_projection, so a GROUP BY over unnest(nvtx_ids) counts
-- each operation once).
-- demangled_name: on kernel rows (cat kernel and its Core copy kernel_core)
-- the kernel's demangled name (CUPTI_ACTIVITY_KIND_KERNEL.demangledName via
-- StringIds, the name nsys stats' cuda_gpu_kern_sum groups by; the short
-- name when the export has no demangled one), looked up by op_id in
-- int_gpu_ops rather than carried through int_slices; NULL on every other
-- row (memcpy, memset, graph executions, API, NVTX...). name stays the short
-- name, the one drawn: one short name may stand for several kernels.
-- is_primary: int_slices.is_primary (one row per drawn source row: WHERE
-- is_primary counts each kernel, copy, API call, NVTX range... once).
-- return_value (cuda_api/cuda_sync rows: the call's returnValue, nonzero =
-- failed), launch_type (kernel and kernel_core rows), src_kind / dst_kind
-- (memcpy rows and their PCIe/D2D copies: memory kind labels, Pageable,
-- Pinned, Device...) and mem_kind (memset rows): the values of the same
-- args members, looked up by op_id in int_gpu_ops like demangled_name;
-- NULL on every other row.
-- Each column comes after the older ones, so positional readers still work.
-- Role: parquet (NAME.perfetto.parquet)
-- Columns: slice_id BIGINT, start_ns BIGINT, end_ns BIGINT, dur_ns BIGINT,
--   pid BIGINT, tid BIGINT, track_name VARCHAR, cat VARCHAR, name VARCHAR,
--   device_id BIGINT, os_pid BIGINT, os_tid BIGINT, context_id BIGINT,
--   stream_id BIGINT, correlation_id BIGINT, copy_kind VARCHAR, bytes BIGINT,
--   nvtx_id BIGINT, ph VARCHAR, nvtx_ids BIGINT[], nvtx_names VARCHAR[],
--   demangled_name VARCHAR, is_primary BOOLEAN, return_value BIGINT,
--   launch_type VARCHAR, src_kind VARCHAR, dst_kind VARCHAR, mem_kind VARCHAR
-- Column comments from: int_slices_on_tracks.

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
        THEN coalesce(p.nvtx_names, []::VARCHAR[]) END AS nvtx_names,
    op.demangled_name,
    s.is_primary,
    s.return_value,
    op.launch_type,
    op.src_kind,
    op.dst_kind,
    op.mem_kind
FROM int_slices_on_tracks AS s
LEFT JOIN int_nvtx_op_paths AS p
    ON p.op_id = s.op_id AND NOT s.is_projection
-- the operation's own columns (each set on one kind of operation only)
LEFT JOIN int_gpu_ops AS op ON op.op_id = s.op_id;

COMMENT ON COLUMN trace_slices.demangled_name IS 'Kernel rows (kernel, kernel_core): the demangled kernel name (CUPTI_ACTIVITY_KIND_KERNEL.demangledName via StringIds), what nsys stats cuda_gpu_kern_sum groups by; name is the short name, which several kernels may share. NULL on other rows.';
COMMENT ON COLUMN trace_slices.return_value IS 'cuda_api / cuda_sync rows: the call''s returnValue (CUPTI_ACTIVITY_KIND_RUNTIME.returnValue: cudaError_t or CUresult; 0 success, nonzero failed); osrt rows: OSRT_API.returnValue (the function''s return, e.g. -1 for a failed read). NULL on other rows.';
COMMENT ON COLUMN trace_slices.launch_type IS 'Kernel rows (kernel, kernel_core): launchType''s ENUM_CUDA_KERNEL_LAUNCH_TYPE label (Regular, Coop Single Device, ...). NULL on other rows.';
COMMENT ON COLUMN trace_slices.src_kind IS 'Memcpy rows (memcpy, memcpy_pcie, memcpy_d2d): the source''s memory kind, srcKind''s ENUM_CUDA_MEM_KIND label (Pageable, Pinned, Device, ...). NULL on other rows.';
COMMENT ON COLUMN trace_slices.dst_kind IS 'Memcpy rows: the destination''s memory kind (dstKind''s ENUM_CUDA_MEM_KIND label). NULL on other rows.';
COMMENT ON COLUMN trace_slices.mem_kind IS 'Memset rows: the memory kind set (memKind''s ENUM_CUDA_MEM_KIND label). NULL on other rows.';
COMMENT ON COLUMN trace_slices.is_primary IS 'TRUE on exactly one row per drawn source row (kernel, memcpy, memset, graph execution, GPU-side sync, CUDA event record, API call, NVTX range or mark): FALSE on Core/PCIe/D2D copies, on API calls and NVTX rows repeated under other devices, and on projected NVTX ranges (nvtx_kernel). Sum over WHERE is_primary to count each event once.';

COMMENT ON VIEW trace_slices IS 'The aligned event table (NAME.perfetto.parquet): one row per slice in the JSON: X, B/E pair, NVTX mark (i) or NVTX start/end async b/e pair; same count.';
COMMENT ON COLUMN trace_slices.slice_id IS 'Slice id, unique in the trace.';
COMMENT ON COLUMN trace_slices.start_ns IS 'Start, absolute ns (Nsight''s clock, UTC epoch).';
COMMENT ON COLUMN trace_slices.end_ns IS 'End, absolute ns (= start_ns for instants).';
COMMENT ON COLUMN trace_slices.dur_ns IS 'end_ns - start_ns.';
COMMENT ON COLUMN trace_slices.pid IS 'JSON pid (the home).';
COMMENT ON COLUMN trace_slices.tid IS 'JSON tid (the track; for ph b the NVTX Thread track named in the JSON).';
COMMENT ON COLUMN trace_slices.cat IS 'JSON cat: kernel, kernel_core, memcpy, memcpy_pcie, memcpy_d2d, memset, cuda_graph, cuda_graph_core, gpu_sync, cuda_event, cuda_api, cuda_sync, nvtx, nvtx_kernel; CPU side: osrt, cudnn, cublas, thread_state.';
COMMENT ON COLUMN trace_slices.name IS 'Name drawn (kernel short name, API name, NVTX message...).';
COMMENT ON COLUMN trace_slices.device_id IS 'Device of GPU and device-projected slices; NULL on CPU rows.';
COMMENT ON COLUMN trace_slices.context_id IS 'CUDA context of GPU rows.';
COMMENT ON COLUMN trace_slices.stream_id IS 'CUDA stream of GPU rows.';
COMMENT ON COLUMN trace_slices.correlation_id IS 'CUPTI correlationId of GPU, API and sync rows.';
COMMENT ON COLUMN trace_slices.copy_kind IS 'memcpy rows: the copy kind label.';
COMMENT ON COLUMN trace_slices.bytes IS 'memcpy/memset rows: bytes.';
COMMENT ON COLUMN trace_slices.nvtx_id IS 'nvtx / nvtx_kernel rows: the NVTX row id.';
COMMENT ON COLUMN trace_slices.nvtx_ids IS 'As-executed GPU operation rows: the owning NVTX ranges'' nvtx_id, outer -> inner ([] when none); NULL elsewhere.';
COMMENT ON COLUMN trace_slices.nvtx_names IS 'As-executed GPU operation rows: the owning NVTX ranges'' names, outer -> inner ([] when none); NULL elsewhere.';
