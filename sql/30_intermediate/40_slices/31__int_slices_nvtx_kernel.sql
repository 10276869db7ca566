-- _int_slices_nvtx_kernel: the projected NVTX ranges (push/pop and
-- start/end) on the NVTX Kernel track of the thread that started the
-- range, under the device the owned GPU work ran on (private helper of
-- int_slices, which documents the columns).
--
-- Reads: int_nvtx_gpu_projection, int_thread_names.
-- Invariants: one row per int_nvtx_gpu_projection row (a range and a
-- device), in its order; cat nvtx_kernel, name the range's message, ph 'B'
-- ('X' when zero-length), is_primary FALSE (a copy of the range's own nvtx
-- slice); nest_seq = path_order (the CPU order of the ranges, so
-- coinciding projections keep their parent/child order). args (json_object:
-- every member has a value): domain, kind ('push/pop' or 'start/end'), the
-- ownership rule used, gpuOps, apiCalls.

CREATE OR REPLACE VIEW _int_slices_nvtx_kernel AS
SELECT
    'nvtx_kernel' AS cat,
    CASE WHEN p.end_ns > p.start_ns THEN 'B' ELSE 'X' END AS ph,
    p.message AS name, p.start_ns, p.end_ns,
    p.device_id AS home_id, 'nvtx_kernel' AS track_class, p.proc_key,
    p.os_pid AS key1, p.os_tid AS key2, 0 AS key3,
    thread_track_suffix(p.os_pid, p.os_tid, tl.thread_name)
        AS track_base_name,
    p.nvtx_id, p.device_id, p.proc_key AS owner_proc_key, p.os_pid,
    p.os_tid,
    json_object('domain', p.domain_name,
        'kind', replace(p.range_kind, '_', '/'),
        'ownership', p.ownership,
        'gpuOps', p.gpu_op_count, 'apiCalls', p.launch_count) AS args_json,
    p.path_order AS nest_seq, FALSE AS is_primary
FROM int_nvtx_gpu_projection AS p
LEFT JOIN int_thread_names AS tl ON tl.global_tid = p.global_tid;

COMMENT ON VIEW _int_slices_nvtx_kernel IS 'int_slices rows of the NVTX ranges projected onto the GPU, on the NVTX Kernel track of their thread under each device (private helper of int_slices).';
