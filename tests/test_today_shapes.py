"""Shapes of today's captures that the real data has too few of, on small
synthetic exports with Nsight's column types (conftest.make_export): CUDA
graphs in graph-level trace mode, GPU-side synchronization records, timed
CUDA events, batched memcpy rows, unclosed NVTX ranges, NVTX stacks deeper
than Perfetto keeps, non-normalized and --ts-shift'ed times, schema versions.

Every trace these tests write is also loaded into Perfetto's importer
(conftest), which must report no error or data loss and the same slice and
flow counts.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

import contract
from conftest import EPOCH, gtid, load_events, make_export
from nsys_duck.convert import Options, convert
from nsys_duck.errors import NsysDuckError

STRINGS = [
    {"id": 1, "value": "cudaLaunchKernel_v7000"},
    {"id": 2, "value": "kA"},
    {"id": 4, "value": "cudaGraphLaunch_v10000"},
    {"id": 5, "value": "cudaStreamSynchronize_v3020"},
    {"id": 7, "value": "cudaEventSynchronize_v3020"},
    {"id": 8, "value": "cudaStreamWaitEvent_v3020"},
    {"id": 9, "value": "cudaDeviceSynchronize_v3020"},
    {"id": 10, "value": "cudaMemcpyBatchAsync_v12080"},
    {"id": 11, "value": "cudaEventRecord_v3020"},
]
NO_STREAM = 4294967295  # CUPTI_SYNCHRONIZATION_INVALID_VALUE


def kernel(start, end, corr, pid=100, device=0, stream=7, ctx=1, name=2, **extra):
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
        **extra,
    }


def api(start, end, corr, pid=100, tid=101, name=1):
    return {
        "start": EPOCH + start,
        "end": EPOCH + end,
        "eventClass": 0,
        "globalTid": gtid(pid, tid),
        "correlationId": corr,
        "nameId": name,
        "returnValue": 0,
    }


def graph_exec(start, end, corr, pid=100, device=0, stream=7, graph=1, exec_id=2):
    return {
        "start": EPOCH + start,
        "end": EPOCH + end,
        "deviceId": device,
        "contextId": 1,
        "greenContextId": 0,
        "streamId": stream,
        "correlationId": corr,
        "globalPid": gtid(pid),
        "graphId": graph,
        "graphExecId": exec_id,
    }


def sync(
    start, end, corr, pid=100, stream=NO_STREAM, event=NO_STREAM, sync_type=0, device=0, ctx=1
):
    return {
        "start": EPOCH + start,
        "end": EPOCH + end,
        "deviceId": device,
        "contextId": ctx,
        "streamId": stream,
        "correlationId": corr,
        "globalPid": gtid(pid),
        "syncType": sync_type,
        "eventId": event,
    }


def push_pop(start, end, text, pid=100, tid=101, domain=0):
    return {
        "start": EPOCH + start,
        "end": None if end is None else EPOCH + end,
        "eventType": 59,
        "text": text,
        "globalTid": gtid(pid, tid),
        "domainId": domain,
    }


def convert_checked(tmp_path, tables, **opts):
    """Convert a synthetic export (validator on) and check the contract."""
    export = make_export(tmp_path / "synthetic" / "parquet", tables)
    res = convert(export, Options(**opts), root=tmp_path / "ws")
    events = load_events(res)
    slices = contract.slices_table(res.workspace.events_parquet)
    assert contract.partial_overlaps([s for s in slices if s["ph"] != "b"]) == []
    assert contract.unnamed_tracks(events) == []
    assert contract.bad_ids(events) == []
    assert contract.flow_problems(events, slices, res.base_ns) == []
    return res, events, slices


def flow_pairs(events):
    """flow cat -> list of (s event, f event)."""
    by_id = defaultdict(dict)
    for e in events:
        if e["ph"] in ("s", "f"):
            by_id[e["id"]][e["ph"]] = e
    out = defaultdict(list)
    for pair in by_id.values():
        out[pair["s"]["cat"]].append((pair["s"], pair["f"]))
    return out


# --- CUDA graphs -------------------------------------------------------------


def test_graph_level_trace_draws_each_execution_with_both_flows(tmp_path):
    """Graph-level mode: a cudaGraphLaunch has no KERNEL rows, one GRAPH_TRACE
    row; it is drawn on its stream and on the Core Timeline, with a launch and
    a launch_core flow, and an NVTX range around the launch projects onto it."""
    res, events, slices = convert_checked(
        tmp_path,
        {
            "StringIds": STRINGS,
            "CUPTI_ACTIVITY_KIND_KERNEL": [kernel(100, 200, 1)],
            "CUPTI_ACTIVITY_KIND_GRAPH_TRACE": [
                graph_exec(1000, 3000, 41),
                graph_exec(4000, 5000, 42, graph=3, exec_id=7),
            ],
            "CUPTI_ACTIVITY_KIND_RUNTIME": [
                api(10, 90, 1),
                api(500, 900, 41, name=4),
                api(3500, 3600, 42, name=4),
            ],
            "NVTX_EVENTS": [push_pop(400, 950, "step")],
        },
    )
    summary = dict(res.summary)
    assert summary["CUDA graph executions"] == 2
    assert summary["linked CUDA API launches"] == 3
    graphs = [s for s in slices if s["cat"] == "cuda_graph"]
    cores = [s for s in slices if s["cat"] == "cuda_graph_core"]
    assert sorted(s["name"] for s in graphs) == ["CUDA graph 1", "CUDA graph 3"]
    assert {s["track_name"] for s in graphs} == {"Stream 7 [pid 100 ctx 1]"}
    assert {s["track_name"] for s in cores} == {"CUDA Core Timeline"}
    assert sorted((s["start_ns"], s["end_ns"]) for s in cores) == sorted(
        (s["start_ns"], s["end_ns"]) for s in graphs
    )
    args = [e["args"] for e in events if e.get("cat") == "cuda_graph"]
    assert sorted((a["graphId"], a["graphExecId"], a["correlationId"]) for a in args) == [
        (1, 2, 41),
        (3, 7, 42),
    ]
    pairs = flow_pairs(events)
    launch_targets = Counter(contract.ns(f["ts"]) + res.base_ns for _, f in pairs["launch"])
    assert len(pairs["launch"]) == len(pairs["launch_core"]) == 3
    for s in graphs:  # each graph execution receives exactly one launch flow
        assert sum(1 for t in launch_targets if s["start_ns"] <= t < s["end_ns"]) == 1
    # the range around the first launch owns that execution
    projected = [s for s in slices if s["cat"] == "nvtx_kernel"]
    assert [(s["name"], s["start_ns"], s["end_ns"]) for s in projected] == [
        ("step", EPOCH + 1000, EPOCH + 3000)
    ]
    owned = [s for s in slices if s["cat"] == "cuda_graph" and s["nvtx_names"]]
    assert [s["nvtx_names"] for s in owned] == [["step"]]


# --- GPU-side synchronization ------------------------------------------------


def test_gpu_sync_records_named_by_kind_and_linked_to_their_call(tmp_path):
    """Each SYNCHRONIZATION row is drawn once on its context's CUDA Sync track,
    named by the kind CUPTI's filled ids give (the exported syncType number is
    deliberately wrong here, as in real exports), with a sync flow from its
    API call; calls with such a row are drawn even when their name is not in
    the sync list (event synchronize, stream wait event)."""
    res, events, slices = convert_checked(
        tmp_path,
        {
            "StringIds": STRINGS,
            "CUPTI_ACTIVITY_KIND_KERNEL": [kernel(100, 5000, 1)],
            "CUPTI_ACTIVITY_KIND_RUNTIME": [
                api(10, 90, 1),
                api(1000, 2000, 51, name=5),
                api(2100, 2200, 52, name=8),
                api(2300, 2600, 53, name=7),
                api(3000, 6000, 54, name=9),
            ],
            "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION": [
                sync(1010, 1990, 51, stream=7, sync_type=2),  # stream sync
                sync(2110, 2190, 52, stream=7, event=3, sync_type=3),  # stream wait event
                sync(2310, 2590, 53, event=3, sync_type=2),  # event sync
                sync(3010, 5990, 54, sync_type=1),  # context sync
                sync(7000, 7100, 99, sync_type=4),
            ],  # no API row
        },
    )
    summary = dict(res.summary)
    assert summary["GPU-side synchronization rows"] == 5
    assert summary["sync flows"] == 4
    assert summary["GPU-side synchronization rows without their API call"] == 1
    assert summary["CUDA synchronization calls"] == 4
    gpu_sync = sorted(
        (s["start_ns"] - EPOCH, s["name"], s["track_name"])
        for s in slices
        if s["cat"] == "gpu_sync"
    )
    track = "CUDA Sync [pid 100 ctx 1]"
    assert gpu_sync == [
        (1010, "Stream sync", track),
        (2110, "Stream wait sync", track),
        (2310, "Event sync", track),
        (3010, "Context sync", track),
        (7000, "Context sync", track),
    ]
    calls = sorted((s["name"], s["cat"]) for s in slices if s["cat"] == "cuda_sync")
    assert calls == [
        ("cudaDeviceSynchronize", "cuda_sync"),
        ("cudaEventSynchronize", "cuda_sync"),
        ("cudaStreamSynchronize", "cuda_sync"),
        ("cudaStreamWaitEvent", "cuda_sync"),
    ]
    exported = {
        e["args"]["correlationId"]: (
            e["args"]["exportedSyncType"],
            e["args"].get("streamId"),
            e["args"].get("eventId"),
        )
        for e in events
        if e.get("cat") == "gpu_sync"
    }
    assert exported[51] == (2, 7, None) and exported[52] == (3, 7, 3)
    # the CUDA Sync track comes right after the context's stream tracks
    order = [
        e["args"]["name"]
        for e in sorted(
            (e for e in events if e["ph"] == "M" and e["name"] == "thread_name"),
            key=lambda e: e["tid"],
        )
    ]
    assert order.index(track) == order.index("Stream 7 [pid 100 ctx 1]") + 1


def test_without_string_ids_sync_calls_are_found_by_their_gpu_rows(tmp_path):
    """No StringIds: names fall back to numbers (summary says so) and the
    synchronizing calls are still drawn, found by their SYNCHRONIZATION rows."""
    res, _events, slices = convert_checked(
        tmp_path,
        {
            "CUPTI_ACTIVITY_KIND_KERNEL": [kernel(100, 5000, 1)],
            "CUPTI_ACTIVITY_KIND_RUNTIME": [
                api(10, 90, 1),
                api(1000, 2000, 51, name=5),
                api(2500, 2600, 60, name=9),
            ],
            "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION": [sync(1010, 1990, 51, stream=7)],
        },
    )
    summary = dict(res.summary)
    assert summary["CUDA synchronization calls"] == 1
    assert [s["name"] for s in slices if s["cat"] == "cuda_sync"] == ["cudaApi#5"]
    fell_back = {
        m: v for m, v in summary.items() if m.startswith("no StringIds table, names as ids: ")
    }
    assert len(fell_back) == 2, summary  # kernel names and API names
    assert any("CUDA API names" in m and v == 3 for m, v in fell_back.items())


def test_without_string_ids_every_call_is_drawn(tmp_path):
    """No StringIds: a call that is cudaDeviceSynchronize (nameId 9) but has
    no SYNCHRONIZATION row cannot be told from any other call; it is still
    drawn (cat cuda_api, named by its id), like every call without GPU work
    under every device of its process, primary once. A driver call inside
    it goes to a lane of the thread's CUDA API track."""
    res, events, slices = convert_checked(
        tmp_path,
        {
            "CUPTI_ACTIVITY_KIND_KERNEL": [
                kernel(100, 5000, 1, device=0),
                kernel(200, 4000, 2, device=1),
            ],
            "CUPTI_ACTIVITY_KIND_RUNTIME": [
                api(10, 40, 1),
                api(50, 90, 2),
                api(1000, 2000, 51, name=9),
                {**api(1100, 1200, 52, name=12), "eventClass": 1},
            ],
        },
    )
    assert dict(res.summary)["CUDA API calls"] == 4
    devices = {
        e["pid"]
        for e in events
        if e["ph"] == "M" and e["name"] == "process_name" and e["args"]["name"].startswith("Device")
    }
    drawn = [s for s in slices if s["name"] == "cudaApi#9"]
    assert {s["cat"] for s in drawn} == {"cuda_api"}
    assert {s["pid"] for s in drawn} == devices and len(devices) == 2
    assert sum(s["is_primary"] for s in drawn) == 1
    assert {s["track_name"] for s in drawn} == {"CUDA API [pid 100 tid 101]"}
    driver = [s for s in slices if s["name"] == "cudaApi#12"]
    assert len(driver) == 2 and {s["track_name"] for s in driver} == {
        "CUDA API [pid 100 tid 101] #2"
    }


