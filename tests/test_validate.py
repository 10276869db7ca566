"""Tests for nsys_duck.validate: each rule fires on a minimal bad trace and
on a real converted trace with one thing broken, and stays silent on good
ones.

Traces are built as lists of event dicts; times are written with
``Decimal`` so the JSON text has exactly the digits given (µs).
"""

from __future__ import annotations

import gzip
import itertools
import json
import random
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from nsys_duck import validate as v
from nsys_duck.validate import validate_trace

EPOCH = 1_796_005_040_000_000_000


def us(x) -> Decimal:
    """µs value written with exactly the given digits ("20.500" -> 20.500)."""
    return Decimal(str(x))


def enc(obj) -> str:
    """Compact JSON; Decimals are written as they are, non-ASCII raw."""
    if isinstance(obj, dict):
        return "{" + ",".join(json.dumps(k) + ":" + enc(x) for k, x in obj.items()) + "}"
    if isinstance(obj, list):
        return "[" + ",".join(enc(x) for x in obj) + "]"
    if isinstance(obj, Decimal):
        return str(obj)
    return json.dumps(obj, ensure_ascii=False)


def text(events) -> bytes:
    return enc(events).encode()


def write(tmp_path, payload, name="t.perfetto.json.gz", *, compress=True):
    """Write events (list) or raw JSON bytes, gzip'd by default."""
    data = payload if isinstance(payload, bytes) else text(payload)
    p = tmp_path / name
    p.write_bytes(gzip.compress(data) if compress else data)
    return p


def M(mname, pid, tid=None, **args):
    ev = {"ph": "M", "name": mname, "pid": pid}
    if tid is not None:
        ev["tid"] = tid
    ev["args"] = args
    return ev


def X(cat, name, pid, tid, ts, dur, **args):
    return {
        "ph": "X",
        "cat": cat,
        "name": name,
        "pid": pid,
        "tid": tid,
        "ts": us(ts),
        "dur": us(dur),
        "args": args,
    }


def flow(ph, cat, fid, pid, tid, ts):
    ev = {"ph": ph, "cat": cat, "name": cat, "id": fid, "pid": pid, "tid": tid, "ts": us(ts)}
    if ph == "f":
        ev["bp"] = "e"
    return ev


def names(pid, pname, threads):
    evs = [
        M("process_name", pid, name=pname, epoch_ns=EPOCH),
        M("process_sort_index", pid, sort_index=pid),
    ]
    for tid, tname in threads.items():
        evs += [
            M("thread_name", pid, tid, name=tname),
            M("thread_sort_index", pid, tid, sort_index=tid),
        ]
    return evs


def good_events():
    """Two devices; launch + launch_core flows, a copy flow, nested B/E, one b/e pair."""
    evs = names(
        1,
        "Device 0 NVIDIA H100",
        {1: "CUDA Core Timeline", 2: "Stream 7", 3: "NVTX Thread", 4: "CUDA API"},
    )
    evs += names(2, "Device 1", {1: "Stream 1", 2: "CUDA API"})
    evs += [
        X("cuda_api", "cudaLaunchKernel", 1, 4, "10.000", "5.000", correlationId=1),
        X("kernel", "gemm", 1, 2, "20.000", "10.000", correlationId=1, grid=[1, 1, 1]),
        X("kernel_core", "gemm", 1, 1, "20.000", "10.000", correlationId=1),
        flow("s", "launch", 1, 1, 4, "11.000"),
        flow("f", "launch", 1, 1, 2, "20.001"),
        flow("s", "launch_core", 2, 1, 4, "11.000"),
        flow("f", "launch_core", 2, 1, 1, "20.001"),
        {"ph": "B", "cat": "nvtx", "name": "outer", "pid": 1, "tid": 3, "ts": us("5.000")},
        {"ph": "B", "cat": "nvtx", "name": "inner", "pid": 1, "tid": 3, "ts": us("6.5")},
        {"ph": "E", "cat": "nvtx", "name": "inner", "pid": 1, "tid": 3, "ts": us("7.25")},
        {"ph": "E", "cat": "nvtx", "name": "outer", "pid": 1, "tid": 3, "ts": us(40)},
        {"ph": "b", "cat": "async", "name": "req", "pid": 1, "id2": {"local": 7}, "ts": us(1)},
        {"ph": "e", "cat": "async", "name": "req", "pid": 1, "id2": {"local": 7}, "ts": us(2)},
        X("cuda_api", "cudaMemcpyAsync", 2, 2, "10.000", "5.000", correlationId=9),
        X("memcpy", "HtoD", 2, 1, "20.000", "4.000", correlationId=9, bytes=4096),
        flow("s", "copy", 3, 2, 2, "12.000"),
        flow("f", "copy", 3, 2, 1, "20.001"),
    ]
    return evs


def run(tmp_path, events, **kw):
    return validate_trace(write(tmp_path, events), **kw)


def rules(rep):
    return set(rep.violation_counts)


def messages(rep, rule):
    return [x.message for x in rep.violations if x.rule == rule]


def patch(events, pred, **changes):
    """Copy events, applying changes to the first event matching pred."""
    out, done = [], False
    for ev in events:
        ev = dict(ev)
        if not done and pred(ev):
            for k, val in changes.items():
                if val is _DROP:
                    ev.pop(k, None)
                else:
                    ev[k] = val
            done = True
        out.append(ev)
    assert done, "patch matched nothing"
    return out


