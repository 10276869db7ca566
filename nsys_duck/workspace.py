"""Where a conversion's files live: ``$NSYS_WORKSPACE_ROOT/NAME/``."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from . import manifest
from .errors import InputError
from .sources import is_export_dir

REPORT_SUFFIXES = (".nsys-rep", ".qdrep")
SQLITE_SUFFIX = ".sqlite"  # nsys export --type=sqlite
PQTDIR_SUFFIX = "_pqtdir"  # newer nsys writes -o OUT as the folder OUT_pqtdir
# a merge's workspace (nsys-duck merge): the hive-partitioned dataset of its
# reports, and the reports' own workspaces when the merge converted them
MERGE_REPORTS_DIR = "reports"
MERGE_RANKS_DIR = "ranks"


def workspace_root() -> Path:
    """``$NSYS_WORKSPACE_ROOT``, default ``$HOME/.nsys-workspace`` (absolute)."""
    root = os.environ.get("NSYS_WORKSPACE_ROOT") or str(Path.home() / ".nsys-workspace")
    return Path(root).expanduser().resolve()


@dataclass(frozen=True)
class Source:
    """A conversion input: a report file, an Nsight SQLite export or an
    existing Parquet export folder."""

    path: Path
    kind: str  # 'report', 'sqlite' or 'export'
    name: str  # NAME of the workspace folder


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
            raise InputError(
                "this folder is not an Nsight Parquet export "
                "(no StringIds.parquet or META_DATA_EXPORT.parquet in it)"
            )
        if p.name == "parquet":
            name = p.parent.name
        elif p.name.endswith(PQTDIR_SUFFIX) and len(p.name) > len(PQTDIR_SUFFIX):
            name = p.name[: -len(PQTDIR_SUFFIX)]
        else:
            name = p.name
        return Source(p, "export", check_name(name))
    suffix = next((s for s in REPORT_SUFFIXES + (SQLITE_SUFFIX,) if p.name.endswith(s)), None)
    if suffix is None:
        raise InputError(
            "not an Nsight Systems report (expected a .nsys-rep "
            "or .qdrep file, an SQLite export .sqlite, or a Parquet "
            "export folder)"
        )
    kind = "sqlite" if suffix == SQLITE_SUFFIX else "report"
    if not p.is_file():
        raise InputError(
            "not a regular file (an SQLite export must be a .sqlite file)"
            if kind == "sqlite"
            else "not a regular file (a report must be a .nsys-rep or .qdrep file)"
        )
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
            raise InputError(
                "this is a Git LFS pointer, not the report itself (run git lfs pull to fetch it)"
            )
    # NAME from the path as given: a symlink mymodel.nsys-rep -> report1.nsys-rep
    # is converted as mymodel (README: model.nsys-rep -> model/)
    given = Path(path).expanduser().name
    named = next((s for s in REPORT_SUFFIXES + (SQLITE_SUFFIX,) if given.endswith(s)), None)
    name = check_name(given[: -len(named)] if named else p.name[: -len(suffix)])
    if kind == "sqlite":
        from .sqlite_export import check_export

        check_export(p)
    return Source(p, kind, name)


# Characters DuckDB reads specially in a file path: ? starts a query string
# (its WAL would land elsewhere) and *, ?, [ ] are glob patterns in
# read_parquet. A workspace NAME replaces them with '_'; a workspace folder
# given with -o, or a root, holding one is refused.
PATH_SPECIAL = "?*[]"


def check_name(name: str) -> str:
    """NAME must be a plain folder name inside the workspace root; characters
    of :data:`PATH_SPECIAL` become ``_``."""
    if name in ("", ".", "..") or "/" in name or "\0" in name:
        raise InputError(
            f"cannot use {name!r} as a workspace name; rename the report (or the export folder)"
        )
    return "".join("_" if c in PATH_SPECIAL else c for c in name)


def check_folder(path: Path, what: str) -> Path:
    """``path`` itself, refused (InputError, one sentence naming ``what``)
    when it holds a character DuckDB reads as a glob pattern."""
    special = sorted({c for c in str(path) if c in PATH_SPECIAL})
    if special:
        raise InputError(
            f"the {what} {path} has {' '.join(special)} in its path, which "
            "DuckDB reads as a pattern; choose another folder"
        )
    return path


JSON_SUFFIX = ".perfetto.json.gz"  # NAME.perfetto.json.gz
DATABASE_SUFFIX = ".duckdb"  # NAME.duckdb
KINETO_SUFFIX = ".kineto"  # NAME.kineto/rank<R>.json.gz (--format kineto)
PFTRACE_SUFFIX = ".pftrace"  # NAME.pftrace (--format pftrace)


# a part of a split JSON trace, NAME.part-NNN.perfetto.json.gz (group 1: NAME)
JSON_PART = re.compile(r"(.+)\.part-\d{3}" + re.escape(JSON_SUFFIX))


def is_json_part(path: Path) -> bool:
    """``path`` names a part of a split JSON trace (:data:`JSON_PART`)."""
    return JSON_PART.fullmatch(path.name) is not None


def glob_escape(text: str) -> str:
    """``text`` with glob's special characters made literal."""
    return re.sub(r"([*?\[])", r"[\1]", text)


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
        return self.dir / f"{self.name}{JSON_SUFFIX}"

    def json_part(self, part: int) -> Path:
        """Part ``part`` (1-based) of a trace split in time windows
        (``NAME.part-001.perfetto.json.gz``; contract: traces that open)."""
        return self.dir / f"{self.name}.part-{part:03d}{JSON_SUFFIX}"

    @property
    def json_parts(self) -> list[Path]:
        """The published parts of a split trace, in order (empty: not split)."""
        return sorted(self.dir.glob(f"{glob_escape(self.name)}.part-[0-9][0-9][0-9]{JSON_SUFFIX}"))

    @property
    def pftrace(self) -> Path:
        """The protobuf trace (``--format pftrace``): Perfetto's TrackEvent
        format, one file whatever the size."""
        return self.dir / f"{self.name}{PFTRACE_SUFFIX}"

    @property
    def events_parquet(self) -> Path:
        return self.dir / f"{self.name}.perfetto.parquet"

    @property
    def kernel_dependencies(self) -> Path:
        return self.dir / f"{self.name}.kernel_dependencies.parquet"

    @property
    def database(self) -> Path:
        return self.dir / f"{self.name}{DATABASE_SUFFIX}"

    @property
    def kineto_dir(self) -> Path:
        """The Kineto trace (``--format kineto``): a folder of one
        ``rank<R>.json.gz`` per rank, what HTA's ``TraceAnalysis(trace_dir=)``
        reads (it takes every ``.json``/``.gz`` file of the folder)."""
        return self.dir / f"{self.name}{KINETO_SUFFIX}"

    @property
    def always(self) -> tuple[Path, ...]:
        """The files every run publishes whatever its format (the Parquet,
        the kernel dependencies) and NAME.duckdb (when asked for); the
        traces are :mod:`formats`'."""
        return (self.events_parquet, self.kernel_dependencies, self.database)

    @property
    def lock(self) -> Path:
        return self.dir / ".nsys-duck.lock"


