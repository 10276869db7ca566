"""One conversion: report, SQLite export or export folder -> the workspace's output files.

Orchestration only: export with nsys if needed (or transcribe an Nsight
SQLite export into Parquet, ``sqlite_export``), register the Parquet tables,
run the SQL stages (``pipeline``), run the contract checks over the
pipeline's tables (``checks``: the ``check_*`` views) before anything is
written, write and check the files (``writers``), publish the files
atomically and return the summary rows from ``trace_summary``.

Failure rules (README, "Exit status and messages"): every expected failure
is an :class:`NsysDuckError` with a one-line message; temporary files are
removed; nothing is published; a workspace folder this run created is
removed again unless it holds an export made by nsys or transcribed from an
SQLite export (slow to redo, so kept for the next run and for
``nsys-duck sql``).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from . import (
    __version__,
    catalog,
    contract,
    database,
    lanes,
    manifest,
    outputs,
    pipeline,
    runs,
    sources,
    sqlite_export,
    writers,
)
from . import checks as checks_mod
from . import formats as formats_mod
from . import nsys as nsys_mod
from .errors import InputError, NsysDuckError, SqlStageError, WorkspaceError
from .failures import Step, named_failures, os_failure
from .outputs import timed
from .runs import InterruptWatch
from .workspace import (
    MERGE_RANKS_DIR,
    MERGE_REPORTS_DIR,
    Source,
    Workspace,
    classify_input,
    workspace_for,
)

HOOKS = {"lanes": lanes.assign_lanes}  # the relation each creates: its file's hook tag
# --timings label of ensure_export per Source.kind (not shown when reused)
EXPORT_LABELS = {
    "report": "nsys export",
    "sqlite": "transcribe SQLite to Parquet",
    "export": "link the export folder",
}


@dataclass
class Options:
    """What the CLI passes to :func:`convert` (defaults = the CLI's defaults)."""

    nsys: str | None = None
    force: bool = False  # export again; replace another report's workspace
    output_dir: Path | None = None  # the workspace folder (default: ROOT/NAME)
    sql_dir: Path | None = None
    nvtx_scope: str = "thread"
    memory_limit: str = "2GB"
    threads: int | None = None
    validate: bool = True  # run the contract checks (check_* views) before writing
    database: bool = True  # also write NAME.duckdb (the pipeline's views and tables)
    # split the JSON past this many bytes (--max-json-size)
    max_json_bytes: int = int(pipeline.DEFAULT_OPTIONS["max_json_bytes"])
    # --window START:END, seconds after the trace's first event
    window: tuple[float | None, float | None] | None = None
    devices: tuple[int, ...] = ()  # --devices 0,3 (empty: every device)
    # --format: which traces are written (the Parquet and NAME.duckdb always):
    # perfetto (NAME.perfetto.json.gz), kineto (NAME.kineto/, sql/60_kineto) or both
    trace_format: str = "perfetto"
    # the CPU-side tables drawn (pipeline.CPU_SOURCES; --no-osrt ... drop one)
    cpu_sources: tuple[str, ...] = pipeline.CPU_SOURCES

    def template_options(self) -> dict[str, object]:
        """The template variables of the SQL stages (pipeline.DEFAULT_OPTIONS)."""
        start, end = self.window or (None, None)
        return {
            "nvtx_scope": self.nvtx_scope,
            "max_json_bytes": int(self.max_json_bytes),
            "window_start_s": start,
            "window_end_s": end,
            "devices": [int(d) for d in self.devices],
            "cpu_sources": list(self.cpu_sources),
        }


@dataclass
class Result:
    """What a conversion produced; ``summary`` is (metric, value) in print order."""

    source: Source
    workspace: Workspace
    nsys_version: str | None
    export_reused: bool
    summary: list[tuple[str, object]]
    files: list[Path]
    overridden_sql: list[str] = field(default_factory=list)
    added_sql: list[str] = field(default_factory=list)
    timings: list[pipeline.StageTiming] = field(default_factory=list)
    base_ns: int = 0
    validated: bool = False  # the contract checks ran and found nothing
    validate_seconds: float = 0.0  # checks (+ file validator when it ran), seconds
    checks: int = 0  # check_* views run
    file_validated: bool = False  # the JSON was also re-read by validate_trace
    export_info: dict = field(default_factory=dict)  # read_export_info()
    notes: list[str] = field(default_factory=list)  # one sentence each, for the summary
    source_sha256: str = ""  # of the report/.sqlite (manifest.Fingerprint)
    window: dict | None = None  # read_window(): what --window selected (None without it)


Progress = Callable[[str, float | None], None]


def _noop(stage: str, fraction: float | None) -> None:
    pass


def ensure_export(
    source: Source, ws: Workspace, opts: Options, progress: Progress, reuse: bool = False
) -> tuple[Path, str | None, bool]:
    """Make sure ``ws.parquet_dir`` holds the export; returns (dir, nsys version, reused).

    ``reuse``: the workspace manifest says ``parquet/`` was made from the
    same content (:func:`manifest.check_source`). An export folder is
    mirrored (hard links); an SQLite export is transcribed into Parquet
    (reused when ``reuse`` and it was transcribed with the same stand-in
    types); a report is exported by nsys (reused when ``reuse``).
    """
    if source.kind == "export":
        if source.path == ws.parquet_dir.resolve():
            return ws.parquet_dir, None, True
        _link_or_copy_export(source.path, ws)
        return ws.parquet_dir, None, False
    if source.kind == "sqlite":
        return _transcribe_sqlite(source, ws, opts, progress, reuse)
    if reuse and sqlite_export.read_marker(ws.parquet_dir) is None:
        return ws.parquet_dir, None, True
    nsys = nsys_mod.find_nsys(opts.nsys)
    with _new_parquet_dir(ws) as tmp:
        written = nsys_mod.export_parquet(
            nsys,
            source.path,
            tmp / "parquet",
            log_path=ws.dir / "nsys-export.log",
            tick=lambda s: progress(f"nsys export ({s:.0f} s)", None),
        )
        _publish_dir(written, ws)
    return ws.parquet_dir, nsys.version, False


def _transcribe_sqlite(
    source: Source, ws: Workspace, opts: Options, progress: Progress, reuse: bool
) -> tuple[Path, str | None, bool]:
    """Transcribe an Nsight SQLite export into ``ws.parquet_dir`` (or reuse it)."""
    expected = standin_columns(pipeline.sql_files(opts.sql_dir), opts)
    if reuse and sqlite_export.same_standins(ws.parquet_dir, expected):
        return ws.parquet_dir, None, True
    with _new_parquet_dir(ws) as tmp:
        sqlite_export.transcribe(
            source.path,
            tmp / "parquet",
            expected,
            progress=lambda table, rows: progress(
                f"SQLite -> Parquet: {table} ({rows:,} rows)", None
            ),
        )
        _publish_dir(tmp / "parquet", ws)
    return ws.parquet_dir, None, False


@contextmanager
def _new_parquet_dir(ws: Workspace):
    """A temporary folder in the workspace to build a new ``parquet/`` in;
    removed afterwards (whatever :func:`_publish_dir` did not move away)."""
    tmp = Path(tempfile.mkdtemp(prefix=".parquet.tmp-", dir=ws.dir))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _publish_dir(built: Path, ws: Workspace) -> None:
    """Make the finished folder ``built`` the workspace's ``parquet/``."""
    if ws.parquet_dir.exists():
        shutil.rmtree(ws.parquet_dir)
    os.replace(built, ws.parquet_dir)


def _link_or_copy_export(src: Path, ws: Workspace) -> None:
    """Mirror an export folder into the workspace (hard links when possible)."""
    with _new_parquet_dir(ws) as tmp:
        built = tmp / "parquet"
        built.mkdir()
        for f in sorted(src.glob("*.parquet")):
            try:
                os.link(f, built / f.name)
            except OSError:
                shutil.copy2(f, built / f.name)
        _publish_dir(built, ws)


def open_database(
    opts: Options, temp_dir: Path, path: Path | None = None
) -> duckdb.DuckDBPyConnection:
    """A DuckDB that spills to ``temp_dir`` past ``memory_limit``: in memory,
    or the database file ``path`` (which must not exist yet)."""
    con = (
        duckdb.connect(str(path), config=database.WRITE_CONFIG)
        if path is not None
        else duckdb.connect(":memory:")
    )
    try:
        con.execute(f"SET memory_limit = {sources.sql_string(opts.memory_limit)}")
    except duckdb.Error as exc:
        con.close()
        reason = " ".join(str(exc).split()).split(": ", 1)[-1]
        raise NsysDuckError(f"--memory-limit {opts.memory_limit}: {reason}") from None
    con.execute(f"SET temp_directory = {sources.sql_string(str(temp_dir))}")
    con.execute("SET preserve_insertion_order = false")
    if opts.threads:
        con.execute(f"SET threads = {int(opts.threads)}")
    return con


STANDINS = "10_sources/nsys_tables.sql"


def standin_columns(files: list[pipeline.SqlFile], opts: Options) -> sources.Expected:
    """The columns the SQL stages read, from the stand-in DDL among ``files``
    (``10_sources/nsys_tables.sql`` or its ``--sql-dir`` override)."""
    standins = next((f for f in files if f.relpath == STANDINS), None)
    if standins is None:
        return {}
    text = pipeline.render(standins, pipeline.Context({}, opts.template_options()))
    try:
        return sources.expected_columns(text)
    except duckdb.Error as exc:
        raise SqlStageError(f"{STANDINS}: {' '.join(str(exc).split())[:300]}") from None


def build(
    con: duckdb.DuckDBPyConnection,
    export_dir: Path,
    opts: Options,
    progress: Progress = _noop,
    *,
    notes: sources.ExportNotes | None = None,
    save_tables: bool = False,
) -> tuple[list[pipeline.SqlFile], list[pipeline.StageTiming]]:
    """Register ``export_dir`` and run every SQL stage on ``con``.

    The columns the stages read come from the stand-in DDL
    (``10_sources/nsys_tables.sql``, or its ``--sql-dir`` override): a table
    lacking a required one is refused before any stage runs (one message
    naming table and column), optional ones it lacks read as NULL, and
    strings that are not valid UTF-8 are repaired in a scratch copy; both
    are recorded in ``notes``. ``save_tables`` (``con`` is the future
    ``NAME.duckdb``): the tables the stages read are copied into ``con``
    (:func:`database.keep_export_tables` settles the rest at the end).
    """
    files = pipeline.sql_files(opts.sql_dir)
    options = opts.template_options()
    expected = standin_columns(files, opts)
    scratch = con.execute("SELECT current_setting('temp_directory')").fetchall()[0][0]
    scratch_dir = Path(scratch) if scratch and Path(scratch).is_dir() else None
    registered: list[pipeline.StageTiming] = []
    with timed(registered, "register the export"):
        columns = sources.register_export(
            con,
            export_dir,
            expected=expected,
            scratch=scratch_dir,
            notes=notes,
            materialize=(lambda table: table in expected) if save_tables else None,
        )
    ctx = pipeline.Context(columns, options)
    n = len(files)
    done = [0]

    def on_file(rel: str) -> None:
        progress(f"SQL {rel}", done[0] / n)
        done[0] += 1

    timings = registered + pipeline.run_pipeline(con, files, ctx, HOOKS, on_file)
    contract.check_outputs(con, files)
    catalog.save(con, files, ctx)  # what ran, for views/explain (nsys_duck_sql)
    return files, timings


def convert(
    path: str | os.PathLike,
    opts: Options | None = None,
    *,
    root: Path | None = None,
    progress: Progress = _noop,
) -> Result:
    """Convert one report (or SQLite export, or export folder) into its workspace.

    Runs the SQL stages, then the contract checks (every ``check_*`` view
    of the files run, :mod:`checks`; unless ``opts.validate`` is False)
    before any file is written; writes ``NAME.perfetto.json.gz``,
    ``NAME.perfetto.parquet`` and ``NAME.kernel_dependencies.parquet`` under
    temporary names, checks the gzip trailer, and renames them into place.
    When a ``--sql-dir`` file redefines a view the JSON writer reads
    (:func:`checks.writer_sql_edited`), the checks cannot vouch for the text
    written, so the file validator also reads the JSON before publishing.

    Raises:
        NsysDuckError (or a subclass) with a one-line message for every
        expected failure: bad input, a damaged export (Parquet or SQLite)
        or one lacking a required column, nsys missing or failing, SQL
        errors, no events, contract check or validator violations (the
        check's file, view and first message), a full disk, a second
        conversion of the same report running.
        KeyboardInterrupt: Ctrl-C (also when DuckDB reported it as its own
        error); temporary files are removed first.
    """
    opts = opts or Options()
    source = classify_input(path)
    ws = workspace_for(source, root, opts.output_dir)
    if source.kind == "export" and ws.dir.resolve() == source.path:
        # its mirror would be written into it (and a failure would remove it)
        raise InputError(
            f"the export folder is itself the workspace folder {ws.dir}; "
            "move the tables into a subfolder called parquet, or set "
            "NSYS_WORKSPACE_ROOT elsewhere"
        )
    created = not ws.dir.exists()
    make_workspace_dir(ws)
    if not ws.dir.is_dir():
        raise WorkspaceError(f"the workspace path {ws.dir} is not a folder")
    if not os.access(ws.dir, os.W_OK | os.X_OK):
        raise WorkspaceError(f"the workspace folder {ws.dir} is not writable")
    done = locked = False
    try:
        with runs.locked_run(ws, f"conversion of {ws.name} is running") as watch:
            locked = True
            _remove_stale_temporaries(ws)
            result = _convert_locked(source, ws, opts, progress, watch)
        done = True
        return result
    finally:
        # a failed run takes back the folder it created, unless it holds an
        # export nsys made or a transcribed SQLite export (slow to redo; kept
        # for the next run and for sql)
        if (
            locked
            and not done
            and created
            and (source.kind == "export" or not sources.is_export_dir(ws.parquet_dir))
        ):
            shutil.rmtree(ws.dir, ignore_errors=True)


def recorded_options(
    opts: Options, *, validated: bool, checks: list[str], file_validated: bool
) -> dict[str, object]:
    """The manifest's ``conversion.options``: what a conversion with ``opts``
    records, and what :func:`up_to_date` compares (one place for both).

    ``validated``: the contract checks ran and passed; ``checks``: the
    ``check_*`` views run, in order; ``file_validated``: the file validator
    also read the JSON (a ``--sql-dir`` file edits the writer's views).
    ``threads``, ``force`` and ``output_dir`` are not recorded: they do not
    change what is written.
    """
    return {
        "nvtx_scope": opts.nvtx_scope,
        "sql_dir": str(opts.sql_dir.resolve()) if opts.sql_dir else None,
        "memory_limit": opts.memory_limit,
        "max_json_bytes": opts.max_json_bytes,
        "window": list(opts.window) if opts.window else None,
        "devices": list(opts.devices),
        "format": opts.trace_format,
        "cpu_sources": list(opts.cpu_sources),
        "validated": validated,
        "checks": checks,
        "file_validated": file_validated,
        "database": opts.database,
    }


def up_to_date(
    path: str | os.PathLike, opts: Options | None = None, root: Path | None = None
) -> Workspace | None:
    """The workspace of ``path`` when it already holds a finished conversion
    of this very input with these options (converting again can be skipped);
    else None.

    Up to date means all of:

    - the workspace's manifest (``nsys-duck.json``, :func:`manifest.read`)
      names the workspace NAME and a source with the input's path, kind,
      size and SHA-256 as they are now (:func:`manifest.fingerprint`: a
      report is hashed again only when its inode, size, mtime or ctime
      changed; an export folder by its Parquet footers);
    - its ``conversion`` record was written by this nsys-duck version, with
      the options ``opts`` would record (:func:`recorded_options`: NVTX
      scope, JSON size limit, window, devices, database, and the contract
      checks this version runs; not the memory limit, which changes no
      file, and with ``opts.validate`` False a conversion that ran the
      checks is up to date too);
    - every file that record lists is in the workspace with the size
      recorded (bytes).

    Never up to date: ``opts.force`` (it asks to export again) and
    ``opts.sql_dir`` (the manifest records the folder, not its files,
    which may have changed since). The workspace is ``opts.output_dir``
    when set, else ``root/NAME`` (root: ``$NSYS_WORKSPACE_ROOT``).

    Only reads (no lock, nothing written). Never raises for an input it
    cannot judge (missing, unreadable, not a report, no or a damaged
    manifest, a file gone): returns None, and the conversion then runs and
    reports the error.
    """
    opts = opts or Options()
    if opts.force or opts.sql_dir is not None:
        return None
    try:
        source = classify_input(path)
        ws = workspace_for(source, root, opts.output_dir)
        recorded = manifest.read(ws.dir)
        if recorded is None or recorded.get("name") != ws.name:
            return None
        old, conv = recorded.get("source"), recorded.get("conversion")
        if not isinstance(old, dict) or not isinstance(conv, dict):
            return None
        if conv.get("nsys_duck_version") != __version__:
            return None
        files = pipeline.sql_files(opts.sql_dir)
        expected = recorded_options(
            opts,
            validated=opts.validate,
            checks=[c.view for c in checks_mod.find_checks(files, in_convert=True)]
            if opts.validate
            else [],
            file_validated=bool(opts.validate and checks_mod.writer_sql_edited(files)),
        )
        recorded_opts = dict(conv.get("options") or {})
        wanted = json.loads(json.dumps(expected))
        # what does not change the files: the memory limit; and without
        # checks asked for, whether they ran (a checked conversion will do)
        ignored = ["memory_limit"]
        if not opts.validate:
            ignored += ["validated", "checks", "file_validated"]
        for key in ignored:
            recorded_opts.pop(key, None)
            wanted.pop(key, None)
        if recorded_opts != wanted:
            return None
        listed = conv.get("files")
        if not isinstance(listed, dict) or not listed:
            return None
        for name, size in listed.items():
            if not _listed_name(ws, name) or (ws.dir / name).stat().st_size != size:
                return None
        # last: it may hash the whole report
        now = manifest.fingerprint(source.path, source.kind, old)
        same = [old.get(k) for k in ("path", "kind", "size", "sha256")]
        return ws if same == [now.path, now.kind, now.size, now.sha256] else None
    except (NsysDuckError, OSError, ValueError, TypeError, AttributeError):
        return None


def _listed_name(ws: Workspace, name: str) -> bool:
    """A file name the manifest may list: a file of the workspace folder,
    or a file of a folder format's folder (``NAME.kineto/rank0.json.gz``)."""
    parts = Path(name).parts
    if len(parts) == 2 and parts[0] in {f.name for f in formats_mod.folders(ws)}:
        return parts[1] not in ("", ".", "..")
    return Path(name).name == name


def make_workspace_dir(ws: Workspace) -> None:
    """Create the workspace folder (and its parents) if missing.

    Raises:
        WorkspaceError: "cannot create the workspace folder DIR: REASON".
    """
    try:
        ws.dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WorkspaceError(
            f"cannot create the workspace folder {ws.dir}: {exc.strerror or exc}"
        ) from None


def _remove_outputs(ws: Workspace, names: set[str]) -> None:
    """Remove the published files of an earlier conversion, named after any
    of ``names`` (the workspace's NAME now and before), and nsys's export log:
    they show another report's data (or data no manifest vouches for)."""
    for name in names:
        earlier = Workspace(ws.dir, name)
        for f in [*(f for fmt in formats_mod.FORMATS for f in fmt.left(earlier)), *earlier.always]:
            if f.is_dir():
                shutil.rmtree(f, ignore_errors=True)
            else:
                f.unlink(missing_ok=True)
    try:
        (ws.dir / "nsys-export.log").unlink()
    except FileNotFoundError:
        pass


def _remove_stale_temporaries(ws: Workspace) -> None:
    """Temporary files of an earlier run that was killed (we hold the lock)."""
    # .*.old-*: a folder format's earlier folder, set aside while published
    for pattern in (".parquet.tmp-*", ".duckdb-spill-*", ".*.tmp-*", ".*.old-*"):
        for p in ws.dir.glob(pattern):
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                try:
                    p.unlink()
                except OSError:
                    pass


def _no_events_message(con: duckdb.DuckDBPyConnection) -> str:
    msg = (
        "no table of the export yields a trace event (no kernels, memcpy, memset, "
        "CUDA API or NVTX ranges)"
    )
    try:
        skipped = con.execute(
            contract.query("skipped-rows", "source_table, reason, skipped")
        ).fetchall()
    except duckdb.Error:
        skipped = []
    if skipped:
        total = sum(n for _, _, n in skipped)
        msg += f"; {total} row{' was' if total == 1 else 's were'} skipped: " + ", ".join(
            f"{n} {t} ({r})" for t, r, n in skipped
        )
    return msg


def _prepare_export(
    source: Source, ws: Workspace, opts: Options, progress: Progress, timings: list
) -> tuple[Path, str | None, bool, dict, str, list[str]]:
    """The workspace checked and the export made, reused or linked, with its
    manifest written (a conversion pending): returns (export folder, nsys
    version, reused, manifest record, the input's SHA-256, notes)."""
    progress("checking the workspace", None)
    recorded = manifest.read(ws.dir)
    if recorded is not None and recorded.get("merge"):
        # nsys-duck merge's workspace (many reports): not this report's
        if not opts.force:
            raise WorkspaceError(
                f"the workspace {ws.dir} holds a merge of several reports (nsys-duck "
                "merge); convert this one into its own folder with -o DIR, or replace "
                "the merge with --force"
            )
        for folder in (MERGE_REPORTS_DIR, MERGE_RANKS_DIR):
            shutil.rmtree(ws.dir / folder, ignore_errors=True)
        recorded = None
    in_place = source.kind == "export" and source.path == ws.parquet_dir.resolve()
    with timed(timings, "identify the input (sha256)"):
        fingerprint = manifest.fingerprint(source.path, source.kind, (recorded or {}).get("source"))
    notes: list[str] = []
    if in_place:
        decision = manifest.Decision(True, None)  # the workspace's own export
    else:
        decision = manifest.check_source(
            recorded, fingerprint, ws.dir, sources.is_export_dir(ws.parquet_dir), opts.force
        )
    if decision.reason:
        notes.append(decision.reason)
    recorded_source = (recorded or {}).get("source") or {}
    if not decision.reuse and not in_place and recorded_source.get("sha256") != fingerprint.sha256:
        _remove_outputs(ws, {ws.name, (recorded or {}).get("name") or ws.name})
    progress("export", None)
    try:
        if not decision.reuse:
            # until the new export and its manifest are in place, nothing
            # vouches for parquet/ (a run killed in between must not reuse it)
            manifest.write(ws.dir, manifest.pending(ws.name))
        with timed(timings, EXPORT_LABELS[source.kind]):
            export_dir, nsys_version, reused = ensure_export(
                source, ws, opts, progress, decision.reuse
            )
        if reused:
            timings[-1] = pipeline.StageTiming("reuse the export", timings[-1].seconds)
        if reused and recorded is not None:
            record = dict(
                recorded, source=recorded["source"] if in_place else fingerprint.as_json()
            )
        else:
            made_by = {
                "made_by": EXPORT_LABELS[source.kind],
                "nsys_version": nsys_version,
                "at": manifest.now(),
            }
            record = manifest.new(ws.name, fingerprint, made_by)
        manifest.write(
            ws.dir, dict(record, conversion=record.get("conversion") if reused else None)
        )
    except OSError as exc:
        raise os_failure(exc, ws) from None
    return export_dir, nsys_version, reused, record, fingerprint.sha256, notes


def _convert_locked(
    source: Source, ws: Workspace, opts: Options, progress: Progress, watch: InterruptWatch
) -> Result:
    open_database(opts, ws.dir).close()  # a bad --memory-limit fails before the export
    timings: list[pipeline.StageTiming] = []
    export_dir, nsys_version, reused, record, sha256, notes_out = _prepare_export(
        source, ws, opts, progress, timings
    )
    spill = Path(tempfile.mkdtemp(prefix=".duckdb-spill-", dir=ws.dir))
    spec = outputs.OutputSpec(
        ws, opts.trace_format, opts.validate, _no_events_message, opts.memory_limit, spill
    )
    step = Step("the SQL stages")
    try:
        with outputs.Scratch() as scratch:
            with named_failures(step, ws, opts.memory_limit, export_dir=export_dir):
                db_tmp = writers.temp_path(ws.database) if opts.database else None
                if db_tmp is not None:
                    scratch.files += [db_tmp, db_tmp.with_name(db_tmp.name + ".wal")]
                con = scratch.con = open_database(opts, spill, db_tmp)
                notes = sources.ExportNotes()
                files, built = build(
                    con, export_dir, opts, progress, notes=notes, save_tables=opts.database
                )
                timings += built
                out = outputs.write_outputs(con, files, spec, step, progress, watch, scratch)
                timings += out.timings
                out.timings = timings
                base_ns = con.execute(contract.query("time-base", "base_ns")).fetchall()[0][0]
                window = outputs.read_window(con) if opts.window else None  # (counts slices)
                export_info = read_export_info(con)
                too_new = export_info.pop("_not_in_schema")
                notes.filled_columns = [c for c in notes.filled_columns if c not in too_new]
                step.now = "saving NAME.duckdb"
                _close_database(scratch, opts, ws, out, db_tmp, progress)
            out.summary += _notes_summary(notes)
            try:
                outputs.validate_edited_json(out, files, spec, progress, watch)
            except OSError as exc:
                raise os_failure(exc, ws) from None
            write_manifest = _manifest_writer(opts, ws, out, record)
            published = outputs.publish(out, scratch, ws, write_manifest)
    finally:
        shutil.rmtree(spill, ignore_errors=True)
    checked = out.checked
    return Result(
        source,
        ws,
        nsys_version,
        reused,
        out.summary,
        published,
        [f.relpath for f in files if f.overridden],
        [f.relpath for f in files if f.added],
        timings,
        base_ns,
        checked is not None,
        checked.seconds if checked is not None else 0.0,
        export_info=export_info,
        notes=[*notes_out, *_shadow_notes(files), *out.notes],
        source_sha256=sha256,
        checks=len(checked.checks) if checked else 0,
        file_validated=out.file_validated,
        window=window,
    )


def _shadow_notes(files: list[pipeline.SqlFile]) -> list[str]:
    """One sentence per object a --sql-dir file added beside the packaged
    one re-creates (:func:`pipeline.shadowing`)."""
    return [
        f"--sql-dir {added} creates {name}, which the packaged {packaged} creates too: "
        f"both run; to replace it, put your file at {packaged}"
        for added, name, packaged in pipeline.shadowing(files)
    ]


def _close_database(
    scratch: outputs.Scratch, opts: Options, ws: Workspace, out, db_tmp, progress: Progress
) -> None:
    """Close the run's DuckDB; with ``opts.database`` it is NAME.duckdb
    (the export's tables kept, checkpointed), published with the rest."""
    progress("saving the SQL database" if opts.database else "closing", None)
    with timed(out.timings, "save NAME.duckdb" if opts.database else "close DuckDB"):
        if opts.database:
            database.keep_export_tables(scratch.con)
        scratch.close_connection()  # checkpoints NAME.duckdb (when the run is in it)
        if opts.database:
            out.add(ws.database, db_tmp)


def _manifest_writer(opts: Options, ws: Workspace, out, record: dict):
    """The manifest of the finished conversion, written by
    :func:`outputs.publish` once every file is in place: ``record`` (the
    source and export) and the conversion (when, versions, options as
    :func:`recorded_options` records them, each file's size in bytes)."""
    checked = out.checked

    def write_manifest(published: list[Path]) -> None:
        conversion = {
            "at": manifest.now(),
            "nsys_duck_version": __version__,
            "duckdb_version": duckdb.__version__,
            "options": recorded_options(
                opts,
                validated=checked is not None,
                checks=[c.view for c in checked.checks] if checked else [],
                file_validated=out.file_validated,
            ),
            "files": {str(f.relative_to(ws.dir)): f.stat().st_size for f in published},
        }
        manifest.write(ws.dir, dict(record, conversion=conversion))

    return write_manifest


def read_export_info(con: duckdb.DuckDBPyConnection) -> dict:
    """What made the export, from ``stg_export_info`` (one row): nsys_version,
    schema_version, time_normalized, time_shift_ns (ns), session_start_ns
    (UTC epoch ns), time_offset_ns (ns added to Nsight's times) and
    schema_note (None, or one sentence when the schema is newer than the SQL
    was checked with) and time_note (None, or one sentence when a
    session-relative export has no session start). Key ``_not_in_schema``:
    the (table, column) pairs of
    ``stg_columns_not_in_schema``, too new for this export's schema."""
    cur = con.execute(contract.query("export-info", "*"))
    names = [d[0] for d in cur.description]
    info = dict(zip(names, cur.fetchall()[0], strict=True))
    info["_not_in_schema"] = {
        tuple(r)
        for r in con.execute(
            contract.query("columns-not-in-schema", "table_name, column_name")
        ).fetchall()
    }
    return info


# The summary lines of what registering the export noted (merge repeats
# them per report): their metric starts with one of these.
NOTE_METRICS = ("strings with invalid UTF-8 repaired: ", "export columns missing (read as NULL)")


def _notes_summary(notes: sources.ExportNotes) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for table, column, n in notes.repaired_strings:
        out.append((f"{NOTE_METRICS[0]}{table}.{column}", n))
    if notes.filled_columns:
        out.append(
            (
                NOTE_METRICS[1],
                ", ".join(f"{t}.{c}" for t, c in notes.filled_columns),
            )
        )
    return out
