"""Command line: ``nsys-duck convert|validate|...`` (a thin click layer).

Every expected failure prints one sentence to stderr and sets a nonzero exit
status; tracebacks are for bugs only.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from . import __version__
from .convert import Options, Result, convert
from .errors import NsysDuckError
from .sources import sql_string
from .writers import human_size

err = Console(stderr=True)


def export_line(info: dict) -> str | None:
    """One line on what made the export and how its times read (from
    ``stg_export_info``), e.g. ``exported by: Nsight Systems 2025.5.2.266,
    schema 3.24.0, session-relative times (+ session start 1785620044423518993
    ns)``; None when the export says nothing."""
    parts = []
    if info.get("nsys_version"):
        parts.append(f"Nsight Systems {info['nsys_version']}")
    if info.get("schema_version"):
        parts.append(f"schema {info['schema_version']}")
    if not parts:
        return None
    if info.get("time_normalized"):
        parts.append("UTC-epoch times (--ts-normalize)")
    else:
        parts.append(f"session-relative times (+ session start {info.get('time_offset_ns')} ns)")
    if info.get("time_shift_ns"):
        parts.append(f"--ts-shift {info['time_shift_ns']} ns")
    return "exported by: " + ", ".join(parts)


def print_metrics(summary: list[tuple[str, object]]) -> None:
    """The summary's (metric, value) lines: integers right-aligned with
    thousands separators, labels padded to the longest (up to 60)."""
    width = min(max(len(m) for m, _ in summary), 60)  # longer labels overflow
    for metric, value in summary:
        click.echo(
            f"  {metric:<{width}}  {value:>12,}"
            if isinstance(value, int)
            else f"  {metric:<{width}}  {value}"
        )


def seconds_text(ns: int) -> str:
    """Integer ns as seconds with the digits needed: 500000000 -> '0.5'."""
    whole, frac = divmod(abs(ns), 10**9)
    return ("-" if ns < 0 else "") + f"{whole}.{frac:09d}".rstrip("0").rstrip(".")


def window_line(window: dict) -> str:
    """The summary line of ``--window`` (a ``trace_window`` row): the window
    in UTC-epoch ns and in seconds after the trace's first event (the 0 of
    ui.perfetto.dev), and the slices it holds."""
    lo, hi = window["window_start_ns"], window["window_end_ns"]
    start = seconds_text(window["start_after_first_ns"]) if lo is not None else "start"
    end = seconds_text(window["end_after_first_ns"]) if hi is not None else "end"
    return (
        f"window: [{lo if lo is not None else 'start'}, {hi if hi is not None else 'end'}) "
        f"UTC-epoch ns = [{start}, {end}) s after the first event ({window['first_ns']} ns); "
        f"{window['slices']:,} slices"
    )


def window_warning(window: dict | None) -> str | None:
    """One line when ``--window`` selects no slice, saying where the slices
    are; None otherwise (also without ``--window``)."""
    if window is None or window["slices"]:
        return None
    last = seconds_text(window["last_start_ns"] - window["first_ns"])
    return (
        "warning: --window selects no slice: the trace's slices start from 0 s to "
        f"{last} s after its first event ({window['first_ns']} ns)"
    )


def print_window(window: dict | None) -> None:
    """The ``--window`` line of a summary (stdout) and its warning (stderr)."""
    if window is None:
        return
    click.echo(window_line(window))
    warning = window_warning(window)
    if warning:
        _fail(None, warning)


def print_summary(res: Result, timings: bool) -> None:
    """The contract's summary; the last line is the absolute JSON path."""
    out = click.echo
    out(f"== {res.workspace.name}")
    out(f"source: {res.source.path}")
    same = f"same content, sha256 {res.source_sha256[:12]}"
    if res.export_reused and res.source.kind == "sqlite":
        out(
            f"export: reused {res.workspace.parquet_dir} (transcribed from "
            f"{res.source.path}, {same}; --force transcribes it again)"
        )
    elif res.export_reused and res.source.kind == "report":
        out(
            f"export: reused {res.workspace.parquet_dir} (exported from this report, "
            f"{same}; --force re-exports)"
        )
    elif res.export_reused:
        out(f"export: the workspace's own {res.workspace.parquet_dir}")
    elif res.nsys_version:
        out(f"nsys: {res.nsys_version}")
    elif res.source.kind == "sqlite":
        out(f"export: transcribed SQLite export {res.source.path} (no nsys needed)")
    else:
        out("export: existing Parquet folder (no nsys needed)")
    line = export_line(res.export_info)
    if line:
        out(line)
    for key in ("schema_note", "time_note"):
        if res.export_info.get(key):
            out(f"note: {res.export_info[key]}")
    for note in res.notes:
        out(f"note: {note}")
    if res.overridden_sql:
        out("SQL overridden by --sql-dir: " + ", ".join(res.overridden_sql))
    if res.added_sql:
        out("SQL added by --sql-dir: " + ", ".join(res.added_sql))
    out(f"time base (epoch_ns): {res.base_ns}")
    print_window(res.window)
    print_metrics(res.summary)
    if res.validated:
        also = " and the JSON file validator" if res.file_validated else ""
        out(
            f"validated: no violations of {res.checks} contract checks{also} "
            f"({res.validate_seconds:.1f} s)"
        )
    else:
        out("validation: skipped (--no-checks)")
    if timings:
        for t in res.timings:
            out(f"  time {t.relpath:<45} {t.seconds:8.3f} s")
    for f in res.files:
        out(f"{f}  ({human_size(f.stat().st_size)})")
    parts = [f for f in res.files if ".part-" in f.name]
    if parts:
        out(
            f"the JSON trace is in {len(parts)} parts (over --max-json-size): open each "
            f"in ui.perfetto.dev on its own (nsys-duck open {res.workspace.name} --part K; "
            "same tracks and time base); the Parquet holds every slice"
        )
        out(str(parts[0].resolve()))
    else:
        out(str(_trace_path(res.files, res.workspace).resolve()))


