"""Contract checks used by the tests (output-contract.md), on small traces.

They read the parsed JSON events and the aligned Parquet table; each returns
a list of problems (empty = the rule holds), so a failing test shows examples.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from decimal import Decimal

import pyarrow.parquet as pq


def ns(us) -> int:
    """JSON microseconds (Decimal or int, at most 3 decimals) -> integer ns."""
    value = Decimal(us) * 1000
    assert value == value.to_integral_value(), f"{us} is not ns-exact"
    return int(value)


def slices_table(path) -> list[dict]:
    return pq.read_table(path).to_pylist()


def partial_overlaps(slices: list[dict]) -> list[str]:
    """Pairs of slices on one (pid, tid) that overlap without nesting.

    Half-open intervals [start, end); equal intervals count as nested. Sorting
    by (start, -end), each slice must end inside the innermost open slice.
    """
    problems = []
    by_track = defaultdict(list)
    for s in slices:
        by_track[(s["pid"], s["tid"])].append((s["start_ns"], -s["end_ns"], s))
    for key, items in by_track.items():
        items.sort(key=lambda x: (x[0], x[1]))
        stack: list[dict] = []
        for start, _, s in items:
            while stack and stack[-1]["end_ns"] <= start and not (
                    stack[-1]["end_ns"] == start == stack[-1]["start_ns"]):
                stack.pop()
            if stack and s["end_ns"] > stack[-1]["end_ns"]:
                problems.append(f"{key}: {stack[-1]['name']} [{stack[-1]['start_ns']},"
                                f"{stack[-1]['end_ns']}) vs {s['name']} "
                                f"[{s['start_ns']},{s['end_ns']})")
            stack.append(s)
    return problems


def unnamed_tracks(events: list[dict]) -> list[str]:
    """(pid, tid) and pids used by events without name/sort metadata."""
    named_threads = {(e["pid"], e["tid"]) for e in events
                     if e["ph"] == "M" and e["name"] == "thread_name" and e["args"]["name"]}
    sorted_threads = {(e["pid"], e["tid"]) for e in events
                      if e["ph"] == "M" and e["name"] == "thread_sort_index"}
    named_procs = {e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    problems = []
    for e in events:
        if e["ph"] == "M":
            continue
        if e["pid"] not in named_procs:
            problems.append(f"process {e['pid']} unnamed")
        if "tid" in e and ((e["pid"], e["tid"]) not in named_threads
                           or (e["pid"], e["tid"]) not in sorted_threads):
            problems.append(f"track {(e['pid'], e['tid'])} unnamed or unsorted")
    return sorted(set(problems))[:10]


def bad_ids(events: list[dict]) -> list[str]:
    return [str(e)[:200] for e in events
            if not (isinstance(e.get("pid"), int) and 1 <= e["pid"] < 2**31)
            or ("tid" in e and not (isinstance(e["tid"], int) and 1 <= e["tid"] < 2**31))][:10]


def flow_problems(events: list[dict], slices: list[dict], base_ns: int) -> list[str]:
    """Flows: one s and one f per id, same cat/name, bp e, inside the right slices.

    The slices holding a flow end are found in O(depth) per end: on each
    track (where slices nest, partial_overlaps checks that) every slice gets
    its parent once, and the holders of time t are the last slice starting
    at or before t, or its nearest ancestor holding t, and that one's
    ancestors (a scan of all earlier slices per end cost minutes on big
    tracks).
    """
    def holds(s, t):
        return s["start_ns"] <= t < s["end_ns"] or s["start_ns"] == t == s["end_ns"]

    tracks = {}
    by_track = defaultdict(list)
    for s in slices:
        by_track[(s["pid"], s["tid"])].append(s)
    for key, items in by_track.items():
        items.sort(key=lambda s: (s["start_ns"], -s["end_ns"]))
        parent, stack = [], []
        for i, s in enumerate(items):
            while stack and not (items[stack[-1]]["start_ns"] <= s["start_ns"]
                                 and s["end_ns"] <= items[stack[-1]]["end_ns"]):
                stack.pop()
            parent.append(stack[-1] if stack else None)
            stack.append(i)
        tracks[key] = (items, [s["start_ns"] for s in items], parent)

    def enclosing(pid, tid, t):
        items, starts, parent = tracks.get((pid, tid), ([], [], []))
        j = bisect.bisect_right(starts, t) - 1
        found = []
        while j is not None and j >= 0:
            if holds(items[j], t):
                found.append(items[j])
            j = parent[j]
        return found

    want_target = {"launch": {"kernel", "cuda_graph"},
                   "launch_core": {"kernel_core", "cuda_graph_core"},
                   "copy": {"memcpy", "memset"}, "copy_pcie": {"memcpy_pcie"},
                   "sync": {"gpu_sync"}}
    want_source = {"sync": {"cuda_sync", "cuda_api"}}
    ends = defaultdict(list)
    for e in events:
        if e["ph"] in ("s", "f"):
            ends[e["id"]].append(e)
    problems = []
    for fid, pair in ends.items():
        phs = sorted(e["ph"] for e in pair)
        if phs != ["f", "s"]:
            problems.append(f"flow {fid}: phases {phs}")
            continue
        s, f = (pair if pair[0]["ph"] == "s" else pair[::-1])
        if s["cat"] != f["cat"] or s["name"] != f["name"] or f.get("bp") != "e":
            problems.append(f"flow {fid}: cat/name/bp mismatch")
        s_ns, f_ns = ns(s["ts"]) + base_ns, ns(f["ts"]) + base_ns
        if s_ns > f_ns:
            problems.append(f"flow {fid}: s after f")
        src = enclosing(s["pid"], s["tid"], s_ns)
        dst = enclosing(f["pid"], f["tid"], f_ns)
        sources = want_source.get(s["cat"], {"cuda_api"})
        if not any(x["cat"] in sources for x in src):
            problems.append(f"flow {fid} ({s['cat']}): s not inside a {sources} slice")
        if not any(x["cat"] in want_target.get(s["cat"], ()) for x in dst):
            problems.append(f"flow {fid} ({s['cat']}): f not inside a {want_target.get(s['cat'])} slice")
        for holders, t in ((src, s_ns), (dst, f_ns)):
            if any(x["end_ns"] - x["start_ns"] > 1 and x["start_ns"] == t for x in holders):
                problems.append(f"flow {fid}: endpoint at the start of a slice longer than 1 ns")
    return problems[:10]


# Slice categories that are copies of another category's source event: the
# Core/PCIe/D2D copies of a GPU operation, and NVTX ranges projected onto the
# GPU. A source event keeps the category of its own row.
_COPY_OF = {"kernel_core": "kernel", "cuda_graph_core": "cuda_graph",
            "memcpy_pcie": "memcpy", "memcpy_d2d": "memcpy", "nvtx_kernel": "nvtx"}


def source_key(s: dict) -> tuple:
    """The Nsight row a slice draws, from its Parquet columns only: every copy
    of one source event (the Core copy of a kernel, an API call repeated under
    each device, an NVTX range under each device and its projections) gets
    the same key, and no two rows of the dev and newer exports share one."""
    kind = _COPY_OF.get(s["cat"], s["cat"])
    if kind == "nvtx":
        return ("nvtx", s["nvtx_id"])
    if kind in ("cuda_api", "cuda_sync"):
        return (kind, s["os_pid"], s["os_tid"], s["correlation_id"], s["start_ns"],
                s["end_ns"], s["name"])
    return (kind, s["device_id"], s["context_id"], s["stream_id"], s["correlation_id"],
            s["start_ns"], s["end_ns"], s["name"], s["copy_kind"], s["bytes"])


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
