"""Perfetto's flow table against the flows the pipeline meant (``int_flows``).

What users see of a flow is what Perfetto's importer makes of its ``s`` and
``f`` events: one row of its ``flow`` table joining ``slice_out`` to
``slice_in``. Perfetto binds each end to the innermost slice on its thread's
stack (perfetto-json.md 3.3) and orients the row by the two slices' starts
(FlowTracker::EndAt: the slice starting first is ``slice_out``), so a
wrongly laid out trace can give a flow to the wrong slice, or reverse it,
with no stat. :func:`flow_mismatches` loads the trace with
``trace_processor_shell`` (``perfetto_flows.sql``) and compares, flow by
flow, both slices of every row with the API slice (out) and GPU slice (in)
of each drawn flow of ``NAME.duckdb``'s ``int_flows``: same (pid, tid), ts,
dur, name and correlationId, so a flow Perfetto draws GPU -> CPU is a
mismatch too.

No pytest in here: tests call :func:`flow_mismatches` and assert ``== []``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import duckdb

import perfetto_import

QUERY = Path(__file__).resolve().parent / "perfetto_flows.sql"

# one flow: (cat, (pid, tid, ts, dur, name hex, correlationId) of the CPU
# slice, the same of the GPU slice); ts in ns from the trace's base. The
# flows the file holds: placeable (30_trace_events_body), both ends kept by
# --devices and starting in --window (53_trace_events_selected), and for
# part K of a split trace both ends in part K (trace_events_parted).
OURS = """
SELECT
    f.flow_cat,
    a.json_pid, a.json_tid, a.start_ns - b.base_ns, a.end_ns - a.start_ns,
    hex(a.name), a.correlation_id,
    g.json_pid, g.json_tid, g.start_ns - b.base_ns, g.end_ns - g.start_ns,
    hex(g.name), g.correlation_id
FROM int_flows AS f
JOIN int_slices_on_tracks AS a ON a.slice_id = f.api_slice_id
JOIN int_slices_on_tracks AS g ON g.slice_id = f.gpu_slice_id
CROSS JOIN trace_base AS b
CROSS JOIN trace_selection AS sel
CROSS JOIN trace_part_starts AS p
WHERE f.is_placeable
    AND (sel.devices IS NULL OR (f.s_pid IN (SELECT pid FROM trace_kept_pids)
        AND f.f_pid IN (SELECT pid FROM trace_kept_pids)))
    AND least(f.api_start_ns, f.gpu_start_ns)
        >= coalesce(sel.window_start_ns, least(f.api_start_ns, f.gpu_start_ns))
    AND greatest(f.api_start_ns, f.gpu_start_ns)
        < coalesce(sel.window_end_ns, greatest(f.api_start_ns, f.gpu_start_ns) + 1)
    AND ($part IS NULL OR (trace_part_of(p.starts, f.api_start_ns) = $part
        AND trace_part_of(p.starts, f.gpu_start_ns) = $part))
"""


def duckdb_for(json_gz: Path) -> Path:
    """``NAME.perfetto.json.gz`` -> ``NAME.duckdb`` beside it."""
    name = Path(json_gz).name
    assert name.endswith(".perfetto.json.gz"), name
    return Path(json_gz).with_name(name[: -len(".perfetto.json.gz")] + ".duckdb")


def our_flows(database: Path, part: int | None = None) -> Counter:
    """The flows ``int_flows`` means the trace file to hold, keyed as
    :func:`perfetto_flows` keys them: the whole trace's, or (``part`` K) those
    of ``NAME.part-K.perfetto.json.gz``."""
    con = duckdb.connect(str(database), read_only=True)
    try:
        rows = con.execute(OURS, {"part": part}).fetchall()
    finally:
        con.close()
    return Counter(_flow(row) for row in rows)


def perfetto_flows(json_gz: Path) -> Counter:
    """Every row of Perfetto's flow table for the trace, keyed like :func:`our_flows`."""
    imported = perfetto_import.run(Path(json_gz))
    return flow_counter(imported.flow_rows)


def flow_counter(rows: list[list]) -> Counter:
    """Rows of ``perfetto_flows.sql`` (as :func:`perfetto_import.run` returns
    them) -> flows keyed like :func:`our_flows`."""
    return Counter(_flow([_cell(v, i in NAME_COLUMNS) for i, v in enumerate(row)]) for row in rows)


NAME_COLUMNS = (0, 5, 11)  # cat and the names as hex: text even when all digits


def _cell(value, text: bool):
    """A cell of perfetto_flows.sql: names stay text, numbers -> int."""
    if value is None:
        return None
    return str(value) if text else int(value)


def _flow(row) -> tuple:
    """(cat, CPU slice, GPU slice) from one 13-column row."""
    return (row[0], tuple(row[1:7]), tuple(row[7:13]))


def _describe(end: tuple) -> str:
    pid, tid, ts, dur, name, corr = end
    text = bytes.fromhex(name).decode("utf-8", "replace") if name else name
    return f"{text!r} (pid {pid}, tid {tid}, ts {ts} ns, dur {dur} ns, correlationId {corr})"


def flow_mismatches(
    json_gz: Path, database: Path | None = None, part: int | None = None, limit: int = 10
) -> list[str]:
    """Flows of Perfetto's flow table that are not a flow of int_flows, and the reverse.

    [] when every row joins the CPU slice int_flows meant (slice_out) to the
    GPU slice it meant (slice_in). A flow Perfetto reversed is named as such.
    ``part``: ``json_gz`` is part K of a split trace.
    """
    ours = our_flows(database or duckdb_for(json_gz), part)
    return compare(ours, perfetto_flows(json_gz), limit)


def compare(ours: Counter, theirs: Counter, limit: int = 10) -> list[str]:
    """Problems (empty: equal) between the flows we meant and Perfetto's."""
    missing = ours - theirs
    extra = theirs - ours
    reversed_ = {(c, b, a) for c, a, b in extra} & set(missing)
    problems = [
        f"{sum(missing.values())} flows of int_flows are not in Perfetto's flow table, "
        f"which has {sum(extra.values())} others ({len(reversed_)} of them reversed, GPU -> CPU)"
    ]
    for cat, cpu, gpu in sorted(missing)[:limit]:
        how = "drawn GPU -> CPU" if (cat, cpu, gpu) in reversed_ else "not drawn"
        problems.append(f"  {cat} flow {_describe(cpu)} -> {_describe(gpu)}: {how}")
    for cat, out, in_ in sorted(extra)[:limit]:
        if (cat, in_, out) not in reversed_:
            problems.append(f"  Perfetto's {cat} flow {_describe(out)} -> {_describe(in_)}")
    return problems if missing or extra else []
