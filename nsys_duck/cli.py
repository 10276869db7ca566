"""Command line: ``nsys-duck convert|validate|...`` (a thin click layer).

Every expected failure prints one sentence to stderr and sets a nonzero exit
status; tracebacks are for bugs only.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from . import __version__
from .convert import Options, Result, convert
from .errors import NsysDuckError

err = Console(stderr=True)


def _human(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


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
        parts.append(f"session-relative times (+ session start "
                     f"{info.get('time_offset_ns')} ns)")
    if info.get("time_shift_ns"):
        parts.append(f"--ts-shift {info['time_shift_ns']} ns")
    return "exported by: " + ", ".join(parts)


def print_summary(res: Result, timings: bool) -> None:
    """The contract's summary; the last line is the absolute JSON path."""
    out = click.echo
    out(f"== {res.workspace.name}")
    out(f"source: {res.source.path}")
    if res.export_reused and res.source.kind == "sqlite":
        out(f"export: reused {res.workspace.parquet_dir} (transcribed from "
            f"{res.source.path}, unchanged since; --force transcribes it again)")
    elif res.export_reused:
        out(f"export: reused {res.workspace.parquet_dir} (newer than the report; "
            "--force re-exports)")
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
    if res.overridden_sql:
        out("SQL overridden by --sql-dir: " + ", ".join(res.overridden_sql))
    if res.added_sql:
        out("SQL added by --sql-dir: " + ", ".join(res.added_sql))
    out(f"time base (epoch_ns): {res.base_ns}")
    width = min(max(len(m) for m, _ in res.summary), 60)   # longer labels overflow
    for metric, value in res.summary:
        out(f"  {metric:<{width}}  {value:>12,}" if isinstance(value, int)
            else f"  {metric:<{width}}  {value}")
    if res.validated:
        out(f"validated: no violations ({res.validate_seconds:.1f} s)")
    else:
        out("validation: skipped (--no-validate)")
    if timings:
        for t in res.timings:
            out(f"  time {t.relpath:<45} {t.seconds:8.3f} s")
    for f in res.files:
        out(f"{f}  ({_human(f.stat().st_size)})")
    out(str(res.workspace.json_gz.resolve()))


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


@main.command("convert", context_settings={"ignore_unknown_options": True})
@click.argument("paths", nargs=-1, required=True)
@click.option("--nsys", "nsys_path", metavar="FILE",
              help="nsys executable to use (default: newest installed).")
@click.option("--force", is_flag=True, help="Re-export even if the export is newer.")
@click.option("--sql-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder of .sql files overriding/adding to the packaged stages.")
@click.option("--nvtx-scope", type=click.Choice(["thread", "process"]), default="thread",
              show_default=True, help="Which API calls an NVTX range owns.")
@click.option("--memory-limit", default="2GB", show_default=True,
              help="DuckDB memory limit; past it DuckDB spills to disk.")
@click.option("--timings", is_flag=True, help="Print per-stage wall times.")
@click.option("--no-validate", "no_validate", is_flag=True,
              help="Publish the trace without running the contract validator on it.")
@click.option("--no-database", "no_database", is_flag=True,
              help="Do not write NAME.duckdb (the pipeline's views and tables for SQL).")
def convert_cmd(paths, nsys_path, force, sql_dir, nvtx_scope, memory_limit, timings,
                no_validate, no_database):
    """Convert reports (.nsys-rep/.qdrep), Nsight SQLite exports (.sqlite) or
    Parquet export folders.

    A path may start with '-' (e.g. -x.nsys-rep) when such a file exists.
    Example: nsys-duck convert model.nsys-rep
    """
    for path in paths:
        # unknown options reach us as paths (so '-x.nsys-rep' works); a word
        # starting with '-' that is no file is a mistyped option
        if path.startswith("-") and not os.path.lexists(path):
            raise click.NoSuchOption(path.split("=", 1)[0])
    opts = Options(nsys=nsys_path, force=force, sql_dir=sql_dir, nvtx_scope=nvtx_scope,
                   memory_limit=memory_limit, validate=not no_validate,
                   database=not no_database)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _terminate)
    failed = 0
    for i, path in enumerate(paths):
        if i:
            click.echo()
        try:
            with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                          TimeElapsedColumn(), console=err, transient=True,
                          disable=not err.is_terminal) as bar:
                task = bar.add_task(f"{path}", total=None)

                def progress(stage: str, fraction: float | None) -> None:
                    bar.update(task, description=f"{Path(path).name}: {stage}",
                               total=1.0 if fraction is not None else None,
                               completed=fraction or 0)

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


def _fail(path: str | None, message: str) -> None:
    """The one stderr line of a failure: ``nsys-duck: PATH: message``."""
    line = " ".join(message.split())
    prefix = f"nsys-duck: {_shown(path)}: " if path is not None else "nsys-duck: "
    err.print(prefix + line, markup=False, highlight=False, soft_wrap=True)


