"""Rules of the GPU operations and their API calls (sql/30_intermediate:
int_gpu_ops, int_runtime_calls, int_runtime_links, _int_devices,
int_homes, int_thread_states): given staging rows, the rows the headers and
output-contract.md (Tracks, Events) promise."""

from __future__ import annotations

import pytest
import sql_rules

PK = (1 << 24) | 5  # proc_key of pid 5 (VM id 1)
GT = (1 << 48) | (5 << 24) | 6  # globalTid of pid 5, tid 6


def kernel(start, end, corr=None, device=0, name="k", **kw):
    return {
        "start_ns": start,
        "end_ns": end,
        "device_id": device,
        "context_id": 1,
        "stream_id": 7,
        "correlation_id": corr,
        "proc_key": PK,
        "os_pid": 5,
        "short_name": name,
        "demangled_name": name,
        **kw,
    }


def memcpy(start, end, corr=None, kind=1, projection="pcie", label="Host-to-Device", **kw):
    return {
        "start_ns": start,
        "end_ns": end,
        "device_id": 0,
        "context_id": 1,
        "stream_id": 7,
        "correlation_id": corr,
        "proc_key": PK,
        "os_pid": 5,
        "copy_kind": kind,
        "copy_kind_label": label,
        "copy_projection": projection,
        "is_unified_migration": False,
        "bytes": 64,
        **kw,
    }


def call(start, end, corr, name="cudaLaunchKernel", is_sync=False, **kw):
    return {
        "start_ns": start,
        "end_ns": end,
        "event_class": 0,
        "global_tid": GT,
        "proc_key": PK,
        "os_pid": 5,
        "os_tid": 6,
        "correlation_id": corr,
        "api_full_name": name + "_v7000",
        "api_name": name,
        "api_base": name,
        "is_sync": is_sync,
        **kw,
    }


# --- int_gpu_ops -----------------------------------------------------------------


def test_gpu_ops_cat_and_projection():
    out = sql_rules.view_rows(
        "int_gpu_ops",
        {
            "stg_kernels": [kernel(1, 2)],
            "stg_memcpys": [
                memcpy(3, 4),
                memcpy(5, 6, kind=8, projection="d2d", label="Device-to-Device"),
                memcpy(7, 8, kind=9, projection="none", label="Host-to-Host"),
            ],
            "stg_memsets": [
                {
                    "start_ns": 9,
                    "end_ns": 10,
                    "device_id": 0,
                    "proc_key": PK,
                    "os_pid": 5,
                    "context_id": 1,
                    "stream_id": 7,
                }
            ],
            "stg_graph_executions": [
                {
                    "start_ns": 11,
                    "end_ns": 12,
                    "device_id": 0,
                    "proc_key": PK,
                    "os_pid": 5,
                    "context_id": 1,
                    "stream_id": 7,
                    "name": "graph",
                }
            ],
        },
        "start_ns, cat, projection, projected_cat, name",
    )
    assert out == [
        (1, "kernel", "core", "kernel_core", "k"),
        (11, "cuda_graph", "core", "cuda_graph_core", "graph"),
        (3, "memcpy", "pcie", "memcpy_pcie", "[CUDA memcpy Host-to-Device]"),
        (5, "memcpy", "d2d", "memcpy_d2d", "[CUDA memcpy Device-to-Device]"),
        (7, "memcpy", None, None, "[CUDA memcpy Host-to-Host]"),
        (9, "memset", None, None, "[CUDA memset]"),
    ]


def test_gpu_op_ids_are_unique():
    out = sql_rules.view_rows(
        "int_gpu_ops", {"stg_kernels": [kernel(i, i + 1) for i in range(5)]}, "op_id"
    )
    assert sorted(r[0] for r in out) == [1, 2, 3, 4, 5]


def test_batched_memcpy_says_so_in_its_name():
    out = sql_rules.view_rows(
        "int_gpu_ops",
        {"stg_memcpys": [memcpy(1, 2, copy_count=3), memcpy(3, 4, copy_count=1)]},
        "start_ns, name",
    )
    assert out == [
        (1, "[CUDA memcpy Host-to-Device] (batch of 3 copies)"),
        (3, "[CUDA memcpy Host-to-Device]"),
    ]


