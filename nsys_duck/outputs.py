"""The one output path: what a conversion and a merge do once their
relations exist (``int_*``, ``trace_*``), in small named steps.

``convert`` (one report's export through the SQL stages) and ``merge``
(many reports' relations renumbered by ``sql/merge``) differ only in how
their relations are produced; then both run :func:`write_outputs` (slices
present, the contract checks, the Perfetto JSON in one or more parts, the
aligned Parquet, the Kineto trace, the summary rows), close their database,
run :func:`validate_edited_json` and :func:`publish` (every file renamed
into place, signals deferred, the manifest last). Every file is written
under a temporary name first (output-contract.md, Files: a failed run
leaves no half-written file in place of a good one).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from . import checks as checks_mod
from . import contract, pipeline, writers
from .errors import NoEventsError, ValidationFailed
from .failures import Step, os_failure
from .pftrace import write_pftrace
from .runs import InterruptWatch, interrupts_deferred
from .workspace import Workspace

Progress = Callable[[str, float | None], None]

# why a Kineto trace asked for is not written (chosen_traces)
NO_KINETO_RANK = (
    "no Kineto trace: no profiled process has GPU work (kernels, copies, memsets), "
    "and a Kineto trace holds one rank per such process"
)


# --format: which traces a conversion (and a merge) writes: the Perfetto
# JSON (NAME.perfetto.json.gz, in parts when large), Perfetto's protobuf
# (NAME.pftrace, one file) and the Kineto trace (NAME.kineto/); both: every
# one of them
TRACE_FORMATS = {
    "perfetto": ("json",),
    "pftrace": ("pftrace",),
    "kineto": ("kineto",),
    "both": ("json", "pftrace", "kineto"),
}


def writes_perfetto(trace_format: str) -> bool:
    """``--format`` asks for the Perfetto JSON (``perfetto``, ``both``)."""
    return "json" in TRACE_FORMATS[trace_format]


def writes_pftrace(trace_format: str) -> bool:
    """``--format`` asks for the protobuf trace (``pftrace``, ``both``)."""
    return "pftrace" in TRACE_FORMATS[trace_format]


def writes_kineto(trace_format: str) -> bool:
    """``--format`` asks for the Kineto trace (``kineto``, ``both``)."""
    return "kineto" in TRACE_FORMATS[trace_format]


@dataclass
class ChosenTraces:
    """The traces a conversion or merge writes (:func:`chosen_traces`)."""

    perfetto: bool  # the JSON
    kineto: bool
    notes: list[str]  # one sentence each, for the summary (why not as asked)
    pftrace: bool = False


def chosen_traces(con: duckdb.DuckDBPyConnection, trace_format: str) -> ChosenTraces:
    """The traces to write for ``--format trace_format``, once the SQL stages
    ran: as asked, except that a capture with no Kineto rank (``kineto_ranks``
    empty: no process with GPU work) gets no Kineto trace but the Perfetto
    trace (``both``: the Perfetto trace alone; ``kineto``: the Perfetto trace
    instead, so the run still leaves a trace to open), with a note saying so.
    The Parquet and NAME.duckdb are written whatever the format."""
    perfetto, kineto = writes_perfetto(trace_format), writes_kineto(trace_format)
    pftrace = writes_pftrace(trace_format)
    if not kineto or con.execute("SELECT count(*) FROM kineto_ranks").fetchall()[0][0]:
        return ChosenTraces(perfetto, kineto, [], pftrace)
    if perfetto or pftrace:
        return ChosenTraces(
            perfetto, False, [f"{NO_KINETO_RANK}; the Perfetto trace is written alone"], pftrace
        )
    return ChosenTraces(True, False, [f"{NO_KINETO_RANK}; the Perfetto trace is written instead"])


def read_trace_notes(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The ``trace_notes`` sentences (what the capture lacks: GPU activity,
    kernels), in print order."""
    return [n for (n,) in con.execute("SELECT note FROM trace_notes ORDER BY ord").fetchall()]


def read_window(con: duckdb.DuckDBPyConnection) -> dict | None:
    """What ``--window`` selected (the ``trace_window`` row: the window in
    UTC-epoch ns and after the trace's first event, the slices it holds),
    or None without ``--window``."""
    cur = con.execute("SELECT * FROM trace_window")
    rows = cur.fetchall()
    if not rows:
        return None
    return dict(zip([d[0] for d in cur.description], rows[0], strict=True))


