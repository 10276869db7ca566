"""Rules of the shared scalar macros (sql/00_macros): each case is the
value the macro's comment and the output contract say it must give."""

from __future__ import annotations

import json

import pytest
import sql_rules

from nsys_duck.pipeline import created_objects


@pytest.fixture(scope="module")
def con():
    # any view's run has the macros; copy_kinds' file comes right after them
    c = sql_rules.run_view("copy_kinds")
    yield c
    c.close()


def value(con, expr: str):
    return con.execute(f"SELECT {expr}").fetchone()[0]


GTID = (1 << 48) | (4242 << 24) | 77  # VM id 1, pid 4242, tid 77


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (f"nsys_os_pid({GTID})", 4242),
        (f"nsys_os_tid({GTID})", 77),
        # the process key keeps the VM id: (1 << 24) | pid
        (f"nsys_proc_key({GTID})", (1 << 24) | 4242),
        # a globalPid (tid bits 0) has the same pid and key as its threads
        (f"nsys_os_pid({GTID - 77})", 4242),
        (f"nsys_proc_key({GTID - 77}) = nsys_proc_key({GTID})", True),
        # the top bits (hardware id) never leak into the pid
        (f"nsys_os_pid({(1 << 56) | (5 << 24)})", 5),
    ],
)
def test_global_id_parts(con, expr, expected):
    assert value(con, expr) == expected


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (0, "0"),
        (1000, "1"),
        (1, "0.001"),
        (999, "0.999"),
        (1500, "1.500"),
        (1001, "1.001"),
        (123_456_789, "123456.789"),
        # 2^42 us - 1 ns: the largest time Perfetto places exactly
        ((1 << 42) * 1000 - 1, f"{(1 << 42) - 1}.999"),
    ],
)
def test_json_us_is_exact_decimal_microseconds(con, ns, text):
    out = value(con, f"json_us({ns}::BIGINT)")
    assert out == text
    assert "e" not in out.lower()


@pytest.mark.parametrize(
    ("v", "text"),
    [
        ("0::UBIGINT", "0"),
        ("9223372036854775807::UBIGINT", "9223372036854775807"),
        # past int64: a JSON string, Perfetto would wrap the number
        ("9223372036854775808::UBIGINT", '"9223372036854775808"'),
        ("18446744073709551615::UBIGINT", '"18446744073709551615"'),
    ],
)
def test_json_uint64(con, v, text):
    assert value(con, f"json_uint64({v})") == text


@pytest.mark.parametrize(
    ("name", "unversioned", "base"),
    [
        ("cudaLaunchKernel_v7000", "cudaLaunchKernel", "cudaLaunchKernel"),
        ("cudaMemcpyAsync_ptsz_v7000", "cudaMemcpyAsync_ptsz", "cudaMemcpyAsync"),
        ("cudaStreamSynchronize_ptds", "cudaStreamSynchronize_ptds", "cudaStreamSynchronize"),
        # a driver API's real _v2 is part of its name
        ("cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2"),
        ("cuLaunchKernel", "cuLaunchKernel", "cuLaunchKernel"),
        ("cudaFree_v10000", "cudaFree", "cudaFree"),
    ],
)
def test_cuda_api_names(con, name, unversioned, base):
    assert value(con, f"cuda_api_unversioned('{name}')") == unversioned
    assert value(con, f"cuda_api_base('{name}')") == base