def _trace_path(files: list[Path], ws) -> Path:
    """The summary's last line: the Perfetto JSON, else (--format kineto)
    the Kineto folder."""
    if ws.json_gz in files or not any(f.parent == ws.kineto_dir for f in files):
        return ws.json_gz
    return ws.kineto_dir


_SIZE_UNITS = {
    "": 1,
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KIB": 2**10,
    "MIB": 2**20,
    "GIB": 2**30,
}


def parse_size(text: str, option: str) -> int:
    """``'1GB'``, ``'500MB'``, ``'2GiB'`` or a byte count as bytes (decimal
    units, as DuckDB's memory limit). Raises click.BadParameter."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", text or "")
    unit = m.group(2).upper() if m else ""
    if not m or unit not in _SIZE_UNITS or float(m.group(1)) <= 0:
        raise click.BadParameter(f"{text!r}: give a size such as 800MB or 1.5GB", param_hint=option)
    return int(float(m.group(1)) * _SIZE_UNITS[unit])


def parse_window(text: str | None) -> tuple[float | None, float | None] | None:
    """``'START:END'`` (seconds after the trace's first event; a side may be
    empty) as a pair.
    Raises click.BadParameter."""
    if text is None:
        return None
    start, sep, end = text.partition(":")
    try:
        pair = (float(start) if start.strip() else None, float(end) if end.strip() else None)
    except ValueError:
        pair = None
    if not sep or pair is None or pair == (None, None) or (None not in pair and pair[1] <= pair[0]):
        raise click.BadParameter(
            f"{text!r}: give START:END in seconds after the trace's first event, END > START "
            "(e.g. 2.5:4 or 10:)",
            param_hint="--window",
        )
    return pair


def parse_devices(text: str | None) -> tuple[int, ...]:
    """``'0,3'`` as device ids. Raises click.BadParameter."""
    if text is None:
        return ()
    try:
        devices = tuple(int(d) for d in text.split(","))
    except ValueError:
        devices = ()
    if not devices or min(devices) < 0:
        raise click.BadParameter(f"{text!r}: give device ids such as 0,3", param_hint="--devices")
    return devices


# --format of convert and merge
trace_format_option = click.option(
    "--format",
    "trace_format",
    type=click.Choice(["perfetto", "kineto", "both"]),
    default="perfetto",
    show_default=True,
    help="Which trace to write: perfetto (NAME.perfetto.json.gz), kineto (NAME.kineto/: "
    "one PyTorch-profiler (Kineto) trace per rank, for Holistic Trace Analysis) or "
    "both; the Parquet and NAME.duckdb are always written, and a capture with no GPU "
    "work (no Kineto rank) gets the Perfetto trace instead of a Kineto one.",
)


_CPU_SOURCE_HELP = {
    "osrt": "OS runtime calls (OSRT_API: pthread_mutex_lock, poll, read...)",
    "sched": "thread states from scheduling (SCHED_EVENTS)",
    "cudnn": "cuDNN calls (CUDNN_EVENTS)",
    "cublas": "cuBLAS calls (CUBLAS_EVENTS)",
}


def cpu_side_options(command):
    """Add --no-osrt, --no-sched, --no-cudnn, --no-cublas to a command; it
    receives ``cpu_sources``: the sources kept (pipeline.CPU_SOURCES order)."""
    import functools

    from .pipeline import CPU_SOURCES

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        kwargs["cpu_sources"] = tuple(s for s in CPU_SOURCES if not kwargs.pop(f"no_{s}"))
        return command(*args, **kwargs)

    for source in reversed(CPU_SOURCES):
        wrapper = click.option(
            f"--no-{source}",
            f"no_{source}",
            is_flag=True,
            help=f"Leave out the {_CPU_SOURCE_HELP[source]}.",
        )(wrapper)
    return wrapper


@click.group()
@click.version_option(__version__, prog_name="nsys-duck")
def main() -> None:
    """Nsight Systems reports -> Perfetto traces and Parquet, via DuckDB SQL."""


def _terminate(signum, frame):
    """SIGTERM/SIGHUP: stop like Ctrl-C, so temporary files are removed."""
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signum, frame)  # the conversion's Ctrl-C handler, when active
    raise KeyboardInterrupt


@contextmanager
def _stop_signals():
    """While a command runs, SIGTERM and SIGHUP stop it like Ctrl-C
    (:func:`_terminate`: temporary files removed); when it returns or fails,
    the handlers from before are back (a decorator of convert, merge, sql).

    A caller of :func:`main` in-process (the tests, a notebook) keeps its
    own: a process it forks later inherits them, and a Python-level SIGTERM
    handler there turns ``multiprocessing.Pool.terminate()`` into a race (a
    SIGTERM that lands just before a worker blocks on the pool's queue lock
    is never acted on: the worker, and the pool's join, hang). Main thread
    only (elsewhere ``signal.signal`` is refused)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {sig: signal.signal(sig, _terminate) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


@main.command("convert", context_settings={"ignore_unknown_options": True})
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--nsys",
    "nsys_path",
    metavar="FILE",
    help="nsys executable to use (default: newest installed).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Export again even when the workspace holds this report's export; "
    "replace a different report's workspace of the same name.",
)
@click.option(
    "-o",
    "--output-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The workspace folder to write (default: $NSYS_WORKSPACE_ROOT/NAME, "
    "root ~/.nsys-workspace); one report at a time.",
)
@click.option(
    "--sql-dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Folder of .sql files overriding/adding to the packaged stages.",
)
@click.option(
    "--nvtx-scope",
    type=click.Choice(["thread", "process"]),
    default="thread",
    show_default=True,
    help="Which API calls an NVTX range owns.",
)
@click.option(
    "--memory-limit",
    default="2GB",
    show_default=True,
    help="DuckDB memory limit; past it DuckDB spills to disk.",
)
@click.option(
    "--max-json-size",
    "max_json_size",
    default=f"{Options.max_json_bytes // 10**6}MB",
    show_default=True,
    help="Past this much uncompressed JSON (estimated before writing), write "
    "the trace in consecutive time windows NAME.part-001.perfetto.json.gz, ... "
    "(ui.perfetto.dev runs out of memory on larger JSON).",
)
@click.option(
    "--window",
    "window",
    metavar="START:END",
    help="Only slices starting in this window, seconds after the trace's first event "
    "(where ui.perfetto.dev shows 0; either side may be empty: 2.5: or :10).",
)
@click.option(
    "--devices",
    "devices",
    metavar="0,3",
    help=(
        "Only the tracks of these devices (their GPU rows and the CPU rows drawn under them)"
        " and the host processes that ran GPU work on them."
    ),
)
@trace_format_option
@cpu_side_options
@click.option("--timings", is_flag=True, help="Print per-stage wall times.")
@click.option(
    "--no-checks",
    "--no-validate",
    "no_validate",
    is_flag=True,
    help="Publish the trace without running the contract checks (the "
    "check_* views) on the pipeline's tables.",
)
@click.option(
    "--no-database",
    "no_database",
    is_flag=True,
    help="Do not write NAME.duckdb (the pipeline's views and tables for SQL).",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    metavar="N",
    help="Convert up to N reports at once, each in its own process (a local Dask "
    "cluster: pip install 'nsys-duck[dask]'); skips reports whose workspace "
    "already holds their conversion with the same options; one line per report.",
)
@click.option(
    "--scheduler",
    metavar="ADDRESS|FILE",
    help="Convert on this running Dask cluster (tcp://HOST:PORT, or its scheduler "
    "JSON file), e.g. one on SLURM; its workers must see the same paths. As --jobs.",
)
@_stop_signals()
def convert_cmd(
    paths,
    nsys_path,
    force,
    output_dir,
    sql_dir,
    nvtx_scope,
    memory_limit,
    max_json_size,
    window,
    devices,
    timings,
    no_validate,
    no_database,
    jobs,
    scheduler,
    cpu_sources,
    trace_format,
):
    """Convert reports (.nsys-rep/.qdrep), Nsight SQLite exports (.sqlite) or
    Parquet export folders.

    For model.nsys-rep the outputs go to $NSYS_WORKSPACE_ROOT/model/ (default
    ~/.nsys-workspace/model/), or to the folder given with -o:
    model.perfetto.json.gz (open it in ui.perfetto.dev, or: nsys-duck open
    model), model.perfetto.parquet, model.duckdb (nsys-duck sql model), the
    export in parquet/ and nsys-duck.json (what the workspace was made from).
    A workspace holding a different report of the same name is refused.

    With --jobs N or --scheduler the reports convert at once on Dask, those
    already converted with the same options are skipped, and each report
    gets one line instead of the summary.

    A path may start with '-' (e.g. -x.nsys-rep) when such a file exists.
    Example: nsys-duck convert model.nsys-rep
    """
    for path in paths:
        # unknown options reach us as paths (so '-x.nsys-rep' works); a word
        # starting with '-' that is no file is a mistyped option
        if path.startswith("-") and not os.path.lexists(path):
            raise click.NoSuchOption(path.split("=", 1)[0])
    if output_dir is not None and len(paths) > 1:
        raise click.UsageError(
            "-o/--output-dir names one workspace folder; give one report with it"
        )
    opts = Options(
        nsys=nsys_path,
        force=force,
        output_dir=output_dir,
        sql_dir=sql_dir,
        nvtx_scope=nvtx_scope,
        memory_limit=memory_limit,
        validate=not no_validate,
        database=not no_database,
        max_json_bytes=parse_size(max_json_size, "--max-json-size"),
        window=parse_window(window),
        devices=parse_devices(devices),
        cpu_sources=cpu_sources,
        trace_format=trace_format,
    )
    if (jobs is not None or scheduler is not None) and timings:
        raise click.UsageError(
            "--timings prints one conversion's stages; not with --jobs or --scheduler"
        )
    if jobs is not None or scheduler is not None:
        sys.exit(_convert_parallel(paths, opts, jobs or 1, scheduler))
    failed = 0
    for i, path in enumerate(paths):
        if i:
            click.echo()
        try:
            with _progress_bar() as bar:
                task = bar.add_task(f"{path}", total=None)

                def progress(stage: str, fraction: float | None, task=task, path=path) -> None:
                    bar.update(
                        task,
                        description=f"{Path(path).name}: {stage}",
                        total=1.0 if fraction is not None else None,
                        completed=fraction or 0,
                    )

                res = convert(path, opts, progress=progress)
            print_summary(res, timings)
        except NsysDuckError as exc:
            failed += 1
            _fail(path, str(exc))
        except KeyboardInterrupt:
            _fail(None, "interrupted; no output files were published")
            sys.exit(130)
    if failed:
        sys.exit(1)


def _convert_parallel(paths, opts: Options, jobs: int, scheduler: str | None) -> int:
    """``convert --jobs N`` / ``--scheduler``: every path on Dask
    (:func:`parallel.convert_many`, which skips the up-to-date ones), one
    line per report on stdout as it finishes (:func:`_outcome_line`), each
    failure also as ``nsys-duck: PATH: reason`` on stderr. Returns the exit
    status: 0, 1 (a path failed, or Dask could not run) or 130 (interrupted)."""
    from .parallel import FAILED, convert_many

    total = len(paths)
    # the report lines go to stdout: through the bar's console only when
    # both are the terminal (a redirected stdout keeps them)
    with _progress_bar(redirect_stdout=sys.stdout.isatty()) as bar:
        task = bar.add_task(_counts(0, 0, total, total), total=total)

        def on_update(done: int, failed: int, running: int, outcome) -> None:
            bar.update(task, completed=done, description=_counts(done, failed, running, total))
            click.echo(_outcome_line(outcome))
            if outcome.status == FAILED:
                _fail(outcome.path, outcome.message)

        try:
            outcomes = convert_many(
                paths, opts, jobs=jobs, scheduler=scheduler, on_update=on_update
            )
        except NsysDuckError as exc:
            _fail(None, str(exc))
            return 1
        except KeyboardInterrupt:
            _fail(None, "interrupted; the conversions not finished were stopped, unpublished")
            return 130
    return 1 if any(o.status == FAILED for o in outcomes) else 0


def _counts(done: int, failed: int, running: int, total: int) -> str:
    """The progress line of a parallel convert (running: not finished yet)."""
    return f"converting: {done}/{total} done, {failed} failed, {running} running"


def _outcome_line(outcome) -> str:
    """One report of a parallel convert: ``NAME: converted (N slices, S s)
    TRACE``, ``NAME: up to date TRACE`` or ``PATH: failed``."""
    name = outcome.name or _shown(outcome.path)
    if outcome.status == "failed":
        return f"{name}: failed (the reason is on stderr)"
    trace = str(outcome.trace) if outcome.trace is not None else "(no JSON trace)"
    if outcome.trace is not None and ".part-" in outcome.trace.name:
        trace += " (part 1 of a split JSON trace)"
    if outcome.status == "up to date":
        return f"{name}: up to date (converted before with these options) {trace}"
    slices = dict(outcome.summary).get("slices")
    what = f"{slices:,} slices, " if isinstance(slices, int) else ""
    return f"{name}: converted ({what}{outcome.seconds:.1f} s) {trace}"


def _progress_bar(**extra) -> Progress:
    """The progress line on stderr (a spinner, the stage, a bar, the time);
    nothing when stderr is not a terminal. ``extra``: more of rich's
    Progress options."""
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
        **extra,
    )