@dataclass
class OutputSpec:
    """What a run writes and how (the rest comes from the relations)."""

    ws: Workspace
    trace_format: str  # --format: perfetto, kineto or both
    validate: bool  # run the contract checks (check_* views) before writing
    no_events: Callable[[duckdb.DuckDBPyConnection], str]  # why, when int_slices is empty
    memory_limit: str  # DuckDB's, also for the file validator
    temp_dir: Path  # scratch (spill) folder inside the workspace


@dataclass
class Written:
    """The files :func:`write_outputs` wrote under temporary names."""

    finals: list[Path]  # where each goes (JSON parts, Parquet, dependencies)
    tmps: list[Path]  # where each is now, in the same order
    n_json: int  # the first n_json files are the Perfetto JSON (its parts)
    kineto_tmp: Path  # the Kineto folder while written
    kineto_files: list[Path]  # where its rank files go
    kineto_written: bool  # the Kineto folder was written (publish it)
    summary: list[tuple[str, object]]  # trace_summary, split summary, sizes
    notes: list[str]  # trace_notes, then why a trace asked for is not written
    checked: checks_mod.CheckRun | None  # None: the checks did not run
    pftrace_tmp: Path | None = None  # the protobuf trace while written (among tmps)
    file_validated: bool = False  # validate_edited_json read the JSON
    timings: list[pipeline.StageTiming] = field(default_factory=list)

    def add(self, final: Path, tmp: Path) -> None:
        """One more file to publish (e.g. NAME.duckdb once closed)."""
        self.finals.append(final)
        self.tmps.append(tmp)


class Scratch:
    """What a run holds while it writes, given back when it ends however it
    ends (a ``with`` block): its DuckDB connection (``con``, closed first,
    so no late write lands in a removed file), the temporary files
    (``files``: removed unless published, see :func:`publish`) and the
    Kineto folder while written (``kineto_tmp``)."""

    def __init__(self, ws: Workspace) -> None:
        self.con: duckdb.DuckDBPyConnection | None = None
        self.files: list[Path] = []
        self.kineto_tmp = writers.temp_path(ws.kineto_dir)

    def __enter__(self) -> Scratch:
        return self

    def close_connection(self) -> None:
        """Close ``con`` now (a closed database file can be published)."""
        con, self.con = self.con, None
        if con is not None:
            con.close()

    def __exit__(self, *exc) -> None:
        try:
            self.close_connection()
        except duckdb.Error:
            pass
        writers.discard(self.files)
        shutil.rmtree(self.kineto_tmp, ignore_errors=True)


@contextmanager
def timed(timings: list[pipeline.StageTiming], label: str) -> Iterator[None]:
    """Append how long the ``with`` body took to ``timings`` as ``label``
    (the ``--timings`` rows, seconds)."""
    t0 = time.perf_counter()
    yield
    timings.append(pipeline.StageTiming(label, time.perf_counter() - t0))


def require_slices(con: duckdb.DuckDBPyConnection, spec: OutputSpec) -> None:
    """Raises NoEventsError (``spec.no_events``) when ``int_slices`` is empty."""
    if con.execute("SELECT count(*) FROM int_slices").fetchall()[0][0] == 0:
        raise NoEventsError(spec.no_events(con))


def contract_checks(
    con, files, spec: OutputSpec, progress: Progress, watch: InterruptWatch, timings
) -> checks_mod.CheckRun | None:
    """Every ``check_*`` view of ``files`` (:func:`checks.run_checks`) before
    anything is written; None when ``spec.validate`` is off. Raises
    CheckFailed (the check's file, view and first message)."""
    if not spec.validate:
        return None
    progress("contract checks", None)
    checked = checks_mod.run_checks(con, files, lambda view: progress(f"check {view}", None))
    timings.extend(checked.timings)
    watch.stop_if_hit()
    return checked


