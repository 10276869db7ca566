"""Find the nsys CLI and run ``nsys export --type=parquetdir``.

Nothing is downloaded or installed at run time, and system alternatives are
never touched: we look in NVIDIA's usual install folders, then on PATH, and
pick the newest version found (an older nsys cannot read a newer report).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .errors import ExportError, NsysNotFoundError

SEARCH_GLOBS = (
    "/opt/nvidia/nsight-systems/*/bin/nsys",
    "/opt/nvidia/nsight-systems-cli/*/bin/nsys",
    "/usr/local/cuda*/bin/nsys",
    "/usr/local/cuda*/nsight-systems*/bin/nsys",
    "/usr/lib/nsight-systems/bin/nsys",
)
_VERSION = re.compile(r"(\d{4})\.(\d+)\.(\d+)(?:\.(\d+))?")


@dataclass(frozen=True)
class Nsys:
    """An nsys executable and its version (e.g. ``2023.4.4.54``)."""

    path: Path
    version: str

    @property
    def version_key(self) -> tuple[int, ...]:
        m = _VERSION.search(self.version)
        return tuple(int(g or 0) for g in m.groups()) if m else (0,)


def nsys_version(path: Path) -> str | None:
    """``nsys --version``'s version number, or None if it does not run."""
    try:
        out = subprocess.run(
            [str(path), "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    m = _VERSION.search(out.stdout + out.stderr)
    return m.group(0) if m and out.returncode == 0 else None


def search_locations() -> list[str]:
    """Where :func:`find_nsys` looks, for the not-found message."""
    return list(SEARCH_GLOBS) + ["PATH"]


def find_nsys(override: str | os.PathLike | None = None) -> Nsys:
    """The nsys to use: ``override`` if given, else the newest one installed.

    Raises:
        NsysNotFoundError: nothing found (the message lists where we looked),
            or ``override`` does not run.
    """
    if override:
        path = Path(override)
        version = nsys_version(path)
        if version is None:
            raise NsysNotFoundError(f"nsys was not found: {path} does not run as nsys")
        return Nsys(path, version)
    candidates: dict[str, Path] = {}
    for pattern in SEARCH_GLOBS:
        for p in glob.glob(pattern):
            candidates.setdefault(os.path.realpath(p), Path(p))
    on_path = shutil.which("nsys")
    if on_path:
        candidates.setdefault(os.path.realpath(on_path), Path(on_path))
    found = [Nsys(p, v) for p in candidates.values() if (v := nsys_version(p))]
    if not found:
        raise NsysNotFoundError(
            "nsys was not found (looked in "
            + ", ".join(search_locations())
            + "); install Nsight Systems, pass --nsys FILE, or convert an existing "
            "Parquet export folder or SQLite export (.sqlite) instead"
        )
    return max(found, key=lambda n: n.version_key)


def export_parquet(
    nsys: Nsys,
    report: Path,
    dest: Path,
    *,
    log_path: Path,
    tick: Callable[[float], None] | None = None,
) -> Path:
    """Run ``nsys export --type=parquetdir --ts-normalize=true -o dest``.

    Returns the folder nsys wrote: ``dest``, or ``dest_pqtdir`` (newer nsys
    appends ``_pqtdir`` to the name given with ``-o``). nsys's own output
    goes to ``log_path`` (its progress bar must not flood the terminal);
    ``tick(elapsed_seconds)`` is called about 4 times a second while it runs.

    Raises:
        ExportError: nsys failed; the message carries its reason (for a report
            made by a newer Nsight, which version made it).
    """
    cmd = [
        str(nsys.path),
        "export",
        "--type=parquetdir",
        "--ts-normalize=true",
        "--force-overwrite=true",
        "--lazy=true",
        "-o",
        str(dest),
        str(report),
    ]
    t0 = time.monotonic()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            while proc.poll() is None:
                if tick:
                    tick(time.monotonic() - t0)
                time.sleep(0.25)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    if proc.returncode != 0:
        text = log_path.read_text(errors="replace")
        raise ExportError(explain_export_failure(text, proc.returncode, nsys.version))
    for out in (dest, dest.with_name(dest.name + "_pqtdir")):
        if out.is_dir() and any(out.glob("*.parquet")):
            return out
    raise ExportError(f"nsys {nsys.version} reported success but wrote no Parquet export")


_NEWER = re.compile(
    r"created in Nsight Systems version \(([^)]+)\),\s*newer than your "
    r"current version \(([^)]+)\)"
)
_KNOWN = (
    ("Cannot read from stream", "not an Nsight Systems report, or a damaged one"),
    ("Version tag is not found", "not an Nsight Systems report, or a damaged one"),
    ("magic number mismatch", "the report is truncated or damaged"),
    ("Invalid version prefix", "not an Nsight Systems report, or a damaged one"),
)


def _short_version(text: str) -> str:
    m = _VERSION.search(text)
    return m.group(0) if m else text


def explain_export_failure(log_text: str, returncode: int | None, version: str = "") -> str:
    """One sentence from nsys's output and exit status.

    A report from a newer Nsight names the version that made it; nsys's
    usual complaints about a file that is not a report (or a damaged one)
    are said plainly; otherwise nsys's last error line is quoted.
    """
    who = f"nsys {version}".strip()
    m = _NEWER.search(log_text)
    if m:
        made, ours = _short_version(m.group(1)), _short_version(m.group(2))
        return (
            f"the report was created by Nsight Systems {made}, newer than this "
            f"nsys ({ours}); install Nsight Systems {made} or newer, pass "
            "--nsys FILE, or convert its SQLite export (nsys export --type=sqlite, "
            f"with Nsight Systems {made} or newer) instead"
        )
    lines = [
        ln.strip()
        for ln in log_text.splitlines()
        if ln.strip() and not set(ln.strip()) <= set("[]=-*#%0123456789. ")
    ]
    errors = [ln for ln in lines if "rror" in ln or "fail" in ln.lower()]
    reason = (errors or lines or [""])[-1][:300]
    for needle, meaning in _KNOWN:
        if needle in log_text:
            return f"{meaning} ({who}: {reason})"
    if returncode is not None and returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"{who} was killed by {name} while exporting the report"
    if not reason:
        return f"{who} failed to export the report (exit status {returncode}, no message)"
    return f"{who} failed to export the report (exit status {returncode}): {reason}"
