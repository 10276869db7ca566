"""One sentence for what went wrong while a run builds or writes its outputs
(README, "Exit status and messages"): a full disk, a write refused, DuckDB
out of memory, a damaged export file, a failing SQL stage or step."""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from . import checks as checks_mod
from . import sources
from .errors import ExportDataError, NsysDuckError, SqlStageError, WorkspaceError
from .workspace import Workspace


def one_line(exc: BaseException) -> str:
    """``exc``'s message on one line, at most 400 characters."""
    return " ".join(str(exc).split())[:400]


def os_failure(exc: OSError, ws: Workspace) -> WorkspaceError:
    """One sentence for an OSError while writing in the workspace."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT) or "No space left" in str(exc):
        return WorkspaceError(
            f"no space left on the device of {ws.dir}; nothing was "
            "published (free some space or set NSYS_WORKSPACE_ROOT)"
        )
    where = exc.filename or ws.dir
    reason = exc.strerror or " ".join(str(exc).split())[:200]
    return WorkspaceError(f"cannot write {where}: {reason}; nothing was published")


def duckdb_failure(
    message: str,
    ws: Workspace,
    memory_limit: str,
    otherwise: NsysDuckError,
    where: str,
    export_dir: Path | None = None,
) -> NsysDuckError:
    """Turn a DuckDB failure into the most useful sentence.

    ``where``: the SQL file (``30_intermediate/40_slices/50_int_slices.sql``) or the
    step (``writing the JSON trace``) that failed, named when memory ran out.
    Running out of disk or memory says what to change; a damaged file of
    ``export_dir`` is named (every file is read once more to find it, on this
    failure path only; a merge has no export); anything else is
    ``otherwise`` (the stage and DuckDB's message).
    """
    text = " ".join(message.split())
    if "No space left on device" in text:
        return os_failure(OSError(errno.ENOSPC, "No space left on device"), ws)
    if "Out of Memory" in text:
        return NsysDuckError(
            f"DuckDB ran out of memory in {where} (--memory-limit {memory_limit}); "
            "raise --memory-limit"
        )
    damaged = sources.find_damaged(export_dir) if export_dir is not None else None
    if damaged is not None:
        name, reason = damaged
        return ExportDataError(f"the export's file {name} is damaged ({reason})")
    return otherwise


@dataclass
class Step:
    """The step a run is in, named in a failure's sentence
    (``writing the JSON trace``)."""

    now: str


@contextmanager
def named_failures(
    step: Step,
    ws: Workspace,
    memory_limit: str,
    *,
    command: str = "convert",
    export_dir: Path | None = None,
) -> Iterator[None]:
    """Raise every expected failure of the body as one sentence naming
    ``step.now`` (or the SQL file that failed).

    ``command``: the nsys-duck command whose ``--no-checks`` a failed
    contract check points to. Raises NsysDuckError (WorkspaceError,
    ExportDataError, SqlStageError) or the CheckFailed of the checks.
    """
    try:
        yield
    except checks_mod.CheckFailed as exc:
        if command == "convert":
            raise
        raise NsysDuckError(
            str(exc).replace("convert --no-checks", f"{command} --no-checks")
        ) from None
    except SqlStageError as exc:
        where = str(exc).split(": ", 1)[0] if ": " in str(exc) else step.now
        raise duckdb_failure(str(exc), ws, memory_limit, exc, where, export_dir) from None
    except duckdb.Error as exc:
        otherwise = SqlStageError(f"{step.now}: {one_line(exc)}")
        raise duckdb_failure(str(exc), ws, memory_limit, otherwise, step.now, export_dir) from None
    except OSError as exc:
        if "Out of Memory" in str(exc):
            # DuckDB's error reaching us through pyarrow's stream reader
            # (the writers) is an OSError, not a write failure
            otherwise = SqlStageError(f"{step.now}: {one_line(exc)}")
            raise duckdb_failure(
                str(exc), ws, memory_limit, otherwise, step.now, export_dir
            ) from None
        raise os_failure(exc, ws) from None
