"""One conversion: report or export folder -> the workspace's output files.

Orchestration only: export with nsys if needed, register the Parquet tables,
run the SQL stages (``pipeline``), write and check the files (``writers``),
publish them atomically and return the summary rows from ``trace_summary``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import duckdb
from filelock import FileLock, Timeout

from . import lanes, nsys as nsys_mod, pipeline, sources, writers
from .errors import InputError, NoEventsError, NsysDuckError
from .workspace import Source, Workspace, classify_input, workspace_for

HOOKS = {"lanes": ("_lane_assignments", lanes.assign_lanes)}


@dataclass
class Options:
    """What the CLI passes to :func:`convert` (defaults = the CLI's defaults)."""

    nsys: str | None = None
    force: bool = False
    sql_dir: Path | None = None
    nvtx_scope: str = "thread"
    memory_limit: str = "2GB"
    threads: int | None = None


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


Progress = Callable[[str, float | None], None]


def _noop(stage: str, fraction: float | None) -> None:
    pass


def ensure_export(source: Source, ws: Workspace, opts: Options,
                  progress: Progress) -> tuple[Path, str | None, bool]:
    """Make sure ``ws.parquet_dir`` holds the export; returns (dir, nsys version, reused)."""
    if source.kind == "export":
        if source.path == ws.parquet_dir.resolve():
            return ws.parquet_dir, None, True
        _link_or_copy_export(source.path, ws)
        return ws.parquet_dir, None, False
    if (not opts.force and sources.is_export_dir(ws.parquet_dir)
            and ws.parquet_dir.stat().st_mtime >= source.path.stat().st_mtime):
        return ws.parquet_dir, None, True
    nsys = nsys_mod.find_nsys(opts.nsys)
    tmp = Path(tempfile.mkdtemp(prefix=".parquet.tmp-", dir=ws.dir))
    log = ws.dir / "nsys-export.log"
    try:
        target = tmp / "parquet"
        nsys_mod.export_parquet(
            nsys, source.path, target, log_path=log,
            tick=lambda s: progress(f"nsys export ({s:.0f} s)", None))
        if ws.parquet_dir.exists():
            shutil.rmtree(ws.parquet_dir)
        os.replace(target, ws.parquet_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return ws.parquet_dir, nsys.version, False


def _link_or_copy_export(src: Path, ws: Workspace) -> None:
    """Mirror an export folder into the workspace (hard links when possible)."""
    tmp = Path(tempfile.mkdtemp(prefix=".parquet.tmp-", dir=ws.dir))
    try:
        for f in sorted(src.glob("*.parquet")):
            try:
                os.link(f, tmp / f.name)
            except OSError:
                shutil.copy2(f, tmp / f.name)
        if ws.parquet_dir.exists():
            shutil.rmtree(ws.parquet_dir)
        os.replace(tmp, ws.parquet_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def open_database(opts: Options, temp_dir: Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB that spills to ``temp_dir`` past ``memory_limit``."""
    con = duckdb.connect(":memory:")
    con.execute(f"SET memory_limit = {sources.sql_string(opts.memory_limit)}")
    con.execute(f"SET temp_directory = {sources.sql_string(str(temp_dir))}")
    con.execute("SET preserve_insertion_order = false")
    if opts.threads:
        con.execute(f"SET threads = {int(opts.threads)}")
    return con


def build(con: duckdb.DuckDBPyConnection, export_dir: Path, opts: Options,
          progress: Progress = _noop) -> tuple[list[pipeline.SqlFile], list[pipeline.StageTiming]]:
    """Register ``export_dir`` and run every SQL stage on ``con``."""
    columns = sources.register_export(con, export_dir)
    files = pipeline.sql_files(opts.sql_dir)
    ctx = pipeline.Context(columns, {"nvtx_scope": opts.nvtx_scope})
    n = len(files)
    done = [0]

    def on_file(rel: str) -> None:
        progress(f"SQL {rel}", done[0] / n)
        done[0] += 1

    timings = pipeline.run_pipeline(con, files, ctx, HOOKS, on_file)
    return files, timings


def convert(path: str | os.PathLike, opts: Options | None = None, *,
            root: Path | None = None, progress: Progress = _noop) -> Result:
    """Convert one report (or export folder) into its workspace.

    Writes ``NAME.perfetto.json.gz``, ``NAME.perfetto.parquet`` and
    ``NAME.kernel_dependencies.parquet`` under temporary names, checks the
    gzip stream and JSON array, then renames them into place.

    Raises:
        NsysDuckError (or a subclass) with a one-line message for every
        expected failure: bad input, nsys missing or failing, SQL errors,
        no events, a second conversion of the same report running.
    """
    opts = opts or Options()
    source = classify_input(path)
    ws = workspace_for(source, root)
    try:
        ws.dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the workspace folder {ws.dir}: "
                         f"{exc.strerror or exc}") from None
    if not os.access(ws.dir, os.W_OK):
        raise InputError(f"the workspace folder {ws.dir} is not writable")
    lock = FileLock(str(ws.lock), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise NsysDuckError(f"another nsys-duck conversion of {ws.name} is running "
                            f"(lock {ws.lock})") from None
    try:
        return _convert_locked(source, ws, opts, progress)
    finally:
        lock.release()


def _convert_locked(source: Source, ws: Workspace, opts: Options,
                    progress: Progress) -> Result:
    progress("export", None)
    export_dir, nsys_version, reused = ensure_export(source, ws, opts, progress)
    spill = Path(tempfile.mkdtemp(prefix=".duckdb-spill-", dir=ws.dir))
    tmp_files: list[Path] = []
    try:
        con = open_database(opts, spill)
        files, timings = build(con, export_dir, opts, progress)
        slices = con.execute("SELECT count(*) FROM int_slices").fetchall()[0][0]
        if slices == 0:
            raise NoEventsError(
                f"{source.path.name}: no table of the export yields a trace event "
                "(no kernels, memcpy, memset, CUDA API or NVTX ranges)")
        finals = [ws.json_gz, ws.events_parquet, ws.kernel_dependencies]
        tmps = [writers.temp_path(f) for f in finals]
        tmp_files.extend(tmps)
        t0 = time.perf_counter()
        progress("writing JSON", None)
        stats = writers.write_trace_json(con, tmps[0])
        writers.check_gzip_json(tmps[0])
        progress("writing Parquet", None)
        rows = writers.write_parquet(con, "SELECT * FROM trace_slices", tmps[1])
        writers.write_kernel_dependencies(tmps[2])
        timings.append(pipeline.StageTiming("write outputs", time.perf_counter() - t0))
        summary = [(m, v) for _, m, v in con.execute(
            "SELECT * FROM trace_summary").fetchall()]
        base_ns = con.execute("SELECT base_ns FROM trace_base").fetchall()[0][0]
        con.close()
        summary += [("JSON events", stats.events), ("Parquet rows", rows)]
        writers.publish(list(zip(tmps, finals)))
        tmp_files.clear()
        return Result(source, ws, nsys_version, reused, summary, finals,
                      [f.relpath for f in files if f.overridden],
                      [f.relpath for f in files if f.added], timings, base_ns)
    finally:
        writers.discard(tmp_files)
        shutil.rmtree(spill, ignore_errors=True)
