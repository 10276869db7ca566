"""Compare what Perfetto imports from a protobuf trace (NAME.pftrace) with
what it imports from the JSON trace of the same conversion.

Both files are loaded with ``trace_processor_shell`` (``perfetto_import``'s
binary) and one query file, ``perfetto_pftrace.sql``; :func:`compare`
returns the differences (empty list = the same trace):

* neither import has an ``error`` or ``data_loss`` stat with a value;
* the same slices: the multiset of (ts relative to the first slice, dur,
  name, category, thread tid or process pid of its track, track type);
* the same flows: the multiset of (its two slices' keys as above);
* the same threads (tid, name) and processes (pid, name);
* the same args on every slice, key by key (``args.K`` in the JSON import is
  ``debug.K`` in the protobuf one; the keys Perfetto adds on its own, such as
  ``legacy_event.passthrough_utid``, are left out; real numbers to 12
  significant digits, since the JSON importer's reading is the inexact one),
  except that a projected copy of a GPU operation (:func:`projected_copies`) carries
  the lighter set in the JSON (``int_gpu_op_args.copy_args_json``) and every
  arg in the protobuf: there the JSON's args must be among the pftrace's.

No pytest here: tests call :func:`compare` and assert it is empty.
"""

from __future__ import annotations

import csv
import io
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

import duckdb

import perfetto_import
from nsys_duck import pipeline

QUERY = Path(__file__).resolve().parent / "perfetto_pftrace.sql"
TIMEOUT = 900.0
DOMAIN_KINDS = "05_domain/gpu_activity_kinds.sql"


def projected_copies() -> set[str]:
    """The cats of the Core/PCIe/D2D copies, whose JSON args are a subset
    of their protobuf args: the domain table's is_projection rows."""
    con = duckdb.connect()
    try:
        con.execute((pipeline.packaged_sql_dir() / DOMAIN_KINDS).read_text())
        sql = "SELECT slice_cat FROM gpu_activity_kinds WHERE is_projection"
        return {cat for (cat,) in con.execute(sql).fetchall()}
    finally:
        con.close()


# args Perfetto itself adds on one side only
IMPORTER_KEYS = ("legacy_event.", "legacy_trace_source_id", "source", "source_scope")
# the track types Perfetto gives the same track in each format: a JSON
# thread's, and a protobuf thread's
SAME_TRACK_TYPES = {"thread_execution": "thread", "thread": "thread"}


def _tables(trace: Path, binary: Path) -> dict[str, list[dict]]:
    out = subprocess.run(
        [str(binary), "-q", str(QUERY), str(trace)],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    if out.returncode != 0:
        raise perfetto_import.ImportFailed(f"{trace.name}: {out.stderr.strip()[-500:]}")
    tables: dict[str, list[dict]] = {}
    for block in out.stdout.split("\n\n"):
        rows = list(csv.DictReader(io.StringIO(block.strip())))
        if rows and "t" in rows[0]:
            for row in rows:
                tables.setdefault(row.pop("t"), []).append(row)
    return tables


def _arg_key(key: str) -> str | None:
    for prefix in ("args.", "debug."):
        if key.startswith(prefix):
            return key[len(prefix) :]
    return None if key.startswith(IMPORTER_KEYS) else key


def _value(text: str) -> str:
    """An arg's value, a real number to 12 significant digits: the JSON
    importer reads 11.781517 as 11.781517000000001 (its own number parser),
    the protobuf carries the double the SQL wrote."""
    if "." in text or "e" in text:
        try:
            return f"{float(text):.12g}"
        except ValueError:
            return text
    return text


def _norm(rows: list[dict], what: str) -> Counter:
    if what == "slice":
        return Counter(
            (
                r["rel_ts"],
                r["dur"],
                r["name"],
                r["cat"],
                r["owner"],
                SAME_TRACK_TYPES.get(r["track_type"], r["track_type"]),
            )
            for r in rows
        )
    if what == "arg":
        return Counter(
            (r["slice_key"], k, _value(r["value"]))
            for r in rows
            if (k := _arg_key(r["key"])) is not None
        )
    return Counter(tuple(sorted(r.items())) for r in rows)


def compare(pftrace: Path, json_gz: Path, binary: Path | None = None) -> list[str]:
    """The differences between the two imports (see the module docstring)."""
    binary = binary or perfetto_import.find_binary()
    if binary is None:
        raise perfetto_import.ImportFailed(perfetto_import.missing_message())
    ours, theirs = _tables(pftrace, binary), _tables(json_gz, binary)
    problems = []
    for name, side in (("pftrace", ours), ("json", theirs)):
        for row in side.get("stat", []):
            problems.append(f"{name}: stat {row['name']} ({row['severity']}) = {row['value']}")
    for what in ("slice", "flow", "thread", "process", "arg"):
        a, b = _norm(ours.get(what, []), what), _norm(theirs.get(what, []), what)
        if what == "arg":  # a copy's extra protobuf args are not a difference
            kinds = projected_copies()
            copies = _norm([r for r in ours.get(what, []) if r["cat"] in kinds], what)
            a = a - (copies - b)
        if a != b:
            only_a, only_b = a - b, b - a
            problems.append(
                f"{what}: {sum(a.values())} in the pftrace, {sum(b.values())} in the JSON; "
                f"only in the pftrace: {list(only_a.elements())[:3]}; "
                f"only in the JSON: {list(only_b.elements())[:3]}"
            )
    return problems


LIGHT_QUERY = """
SELECT 'light' AS t,
    (SELECT count(*) FROM stats WHERE value != 0
        AND severity IN ('error', 'data_loss')) AS problems,
    (SELECT count(*) FROM slice) AS slices,
    (SELECT count(*) FROM flow) AS flows;
"""


def light_check(pftrace: Path, slices: int, flows: int | None) -> list[str]:
    """The check of every pftrace a test writes (conftest): no error or
    data-loss stat, ``slices`` slices (the Parquet's rows) and, when given,
    ``flows`` flows (the JSON's flow starts). [] = fine."""
    binary = perfetto_import.find_binary()
    if binary is None:
        return []
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as q:
        q.write(LIGHT_QUERY)
    out = subprocess.run(
        [str(binary), "-q", q.name, str(pftrace)],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    Path(q.name).unlink()
    rows = list(csv.DictReader(io.StringIO(out.stdout.strip().split("\n\n")[-1])))
    if out.returncode != 0 or not rows:
        return [f"{pftrace.name}: trace_processor_shell failed: {out.stderr.strip()[-300:]}"]
    got = rows[-1]
    problems = []
    if int(got["problems"]):
        problems.append(f"{pftrace.name}: {got['problems']} error/data-loss stats")
    if int(got["slices"]) != slices:
        problems.append(f"{pftrace.name}: {got['slices']} slices, the Parquet has {slices}")
    if flows is not None and int(got["flows"]) != flows:
        problems.append(f"{pftrace.name}: {got['flows']} flows, the JSON has {flows}")
    return problems


def counts(trace: Path, binary: Path | None = None) -> dict[str, int]:
    """Rows per table of the query (slice, flow, thread, process, arg)."""
    binary = binary or perfetto_import.find_binary()
    return {k: len(v) for k, v in _tables(trace, binary).items()}