# --- CUDA events, batched copies ---------------------------------------------


def test_timed_cuda_events_are_instants_untimed_ones_counted(tmp_path):
    res, events, slices = convert_checked(
        tmp_path,
        {
            "StringIds": STRINGS,
            "CUPTI_ACTIVITY_KIND_KERNEL": [kernel(100, 200, 1)],
            "CUPTI_ACTIVITY_KIND_RUNTIME": [api(10, 90, 1)],
            "CUPTI_ACTIVITY_KIND_CUDA_EVENT": [
                {
                    "deviceId": 0,
                    "contextId": 1,
                    "streamId": 7,
                    "correlationId": 5,
                    "globalPid": gtid(100),
                    "eventId": 1,
                    "timestamp": EPOCH + 150,
                    "eventSyncId": 1,
                },
                {
                    "deviceId": 0,
                    "contextId": 1,
                    "streamId": 9,
                    "correlationId": 6,
                    "globalPid": gtid(100),
                    "eventId": 2,
                    "timestamp": EPOCH + 300,
                    "eventSyncId": 2,
                },
                {
                    "deviceId": 0,
                    "contextId": 1,
                    "streamId": 7,
                    "correlationId": 7,
                    "globalPid": gtid(100),
                    "eventId": 3,
                    "timestamp": 0,
                    "eventSyncId": 3,
                },
            ],
        },
    )
    summary = dict(res.summary)
    assert summary["CUDA event records"] == 2
    assert summary["CUDA event rows without a timestamp (not drawn)"] == 1
    instants = sorted(
        (s["start_ns"] - EPOCH, s["track_name"], s["ph"])
        for s in slices
        if s["cat"] == "cuda_event"
    )
    assert instants == [
        (150, "Stream 7 [pid 100 ctx 1]", "i"),
        (300, "Stream 9 [pid 100 ctx 1]", "i"),
    ]
    ev = [e for e in events if e.get("cat") == "cuda_event"]
    assert {e["ph"] for e in ev} == {"i"} and {e["s"] for e in ev} == {"t"}
    assert sorted(e["args"]["eventId"] for e in ev) == [1, 2]


