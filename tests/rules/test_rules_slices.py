"""Rules of int_slices (sql/30_intermediate/40_slices/: one view per kind
of slice, _int_slices_gpu_ops ... _int_slices_thread_states, and their union
50_int_slices.sql) for GPU work and CUDA API calls: output-contract.md, Tracks and Events. Every
kernel once on its stream track and once on the CUDA Core Timeline; H2D/D2H
copies on PCIe Usage, device-side copies on D2D Copy, host-to-host on the
stream only; unified-memory migrations on Unified Memory; a runtime call
linked to GPU work under the device of that work, others under every home
of the process."""

from __future__ import annotations

import sql_rules

PK = (1 << 24) | 5
GT = (1 << 48) | (5 << 24) | 6


def op(op_id, cat, projection=None, projected_cat=None, device=0, migration=False, **kw):
    return {
        "op_id": op_id,
        "cat": cat,
        "name": f"{cat}{op_id}",
        "start_ns": 10 * op_id,
        "end_ns": 10 * op_id + 5,
        "device_id": device,
        "context_id": 1,
        "stream_id": 7,
        "correlation_id": op_id,
        "proc_key": PK,
        "os_pid": 5,
        "projection": projection,
        "projected_cat": projected_cat,
        "is_unified_migration": migration,
        **kw,
    }


def slices(given, columns):
    """int_slices over the given rows: the per-kind views (from the first,
    _int_slices_gpu_ops) run on them, then their union."""
    return sql_rules.view_rows("int_slices", given, columns, since="_int_slices_gpu_ops")


def test_gpu_work_goes_on_its_stream_and_its_device_level_track():
    out = slices(
        {
            "int_gpu_ops": [
                op(1, "kernel", "core", "kernel_core"),
                op(2, "memcpy", "pcie", "memcpy_pcie", copy_kind_label="Host-to-Device"),
                op(3, "memcpy", "d2d", "memcpy_d2d", copy_kind_label="Device-to-Device"),
                op(4, "memcpy", None, None, copy_kind_label="Host-to-Host"),
                op(5, "memset"),
            ]
        },
        "op_id, cat, track_base_name, is_primary",
    )
    stream = "Stream 7 [pid 5 ctx 1]"
    assert out == [
        (1, "kernel", stream, True),
        (1, "kernel_core", "CUDA Core Timeline", False),
        (2, "memcpy", stream, True),
        (2, "memcpy_pcie", "PCIe Usage", False),
        (3, "memcpy", stream, True),
        (3, "memcpy_d2d", "D2D Copy", False),
        (4, "memcpy", stream, True),
        (5, "memset", stream, True),
    ]


def test_unified_migration_goes_on_unified_memory_not_a_stream():
    out = slices(
        {
            "int_gpu_ops": [
                op(
                    1,
                    "memcpy",
                    "pcie",
                    "memcpy_pcie",
                    migration=True,
                    stream_id=0,
                    context_id=0,
                    correlation_id=None,
                )
            ]
        },
        "cat, track_base_name, class_order",
    )
    assert out == [("memcpy", "Unified Memory", 4), ("memcpy_pcie", "PCIe Usage", 2)]


def test_track_order_of_a_device():
    out = slices(
        {
            "int_gpu_ops": [
                op(1, "kernel", "core", "kernel_core"),
                op(2, "memcpy", "pcie", "memcpy_pcie", copy_kind_label="x"),
                op(3, "memcpy", "d2d", "memcpy_d2d", copy_kind_label="y"),
            ]
        },
        "class_order, track_base_name",
    )
    order = [name for _, name in sorted(set(out))]
    assert order == ["CUDA Core Timeline", "PCIe Usage", "D2D Copy", "Stream 7 [pid 5 ctx 1]"]


def call(call_id, cat="cuda_api", name="cudaLaunchKernel"):
    return {
        "call_id": call_id,
        "cat": cat,
        "api_name": name,
        "api_full_name": name + "_v7000",
        "start_ns": call_id,
        "end_ns": call_id + 1,
        "proc_key": PK,
        "os_pid": 5,
        "os_tid": 6,
        "global_tid": GT,
        "correlation_id": call_id,
        "event_class": 0,
    }


def test_api_calls_under_the_device_of_their_work_or_every_home():
    out = slices(
        {
            "int_runtime_calls": [call(1), call(2, "cuda_sync", "cudaDeviceSynchronize")],
            "int_runtime_links": [{"call_id": 1, "op_id": 1, "device_id": 1}],
            "_int_cpu_homes": [{"proc_key": PK, "home_id": 0}, {"proc_key": PK, "home_id": 1}],
            "int_thread_names": [{"global_tid": GT, "thread_name": "main"}],
        },
        "call_id, cat, name, home_id, is_primary, track_base_name",
    )
    track = "CUDA API [pid 5 tid 6 main]"
    assert out == [
        (1, "cuda_api", "cudaLaunchKernel", 1, True, track),
        (2, "cuda_sync", "cudaDeviceSynchronize", 0, True, track),
        (2, "cuda_sync", "cudaDeviceSynchronize", 1, False, track),
    ]


def test_lane_rules_of_the_slices():
    out = slices(
        {
            "int_gpu_ops": [op(1, "kernel", "core", "kernel_core")],
            "int_runtime_calls": [call(1)],
            "int_runtime_links": [{"call_id": 1, "op_id": 1, "device_id": 0}],
        },
        "cat, lane_rule, needs_lanes",
    )
    assert out == [
        ("cuda_api", "disjoint", True),
        ("kernel", "disjoint", True),
        ("kernel_core", "disjoint", True),
    ]


def test_slice_ids_unique_and_track_keys_per_identity():
    out = slices(
        {
            "int_gpu_ops": [op(i, "kernel", "core", "kernel_core") for i in range(1, 6)]
            + [op(9, "kernel", "core", "kernel_core", stream_id=8)]
        },
        "slice_id, track_key, track_base_name",
    )
    assert len({r[0] for r in out}) == len(out) == 12
    by_name: dict[str, set] = {}
    for _, key, name in out:
        by_name.setdefault(name, set()).add(key)
    assert all(len(keys) == 1 for keys in by_name.values())
    assert len({next(iter(k)) for k in by_name.values()}) == 3  # core, stream 7, stream 8