_DROP = object()


def is_(ph, cat=None, name=None):
    return lambda ev: (
        ev["ph"] == ph
        and (cat is None or ev.get("cat") == cat)
        and (name is None or ev.get("name") == name)
    )


def tracks(pid, tid, tname="T"):
    return names(pid, f"P{pid}", {tid: tname})


# --------------------------------------------------------------------------
# the good trace


def test_good_trace_is_clean(tmp_path):
    rep = run(tmp_path, good_events())
    assert rep.ok, rep.violations
    assert rep.violation_counts == {} and rep.violations == []
    assert rep.events == len(good_events())
    c = rep.counts
    assert c["ph:X"] == 5 and c["ph:s"] == 3 and c["ph:f"] == 3 and c["ph:M"] == 16
    assert c["cat:kernel"] == 1 and c["cat:launch"] == 2 and c["cat:nvtx"] == 4
    assert c["flows"] == 3 and c["slices"] == 7  # 5 X + 2 B/E
    assert c["processes"] == 2 and c["threads"] == 6


def test_missing_file_raises(tmp_path):
    with pytest.raises(FileNotFoundError):
        validate_trace(tmp_path / "nope.json.gz")


def test_tiny_chunks_same_result(tmp_path, monkeypatch):
    """Byte checks are correct across chunk boundaries (carry logic)."""
    monkeypatch.setattr(v, "READ_BLOCK", 7)
    monkeypatch.setattr(v, "OUT_CHUNK", 3)
    monkeypatch.setattr(v, "HOLD", 40)
    monkeypatch.setattr(v, "LOOKBEHIND", 5)
    assert run(tmp_path, good_events()).ok
    evs = good_events() + [
        X("x", "a\\\\ud800", 1, 2, 50, 1),  # escaped backslash: fine
        X("x", "b\\\\\\ud800", 1, 2, 60, 1),  # odd run: real escape
        X("x", "c", 1, 2, "70.000", 1),
        X("x", "d\x01", 1, 2, 80, 1),
    ]
    raw = (
        text(evs)
        .replace(b"a\\\\\\\\ud800", b"a\\\\ud800")
        .replace(b"b\\\\\\\\\\\\ud800", b"b\\\\\\ud800")
        .replace(b'"ts":70.000', b'"ts":  7000e-2')
        .replace(b"d\\u0001", b"d\x01")
    )
    assert raw.count(b"\x01") == 1 and b"7000e-2" in raw
    rep = validate_trace(write(tmp_path, raw))
    assert rep.violation_counts == {"string": 2, "number": 1}, rep.violations


# --------------------------------------------------------------------------
# gzip / json


def test_two_gzip_members(tmp_path):
    data = text(good_events())
    p = tmp_path / "two.json.gz"
    p.write_bytes(gzip.compress(data[:100]) + gzip.compress(data[100:]))
    rep = validate_trace(p)
    assert rules(rep) == {"gzip"}
    assert "more than one gzip member" in messages(rep, "gzip")[0]
    assert rep.events == len(good_events())  # the rest is still read