def test_batched_memcpy_row_is_never_called_one_copy(tmp_path):
    res, events, slices = convert_checked(
        tmp_path,
        {
            "StringIds": STRINGS,
            "CUPTI_ACTIVITY_KIND_MEMCPY": [
                {
                    "start": EPOCH + 100,
                    "end": EPOCH + 900,
                    "deviceId": 0,
                    "contextId": 1,
                    "streamId": 7,
                    "correlationId": 3,
                    "globalPid": gtid(100),
                    "bytes": 4096,
                    "copyKind": 1,
                    "copyCount": 4,
                },
                {
                    "start": EPOCH + 1000,
                    "end": EPOCH + 1100,
                    "deviceId": 0,
                    "contextId": 1,
                    "streamId": 7,
                    "correlationId": 4,
                    "globalPid": gtid(100),
                    "bytes": 64,
                    "copyKind": 2,
                    "copyCount": 1,
                },
            ],
            "CUPTI_ACTIVITY_KIND_RUNTIME": [api(10, 95, 3, name=10), api(990, 1000, 4, name=10)],
        },
    )
    summary = dict(res.summary)
    assert summary["memcpy H2D"] == 1 and summary["memcpy D2H"] == 1
    assert summary["memcpy rows standing for a batch (copyCount > 1)"] == 1
    assert summary["copies in those batched memcpy rows"] == 4
    names = sorted({s["name"] for s in slices if s["cat"] == "memcpy"})
    assert names == [
        "[CUDA memcpy Device-to-Host]",
        "[CUDA memcpy Host-to-Device] (batch of 4 copies)",
    ]
    counts = sorted(e["args"]["copyCount"] for e in events if e.get("cat") == "memcpy")
    assert counts == [1, 4]


