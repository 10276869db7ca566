"""Richer args (issue 15, part 2): what Nsight users look for in a slice's
args, equal to Nsight's own tables (read here, never from our outputs).

- kernels: launchType and cacheConfig (the export's ENUM labels),
  localMemoryPerThread, localMemoryTotal, sharedMemoryExecuted, gridId;
- memcpys: srcKind/dstKind (ENUM_CUDA_MEM_KIND labels: pageable, pinned,
  device...), srcDeviceId/dstDeviceId when set, throughputGBps (bytes / ns,
  left out for a zero-length copy); memsets: memKind;
- CUDA API calls: returnValue (nonzero = the call failed);
- NVTX ranges and marks: the payload, when the event has one;
- no member of any args object is JSON null (a member without a value is
  left out), on real reports of every Nsight version we have;
- the aligned Parquet carries return_value, launch_type, src_kind,
  dst_kind, mem_kind after its older columns.
"""

from __future__ import annotations

import gzip
import json
import math
import sqlite3
from collections import Counter
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import contract
import perfetto_import
from conftest import EPOCH, REPORTS, gtid, load_events, make_export
from nsys_duck.convert import Options, convert
from paths import NEWER

# dev reports with kernels, copies (pinned, pageable, device, unified),
# memsets, failed API calls, NVTX payloads, several export shapes
DEV = [
    "abacus_many_kernels",
    "cori_omp_offload_dev5",
    "cpu_nvtx_small",
    "cufcm_memset",
    "keras_darknet53_nvtx_startend",
    "memfusion_nvtx_d2d",
    "perlmutter_unified_mem",
    "raiderstream_tiny",
]
NEWER_FILES = sorted(NEWER.glob("*/*.sqlite"))
SOURCES = [REPORTS / n / "parquet" for n in DEV] + NEWER_FILES
SOURCE_IDS = DEV + [p.stem for p in NEWER_FILES]
# what the Parquet appends, in this order, after its older columns
NEW_COLUMNS = ["return_value", "launch_type", "src_kind", "dst_kind", "mem_kind"]


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    root = tmp_path_factory.mktemp("args")
    cache = {}

    def get(src: Path):
        if src not in cache:
            res = convert(src, Options(), root=root)
            with gzip.open(res.workspace.json_gz, "rb") as f:
                events = json.loads(f.read(), parse_float=Decimal)
            cache[src] = (res, events, contract.slices_table(res.workspace.events_parquet))
        return cache[src]

    return get


