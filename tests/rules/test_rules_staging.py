"""Rules of the staging views (sql/20_staging): Nsight rows, with Nsight's
column types (the stand-ins of sql/10_sources), in; the typed, epoch-ns,
named rows of the views' headers out."""

from __future__ import annotations

import pytest
import sql_rules

from nsys_duck import pipeline

KERNEL = "nsys.CUPTI_ACTIVITY_KIND_KERNEL"
MEMCPY = "nsys.CUPTI_ACTIVITY_KIND_MEMCPY"
RUNTIME = "nsys.CUPTI_ACTIVITY_KIND_RUNTIME"
NVTX = "nsys.NVTX_EVENTS"
EPOCH = 1_700_000_000_000_000_000
T56 = (1 << 48) | (5 << 24) | 6  # globalTid of pid 5, tid 6


# Each staging view that drops rows reads its rows view (_stg_*_rows: every
# Nsight row with its skip_reason); the rows view's file runs first, over
# the Nsight rows given, then the view's.
ROWS_VIEWS = {
    "stg_kernels": "_stg_kernel_rows",
    "stg_memcpys": "_stg_memcpy_rows",
    "stg_memsets": "_stg_memset_rows",
    "stg_graph_executions": "_stg_graph_execution_rows",
    "stg_gpu_syncs": "_stg_gpu_sync_rows",
    "stg_runtime_calls": "_stg_runtime_call_rows",
    "stg_nvtx_events": "_stg_nvtx_event_rows",
    "stg_cpu_calls": "_stg_cpu_call_rows",
    "stg_sched_events": "_stg_sched_event_rows",
}


def view_rows(view: str, given=None, columns: str | None = None, options=None):
    """sql_rules.view_rows, through the view's rows view when it has one."""
    if view not in ROWS_VIEWS:
        return sql_rules.view_rows(view, given, columns, options=options)
    # stg_enum_labels runs after the rows views: empty unless given
    con = sql_rules.run_view(
        ROWS_VIEWS[view], {"stg_enum_labels": [], **(given or {})}, options=options
    )
    try:
        ctx = pipeline.Context(sql_rules.standin_columns(), dict(options or {}))
        target = sql_rules.stage_files()[sql_rules.creator_index()[view]]
        pipeline.run_pipeline(con, [target], ctx)
        return sql_rules.rows(con, view, columns)
    finally:
        con.close()


def gtid(pid: int, tid: int = 0) -> int:
    return (1 << 48) | (pid << 24) | tid


def offset(ns: int = 0) -> dict:
    """stg_export_info with time_offset_ns = ns."""
    return {"stg_export_info": [{"time_offset_ns": ns, "time_normalized": ns == 0}]}


# --- stg_export_info ---------------------------------------------------------


def export_info(meta: dict[str, str], session: int | None = EPOCH, first_kernel=None):
    given = {
        "nsys.META_DATA_EXPORT": [{"name": k, "value": v} for k, v in meta.items()],
        "nsys.TARGET_INFO_SESSION_START_TIME": [] if session is None else [{"utcEpochNs": session}],
    }
    if first_kernel is not None:
        given[KERNEL] = [{"start": first_kernel, "end": first_kernel + 1, "deviceId": 0}]
    return view_rows(
        "stg_export_info", given, "time_normalized, time_offset_ns, time_note IS NOT NULL"
    )


def test_normalized_export_has_no_offset():
    assert export_info({"EXPORT_PARAM_TIME_NORMALIZE": "true"}) == [(True, 0, False)]


def test_session_relative_export_adds_the_session_start():
    assert export_info({"EXPORT_PARAM_TIME_NORMALIZE": "false"}) == [(False, EPOCH, False)]


def test_relative_export_without_session_start_keeps_its_times_and_says_so():
    assert export_info({"EXPORT_PARAM_TIME_NORMALIZE": "false"}, session=None) == [(False, 0, True)]


