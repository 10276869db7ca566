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

from . import __version__, sqlrun
from .console import fail, progress_bar, silence_stdout
from .convert import Options, convert
from .errors import InputError, NsysDuckError
from .formats import CHOICES, format_help
from .serve import DEFAULT_PORT, run_open
from .summary import outcome_line, print_merge_summary, print_summary, progress_counts

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
    type=click.Choice(list(CHOICES)),
    default="perfetto",
    show_default=True,
    help=format_help(),
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
            with progress_bar() as bar:
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
            fail(path, str(exc))
        except KeyboardInterrupt:
            fail(None, "interrupted; no output files were published")
            sys.exit(130)
    if failed:
        sys.exit(1)


def _convert_parallel(paths, opts: Options, jobs: int, scheduler: str | None) -> int:
    """``convert --jobs N`` / ``--scheduler``: every path on Dask
    (:func:`parallel.convert_many`, which skips the up-to-date ones), one
    line per report on stdout as it finishes (:func:`summary.outcome_line`), each
    failure also as ``nsys-duck: PATH: reason`` on stderr. Returns the exit
    status: 0, 1 (a path failed, or Dask could not run) or 130 (interrupted)."""
    from .parallel import FAILED, convert_many

    total = len(paths)
    # the report lines go to stdout: through the bar's console only when
    # both are the terminal (a redirected stdout keeps them)
    with progress_bar(redirect_stdout=sys.stdout.isatty()) as bar:
        task = bar.add_task(progress_counts(0, 0, total, total), total=total)

        def on_update(done: int, failed: int, running: int, outcome) -> None:
            counts = progress_counts(done, failed, running, total)
            bar.update(task, completed=done, description=counts)
            click.echo(outcome_line(outcome))
            if outcome.status == FAILED:
                fail(outcome.path, outcome.message)

        try:
            outcomes = convert_many(
                paths, opts, jobs=jobs, scheduler=scheduler, on_update=on_update
            )
        except NsysDuckError as exc:
            fail(None, str(exc))
            return 1
        except KeyboardInterrupt:
            fail(None, "interrupted; the conversions not finished were stopped, unpublished")
            return 130
    return 1 if any(o.status == FAILED for o in outcomes) else 0


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
            fail(
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
            fail(trace, f"no trace at {file}")
            sys.exit(2)
        except KeyboardInterrupt:
            fail(None, "interrupted")
            sys.exit(130)
    sys.exit(validate_mod.print_reports(reps, as_json))


def _trace_files(trace: str) -> list[Path]:
    """The Perfetto JSON files ``validate TRACE`` checks: the file itself, or
    the workspace's ``NAME.perfetto.json.gz``, or every part of its split
    trace; exits 2 with one sentence when there is none."""
    from .formats import kineto_only
    from .workspace import locate

    file = Path(trace).expanduser()
    if file.is_file() and file.name.endswith(".json.gz"):
        return [file]
    try:
        ws = locate(trace)[0]
    except NsysDuckError as exc:
        fail(trace, str(exc))
        sys.exit(2)
    if ws.json_parts:
        return ws.json_parts
    if kineto_only(ws):
        fail(
            trace,
            f"{ws.name} holds a Kineto trace only (converted with --format kineto), no "
            "Perfetto JSON trace to validate: convert again with --format both",
        )
        sys.exit(2)
    if not ws.json_gz.is_file():
        fail(trace, f"no trace at {ws.json_gz} (run nsys-duck convert first)")
        sys.exit(2)
    return [ws.json_gz]


# --- SQL workbench ------------------------------------------------------------

WHAT_NAME_IS = (
    "NAME is a workspace name, a workspace folder, its NAME.duckdb or "
    "NAME.perfetto.json.gz, or the report / export it was converted from."
)


def _workbench(name: str, as_file: bool = False):
    """The workbench of NAME (:func:`workbench.open_workbench`); exits 2 when
    there is no converted workspace by that name, 1 when it cannot be built,
    130 on Ctrl-C."""
    from .workbench import open_workbench

    try:
        return open_workbench(name, as_file=as_file)
    except InputError as exc:  # no such workspace, not converted: a usage error, as click's
        fail(name, str(exc))
        sys.exit(2)
    except NsysDuckError as exc:
        fail(name, str(exc))
        sys.exit(1)
    except KeyboardInterrupt:
        fail(None, "interrupted")
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
            fail(None, str(exc))
            sys.exit(1)


@main.command(
    "sql",
    help="""Query the pipeline's views and tables of a converted report.

"""
    + WHAT_NAME_IS
    + """

Without -c: the DuckDB CLI (the duckdb-cli package, read-only on NAME.duckdb;
exit status 2 when it is not installed). With -c: run the SQL and print the
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
        code = sqlrun.run_sql(wb.con, command, fmt, output)
    if code == sqlrun.INTERRUPTED:
        sqlrun.leave_interrupted()  # the workbench's temporaries are gone: nothing else to do
    sys.exit(code)


NO_DUCKDB_CLI = (
    "the interactive prompt is the DuckDB CLI (1.4 or newer), which is not installed "
    "beside this Python or on PATH: install it with pip install duckdb-cli, or give the "
    "query with -c SQL"
)


def _interactive(name: str) -> int:
    """``sql NAME`` without -c: the DuckDB CLI on NAME's database (built into
    a temporary file when the workspace has no NAME.duckdb); exit status 2
    with one sentence when there is no DuckDB CLI."""
    cli = sqlrun.duckdb_cli()
    if cli is None:
        fail(None, NO_DUCKDB_CLI)
        return 2
    with _workbench(name, as_file=True) as wb:
        wb.con.close()  # the CLI opens the file itself
        return sqlrun.duckdb_prompt(cli, wb.database)


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
        fail(str(dest), str(exc))
        sys.exit(1)
    except OSError as exc:
        fail(str(dest), f"cannot write there: {exc.strerror or exc}")
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
        with progress_bar() as bar:
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
        fail(name, str(exc))
        sys.exit(1)
    except KeyboardInterrupt:
        fail(None, "interrupted; the merge was not published (reports converted before are kept)")
        sys.exit(130)
    for path, message in res.failed:
        fail(path, message + " (left out of the merge)")
    print_merge_summary(res)
    if res.failed:
        sys.exit(1)


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

    try:
        res = report_mod.run_report(name, report, sql_dir=sql_dir, limit=limit)
    except InputError as exc:
        fail(name, str(exc))
        sys.exit(2)
    except NsysDuckError as exc:
        fail(name, str(exc))
        sys.exit(1)
    except KeyboardInterrupt:
        fail(None, "interrupted")
        sys.exit(130)
    try:
        if fmt == "table":
            report_mod.print_table(res)
        else:
            click.echo(report_mod.render(res, fmt), nl=False)
        sys.stdout.flush()
    except BrokenPipeError:  # | head: the reader left
        silence_stdout()


@main.command("open")
@click.argument("name")
@click.option(
    "--port",
    default=DEFAULT_PORT,
    show_default=True,
    type=int,
    help="Port on 127.0.0.1 (ui.perfetto.dev accepts 9001 without a flag).",
)
@click.option("--once", is_flag=True, help="Stop after the browser has fetched the trace once.")
@click.option(
    "--no-browser",
    "no_browser",
    is_flag=True,
    help="Only print the link (no browser is started anyway without a display).",
)
@click.option(
    "--accelerate",
    is_flag=True,
    help="Run trace_processor_shell --httpd on the trace instead, for traces "
    "too big for the browser.",
)
@click.option(
    "--trace-processor",
    "trace_processor",
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    help="trace_processor_shell to use (implies --accelerate; default: "
    "$NSYS_DUCK_TRACE_PROCESSOR, then PATH).",
)
@click.option(
    "--part",
    metavar="K",
    type=click.IntRange(min=1),
    help="Of a trace split in parts (NAME.part-001.perfetto.json.gz, ...): open part K "
    "(default: 1).",
)
def open_cmd(name, port, once, no_browser, accelerate, trace_processor, part):
    """Show a converted trace in ui.perfetto.dev, served from this machine.

    NAME is a workspace name, a workspace folder, a .perfetto.json.gz, or a
    report or export (its workspace's trace). Serves that one file on
    127.0.0.1, prints the ui.perfetto.dev link that loads it and opens it in
    a browser when there is a display; serves until Ctrl-C. --accelerate runs
    trace_processor_shell --httpd on the trace instead: open ui.perfetto.dev
    and click "YES, use loaded trace". Of a trace split in parts (over
    --max-json-size), one part at a time: --part K (default 1).

    Example: nsys-duck open model
    """
    sys.exit(
        run_open(
            name,
            port=port,
            once=once,
            browser=not no_browser,
            trace_processor=trace_processor,
            accelerate=accelerate,
            part=part,
        )
    )


if __name__ == "__main__":  # python -m nsys_duck.cli ARGS: nsys-duck ARGS
    main(prog_name="nsys-duck")