def _fail(path: str | None, message: str) -> None:
    """The one stderr line of a failure: ``nsys-duck: PATH: message``."""
    line = " ".join(message.split())
    prefix = f"nsys-duck: {_shown(path)}: " if path is not None else "nsys-duck: "
    err.print(prefix + line, markup=False, highlight=False, soft_wrap=True)


def _shown(path: str) -> str:
    """``path`` as typed, with control characters made visible (one line)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in path)


@main.command("validate")
@click.argument("trace")
@click.option(
    "--max-examples",
    default=5,
    show_default=True,
    metavar="N",
    type=int,
    help="Examples kept per rule (totals are always exact).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--memory-limit", default="2GB", show_default=True, help="DuckDB memory limit of the validator."
)
def validate_cmd(trace, max_examples, as_json, memory_limit):
    """Check a .perfetto.json.gz against the output contract and Perfetto's rules.

    TRACE is the .perfetto.json.gz, or a workspace (name, folder, NAME.duckdb)
    or the report it was converted from (of a trace split in parts: every
    part). Exit status 0 when clean, 1 on violations, 2 when there is no
    Perfetto trace (also for a Kineto one), 130 on Ctrl-C.
    Example: nsys-duck validate model
    """
    from . import validate as validate_mod

    files = _trace_files(trace)
    for file in files:
        if validate_mod.is_kineto_trace(file):
            _fail(
                trace,
                f"{file.name} is a Kineto trace (what --format kineto writes, for PyTorch's "
                "tools such as HTA), not a Perfetto JSON trace: validate checks "
                "NAME.perfetto.json.gz (convert --format perfetto or both)",
            )
            sys.exit(2)
    reps = []
    for file in files:
        try:
            reps.append(
                validate_mod.validate_trace(
                    file, max_examples=max_examples, memory_limit=memory_limit
                )
            )
        except FileNotFoundError:
            _fail(trace, f"no trace at {file}")
            sys.exit(2)
        except KeyboardInterrupt:
            _fail(None, "interrupted")
            sys.exit(130)
    sys.exit(validate_mod.print_reports(reps, as_json))


def _trace_files(trace: str) -> list[Path]:
    """The Perfetto JSON files ``validate TRACE`` checks: the file itself, or
    the workspace's ``NAME.perfetto.json.gz``, or every part of its split
    trace; exits 2 with one sentence when there is none."""
    from .workspace import kineto_only, locate

    file = Path(trace).expanduser()
    if file.is_file() and file.name.endswith(".json.gz"):
        return [file]
    try:
        ws = locate(trace)[0]
    except NsysDuckError as exc:
        _fail(trace, str(exc))
        sys.exit(2)
    if ws.json_parts:
        return ws.json_parts
    if kineto_only(ws):
        _fail(
            trace,
            f"{ws.name} holds a Kineto trace only (converted with --format kineto), no "
            "Perfetto JSON trace to validate: convert again with --format both",
        )
        sys.exit(2)
    if not ws.json_gz.is_file():
        _fail(trace, f"no trace at {ws.json_gz} (run nsys-duck convert first)")
        sys.exit(2)
    return [ws.json_gz]


# --- SQL workbench ------------------------------------------------------------

WHAT_NAME_IS = (
    "NAME is a workspace name, a workspace folder, its NAME.duckdb or "
    "NAME.perfetto.json.gz, or the report / export it was converted from."
)


def _workbench(name: str, as_file: bool = False):
    from .errors import InputError
    from .workbench import open_workbench

    try:
        return open_workbench(name, as_file=as_file)
    except InputError as exc:  # no such workspace, not converted: a usage error, as click's
        _fail(name, str(exc))
        sys.exit(2)
    except NsysDuckError as exc:
        _fail(name, str(exc))
        sys.exit(1)
    except KeyboardInterrupt:
        _fail(None, "interrupted")
        sys.exit(130)


@main.command(
    "views",
    help="List the pipeline's views, tables and macros in run order: "
    "kind, the SQL file that created each (packaged, or overridden/added by "
    "--sql-dir), its description (COMMENT, else the file's header) and columns, as "
    "the conversion ran them.\n\n" + WHAT_NAME_IS + "\n\nExample: nsys-duck views model",
)
@click.argument("name")
def views_cmd(name):
    from .workbench import list_views

    with _workbench(name) as wb:
        for obj in list_views(wb):
            origin = "" if obj.origin == "packaged" else f", {obj.origin} by --sql-dir"
            click.echo(f"{obj.name}  ({obj.kind}, {obj.file}{origin})")
            if obj.description:
                click.echo(f"    {obj.description}")
            if obj.columns:
                click.echo("    " + ", ".join(f"{c} {t}" for c, t, _ in obj.columns))


@main.command("explain")
@click.argument("name")
@click.argument("view")
def explain_cmd(name, view):
    """Print the SQL that made VIEW as the conversion ran it (rendered; for a
    table its CREATE and any later INSERT/ALTER), with its COMMENT and column
    comments. Example: nsys-duck explain model int_flows"""
    from .workbench import explain

    with _workbench(name) as wb:
        try:
            click.echo(explain(wb, view))
        except NsysDuckError as exc:
            _fail(None, str(exc))
            sys.exit(1)


# what --format asks DuckDB's COPY for
COPY_OPTIONS = {
    "csv": "(FORMAT csv, HEADER true)",
    "json": "(FORMAT json, ARRAY true)",
    "parquet": "(FORMAT parquet, COMPRESSION zstd)",
}


@main.command(
    "sql",
    help="""Query the pipeline's views and tables of a converted report.

