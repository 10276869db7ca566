"""SQL workbench: open a converted report's pipeline views for ad-hoc SQL.

``open_workbench`` opens the ``NAME.duckdb`` a conversion saved (read-only),
or, for an export that has none (or an older one), rebuilds every stage in an
in-memory DuckDB over the ``parquet/`` folder, so users query the pipeline's
views by their real names (``stg_kernels``, ``int_flows``, ``trace_slices``
...). Nothing is written.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb

from . import database, pipeline
from .convert import Options, build, open_database
from .errors import InputError
from .sources import is_export_dir
from .workspace import classify_input, workspace_root


def resolve_export(name_or_path: str) -> Path:
    """The Parquet export for a workspace NAME, a report path or an export folder.

    Raises:
        InputError: nothing converted/exported under that name or path.
    """
    candidate = workspace_root() / name_or_path / "parquet"
    if "/" not in name_or_path and is_export_dir(candidate):
        return candidate
    source = classify_input(name_or_path)
    if source.kind == "export":
        return source.path
    exported = workspace_root() / source.name / "parquet"
    if is_export_dir(exported):
        return exported
    raise InputError(f"{name_or_path}: not converted yet (run nsys-duck convert first)")


@dataclass
class Workbench:
    con: duckdb.DuckDBPyConnection
    files: list[pipeline.SqlFile]


def open_workbench(name_or_path: str, opts: Options | None = None) -> Workbench:
    """Run the SQL stages over the export of ``name_or_path`` into a fresh DuckDB."""
    opts = opts or Options()
    export = resolve_export(name_or_path)
    saved = export.parent / f"{export.parent.name}.duckdb"
    if (opts.sql_dir is None and export.name == "parquet" and saved.is_file()
            and saved.stat().st_mtime >= export.stat().st_mtime):
        # the database the conversion saved: no rebuild needed
        return Workbench(database.open_database(saved, export.parent),
                         pipeline.sql_files(None))
    import tempfile
    spill = Path(tempfile.mkdtemp(prefix="nsys-duck-"))
    con = open_database(opts, spill)
    files, _ = build(con, export, opts)
    return Workbench(con, files)


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


def copy_sql_files(dest: Path) -> list[Path]:
    """Copy the packaged SQL tree into ``dest`` for editing; returns the files written."""
    src = pipeline.packaged_sql_dir()
    written = []
    for p in sorted(src.rglob("*.sql")):
        target = Path(dest) / p.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(p, target)
        written.append(target)
    return written
