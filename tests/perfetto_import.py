"""Load a trace with Perfetto's own importer and compare with what we wrote.

``trace_processor_shell`` (the engine behind ui.perfetto.dev, built from
Perfetto v58.2 in ``shared/tools/perfetto``) imports the trace once, with
one query file (``perfetto_import.sql``), and :func:`check` returns the
problems (empty list = Perfetto imported the trace without errors or loss):

* its ``stats`` table has no entry with ``value != 0`` and severity
  ``error`` or ``data_loss`` (shared/reference/perfetto-json.md, section 5);
* its slice count equals our row count of ``NAME.perfetto.parquet`` (one row
  per X slice, B/E pair, instant ``i`` and async b/e pair: Perfetto makes one
  slice of each; X, B/E and i on thread tracks, b/e on process async tracks,
  checked per cat and track type on every dev trace);
* its flow count equals the number of flows we wrote (``"ph":"s"`` events);
* and it returns every row of Perfetto's ``flow`` table, slice by slice
  (``perfetto_flows.sql``), for ``perfetto_flows.compare`` with ``int_flows``.

No pytest in here: ``conftest.py`` decides when to check and how to report.
The binary: ``$NSYS_DUCK_TRACE_PROCESSOR``, else
``tools/perfetto/trace_processor_shell`` in the team's shared folder
(``paths.py``: ``$NSYS_DUCK_SHARED`` or ``../shared`` beside the clone).
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
from isal import igzip

from paths import TRACE_PROCESSOR

ENV_BINARY = "NSYS_DUCK_TRACE_PROCESSOR"
ENV_REQUIRE = "NSYS_DUCK_REQUIRE_PERFETTO"
DEFAULT_BINARY = TRACE_PROCESSOR
QUERY = Path(__file__).resolve().parent / "perfetto_import.sql"
FLOWS_QUERY = Path(__file__).resolve().parent / "perfetto_flows.sql"
TIMEOUT = 900.0  # seconds for one import (the 2M-event trace takes 4-6 s)


def binary_path() -> Path:
    """Where the importer is looked for (it may be missing)."""
    return Path(os.environ.get(ENV_BINARY) or DEFAULT_BINARY)


def find_binary() -> Path | None:
    """The importer, or None when it is missing or not executable."""
    path = binary_path()
    return path if path.is_file() and os.access(path, os.X_OK) else None


def required() -> bool:
    """``NSYS_DUCK_REQUIRE_PERFETTO=1``: a missing importer fails the check (CI)."""
    return os.environ.get(ENV_REQUIRE, "") not in ("", "0")


def missing_message() -> str:
    where = (
        f"${ENV_BINARY}"
        if os.environ.get(ENV_BINARY)
        else f"the default; set ${ENV_BINARY} to use another"
    )
    then = (
        f"{ENV_REQUIRE}=1 requires it"
        if required()
        else f"the check is skipped; {ENV_REQUIRE}=1 makes this a failure"
    )
    return f"Perfetto's importer trace_processor_shell is not at {binary_path()} ({where}): {then}"


def version(binary: Path | None = None) -> str:
    binary = binary or find_binary()
    if binary is None:
        return "missing"
    try:
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    except OSError as exc:
        return f"does not run: {exc}"
    return (out.stdout.strip().splitlines() or ["?"])[0]


# --- what we wrote -----------------------------------------------------------


def parquet_for(json_gz: Path) -> Path:
    """``NAME.perfetto.json.gz`` -> ``NAME.perfetto.parquet`` beside it."""
    name = json_gz.name
    assert name.endswith(".perfetto.json.gz"), name
    return json_gz.with_name(name[: -len(".json.gz")] + ".parquet")


@dataclass
class Ours:
    """Our side of the comparison, read when the trace was produced."""

    slices: int  # rows of NAME.perfetto.parquet
    slices_by_cat: dict[str, int]


def our_slices(parquet: Path) -> Ours:
    column = pq.read_table(parquet, columns=["cat"]).column("cat")
    cats = {
        ("" if row["values"] is None else row["values"]): row["counts"]
        for row in pc.value_counts(column).to_pylist()
    }
    return Ours(len(column), cats)


FLOW_START = b'"ph":"s"'


def count_flow_starts(json_gz: Path, chunk: int = 1 << 24) -> int:
    """Number of flow starts (``"ph":"s"`` events) in the trace, streamed.

    A byte count, 14x faster than a JSON parser (2M events: 0.8 s against
    11 s for ijson): in valid JSON these bytes can only be an object member
    ``"ph":"s"`` (inside a string every ``"`` is escaped), i.e. an event's
    phase, or an ``args`` key "ph" with value "s", which our args never
    have. The writer emits compact JSON; were it to add spaces the count
    would drop and the check fail loudly, never pass wrongly.
    """
    n, tail = 0, b""
    with igzip.open(json_gz, "rb") as f:
        while block := f.read(chunk):
            data = tail + block
            n += data.count(FLOW_START)
            # keep a partial match for the next block (the pattern has no
            # self-overlap, so nothing is counted twice)
            tail = data[-(len(FLOW_START) - 1) :]
    return n


# --- what Perfetto imported --------------------------------------------------


@dataclass
class Imported:
    stats: list[dict] = field(default_factory=list)  # error/data_loss, value != 0
    slices: int = 0
    slices_by_cat: dict[str, int] = field(default_factory=dict)
    flows: int = 0
    deepest: list[dict] = field(default_factory=list)  # tracks at the depth limit
    logs: list[dict] | None = None  # None: no _trace_import_logs
    seconds: float = 0.0
    flow_rows: list[list] = field(default_factory=list)  # perfetto_flows.sql's rows


class ImportFailed(Exception):
    """trace_processor_shell could not load the trace or run the query."""


def _cells(stdout: str) -> dict[str, str]:
    """``"column"`` header lines followed by one ``"value"`` line -> {column: value}."""
    lines = stdout.splitlines()
    cells = {}
    for i, line in enumerate(lines[:-1]):
        if line in ('"nsys_duck_import"', '"nsys_duck_flows"', '"nsys_duck_logs"'):
            value = lines[i + 1]
            if len(value) >= 2 and value[0] == value[-1] == '"':
                cells[line.strip('"')] = value[1:-1]
    return cells


_QUERY_FILE: list[Path] = []  # perfetto_import.sql with its @flows line filled in


def _query_file() -> Path:
    """perfetto_import.sql with perfetto_flows.sql in place of ``-- @flows``,
    written once per session: one import answers both."""
    if not _QUERY_FILE:
        text = QUERY.read_text().replace("-- @flows", FLOWS_QUERY.read_text())
        with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
            f.write(text)
        _QUERY_FILE.append(Path(f.name))
    return _QUERY_FILE[0]


def _start(json_gz: Path, binary: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [str(binary), "-q", str(_query_file()), str(json_gz)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        stdin=subprocess.DEVNULL,
    )


def _finish(proc: subprocess.Popen, t0: float) -> Imported:
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise ImportFailed(f"trace_processor_shell did not finish in {TIMEOUT:.0f} s") from None
    seconds = time.perf_counter() - t0
    cells = _cells(out)
    if "nsys_duck_import" not in cells:
        last = [line for line in err.splitlines() if line.strip()][-3:]
        raise ImportFailed(
            f"trace_processor_shell exit status {proc.returncode}, "
            f"no result: {' | '.join(last) or 'no message'}"
        )
    main = json.loads(cells["nsys_duck_import"])
    if "nsys_duck_flows" not in cells:
        raise ImportFailed("trace_processor_shell printed no flow rows (perfetto_flows.sql)")
    logs = json.loads(cells["nsys_duck_logs"]) if "nsys_duck_logs" in cells else None
    if logs is None and "_trace_import_logs" not in err:
        last = [line for line in err.splitlines() if line.strip()][-3:]
        raise ImportFailed(
            f"trace_processor_shell exit status {proc.returncode}: "
            f"{' | '.join(last) or 'no message'}"
        )
    return Imported(
        main["stats"] or [],
        main["slices"],
        main["slices_by_cat"] or {},
        main["flows"],
        main["deepest"] or [],
        logs,
        seconds,
        json.loads(cells["nsys_duck_flows"]) or [],
    )


def run(json_gz: Path, binary: Path | None = None) -> Imported:
    """Import ``json_gz`` once and return what Perfetto made of it.
    Raises ImportFailed when the importer is missing or fails."""
    binary = binary or find_binary()
    if binary is None:
        raise ImportFailed(missing_message())
    t0 = time.perf_counter()
    try:
        proc = _start(json_gz, binary)
    except OSError as exc:
        raise ImportFailed(f"cannot run {binary}: {exc}") from exc
    return _finish(proc, t0)


def query(json_gz: Path, sql: str, binary: Path | None = None) -> list[dict[str, str]]:
    """Rows of one SELECT on the trace as Perfetto imports it (its tables:
    slice, args, flow, thread, process, trace_bounds...), each a dict of the
    CSV cells trace_processor_shell prints (text; ``[NULL]`` for NULL).
    Raises ImportFailed when the importer is missing or the query fails."""
    binary = binary or find_binary()
    if binary is None:
        raise ImportFailed(missing_message())
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(sql.rstrip().rstrip(";") + ";\n")
    try:
        proc = subprocess.run(
            [str(binary), "-q", f.name, str(json_gz)],
            capture_output=True,
            text=True,
            errors="replace",
            stdin=subprocess.DEVNULL,
            timeout=TIMEOUT,
        )
    finally:
        os.unlink(f.name)
    if proc.returncode != 0:
        last = [line for line in proc.stderr.splitlines() if line.strip()][-3:]
        raise ImportFailed(f"trace_processor_shell: {' | '.join(last) or proc.returncode}")
    lines = proc.stdout.strip().splitlines()
    return list(csv.DictReader(lines))


# --- the check -----------------------------------------------------------------


def _us(ns: int) -> str:
    whole, frac = divmod(ns, 1000)
    return f"{whole}.{frac:03d}"


def check(
    json_gz: Path,
    ours: Ours | None = None,
    binary: Path | None = None,
) -> tuple[list[str], Imported | None]:
    """Import ``json_gz`` and compare; returns (problems, what Perfetto imported).

    ``ours`` defaults to the Parquet beside the trace. The flow count is read
    from the JSON while the importer runs (one process per trace).
    """
    json_gz = Path(json_gz)
    if ours is None:
        ours = our_slices(parquet_for(json_gz))
    binary = binary or find_binary()
    if binary is None:
        return [missing_message()], None
    t0 = time.perf_counter()
    try:
        proc = _start(json_gz, binary)
    except OSError as exc:
        return [f"cannot run {binary}: {exc}"], None
    flows: dict[str, object] = {}

    def count() -> None:
        try:
            flows["n"] = count_flow_starts(json_gz)
        except Exception as exc:  # reported as a problem below
            flows["error"] = exc

    counter = threading.Thread(target=count, daemon=True)
    counter.start()
    try:
        imp = _finish(proc, t0)
    except ImportFailed as exc:
        counter.join()
        return [f"Perfetto could not import the trace: {exc}"], None
    counter.join()

    problems = []
    for s in imp.stats:
        idx = "" if s.get("idx") is None else f"[{s['idx']}]"
        line = f"Perfetto stat {s['name']}{idx} = {s['value']} (severity {s['severity']})"
        description = (s.get("description") or "").split(". ")[0].strip()
        problems.append(f"{line}: {description}" if description else line)
    if imp.stats:
        if imp.logs is None:
            problems.append("  (this trace_processor_shell has no _trace_import_logs table)")
        for row in imp.logs or []:
            args = ", ".join(f"{k}={v!r}" for k, v in (row.get("args") or {}).items())
            where = (
                f"ts {row['ts']} ns (JSON ts {_us(row['ts'])})"
                if row["ts"] is not None
                else "no ts"
            )
            if row.get("byte_offset") is not None:
                where += f", byte {row['byte_offset']}"
            problems.append(f"  import log {row['name']}: {where}: {args}")
    if any(s["name"] == "slice_max_depth_exceeded" for s in imp.stats):
        for t in imp.deepest:
            problems.append(
                f"  at the depth limit (512 levels): track {t['track']!r} "
                f"({t['slices']} slices kept)"
            )
    if imp.slices != ours.slices:
        diff = {
            c: ours.slices_by_cat.get(c, 0) - imp.slices_by_cat.get(c, 0)
            for c in sorted(set(ours.slices_by_cat) | set(imp.slices_by_cat))
        }
        diff = {c: d for c, d in diff.items() if d}
        problems.append(
            f"Perfetto has {imp.slices} slices, the aligned Parquet "
            f"{ours.slices} rows (ours minus Perfetto's, per cat: {diff})"
        )
    if "error" in flows:
        problems.append(f"cannot count the flows in the JSON: {flows['error']}")
    elif flows["n"] != imp.flows:
        problems.append(
            f'Perfetto has {imp.flows} flows, the JSON {flows["n"]} flow starts ("ph":"s")'
        )
    return problems, imp
