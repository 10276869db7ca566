"""Edge cases the real reports lack, on small synthetic Parquet exports.

Each export is built here with the Nsight column types (conftest.make_export)
and runs through the real pipeline.
"""

from __future__ import annotations

from collections import Counter

import contract
from conftest import EPOCH, gtid, load_events, make_export
from nsys_duck.convert import Options, convert

STRINGS = [
    {"id": 1, "value": "cudaLaunchKernel_v7000"},
    {"id": 2, "value": "kA"},
    {"id": 3, "value": "kB"},
    {"id": 4, "value": "cudaGraphLaunch_v10000"},
    {"id": 5, "value": "cudaStreamSynchronize_ptsz_v7000"},
    {"id": 6, "value": "cudaLaunchKernel"},
]


def kernel(start, end, corr, pid, device=0, stream=7, ctx=1, name=2):
    return {
        "start": EPOCH + start,
        "end": EPOCH + end,
        "deviceId": device,
        "contextId": ctx,
        "streamId": stream,
        "correlationId": corr,
        "globalPid": gtid(pid),
        "shortName": name,
        "demangledName": name,
        "gridX": 1,
        "gridY": 1,
        "gridZ": 1,
        "blockX": 32,
        "blockY": 1,
        "blockZ": 1,
    }


def api(start, end, corr, pid, tid, name=1, event_class=0):
    return {
        "start": EPOCH + start,
        "end": EPOCH + end,
        "eventClass": event_class,
        "globalTid": gtid(pid, tid),
        "correlationId": corr,
        "nameId": name,
        "returnValue": 0,
    }


def run(tmp_path, tables):
    export = make_export(tmp_path / "synthetic" / "parquet", tables)
    res = convert(export, Options(), root=tmp_path / "ws")
    events = load_events(res)
    slices = contract.slices_table(res.workspace.events_parquet)
    assert contract.partial_overlaps(slices) == []
    assert contract.unnamed_tracks(events) == []
    assert contract.bad_ids(events) == []
    assert contract.flow_problems(events, slices, res.base_ns) == []
    return res, events, slices


def flows_by_cat(events):
    return Counter(e["cat"] for e in events if e["ph"] == "s")


def test_two_processes_reuse_correlation_id_and_stream(tmp_path):
    """Links are per process: (PID, correlationId), never correlationId alone."""
    _res, events, slices = run(
        tmp_path,
        {
            "StringIds": STRINGS,
            "CUPTI_ACTIVITY_KIND_KERNEL": [
                kernel(1000, 2000, 5, pid=100, name=2),
                kernel(1500, 2500, 5, pid=200, name=3),
            ],
            "CUPTI_ACTIVITY_KIND_RUNTIME": [
                api(100, 300, 5, pid=100, tid=101),
                api(900, 1200, 5, pid=200, tid=201),
            ],
        },
    )
    assert flows_by_cat(events) == {"launch": 2, "launch_core": 2}
    # each flow starts on the launching process's own CUDA API track
    tracks = {(s["pid"], s["tid"]): s["track_name"] for s in slices}
    by_id = {}
    for e in events:
        if e["ph"] in "sf" and e["cat"] == "launch":
            by_id.setdefault(e["id"], {})[e["ph"]] = e
    pairs = set()
    for pair in by_id.values():
        src = tracks[(pair["s"]["pid"], pair["s"]["tid"])]
        dst_kernel = [
            s["name"]
            for s in slices
            if (s["pid"], s["tid"]) == (pair["f"]["pid"], pair["f"]["tid"]) and s["cat"] == "kernel"
        ]
        pairs.add((src.split()[3], tuple(dst_kernel)))
    assert pairs == {("100", ("kA",)), ("200", ("kB",))}
    # same stream id 7 in both processes -> two stream tracks
    stream_tracks = {s["track_name"] for s in slices if s["cat"] == "kernel"}
    assert len(stream_tracks) == 2