@pytest.mark.parametrize(("first", "normalized"), [(5_000, False), (EPOCH + 5_000, True)])
def test_without_the_param_small_times_read_as_relative(first, normalized):
    out = export_info({}, first_kernel=first)
    assert out == [(normalized, 0 if normalized else EPOCH, False)]


def test_config_shift_past_the_ts_shift_means_normalized():
    meta = {"EXPORT_CONFIG_TIME_SHIFT": str(EPOCH + 7), "EXPORT_PARAM_TIME_SHIFT": "7"}
    assert export_info(meta, first_kernel=5) == [(True, 0, False)]


def test_another_schema_major_is_refused():
    from nsys_duck.errors import InputError

    with pytest.raises(InputError, match=r"schema version 4\.1"):
        view_rows(
            "stg_export_info",
            {"nsys.META_DATA_EXPORT": [{"name": "EXPORT_SCHEMA_VERSION", "value": "4.1.0"}]},
        )


def test_newer_schema_minor_converts_with_a_note():
    out = view_rows(
        "stg_export_info",
        {"nsys.META_DATA_EXPORT": [{"name": "EXPORT_SCHEMA_VERSION", "value": "3.99.0"}]},
        "schema_major, schema_minor, schema_note",
    )
    assert out[0][:2] == (3, 99) and "newer" in out[0][2]


# --- stg_kernels ---------------------------------------------------------------


def kernels(rows, strings=(), off=0, columns="start_ns, end_ns, short_name, demangled_name"):
    return view_rows(
        "stg_kernels",
        {
            KERNEL: rows,
            "nsys.StringIds": [{"id": i, "value": v} for i, v in strings],
            **offset(off),
        },
        columns,
    )


def test_kernel_times_get_the_offset_and_names_resolve():
    out = kernels(
        [{"start": 10, "end": 20, "deviceId": 0, "shortName": 1, "demangledName": 2}],
        strings=[(1, "k"), (2, "void k<int>()")],
        off=EPOCH,
    )
    assert out == [(EPOCH + 10, EPOCH + 20, "k", "void k<int>()")]


@pytest.mark.parametrize(
    ("row", "kept"),
    [
        ({"start": 1, "end": 1, "deviceId": 0}, True),  # 0 ns is drawn
        ({"start": 5, "end": 4, "deviceId": 0}, False),
        ({"start": 1, "end": 2, "deviceId": -1}, False),
    ],
)
def test_undrawable_kernels_are_left_out(row, kept):
    assert len(kernels([row])) == int(kept)


def test_kernel_name_fallbacks():
    out = kernels(
        [
            {"start": 1, "end": 2, "deviceId": 0, "shortName": 9},  # no such string
            {"start": 3, "end": 4, "deviceId": 0},  # no name at all
            {"start": 5, "end": 6, "deviceId": 0, "demangledName": 2},  # demangled only
        ],
        strings=[(2, "void f()")],
    )
    assert out == [
        (1, 2, "kernel#9", "kernel#9"),
        (3, 4, "[unnamed kernel]", "[unnamed kernel]"),
        (5, 6, "void f()", "void f()"),
    ]


def test_kernel_nul_in_name_is_dropped():
    out = kernels([{"start": 1, "end": 2, "deviceId": 0, "shortName": 1}], [(1, "a\x00b")])
    assert out[0][2] == "ab"


def test_kernel_ids_never_null_where_tracks_are_built():
    out = kernels(
        [
            {
                "start": 1,
                "end": 2,
                "deviceId": 3,
                "graphNodeId": 0,
                "greenContextId": 0,
                "globalPid": gtid(42),
            }
        ],
        columns="device_id, context_id, stream_id, os_pid, proc_key, graph_node_id, "
        "green_context_id",
    )
    assert out == [(3, 0, 0, 42, (1 << 24) | 42, None, None)]


