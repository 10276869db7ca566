"""What Python knows of the SQL, read from the SQL files' headers.

A file that creates a view Python reads says so in its header comment, one
tag a line (docs/sql.md, "Header tags"):

``-- Role: ROLE (remark), ...``
    what the view is to Python: ``json-trace`` (the view the JSON writer
    streams), ``writer-input`` (that view, or a view it is made of),
    ``check-input`` (the checks' description of the same events),
    ``kineto-events`` and ``kineto-headers`` (what the Kineto writer
    streams), ``pftrace-tracks``, ``pftrace-events`` and ``pftrace-chunks``
    (the protobuf trace's TrackDescriptors, TrackEvents and the ranges they
    are read in, :mod:`pftrace`), ``parquet``
    (NAME.perfetto.parquet's rows), ``lanes-input`` (the rows the lanes
    hook places, nsys_duck/lanes.py), ``summary`` and ``split-summary``
    (the (metric, value) rows printed after a run, in that order:
    :func:`summary_queries`); and the views the orchestration reads
    (:func:`query`): ``slices`` (a run without any stops), ``time-base``,
    ``json-parts``, ``json-size-grid`` and ``json-sizes`` (the grid the JSON
    writer measures its bytes in, and the table it puts them in),
    ``json-bucket-parts`` (the part of each bucket, by which the writer
    routes the rows it kept), ``kineto-ranks``, ``notes``, ``window``,
    ``export-info``, ``columns-not-in-schema``, ``skipped-rows`` and
    ``merge-reports``.
``-- Columns: NAME TYPE, ...``
    the columns and DuckDB types the file promises (the writers' and the
    Parquet readers' view of it); the list goes on over the next comment
    lines while it ends with a comma. :func:`check_outputs` fails a
    run whose view lacks one or has another type.
``-- Python reads: CLAUSES``
    one query of the writer, ``SELECT ... FROM VIEW CLAUSES``; the writer
    runs them in the order of the lines and writes rows as they come.
``-- Merge: renumbered | copied | not run, ...``
    what ``nsys-duck merge`` does with the file (:func:`merge_composition`):
    ``renumbered``, its relation is copied out of each report's database
    and renumbered into one id space (sql/merge/10_inputs/
    20_merge_relations.sql); ``copied``, copied for the merge's SQL to read
    as Parquet; ``not run``, a merge leaves the file out of the folders it
    runs.
``-- Merge runs: FOLDER, ...``
    the folders a merge runs, in run order (sql/merge/10_inputs/
    10_merge_reports.sql; continued over the next lines while it ends with
    a comma).

The patterns are in :mod:`headers` (with the tags that change how a file
runs, ``hook:`` and ``Column comments from:``, which ``pipeline`` reads).
The contract is the packaged files': a ``--sql-dir`` file changes what a
view computes, not its role, its columns or how it is read (its own tags
count only when it has no packaged twin).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from . import headers
from .errors import SqlStageError
from .pipeline import SqlFile, created_objects, packaged_sql_dir, run_order

_LISTS = ("columns", "merge runs")  # tags whose list goes on while a line ends with ','
MERGE_TAGS = ("renumbered", "copied", "not run")
_COLUMN = re.compile(r"^(\w+)\s+(\S.*)$")


@dataclass
class Declaration:
    """The tags of one file's header, for the view it creates."""

    relpath: str
    view: str
    roles: tuple[str, ...] = ()
    columns: dict[str, str] = field(default_factory=dict)
    reads: tuple[str, ...] = ()
    merge: tuple[str, ...] = ()  # -- Merge: renumbered, copied, not run
    merge_runs: tuple[str, ...] = ()  # -- Merge runs: FOLDER, ...


@dataclass(frozen=True)
class MergeComposition:
    """What ``nsys-duck merge`` runs and reads, from the packaged SQL's
    ``-- Merge`` tags: ``folders`` (run order), the relations ``renumbered``
    and ``copied`` (run order of the files creating them) and the files
    ``not_run``."""

    folders: tuple[str, ...]
    renumbered: tuple[str, ...]
    copied: tuple[str, ...]
    not_run: tuple[str, ...]

    @property
    def relations(self) -> tuple[str, ...]:
        """Every relation copied out of each report's database."""
        return (*self.renumbered, *self.copied)