def test_one_process_on_two_gpus(tmp_path):
    res, events, slices = run(
        tmp_path,
        {
            "StringIds": STRINGS,
            "CUPTI_ACTIVITY_KIND_KERNEL": [
                kernel(1000, 2000, 1, pid=100, device=0),
                kernel(1000, 2000, 2, pid=100, device=1),
            ],
            "CUPTI_ACTIVITY_KIND_RUNTIME": [
                api(100, 300, 1, 100, 101),
                api(400, 500, 2, 100, 101),
                api(2500, 2600, 3, 100, 101, name=5),
            ],
            "TARGET_INFO_GPU": [
                {"id": 0, "name": "GPU-A"},
                {"id": 1, "name": "GPU-B"},
                {"id": 2, "name": "idle GPU"},
            ],
        },
    )
    names = sorted(
        e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"
    )
    assert names == ["Device 0: GPU-A", "Device 1: GPU-B"]  # no idle device, no -1
    # each launch appears under the device of its kernel; the sync under both
    api_devices = Counter((s["name"], s["pid"]) for s in slices if s["cat"].startswith("cuda_"))
    assert api_devices == {
        ("cudaLaunchKernel", 1): 1,
        ("cudaLaunchKernel", 2): 1,
        ("cudaStreamSynchronize_ptsz", 1): 1,
        ("cudaStreamSynchronize_ptsz", 2): 1,
    }
    assert dict(res.summary)["CUDA synchronization calls"] == 1


def test_one_primary_row_per_event_on_two_gpus(tmp_path):
    """One process on two GPUs, with NVTX (the real reports repeat API calls
    under two devices, alpa, but have no NVTX there): the sync call, the NVTX
    range and the mark are drawn under both devices and the range projected
    on both; ``is_primary`` keeps one row of each, under the lower device,
    and none of the Core copies or projections."""
    thread = gtid(100, 101)
    _res, events, slices = run(
        tmp_path,
        {
            "StringIds": STRINGS,
            "CUPTI_ACTIVITY_KIND_KERNEL": [
                kernel(1000, 2000, 1, pid=100, device=0),
                kernel(1000, 2000, 2, pid=100, device=1),
            ],
            "CUPTI_ACTIVITY_KIND_RUNTIME": [
                api(100, 300, 1, 100, 101),
                api(400, 500, 2, 100, 101),
                api(2500, 2600, 3, 100, 101, name=5),
            ],
            "NVTX_EVENTS": [
                {
                    "start": EPOCH + 50,
                    "end": EPOCH + 3000,
                    "eventType": 59,
                    "text": "step",
                    "globalTid": thread,
                },
                {"start": EPOCH + 60, "eventType": 34, "text": "mark", "globalTid": thread},
            ],
        },
    )
    assert contract.primary_problems(slices) == []
    assert Counter((s["cat"], s["name"], s["is_primary"]) for s in slices) == {
        ("kernel", "kA", True): 2,
        ("kernel_core", "kA", False): 2,
        ("cuda_api", "cudaLaunchKernel", True): 2,
        ("cuda_sync", "cudaStreamSynchronize_ptsz", True): 1,
        ("cuda_sync", "cudaStreamSynchronize_ptsz", False): 1,
        ("nvtx", "step", True): 1,
        ("nvtx", "step", False): 1,
        ("nvtx", "mark", True): 1,
        ("nvtx", "mark", False): 1,
        ("nvtx_kernel", "step", False): 2,
    }
    device_0 = {
        e["pid"]
        for e in events
        if e["ph"] == "M"
        and e["name"] == "process_name"
        and e["args"]["name"].startswith("Device 0")
    }
    assert {
        s["pid"] for s in slices if s["is_primary"] and s["cat"] in ("cuda_sync", "nvtx")
    } == device_0


