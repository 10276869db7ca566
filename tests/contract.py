"""Contract checks used by the tests (output-contract.md), on small traces.

They read the parsed JSON events and the aligned Parquet table; each returns
a list of problems (empty = the rule holds), so a failing test shows examples.
The structural rules run the validator's check_* views (sql/50_checks/).
"""

from __future__ import annotations

import json
from collections import defaultdict
from decimal import Decimal

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from nsys_duck import pipeline, validate


def ns(us) -> int:
    """JSON microseconds (Decimal or int, at most 3 decimals) -> integer ns."""
    value = Decimal(us) * 1000
    assert value == value.to_integral_value(), f"{us} is not ns-exact"
    return int(value)


def slices_table(path) -> list[dict]:
    return pq.read_table(path).to_pylist()


# The rules themselves live in the validator's check_* views (sql/50_checks/);
# these helpers run them over events and slices held in Python.

_CHK_COLUMNS = {
    "seq": pa.int64(),
    "ph": pa.string(),
    "cat": pa.string(),
    "name": pa.string(),
    "pid": pa.int64(),
    "tid": pa.int64(),
    "ts_ns": pa.int64(),
    "dur_ns": pa.int64(),
    "id": pa.string(),
    "bp": pa.string(),
    "scope": pa.string(),
    "meta_name": pa.string(),
    "meta_sort_index": pa.int64(),
    "epoch_ns": pa.int64(),
    "problem": pa.string(),
}


def _int(v):
    return v if type(v) is int and -(2**63) <= v < 2**63 else None


def _chk_row(seq: int, e: dict) -> dict:
    """One parsed JSON event as a chk_events row (the file validator's
    reading of it, sql/validate/chk_events.sql)."""
    ph, args = e.get("ph"), e.get("args") if isinstance(e.get("args"), dict) else {}
    problems = [
        f"{k} {e[k]!r} is not an integer in 1..2^31-1"
        for k in ("pid", "tid")
        if k in e and _int(e[k]) is None
    ]
    row = {
        "seq": seq,
        "ph": ph if isinstance(ph, str) else None,
        "cat": e.get("cat"),
        "name": e.get("name"),
        "pid": _int(e.get("pid")),
        "tid": _int(e.get("tid")),
        "ts_ns": ns(e["ts"]) if "ts" in e else None,
        "dur_ns": ns(e["dur"]) if "dur" in e else None,
        "bp": e.get("bp") if ph == "f" else None,
        "scope": e.get("s"),
        "problem": "; ".join(problems) or None,
    }
    if ph in ("s", "f"):
        row["id"] = json.dumps(e["id"]) if "id" in e else None
    elif ph in ("b", "e", "n"):
        id2 = e.get("id2") if isinstance(e.get("id2"), dict) else {}
        aid = id2.get("local", id2.get("global", e.get("id")))
        row["id"] = json.dumps(aid) if aid is not None else None
    if ph == "M":
        row["meta_name"] = args.get("name") if isinstance(args.get("name"), str) else None
        row["meta_sort_index"] = _int(args.get("sort_index"))
        row["epoch_ns"] = _int(args.get("epoch_ns"))
    return row


def run_checks(rows: list[dict], views: tuple[str, ...]) -> list[str]:
    """Messages of the check views ``views`` over ``rows`` (chk_events rows),
    at most 10, ordered by seq; empty when the rules hold."""
    con = duckdb.connect()
    table = pa.table({c: pa.array([r.get(c) for r in rows], t) for c, t in _CHK_COLUMNS.items()})
    con.register("chk_rows", table)
    con.execute("CREATE TABLE chk_events AS FROM chk_rows")
    pipeline.run_pipeline(
        con,
        pipeline.sql_files(folders=validate.BASE_FOLDERS + validate.CHECK_FOLDERS),
        pipeline.Context(columns={}),
    )
    problems = []
    for view in views:
        problems += [
            m
            for (m,) in con.execute(
                f"SELECT message FROM {view} ORDER BY seq NULLS FIRST, message LIMIT 10"
            ).fetchall()
        ]
    con.close()
    return problems[:10]