def header(text: str) -> list[str]:
    """The comment lines a file starts with (up to its first SQL line)."""
    lines = []
    for line in text.splitlines():
        if line.startswith("--"):
            lines.append(line)
        elif line.strip():
            break
    return lines


def declaration(sql_file: SqlFile) -> Declaration | None:
    """The header tags of ``sql_file``; None when it has none or creates no view/table."""
    created = [name for kind, name in created_objects(sql_file.text) if kind != "macro"]
    values = _tag_values(header(sql_file.text))
    column_text = ", ".join(v for v in values.get("columns", []) if v)
    found = Declaration(
        sql_file.relpath,
        created[0].strip('"') if created else "",
        tuple(r.split()[0] for r in _items(values.get("role", []))),
        _columns(sql_file.relpath, column_text) if column_text else {},
        tuple(values.get("python reads", [])),
        tuple(" ".join(t.split()) for t in _items(values.get("merge", []))),
        tuple(_items(values.get("merge runs", []))),
    )
    if not (found.roles or found.columns or found.reads or found.merge or found.merge_runs):
        return None
    if not created:
        raise SqlStageError(f"{sql_file.relpath}: header tags but no view or table created")
    _check_merge_tags(found)
    return found


def _tag_values(lines: list[str]) -> dict[str, list[str]]:
    """Each tag's values (lower-case tag -> one value per line it starts); a
    list tag (Columns, Merge runs) goes on over the next comment lines while
    it ends with a comma."""
    out: dict[str, list[str]] = {}
    going_on: list[str] | None = None  # the values of a list still going on
    for line in lines:
        m = headers.CONTRACT_TAG.match(line)
        if going_on is not None and not m:
            going_on[-1] += " " + line.lstrip("-").strip()
        elif m:
            key = m.group(1).lower()
            out.setdefault(key, []).append(m.group(2))
            going_on = out[key] if key in _LISTS else None
        if going_on is not None and not going_on[-1].endswith(","):
            going_on = None
    return out


def _items(values: list[str]) -> list[str]:
    """The comma-separated items of a tag's values, (remarks) left out: they are for people."""
    bare = (re.sub(r"\([^)]*\)", "", v) for v in values)
    return [item.strip() for v in bare for item in v.split(",") if item.strip()]


def _check_merge_tags(found: Declaration) -> None:
    unknown = [t for t in found.merge if t not in MERGE_TAGS]
    if unknown or {"renumbered", "copied"} <= set(found.merge):
        raise SqlStageError(
            f"{found.relpath}: Merge tag {', '.join(found.merge)!r}: one of "
            f"{', '.join(MERGE_TAGS)} (not run may join copied)"
        )


def _columns(relpath: str, text: str) -> dict[str, str]:
    out = {}
    for item in text.split(","):
        m = _COLUMN.match(item.strip())
        if not m:
            raise SqlStageError(f"{relpath}: Columns tag: {item.strip()!r} is not 'NAME TYPE'")
        out[m.group(1)] = m.group(2).upper()
    return out


@functools.cache
def _packaged(root: Path) -> dict[str, Declaration]:
    out = {}
    for path in sorted(root.rglob("*.sql")):
        rel = path.relative_to(root).as_posix()
        found = declaration(SqlFile(rel, path))
        if found is not None:
            out[rel] = found
    return out


def packaged() -> dict[str, Declaration]:
    """The declarations of every packaged SQL file, by relative path."""
    return _packaged(packaged_sql_dir())


def merge_composition() -> MergeComposition:
    """What a merge runs and reads, from the packaged files' ``-- Merge``
    and ``-- Merge runs`` tags (``--sql-dir`` files change none of it).

    Raises:
        SqlStageError: no packaged file, or several, says ``Merge runs``.
    """
    return _composition(packaged_sql_dir())


@functools.cache
def _composition(root: Path) -> MergeComposition:
    found = sorted(_packaged(root).values(), key=lambda d: run_order(d.relpath))
    runs = [d for d in found if d.merge_runs]
    if len(runs) != 1:
        where = ", ".join(d.relpath for d in runs) or "no file"
        raise SqlStageError(f"the SQL declares 'Merge runs' in {where}, not in one file")
    return MergeComposition(
        runs[0].merge_runs,
        tuple(d.view for d in found if "renumbered" in d.merge),
        tuple(d.view for d in found if "copied" in d.merge),
        tuple(d.relpath for d in found if "not run" in d.merge),
    )