def test_graph_launch_with_several_kernels(tmp_path):
    _res, events, slices = run(
        tmp_path,
        {
            "StringIds": STRINGS,
            "CUPTI_ACTIVITY_KIND_KERNEL": [
                kernel(1000 + 300 * i, 1200 + 300 * i, 9, 100) for i in range(3)
            ],
            "CUPTI_ACTIVITY_KIND_RUNTIME": [
                api(100, 1500, 9, 100, 101, name=4),
                # backtrace twin: must not double the flows
                api(90, 1510, 9, 100, 101, name=6, event_class=67),
            ],
        },
    )
    assert flows_by_cat(events) == {"launch": 3, "launch_core": 3}
    assert Counter(s["cat"] for s in slices)["cuda_api"] == 1


def test_overlapping_kernels_get_core_lanes(tmp_path):
    #  ns:   0    1000  2000  3000  4000
    #  k1:        [===========)            stream 7
    #  k2:              [===========)      stream 8 -> CUDA Core Timeline #2
    #  k3:                    [=====)      stream 9 -> #3 (k1 still running? no: k1 ends 3000)
    _res, events, slices = run(
        tmp_path,
        {
            "StringIds": STRINGS,
            "CUPTI_ACTIVITY_KIND_KERNEL": [
                kernel(1000, 3000, 1, 100, stream=7),
                kernel(2000, 4000, 2, 100, stream=8),
                kernel(3000, 3500, 3, 100, stream=9),
            ],
            "CUPTI_ACTIVITY_KIND_RUNTIME": [
                api(100, 200, 1, 100, 101),
                api(300, 400, 2, 100, 101),
                api(500, 600, 3, 100, 101),
            ],
        },
    )
    core = sorted(
        (s["start_ns"] - EPOCH, s["track_name"]) for s in slices if s["cat"] == "kernel_core"
    )
    assert core == [
        (1000, "CUDA Core Timeline"),
        (2000, "CUDA Core Timeline #2"),
        (3000, "CUDA Core Timeline"),
    ]
    assert flows_by_cat(events) == {"launch": 3, "launch_core": 3}


def test_kernel_without_runtime_row(tmp_path):
    _res, events, slices = run(
        tmp_path,
        {
            "StringIds": STRINGS,
            "CUPTI_ACTIVITY_KIND_KERNEL": [kernel(1000, 2000, 77, 100)],
        },
    )
    cats = Counter(s["cat"] for s in slices)
    assert cats == {"kernel": 1, "kernel_core": 1}
    assert flows_by_cat(events) == {}


def test_gpu_start_before_api_returns_keeps_flow_monotonic(tmp_path):
    #  api:  [100 ...................... 5000)
    #  kern:       [1000 .. 1001)   (1 ns kernel, starts while the call runs)
    res, events, _slices = run(
        tmp_path,
        {
            "StringIds": STRINGS,
            "CUPTI_ACTIVITY_KIND_KERNEL": [kernel(1000, 1001, 1, 100)],
            "CUPTI_ACTIVITY_KIND_RUNTIME": [api(100, 5000, 1, 100, 101)],
        },
    )
    s = [e for e in events if e["ph"] == "s"]
    f = [e for e in events if e["ph"] == "f"]
    assert len(s) == len(f) == 2
    assert all(contract.ns(e["ts"]) + res.base_ns == EPOCH + 101 for e in s)
    assert all(contract.ns(e["ts"]) + res.base_ns == EPOCH + 1000 for e in f)


def test_missing_string_ids_give_stable_names(tmp_path):
    _res, _events, slices = run(
        tmp_path,
        {
            "CUPTI_ACTIVITY_KIND_KERNEL": [kernel(1000, 2000, 1, 100, name=42)],
            "CUPTI_ACTIVITY_KIND_RUNTIME": [api(100, 300, 1, 100, 101, name=43)],
        },
    )
    names = {s["cat"]: s["name"] for s in slices}
    assert names["kernel"] == "kernel#42" and names["cuda_api"] == "cudaApi#43"