def workspace_for(
    source: Source, root: Path | None = None, folder: Path | None = None
) -> Workspace:
    """The workspace of ``source``: ``folder`` when given (``convert -o``),
    else ``root/NAME`` (root: :func:`workspace_root`). Files inside are
    named after NAME either way.

    Raises:
        InputError: the folder's path holds a character of :data:`PATH_SPECIAL`.
    """
    if folder is not None:
        return Workspace(
            check_folder(Path(folder).expanduser().resolve(), "output folder"), source.name
        )
    root = root or workspace_root()
    return Workspace(check_folder(root, "workspace root") / source.name, source.name)


def _workspace_in(folder: Path) -> Workspace | None:
    """The workspace whose folder is ``folder``, when it looks like one (a
    manifest, or a published trace or database)."""
    name = (manifest.read(folder) or {}).get("name")
    if isinstance(name, str) and name:
        return Workspace(folder, name)
    for suffix in (DATABASE_SUFFIX, JSON_SUFFIX):
        found = sorted(folder.glob("*" + suffix))
        if len(found) == 1:
            return Workspace(folder, found[0].name[: -len(suffix)])
    return None


def locate(arg: str, root: Path | None = None) -> tuple[Workspace, Source | None]:
    """What a command that reads a conversion (``sql``, ``views``, ``open``,
    ``validate``) was given: a workspace NAME (a folder under ``root``), a
    workspace folder, its ``NAME.duckdb``, ``NAME.perfetto.json.gz`` or
    ``parquet/``, a report, an SQLite export or an export folder (then the
    workspace ``convert`` gives it by default).

    Returns:
        (workspace, source): ``source`` is the input when ``arg`` was one
        (its workspace may not exist yet), else None.

    Raises:
        InputError: nothing by that name or path.
    """
    root = root or workspace_root()
    p = Path(arg).expanduser()
    try:
        exists = p.exists()
    except OSError as exc:
        raise InputError(f"cannot open it: {exc.strerror or exc}") from None
    if not exists:
        if "/" not in arg and arg not in ("", ".", "..") and (root / arg).is_dir():
            return Workspace(root / arg, arg), None
        raise InputError(
            f"no such file or directory, and no workspace {arg!r} under "
            f"{root} (convert the report first)"
        )
    p = p.resolve()
    if p.is_file():
        for suffix in (DATABASE_SUFFIX, JSON_SUFFIX):
            if p.name.endswith(suffix) and len(p.name) > len(suffix):
                return Workspace(p.parent, p.name[: -len(suffix)]), None
    if p.is_dir():
        inside = _workspace_in(p)
        if inside is not None:
            return inside, None
        if p.name == "parquet" and _workspace_in(p.parent) is not None:
            return _workspace_in(p.parent), None
        if not is_export_dir(p):
            raise InputError(
                f"not a workspace folder (no {manifest.FILE_NAME}, NAME.duckdb or one "
                "NAME.perfetto.json.gz in it) and not an Nsight Parquet "
                "export"
            )
    source = classify_input(p)
    ws = workspace_for(source, root)
    _check_same_source(ws, source)
    return ws, source


def _check_same_source(ws: Workspace, source: Source) -> None:
    """Refuse a workspace whose manifest names another report than ``source``
    (same path, or same SHA-256 from another path, is the same report)."""
    recorded = (manifest.read(ws.dir) or {}).get("source")
    if not isinstance(recorded, dict) or recorded.get("path") == str(source.path):
        return
    if manifest.fingerprint(source.path, source.kind, recorded).sha256 == recorded.get("sha256"):
        return
    raise InputError(
        f"the workspace {ws.dir} holds another report, "
        f"{recorded.get('path')}; give the workspace folder this one was "
        "converted into (convert -o DIR), or convert it first"
    )