def _events_rows(events: list[dict]) -> list[dict]:
    return [_chk_row(i, e) for i, e in enumerate(events)]


def partial_overlaps(slices: list[dict]) -> list[str]:
    """Pairs of slices on one (pid, tid) that overlap without nesting
    (check_overlap over the slices as X events; half-open intervals, equal
    intervals nest)."""
    rows = [
        {
            "seq": i,
            "ph": "X",
            "cat": s.get("cat"),
            "name": s.get("name"),
            "pid": s["pid"],
            "tid": s["tid"],
            "ts_ns": s["start_ns"],
            "dur_ns": s["end_ns"] - s["start_ns"],
        }
        for i, s in enumerate(slices)
    ]
    return run_checks(rows, ("check_overlap",))


def unnamed_tracks(events: list[dict]) -> list[str]:
    """Processes and (pid, tid) tracks used by events without name/sort
    metadata (check_track_named)."""
    return run_checks(_events_rows(events), ("check_track_named",))


def bad_ids(events: list[dict]) -> list[str]:
    """Events whose pid/tid are not integers in 1..2^31-1, or missing where
    needed (check_pid_tid)."""
    return run_checks(_events_rows(events), ("check_pid_tid",))


def flow_problems(
    events: list[dict], slices: list[dict] | None = None, base_ns: int = 0
) -> list[str]:
    """Flows: one s and one f per id, same cat/name, bp e, each end inside
    the innermost X of its track and of the right kind (check_flow and
    check_flow_kind over the JSON events; ``slices`` and ``base_ns`` are
    kept for the callers and not needed)."""
    return run_checks(_events_rows(events), ("check_flow", "check_flow_kind"))


# Slice categories that are copies of another category's source event: the
# Core/PCIe/D2D copies of a GPU operation, and NVTX ranges projected onto the
# GPU. A source event keeps the category of its own row.
_COPY_OF = {
    "kernel_core": "kernel",
    "cuda_graph_core": "cuda_graph",
    "memcpy_pcie": "memcpy",
    "memcpy_d2d": "memcpy",
    "nvtx_kernel": "nvtx",
}


def source_key(s: dict) -> tuple:
    """The Nsight row a slice draws, from its Parquet columns only: every copy
    of one source event (the Core copy of a kernel, an API call repeated under
    each device, an NVTX range under each device and its projections) gets
    the same key, and no two rows of the dev and newer exports share one."""
    kind = _COPY_OF.get(s["cat"], s["cat"])
    if kind == "nvtx":
        return ("nvtx", s["nvtx_id"])
    if kind in ("osrt", "cudnn", "cublas", "thread_state"):  # CPU side: per thread
        return (kind, s["os_pid"], s["os_tid"], s["start_ns"], s["end_ns"], s["name"])
    if kind in ("cuda_api", "cuda_sync"):
        return (
            kind,
            s["os_pid"],
            s["os_tid"],
            s["correlation_id"],
            s["start_ns"],
            s["end_ns"],
            s["name"],
        )
    return (
        kind,
        s["device_id"],
        s["context_id"],
        s["stream_id"],
        s["correlation_id"],
        s["start_ns"],
        s["end_ns"],
        s["name"],
        s["copy_kind"],
        s["bytes"],
    )


def primary_problems(slices: list[dict]) -> list[str]:
    """Source events without exactly one ``is_primary`` row, primary copies,
    and NULL ``is_primary`` values."""
    primary: dict[tuple, int] = defaultdict(int)
    problems = []
    for s in slices:
        if s["is_primary"] is None:
            problems.append(f"is_primary NULL: {s['cat']} {s['name']}")
        primary[source_key(s)] += bool(s["is_primary"])
        if s["is_primary"] and s["cat"] in _COPY_OF:
            problems.append(f"a {s['cat']} copy is primary: {s['name']}")
    problems += [f"{n} primary rows for {key}" for key, n in primary.items() if n != 1]
    return problems[:10]
