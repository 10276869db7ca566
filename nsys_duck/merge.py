"""Many reports, one timeline: ``nsys-duck merge NAME PATH...``.

Orchestration only. Each report is converted into its own workspace as
``convert`` does (reused when that conversion is up to date); the relations
the trace stages read are copied out of each report's ``NAME.duckdb`` into a
hive-partitioned Parquet dataset, ``$NSYS_WORKSPACE_ROOT/MERGED/reports/
report=NAME/RELATION.parquet``; then the merge's SQL
(``sql/merge/10_inputs``: the reports, their time shift and id offsets, the
relations renumbered into one id space) feeds the same ``40_trace`` stages
and contract checks a conversion runs, and the same writers write
``MERGED.perfetto.json.gz`` (or its parts), ``MERGED.perfetto.parquet``
(``merged_slices``: the aligned slices with a ``report`` column) and
``MERGED.duckdb``. The semantics (labels, order, alignment, renumbering)
are in the SQL files' headers.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from . import __version__, catalog, contract, manifest, outputs, pipeline
from .convert import NOTE_METRICS, Options, make_workspace_dir, open_database, up_to_date
from .errors import InputError, NsysDuckError
from .failures import Step, named_failures, one_line
from .runs import InterruptWatch, locked_run
from .sources import is_export_dir, sql_string
from .workspace import (
    MERGE_RANKS_DIR,
    MERGE_REPORTS_DIR,
    REPORT_SUFFIXES,
    SQLITE_SUFFIX,
    Workspace,
    check_folder,
    check_name,
    classify_input,
    workspace_root,
)

# What a merge runs and reads is the SQL's (contract.merge_composition):
# the folders of the "-- Merge runs:" tag of sql/merge/10_inputs/
# 10_merge_reports.sql, less the files tagged "-- Merge: not run"; the
# relations copied out of each report's NAME.duckdb, those of the files
# tagged "-- Merge: renumbered" (renumbered by
# sql/merge/10_inputs/20_merge_relations.sql) or "-- Merge: copied".

REPORTS_DIR = MERGE_REPORTS_DIR  # the hive-partitioned dataset in the merged workspace
RANKS_DIR = MERGE_RANKS_DIR  # the reports' own workspaces, when the merge converts them
ALIGNS = ("utc", "start")


@dataclass
class MergeOptions:
    """What ``nsys-duck merge`` passes to :func:`merge`.

    ``convert``: the options of each report's own conversion (``--nsys``,
    ``--nvtx-scope``, ``--memory-limit``; ``memory_limit``, ``validate`` and
    ``sql_dir`` also apply to the merge itself). ``max_json_bytes``: the
    merged trace's ``--max-json-size`` (bytes of uncompressed JSON);
    ``window``/``devices``: ``--window``/``--devices`` of the merged trace
    (the JSON holds the slices starting in the window, seconds after its
    first event, and the homes of those device ids in every report with the
    host processes that ran GPU work on them; the Parquet and database stay
    whole).
    ``align``: ``utc`` (Nsight's UTC-epoch times, as ``nsys recipe``
    aligns reports) or ``start`` (each report's first event at the first
    report's). ``jobs``/``scheduler``: convert the reports as Dask tasks
    (:mod:`nsys_duck.parallel`).
    """

    convert: Options = field(default_factory=Options)
    align: str = "utc"
    # --max-json-size of the merged trace (each report's own conversion
    # keeps convert.max_json_bytes)
    max_json_bytes: int = int(pipeline.DEFAULT_OPTIONS["max_json_bytes"])
    # --window START:END (s after the merged trace's first event) and --devices
    # (device ids, in every report) select what the merged JSON holds
    window: tuple[float | None, float | None] | None = None
    devices: tuple[int, ...] = ()
    jobs: int = 1
    scheduler: str | None = None
    force: bool = False  # convert every report again, even when up to date
    # --format of the merged trace: perfetto, kineto (MERGED.kineto/, one
    # file per rank: sql/60_kineto) or both; each report's own conversion
    # keeps convert.trace_format
    trace_format: str = "perfetto"


@dataclass
class ReportRow:
    """One merged report (``merge_reports``): name, label, ordinal, its shift
    and first event (ns), its slices, its rank and how it was decided (from
    env VAR, from file name 'NAME', or order), the first CUDA/NVTX event
    ``--align start`` lines up, and how its conversion went."""

    report: str
    label: str
    ordinal: int
    shift_ns: int
    first_ns: int | None
    slices: int
    rank_no: int | None = None
    rank_source: str = "order"
    align_ns: int | None = None
    status: str = ""  # 'converted' or 'up to date'
    workspace: Path | None = None  # the report's own workspace folder
    notes: list[str] = field(default_factory=list)  # its conversion's export notes


@dataclass
class MergeResult:
    """What a merge produced: ``summary`` is (metric, value) in print order,
    ``failed`` the (path, one-line reason) of reports left out."""

    workspace: Workspace
    reports: list[ReportRow]
    failed: list[tuple[str, str]]
    summary: list[tuple[str, object]]
    files: list[Path]
    base_ns: int
    align: str
    validated: bool
    checks: int
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)  # inputs left out, and why
    window: dict | None = None  # convert.read_window(): what --window selected
    first_ns: int | None = None  # trace_base.first_ns: the merged trace's first event
    validate_seconds: float = 0.0  # checks (+ file validator when it ran), seconds
    file_validated: bool = False  # the JSON was also re-read by validate_trace


Progress = Callable[[str, float | None], None]


def _noop(stage: str, fraction: float | None) -> None:
    pass


def expand_inputs(paths: list[str]) -> tuple[list[str], list[str]]:
    """The reports of ``paths``, and notes on what was left out.

    A path is a report as it is, except a folder that is no export: a
    folder holding ``parquet/`` stands for that export; any other folder
    for every report, SQLite export and export folder below it (sub-folders
    too, sorted by path; hidden ones skipped). A report given twice (the
    same file) is taken once; a ``.nsys-rep``/``.qdrep`` with its SQLite
    export beside it (``X.sqlite``, what ``nsys profile --stats`` leaves)
    is the same capture: the SQLite export is taken (it needs no nsys).

    Returns:
        (inputs, notes): paths in order; one sentence per path left out.

    Raises:
        InputError: a folder with no report in it.
    """
    out: list[str] = []
    notes: list[str] = []
    seen: dict[str, str] = {}
    for path in paths:
        p = Path(path).expanduser()
        if not p.is_dir() or is_export_dir(p):
            found = [path]
        elif is_export_dir(p / "parquet"):
            found = [str(p / "parquet")]
        else:
            found = [str(f) for f in _reports_under(p, notes)]
            if not found:
                raise InputError(
                    f"{path}: no report in this folder (.nsys-rep, .qdrep, .sqlite or "
                    "Parquet export folders)"
                )
        for f in found:
            real = os.path.realpath(f)
            if real in seen:
                notes.append(f"{f} is given twice (as {seen[real]}): merged once")
                continue
            seen[real] = f
            out.append(f)
    return out, notes


def _reports_under(folder: Path, notes: list[str]) -> list[Path]:
    """Reports, SQLite exports and export folders below ``folder`` (see
    :func:`expand_inputs`), in path order."""
    found: list[Path] = []
    children = sorted(c for c in folder.iterdir() if not c.name.startswith("."))
    sqlite_stems = {
        c.name[: -len(SQLITE_SUFFIX)] for c in children if c.name.endswith(SQLITE_SUFFIX)
    }
    for child in children:
        if child.is_file() and child.name.endswith(REPORT_SUFFIXES):
            stem = child.name.rsplit(".", 1)[0]
            if stem in sqlite_stems:
                notes.append(f"{child} left out: its SQLite export {stem}.sqlite is merged")
                continue
            found.append(child)
        elif (child.is_file() and child.name.endswith(SQLITE_SUFFIX)) or (
            child.is_dir() and is_export_dir(child)
        ):
            found.append(child)
        elif child.is_dir() and is_export_dir(child / "parquet"):
            found.append(child / "parquet")
        elif child.is_dir():
            found.extend(_reports_under(child, notes))
    return found


def report_names(inputs: list[str]) -> list[str]:
    """One distinct name per input, the ``report`` of the merge: the
    workspace NAME ``convert`` gives it; where inputs share a NAME, each
    of them is prefixed with as many of its folders as make them differ
    (``node0/report_0``, ``node1/report_0``; for an export folder the
    folders above ``NAME/parquet``), ``#2``, ``#3``... past the root. An
    input that is no report keeps its file name (its conversion fails and
    says why)."""
    names: list[str] = []
    folders: list[list[str]] = []
    for path in inputs:
        try:
            name = classify_input(path).name
        except InputError:
            name = Path(path).name
        p = Path(path).resolve()
        above = p.parent.parent if p.name == "parquet" else p.parent
        names.append(name)
        folders.append([f for f in above.parts if f not in ("/", "")])
    out = list(names)
    groups: dict[str, list[int]] = {}
    for k, name in enumerate(names):
        groups.setdefault(name, []).append(k)
    for name, members in groups.items():
        if len(members) == 1:
            continue
        deepest = max(len(folders[k]) for k in members)
        for depth in range(1, deepest + 1):
            tried = {k: "/".join([*folders[k][-depth:], name]) for k in members}
            if len(set(tried.values())) == len(members):
                break
        seen: dict[str, int] = {}
        for k in members:
            seen[tried[k]] = seen.get(tried[k], 0) + 1
            out[k] = tried[k] if seen[tried[k]] == 1 else f"{tried[k]}#{seen[tried[k]]}"
    return out


def partition_dir(report: str) -> str:
    """The hive partition folder of a report, ``report=VALUE``: the name
    percent-encoded (every character but letters, digits, ``.``, ``_``,
    ``-``; DuckDB decodes it back when reading the dataset)."""
    return "report=" + urllib.parse.quote(report, safe="")


def copy_report_relations(report_db: Path, dest: Path) -> None:
    """Copy the relations a merge reads (``contract.merge_composition()``)
    of one report's ``NAME.duckdb`` into ``dest``
    (``RELATION.parquet`` each, zstd).

    Raises:
        NsysDuckError: the database lacks one (made by an older nsys-duck:
            convert the report again) or cannot be read.
    """
    dest.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(":memory:")
    try:
        try:
            con.execute(f"ATTACH {sql_string(str(report_db))} AS report (READ_ONLY)")
        except duckdb.Error as exc:
            raise NsysDuckError(f"cannot open {report_db}: {one_line(exc)}") from None
        present = {
            r[0]
            for r in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = 'report' "
                "UNION ALL SELECT view_name FROM duckdb_views() WHERE database_name = 'report'"
            ).fetchall()
        }
        relations = contract.merge_composition().relations
        missing = [r for r in relations if r not in present]
        if missing:
            raise NsysDuckError(
                f"{report_db.name} has no {', '.join(missing)} (made by an older "
                "nsys-duck); convert the report again (--force)"
            )
        for relation in relations:
            target = sql_string(str(dest / f"{relation}.parquet"))
            con.execute(
                f"COPY (SELECT * FROM report.{relation}) TO {target} "
                "(FORMAT parquet, COMPRESSION zstd)"
            )
    finally:
        con.close()


def merge_files(sql_dir: Path | None = None) -> list[pipeline.SqlFile]:
    """The SQL files a merge runs, in run order: those of the folders its
    packaged SQL names (``contract.merge_composition()``), less the files
    it leaves out."""
    plan = contract.merge_composition()
    out: list[pipeline.SqlFile] = []
    for folder in plan.folders:
        top = folder.split("/", 1)[0]
        out += [
            f
            for f in pipeline.sql_files(sql_dir, folders=(top,))
            if f.relpath.startswith(folder + "/") and f.relpath not in plan.not_run
        ]
    return out


def _check_no_report_named(name: str, inputs: list[str]) -> None:
    """InputError when a report of ``inputs`` has the merge's NAME (their
    workspaces would be one folder)."""
    for path in inputs:
        try:
            same = classify_input(path).name == name
        except InputError:
            continue  # its conversion fails and says why
        if same:
            raise InputError(
                f"the merge's name {name} is also the name of its report {path}; "
                "choose another NAME"
            )


def _report_dirs(ws: Workspace, inputs, names, convert_opts, root: Path) -> list[Path | None]:
    """Where each report is converted: its own workspace (None: root/NAME)
    when that holds this conversion already, else a folder of the merge's
    own (two jobs' report_0 never share one)."""
    return [
        None
        if not convert_opts.force and up_to_date(path, convert_opts, root) is not None
        else ws.dir / RANKS_DIR / urllib.parse.quote(report, safe="")
        for path, report in zip(inputs, names, strict=True)
    ]


def merge(
    name: str,
    paths: list[str],
    opts: MergeOptions | None = None,
    *,
    root: Path | None = None,
    progress: Progress = _noop,
    on_report: Callable[[object], None] | None = None,
) -> MergeResult:
    """Convert (or reuse) every report of ``paths`` and merge them into the
    workspace ``root/name`` (root: ``$NSYS_WORKSPACE_ROOT``).

    Reports whose conversion fails are left out and listed in
    ``MergeResult.failed``; the others are merged.

    Raises:
        InputError: a bad NAME, or no report converted.
        NsysDuckError: the merge's SQL, checks or writing failed (one
            sentence); nothing is published then.
        KeyboardInterrupt: Ctrl-C (temporaries removed).
    """
    from .parallel import convert_many

    opts = opts or MergeOptions()
    if opts.align not in ALIGNS:
        raise InputError(f"--align {opts.align}: use one of {', '.join(ALIGNS)}")
    root = root or workspace_root()
    ws = Workspace(check_folder(root, "workspace root") / check_name(name), name)
    inputs, notes = expand_inputs(list(paths))
    _check_no_report_named(name, inputs)
    _check_not_a_conversion(ws, opts.force)
    names = report_names(inputs)
    # the merge reads each report's NAME.duckdb
    convert_opts = dataclasses.replace(opts.convert, database=True, force=opts.force)
    outcomes = convert_many(
        inputs,
        convert_opts,
        jobs=opts.jobs,
        scheduler=opts.scheduler,
        root=root,
        skip_up_to_date=not opts.force,
        on_update=on_report,
        output_dirs=_report_dirs(ws, inputs, names, convert_opts, root),
    )
    failed = [(o.path, o.message) for o in outcomes if o.status == "failed"]
    if len(failed) == len(outcomes):
        path, message = failed[0]
        raise InputError(
            f"no report could be converted, nothing to merge ({len(failed)} failed; "
            f"first: {path}: {message})"
        )
    done = {report: o for report, o in zip(names, outcomes, strict=True) if o.status != "failed"}
    result = merge_workspaces(
        ws,
        {report: Workspace(Path(o.workspace), o.name) for report, o in done.items()},
        opts,
        progress,
    )
    for row in result.reports:
        row.status = done[row.report].status
        row.workspace = Path(done[row.report].workspace)
        row.notes = [
            f"{m}: {v}" for m, v in done[row.report].summary if str(m).startswith(NOTE_METRICS)
        ]
    result.failed = failed
    result.notes = [*notes, *result.notes]  # inputs left out, then the trace's
    return result


def _check_not_a_conversion(ws: Workspace, force: bool) -> None:
    """Refuse to merge into the workspace of a conversion (``convert`` made
    it: its manifest names a source) unless ``force``, which removes that
    conversion's export first."""
    recorded = manifest.read(ws.dir) or {}
    source = recorded.get("source")
    if not isinstance(source, dict):
        return
    if not force:
        raise InputError(
            f"the workspace {ws.dir} holds the conversion of {source.get('path')}; "
            "choose another NAME for the merge, or replace that conversion with --force"
        )
    shutil.rmtree(ws.parquet_dir, ignore_errors=True)


def merge_workspaces(
    ws: Workspace,
    reports: dict[str, Workspace],
    opts: MergeOptions,
    progress: Progress = _noop,
) -> MergeResult:
    """Merge converted report workspaces (partition name -> workspace, each
    with its ``NAME.duckdb``) into ``ws``.

    Everything is built under temporary names and published at the end
    (``reports/``, the trace, Parquet and database, ``nsys-duck.json``).

    Raises:
        NsysDuckError: as :func:`merge`.
    """
    t_start = time.perf_counter()
    make_workspace_dir(ws)
    with locked_run(ws, f"run on {ws.name} is going on") as watch:
        for stale in ws.dir.glob(".merge.tmp-*"):  # of a merge that was killed (we hold the lock)
            shutil.rmtree(stale, ignore_errors=True)
        tmp_dir = Path(tempfile.mkdtemp(prefix=".merge.tmp-", dir=ws.dir))
        try:
            dataset = tmp_dir / REPORTS_DIR
            for i, (key, rws) in enumerate(sorted(reports.items())):
                progress(f"reading {key}", i / max(1, len(reports)))
                if not rws.database.is_file():
                    raise NsysDuckError(f"{rws.dir} has no {rws.database.name}; convert it again")
                copy_report_relations(rws.database, dataset / partition_dir(key))
            first_db = reports[min(reports)].database
            sources = {key: report_source(rws) for key, rws in reports.items()}
            result = _run_merge(ws, dataset, tmp_dir, opts, progress, watch, first_db, sources)
        finally:
            shutil.rmtree(tmp_dir, ignore_errors=True)
    result.seconds = time.perf_counter() - t_start
    return result


def _merge_context(opts: MergeOptions, dataset: Path) -> pipeline.Context:
    """The template variables of the merge's SQL: a conversion's, and the
    dataset, the alignment and each renumbered relation's columns."""
    columns = _relation_columns(dataset)
    window = opts.window or (None, None)
    return pipeline.Context(
        {},
        {
            **opts.convert.template_options(),
            "max_json_bytes": int(opts.max_json_bytes),
            "window_start_s": window[0],
            "window_end_s": window[1],
            "devices": [int(d) for d in opts.devices],
            "merge_reports_dir": str(dataset),
            "merge_align": opts.align,
            "merge_relations": {r: columns[r] for r in contract.merge_composition().renumbered},
        },
    )


def _build_merge(
    con: duckdb.DuckDBPyConnection,
    ws: Workspace,
    dataset: Path,
    opts: MergeOptions,
    progress: Progress,
    first_db: Path,
) -> list[pipeline.SqlFile]:
    """The merge's relations: its SQL (sql/merge and the trace stages) run
    on the reports' dataset; returns the files run."""
    files = merge_files(opts.convert.sql_dir)
    ctx = _merge_context(opts, dataset)
    n = len(files)
    done = [0]

    def on_file(rel: str) -> None:
        progress(f"SQL {rel}", done[0] / n)
        done[0] += 1

    try:
        pipeline.run_pipeline(con, files, ctx, None, on_file)
    except InputError as exc:  # a stage's refusal (10_trace_base: too long a span)
        if opts.align == "utc":
            raise InputError(
                f"{exc}; if the reports' clocks do not agree, merge with --align start "
                "(each report's first event lined up)"
            ) from None
        raise
    contract.check_outputs(con, files)
    _copy_comments(con, first_db)
    # what ran, as it reads once published (reports/ in the workspace)
    final = dict(ctx.options, merge_reports_dir=str(ws.dir / REPORTS_DIR))
    catalog.save(con, files, pipeline.Context({}, final))
    return files


def _run_merge(
    ws: Workspace,
    dataset: Path,
    tmp_dir: Path,
    opts: MergeOptions,
    progress: Progress,
    watch: InterruptWatch,
    first_db: Path,
    sources: dict[str, dict | None],
) -> MergeResult:
    """The SQL, checks, writers and publication of :func:`merge_workspaces`
    (``sources``: :func:`report_source` of each report, for the manifest)."""
    copt = opts.convert
    spill = tmp_dir / "spill"
    spill.mkdir()
    db_tmp = tmp_dir / ws.database.name
    spec = outputs.OutputSpec(
        ws,
        opts.trace_format,
        copt.validate,
        lambda con: "the reports hold no slice to merge",
        copt.memory_limit,
        spill,
    )
    step = Step("the merge's SQL stages")
    with outputs.Scratch() as scratch:
        con = scratch.con = open_database(copt, spill, db_tmp)
        with named_failures(step, ws, copt.memory_limit, command="merge"):
            files = _build_merge(con, ws, dataset, opts, progress, first_db)
            out = outputs.write_outputs(con, files, spec, step, progress, watch, scratch)
            base_ns, first_ns = con.execute(
                contract.query("time-base", "base_ns, first_ns")
            ).fetchone()
            window = outputs.read_window(con) if opts.window else None  # (it counts slices)
            reports = [
                ReportRow(*r)
                for r in con.execute(
                    contract.query(
                        "merge-reports",
                        "report, label, ordinal, shift_ns, first_ns, slices, rank_no, "
                        "rank_source, align_ns",
                    )
                ).fetchall()
            ]
            scratch.close_connection()
            out.add(ws.database, db_tmp)
            outputs.validate_edited_json(out, files, spec, progress, watch)

        def move_dataset() -> None:
            old = ws.dir / REPORTS_DIR
            if old.exists():
                os.replace(old, tmp_dir / "old-reports")  # removed with tmp_dir
            os.replace(dataset, old)

        published = outputs.publish(
            out,
            scratch,
            ws,
            lambda files: _write_manifest(ws, opts, reports, files, sources),
            before=move_dataset,
        )
    checked = out.checked
    return MergeResult(
        ws,
        reports,
        [],
        out.summary,
        published,
        base_ns,
        opts.align,
        checked is not None,
        len(checked.checks) if checked else 0,
        notes=out.notes,
        window=window,
        first_ns=first_ns,
        validate_seconds=checked.seconds if checked else 0.0,
        file_validated=out.file_validated,
    )


def report_source(rws: Workspace) -> dict | None:
    """What a report's own manifest says it was converted from and how: its
    ``source`` (path, kind, SHA-256) and the ``options`` of its conversion;
    None when it has no manifest. ``nsys-duck report`` finds a merged
    report's own database by it (``nsys_duck/report.py``)."""
    recorded = manifest.read(rws.dir) or {}
    source = recorded.get("source")
    if not isinstance(source, dict):
        return None
    conversion = recorded.get("conversion") or {}
    return {
        "path": source.get("path"),
        "kind": source.get("kind"),
        "sha256": source.get("sha256"),
        "options": conversion.get("options"),
    }


def _write_manifest(
    ws: Workspace,
    opts: MergeOptions,
    reports: list,
    finals: list[Path],
    sources: dict[str, dict | None],
) -> None:
    """The merged workspace's ``nsys-duck.json``: no source (it is made of
    many), what was merged and how: per report its label, shift, rank and
    how it was decided, and the source and options of its conversion
    (:func:`report_source`)."""
    manifest.write(
        ws.dir,
        {
            "format": manifest.FORMAT,
            "name": ws.name,
            "source": None,
            "export": None,
            "merge": {
                "at": manifest.now(),
                "nsys_duck_version": __version__,
                "align": opts.align,
                "reports": [
                    {
                        "report": r.report,
                        "label": r.label,
                        "shift_ns": r.shift_ns,
                        "rank": r.rank_no,
                        "rank_source": r.rank_source,
                        "source": sources.get(r.report),
                    }
                    for r in reports
                ],
                "files": {str(f.relative_to(ws.dir)): f.stat().st_size for f in finals},
            },
            "conversion": None,
            "nsys_duck_version": __version__,
        },
    )


def _copy_comments(con: duckdb.DuckDBPyConnection, report_db: Path) -> None:
    """Give the renumbered relations (``contract.merge_composition()``) the
    table and column comments of a report's own (the stage files' COMMENT
    ON), so the merged database documents them as a conversion's does; the
    merge's own comments (``report``) stay."""
    con.execute(f"ATTACH {sql_string(str(report_db))} AS comments_of (READ_ONLY)")
    try:
        names = ", ".join(sql_string(r) for r in contract.merge_composition().renumbered)
        tables = con.execute(
            "SELECT table_name, comment FROM duckdb_tables() WHERE database_name = 'comments_of' "
            f"AND table_name IN ({names}) AND comment IS NOT NULL "
            "UNION ALL SELECT view_name, comment FROM duckdb_views() "
            f"WHERE database_name = 'comments_of' AND view_name IN ({names}) "
            "AND comment IS NOT NULL"
        ).fetchall()
        columns = con.execute(
            "SELECT table_name, column_name, comment FROM duckdb_columns() "
            f"WHERE database_name = 'comments_of' AND table_name IN ({names}) "
            "AND comment IS NOT NULL AND column_name <> 'report'"
        ).fetchall()
        statements = [
            f"COMMENT ON TABLE {t} IS {sql_string(c + ' (merge: every report, ids renumbered)')}"
            for t, c in tables
        ]
        statements += [f'COMMENT ON COLUMN {t}."{col}" IS {sql_string(c)}' for t, col, c in columns]
        pipeline.run_comments(con, statements)
    finally:
        con.execute("DETACH comments_of")


def _relation_columns(dataset: Path) -> dict[str, list[str]]:
    """Columns of each relation in the dataset (from one report's file;
    every report was converted by this nsys-duck's SQL, so they agree)."""
    first = sorted(dataset.iterdir())[0]
    con = duckdb.connect(":memory:")
    try:
        return {
            r: [
                row[0]
                for row in con.execute(
                    f"DESCRIBE SELECT * FROM read_parquet("
                    f"{sql_string(str(first / (r + '.parquet')))}, hive_partitioning = false)"
                ).fetchall()
            ]
            for r in contract.merge_composition().relations
        }
    finally:
        con.close()
