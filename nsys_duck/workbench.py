"""SQL workbench: a converted report's pipeline views, for ad-hoc SQL.

``open_workbench`` opens the ``NAME.duckdb`` a conversion saved
(read-only; it is self-contained, :mod:`database`), or, for a workspace or
export folder that has none, runs every stage over its ``parquet/`` into a
temporary DuckDB (in memory, or a temporary file when the DuckDB CLI is to
open it), so users query the pipeline's views by their real names
(``stg_kernels``, ``int_flows``, ``trace_slices`` ...). Nothing is written
to the workspace; temporary files are removed by :meth:`Workbench.close`.

``list_views`` and ``explain`` describe what ran on that database, not what
the packaged files render to today: the SQL the conversion recorded
(``nsys_duck_sql``, :mod:`catalog`, so ``--nvtx-scope`` and ``--sql-dir``
edits and additions show), with the COMMENTs and columns of DuckDB's
catalog.
"""

from __future__ import annotations

import shutil
import tempfile
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from . import catalog, database, manifest, pipeline
from .convert import Options, build, open_database
from .errors import InputError
from .sources import is_export_dir
from .workspace import locate


@dataclass
class Workbench:
    """An open connection over one report's pipeline views."""

    con: duckdb.DuckDBPyConnection
    files: list[pipeline.SqlFile]
    database: Path | None = None  # the file ``con`` reads; None: in memory
    # the template options the stages ran with (``nvtx_scope``)
    options: dict[str, object] = field(default_factory=dict)
    _temp: Path | None = field(default=None, repr=False)

    def close(self) -> None:
        """Close the connection and remove the temporary files."""
        try:
            self.con.close()
        except duckdb.Error:  # still busy with an interrupted query: the process ends
            pass
        finally:
            if self._temp is not None:
                shutil.rmtree(self._temp, ignore_errors=True)

    def __enter__(self) -> Workbench:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_workbench(
    name_or_path: str, opts: Options | None = None, *, as_file: bool = False
) -> Workbench:
    """Open the pipeline views of ``name_or_path`` (anything
    :func:`workspace.locate` accepts).

    The saved ``NAME.duckdb`` when there is one (and no ``opts.sql_dir``);
    else the stages run over the export into a temporary database, a file
    when ``as_file`` (for the DuckDB CLI), in memory otherwise.

    Raises:
        InputError: nothing converted or exported under that name or path.
        NsysDuckError: the stages fail on the export.
    """
    ws, source = locate(name_or_path)
    if (opts is None or opts.sql_dir is None) and ws.database.is_file():
        recorded = _recorded_options(ws.dir, strict=False)
        return Workbench(
            database.open_database(ws.database),
            pipeline.sql_files(recorded.sql_dir),
            ws.database,
            {"nvtx_scope": recorded.nvtx_scope},
        )
    opts = opts or _recorded_options(ws.dir)
    options = {"nvtx_scope": opts.nvtx_scope}
    if is_export_dir(ws.parquet_dir):
        export = ws.parquet_dir
    elif source is not None and source.kind == "export":
        export = source.path
    else:
        raise InputError("not converted yet (run nsys-duck convert first)")
    temp = Path(tempfile.mkdtemp(prefix="nsys-duck-"))
    try:
        if not as_file:
            con = open_database(opts, temp)
            files, _ = build(con, export, opts)
            return Workbench(con, files, None, options, temp)
        path = temp / f"{ws.name}.duckdb"
        con = open_database(opts, temp, path)
        try:
            files, _ = build(con, export, opts, save_tables=True)
            database.keep_export_tables(con)
        finally:
            con.close()
        return Workbench(database.open_database(path), files, path, options, temp)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise


def _recorded_options(workspace_dir: Path, strict: bool = True) -> Options:
    """The options the workspace's last conversion ran with (its manifest),
    so a rebuild shows the same data (``--nvtx-scope``, ``--sql-dir``).

    Raises:
        InputError: it was converted with a ``--sql-dir`` that is gone
            (``strict``; else the packaged files stand in for it).
    """
    recorded = ((manifest.read(workspace_dir) or {}).get("conversion") or {}).get("options") or {}
    sql_dir = recorded.get("sql_dir")
    if sql_dir and not Path(sql_dir).is_dir():
        if strict:
            raise InputError(
                f"it was converted with --sql-dir {sql_dir}, which is gone; convert it again"
            )
        sql_dir = None
    return Options(
        nvtx_scope=recorded.get("nvtx_scope") or "thread",
        sql_dir=Path(sql_dir) if sql_dir else None,
    )