def test_not_gzip_corrupt_and_truncated(tmp_path):
    plain = write(tmp_path, good_events(), "plain.json.gz", compress=False)
    assert rules(validate_trace(plain)) == {"gzip"}

    blob = bytearray(gzip.compress(text(good_events())))
    blob[-8] ^= 0xFF  # CRC
    p = tmp_path / "crc.json.gz"
    p.write_bytes(bytes(blob))
    assert "gzip" in rules(validate_trace(p))

    p = tmp_path / "trunc.json.gz"
    p.write_bytes(bytes(blob[: len(blob) // 2]))
    rep = validate_trace(p)
    assert {"gzip", "json"} <= rules(rep)


def test_trailing_newline_after_array(tmp_path):
    rep = validate_trace(write(tmp_path, text(good_events()) + b"\n"))
    assert rules(rep) == {"json"}
    assert "after the closing ]" in messages(rep, "json")[0]


def test_json_shape(tmp_path):
    rep = validate_trace(write(tmp_path, b"\xef\xbb\xbf" + text(good_events())))
    assert "json" in rules(rep) and any("BOM" in m for m in messages(rep, "json"))

    rep = validate_trace(write(tmp_path, b'{"traceEvents":' + text(good_events()) + b"}"))
    assert "json" in rules(rep)

    rep = validate_trace(write(tmp_path, b"[]"))
    assert "json" in rules(rep)

    rep = validate_trace(write(tmp_path, b" " * 130 + text(good_events())))
    assert any("128" in m for m in messages(rep, "json"))

    rep = validate_trace(write(tmp_path, text(good_events())[:-1] + b",1]"))
    assert any("Expected OBJECT" in m for m in messages(rep, "json"))  # DuckDB's message

    rep = validate_trace(write(tmp_path, text(good_events()) + text(good_events())))
    assert any("Malformed JSON" in m for m in messages(rep, "json"))


# --------------------------------------------------------------------------
# numbers


TS_LITERALS = [  # (JSON text of ts, allowed)
    (b"1.5e3", False),
    (b"15e-1", False),
    (b"1E0", False),
    (b"1.0005", False),
    (b'"12.5"', False),
    (b"-1.000", False),
    (b"4398046511104", False),  # 2^42 µs
    (b"null", False),
    (b"4398046511103.999", True),
    (b"0", True),
    (b"1.5", True),
    (b"12.125", True),
    (b"7", True),
]


def test_ts_literals(tmp_path):
    evs = good_events()
    for i, _ in enumerate(TS_LITERALS):
        evs += names(5, "P5", {i + 1: f"t{i}"})[2 if i else 0 :]
        evs.append(X("x", f"probe{i}", 5, i + 1, f"777.{i:03d}", "0"))
    raw = text(evs)
    for i, (lit, _) in enumerate(TS_LITERALS):
        raw = raw.replace(b'"ts":777.%03d' % i, b'"ts":' + lit)
    rep = validate_trace(write(tmp_path, raw), max_examples=100)
    assert rules(rep) == {"number"}
    flagged = {int(x.event.split('"probe')[1].split('"')[0]) for x in rep.violations}
    assert flagged == {i for i, (_, ok) in enumerate(TS_LITERALS) if not ok}
    assert rep.violation_counts["number"] == len(flagged)


def test_number_other(tmp_path):
    evs = (
        good_events()
        + tracks(5, 1)
        + [
            {"ph": "X", "cat": "x", "name": "nodur", "pid": 5, "tid": 1, "ts": us(1)},
            X("x", "negdur", 5, 1, "3", "-1"),
            {"ph": "i", "name": "nots", "pid": 5, "tid": 1},
        ]
    )
    rep = run(tmp_path, evs)
    assert rules(rep) == {"number"} and rep.violation_counts["number"] == 3
    raw = text(good_events()).replace(b'"ts":11.000', b'"ts":NaN', 1)
    rep = validate_trace(write(tmp_path, raw))
    assert "number" in rules(rep) and any("NaN" in m for m in messages(rep, "number"))


# --------------------------------------------------------------------------
# strings


def test_surrogate_escape_vs_raw_emoji(tmp_path):
    raw_emoji = patch(good_events(), is_("X", "kernel"), name="gemm 😀")
    assert run(tmp_path, raw_emoji).ok

    escaped = text(good_events()).replace(b'"name":"gemm"', b'"name":"gemm \\ud83d\\ude00"', 1)
    rep = validate_trace(write(tmp_path, escaped))
    assert rules(rep) == {"string"}
    assert rep.violation_counts["string"] == 2  # both halves
    assert "surrogate" in messages(rep, "string")[0]


def test_escaped_backslash_is_not_an_escape(tmp_path):
    two = text(good_events()).replace(b'"name":"gemm"', b'"name":"gemm \\\\ud800"', 1)
    assert validate_trace(write(tmp_path, two)).ok
    three = text(good_events()).replace(b'"name":"gemm"', b'"name":"gemm \\\\\\ud800"', 1)
    assert rules(validate_trace(write(tmp_path, three))) == {"string"}


def test_nul_control_and_utf8(tmp_path):
    evs = good_events() + tracks(5, 1) + [X("x", f"n{i}", 5, 1, i, 0) for i in range(4)]
    raw = (
        text(evs)
        .replace(b'"n0"', b'"ge\\u0000mm"')
        .replace(b'"n1"', b'"ge\x01mm"')
        .replace(b'"n2"', b'"ge\xffmm"')
        .replace(b'"n3"', b'"ge\\u001fmm\\n\\t"')
    )  # escaped controls are fine
    rep = validate_trace(write(tmp_path, raw), max_examples=10)
    assert rep.violation_counts == {"string": 3}, rep.violations
    msgs = " | ".join(messages(rep, "string"))
    assert "u0000" in msgs and "0x01" in msgs and "UTF-8" in msgs

    for raw_ws in (b"\n", b"\t"):  # raw newline / tab inside a string stop the parser
        bad = text(good_events()).replace(b'"name":"gemm"', b'"name":"ge' + raw_ws + b'mm"', 1)
        rep = validate_trace(write(tmp_path, bad))
        assert {"string", "json"} <= rules(rep)
        assert any("tab, newline or CR" in m for m in messages(rep, "string"))


def test_bad_bytes_do_not_hide_the_rest(tmp_path):
    """Raw control bytes / bad UTF-8 are reported and replaced, so later
    events are still checked and example texts still resolve."""
    evs = good_events() + [be("E", "ghost", 50)]
    raw = text(evs).replace(b'"name":"gemm"', b'"name":"g\x01\xff\xfemm"', 1)
    rep = validate_trace(write(tmp_path, raw))
    assert rules(rep) == {"string", "be_balance"}, rep.violations
    assert rep.violation_counts["string"] == 3  # 0x01, 0xff, 0xfe
    ex = next(x for x in rep.violations if x.rule == "be_balance")
    assert ex.event and "ghost" in ex.event


# --------------------------------------------------------------------------
# ph, pid/tid, names, metadata


def test_bad_phase(tmp_path):
    rep = run(
        tmp_path,
        good_events()
        + [{"ph": "S", "pid": 1, "tid": 2, "ts": us(1)}, {"pid": 1, "tid": 2, "ts": us(2)}],
    )
    assert rules(rep) == {"ph"} and rep.violation_counts["ph"] == 2
    assert rep.counts["ph:S"] == 1 and rep.counts["ph:null"] == 1


def test_pid_tid(tmp_path):
    bad = [
        ("pid", 0),
        ("tid", "7"),
        ("tid", 2**31),
        ("pid", -3),
        ("tid", _DROP),
        ("pid", True),
        ("pid", 1.0),
    ]
    evs = good_events()
    for i, (field, value) in enumerate(bad):
        evs.append(X("kernel", f"k{i}", 1, 2, 31 + i, "0.5"))
        evs = patch(evs, lambda e, i=i: e.get("name") == f"k{i}", **{field: value})
    rep = run(tmp_path, evs, max_examples=100)
    assert rules(rep) == {"pid_tid"}
    assert rep.violation_counts["pid_tid"] == len(bad)
    assert run(tmp_path, evs[: -len(bad)]).ok


def test_async_and_process_meta_need_no_tid(tmp_path):
    evs = good_events()
    assert not any("tid" in e for e in evs if e["ph"] in "be" or e["name"] == "process_name")
    assert run(tmp_path, evs).ok


def test_missing_thread_name(tmp_path):
    evs = [
        e
        for e in good_events()
        if not (e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == 1 and e["tid"] == 2)
    ]
    rep = run(tmp_path, evs)
    assert rules(rep) == {"track_named"}
    assert "pid 1 tid 2" in messages(rep, "track_named")[0]
    assert '"gemm"' in rep.violations[0].event  # the first event of that track


def test_missing_sort_index_and_empty_name(tmp_path):
    evs = [
        e
        for e in good_events()
        if not (e["ph"] == "M" and e["name"] == "process_sort_index" and e["pid"] == 2)
    ]
    rep = run(tmp_path, evs)
    assert rules(rep) == {"track_named"} and "process_sort_index" in messages(rep, "track_named")[0]
    evs = patch(good_events(), lambda e: e.get("name") == "thread_name", args={"name": ""})
    assert rules(run(tmp_path, evs)) == {"track_named"}


def test_metadata_epoch(tmp_path):
    evs = patch(
        good_events(),
        lambda e: e.get("name") == "process_name" and e["pid"] == 2,
        args={"name": "Device 1", "epoch_ns": EPOCH + 1},
    )
    rep = run(tmp_path, evs)
    assert rules(rep) == {"metadata"} and "disagree" in messages(rep, "metadata")[0]
    evs = patch(
        good_events(),
        lambda e: e.get("name") == "process_name",
        args={"name": "Device 0", "epoch_ns": "1796005040000000000"},
    )
    assert rules(run(tmp_path, evs)) == {"metadata"}


# --------------------------------------------------------------------------
# B/E


def be(ph, name, ts, tid=3, cat="nvtx"):
    return {"ph": ph, "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": us(ts)}


def test_unmatched_e_and_open_b(tmp_path):
    rep = run(tmp_path, good_events() + [be("E", "ghost", 50)])
    assert rules(rep) == {"be_balance"} and "matches no open B" in messages(rep, "be_balance")[0]
    rep = run(tmp_path, good_events() + [be("B", "open", 50)])
    assert rules(rep) == {"be_balance"} and "never closed" in messages(rep, "be_balance")[0]


def test_crossed_b_e(tmp_path):
    evs = good_events() + [be("B", "a", 50), be("B", "b", 51), be("E", "a", 52), be("E", "b", 53)]
    rep = run(tmp_path, evs)
    assert "be_balance" in rules(rep)
    assert any("still open" in m for m in messages(rep, "be_balance"))


def test_e_sorts_before_b_at_equal_ts(tmp_path):
    # file order puts the second B before the first E, both at 60
    evs = good_events() + [be("B", "a", 50), be("B", "b", 60), be("E", "a", 60), be("E", "b", 70)]
    assert run(tmp_path, evs).ok
    # an E without name/cat closes the innermost B (Perfetto semantics)
    evs = good_events() + [be("B", "a", 50), {"ph": "E", "pid": 1, "tid": 3, "ts": us(55)}]
    assert run(tmp_path, evs).ok


# --------------------------------------------------------------------------
# overlap


def xs(*spans, tid=1):
    """X slices on pid 8 / tid; spans in µs (integers)."""
    return tracks(8, tid) + [X("c", f"s{i}", 8, tid, a, b - a) for i, (a, b) in enumerate(spans)]


OVERLAP_CASES = [  # (spans in µs, has a partial overlap)
    ([(0, 10), (5, 15)], True),  # partial overlap
    ([(0, 10), (2, 5), (3, 4), (4, 8)], True),  # not adjacent in start order
    ([(0, 10), (2, 8)], False),  # containment
    ([(0, 10), (10, 20)], False),  # touching
    ([(0, 10), (0, 4), (0, 10), (4, 10)], False),  # equal starts, identical, equal ends
    ([(0, 10), (5, 5), (10, 10), (0, 0)], False),  # zero-duration
    ([(0, 100), (10, 90), (20, 80), (30, 70)], False),  # containment chain
    ([(0, 100), (10, 90), (20, 80), (30, 95)], True),  # chain broken deep inside
    ([(0, 4), (3, 3), (3, 8)], True),
    ([(5, 15), (0, 10)], True),  # file order does not matter
]


def test_overlap_cases(tmp_path):
    evs = good_events()
    for tid, (spans, _) in enumerate(OVERLAP_CASES, 1):
        evs += xs(*spans, tid=tid)[2 if tid > 1 else 0 :]
    rep = run(tmp_path, evs, max_examples=100)
    assert rules(rep) == {"overlap"}
    got = {int(m.split(" tid ")[1].split(",")[0]) for m in messages(rep, "overlap")}
    assert got == {t for t, (_, bad) in enumerate(OVERLAP_CASES, 1) if bad}
    assert all(
        "partially overlaps" in m or "not properly nested" in m for m in messages(rep, "overlap")
    )
    crossing = {
        int(m.split(" tid ")[1].split(",")[0])
        for m in messages(rep, "overlap")
        if "partially overlaps" in m
    }
    assert crossing == got
    assert run(tmp_path, good_events() + xs(*OVERLAP_CASES[2][0])).ok


def test_overlap_b_e_with_x(tmp_path):
    evs = good_events() + [X("c", "x", 1, 3, 30, 20)]  # [30, 50) vs B/E outer [5, 40)
    rep = run(tmp_path, evs)
    assert rules(rep) == {"overlap"}
    assert "B/E" in messages(rep, "overlap")[0]


def test_overlap_b_e_on_a_track_with_b_e_errors(tmp_path):
    """Pairs from the Python stack pass (tracks with B/E errors) are checked too."""
    evs = (
        good_events()
        + tracks(7, 1)
        + [
            {"ph": "E", "cat": "nvtx", "name": "stray", "pid": 7, "tid": 1, "ts": us(1)},
            {"ph": "B", "cat": "nvtx", "name": "r", "pid": 7, "tid": 1, "ts": us(10)},
            {"ph": "E", "cat": "nvtx", "name": "r", "pid": 7, "tid": 1, "ts": us(30)},
            X("c", "x", 7, 1, 20, 20),
        ]
    )
    rep = run(tmp_path, evs)
    assert rules(rep) == {"be_balance", "overlap"}
    assert rep.violation_counts["be_balance"] == 1


def _laminar(spans):
    return not any(
        a < c < b < d or c < a < d < b
        for (a, b), (c, d) in itertools.combinations(spans, 2)
        if a < b and c < d
    )


def test_overlap_matches_brute_force(tmp_path):
    rnd = random.Random(7)
    evs, expect = good_events(), set()
    for tid in range(1, 201):
        spans = []
        for _ in range(rnd.randint(1, 6)):
            a = rnd.randint(0, 12)
            spans.append((a, a + rnd.choice([0, 1, 1, 2, 3, 5, 8])))
        evs += tracks(8, tid)[2 if tid > 1 else 0 :] + [
            X("c", "r", 8, tid, a, b - a) for a, b in spans
        ]
        if not _laminar(spans):
            expect.add(tid)
    rep = run(tmp_path, evs, max_examples=100000)
    got = {int(m.split(" tid ")[1].split(",")[0]) for m in messages(rep, "overlap")}
    assert rules(rep) <= {"overlap"}
    assert got == expect and expect


# --------------------------------------------------------------------------
# async b/e


def test_async(tmp_path):
    def ae(ph, name, lid, ts, **kw):
        ev = {"ph": ph, "cat": "async", "name": name, "pid": 1, "id2": {"local": lid}, "ts": us(ts)}
        ev.update(kw)
        return {k: x for k, x in ev.items() if x is not _DROP}

    evs = good_events() + [
        ae("e", "lost", 9, 3),  # e without b
        ae("b", "req", 10, 3),
        ae("e", "other", 10, 4),  # name differs: e unmatched, b open
        ae("b", "noid", 11, 3, id2=_DROP),  # no id
        ae("b", "nocat", 12, 3, cat=_DROP),
        ae("e", "nocat", 12, 4, cat=_DROP),  # no cat (x2)
    ]
    rep = run(tmp_path, evs, max_examples=10)
    assert rep.violation_counts == {"b_e_async": 6}, rep.violations
    msgs = " | ".join(messages(rep, "b_e_async"))
    assert "no earlier open b" in msgs and "never closed" in msgs and "without id2" in msgs
    assert "without cat" in msgs


# --------------------------------------------------------------------------
# flows


def test_reused_flow_id(tmp_path):
    evs = good_events()
    evs = patch(evs, is_("s", "copy"), id=1)
    evs = patch(evs, is_("f", "copy"), id=1)
    rep = run(tmp_path, evs)
    assert "flow" in rules(rep)
    assert any("used by 2 s events" in m for m in messages(rep, "flow"))


def test_f_without_bp(tmp_path):
    rep = run(tmp_path, patch(good_events(), is_("f", "launch"), bp=_DROP))
    assert rules(rep) == {"flow"} and "bp" in messages(rep, "flow")[0]


def test_flow_s_outside_its_slice(tmp_path):
    rep = run(tmp_path, patch(good_events(), is_("s", "launch"), ts=us("15.000")))  # == X end
    assert rules(rep) == {"flow"}
    assert "not inside any slice" in messages(rep, "flow")[0]
    assert '"launch"' in rep.violations[0].event


def test_flow_point_rules(tmp_path):
    at_start = patch(good_events(), is_("f", "launch"), ts=us("20.000"))
    rep = run(tmp_path, at_start)
    assert rules(rep) == {"flow"} and "start" in messages(rep, "flow")[0]

    late_s = patch(good_events(), is_("s", "copy"), ts=us("14.999"))
    late_f = patch(late_s, is_("f", "copy"), ts=us("20.001"))
    assert run(tmp_path, late_f).ok

    # zero-duration X: ts == start is inside
    zero = (
        good_events()
        + tracks(6, 1, "CUDA API")
        + tracks(6, 2, "S")[2:]
        + [
            X("cuda_api", "z", 6, 1, 5, 0),
            X("memset", "m", 6, 2, 9, 1),
            flow("s", "copy", 77, 6, 1, 5),
            flow("f", "copy", 77, 6, 2, "9.5"),
        ]
    )
    assert run(tmp_path, zero).ok

    # the s binds to the innermost slice: the parent after a child has ended
    nested = (
        good_events()
        + tracks(6, 1, "CUDA API")
        + tracks(6, 2, "S")[2:]
        + [
            X("cuda_api", "parent", 6, 1, 0, 100),
            X("cuda_sync", "child", 6, 1, 10, 10),
            X("cuda_sync", "child2", 6, 1, 20, 0),
            X("memset", "m1", 6, 2, 200, 1),
            X("memset", "m2", 6, 2, 300, 1),
            flow("s", "copy", 80, 6, 1, 50),
            flow("f", "copy", 80, 6, 2, "200.5"),
            flow("s", "copy", 81, 6, 1, 15),
            flow("f", "copy", 81, 6, 2, "300.5"),
        ]
    )
    rep = run(tmp_path, nested)
    assert rules(rep) == {"flow_kind"} and rep.violation_counts["flow_kind"] == 1
    assert "'cuda_sync'" in messages(rep, "flow_kind")[0]

    after = patch(good_events(), is_("f", "copy"), ts=us("11.000"))  # before its s (12)
    rep = run(tmp_path, after)
    assert "flow" in rules(rep) and any("after f" in m for m in messages(rep, "flow"))


def test_flow_pairing(tmp_path):
    evs = tracks(6, 1, "CUDA API") + tracks(6, 2, "S")[2:] + [X("cuda_api", "api", 6, 1, 0, 100)]
    evs += [X("memset", f"m{i}", 6, 2, 200 + 10 * i, 5) for i in range(4)]
    evs += [flow("s", "copy", 50, 6, 1, 10)]  # no f
    evs += [flow("s", "copy", 51, 6, 1, 11), {**flow("f", "copy", 51, 6, 2, 201), "name": "x"}]
    evs += [flow("s", "copy", "0x34", 6, 1, 12), flow("f", "copy", "0x34", 6, 2, 211)]
    evs += [flow("f", "copy", 53, 6, 2, 221)]  # no s
    evs += [flow("s", "copy", 99, 1, 3, 6), flow("f", "copy", 99, 1, 3, 7)]  # in B/E
    rep = run(tmp_path, good_events() + evs, max_examples=20)
    assert rules(rep) == {"flow"}
    msgs = " | ".join(messages(rep, "flow"))
    for frag in (
        "s with id 50 has no f",
        "flow id 51",
        "must match",
        '"0x34"',
        "64-bit integer",
        "f with id 53 has no s",
        "B/E slice",
    ):
        assert frag in msgs, frag
    assert rep.violation_counts["flow"] == 7  # 50, 51, 0x34 (s+f), 53, 99 (s+f)


def test_flow_kind(tmp_path):
    # launch flow ending in a memcpy-cat X
    wrong = patch(good_events(), is_("X", "kernel"), cat="memcpy")
    rep = run(tmp_path, wrong)
    assert rules(rep) == {"flow_kind"}
    assert "cat 'memcpy', expected cuda_graph or kernel" in messages(rep, "flow_kind")[0]

    # s not in a cuda_api X
    api = patch(good_events(), lambda e: e.get("name") == "cudaMemcpyAsync", cat="cuda_sync")
    assert rules(run(tmp_path, api)) == {"flow_kind"}

    # a kernel receiving two launch flows (+ two launch_core, to keep counts equal)
    evs = good_events() + [
        flow("s", "launch", 11, 1, 4, "12.000"),
        flow("f", "launch", 11, 1, 2, "21"),
        flow("s", "launch_core", 12, 1, 4, "12"),
        flow("f", "launch_core", 12, 1, 1, "21"),
    ]
    rep = run(tmp_path, evs)
    assert rules(rep) == {"flow_kind"} and rep.violation_counts["flow_kind"] == 2
    assert all("receives 2" in m for m in messages(rep, "flow_kind"))

    # launch and launch_core counts differ
    evs = [e for e in good_events() if e.get("cat") != "launch_core"]
    rep = run(tmp_path, evs)
    assert rules(rep) == {"flow_kind"} and "launch_core" in messages(rep, "flow_kind")[0]


# --------------------------------------------------------------------------
# limits and the command line


def test_max_examples_and_counts(tmp_path):
    evs = good_events() + [be("E", f"ghost{i}", 50 + i) for i in range(9)]
    rep = run(tmp_path, evs, max_examples=2)
    assert rep.violation_counts == {"be_balance": 9}
    assert len(rep.violations) == 2 and all(x.event for x in rep.violations)
    assert all(len(x.event) <= 300 for x in rep.violations)


def test_main(tmp_path):
    """``nsys-duck validate`` (``python -m nsys_duck.cli validate``): text,
    JSON, exit status 0 / 1 / 2."""
    from click.testing import CliRunner

    from nsys_duck.cli import main as cli

    runner = CliRunner()
    good = write(tmp_path, good_events(), "good.json.gz")
    res = runner.invoke(cli, ["validate", str(good)])
    assert res.exit_code == 0 and "OK" in res.output
    bad = write(tmp_path, good_events() + [be("E", "ghost", 50)], "bad.json.gz")
    res = runner.invoke(cli, ["validate", str(bad), "--max-examples", "1"])
    assert res.exit_code == 1 and "[be_balance]" in res.output and "ghost" in res.output
    res = runner.invoke(cli, ["validate", str(bad), "--json"])
    doc = json.loads(res.output)
    assert res.exit_code == 1
    assert doc["ok"] is False and doc["violation_counts"] == {"be_balance": 1}
    assert runner.invoke(cli, ["validate", str(tmp_path / "missing.json.gz")]).exit_code == 2
    proc = subprocess.run(
        [sys.executable, "-m", "nsys_duck.cli", "validate", str(bad)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and "[be_balance]" in proc.stdout


# --------------------------------------------------------------------------
# the check views (the interface the pipeline shares)


def test_check_views_follow_the_interface():
    """Every check_* view: one per file, columns message VARCHAR and seq
    BIGINT, a COMMENT ON VIEW; each rule id is one of RULES."""
    import duckdb

    from nsys_duck import pipeline

    files = pipeline.sql_files(folders=v.BASE_FOLDERS + v.CHECK_FOLDERS)
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE chk_events (seq BIGINT, ph VARCHAR, cat VARCHAR, name VARCHAR, "
        "pid BIGINT, tid BIGINT, ts_ns BIGINT, dur_ns BIGINT, id VARCHAR, bp VARCHAR, "
        "scope VARCHAR, meta_name VARCHAR, meta_sort_index BIGINT, epoch_ns BIGINT, "
        "problem VARCHAR)"
    )
    pipeline.run_pipeline(con, files, pipeline.Context(columns={}))
    views = dict(
        con.execute(
            "SELECT view_name, comment FROM duckdb_views() "
            "WHERE NOT internal AND view_name LIKE 'check_%'"
        ).fetchall()
    )
    assert {name[len("check_") :] for name in views} == set(v.RULES) - {
        "gzip",
        "json",
        "string",
        "internal",
    }
    for f in files:
        made = [n for k, n in pipeline.created_objects(f.text) if n.startswith("check_")]
        assert made in ([], [f.relpath.rsplit("/", 1)[1][:-4]]), f.relpath
    for name, comment in views.items():
        assert comment and "Rule " in comment, name
        cols = dict(con.execute(f"DESCRIBE {name}").fetchall()[i][:2] for i in range(2))
        assert cols == {"message": "VARCHAR", "seq": "BIGINT"}, name
        assert con.execute(f"SELECT count(*) FROM {name}").fetchone()[0] == 0


@pytest.mark.parametrize("n_tracks", [1, 50])
def test_be_balance_matches_a_stack(tmp_path, n_tracks):
    """Random B/E streams: the set-based matching finds exactly the events a
    Perfetto-style stack pass rejects (E with nothing open, E closing a B of
    another name, B never closed)."""
    rnd = random.Random(n_tracks)
    evs, expect = good_events(), 0
    for tid in range(1, n_tracks + 1):
        evs += tracks(9, tid)[2 if tid > 1 else 0 :]
        stack, ts = [], 0
        for _ in range(rnd.randint(1, 12)):
            ts += rnd.choice([1, 2])
            if rnd.random() < 0.5:
                name = rnd.choice("ab")
                evs.append({**be("B", name, ts, tid), "pid": 9})
                stack.append(name)
            else:
                name = rnd.choice("ab")
                evs.append({**be("E", name, ts + 0.5, tid), "pid": 9})
                if not stack:
                    expect += 1
                else:
                    expect += stack.pop() != name
        expect += len(stack)
    rep = run(tmp_path, evs, max_examples=0)
    assert rep.violation_counts.get("be_balance", 0) == expect
    assert set(rep.violation_counts) <= {"be_balance", "overlap"}


# --------------------------------------------------------------------------
# real traces


def _converted(tmp_path_factory, name):
    from nsys_duck.convert import Options, convert
    from paths import REPORTS

    root = tmp_path_factory.mktemp("ws")
    return convert(REPORTS / name / "parquet", Options(validate=False), root=root)


@pytest.fixture(scope="module")
def keras(tmp_path_factory):
    return _converted(tmp_path_factory, "keras_darknet53_nvtx_startend").workspace.json_gz


def _events(path):
    with gzip.open(path, "rb") as f:
        return json.loads(f.read(), parse_float=Decimal)


def _rewrite(tmp_path, events):
    return write(tmp_path, events, "broken.perfetto.json.gz")


def test_real_trace_is_clean(keras):
    rep = validate_trace(keras)
    assert rep.ok, rep.violations
    assert rep.counts["flows"] > 0 and rep.counts["slices"] > 1000


REAL_BREAKS = {  # rule -> how to break one event of a real trace
    "number": lambda e: e["ph"] == "X" and e.update(dur=Decimal(-1)) is None,
    "ph": lambda e: e["ph"] == "X" and e.update(ph="Q") is None,
    "pid_tid": lambda e: e["ph"] == "X" and e.update(tid=0) is None,
    "track_named": lambda e: (
        e["ph"] == "M" and e["name"] == "thread_name" and e.update(name="thread_nam") is None
    ),
    "be_balance": lambda e: e["ph"] == "E" and e.update(name="nope") is None,
    # a copy of an API call starting in its middle: the two cross
    "overlap": lambda e: (
        e["ph"] == "X"
        and e["cat"] == "cuda_api"
        and e["dur"] > 1
        and e.update(_copy={**e, "ts": e["ts"] + (e["dur"] / 2).quantize(Decimal("0.001"))}) is None
    ),
    "flow": lambda e: e["ph"] == "f" and e.pop("bp") is not None,
    "flow_kind": lambda e: (
        e["ph"] == "X" and e["cat"] == "kernel" and e.update(cat="memset") is None
    ),
    "metadata": lambda e: (
        e["ph"] == "M"
        and e["name"] == "process_name"
        and e["args"].update(epoch_ns=str(e["args"]["epoch_ns"])) is None
    ),
}


@pytest.mark.parametrize("rule", sorted(REAL_BREAKS))
def test_real_trace_with_one_thing_broken(tmp_path, keras, rule):
    events = _events(keras)
    hit = next(i for i, e in enumerate(events) if REAL_BREAKS[rule](e))
    if "_copy" in events[hit]:
        events.append(events[hit].pop("_copy"))
    rep = validate_trace(_rewrite(tmp_path, events))
    assert rule in rep.violation_counts, (hit, rep.violation_counts)
    assert "internal" not in rep.violation_counts


def test_validator_stops_on_ctrl_c_and_cleans_up(tmp_path, monkeypatch):
    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(v, "_checks", stop)
    spill = tmp_path / "spill"
    with pytest.raises(KeyboardInterrupt):
        validate_trace(write(tmp_path, good_events()), temp_dir=spill)
    assert list(spill.iterdir()) == []


def test_ctrl_c_interrupts_a_running_query():
    """A real SIGINT reaches a long DuckDB query run through ``_execute``
    promptly, and the connection stays usable (no query left running)."""
    import os
    import signal
    import threading
    import time

    import duckdb

    con = duckdb.connect()
    # a shell starting the suite in the background (``cmd &``) leaves SIGINT
    # ignored, and Python then keeps it ignored: the signal would never
    # reach us and the query would run on; give SIGINT Python's handler here
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            v._execute(
                con, "CREATE TABLE t AS SELECT sum(i % 7) AS s FROM range(1000000000000) r(i)"
            )
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - t0 < 10
    assert con.execute("SELECT 42").fetchall() == [(42,)]
    con.close()


# --------------------------------------------------------------------------
# what `nsys-duck validate NAME` checks of a workspace


RAIDERSTREAM = Path(__file__).resolve().parent.parent / "examples" / "raiderstream_tiny" / "parquet"


def test_validate_checks_every_part_of_a_split_trace(tmp_path):
    """A split workspace (JSON in parts, --max-json-size) is validated part
    by part, not refused as "no trace"; one bad part fails the whole."""
    from click.testing import CliRunner

    from conftest import Options, convert
    from nsys_duck.cli import main as cli

    ws = convert(
        RAIDERSTREAM, Options(max_json_bytes=100_000, output_dir=tmp_path / "ws")
    ).workspace
    parts = ws.json_parts
    assert len(parts) > 2 and not ws.json_gz.exists()
    res = CliRunner().invoke(cli, ["validate", str(ws.dir)])
    assert res.exit_code == 0, res.output
    assert res.output.count("OK: no violations") == len(parts)
    assert [p for p in parts if f"{p}: " in res.output] == parts
    assert res.output.splitlines()[-1] == f"all {len(parts)} parts: OK, no violations"
    doc = json.loads(CliRunner().invoke(cli, ["validate", str(ws.dir), "--json"]).output)
    assert doc["ok"] is True and [d["path"] for d in doc["parts"]] == [str(p) for p in parts]
    parts[1].write_bytes(text(good_events() + [be("E", "ghost", 50)]))  # not even gzip
    res = CliRunner().invoke(cli, ["validate", str(ws.dir)])
    assert res.exit_code == 1
    assert res.output.splitlines()[-1] == f"FAILED: violations in 1 of {len(parts)} parts"


def test_validate_knows_a_kineto_trace(tmp_path):
    """Our own Kineto trace (--format kineto: a JSON object with traceEvents,
    Kineto's shape, not Perfetto's bare array) is not reported as 3 json
    violations: validate says in one sentence it checks Perfetto traces
    (exit 2), for the file and for a Kineto-only workspace."""
    from click.testing import CliRunner

    from conftest import Options, convert
    from nsys_duck.cli import main as cli

    ws = convert(RAIDERSTREAM, Options(trace_format="kineto", output_dir=tmp_path / "ws")).workspace
    rank0 = ws.kineto_dir / "rank0.json.gz"
    assert v.is_kineto_trace(rank0)
    assert not v.is_kineto_trace(write(tmp_path, good_events()))
    res = CliRunner().invoke(cli, ["validate", str(rank0)])
    assert res.exit_code == 2 and "violation" not in res.output
    assert res.output == (
        f"nsys-duck: {rank0}: rank0.json.gz is a Kineto trace (what --format kineto writes, "
        "for PyTorch's tools such as HTA), not a Perfetto JSON trace: validate checks "
        "NAME.perfetto.json.gz (convert --format perfetto or both)\n"
    )
    res = CliRunner().invoke(cli, ["validate", str(ws.dir)])
    assert res.exit_code == 2
    assert res.output == (
        f"nsys-duck: {ws.dir}: raiderstream_tiny holds a Kineto trace only (converted with "
        "--format kineto), no Perfetto JSON trace to validate: convert again with --format both\n"
    )
