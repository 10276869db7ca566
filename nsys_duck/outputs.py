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
from . import formats as formats_mod
from .errors import NoEventsError, ValidationFailed
from .failures import Step, os_failure
from .runs import InterruptWatch, interrupts_deferred
from .workspace import Workspace

Progress = Callable[[str, float | None], None]

# why a Kineto trace asked for is not written (chosen_traces)
NO_KINETO_RANK = (
    "no Kineto trace: no profiled process has GPU work (kernels, copies, memsets), "
    "and a Kineto trace holds one rank per such process"
)


@dataclass
class ChosenTraces:
    """The traces a conversion or merge writes (:func:`chosen_traces`)."""

    formats: tuple[formats_mod.TraceFormat, ...]  # in formats.FORMATS order
    notes: list[str]  # one sentence each, for the summary (why not as asked)


def chosen_traces(con: duckdb.DuckDBPyConnection, trace_format: str) -> ChosenTraces:
    """The traces to write for ``--format trace_format``
    (:data:`formats.CHOICES`), once the SQL stages ran: as asked, except
    that a capture with no Kineto rank (``kineto_ranks`` empty: no process
    with GPU work) gets no Kineto trace but the Perfetto traces (``both``:
    the others alone; ``kineto``: the Perfetto JSON instead, so the run
    still leaves a trace to open), with a note saying so. The Parquet and
    NAME.duckdb are written whatever the format."""
    chosen = formats_mod.CHOICES[trace_format]
    kineto = formats_mod.KINETO
    ranks = contract.query("kineto-ranks", "count(*)")
    if kineto not in chosen or con.execute(ranks).fetchall()[0][0]:
        return ChosenTraces(chosen, [])
    others = tuple(f for f in chosen if f is not kineto)
    if others:
        return ChosenTraces(others, [f"{NO_KINETO_RANK}; the Perfetto trace is written alone"])
    return ChosenTraces(
        (formats_mod.PERFETTO,), [f"{NO_KINETO_RANK}; the Perfetto trace is written instead"]
    )