# --- NVTX: unclosed ranges, depth --------------------------------------------


def test_unclosed_range_ends_where_its_parent_ends(tmp_path):
    """An inner push without a pop whose parent closed: it ends where the
    parent ends (the parent is untouched); an outermost unclosed range ends at
    the capture end. Both are counted and marked in args."""
    res, events, slices = convert_checked(
        tmp_path,
        {
            "StringIds": STRINGS,
            "NVTX_EVENTS": [
                push_pop(0, 1000, "outer"),
                push_pop(200, None, "lost"),
                push_pop(300, 400, "inner"),
                push_pop(2000, None, "tail"),
                push_pop(2500, 3000, "last"),
            ],
        },
    )
    summary = dict(res.summary)
    assert summary[next(m for m in summary if m.startswith("unclosed NVTX ranges"))] == 2
    got = {
        s["name"]: (s["start_ns"] - EPOCH, s["end_ns"] - EPOCH)
        for s in slices
        if s["cat"] == "nvtx"
    }
    assert got == {
        "outer": (0, 1000),
        "lost": (200, 1000),
        "inner": (300, 400),
        "tail": (2000, 3000),
        "last": (2500, 3000),
    }
    unclosed = sorted(
        e["name"]
        for e in events
        if e.get("cat") == "nvtx" and e["ph"] == "B" and e["args"].get("unclosed")
    )
    assert unclosed == ["lost", "tail"]