def test_kernel_cluster_dims():
    out = kernels(
        [
            {"start": 1, "end": 2, "deviceId": 0, "clusterX": 2},
            {"start": 3, "end": 4, "deviceId": 0, "clusterX": 0},
        ],
        columns="start_ns, cluster_dims",
    )
    assert out == [(1, [2, 1, 1]), (3, None)]


# --- stg_memcpys / stg_memsets ---------------------------------------------------


def memcpys(rows, enum=(), columns="copy_kind, copy_kind_label, copy_projection"):
    return view_rows(
        "stg_memcpys",
        {
            MEMCPY: rows,
            **offset(),
            "nsys.ENUM_CUDA_MEMCPY_OPER": [{"id": i, "label": v} for i, v in enum],
        },
        columns,
    )


@pytest.mark.parametrize(
    ("kind", "projection"),
    [(1, "pcie"), (2, "pcie"), (8, "d2d"), (10, "d2d"), (9, "none"), (None, "none"), (99, "none")],
)
def test_memcpy_projection_by_kind(kind, projection):
    out = memcpys([{"start": 1, "end": 2, "deviceId": 0, "copyKind": kind}])
    assert out[0][2] == projection


def test_memcpy_label_prefers_the_exports_enum():
    out = memcpys(
        [
            {"start": 1, "end": 2, "deviceId": 0, "copyKind": 1},
            {"start": 1, "end": 2, "deviceId": 0, "copyKind": 2},
            {"start": 1, "end": 2, "deviceId": 0, "copyKind": 99},
        ],
        enum=[(1, "HtoD (enum)")],
    )
    assert out == [
        (1, "HtoD (enum)", "pcie"),
        (2, "Device-to-Host", "pcie"),
        (99, "Unknown", "none"),
    ]


def test_unified_migration_needs_no_stream_context_or_call():
    out = memcpys(
        [
            {"start": 1, "end": 2, "deviceId": 0, "copyKind": 11},
            {"start": 3, "end": 4, "deviceId": 0, "copyKind": 11, "streamId": 7},
            {"start": 5, "end": 6, "deviceId": 0, "copyKind": 1},
        ],
        columns="start_ns, is_unified_migration",
    )
    assert out == [(1, True), (3, False), (5, False)]


def test_memset_rows():
    out = view_rows(
        "stg_memsets",
        {
            "nsys.CUPTI_ACTIVITY_KIND_MEMSET": [
                {"start": 1, "end": 2, "deviceId": 0, "value": 0, "bytes": 64, "streamId": 7},
                {"start": 4, "end": 3, "deviceId": 0},
            ],
            **offset(100),
        },
        "start_ns, end_ns, stream_id, bytes, memset_value",
    )
    assert out == [(101, 102, 7, 64, 0)]


# --- stg_runtime_calls --------------------------------------------------------


def runtime(rows, strings, columns="api_name, api_base, is_sync"):
    return view_rows(
        "stg_runtime_calls",
        {RUNTIME: rows, "nsys.StringIds": [{"id": i, "value": v} for i, v in strings], **offset()},
        columns,
    )


def call(start, name_id, cls=0, corr=1, tid=T56):
    return {
        "start": start,
        "end": start + 1,
        "eventClass": cls,
        "globalTid": tid,
        "correlationId": corr,
        "nameId": name_id,
    }


def test_runtime_names_and_sync_calls():
    out = runtime(
        [call(1, 1), call(2, 2), call(3, 3, cls=1), call(4, 4)],
        [
            (1, "cudaLaunchKernel_v7000"),
            (2, "cudaStreamSynchronize_ptsz_v7000"),
            (3, "cuMemcpyHtoD_v2"),
            (4, "cudaDeviceSynchronize_v3020"),
        ],
    )
    assert out == [
        ("cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2", False),
        ("cudaDeviceSynchronize", "cudaDeviceSynchronize", True),
        ("cudaLaunchKernel", "cudaLaunchKernel", False),
        ("cudaStreamSynchronize_ptsz", "cudaStreamSynchronize", True),
    ]