# --- int_runtime_calls / int_runtime_links -----------------------------------------


def calls_and_links(kernels, calls, syncs=()):
    ops = sql_rules.view_rows(
        "int_gpu_ops",
        {"stg_kernels": kernels},
        "op_id, start_ns, end_ns, device_id, proc_key, correlation_id, cat, projection",
    )
    cols = [
        "op_id",
        "start_ns",
        "end_ns",
        "device_id",
        "proc_key",
        "correlation_id",
        "cat",
        "projection",
    ]
    ops_rows = [dict(zip(cols, r, strict=True)) for r in ops]
    con = sql_rules.run_view(
        "int_runtime_links",
        {"int_gpu_ops": ops_rows, "stg_runtime_calls": calls, "stg_gpu_syncs": list(syncs)},
        since="int_runtime_calls",
    )
    try:
        c = sql_rules.rows(con, "int_runtime_calls", "start_ns, cat, launched_gpu_work")
        links = sql_rules.rows(
            con,
            "SELECT c.start_ns, o.start_ns FROM int_runtime_links l "
            "JOIN int_runtime_calls c USING (call_id) JOIN int_gpu_ops o USING (op_id)",
        )
    finally:
        con.close()
    return c, links


def test_calls_link_their_gpu_work_by_process_and_correlation():
    other = (1 << 24) | 9
    c, links = calls_and_links(
        [
            kernel(10, 20, corr=1),
            kernel(30, 40, corr=2),
            {**kernel(50, 60, corr=1), "proc_key": other, "os_pid": 9},
        ],
        [call(1, 5, 1), call(21, 25, 2), call(26, 27, 3, name="cudaMalloc")],
    )
    assert c == [(1, "cuda_api", True), (21, "cuda_api", True), (26, "cuda_api", False)]
    # correlationId is per process: the kernel of pid 9 is not pid 5's
    assert links == [(1, 10), (21, 30)]


def test_sync_call_is_cuda_sync_unless_it_launched_work():
    c, _ = calls_and_links(
        [kernel(10, 20, corr=2)],
        [
            call(1, 5, 1, name="cudaDeviceSynchronize", is_sync=True),
            call(6, 7, 2, name="cudaStreamSynchronize", is_sync=True),
            call(8, 9, 3, name="cudaEventSynchronize"),
        ],
        syncs=[{"proc_key": PK, "correlation_id": 3, "start_ns": 8, "end_ns": 9, "device_id": 0}],
    )
    # 3: no sync name, but a GPU-side synchronization record
    assert c == [(1, "cuda_sync", False), (6, "cuda_api", True), (8, "cuda_sync", False)]


def test_a_graph_launch_links_every_kernel_and_each_op_one_call():
    _, links = calls_and_links(
        [kernel(10, 20, corr=4), kernel(20, 30, corr=4), kernel(40, 50, corr=4)],
        # the id repeated: each op links the latest call started before it
        [call(1, 5, 4, name="cudaGraphLaunch"), call(35, 36, 4, name="cudaGraphLaunch")],
    )
    assert links == [(1, 10), (1, 20), (35, 40)]


# --- _int_devices, int_homes ------------------------------------------------------


def test_devices_come_from_activity_only_and_are_named():
    out = sql_rules.view_rows(
        "_int_devices",
        {
            "int_gpu_ops": [{"op_id": 1, "device_id": 1}, {"op_id": 2, "device_id": 1}],
            "stg_gpu_syncs": [{"device_id": 3}],
            "stg_gpus": [
                {"device_id": 1, "gpu_name": " NVIDIA A100 "},
                {"device_id": 2, "gpu_name": "idle"},
            ],
        },
    )
    assert out == [(1, "NVIDIA A100"), (3, "GPU 3")]


def homes(given):
    return sql_rules.view_rows(
        "int_homes", given, "json_pid, home_id, home_kind, home_name, work_devices"
    )