class Nsight:
    """The export's own tables: DuckDB views over a Parquet export, or the
    SQLite export itself (the ground truth)."""

    def __init__(self, src: Path):
        if src.suffix == ".sqlite":
            self.con = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
            self.tables = {
                r[0] for r in self.con.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
        else:
            self.con = duckdb.connect()
            self.tables = set()
            for f in src.glob("*.parquet"):
                self.con.execute(f"CREATE VIEW \"{f.stem}\" AS SELECT * FROM read_parquet('{f}')")
                self.tables.add(f.stem)

    def rows(self, sql: str) -> list[tuple]:
        return [tuple(r) for r in self.con.execute(sql).fetchall()]

    def has(self, *tables: str) -> bool:
        return all(t in self.tables for t in tables)


def label(code, lab):
    """What an enum-coded arg holds: Nsight's label, else the code as text."""
    if code is None:
        return None
    return lab if lab is not None else str(code)


def x_events(events, *cats):
    return [e for e in events if e["ph"] == "X" and e.get("cat") in cats]


def json_nulls(value, path="args"):
    """Paths of JSON nulls anywhere in an args value."""
    if value is None:
        return [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in json_nulls(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in json_nulls(v, f"{path}[{i}]")]
    return []


# --- every args object, every report ---------------------------------------


@pytest.mark.parametrize("src", SOURCES, ids=SOURCE_IDS)
def test_no_args_member_is_null(src, converted):
    res, events, _ = converted(src)
    found = Counter((e.get("cat"), p) for e in events if "args" in e for p in json_nulls(e["args"]))
    assert not found, f"JSON nulls in args: {dict(found)}"
    names = pq.read_schema(res.workspace.events_parquet).names
    assert names[-len(NEW_COLUMNS) :] == NEW_COLUMNS
    assert names[-len(NEW_COLUMNS) - 2 : -len(NEW_COLUMNS)] == ["demangled_name", "is_primary"]


# --- kernels -----------------------------------------------------------------

KERNEL_MEMBERS = (
    "launchType",
    "cacheConfig",
    "localMemoryPerThread",
    "localMemoryTotal",
    "sharedMemoryExecuted",
    "gridId",
)


@pytest.mark.parametrize("src", SOURCES, ids=SOURCE_IDS)
def test_kernel_launch_details_equal_nsight(src, converted):
    nsight = Nsight(src)
    if not nsight.has("CUPTI_ACTIVITY_KIND_KERNEL"):
        pytest.skip("no kernels")
    _, events, slices = converted(src)
    rows = nsight.rows("""
        SELECT k.correlationId, k.deviceId, k.streamId, k.launchType, lt.label,
            k.cacheConfig, cc.label, k.localMemoryPerThread, k.localMemoryTotal,
            k.sharedMemoryExecuted, k.gridId
        FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
        LEFT JOIN ENUM_CUDA_KERNEL_LAUNCH_TYPE AS lt ON lt.id = k.launchType
        LEFT JOIN ENUM_CUDA_FUNC_CACHE_CONFIG AS cc ON cc.id = k.cacheConfig""")
    want = Counter(
        (corr, dev, stream, label(lt, ltl), label(cc, ccl), lmt, lmtot, smx, grid)
        for corr, dev, stream, lt, ltl, cc, ccl, lmt, lmtot, smx, grid in rows
    )
    got = Counter(
        (a.get("correlationId"), a["deviceId"], a["streamId"])
        + tuple(a.get(m) for m in KERNEL_MEMBERS)
        for a in (e["args"] for e in x_events(events, "kernel"))
    )
    assert got == want
    # the Core Timeline copy carries the lighter set (int_gpu_op_args,
    # copy_args_json): the ids that find its original, none of the rest
    cores = [e["args"] for e in x_events(events, "kernel_core")]
    ids = Counter((corr, dev, stream) for corr, dev, stream, *_ in rows)
    assert Counter((a.get("correlationId"), a["deviceId"], a["streamId"]) for a in cores) == ids
    assert all(set(a) <= {"correlationId", "deviceId", "contextId", "streamId"} for a in cores)
    assert Counter(s["launch_type"] for s in slices if s["cat"] == "kernel") == Counter(
        label(lt, ltl) for _, _, _, lt, ltl, *_ in rows
    )
    # the labels are Nsight's words, not codes, wherever the enum names them
    assert {a["launchType"] for a in (e["args"] for e in x_events(events, "kernel"))} <= {
        "Regular",
        "Coop Single Device",
        "Coop Multi Device",
    }


# --- memcpys and memsets -----------------------------------------------------


@pytest.mark.parametrize("src", SOURCES, ids=SOURCE_IDS)
def test_memcpy_memory_kinds_equal_nsight(src, converted):
    nsight = Nsight(src)
    if not nsight.has("CUPTI_ACTIVITY_KIND_MEMCPY"):
        pytest.skip("no copies")
    _, events, slices = converted(src)
    rows = nsight.rows("""
        SELECT m.correlationId, m.bytes, m.srcKind, sk.label, m.dstKind, dk.label,
            m.srcDeviceId, m.dstDeviceId
        FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m
        LEFT JOIN ENUM_CUDA_MEM_KIND AS sk ON sk.id = m.srcKind
        LEFT JOIN ENUM_CUDA_MEM_KIND AS dk ON dk.id = m.dstKind""")
    kinds = Counter((label(s, sl), label(d, dl)) for _, _, s, sl, d, dl, _, _ in rows)
    memcpys = [e["args"] for e in x_events(events, "memcpy")]
    # per label, as nsys recipe cuda_memcpy_async counts them
    assert Counter((a.get("srcKind"), a.get("dstKind")) for a in memcpys) == kinds
    assert Counter((s["src_kind"], s["dst_kind"]) for s in slices if s["cat"] == "memcpy") == kinds
    assert Counter(
        (a.get("correlationId"), a["bytes"], a.get("srcDeviceId"), a.get("dstDeviceId"))
        for a in memcpys
    ) == Counter((c, b, sd, dd) for c, b, _, _, _, _, sd, dd in rows)
    # the PCIe/D2D copy of a copy carries its kinds (Parquet; the JSON
    # args are the same text)
    projected = Counter(
        (s["src_kind"], s["dst_kind"]) for s in slices if s["cat"] in ("memcpy_pcie", "memcpy_d2d")
    )
    assert not projected - kinds  # a sub-multiset: not every copy is projected


@pytest.mark.parametrize("src", SOURCES, ids=SOURCE_IDS)
def test_memcpy_throughput_is_bytes_per_ns(src, converted):
    _, events, _ = converted(src)
    copies = x_events(events, "memcpy", "memcpy_pcie", "memcpy_d2d")
    if not copies:
        pytest.skip("no copies")
    for e in copies:
        dur_ns = e["dur"] * 1000  # exact decimal us
        if dur_ns == 0:
            assert "throughputGBps" not in e["args"]
            continue
        want = e["args"]["bytes"] / float(dur_ns)  # bytes per ns = 10^9 B/s
        assert math.isclose(float(e["args"]["throughputGBps"]), want, abs_tol=1e-6), e


@pytest.mark.parametrize("src", SOURCES, ids=SOURCE_IDS)
def test_memset_mem_kind_equals_nsight(src, converted):
    nsight = Nsight(src)
    if not nsight.has("CUPTI_ACTIVITY_KIND_MEMSET"):
        pytest.skip("no memsets")
    _, events, slices = converted(src)
    rows = nsight.rows("""
        SELECT m.correlationId, m.bytes, m.value, m.memKind, k.label
        FROM CUPTI_ACTIVITY_KIND_MEMSET AS m
        LEFT JOIN ENUM_CUDA_MEM_KIND AS k ON k.id = m.memKind""")
    got = Counter(
        (a.get("correlationId"), a.get("bytes"), a.get("value"), a.get("memKind"))
        for a in (e["args"] for e in x_events(events, "memset"))
    )
    assert got == Counter((c, b, v, label(k, kl)) for c, b, v, k, kl in rows)
    assert Counter(s["mem_kind"] for s in slices if s["cat"] == "memset") == Counter(
        label(k, kl) for *_, k, kl in rows
    )


# --- CUDA API calls ----------------------------------------------------------


@pytest.mark.parametrize("src", SOURCES, ids=SOURCE_IDS)
def test_api_return_value_equals_nsight(src, converted):
    nsight = Nsight(src)
    if not nsight.has("CUPTI_ACTIVITY_KIND_RUNTIME"):
        pytest.skip("no CUDA API calls")
    _, events, slices = converted(src)
    # (pid, correlationId) names one runtime/driver call (nsys-tables.md 4.1)
    truth = {
        (pid, corr): rv
        for pid, corr, rv in nsight.rows("""
            SELECT (globalTid >> 24) & 16777215, correlationId, returnValue
            FROM CUPTI_ACTIVITY_KIND_RUNTIME
            WHERE eventClass IN (0, 1) AND correlationId <> 0""")
    }
    api = [s for s in slices if s["cat"] in ("cuda_api", "cuda_sync")]
    assert api
    for s in api:
        if s["correlation_id"] is not None:
            assert s["return_value"] == truth[(s["os_pid"], s["correlation_id"])], s
    # the JSON's args carry the same value, slice by slice
    by_key = {(s["pid"], s["tid"], s["start_ns"], s["name"]): s for s in api}
    base = converted(src)[0].base_ns
    n = 0
    for e in x_events(events, "cuda_api", "cuda_sync"):
        s = by_key[(e["pid"], e["tid"], base + int(e["ts"] * 1000), e["name"])]
        assert e["args"]["returnValue"] == s["return_value"]
        n += 1
    assert n == len(api)


# --- NVTX payloads -------------------------------------------------------------


def test_nvtx_payload_of_a_real_report(converted):
    """cpu_nvtx_small's domain-B pushes and marks carry an int64 payload."""
    src = REPORTS / "cpu_nvtx_small" / "parquet"
    want = Counter(
        (text, v)
        for text, v in Nsight(src).rows(
            "SELECT text, int64Value FROM NVTX_EVENTS WHERE int64Value IS NOT NULL"
        )
    )
    assert want
    _, events, _ = converted(src)
    nvtx = [e for e in events if e.get("cat") == "nvtx" and e["ph"] in ("B", "X", "i", "b")]
    got = Counter((e["name"], e["args"]["payload"]) for e in nvtx if "payload" in e["args"])
    assert got == want


# --- synthetic: what the real reports lack -------------------------------------

STRINGS = [
    {"id": 1, "value": "cudaLaunchKernel_v7000"},
    {"id": 2, "value": "kA"},
    {"id": 3, "value": "cudaDeviceSynchronize_v3020"},
    {"id": 4, "value": '{"step": 3}'},
]


def _kernel(start, end, corr, **extra):
    row = {
        "start": EPOCH + start,
        "end": EPOCH + end,
        "deviceId": 0,
        "contextId": 1,
        "streamId": 7,
        "correlationId": corr,
        "globalPid": gtid(100),
        "shortName": 2,
        "demangledName": 2,
    }
    return {**row, **extra}


def _api(start, end, corr, name=1, rv=0):
    return {
        "start": EPOCH + start,
        "end": EPOCH + end,
        "eventClass": 0,
        "globalTid": gtid(100, 101),
        "correlationId": corr,
        "nameId": name,
        "returnValue": rv,
    }


# NVTX_EVENTS with its payload union, in the types of Nsight's Parquet
# (2023.4.4, nsys-tables.md 1.7)
NVTX_TYPES = {
    "start": pa.int64(),
    "end": pa.int64(),
    "eventType": pa.int64(),
    "text": pa.string(),
    "globalTid": pa.uint64(),
    "domainId": pa.uint64(),
    "uint64Value": pa.uint64(),
    "int64Value": pa.int64(),
    "doubleValue": pa.float64(),
    "uint32Value": pa.int64(),
    "int32Value": pa.int32(),
    "floatValue": pa.float32(),
    "jsonTextId": pa.int64(),
    "jsonText": pa.string(),
}
ENUM_TYPES = {"id": pa.int64(), "name": pa.string(), "label": pa.string()}


def _write(folder: Path, table: str, types: dict, rows: list[dict]) -> None:
    cols = {c: pa.array([r.get(c) for r in rows], t) for c, t in types.items()}
    pq.write_table(pa.table(cols), folder / f"{table}.parquet")


def _convert(tmp_path, tables, extra=(), drop=()):
    """Convert a synthetic export; ``extra``: (table, types, rows) written over
    conftest's; ``drop``: (table, column) left out of the export."""
    folder = make_export(tmp_path / "synthetic" / "parquet", tables)
    for table, types, rows in extra:
        _write(folder, table, types, rows)
    for table, column in drop:
        path = folder / f"{table}.parquet"
        pq.write_table(pq.read_table(path).drop_columns([column]), path)
    res = convert(folder, Options(), root=tmp_path / "ws")
    return res, load_events(res), contract.slices_table(res.workspace.events_parquet)


def test_failed_api_call_has_its_return_value(tmp_path):
    """A synchronize that returns cudaErrorIllegalAddress (700) after a
    faulting kernel: args.returnValue 700 and return_value 700, so failed
    calls are found with returnValue <> 0; successful calls say 0."""
    _, events, slices = _convert(
        tmp_path,
        {
            "StringIds": STRINGS,
            "CUPTI_ACTIVITY_KIND_KERNEL": [_kernel(100, 200, 1)],
            "CUPTI_ACTIVITY_KIND_RUNTIME": [_api(10, 90, 1), _api(300, 400, 2, name=3, rv=700)],
        },
    )
    args = {e["name"]: e["args"] for e in x_events(events, "cuda_api", "cuda_sync")}
    assert args["cudaLaunchKernel"]["returnValue"] == 0
    assert args["cudaDeviceSynchronize"] == {
        "correlationId": 2,
        "name": "cudaDeviceSynchronize_v3020",
        "eventClass": "runtime",
        "returnValue": 700,
    }
    failed = [s["name"] for s in slices if s["return_value"]]
    assert failed == ["cudaDeviceSynchronize"]


def test_missing_columns_and_enum_tables_leave_members_out(tmp_path):
    """An export without returnValue, the kernel launch columns or the ENUM
    tables (conftest's synthetic tables have none of them): the members are
    left out, never null; a launchType the export has but no ENUM table
    names is written as its code; with the ENUM table, as its label."""
    tables = {
        "StringIds": STRINGS,
        "CUPTI_ACTIVITY_KIND_KERNEL": [_kernel(100, 200, 1), _kernel(300, 400, 2)],
        "CUPTI_ACTIVITY_KIND_RUNTIME": [_api(10, 90, 1), _api(210, 290, 2)],
    }
    res, events, _ = _convert(
        tmp_path / "a", tables, drop=[("CUPTI_ACTIVITY_KIND_RUNTIME", "returnValue")]
    )
    for e in events:
        assert not json_nulls(e.get("args", {})), e
    kernel = x_events(events, "kernel")[0]["args"]
    assert not set(KERNEL_MEMBERS) & set(kernel)
    assert "graphNodeId" not in kernel  # NULL: not a graph node
    assert all("returnValue" not in e["args"] for e in x_events(events, "cuda_api"))
    missing = dict(res.summary)["export columns missing (read as NULL)"]
    assert "CUPTI_ACTIVITY_KIND_KERNEL.launchType" in missing
    assert "CUPTI_ACTIVITY_KIND_RUNTIME.returnValue" in missing

    # launchType 2 and 7, cacheConfig 1: coded, then labelled by the
    # export's ENUM tables (7 is in none: its code)
    kernels = pq.read_table(
        tmp_path / "a" / "synthetic" / "parquet" / "CUPTI_ACTIVITY_KIND_KERNEL.parquet"
    )
    for column, values in (
        ("launchType", [2, 7]),
        ("cacheConfig", [1, None]),
        ("gridId", [11, 12]),
    ):
        kernels = kernels.append_column(column, pa.array(values, pa.int64()))
    for case, enums in (("codes", []), ("labels", [1])):
        folder = make_export(tmp_path / case / "synthetic" / "parquet", tables)
        pq.write_table(kernels, folder / "CUPTI_ACTIVITY_KIND_KERNEL.parquet")
        if enums:
            _write(
                folder,
                "ENUM_CUDA_KERNEL_LAUNCH_TYPE",
                ENUM_TYPES,
                [
                    {"id": 1, "name": "CUDA_KERNEL_LAUNCH_TYPE_REGULAR", "label": "Regular"},
                    {
                        "id": 2,
                        "name": "CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE",
                        "label": "Coop Single Device",
                    },
                ],
            )
            _write(
                folder,
                "ENUM_CUDA_FUNC_CACHE_CONFIG",
                ENUM_TYPES,
                [{"id": 1, "name": "CU_FUNC_CACHE_PREFER_SHARED", "label": "Shared"}],
            )
        res = convert(folder, Options(), root=tmp_path / case / "ws")
        got = {
            e["args"]["gridId"]: (e["args"]["launchType"], e["args"].get("cacheConfig"))
            for e in x_events(load_events(res), "kernel")
        }
        if case == "codes":
            assert got == {11: ("2", "1"), 12: ("7", None)}
        else:
            assert got == {11: ("Coop Single Device", "Shared"), 12: ("7", None)}
        parquet = contract.slices_table(res.workspace.events_parquet)
        assert {s["launch_type"] for s in parquet if s["cat"] == "kernel"} == {
            v[0] for v in got.values()
        }


def test_nvtx_payload_of_every_type(tmp_path):
    """Each member of the payload union becomes args.payload with its own
    JSON type: integers exact (a uint64 past int64 as its digits in a
    string), floats as numbers (NaN as a string), JSON text (inline or a
    registered string) as a string."""
    thread = gtid(100, 101)
    payloads = [
        ("u64", {"uint64Value": 2**64 - 1}, str(2**64 - 1)),
        ("i64", {"int64Value": -42}, -42),
        ("dbl", {"doubleValue": 2.5}, Decimal("2.5")),
        ("nan", {"doubleValue": float("nan")}, "nan"),
        ("u32", {"uint32Value": 4294967295}, 4294967295),
        ("i32", {"int32Value": -7}, -7),
        ("flt", {"floatValue": 0.25}, Decimal("0.25")),
        ("json", {"jsonText": '{"a": [1, 2]}'}, '{"a": [1, 2]}'),
        ("jsonId", {"jsonTextId": 4}, '{"step": 3}'),
        ("none", {}, None),
    ]
    rows = []
    for i, (text, member, _) in enumerate(payloads):
        start = EPOCH + 100 * (i + 1)
        kind = 59 if i % 2 else 34  # push/pop ranges and marks
        rows.append(
            {
                "start": start,
                "end": start + 50 if kind == 59 else None,
                "eventType": kind,
                "text": text,
                "globalTid": thread,
                "domainId": 0,
                **member,
            }
        )
    res, events, _ = _convert(
        tmp_path,
        {"StringIds": STRINGS, "NVTX_EVENTS": []},
        extra=[("NVTX_EVENTS", NVTX_TYPES, rows)],
    )
    got = {
        e["name"]: e["args"].get("payload", None)
        for e in events
        if e.get("cat") == "nvtx" and e["ph"] in ("B", "i")
    }
    assert got == {text: want for text, _, want in payloads}
    assert "payload" not in next(e["args"] for e in events if e.get("name") == "none")
    missing = dict(res.summary).get("export columns missing (read as NULL)", "")
    assert "Value" not in missing and "jsonText" not in missing


def test_uint64_payloads_past_int64_show_their_exact_value_in_perfetto(tmp_path):
    """NVTX_EVENTS.uint64Value (UBIGINT) 2^63 and 2^64 - 1 imported into
    Perfetto as -9.2e18 and -1.0 when written as JSON numbers (its reader
    wraps numbers past int64): they are written as decimal strings, while
    2^63 - 1 and 0 stay numbers; Perfetto's args table holds each value
    exactly."""
    if perfetto_import.find_binary() is None:
        pytest.skip(perfetto_import.missing_message())
    values = {"p63": 2**63, "p64m1": 2**64 - 1, "p63m1": 2**63 - 1, "zero": 0}
    rows = [
        {
            "start": EPOCH + 100 * (i + 1),
            "end": EPOCH + 100 * (i + 1) + 50,
            "eventType": 59,
            "text": text,
            "globalTid": gtid(100, 101),
            "domainId": 0,
            "uint64Value": v,
        }
        for i, (text, v) in enumerate(values.items())
    ]
    res, events, _ = _convert(
        tmp_path,
        {"StringIds": STRINGS, "NVTX_EVENTS": []},
        extra=[("NVTX_EVENTS", NVTX_TYPES, rows)],
    )
    got = {
        r["name"]: (r["value_type"], r["display_value"])
        for r in perfetto_import.query(
            res.workspace.json_gz,
            "SELECT s.name, a.value_type, a.display_value FROM slice AS s "
            "JOIN args AS a USING (arg_set_id) WHERE s.category = 'nvtx' "
            "AND a.key = 'args.payload'",
        )
    }
    assert got == {
        "p63": ("string", "9223372036854775808"),
        "p64m1": ("string", "18446744073709551615"),
        "p63m1": ("int", "9223372036854775807"),
        "zero": ("int", "0"),
    }
    # numbers while they fit in int64, the digits in a string past it
    written = {
        e["name"]: e["args"]["payload"] for e in events if e.get("cat") == "nvtx" and e["ph"] == "B"
    }
    assert written == {"p63": str(2**63), "p64m1": str(2**64 - 1), "p63m1": 2**63 - 1, "zero": 0}