def test_runtime_keeps_only_runtime_and_driver_classes():
    # class 67: the backtrace twin of a call (would double every link)
    out = runtime(
        [call(1, 1, cls=0), call(1, 1, cls=1), call(1, 1, cls=67)], [(1, "x")], "event_class"
    )
    assert out == [(0,), (1,)]


def test_runtime_correlation_zero_never_links_and_bad_rows_drop():
    rows = [
        call(1, 1, corr=0),
        call(2, 1, corr=9),
        {**call(3, 1), "end": 2},
        {**call(4, 1), "globalTid": None},
    ]
    out = runtime(rows, [(1, "cudaMalloc")], "start_ns, correlation_id, os_pid, os_tid")
    assert out == [(1, None, 5, 6), (2, 9, 5, 6)]


def test_runtime_without_string_names_by_id():
    out = runtime([call(1, 17)], [], "api_name, is_sync")
    assert out == [("cudaApi#17", False)]


# --- stg_nvtx_events ------------------------------------------------------------


def nvtx(rows, strings=(), columns="start_ns, end_ns, message, is_unclosed"):
    return view_rows(
        "stg_nvtx_events",
        {NVTX: rows, "nsys.StringIds": [{"id": i, "value": v} for i, v in strings], **offset()},
        columns,
    )


def rng(start, end, text="r", tid=T56, etype=59, **kw):
    return {"start": start, "end": end, "eventType": etype, "text": text, "globalTid": tid, **kw}


def test_nvtx_message_from_text_id_else_text_else_placeholder():
    out = nvtx(
        [rng(1, 2, "inline"), rng(3, 4, "ignored", textId=1), rng(5, 6, "")],
        strings=[(1, "registered")],
    )
    assert out == [(1, 2, "inline", False), (3, 4, "registered", False), (5, 6, "[unnamed]", False)]


def test_unclosed_range_ends_at_capture_end():
    out = nvtx([rng(1, None, "open"), rng(10, 50, "other", tid=gtid(5, 7))])
    assert (1, 50, "open", True) in out


def test_unclosed_range_never_outlives_its_closed_parent():
    out = nvtx([rng(0, 20, "parent"), rng(5, None, "child"), rng(30, 90, "late", tid=gtid(5, 7))])
    assert (5, 20, "child", True) in out


def test_unclosed_range_parent_must_share_thread_and_domain():
    out = nvtx(
        [
            rng(0, 20, "parent", domainId=3),
            rng(5, None, "child"),
            rng(30, 90, "late", tid=gtid(5, 7)),
        ]
    )
    assert (5, 90, "child", True) in out


def test_domain_names_are_per_process():
    out = nvtx(
        [
            {
                "start": 0,
                "end": None,
                "eventType": 75,
                "text": "mine",
                "globalTid": gtid(5, 6),
                "domainId": 3,
            },
            rng(1, 2, "a", domainId=3),
            rng(1, 2, "b", tid=gtid(8, 1), domainId=3),  # same id, other process
            rng(3, 4, "c"),
        ],
        columns="message, domain_name",
    )
    assert ("a", "mine") in out and ("b", "domain#3") in out and ("c", "default") in out


def test_nvtx_ids_follow_start_then_thread_then_longest_first():
    out = nvtx([rng(5, 6, "b"), rng(1, 9, "outer"), rng(1, 3, "inner")], columns="nvtx_id, message")
    assert out == [(1, "outer"), (2, "inner"), (3, "b")]


@pytest.mark.parametrize(
    ("payload", "json"),
    [
        ({"uint64Value": 7}, "7"),
        ({"uint64Value": 1 << 63}, '"9223372036854775808"'),
        ({"int64Value": -3}, "-3"),
        ({"doubleValue": float("nan")}, '"nan"'),
        ({"jsonText": '{"a":1}'}, '"{\\"a\\":1}"'),
        ({}, None),
    ],
)
def test_nvtx_payload_json(payload, json):
    out = nvtx([rng(1, 2, **payload)], columns="payload_json")
    assert out == [(json,)]


