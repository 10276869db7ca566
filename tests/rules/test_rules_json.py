"""Rules of the JSON event rows (sql/40_trace/30_trace_events_body.sql):
output-contract.md, Time (ts/dur exact decimal us from integer ns relative
to base_ns, never a float) and Events (a flow is one s and one f sharing an
integer id, cat and name, the f with "bp":"e"; an unplaceable flow is not
drawn), Text (strings through to_json)."""

from __future__ import annotations

import json
from decimal import Decimal

import sql_rules

BASE = 1_700_000_000_000_000_000


def events(given):
    given = {"trace_base": [{"base_ns": BASE, "first_ns": BASE}], **given}
    out = sql_rules.view_rows("trace_events_body", given, "event_json, ph")
    return [(json.loads(text, parse_float=Decimal), ph) for text, ph in out]


def x_slice(**kw):
    return {
        "slice_id": 1,
        "ph": "X",
        "cat": "kernel",
        "name": "k",
        "start_ns": BASE + 1_500,
        "end_ns": BASE + 2_501,
        "json_pid": 1,
        "json_tid": 3,
        "op_id": None,
        **kw,
    }


def test_complete_slice_times_are_exact_microseconds():
    ((ev, ph),) = events({"int_slices_on_tracks": [x_slice()]})
    assert ph == "X"
    assert ev["ts"] == Decimal("1.500") and ev["dur"] == Decimal("1.001")
    assert (ev["pid"], ev["tid"], ev["cat"], ev["name"]) == (1, 3, "kernel", "k")
    assert ev["args"] == {}


def test_times_past_a_doubles_exact_range_stay_exact():
    # 40 days after the base: 3.456e12 us, beyond a double's 3-decimal precision
    ns = 40 * 86_400 * 10**9 + 123_456_789
    ((text, _),) = sql_rules.view_rows(
        "trace_events_body",
        {
            "trace_base": [{"base_ns": BASE, "first_ns": BASE}],
            "int_slices_on_tracks": [x_slice(start_ns=BASE + ns, end_ns=BASE + ns + 1)],
        },
        "event_json, ph",
    )
    assert f'"ts":{ns // 1000}.{ns % 1000:03d}' in text
    assert "e+" not in text and "E+" not in text


def test_names_are_json_strings_with_control_characters_escaped():
    ((ev, _),) = events({"int_slices_on_tracks": [x_slice(name='a"b\nc\x1fé')]})
    assert ev["name"] == 'a"b\nc\x1fé'


def test_api_slice_args_are_built_from_the_call():
    ((ev, _),) = events(
        {
            "int_slices_on_tracks": [
                x_slice(
                    cat="cuda_api",
                    name="cudaMalloc",
                    call_id=4,
                    correlation_id=9,
                    api_full_name="cudaMalloc_v3020",
                    event_class=0,
                    return_value=2,
                )
            ]
        }
    )
    assert ev["args"] == {
        "correlationId": 9,
        "name": "cudaMalloc_v3020",
        "eventClass": "runtime",
        "returnValue": 2,
    }


def flow(placeable=True):
    return {
        "flow_id": 77,
        "flow_cat": "launch",
        "s_ns": BASE + 1_001,
        "f_ns": BASE + 3_000,
        "s_pid": 1,
        "s_tid": 9,
        "f_pid": 1,
        "f_tid": 3,
        "is_placeable": placeable,
        "api_start_ns": BASE + 1_000,
        "gpu_start_ns": BASE + 2_999,
    }


def test_a_flow_is_one_s_and_one_f_sharing_id_cat_and_name():
    out = events({"int_flows": [flow()]})
    by_ph = {ph: ev for ev, ph in out}
    assert set(by_ph) == {"s", "f"}
    s, f = by_ph["s"], by_ph["f"]
    assert s["id"] == f["id"] == 77
    assert s["cat"] == f["cat"] == s["name"] == f["name"] == "launch"
    assert f["bp"] == "e" and "bp" not in s
    assert s["ts"] == Decimal("1.001") and f["ts"] == Decimal("3")
    assert (s["tid"], f["tid"]) == (9, 3)


def test_an_unplaceable_flow_is_not_drawn():
    assert events({"int_flows": [flow(placeable=False)]}) == []


def test_metadata_names_homes_and_tracks_and_carries_the_base():
    out = events(
        {
            "int_homes": [{"json_pid": 2, "home_id": 0, "home_name": "Device 0: A100"}],
            "int_tracks": [{"json_pid": 2, "json_tid": 5, "track_name": "CUDA Core Timeline"}],
        }
    )
    metas = {(ev["name"], ev.get("tid")): ev["args"] for ev, ph in out if ph == "M"}
    assert metas[("process_name", None)] == {"name": "Device 0: A100", "epoch_ns": BASE}
    assert metas[("process_sort_index", None)] == {"sort_index": 2}
    assert metas[("thread_name", 5)] == {"name": "CUDA Core Timeline"}
    assert metas[("thread_sort_index", 5)] == {"sort_index": 5}


def test_instants_are_thread_scoped():
    ((ev, ph),) = events(
        {"int_slices_on_tracks": [x_slice(ph="i", cat="nvtx", name="mark", end_ns=BASE + 1_500)]}
    )
    assert ph == "i" and ev["s"] == "t" and "dur" not in ev