def test_homes_devices_first_then_host_processes():
    out = homes(
        {
            "_int_devices": [{"device_id": 2, "gpu_name": "B"}, {"device_id": 0, "gpu_name": "A"}],
            "_int_cpu_processes": [
                {"proc_key": PK, "os_pid": 5, "has_host_rows": True},
                {"proc_key": (1 << 24) | 3, "os_pid": 3, "has_host_rows": True},
                {"proc_key": (1 << 24) | 4, "os_pid": 4, "has_host_rows": False},
            ],
            "int_gpu_ops": [{"op_id": 1, "proc_key": PK, "device_id": 2}],
            "stg_processes": [{"proc_key": PK, "process_name": "python"}],
        }
    )
    assert out == [
        (1, 0, "device", "Device 0: A", [0]),
        (2, 2, "device", "Device 2: B", [2]),
        (3, -1 - ((1 << 24) | 3), "host", "Process [3]", []),
        (4, -1 - PK, "host", "python [5]", [2]),
    ]


def test_without_devices_every_profiled_process_gets_a_home():
    out = homes(
        {
            "_int_cpu_processes": [{"proc_key": PK, "os_pid": 5, "has_host_rows": False}],
            "int_thread_names": [{"global_tid": (1 << 48) | (5 << 24) | 5, "thread_name": "main"}],
        }
    )
    assert out == [(1, -1 - PK, "host", "main [5]", [])]


# --- int_thread_states --------------------------------------------------------------


def sched(at, sched_in, cpu=0, tid=6, state=None):
    return {
        "at_ns": at,
        "cpu": cpu,
        "is_sched_in": sched_in,
        "thread_state": state,
        "global_tid": (1 << 48) | (5 << 24) | tid,
        "proc_key": PK,
        "os_pid": 5,
        "os_tid": tid,
    }


def test_thread_states_are_contiguous_between_events():
    out = sql_rules.view_rows(
        "int_thread_states",
        {
            "stg_sched_events": [
                sched(10, True, cpu=2),
                sched(30, False, cpu=2),
                sched(45, True, cpu=1),
                sched(50, False, state="Terminated"),
                sched(5, True, tid=7),
            ]
        },
        "os_tid, state, cpu, start_ns, end_ns, thread_state",
    )
    # n events of a thread -> n - 1 states; nothing after the last one
    assert out == [
        (6, "Not running", 2, 30, 45, None),
        (6, "Running", 1, 45, 50, None),
        (6, "Running", 2, 10, 30, None),
    ]


def test_thread_state_at_one_ns_puts_sched_out_first():
    out = sql_rules.view_rows(
        "int_thread_states",
        {
            "stg_sched_events": [
                sched(10, True),
                sched(20, True),
                sched(20, False),
                sched(30, False),
            ]
        },
        "state, start_ns, end_ns",
    )
    assert out == [("Not running", 20, 20), ("Running", 10, 20), ("Running", 20, 30)]


@pytest.mark.parametrize("scope", ["thread", "process"])
def test_nvtx_ranges_only_of_launching_processes(scope):
    ev = {
        "event_type": 59,
        "range_kind": "push_pop",
        "nvtx_role": "range",
        "global_tid": GT,
        "message": "r",
    }
    out = sql_rules.view_rows(
        "int_nvtx_ranges",
        {
            "stg_nvtx_events": [
                {**ev, "nvtx_id": 1, "start_ns": 0, "end_ns": 10, "proc_key": PK},
                {**ev, "nvtx_id": 2, "start_ns": 0, "end_ns": 10, "proc_key": 99},
                {
                    **ev,
                    "nvtx_id": 3,
                    "start_ns": 5,
                    "end_ns": 5,
                    "proc_key": PK,
                    "end_global_tid": GT + 1,
                },
                {
                    **ev,
                    "nvtx_id": 4,
                    "start_ns": 5,
                    "end_ns": None,
                    "proc_key": PK,
                    "nvtx_role": "mark",
                },
            ],
            "int_runtime_calls": [{"call_id": 1, "proc_key": PK, "launched_gpu_work": True}],
        },
        "nvtx_id, ownership",
        options={"nvtx_scope": scope},
    )
    # a range ending on another thread always uses the process rule
    assert out == [(1, scope), (3, "process")]
