"""``NAME/nsys-duck.json``: what a workspace was made from, and with what.

nsys names reports ``report1.nsys-rep``, ``report2...`` by default, and
copies (``cp -p``, rsync, scp -p, tar) keep a file's old mtime, so neither
the name nor the times tell two reports apart. The manifest records the
source's absolute path, size, mtime and SHA-256 (the content), the nsys
and nsys-duck versions and the options of the last conversion.
:func:`check_source` decides from it whether the workspace's export may be
reused, must be made again, or belongs to another report (refused).

Hashing reads the whole report (about 1 s per GB); it is skipped when the
file's inode, size, mtime and ctime are the ones recorded (ctime changes
on every write and cannot be set back by ``cp -p`` or ``touch``), as git's
index does.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from . import __version__
from .errors import InputError

FILE_NAME = "nsys-duck.json"
FORMAT = 1  # bumped when the fields change meaning
FOOTER_BYTES = 65536  # of each export Parquet file, in its fingerprint
# prefix of an export folder's digest (earlier versions hashed the
# listing with mtimes; such a record cannot be compared: mirror again)
EXPORT_DIGEST = "footers:"
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Fingerprint:
    """Identity of a conversion input: a report/.sqlite file, or an export folder."""

    path: str  # absolute
    kind: str  # 'report', 'sqlite' or 'export'
    size: int  # bytes (for a folder: the sum of its *.parquet files)
    mtime_ns: int  # for a folder: the newest *.parquet
    sha256: str  # of the file's bytes; for a folder: of its listing
    stat_key: list  # [st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns]

    def as_json(self) -> dict:
        return {
            "path": self.path,
            "kind": self.kind,
            "size": self.size,
            "mtime_ns": self.mtime_ns,
            "sha256": self.sha256,
            "stat_key": self.stat_key,
        }


def _stat_key(st: os.stat_result) -> list:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def fingerprint(path: Path, kind: str, recorded: dict | None = None) -> Fingerprint:
    """The :class:`Fingerprint` of ``path``.

    A file is hashed unless ``recorded`` (a manifest's ``source``) has the
    same path and stat key. An export folder (``kind == 'export'``) is
    hashed by the name, size and last :data:`FOOTER_BYTES` of each
    ``*.parquet`` (the Parquet footer: schema, row counts, column
    statistics): the same export copied elsewhere (a second clone of the
    shipped example, ``cp -r``) is the same report, whatever its mtimes; it
    is mirrored again on every conversion, so only its identity matters.

    Raises:
        InputError: the file cannot be read.
    """
    path = Path(path).resolve()
    if kind == "export":
        h = hashlib.sha256()
        size = newest = 0
        try:
            for p in sorted(path.glob("*.parquet")):
                st = p.stat()
                size += st.st_size
                newest = max(newest, st.st_mtime_ns)
                h.update(json.dumps([p.name, st.st_size]).encode())
                with open(p, "rb") as f:
                    f.seek(max(0, st.st_size - FOOTER_BYTES))
                    h.update(f.read())
        except OSError as exc:
            raise InputError(f"cannot read the export: {exc.strerror or exc}") from None
        return Fingerprint(str(path), kind, size, newest, EXPORT_DIGEST + h.hexdigest(), [])
    st = path.stat()
    key = _stat_key(st)
    if (
        recorded
        and recorded.get("path") == str(path)
        and recorded.get("stat_key") == key
        and recorded.get("sha256")
    ):
        digest = recorded["sha256"]
    else:
        h = hashlib.sha256()
        try:
            with open(path, "rb") as f:
                while chunk := f.read(_CHUNK):
                    h.update(chunk)
        except OSError as exc:
            raise InputError(f"cannot read the report: {exc.strerror or exc}") from None
        digest = h.hexdigest()
    return Fingerprint(str(path), kind, st.st_size, st.st_mtime_ns, digest, key)


def read(workspace_dir: Path) -> dict | None:
    """The manifest of ``workspace_dir``, or None (none, unreadable, other format)."""
    try:
        data = json.loads((Path(workspace_dir) / FILE_NAME).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == FORMAT else None


def write(workspace_dir: Path, data: dict) -> None:
    """Replace the manifest atomically (write a temporary file, then rename)."""
    path = Path(workspace_dir) / FILE_NAME
    tmp = path.with_name(f".{FILE_NAME}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    os.replace(tmp, path)


def now() -> str:
    """UTC time as ISO 8601 (seconds), for the manifest's ``*_at`` fields."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def new(name: str, source: Fingerprint, export: dict) -> dict:
    """A manifest for a workspace whose export was just made from ``source``.

    ``export``: how ``parquet/`` was made, e.g. ``{"made_by": "nsys export",
    "nsys_version": "2023.4.4.54", "at": ...}``.
    """
    return {
        "format": FORMAT,
        "name": name,
        "source": source.as_json(),
        "export": export,
        "conversion": None,
        "nsys_duck_version": __version__,
    }


def pending(name: str) -> dict:
    """The manifest while ``parquet/`` is being replaced: no source, so no
    later run reuses what a killed run left there."""
    return {
        "format": FORMAT,
        "name": name,
        "source": None,
        "export": None,
        "conversion": None,
        "nsys_duck_version": __version__,
    }


@dataclass(frozen=True)
class Decision:
    """What :func:`check_source` found: whether ``parquet/`` may be reused and
    why not (``reason``: one clause for the summary, or None)."""

    reuse: bool
    reason: str | None


def check_source(
    manifest: dict | None, source: Fingerprint, workspace_dir: Path, has_export: bool, force: bool
) -> Decision:
    """Decide what to do with the workspace's export for ``source``.

    - same content (SHA-256) as recorded: reuse the export (unless ``force``);
    - the recorded report's path holds new content: export again;
    - content from another path: refused (it is a different report that
      happens to have the same name) unless ``force``;
    - a workspace without a manifest (made by nsys-duck before 0.2, or by
      hand): export again, since nothing says what its ``parquet/`` is.

    Raises:
        InputError: another report's workspace, without ``force``.
    """
    if manifest is None or not isinstance(manifest.get("source"), dict):
        if has_export and source.kind != "export":
            return Decision(
                False,
                "the workspace had no record of its report "
                f"({FILE_NAME}), so it was exported again",
            )
        return Decision(False, None)
    old = manifest["source"]
    if source.kind == old.get("kind") == "export" and not str(old.get("sha256", "")).startswith(
        EXPORT_DIGEST
    ):
        return Decision(False, None)  # recorded by the older listing hash
    if old.get("sha256") == source.sha256 and old.get("kind") == source.kind:
        return Decision(has_export and not force and source.kind != "export", None)
    if old.get("path") == source.path:
        return Decision(
            False, "the report changed since the last conversion, so it was exported again"
        )
    if force:
        return Decision(False, f"--force: replaced the conversion of {old.get('path')}")
    same_name = Path(old.get("path", "")).name == Path(source.path).name
    raise InputError(
        f"the workspace {workspace_dir} holds the conversion of a different report, "
        f"{old.get('path')}{' (another file with the same name)' if same_name else ''}; "
        "convert this one into its own folder with -o DIR, or replace that conversion "
        "with --force"
    )