"""
    + WHAT_NAME_IS
    + """

Without -c: the DuckDB CLI (the duckdb-cli package, read-only on NAME.duckdb),
or a plain prompt where it is missing. With -c: run the SQL and print the
last statement's result, all of it (the table format shortens only on a
terminal), or write it with --format csv|json|parquet (written by DuckDB;
-o FILE, else standard output). Ctrl-C stops the query (exit 130).

Example: nsys-duck sql model -c "SELECT demangled_name, sum(dur_ns) FROM trace_slices
WHERE cat = 'kernel' AND is_primary GROUP BY 1 ORDER BY 2 DESC LIMIT 10"
""",
)
@click.argument("name")
@click.option("-c", "command", help="Run this SQL and print the result.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json", "parquet"]),
    default="table",
    show_default=True,
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the result to this file (csv, json, parquet).",
)
@_stop_signals()
def sql_cmd(name, command, fmt, output):
    if command is None:
        sys.exit(_interactive(name))
    if fmt == "parquet" and output is None:
        raise click.UsageError("--format parquet needs --output FILE")
    if fmt == "table" and output is not None:
        raise click.UsageError("--output writes csv, json or parquet; add --format")
    with _workbench(name) as wb:
        code = _run_sql(wb.con, command, fmt, output)
    sys.exit(code)


def _run_sql(con, sql: str, fmt: str, output: Path | None) -> int:
    """Run ``sql`` on ``con`` in a worker thread and print or write the last
    statement's result; returns the exit status (0, 1 on an SQL error, 130
    on Ctrl-C or SIGTERM/SIGHUP: the query is interrupted with
    ``con.interrupt()``).

    Formats: ``table`` is DuckDB's box (shortened on a terminal; piped, all
    of it, printed by the DuckDB CLI from a temporary Parquet file of the
    result); csv, json, parquet are written by DuckDB's COPY, to ``output``
    or to a temporary file then copied to standard output (so ``>>`` appends
    and the output keeps its place among other writes). A closed pipe
    (``| head``) ends quietly with status 0.
    """
    import shutil
    import subprocess
    import tempfile
    import threading

    import duckdb

    from .compat import arrow_reader

    outcome: dict = {}
    temp = Path(tempfile.mkdtemp(prefix="nsys-duck-"))

    def work() -> None:
        try:
            statements = [s.query for s in duckdb.extract_statements(sql)]
            for query in statements[:-1]:
                con.execute(query).fetchall()  # DuckDB 2 wants each result consumed
            rel = con.sql(statements[-1]) if statements else None
            if rel is None:
                return
            if fmt == "table" and sys.stdout.isatty():
                rel.show()  # DuckDB's box, shortened to the terminal
                return
            cli = _duckdb_cli() if fmt == "table" else None
            if fmt == "table" and cli is None:
                rel.show(max_rows=10_000, max_width=2**31, max_col_width=2**31)
                return
            to_stdout = output is None or cli is not None
            target = str(temp / "result") if to_stdout else str(output)
            scratch = duckdb.connect()
            try:
                scratch.register("nsys_duck_result", arrow_reader(rel, 65_536))
                scratch.execute(
                    f"COPY nsys_duck_result TO {sql_string(target)} "
                    + COPY_OPTIONS["parquet" if cli else fmt]
                )
            finally:
                scratch.close()
            sys.stdout.flush()
            if cli is not None:  # piped table: every row and column, by the CLI
                status = subprocess.run(
                    [cli, "-box", "-c", f"FROM read_parquet({sql_string(target)})"],
                    stderr=subprocess.PIPE,
                    text=True,
                )
                if status.returncode and status.stderr.strip():
                    outcome["error"] = RuntimeError(status.stderr.strip())
            elif to_stdout:
                with open(target, "rb") as f:
                    shutil.copyfileobj(f, sys.stdout.buffer)
                sys.stdout.flush()
        except BrokenPipeError:
            outcome["pipe"] = True
        except BaseException as exc:  # reported by the main thread
            outcome["error"] = exc

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    try:
        try:
            while worker.is_alive():
                worker.join(0.1)
        except KeyboardInterrupt:
            con.interrupt()
            worker.join(5)
            _fail(None, "interrupted")
            if worker.is_alive():  # DuckDB did not stop: leave without waiting for it
                shutil.rmtree(temp, ignore_errors=True)
                sys.stderr.flush()
                os._exit(130)
            return 130
    finally:
        if not worker.is_alive():
            shutil.rmtree(temp, ignore_errors=True)
    if outcome.get("pipe"):
        # the reader left (e.g. | head): no more output, and no error at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    exc = outcome.get("error")
    if exc is None:
        return 0
    text = " ".join(str(exc).split())
    if isinstance(exc, (duckdb.Error, RuntimeError)):
        _fail(None, f"SQL error: {text[:500]}")
        return 1
    raise exc


def _duckdb_cli() -> str | None:
    """The DuckDB CLI that opens NAME.duckdb (1.4 or newer): the one installed
    with nsys-duck (duckdb-cli, beside this Python), else ``duckdb`` on PATH."""
    import re
    import shutil
    import subprocess

    beside = Path(sys.executable).parent / "duckdb"
    for cli in (str(beside) if beside.is_file() else None, shutil.which("duckdb")):
        if not cli:
            continue
        try:
            version = subprocess.run(
                [cli, "--version"], capture_output=True, text=True, timeout=20
            ).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        m = re.search(r"v(\d+)\.(\d+)", version)
        if m and (int(m.group(1)), int(m.group(2))) >= (1, 4):
            return cli
    return None


def _interactive(name: str) -> int:
    """The interactive prompt: the DuckDB CLI when there is one, else :func:`_repl`."""
    import subprocess

    cli = _duckdb_cli()
    with _workbench(name, as_file=cli is not None) as wb:
        if cli is None:
            return _repl(wb.con)
        err.print(
            f"DuckDB CLI on {wb.database} (read-only). The pipeline's views: "
            ".tables, or nsys-duck views NAME. Leave with .quit or Ctrl-D.",
            markup=False,
            highlight=False,
        )
        wb.con.close()  # the CLI opens the file itself
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the CLI's
        proc = subprocess.Popen(
            [cli, "-readonly", str(wb.database)],
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        try:
            return proc.wait()
        except KeyboardInterrupt:  # SIGTERM/SIGHUP to us (see sql_cmd): end the CLI too
            proc.terminate()
            proc.wait()
            return 130
        finally:
            signal.signal(signal.SIGINT, old)


def _repl(con) -> int:
    """A plain prompt (when no DuckDB CLI is installed): statements end with
    ';', Ctrl-C stops a query or clears the line, history is saved after
    every statement to ~/.nsys_duck_history."""
    hist = Path.home() / ".nsys_duck_history"
    try:
        import readline

        if hist.exists():
            readline.read_history_file(hist)
    except Exception:
        readline = None
    click.echo(
        "nsys-duck SQL (install duckdb-cli for the full DuckDB prompt); end "
        "statements with ';', Ctrl-D quits"
    )
    buf = ""
    while True:
        try:
            line = input("... " if buf else "sql> ")
        except EOFError:
            click.echo()
            return 0
        except KeyboardInterrupt:
            buf = ""
            click.echo()
            continue
        buf += line + "\n"
        if not buf.strip().endswith(";"):
            continue
        _run_sql(con, buf, "table", None)
        buf = ""
        if readline is not None:
            try:
                hist.touch()
                readline.append_history_file(1, hist)
            except OSError:
                pass


@main.command("sql-files")
@click.option(
    "--copy",
    "dest",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to copy the packaged SQL files into (new or empty).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Copy into a folder that is not empty, overwriting the packaged files there.",
)
def sql_files_cmd(dest, force):
    """Copy the packaged SQL stages into DEST for editing (use with convert --sql-dir)."""
    from .workbench import copy_sql_files

    try:
        files = copy_sql_files(dest, force)
    except NsysDuckError as exc:
        _fail(str(dest), str(exc))
        sys.exit(1)
    except OSError as exc:
        _fail(str(dest), f"cannot write there: {exc.strerror or exc}")
        sys.exit(1)
    click.echo(
        f"copied {len(files)} SQL files to {dest}; edit them, then: "
        f"nsys-duck convert --sql-dir {dest} REPORT"
    )


@main.command("merge", context_settings={"ignore_unknown_options": True})
@click.argument("name")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--align",
    type=click.Choice(["utc", "start"]),
    default="utc",
    show_default=True,
    help="utc: line reports up on Nsight's UTC-epoch times (synchronized clocks, "
    "as nsys recipe does); start: shift each report so its first event lies at "
    "the earliest report's.",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Convert this many reports at once, as Dask tasks on a local cluster "
    "(pip install 'nsys-duck[dask]').",
)
@click.option(
    "--scheduler",
    metavar="ADDRESS|FILE",
    help="Convert the reports on an existing Dask cluster (tcp://HOST:8786, or "
    "its scheduler file).",
)
@click.option("--force", is_flag=True, help="Convert every report again, even when up to date.")
@click.option(
    "--sql-dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Folder of .sql files overriding/adding to the packaged stages (each report's "
    "conversion and the merge's own, sql/merge/).",
)
@click.option("--nsys", "nsys_path", metavar="FILE", help="nsys executable to use.")
@click.option(
    "--nvtx-scope",
    type=click.Choice(["thread", "process"]),
    default="thread",
    show_default=True,
    help="Which API calls an NVTX range owns (each report's conversion).",
)
@click.option("--memory-limit", default="2GB", show_default=True, help="DuckDB memory limit.")
@click.option(
    "--max-json-size",
    "max_json_size",
    default=f"{Options.max_json_bytes // 10**6}MB",
    show_default=True,
    help="Past this much uncompressed JSON, write the merged trace in time windows "
    "NAME.part-001.perfetto.json.gz, ...",
)
@click.option(
    "--window",
    "window",
    metavar="START:END",
    help="Only slices starting in this window, seconds after the merged trace's first "
    "event (where ui.perfetto.dev shows 0).",
)
@click.option(
    "--devices",
    "devices",
    metavar="0,3",
    help="Only the tracks of these device ids, in every report, and the host processes"
    " that ran GPU work on them.",
)
@click.option(
    "--no-checks",
    "--no-validate",
    "no_validate",
    is_flag=True,
    help="Publish the merged trace, and convert the reports, without running the contract checks.",
)
@trace_format_option
@cpu_side_options
@_stop_signals()
def merge_cmd(
    name,
    paths,
    align,
    jobs,
    scheduler,
    force,
    sql_dir,
    nsys_path,
    nvtx_scope,
    memory_limit,
    max_json_size,
    window,
    devices,
    no_validate,
    cpu_sources,
    trace_format,
):
    """Merge many reports (one per rank) into one Perfetto timeline NAME.

    PATHS are reports, SQLite exports, export folders, or folders holding
    them. Each is converted into its own workspace (reused when up to date),
    then merged into $NSYS_WORKSPACE_ROOT/NAME/: NAME.perfetto.json.gz,
    NAME.perfetto.parquet (with a report column), NAME.duckdb (every table
    with a report column) and reports/report=R/*.parquet.

    Example: nsys-duck merge job42 runs/report_*.nsys-rep
    """
    from .merge import MergeOptions, merge

    for path in paths:
        if path.startswith("-") and not os.path.lexists(path):
            raise click.NoSuchOption(path.split("=", 1)[0])
    opts = MergeOptions(
        convert=Options(
            nsys=nsys_path,
            sql_dir=sql_dir,
            nvtx_scope=nvtx_scope,
            memory_limit=memory_limit,
            validate=not no_validate,
            cpu_sources=cpu_sources,
        ),
        max_json_bytes=parse_size(max_json_size, "--max-json-size"),
        window=parse_window(window),
        devices=parse_devices(devices),
        align=align,
        jobs=jobs,
        scheduler=scheduler,
        force=force,
        trace_format=trace_format,
    )
    try:
        with _progress_bar() as bar:
            task = bar.add_task(f"merge {name}", total=None)

            def progress(stage: str, fraction: float | None) -> None:
                bar.update(
                    task,
                    description=f"{name}: {stage}",
                    total=1.0 if fraction is not None else None,
                    completed=fraction or 0,
                )

            def on_report(done, failed, running, outcome) -> None:
                bar.update(
                    task,
                    description=f"{name}: reports {done} done, {failed} failed, {running} running",
                )

            res = merge(name, list(paths), opts, progress=progress, on_report=on_report)
    except NsysDuckError as exc:
        _fail(name, str(exc))
        sys.exit(1)
    except KeyboardInterrupt:
        _fail(None, "interrupted; the merge was not published (reports converted before are kept)")
        sys.exit(130)
    for path, message in res.failed:
        _fail(path, message + " (left out of the merge)")
    print_merge_summary(res)
    if res.failed:
        sys.exit(1)


MERGE_ROWS_SHOWN = 40  # reports listed in the merge summary (all: SELECT * FROM merge_reports)


def rank_line(r) -> str:
    """How a merged report's rank was decided, one line: ``report X: rank 3
    (from file name 'rank3')``, ``(from env RANK)``, or ``(order)`` (no rank
    recorded: its place in the merge, counted from 0)."""
    if r.rank_no is None:
        return f"report {r.report}: rank {r.ordinal - 1} (order)"
    return f"report {r.report}: rank {r.rank_no} ({r.rank_source})"


def print_merge_summary(res) -> None:
    """The merge's summary: alignment, one line per report (label, how its
    conversion went, its first CUDA/NVTX event in seconds after the merged
    trace's first event, the 0 of ui.perfetto.dev and of --window, and the
    shift applied, slices), how each report's rank was decided, the summed
    counts, the files; last line: the JSON path."""
    out = click.echo
    n = len(res.reports)
    out(f"== {res.workspace.name} (merge of {n} report{'s' if n != 1 else ''})")
    for note in res.notes:
        out(f"note: {note}")
    if res.align == "utc":
        out("time alignment: UTC epoch (Nsight's --ts-normalize times; clocks assumed in sync)")
    else:
        out(
            "time alignment: first CUDA/NVTX events (--align start: each report shifted so "
            "its first kernel, copy, CUDA API call or NVTX range lies at the first report's)"
        )
    out(f"time base (epoch_ns): {res.base_ns}")
    print_window(res.window)
    origin = res.first_ns if res.first_ns is not None else res.base_ns
    width = min(max(6, *(len(r.label) for r in res.reports)), 40)
    first_col = "first CUDA/NVTX"
    out(f"  {'report':<{width}}  {'conversion':<10}  {first_col:>16}  {'shift ns':>20}  slices")
    rows = res.reports
    shown = rows if len(rows) <= MERGE_ROWS_SHOWN else rows[: MERGE_ROWS_SHOWN // 2]
    for r in shown:
        first = (
            f"{(r.align_ns + r.shift_ns - origin) / 1e9:.6f} s" if r.align_ns is not None else "-"
        )
        out(f"  {r.label:<{width}}  {r.status:<10}  {first:>16}  {r.shift_ns:>20,}  {r.slices:,}")
    for r in shown:
        out(rank_line(r))
    for r in rows:
        for note in r.notes:
            out(f"note: {r.label}: {note}")
    if len(shown) < len(rows):
        out(
            f"  ... {len(rows) - len(shown)} more (nsys-duck sql {res.workspace.name} -c "
            "'SELECT * FROM merge_reports')"
        )
    print_metrics(res.summary)
    if res.validated:
        out(f"validated: no violations of {res.checks} contract checks")
    else:
        out("validation: skipped (--no-checks)")
    for f in res.files:
        out(f"{f}  ({human_size(f.stat().st_size)})")
    parts = [f for f in res.files if ".part-" in f.name]
    out(str((parts[0] if parts else _trace_path(res.files, res.workspace)).resolve()))


# --- report: the summaries users run first (nsys_duck/report.py, sql/reports/) ---


@main.command("report")
@click.argument("name")
@click.argument(
    "report",
    type=click.Choice(["top-kernels", "gpu-idle", "nvtx-summary", "api-summary", "memcpy"]),
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json", "markdown"]),
    default="table",
    show_default=True,
    help="table: aligned columns for reading; csv, json (an array of objects), markdown.",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    metavar="N",
    help="Print the first N rows only (per report in a merged workspace).",
)
@click.option(
    "--sql-dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Folder whose reports/FILE.sql replaces the packaged report (e.g. "
    "reports/top_kernels.sql).",
)
def report_cmd(name, report, fmt, limit, sql_dir):
    """Print a summary of a converted report, as nsys stats does.

    top-kernels (cuda_gpu_kern_sum: GPU time per kernel, by full demangled
    name), api-summary (cuda_api_sum: CUDA runtime and driver calls),
    nvtx-summary (nvtx_sum: NVTX ranges by name and style), memcpy
    (cuda_gpu_mem_time_sum and cuda_gpu_mem_size_sum: memory operations by
    kind), gpu-idle (per device and stream: busy time, the union of its
    GPU operations, and idle time over the device's span). Each is one SQL
    file, sql/reports/top_kernels.sql, ..., run on NAME.duckdb (read-only);
    --sql-dir DIR runs DIR/reports/top_kernels.sql instead. A merged
    workspace gives one block of rows per report (rank).

    NAME is a workspace name, a workspace folder, its NAME.duckdb or
    NAME.perfetto.json.gz, or the report / export it was converted from.
    Exit status 2 when there is no converted workspace by that name.

    Example: nsys-duck report model top-kernels --limit 10
    """
    from . import report as report_mod
    from .errors import InputError

    try:
        res = report_mod.run_report(name, report, sql_dir=sql_dir, limit=limit)
    except InputError as exc:
        _fail(name, str(exc))
        sys.exit(2)
    except NsysDuckError as exc:
        _fail(name, str(exc))
        sys.exit(1)
    except KeyboardInterrupt:
        _fail(None, "interrupted")
        sys.exit(130)
    try:
        if fmt == "table":
            report_mod.print_table(res)
        else:
            click.echo(report_mod.render(res, fmt), nl=False)
        sys.stdout.flush()
    except BrokenPipeError:  # | head: the reader left
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _register_open() -> None:
    from .serve import open_cmd

    main.add_command(open_cmd, "open")


_register_open()


if __name__ == "__main__":
    main()