def trace_files(con, spec: OutputSpec, traces: ChosenTraces) -> tuple[list[Path], list[Path]]:
    """(finals, temporaries): the JSON trace (one file, or one per row of
    ``trace_parts``; none unless asked for), the aligned Parquet, the kernel
    dependencies, then the protobuf trace when asked for."""
    ws = spec.ws
    parts = [p for (p,) in con.execute("SELECT part FROM trace_parts ORDER BY part").fetchall()]
    jsons = [ws.json_gz] if len(parts) == 1 else [ws.json_part(p) for p in parts]
    if not traces.perfetto:
        jsons = []  # no Perfetto JSON asked for
    finals = [*jsons, ws.events_parquet, ws.kernel_dependencies]
    if traces.pftrace:
        finals.append(ws.pftrace)
    return finals, [writers.temp_path(f) for f in finals]


def write_outputs(
    con: duckdb.DuckDBPyConnection,
    files: list[pipeline.SqlFile],
    spec: OutputSpec,
    step: Step,
    progress: Progress,
    watch: InterruptWatch,
    scratch: Scratch,
) -> Written:
    """Check the relations and write every output file under a temporary
    name; ``step.now`` names what runs (for a failure's sentence) and
    ``scratch`` holds the temporaries (removed if the run fails).

    Raises NoEventsError, CheckFailed, duckdb.Error and OSError (the caller
    turns them into one sentence: :func:`failures.named_failures`).
    """
    timings: list[pipeline.StageTiming] = []
    step.now = "counting slices"
    require_slices(con, spec)
    step.now = "the contract checks"
    checked = contract_checks(con, files, spec, progress, watch, timings)
    traces = chosen_traces(con, spec.trace_format)
    finals, tmps = trace_files(con, spec, traces)
    scratch.files.extend(tmps)
    n_json = len(finals) - 2 - traces.pftrace
    kineto_tmp = scratch.kineto_tmp
    out = Written(
        finals,
        tmps,
        n_json,
        kineto_tmp,
        [],
        False,
        [],
        [*read_trace_notes(con), *traces.notes],
        checked,
    )
    out.timings = timings
    if traces.pftrace:
        out.pftrace_tmp = tmps[-1]
    step.now = "writing the JSON trace"
    events, json_bytes = write_json(con, out, progress)
    pftrace = None
    if out.pftrace_tmp is not None:
        step.now = "writing the protobuf trace"
        progress("writing the protobuf trace", None)
        with timed(timings, "write pftrace"):
            pftrace = write_pftrace(con, out.pftrace_tmp)
    step.now = "writing the aligned Parquet"
    progress("writing Parquet", None)
    with timed(timings, "write Parquet"):
        rows = writers.write_parquet(con, contract.parquet_query(files), tmps[n_json])
        writers.write_kernel_dependencies(tmps[n_json + 1])
    kineto = None
    if traces.kineto:
        step.now = "writing the Kineto trace"
        progress("writing the Kineto trace", None)
        with timed(timings, "write Kineto JSON"):
            kineto = writers.write_kineto_json(con, kineto_tmp)
        out.kineto_files = [spec.ws.kineto_dir / path.name for path, _ in kineto.files]
        out.kineto_written = True
    step.now = "the summary"
    out.summary = read_summary(con, files)
    if out.n_json:
        out.summary += [
            ("JSON events", events),
            ("JSON size, uncompressed (MB)", round(json_bytes / 1e6, 1)),
        ]
    if pftrace is not None:
        out.summary += [
            ("pftrace TrackEvents", pftrace.events),
            ("pftrace size (MB)", round(pftrace.bytes / 1e6, 1)),
        ]
        if out.n_json > 1:
            out.notes.append(
                f"the JSON trace is split in {out.n_json} parts; {spec.ws.pftrace.name} "
                "holds the whole trace in one file"
            )
    elif out.n_json > 1:
        out.notes.append(
            f"the JSON trace is split in {out.n_json} parts; --format pftrace writes the "
            "whole trace in one file (Perfetto's protobuf, NAME.pftrace)"
        )
    out.summary.append(("Parquet rows", rows))
    if kineto is not None:
        out.summary += [("Kineto ranks", len(kineto.files)), ("Kineto events", kineto.events)]
    return out


