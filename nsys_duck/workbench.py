"""SQL workbench: a converted report's pipeline views, for ad-hoc SQL.

``open_workbench`` opens the ``NAME.duckdb`` a conversion saved
(read-only; it is self-contained, :mod:`database`), or, for a workspace or
export folder that has none, runs every stage over its ``parquet/`` into a
temporary DuckDB (in memory, or a temporary file when the DuckDB CLI is to
open it), so users query the pipeline's views by their real names
(``stg_kernels``, ``int_flows``, ``trace_slices`` ...). Nothing is written
to the workspace; temporary files are removed by :meth:`Workbench.close`.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from . import database, manifest, pipeline
from .convert import Options, build, open_database
from .errors import InputError
from .sources import is_export_dir
from .workspace import locate


@dataclass
class Workbench:
    """An open connection over one report's pipeline views."""

    con: duckdb.DuckDBPyConnection
    files: list[pipeline.SqlFile]
    database: Path | None = None     # the file ``con`` reads; None: in memory
    _temp: Path | None = field(default=None, repr=False)

    def close(self) -> None:
        """Close the connection and remove the temporary files."""
        try:
            self.con.close()
        except duckdb.Error:   # still busy with an interrupted query: the process ends
            pass
        finally:
            if self._temp is not None:
                shutil.rmtree(self._temp, ignore_errors=True)

    def __enter__(self) -> "Workbench":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_workbench(name_or_path: str, opts: Options | None = None, *,
                   as_file: bool = False) -> Workbench:
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
        return Workbench(database.open_database(ws.database), pipeline.sql_files(None),
                         ws.database)
    opts = opts or _recorded_options(ws.dir)
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
            return Workbench(con, files, None, temp)
        path = temp / f"{ws.name}.duckdb"
        con = open_database(opts, temp, path)
        try:
            files, _ = build(con, export, opts, save_tables=True)
            database.keep_export_tables(con)
        finally:
            con.close()
        return Workbench(database.open_database(path), files, path, temp)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise


def _recorded_options(workspace_dir: Path) -> Options:
    """The options the workspace's last conversion ran with (its manifest),
    so a rebuild shows the same data (``--nvtx-scope``, ``--sql-dir``).

    Raises:
        InputError: it was converted with a ``--sql-dir`` that is gone.
    """
    recorded = ((manifest.read(workspace_dir) or {}).get("conversion") or {}).get(
        "options") or {}
    sql_dir = recorded.get("sql_dir")
    if sql_dir and not Path(sql_dir).is_dir():
        raise InputError(f"it was converted with --sql-dir {sql_dir}, which is gone; "
                         "convert it again")
    return Options(nvtx_scope=recorded.get("nvtx_scope") or "thread",
                   sql_dir=Path(sql_dir) if sql_dir else None)


def list_views(wb: Workbench) -> list[tuple[str, str, str, list[tuple[str, str]]]]:
    """(file, view/table name, description, [(column, type)]) in pipeline order."""
    out = []
    created = pipeline.created_objects
    for f in wb.files:
        for kind, name in created(f.text):
            if kind == "macro" or "." in name or name.startswith("_"):
                continue
            cols = wb.con.execute(
                "SELECT column_name, data_type FROM duckdb_columns() "
                "WHERE table_name = ? AND schema_name = 'main' ORDER BY column_index",
                [name]).fetchall()
            out.append((f.relpath, name, f.description, cols))
    return out


def explain(wb: Workbench, view: str) -> str:
    """The rendered SQL statement that creates ``view`` (with its file as a comment)."""
    ctx_columns: dict[str, list[str]] = {}
    for table, column in wb.con.execute(
            "SELECT table_name, column_name FROM duckdb_columns() "
            "WHERE schema_name = 'nsys'").fetchall():
        ctx_columns.setdefault(table, []).append(column)
    for f in wb.files:
        for kind, name in pipeline.created_objects(f.text):
            if name == view:
                text = pipeline.render(f, pipeline.Context(ctx_columns or {}, {"nvtx_scope": "thread"}))
                for stmt in duckdb.extract_statements(text):
                    if any(n == view for _, n in pipeline.created_objects(stmt.query)):
                        return f"-- {f.relpath}\n" + stmt.query.strip() + ";"
    raise InputError(f"no view or table named {view!r} in the pipeline")


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
        raise InputError("the folder is not empty (it may hold your edits); choose a new "
                         "folder, or --force to overwrite the packaged files in it")
    src = pipeline.packaged_sql_dir()
    written = []
    for p in sorted(src.rglob("*.sql")):
        target = Path(dest) / p.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(p, target)
        written.append(target)
    return written