def test_clean_text_drops_nul_only(con):
    assert value(con, "clean_text('a' || chr(0) || 'b')") == "ab"
    assert value(con, "clean_text('é\tx')") == "é\tx"
    assert value(con, "clean_text(NULL) IS NULL") is True


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            "42, 'cudaLaunchKernel_v7000', 0, 0",
            {
                "correlationId": 42,
                "name": "cudaLaunchKernel_v7000",
                "eventClass": "runtime",
                "returnValue": 0,
            },
        ),
        # a member without a value is left out, never null
        ("NULL, 'cuCtxCreate_v2', 1, NULL", {"name": "cuCtxCreate_v2", "eventClass": "driver"}),
        (
            "7, 'cudaMalloc', 0, 2",
            {"correlationId": 7, "name": "cudaMalloc", "eventClass": "runtime", "returnValue": 2},
        ),
    ],
)
def test_cuda_api_args_json(con, args, expected):
    text = value(con, f"cuda_api_args_json({args})")
    assert json.loads(text) == expected
    assert "null" not in text


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        # the slice's own args first, then its GPU operation's, then an API call's
        ("'{\"a\":1}', '{\"b\":2}', 5, 9, 'cudaFree', 0, 0", {"a": 1}),
        ("NULL, '{\"b\":2}', 5, 9, 'cudaFree', 0, 0", {"b": 2}),
        (
            "NULL, NULL, 5, 9, 'cudaFree', 0, 0",
            {"correlationId": 9, "name": "cudaFree", "eventClass": "runtime", "returnValue": 0},
        ),
        # no call, no args: an empty object, never null
        ("NULL, NULL, NULL, 9, 'cudaFree', 0, 0", {}),
    ],
)
def test_slice_args_json(con, args, expected):
    assert json.loads(value(con, f"slice_args_json({args})")) == expected


def test_gpu_sync_args_json(con):
    full = value(con, "gpu_sync_args_json(9, 0, 1, 7, 3, 4, 2, 'Event sync')")
    assert full == (
        '{"correlationId":9,"deviceId":0,"contextId":1,"streamId":7,"eventId":3,'
        '"eventSyncId":4,"exportedSyncType":2,"exportedSyncTypeLabel":"Event sync"}'
    )
    # members without a value are left out; device and context always there
    bare = value(con, "gpu_sync_args_json(NULL, 0, 1, NULL, NULL, NULL, NULL, NULL)")
    assert bare == '{"deviceId":0,"contextId":1}'


def test_cuda_event_args_json(con):
    full = value(con, "cuda_event_args_json(9, 0, 1, 7, 3, 4)")
    assert full == (
        '{"correlationId":9,"deviceId":0,"contextId":1,"streamId":7,"eventId":3,"eventSyncId":4}'
    )
    assert value(con, "cuda_event_args_json(NULL, 0, 1, 7, NULL, NULL)") == (
        '{"deviceId":0,"contextId":1,"streamId":7}'
    )


def test_nvtx_args_json(con):
    full = value(
        con,
        "nvtx_args_json('app', 2, 'io', 4278190335, 11, 5, 6, TRUE, '{\"u64\":3}')",
    )
    assert full == (
        '{"domain":"app","category":2,"categoryName":"io","color":"#FF0000FF",'
        '"rangeId":11,"endTid":6,"unclosed":true,"payload":{"u64":3}}'
    )
    # same thread, closed, nothing optional: the domain alone (never null)
    assert value(con, "nvtx_args_json('default', NULL, NULL, NULL, NULL, 5, 5, FALSE, NULL)") == (
        '{"domain":"default"}'
    )
    assert value(con, "nvtx_args_json('d', NULL, NULL, 255, NULL, 5, NULL, FALSE, NULL)") == (
        '{"domain":"d","color":"#000000FF"}'
    )


def test_cpu_call_args_json(con):
    assert value(con, "cpu_call_args_json(-1, 2)") == '{"returnValue":-1,"nestingLevel":2}'
    assert value(con, "cpu_call_args_json(0, 0)") == '{"returnValue":0}'
    assert value(con, "cpu_call_args_json(NULL, 1)") == '{"nestingLevel":1}'
    assert value(con, "cpu_call_args_json(NULL, NULL)") == "{}"  # cuDNN, cuBLAS