def write_json(con, out: Written, progress: Progress) -> tuple[int, int]:
    """The Perfetto JSON (its parts) into ``out.tmps[:n_json]``, each gzip
    trailer checked; returns (events, uncompressed bytes)."""
    events = json_bytes = 0
    n = out.n_json
    with timed(out.timings, "write JSON"):
        progress("writing JSON" if n == 1 else f"writing JSON ({n} parts)", None)
        stats_of = writers.write_trace_json(con, out.tmps[:n]) if n else []
        for tmp, stats in zip(out.tmps, stats_of, strict=False):
            writers.check_gzip_trailer(tmp, stats)
            json_bytes += stats.bytes_uncompressed
            events += stats.events
    return events, json_bytes


def read_summary(
    con: duckdb.DuckDBPyConnection, files: list[pipeline.SqlFile]
) -> list[tuple[str, object]]:
    """The (metric, value) rows the run prints, in print order, from the
    views the SQL declares (:func:`contract.summary_queries`)."""
    return [row for q in contract.summary_queries(files) for row in con.execute(q).fetchall()]


def validation_message(rep) -> str:
    """One sentence for a failed file validation (the first violation)."""
    total = sum(rep.violation_counts.values())
    rules = ", ".join(f"{r} {n}" for r, n in rep.violation_counts.items())
    msg = f"the trace failed validation: {total} violation{'s' if total != 1 else ''} ({rules})"
    if rep.violations:
        v = rep.violations[0]
        msg += f"; first: [{v.rule}] " + " ".join(v.message.split())[:300]
    return msg + ("; nothing was published (nsys-duck convert --no-validate writes it anyway)")


def validate_edited_json(
    out: Written,
    files: list[pipeline.SqlFile],
    spec: OutputSpec,
    progress: Progress,
    watch: InterruptWatch,
) -> None:
    """When a ``--sql-dir`` file redefines a view the JSON writer reads
    (:func:`checks.writer_sql_edited`), the checks describe the packaged
    writer SQL, not this one: the file validator reads the written JSON
    before anything is published (sets ``out.file_validated``).

    Raises ValidationFailed (one sentence), OSError, KeyboardInterrupt.
    """
    if not (spec.validate and out.n_json and checks_mod.writer_sql_edited(files)):
        return
    from .validate import validate_trace

    progress("validating the JSON (--sql-dir edits the writer's views)", None)
    t0 = time.perf_counter()
    for tmp in out.tmps[: out.n_json]:
        rep = validate_trace(
            tmp, max_examples=1, memory_limit=spec.memory_limit, temp_dir=spec.temp_dir
        )
        if not rep.ok:
            break
    spent = time.perf_counter() - t0
    out.timings.append(pipeline.StageTiming("validate the JSON file", spent))
    if out.checked is not None:
        out.checked.seconds += spent
    watch.stop_if_hit()
    if not rep.ok:
        raise ValidationFailed(validation_message(rep))
    out.file_validated = True


def publish(
    out: Written,
    scratch: Scratch,
    ws: Workspace,
    write_manifest: Callable[[list[Path]], None],
    before: Callable[[], None] | None = None,
) -> list[Path]:
    """Put every written file in place, signals deferred: ``before`` (a
    merge's dataset), the files, the Kineto folder (or an earlier run's
    removed), then ``write_manifest(files)``; an earlier run's files that
    would disagree (the other JSON layout, NAME.duckdb not written now) are
    removed. Returns every published file.

    Raises WorkspaceError (one sentence) when the disk refuses.
    """
    try:
        with interrupts_deferred():
            if before is not None:
                before()
            stale = [f for f in (ws.json_gz, *ws.json_parts) if f not in out.finals]
            writers.publish(list(zip(out.tmps, out.finals, strict=True)))
            writers.discard(stale)  # the other layout's trace (split or not) of an earlier run
            for earlier in (ws.database, ws.pftrace):
                if earlier not in out.finals and earlier.exists():
                    earlier.unlink()  # an earlier run's: it would disagree
            if out.kineto_written:
                writers.publish_folder(out.kineto_tmp, ws.kineto_dir)
            elif ws.kineto_dir.exists():
                shutil.rmtree(ws.kineto_dir)  # an earlier run's: it would disagree
            scratch.files.clear()  # in place now
            files = [*out.finals, *out.kineto_files]
            write_manifest(files)
    except OSError as exc:
        raise os_failure(exc, ws) from None
    return files