def declarations(files: list[SqlFile]) -> list[Declaration]:
    """The declarations that hold for the files of a run, in run order: a
    packaged file's own, an overriding file's packaged twin's, an added
    file's own tags."""
    known = packaged()
    out = []
    for f in files:
        found = known.get(f.relpath) if not f.added else declaration(f)
        if found is not None:
            out.append(found)
    return out


def views_with_role(*roles: str) -> set[str]:
    """The views of the packaged SQL with any of ``roles``."""
    return {d.view for d in packaged().values() if set(d.roles) & set(roles)}


def view_with_role(role: str, files: list[SqlFile] | None = None) -> Declaration:
    """The view with ``role`` (e.g. ``json-trace``): of the ``files`` of a
    run, the last in run order that declares it (a merge's ``merged_slices``
    after ``trace_slices``); without files, the one packaged file that does.

    Raises:
        SqlStageError: no file declares it (or, without files, several do).
    """
    pool = declarations(files) if files is not None else packaged().values()
    found = [d for d in pool if role in d.roles]
    if not found or (files is None and len(found) > 1):
        where = ", ".join(d.relpath for d in found) or "no file"
        raise SqlStageError(f"the SQL declares role {role!r} in {where}, not in one file")
    return found[-1]


def writer_queries(role: str, select: str, files: list[SqlFile] | None = None) -> list[str]:
    """The queries a writer runs: ``SELECT select FROM VIEW CLAUSES``, one
    per ``Python reads:`` line of the view with ``role``
    (:func:`view_with_role`; one query without clauses when it has none)."""
    d = view_with_role(role, files)
    return [
        f"SELECT {select} FROM {d.view}" + (f" {tail}" if tail else "") for tail in d.reads or ("",)
    ]


def query(role: str, select: str, files: list[SqlFile] | None = None) -> str:
    """The one query Python runs on the view with ``role``:
    ``SELECT select FROM VIEW CLAUSES`` (:func:`writer_queries`; e.g.
    ``query("notes", "note")``).

    Raises:
        SqlStageError: no file declares ``role`` (without ``files``: not
            exactly one packaged file does), or its view has several
            ``Python reads:`` lines.
    """
    found = writer_queries(role, select, files)
    if len(found) != 1:
        raise SqlStageError(f"role {role!r}: {len(found)} queries where Python reads one")
    return found[0]


def parquet_query(files: list[SqlFile]) -> str:
    """The query of NAME.perfetto.parquet's rows: every column of the run's
    view with role ``parquet`` (a merge's ``merged_slices``, else
    ``trace_slices``), in its declared order."""
    return query("parquet", "*", files)


def summary_queries(files: list[SqlFile]) -> list[str]:
    """The queries of the summary rows (metric, value) a run prints: the
    view with role ``summary`` (a merge's own ``trace_summary``), then the
    one with role ``split-summary``, each read as its ``Python reads:``
    lines say."""
    return [
        query
        for role in ("summary", "split-summary")
        for query in writer_queries(role, "metric, value", files)
    ]


def check_outputs(con: duckdb.DuckDBPyConnection, files: list[SqlFile]) -> None:
    """Check the declared views (``-- Columns:``) exist with their columns and types.

    Raises:
        SqlStageError: "FILE (view V): missing column C" / "column C is T,
            expected U" / "view V is missing", naming the file that creates it.
    """
    defined = {name: f.relpath for f in files for _, name in created_objects(f.text)}
    for d in declarations(files):
        if not d.columns:
            continue
        where = defined.get(d.view, "the SQL stages")
        actual = dict(
            con.execute(
                "SELECT column_name, data_type FROM duckdb_columns() "
                "WHERE schema_name = 'main' AND table_name = ?",
                [d.view],
            ).fetchall()
        )
        if not actual:
            raise SqlStageError(f"{where}: view {d.view} is missing (the writers read it)")
        for column, wanted in d.columns.items():
            if column not in actual:
                raise SqlStageError(f"{where} (view {d.view}): missing column {column} ({wanted})")
            if actual[column] != wanted:
                raise SqlStageError(
                    f"{where} (view {d.view}): column {column} is {actual[column]}, "
                    f"expected {wanted}"
                )