def test_thread_state_args_json(con):
    assert value(con, "thread_state_args_json(TRUE, 3, 'Running')") == (
        '{"cpu":3,"threadState":"Running"}'
    )
    assert value(con, "thread_state_args_json(FALSE, 3, NULL)") == '{"previousCpu":3}'


def test_track_name_suffixes(con):
    assert value(con, "stream_track_suffix(7, 4242, 1)") == " 7 [pid 4242 ctx 1]"
    assert value(con, "thread_track_suffix(4242, 77, 'main')") == " [pid 4242 tid 77 main]"
    assert value(con, "thread_track_suffix(4242, 77, NULL)") == " [pid 4242 tid 77]"
    assert value(con, "host_thread_track_suffix(77, 'worker')") == " · worker [77]"
    assert value(con, "host_thread_track_suffix(77, NULL)") == " · [77]"


def test_track_depth_stays_below_perfettos_limit(con):
    # Perfetto keeps 512 nested slices per track (kMaxDepth)
    assert 0 < value(con, "track_depth_levels()") <= 512


@pytest.mark.parametrize(
    ("start", "end", "device", "reason"),
    [
        (1, 2, 0, None),
        (5, 5, 0, None),  # 0 ns: drawn
        (5, 4, 0, "end before start"),
        ("NULL", 4, 0, "NULL start or end"),
        (1, "NULL", 0, "NULL start or end"),
        (1, 2, -1, "negative deviceId"),  # never a Device -1
        (1, 2, "NULL", "NULL deviceId"),
        ("NULL", 2, "NULL", "NULL start or end"),  # the first reason that applies
        (5, 4, -1, "end before start"),
    ],
)
def test_nsys_gpu_row_skip_reason(con, start, end, device, reason):
    assert value(con, f"nsys_gpu_row_skip_reason({start}, {end}, {device})") == reason


@pytest.mark.parametrize(
    ("starts", "ts", "part"),
    [
        ("[]", 5, 1),
        ("[100, 200]", 99, 1),
        ("[100, 200]", 100, 2),  # a part starts at its first slice
        ("[100, 200]", 150, 2),
        ("[100, 200]", 200, 3),
        ("[100, 200]", 10_000, 3),
    ],
)
def test_trace_part_of(con, starts, ts, part):
    assert value(con, f"trace_part_of({starts}::BIGINT[], {ts})") == part


@pytest.mark.parametrize(
    ("ns", "bucket"),
    [
        (1000, 0),  # lo_ns: the first bucket
        (1009, 0),  # 10 ns a bucket (100 ns over 10 buckets)
        (1010, 1),
        (1099, 9),  # the last ns before hi_ns
        (999, 0),  # before lo_ns (clamped)
        (5000, 9),  # past hi_ns (clamped)
        ("NULL", None),  # metadata: no bucket, not bucket 0
    ],
)
def test_trace_size_bucket(con, ns, bucket):
    assert value(con, f"trace_size_bucket(1000, 1100, 10, {ns}::BIGINT)") == bucket


def test_every_macro_of_the_file_is_tested_here():
    """A new macro gets a rule test (this list names the ones above)."""
    tested = {
        "nsys_os_pid",
        "nsys_os_tid",
        "nsys_proc_key",
        "json_uint64",
        "json_us",
        "cuda_api_unversioned",
        "cuda_api_base",
        "clean_text",
        "cuda_api_args_json",
        "slice_args_json",
        "gpu_sync_args_json",
        "cuda_event_args_json",
        "nvtx_args_json",
        "cpu_call_args_json",
        "thread_state_args_json",
        "stream_track_suffix",
        "thread_track_suffix",
        "host_thread_track_suffix",
        "track_depth_levels",
        "nsys_gpu_row_skip_reason",
        "trace_part_of",
        "trace_size_bucket",
    }
    made = {
        name
        for f in sql_rules.stage_files()
        if f.relpath.startswith("00_macros/")
        for kind, name in created_objects(f.text)
        if kind == "macro"
    }
    assert made - tested == set(), "macros without a rule test"