def test_stacks_deeper_than_perfetto_keeps_continue_on_named_tracks(tmp_path):
    """1,200 nested push/pop ranges (and the projections of a launch inside
    all of them): depths 0-499 stay on the track, 500-999 and 1000-1199 go to
    continuation tracks placed right after it; times unchanged."""
    depth = 1200
    nvtx = [push_pop(i, 100_000 - i, f"r{i}") for i in range(depth)]
    res, events, slices = convert_checked(
        tmp_path,
        {
            "StringIds": STRINGS,
            "CUPTI_ACTIVITY_KIND_KERNEL": [kernel(60_000, 61_000, 1)],
            "CUPTI_ACTIVITY_KIND_RUNTIME": [api(50_000, 50_100, 1)],
            "NVTX_EVENTS": nvtx,
        },
    )
    summary = dict(res.summary)
    assert summary["tracks continued past Perfetto's depth limit (512 levels)"] == 4
    base = "NVTX Thread [pid 100 tid 101]"
    by_track = Counter(s["track_name"] for s in slices if s["cat"] == "nvtx")
    assert by_track == {
        base: 500,
        f"{base} (depth 501-1000)": 500,
        f"{base} (depth 1001-1500)": 200,
    }
    kernel_tracks = Counter(s["track_name"] for s in slices if s["cat"] == "nvtx_kernel")
    kbase = "NVTX Kernel [pid 100 tid 101]"
    assert kernel_tracks == {
        kbase: 500,
        f"{kbase} (depth 501-1000)": 500,
        f"{kbase} (depth 1001-1500)": 200,
    }
    # times unchanged: range i keeps [i, 100000 - i)
    for s in slices:
        if s["cat"] == "nvtx":
            i = int(s["name"][1:])
            assert (s["start_ns"] - EPOCH, s["end_ns"] - EPOCH) == (i, 100_000 - i)
    # continuation tracks sit right after the track they continue
    tids = {
        e["args"]["name"]: e["tid"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"
    }
    assert tids[f"{base} (depth 501-1000)"] == tids[base] + 1
    assert tids[f"{base} (depth 1001-1500)"] == tids[base] + 2


# --- time base ---------------------------------------------------------------

SESSION_REL = [
    {"name": "EXPORT_PRODUCT_VERSION", "value": "2025.5.2.266"},
    {"name": "EXPORT_SCHEMA_VERSION", "value": "3.24.0"},
    {"name": "EXPORT_PARAM_TIME_NORMALIZE", "value": "false"},
    {"name": "EXPORT_PARAM_TIME_SHIFT", "value": "0"},
    {"name": "EXPORT_CONFIG_TIME_SHIFT", "value": "0"},
]


def _relative(rows, shift):
    out = []
    for r in rows:
        r = dict(r)
        for k in ("start", "end", "timestamp"):
            if r.get(k):
                r[k] = r[k] - EPOCH + shift
        out.append(r)
    return out


def _tables():
    return {
        "StringIds": STRINGS,
        "CUPTI_ACTIVITY_KIND_KERNEL": [kernel(5_000_000, 5_001_234, 1)],
        "CUPTI_ACTIVITY_KIND_RUNTIME": [api(4_999_000, 4_999_900, 1)],
        "NVTX_EVENTS": [push_pop(4_000_000, 6_000_000, "step")],
    }


def test_session_relative_export_gives_the_normalized_trace(tmp_path):
    """Times without --ts-normalize are session-relative; adding
    TARGET_INFO_SESSION_START_TIME gives the same trace as the normalized
    export: same base_ns, same absolute ns, same JSON."""
    norm, norm_events, norm_slices = convert_checked(tmp_path / "n", _tables())
    rel_tables = {k: _relative(v, 0) if k != "StringIds" else v for k, v in _tables().items()}
    rel_tables["META_DATA_EXPORT"] = SESSION_REL
    rel, rel_events, rel_slices = convert_checked(tmp_path / "r", rel_tables)
    assert rel.base_ns == norm.base_ns

    def strip(rows):
        return sorted(
            tuple(sorted((k, str(v)) for k, v in r.items() if k != "slice_id")) for r in rows
        )

    assert strip(rel_slices) == strip(norm_slices)

    def canon(evs):
        return sorted(repr(sorted(e.items())) for e in evs)

    assert canon(rel_events) == canon(norm_events)


@pytest.mark.parametrize("shift_ns", [-5_000_000_000_000, 60 * 86_400 * 10**9])
def test_ts_shift_far_from_the_session_start_keeps_times_exact(tmp_path, shift_ns):
    """--ts-shift moves the events away from the (unshifted) session start:
    the base comes from the events, every JSON time is in [0, 2^42) us and
    ns-exact against the export's own values."""
    tables = {
        k: _relative(v, EPOCH + shift_ns) if k != "StringIds" else v for k, v in _tables().items()
    }
    tables["META_DATA_EXPORT"] = [
        {"name": "EXPORT_PARAM_TIME_NORMALIZE", "value": "true"},
        {"name": "EXPORT_PARAM_TIME_SHIFT", "value": str(shift_ns)},
        {"name": "EXPORT_CONFIG_TIME_SHIFT", "value": str(EPOCH + shift_ns)},
    ]
    res, events, slices = convert_checked(tmp_path, tables)
    first = EPOCH + shift_ns + 4_000_000
    assert res.base_ns == first - first % 10**9
    kernels = [(s["start_ns"], s["end_ns"]) for s in slices if s["cat"] == "kernel"]
    assert kernels == [(EPOCH + shift_ns + 5_000_000, EPOCH + shift_ns + 5_001_234)]
    for e in events:
        if "ts" in e:
            assert 0 <= contract.ns(e["ts"]) < 2**42 * 1000
    assert all(
        contract.ns(e["ts"]) + res.base_ns in (s for k in kernels for s in k)
        for e in events
        if e.get("cat") == "kernel"
    )


def test_negative_times_floor_to_the_second_below(tmp_path):
    """A shift that makes times negative: base_ns rounds toward minus
    infinity, so every ts stays >= 0 (no "-561127.-31")."""
    shift = -(EPOCH + 2_500_000_000)
    tables = {
        k: _relative(v, EPOCH + shift) if k != "StringIds" else v for k, v in _tables().items()
    }
    tables["META_DATA_EXPORT"] = [
        {"name": "EXPORT_PARAM_TIME_NORMALIZE", "value": "true"},
        {"name": "EXPORT_PARAM_TIME_SHIFT", "value": str(shift)},
    ]
    res, events, _ = convert_checked(tmp_path, tables)
    assert res.base_ns == -3_000_000_000
    assert all(contract.ns(e["ts"]) >= 0 for e in events if "ts" in e)


# --- schema versions ---------------------------------------------------------


def _meta(version, nsys="2027.1.1.1"):
    return [
        {"name": "EXPORT_PRODUCT_VERSION", "value": nsys},
        {"name": "EXPORT_SCHEMA_VERSION", "value": version},
        {"name": "EXPORT_PARAM_TIME_NORMALIZE", "value": "true"},
    ]


def test_another_schema_major_version_is_refused_with_one_sentence(tmp_path):
    tables = _tables()
    tables["META_DATA_EXPORT"] = _meta("4.0.1")
    export = make_export(tmp_path / "synthetic" / "parquet", tables)
    with pytest.raises(NsysDuckError) as info:
        convert(export, Options(), root=tmp_path / "ws")
    assert str(info.value) == (
        "the export has schema version 4.0.1 (made by Nsight Systems 2027.1.1.1); "
        "nsys-duck reads export schema 3.x, what Nsight Systems 2023 to 2026 write"
    )
    assert not (tmp_path / "ws" / "synthetic").exists()


def test_newer_schema_minor_converts_with_a_note(tmp_path):
    tables = _tables()
    tables["META_DATA_EXPORT"] = _meta("3.31.2")
    res, _, _ = convert_checked(tmp_path, tables)
    info = res.export_info
    assert (info["nsys_version"], info["schema_version"], info["schema_minor"]) == (
        "2027.1.1.1",
        "3.31.2",
        31,
    )
    assert info["schema_note"] == (
        "export schema 3.31.2 is newer than the newest nsys-duck was checked with (3.25); "
        "converted anyway, tables and columns it added are not drawn"
    )
    # a checked version has no note, and the newer columns its schema predates
    # are not reported missing
    tables["META_DATA_EXPORT"] = _meta("3.7.2", nsys="2023.4.4.54")
    res, _, _ = convert_checked(tmp_path / "old", tables)
    assert res.export_info["schema_note"] is None
    missing = dict(res.summary).get("export columns missing (read as NULL)", "")
    assert "copyCount" not in missing and "clusterX" not in missing


def test_newer_kernel_columns_in_args_and_green_context_zero_is_none(tmp_path):
    """graphId and cluster dimensions (schema 3.23+) appear in a kernel's args
    when set; greenContextId 0 (newer exports) and NULL (older ones) both
    mean none: one stream track either way, no greenContextId arg."""
    _res, events, slices = convert_checked(
        tmp_path,
        {
            "StringIds": STRINGS,
            "CUPTI_ACTIVITY_KIND_KERNEL": [
                kernel(
                    100,
                    200,
                    1,
                    graphId=5,
                    clusterX=2,
                    clusterY=1,
                    clusterZ=1,
                    greenContextId=0,
                    graphNodeId=0,
                ),
                kernel(300, 400, 2, greenContextId=None, clusterX=0, graphId=0),
                kernel(500, 600, 3, greenContextId=9),
            ],
            "CUPTI_ACTIVITY_KIND_RUNTIME": [api(10, 90, 1), api(210, 290, 2), api(410, 490, 3)],
        },
    )
    args = {e["args"]["correlationId"]: e["args"] for e in events if e.get("cat") == "kernel"}
    assert args[1]["graphId"] == 5 and args[1]["cluster"] == [2, 1, 1]
    assert "graphNodeId" not in args[1] and "greenContextId" not in args[1]
    assert "graphId" not in args[2] and "cluster" not in args[2]
    assert args[3]["greenContextId"] == 9
    assert {s["track_name"] for s in slices if s["cat"] == "kernel"} == {"Stream 7 [pid 100 ctx 1]"}