def test_nvtx_mark_has_no_end():
    out = nvtx([rng(3, None, "m", etype=34)], columns="nvtx_role, end_ns, is_unclosed")
    assert out == [("mark", None, False)]


# --- stg_gpu_syncs, stg_context_devices ---------------------------------------


def test_context_devices_from_work_and_context_info():
    out = view_rows(
        "stg_context_devices",
        {
            KERNEL: [{"start": 1, "end": 2, "deviceId": 1, "contextId": 4, "globalPid": gtid(5)}],
            "nsys.TARGET_INFO_CUDA_CONTEXT_INFO": [
                {"processId": 5, "contextId": 4, "deviceId": 9},  # known from work: not used
                {"processId": 5, "contextId": 6, "deviceId": 2},
            ],
        },
        "os_pid, context_id, device_id, proc_key IS NULL",
    )
    assert out == [(5, 4, 1, False), (5, 6, 2, True)]


@pytest.mark.parametrize(
    ("stream", "event", "name"),
    [
        (7, 3, "Stream wait sync"),
        (7, None, "Stream sync"),
        (None, 3, "Event sync"),
        (None, None, "Context sync"),
        (4294967295, -1, "Context sync"),
    ],
)
def test_gpu_sync_kind_from_the_ids_filled_in(stream, event, name):
    out = view_rows(
        "stg_gpu_syncs",
        {
            "nsys.CUPTI_ACTIVITY_KIND_SYNCHRONIZATION": [
                {
                    "start": 1,
                    "end": 2,
                    "deviceId": 0,
                    "streamId": stream,
                    "eventId": event,
                    "contextId": 1,
                    "globalPid": gtid(5),
                }
            ],
            **offset(),
        },
        "sync_name",
    )
    assert out == [(name,)]


def test_gpu_sync_device_comes_from_its_context():
    out = view_rows(
        "stg_gpu_syncs",
        {
            "nsys.CUPTI_ACTIVITY_KIND_SYNCHRONIZATION": [
                {"start": 1, "end": 2, "deviceId": 0, "contextId": 4, "globalPid": gtid(5)}
            ],
            "stg_context_devices": [
                {"proc_key": (1 << 24) | 5, "os_pid": 5, "context_id": 4, "device_id": 3}
            ],
            **offset(),
        },
        "exported_device_id, device_id",
    )
    assert out == [(0, 3)]


# --- stg_cpu_calls, stg_sched_events ---------------------------------------------


def test_cpu_calls_only_of_kept_sources():
    given = {
        "nsys.OSRT_API": [{"start": 1, "end": 2, "globalTid": gtid(5, 6), "nameId": 1}],
        "nsys.CUDNN_EVENTS": [{"start": 3, "end": 4, "globalTid": gtid(5, 6), "nameId": 9}],
        "nsys.StringIds": [{"id": 1, "value": "read"}],
        **offset(),
    }
    out = view_rows("stg_cpu_calls", given, "source, name")
    assert out == [("cudnn", "[unnamed call]"), ("osrt", "read")]
    out = view_rows("stg_cpu_calls", given, "source", options={"cpu_sources": ["osrt"]})
    assert out == [("osrt",)]


def test_sched_events_left_out_with_no_sched():
    given = {
        "nsys.SCHED_EVENTS": [{"start": 5, "cpu": 1, "isSchedIn": True, "globalTid": gtid(5, 6)}],
        **offset(10),
    }
    assert view_rows("stg_sched_events", given, "at_ns, os_tid") == [(15, 6)]
    assert view_rows("stg_sched_events", given, options={"cpu_sources": ["osrt"]}) == []