@dataclass
class PipelineObject:
    """One view, table or macro the stages created, as ``nsys-duck views``
    lists it.

    ``kind``: ``view``, ``table`` or ``macro``; ``file``/``origin``: the SQL
    file whose statement created it last and where that file came from
    (``packaged``, ``overridden`` or ``added`` by ``--sql-dir``);
    ``description``: the object's COMMENT, else the file header's first
    paragraph; ``columns``: (name, DuckDB type, COMMENT or None) in order
    (empty for a macro); ``statements``: the SQL that ran for it, the
    CREATE first, then any later statement changing it (INSERT INTO, ALTER
    TABLE, COMMENT ON ...).
    """

    name: str
    kind: str
    file: str
    origin: str
    description: str
    columns: list[tuple[str, str, str | None]]
    statements: list[catalog.Statement]
    comment: str | None = None


def ran_statements(wb: Workbench) -> tuple[list[catalog.Statement], bool]:
    """The statements the stages ran on ``wb``'s database, in run order, and
    whether they are the record the conversion kept (``nsys_duck_sql``,
    :mod:`catalog`). Without one (a database converted before it existed) the
    files are rendered again with the conversion's recorded options and the
    export tables the database holds, and a view's SQL is taken from DuckDB's
    catalog (``duckdb_views().sql``), which keeps what ran."""
    recorded = catalog.read(wb.con)
    if recorded is not None:
        return recorded, True
    columns: dict[str, list[str]] = {}
    for table, column in wb.con.execute(
        "SELECT table_name, column_name FROM duckdb_columns() "
        "WHERE schema_name = 'nsys' AND database_name = current_database() "
        "ORDER BY table_name, column_index"
    ).fetchall():
        columns.setdefault(table, []).append(column)
    stmts = catalog.statements(wb.files, pipeline.Context(columns, dict(wb.options)))
    views = dict(
        wb.con.execute(
            "SELECT view_name, sql FROM duckdb_views() WHERE schema_name = 'main' "
            "AND NOT internal AND database_name = current_database()"
        ).fetchall()
    )
    for s in stmts:
        if s.kind == "view" and s.object in views and views[s.object]:
            s.sql = views[s.object].strip().rstrip(";") + ";"
    return stmts, False


def list_views(wb: Workbench) -> list[PipelineObject]:
    """The views, tables and macros of schema ``main`` the stages created, in
    the order of the statements that created them (a name created twice, e.g.
    replaced by an added ``--sql-dir`` file, is listed once, where it was
    created last); export tables (``nsys.*``) and objects dropped later are
    left out."""
    stmts, _ = ran_statements(wb)
    con = wb.con
    present: dict[str, tuple[str, str | None]] = {}
    for name, kind, comment in con.execute(
        "SELECT view_name, 'view', comment FROM duckdb_views() WHERE schema_name = 'main' "
        "AND NOT internal AND database_name = current_database() "
        "UNION ALL SELECT table_name, 'table', comment FROM duckdb_tables() "
        "WHERE schema_name = 'main' AND database_name = current_database() "
        "UNION ALL SELECT DISTINCT function_name, 'macro', comment FROM duckdb_functions() "
        "WHERE function_type IN ('macro', 'table_macro') AND NOT internal "
        "AND schema_name = 'main' AND database_name = current_database()"
    ).fetchall():
        present[name] = (kind, comment)
    columns: dict[str, list[tuple[str, str, str | None]]] = {}
    for table, column, dtype, comment in con.execute(
        "SELECT table_name, column_name, data_type, comment FROM duckdb_columns() "
        "WHERE schema_name = 'main' AND database_name = current_database() "
        "ORDER BY table_name, column_index"
    ).fetchall():
        columns.setdefault(table, []).append((column, dtype, comment))
    objects: dict[str, PipelineObject] = {}
    for s in stmts:
        name = _main_name(s.object)
        if name is None:
            continue
        if s.kind in ("view", "table", "macro"):
            if name not in present or present[name][0] != s.kind:
                continue
            comment = present[name][1] or None
            objects.pop(name, None)  # created again: listed where it was created last
            objects[name] = PipelineObject(
                name,
                s.kind,
                s.file,
                s.origin,
                comment or _own_comment(s.sql) or s.description,
                columns.get(name, []),
                [s],
                comment,
            )
        elif name in objects and s.kind != "drop":
            objects[name].statements.append(s)
    return list(objects.values())


