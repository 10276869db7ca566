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

import csv
import subprocess
from collections import Counter
from pathlib import Path

import duckdb

import perfetto_import

QUERY = Path(__file__).resolve().parent / "perfetto_flows.sql"

# one flow: (cat, (pid, tid, ts, dur, name hex, correlationId) of the CPU
# slice, the same of the GPU slice); ts in ns from the trace's base
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
WHERE f.is_placeable
"""


def duckdb_for(json_gz: Path) -> Path:
    """``NAME.perfetto.json.gz`` -> ``NAME.duckdb`` beside it."""
    name = Path(json_gz).name
    assert name.endswith(".perfetto.json.gz"), name
    return Path(json_gz).with_name(name[: -len(".perfetto.json.gz")] + ".duckdb")


def our_flows(database: Path) -> Counter:
    """The drawn flows of ``int_flows``, keyed as :func:`perfetto_flows` keys them."""
    con = duckdb.connect(str(database), read_only=True)
    try:
        rows = con.execute(OURS).fetchall()
    finally:
        con.close()
    return Counter(_flow(row) for row in rows)


def perfetto_flows(json_gz: Path) -> Counter:
    """Every row of Perfetto's flow table for the trace, keyed like :func:`our_flows`."""
    binary = perfetto_import.find_binary()
    assert binary is not None, perfetto_import.missing_message()
    out = subprocess.run(
        [str(binary), "-q", str(QUERY), str(json_gz)],
        capture_output=True,
        text=True,
        check=True,
        timeout=perfetto_import.TIMEOUT,
        stdin=subprocess.DEVNULL,
    ).stdout
    rows = list(csv.reader(out.splitlines()))
    assert rows and rows[0][:2] == ["cat", "out_pid"], out[-500:]
    return Counter(
        _flow([_cell(v, i in NAME_COLUMNS) for i, v in enumerate(row)]) for row in rows[1:]
    )


NAME_COLUMNS = (0, 5, 11)  # cat and the names as hex: text even when all digits


def _cell(value: str, text: bool):
    """A CSV cell of trace_processor_shell: NULL -> None, numbers -> int."""
    if value == "[NULL]":
        return None
    return value if text else int(value)


def _flow(row) -> tuple:
    """(cat, CPU slice, GPU slice) from one 13-column row."""
    return (row[0], tuple(row[1:7]), tuple(row[7:13]))


def _describe(end: tuple) -> str:
    pid, tid, ts, dur, name, corr = end
    text = bytes.fromhex(name).decode("utf-8", "replace") if name else name
    return f"{text!r} (pid {pid}, tid {tid}, ts {ts} ns, dur {dur} ns, correlationId {corr})"


def flow_mismatches(json_gz: Path, database: Path | None = None, limit: int = 10) -> list[str]:
    """Flows of Perfetto's flow table that are not a flow of int_flows, and the reverse.

    [] when every row joins the CPU slice int_flows meant (slice_out) to the
    GPU slice it meant (slice_in). A flow Perfetto reversed is named as such.
    """
    ours = our_flows(database or duckdb_for(json_gz))
    theirs = perfetto_flows(json_gz)
    missing = ours - theirs
    extra = theirs - ours
    reversed_ = {(c, b, a) for c, a, b in extra} & set(missing)
    problems = [
        f"{len(missing)} flows of int_flows are not in Perfetto's flow table, "
        f"which has {len(extra)} others ({len(reversed_)} of them reversed, GPU -> CPU)"
    ]
    for cat, cpu, gpu in sorted(missing)[:limit]:
        how = "drawn GPU -> CPU" if (cat, cpu, gpu) in reversed_ else "not drawn"
        problems.append(f"  {cat} flow {_describe(cpu)} -> {_describe(gpu)}: {how}")
    for cat, out, in_ in sorted(extra)[:limit]:
        if (cat, in_, out) not in reversed_:
            problems.append(f"  Perfetto's {cat} flow {_describe(out)} -> {_describe(in_)}")
    return problems if missing or extra else []
