"""Run the contract checks: the ``check_*`` views the SQL stages created.

A check is a view named ``check_<rule>`` (one per file, under
``sql/50_checks/`` for the generic rules over ``chk_events`` and
``sql/55_pipeline_checks/`` for those that join on the pipeline's ids, or
any ``--sql-dir`` file) returning one row per violation, with at least the
columns ``message`` (one sentence) and ``seq`` (an example event, or NULL).
``convert`` runs them after the SQL stages and before it writes any file,
so a broken rule publishes nothing. This module only finds the views in the
files that ran, counts their rows and turns the first violation into the
one-line error of a failed stage; the rules live in the SQL.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import duckdb

from . import contract, headers, pipeline
from .errors import SqlStageError

PREFIX = "check_"

# A check file whose header has this line is not run by convert (the checks
# that sort every event: at 1M rows they cost more than the conversion's 10%
# budget); the file validator (nsys-duck validate) and SELECT in the
# workbench still run it. convert covers the same rules on the pipeline's
# ids with the checks of sql/55_pipeline_checks/.


class CheckFailed(SqlStageError):
    """A ``check_*`` view returned rows: the pipeline's tables break a rule of
    the contract (the message names the file, the view and the first row)."""


@dataclass
class CheckView:
    """One ``check_*`` view and the file that creates it."""

    view: str
    sql_file: pipeline.SqlFile

    @property
    def rule(self) -> str:
        """The rule id: the view name without ``check_`` (``overlap``)."""
        return self.view[len(PREFIX) :]

    @property
    def where(self) -> str:
        """The file as messages name it: ``sql/REL`` for a packaged file, the
        path given for a ``--sql-dir`` file."""
        f = self.sql_file
        return str(f.path) if (f.added or f.overridden) else f"sql/{f.relpath}"


@dataclass
class CheckRun:
    """What :func:`run_checks` did: per-check wall times (``StageTiming``
    labelled ``check VIEW``, seconds) and their total in seconds."""

    checks: list[CheckView] = field(default_factory=list)
    timings: list[pipeline.StageTiming] = field(default_factory=list)
    seconds: float = 0.0


def find_checks(files: list[pipeline.SqlFile], in_convert: bool = False) -> list[CheckView]:
    """The ``check_*`` views the files create, in run order; a view created
    again by a later file (a ``--sql-dir`` addition) is named once, after the
    last file that creates it. ``in_convert``: only those convert runs (not
    the files marked ``-- In convert: no``, :func:`headers.not_in_convert`)."""
    found: dict[str, CheckView] = {}
    for f in files:
        if in_convert and headers.not_in_convert(f.text):
            for _kind, name in pipeline.created_objects(f.text):
                found.pop(name.split(".")[-1].strip('"'), None)
            continue
        for kind, name in pipeline.created_objects(f.text):
            bare = name.split(".")[-1].strip('"')
            if kind == "view" and bare.lower().startswith(PREFIX):
                found.pop(bare, None)
                found[bare] = CheckView(bare, f)
    return list(found.values())


def run_checks(
    con: duckdb.DuckDBPyConnection,
    files: list[pipeline.SqlFile],
    on_check: Callable[[str], None] | None = None,
) -> CheckRun:
    """Run the ``check_*`` views of ``files`` that convert runs (all but the
    files marked ``-- In convert: no``) on ``con``, after the stages ran.

    Args:
        on_check: called with each view's name before it runs (progress).

    Returns:
        the views run and their wall times (seconds).

    Raises:
        CheckFailed (a SqlStageError): one line for the first check (in run order) that
            returns rows: ``sql/55_pipeline_checks/check_x.sql (view
            check_x): N rows break x: FIRST MESSAGE``; or naming the file
            and view when the view itself fails (a DuckDB error, or no
            ``message`` column).
    """
    run = CheckRun(find_checks(files, in_convert=True))
    t_all = time.perf_counter()
    for check in run.checks:
        if on_check:
            on_check(check.view)
        t0 = time.perf_counter()
        try:
            row = con.execute(
                f"SELECT count(*) OVER () AS n, CAST(message AS VARCHAR) AS message "
                f'FROM "{check.view}" LIMIT 1'
            ).fetchone()
        except duckdb.Error as exc:
            raise SqlStageError(
                f"{check.where} (view {check.view}): {' '.join(str(exc).split())[:300]}"
            ) from None
        run.timings.append(pipeline.StageTiming(f"check {check.view}", time.perf_counter() - t0))
        if row is not None:
            n, message = row
            first = " ".join(str(message).split()) if message else "(no message)"
            if len(first) > 400:
                first = first[:399] + "…"
            raise CheckFailed(
                f"{check.where} (view {check.view}): {n} row{'s' if n != 1 else ''} "
                f"break{'s' if n == 1 else ''} {check.rule}: {first}; nothing was "
                "published (nsys-duck convert --no-checks writes it anyway)"
            )
    run.seconds = time.perf_counter() - t_all
    return run


def writer_sql_edited(files: list[pipeline.SqlFile]) -> list[str]:
    """Relative paths of the ``--sql-dir`` files (added or overriding) that
    create a view the JSON writer reads or is made of, or the checks'
    ``chk_events`` (a packaged view with role ``writer-input`` or
    ``check-input``, ``contract``): the checks would vouch for SQL they do
    not see, so convert also runs the file validator on the written JSON."""
    views = contract.views_with_role("writer-input", "check-input")
    return [
        f.relpath
        for f in files
        if (f.added or f.overridden)
        and any(
            name.split(".")[-1].strip('"') in views for _, name in pipeline.created_objects(f.text)
        )
    ]
