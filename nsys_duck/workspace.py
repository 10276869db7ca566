"""Where a conversion's files live: ``$NSYS_WORKSPACE_ROOT/NAME/``."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError
from .sources import is_export_dir

REPORT_SUFFIXES = (".nsys-rep", ".qdrep")
SQLITE_SUFFIX = ".sqlite"      # nsys export --type=sqlite
PQTDIR_SUFFIX = "_pqtdir"      # newer nsys writes -o OUT as the folder OUT_pqtdir


def workspace_root() -> Path:
    """``$NSYS_WORKSPACE_ROOT``, default ``$HOME/.nsys-workspace`` (absolute)."""
    root = os.environ.get("NSYS_WORKSPACE_ROOT") or str(Path.home() / ".nsys-workspace")
    return Path(root).expanduser().resolve()


@dataclass(frozen=True)
class Source:
    """A conversion input: a report file, an Nsight SQLite export or an
    existing Parquet export folder."""

    path: Path
    kind: str   # 'report', 'sqlite' or 'export'
    name: str   # NAME of the workspace folder


def classify_input(path: str | os.PathLike) -> Source:
    """Decide what ``path`` is and which workspace NAME it gets.

    NAME is the basename without ``.nsys-rep``/``.qdrep``/``.sqlite``; for an
    export folder its own name, its parent's when the folder is called
    ``parquet``, or ``OUT`` for a folder ``OUT_pqtdir`` (what newer nsys
    writes for ``-o OUT``).

    Raises:
        InputError: missing path, unreadable file, a directory that is not an
            export, a file that is not a ``.nsys-rep``/``.qdrep`` report or a
            ``.sqlite`` Nsight SQLite export (checked: SQLite header, Nsight
            tables, a schema SQLite can read).
    """
    p = Path(path).expanduser()
    try:
        exists = p.exists()
    except OSError as exc:  # a symlink loop, a name too long, ...
        raise InputError(f"cannot open it: {exc.strerror or exc}") from None
    if not exists:
        raise InputError("no such file or directory")
    p = p.resolve()
    if p.is_dir():
        if not is_export_dir(p):
            raise InputError("this folder is not an Nsight Parquet export "
                             "(no StringIds.parquet or META_DATA_EXPORT.parquet in it)")
        if p.name == "parquet":
            name = p.parent.name
        elif p.name.endswith(PQTDIR_SUFFIX) and len(p.name) > len(PQTDIR_SUFFIX):
            name = p.name[: -len(PQTDIR_SUFFIX)]
        else:
            name = p.name
        return Source(p, "export", _check_name(name))
    suffix = next((s for s in REPORT_SUFFIXES + (SQLITE_SUFFIX,) if p.name.endswith(s)),
                  None)
    if suffix is None:
        raise InputError("not an Nsight Systems report (expected a .nsys-rep "
                         "or .qdrep file, an SQLite export .sqlite, or a Parquet "
                         "export folder)")
    kind = "sqlite" if suffix == SQLITE_SUFFIX else "report"
    if not p.is_file():
        raise InputError("not a regular file (an SQLite export must be a .sqlite file)"
                         if kind == "sqlite" else
                         "not a regular file (a report must be a .nsys-rep or .qdrep "
                         "file)")
    if not os.access(p, os.R_OK):
        raise InputError("the report is not readable (permission denied)")
    size = p.stat().st_size
    if size == 0:
        raise InputError("the report is empty (0 bytes)")
    if size < 1024:
        try:
            with open(p, "rb") as f:
                head = f.read(64)
        except OSError as exc:
            raise InputError(f"cannot read the report: {exc.strerror or exc}") from None
        if head.startswith(b"version https://git-lfs"):
            raise InputError("this is a Git LFS pointer, not the report itself "
                             "(run git lfs pull to fetch it)")
    name = _check_name(p.name[: -len(suffix)])
    if kind == "sqlite":
        from .sqlite_export import check_export
        check_export(p)
    return Source(p, kind, name)


def _check_name(name: str) -> str:
    """NAME must be a plain folder name inside the workspace root."""
    if name in ("", ".", "..") or "/" in name or "\0" in name:
        raise InputError(f"cannot use {name!r} as a workspace name; rename the "
                         "report (or the export folder)")
    return name


@dataclass(frozen=True)
class Workspace:
    """The output folder of one report and its file names."""

    dir: Path
    name: str

    @property
    def parquet_dir(self) -> Path:
        return self.dir / "parquet"

    @property
    def json_gz(self) -> Path:
        return self.dir / f"{self.name}.perfetto.json.gz"

    @property
    def events_parquet(self) -> Path:
        return self.dir / f"{self.name}.perfetto.parquet"

    @property
    def kernel_dependencies(self) -> Path:
        return self.dir / f"{self.name}.kernel_dependencies.parquet"

    @property
    def database(self) -> Path:
        return self.dir / f"{self.name}.duckdb"

    @property
    def lock(self) -> Path:
        return self.dir / ".nsys-duck.lock"


def workspace_for(source: Source, root: Path | None = None) -> Workspace:
    root = root or workspace_root()
    return Workspace(root / source.name, source.name)