def _own_comment(sql: str) -> str:
    """The first paragraph of the comment block right before a statement's
    first SQL line, as one line ("" when there is none); a file's first
    statement carries the file header, whose first paragraph this is too."""
    block: list[str] = []
    for line in sql.splitlines():
        stripped = line.strip()
        if not stripped:
            block = []
        elif stripped.startswith("--"):
            block.append(stripped.lstrip("-").strip())
        else:
            break
    words: list[str] = []
    for text in block:
        if not text:
            if words:
                break
            continue
        words.append(text)
    return " ".join(words)


def _main_name(name: str | None) -> str | None:
    """``name`` without a ``main.`` prefix; None for other schemas."""
    if name is None:
        return None
    if name.lower().startswith("main."):
        name = name[5:]
    return None if "." in name else name


def explain(wb: Workbench, view: str) -> str:
    """What ran to make ``view`` (a view, table or macro of the pipeline), as
    SQL text: a comment header (kind, file and origin, the COMMENT or file
    description, the columns with their types and COMMENTs) then the
    statements as they ran, rendered (the CREATE, then any INSERT INTO /
    ALTER TABLE ... that changed it).

    Raises:
        InputError: no view, table or macro of that name in the pipeline.
    """
    objects = {o.name: o for o in list_views(wb)}
    obj = objects.get(view) or objects.get(_main_name(view) or "")
    if obj is None:
        lower = {k.lower(): o for k, o in objects.items()}
        obj = lower.get(view.lower())
    if obj is None:
        raise InputError(
            f"no view, table or macro named {view!r} in the pipeline (nsys-duck views lists them)"
        )
    _, recorded = ran_statements(wb)
    where = {
        "packaged": "packaged",
        "overridden": "overridden by --sql-dir",
        "added": "added by --sql-dir",
    }[obj.origin]
    lines = [f"-- {obj.name}: {obj.kind}, created by {obj.file} ({where})"]
    body = [s.sql for s in obj.statements if s.kind != "comment"]
    if obj.comment or not body[0].lstrip().startswith("--"):
        lines += _comment_lines(obj.description)  # else the SQL's own comments say it
    if obj.columns:
        lines.append("-- Columns:")
        for column, dtype, comment in obj.columns:
            lines += _comment_lines(
                f"{column} {dtype}" + (f": {comment}" if comment else ""), indent="  ", hang="    "
            )
    if not recorded and obj.kind != "view":
        lines += _comment_lines(
            "(re-rendered from the SQL files: this database has no "
            "record of the SQL that ran; convert again to keep one)"
        )
    return "\n".join(lines) + "\n" + "\n\n".join(body)


def _comment_lines(text: str, indent: str = "", hang: str = "") -> list[str]:
    """``text`` as ``--`` comment lines of at most 100 characters."""
    return [
        "-- " + line
        for line in textwrap.wrap(text, 97, initial_indent=indent, subsequent_indent=hang or indent)
    ] or []


def copy_sql_files(dest: Path, force: bool = False) -> list[Path]:
    """Copy the packaged SQL tree into ``dest`` for editing; returns the files written.

    Raises:
        InputError: ``dest`` is a file, or a folder that is not empty (it may
            hold the user's edits) and ``force`` is not set.
    """
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise InputError("not a folder")
    if dest.is_dir() and any(dest.iterdir()) and not force:
        raise InputError(
            "the folder is not empty (it may hold your edits); choose a new "
            "folder, or --force to overwrite the packaged files in it"
        )
    src = pipeline.packaged_sql_dir()
    written = []
    for p in sorted(src.rglob("*.sql")):
        target = Path(dest) / p.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(p, target)
        written.append(target)
    return written