def read_trace_notes(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The ``trace_notes`` sentences (what the capture lacks: GPU activity,
    kernels), in print order."""
    return [n for (n,) in con.execute(contract.query("notes", "note")).fetchall()]


def read_window(con: duckdb.DuckDBPyConnection) -> dict | None:
    """What ``--window`` selected (the ``trace_window`` row: the window in
    UTC-epoch ns and after the trace's first event, the slices it holds),
    or None without ``--window``."""
    cur = con.execute(contract.query("window", "*"))
    rows = cur.fetchall()
    if not rows:
        return None
    return dict(zip([d[0] for d in cur.description], rows[0], strict=True))


@dataclass
class OutputSpec:
    """What a run writes and how (the rest comes from the relations)."""

    ws: Workspace
    trace_format: str  # --format: a key of formats.CHOICES
    validate: bool  # run the contract checks (check_* views) before writing
    no_events: Callable[[duckdb.DuckDBPyConnection], str]  # why, when int_slices is empty
    memory_limit: str  # DuckDB's, also for the file validator
    temp_dir: Path  # scratch (spill) folder inside the workspace


@dataclass
class Written:
    """The files :func:`write_outputs` wrote under temporary names."""

    finals: list[Path]  # where each goes: traces (a folder format: its folder), Parquet
    tmps: list[Path]  # where each is now, in the same order
    traces: dict[str, list[Path]]  # format name -> its temporaries (formats.FORMATS)
    inside: list[Path]  # the files inside the folders published (what the manifest lists)
    summary: list[tuple[str, object]]  # trace_summary, split summary, what each writer adds
    notes: list[str]  # trace_notes, then why a trace asked for is not written
    checked: checks_mod.CheckRun | None  # None: the checks did not run
    file_validated: bool = False  # validate_edited_json read the JSON
    timings: list[pipeline.StageTiming] = field(default_factory=list)

    def add(self, final: Path, tmp: Path) -> None:
        """One more file to publish (e.g. NAME.duckdb once closed)."""
        self.finals.append(final)
        self.tmps.append(tmp)

    def replace(self, tmps: list[Path], files: list[tuple[Path, Path]]) -> None:
        """Publish ``files`` ((final, temporary) pairs), in their order, in
        place of the files whose temporaries are ``tmps``."""
        at = self.tmps.index(tmps[0])
        kept = [(f, t) for f, t in zip(self.finals, self.tmps, strict=True) if t not in tmps]
        pairs = [*kept[:at], *files, *kept[at:]]
        self.finals = [f for f, _ in pairs]
        self.tmps = [t for _, t in pairs]

    @property
    def n_json(self) -> int:
        """How many files the Perfetto JSON was written in (0: not written)."""
        return len(self.traces.get(formats_mod.PERFETTO.name, ()))


class Scratch:
    """What a run holds while it writes, given back when it ends however it
    ends (a ``with`` block): its DuckDB connection (``con``, closed first,
    so no late write lands in a removed file) and the temporary files and
    folders (``files``: removed unless published, see :func:`publish`)."""

    def __init__(self) -> None:
        self.con: duckdb.DuckDBPyConnection | None = None
        self.files: list[Path] = []

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
        writers.discard([f for f in self.files if not f.is_dir()])
        for folder in (f for f in self.files if f.is_dir()):
            shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def timed(timings: list[pipeline.StageTiming], label: str) -> Iterator[None]:
    """Append how long the ``with`` body took to ``timings`` as ``label``
    (the ``--timings`` rows, seconds)."""
    t0 = time.perf_counter()
    yield
    timings.append(pipeline.StageTiming(label, time.perf_counter() - t0))


def require_slices(con: duckdb.DuckDBPyConnection, spec: OutputSpec) -> None:
    """Raises NoEventsError (``spec.no_events``) when ``int_slices`` is empty."""
    if con.execute(contract.query("slices", "count(*)")).fetchall()[0][0] == 0:
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


def trace_files(
    con, spec: OutputSpec, traces: ChosenTraces
) -> tuple[dict[str, list[Path]], list[Path]]:
    """(format name -> its finals, the finals of every file): each chosen
    format's files (:attr:`formats.TraceFormat.targets`), then the aligned
    Parquet and the kernel dependencies."""
    ws = spec.ws
    finals_of = {fmt.name: fmt.targets(con, ws) for fmt in traces.formats}
    finals = [f for files in finals_of.values() for f in files]
    return finals_of, [*finals, ws.events_parquet, ws.kernel_dependencies]


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
    finals_of, finals = trace_files(con, spec, traces)
    tmps = [writers.temp_path(f) for f in finals]
    scratch.files.extend(tmps)
    tmp_of = dict(zip(finals, tmps, strict=True))
    out = Written(
        finals,
        tmps,
        {name: [tmp_of[f] for f in fs] for name, fs in finals_of.items()},
        [],
        [],
        [*read_trace_notes(con), *traces.notes],
        checked,
        timings=timings,
    )
    rows = []
    for fmt in traces.formats:
        rows += write_trace(con, fmt, spec.ws, out, step, progress)
        scratch.files.extend(t for t in out.tmps if t not in scratch.files)  # JSON parts
    step.now = "writing the aligned Parquet"
    progress("writing Parquet", None)
    with timed(timings, "write Parquet"):
        parquet, dependencies = tmps[-2:]
        n_rows = writers.write_parquet(con, contract.parquet_query(files), parquet)
        writers.write_kernel_dependencies(dependencies)
    step.now = "the summary"
    out.summary = [*read_summary(con, files), *rows, ("Parquet rows", n_rows)]
    note = split_note(out, spec.ws)
    if note:
        out.notes.append(note)
    return out


def write_trace(
    con, fmt: formats_mod.TraceFormat, ws: Workspace, out: Written, step: Step, progress
) -> list[tuple[str, object]]:
    """Write format ``fmt`` into its temporaries (``out.traces``); the
    summary rows it adds. A folder format's files are added to
    ``out.inside`` under their published folder; files the writer wrote
    instead of its targets (a JSON trace in parts) take their place in
    ``out``."""
    tmps = out.traces[fmt.name]
    step.now = fmt.doing
    progress(fmt.doing, None)
    with timed(out.timings, fmt.timing):
        wrote = fmt.write(con, ws, tmps, lambda line: progress(line, None))
    if wrote.instead:
        out.replace(tmps, list(wrote.instead))
        out.traces[fmt.name] = [tmp for _, tmp in wrote.instead]
    finals = [f for f, t in zip(out.finals, out.tmps, strict=True) if t in out.traces[fmt.name]]
    out.inside += [finals[0] / name for name in wrote.inside]
    return wrote.rows


def split_note(out: Written, ws: Workspace) -> str | None:
    """When the JSON is split: which file holds the whole trace (the
    protobuf trace, written now), or how to get one."""
    if out.n_json < 2:
        return None
    if formats_mod.PFTRACE.name in out.traces:
        return (
            f"the JSON trace is split in {out.n_json} parts; {ws.pftrace.name} "
            "holds the whole trace in one file"
        )
    return (
        f"the JSON trace is split in {out.n_json} parts; --format pftrace writes the "
        "whole trace in one file (Perfetto's protobuf, NAME.pftrace)"
    )


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
    for tmp in out.traces[formats_mod.PERFETTO.name]:
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
    """Put every written file and folder in place, signals deferred:
    ``before`` (a merge's dataset), the files, then
    ``write_manifest(files)``; an earlier run's files that would disagree
    (a format not written now, the other JSON layout, NAME.duckdb not
    written now) are removed. Returns every published file (a folder's
    files, not the folder).

    Raises WorkspaceError (one sentence) when the disk refuses.
    """
    try:
        with interrupts_deferred():
            if before is not None:
                before()
            stale = [f for fmt in formats_mod.FORMATS for f in fmt.left(ws) if f not in out.finals]
            if ws.database not in out.finals and ws.database.exists():
                stale.append(ws.database)
            for tmp, final in zip(out.tmps, out.finals, strict=True):
                if tmp.is_dir():
                    writers.publish_folder(tmp, final)
                else:
                    writers.publish([(tmp, final)])
            for f in stale:  # an earlier run's (another layout or format): it would disagree
                if f.is_dir():
                    shutil.rmtree(f)
                else:
                    f.unlink(missing_ok=True)
            scratch.files.clear()  # in place now
            files = [f for f in out.finals if f not in {i.parent for i in out.inside}]
            files += out.inside
            write_manifest(files)
    except OSError as exc:
        raise os_failure(exc, ws) from None
    return files