def _shown(path: str) -> str:
    """``path`` as typed, with control characters made visible (one line)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in path)


@main.command("validate")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=True))
@click.option("--max-examples", default=5, show_default=True, metavar="N", type=int,
              help="Examples kept per rule (totals are always exact).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--memory-limit", default="2GB", show_default=True,
              help="DuckDB memory limit of the validator.")
def validate_cmd(file, max_examples, as_json, memory_limit):
    """Check a .perfetto.json.gz against the output contract and Perfetto's rules.

    Exit status 0 when clean, 1 on violations, 2 when the file is missing.
    Example: nsys-duck validate model.perfetto.json.gz
    """
    from . import validate as validate_mod
    if not file.exists():
        _fail(str(file), "no such file or directory")
        sys.exit(2)
    if not file.is_file():
        _fail(str(file), "not a file (give the .perfetto.json.gz)")
        sys.exit(2)
    argv = [str(file), "--max-examples", str(max_examples), "--memory-limit", memory_limit]
    if as_json:
        argv.append("--json")
    sys.exit(validate_mod.main(argv))


# --- SQL workbench ------------------------------------------------------------

def _workbench(name: str):
    from .workbench import open_workbench
    try:
        return open_workbench(name)
    except NsysDuckError as exc:
        err.print(f"nsys-duck: {name}: {exc}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(1)


@main.command("views")
@click.argument("name")
def views_cmd(name):
    """List the pipeline's views in run order, with descriptions and columns.

    Example: nsys-duck views model
    """
    from .workbench import list_views
    wb = _workbench(name)
    for relpath, view, desc, cols in list_views(wb):
        click.echo(f"{view}  ({relpath})")
        if desc:
            click.echo(f"    {desc}")
        click.echo("    " + ", ".join(f"{c} {t}" for c, t in cols))


@main.command("explain")
@click.argument("name")
@click.argument("view")
def explain_cmd(name, view):
    """Print the rendered SQL that defines VIEW. Example: nsys-duck explain model int_flows"""
    from .workbench import explain
    wb = _workbench(name)
    try:
        click.echo(explain(wb, view))
    except NsysDuckError as exc:
        err.print(f"nsys-duck: {exc}", markup=False)
        sys.exit(1)


@main.command("sql")
@click.argument("name")
@click.option("-c", "command", help="Run this SQL and print the result.")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json", "parquet"]),
              default="table", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Output file (required for parquet).")
def sql_cmd(name, command, fmt, output):
    """Query the pipeline's views of a converted report.

    NAME is a workspace name, a report path or an export folder. Without -c,
    an interactive prompt (statements end with ';', history kept).
    Example: nsys-duck sql model -c "SELECT name, sum(dur_ns) FROM trace_slices GROUP BY 1"
    """
    import duckdb
    wb = _workbench(name)
    if command is None:
        _repl(wb.con)
        return
    try:
        if fmt == "parquet":
            if output is None:
                raise click.UsageError("--format parquet needs --output FILE")
            import pyarrow.parquet as pq
            pq.write_table(wb.con.sql(command).to_arrow_table(), output)
            return
        rel = wb.con.sql(command)
        if rel is None:
            return
        if fmt == "table":
            text = str(rel.limit(10_000))
        else:
            table = rel.to_arrow_table()
            if fmt == "csv":
                import io
                import pyarrow.csv as pacsv
                buf = io.BytesIO()
                pacsv.write_csv(table, buf)
                text = buf.getvalue().decode()
            else:
                import json
                text = json.dumps(table.to_pylist(), default=str, ensure_ascii=False)
        if output:
            output.write_text(text)
        else:
            click.echo(text)
    except duckdb.Error as exc:
        err.print(f"nsys-duck: SQL error: {str(exc).strip().splitlines()[0]}", markup=False)
        sys.exit(1)


def _repl(con) -> None:
    import duckdb
    try:
        import readline  # noqa: F401  (history and line editing)
        hist = Path.home() / ".nsys_duck_history"
        if hist.exists():
            readline.read_history_file(hist)
    except Exception:
        hist = None
    click.echo("nsys-duck SQL; views: nsys-duck views NAME; end statements with ';', Ctrl-D quits")
    buf = ""
    while True:
        try:
            line = input("... " if buf else "sql> ")
        except EOFError:
            break
        except KeyboardInterrupt:
            buf = ""
            click.echo()
            continue
        buf += line + "\n"
        if not buf.strip().endswith(";"):
            continue
        try:
            rel = con.sql(buf)
            if rel is not None:
                click.echo(str(rel.limit(10_000)))
        except duckdb.Error as exc:
            click.echo(f"error: {str(exc).strip().splitlines()[0]}")
        buf = ""
    if hist:
        try:
            import readline
            readline.write_history_file(hist)
        except Exception:
            pass


@main.command("sql-files")
@click.option("--copy", "dest", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder to copy the packaged SQL files into.")
def sql_files_cmd(dest):
    """Copy the packaged SQL stages into DEST for editing (use with convert --sql-dir)."""
    from .workbench import copy_sql_files
    files = copy_sql_files(dest)
    click.echo(f"copied {len(files)} SQL files to {dest}; edit them, then: "
               f"nsys-duck convert --sql-dir {dest} REPORT")


if __name__ == "__main__":
    main()
