"""``nsys-duck report NAME REPORT``: the summaries users run first, as SQL.

Each report is one packaged file ``sql/reports/REPORT.sql`` (``top-kernels``
is ``top_kernels.sql``): a plain SELECT, rendered with Jinja like the
stages and run on the workspace's ``NAME.duckdb`` opened read-only, so it
creates nothing. The folder is unnumbered, so a conversion never runs it;
``--sql-dir DIR`` replaces a file by its relative path
(``DIR/reports/top_kernels.sql``), as for ``convert``. This module only
finds the file, runs it and prints its rows (:func:`render`); what a row
means is in the file's header.

A merged workspace (``nsys-duck merge``: its database has ``merge_reports``)
renders the files with ``by_report`` true: the reports that read
``int_gpu_ops`` (top-kernels, memcpy, gpu-idle) give one block of rows per
report from the merged database, labelled with its rank, each with its own
Time (%) base. The merged database does not hold what ``api-summary``
(``stg_runtime_calls``) and ``nvtx-summary`` (the export's
``nsys.NVTX_EVENTS``) read: those run on each report's own ``NAME.duckdb``
(where the merge converted it, while it holds a conversion of that same
report: the source's kind and SHA-256 the merge's manifest records, with
any options), the same blocks after the same labels.
"""

from __future__ import annotations

import csv
import io
import json
import math
import sys
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import duckdb

from . import contract, database, manifest, pipeline
from .errors import InputError, SqlStageError, WorkspaceError
from .workspace import DATABASE_SUFFIX, MERGE_RANKS_DIR, locate, workspace_root

#: command word -> file under sql/reports/ (the CLI's choices: tests/test_report_command.py)
REPORTS = {
    "top-kernels": "top_kernels",
    "api-summary": "api_summary",
    "nvtx-summary": "nvtx_summary",
    "memcpy": "memcpy",
    "gpu-idle": "gpu_idle",
}
FOLDER = "reports"


@dataclass
class ReportResult:
    """A report's rows: column names and Python values, in the file's order."""

    report: str
    columns: list[str]
    rows: list[tuple]
    sql_file: pipeline.SqlFile
    merged: bool


def report_file(report: str, sql_dir: Path | None = None) -> pipeline.SqlFile:
    """The SQL file of ``report`` (``--sql-dir``'s ``reports/FILE.sql``
    replacing the packaged one)."""
    rel = f"{FOLDER}/{REPORTS[report]}.sql"
    for f in pipeline.sql_files(sql_dir, folders=(FOLDER,)):
        if f.relpath == rel:
            return f
    raise SqlStageError(f"{rel}: the packaged SQL file is missing (reinstall nsys-duck)")


def run_report(
    name: str, report: str, sql_dir: Path | None = None, limit: int | None = None
) -> ReportResult:
    """Run ``report`` on the ``NAME.duckdb`` of ``name`` (anything
    :func:`workspace.locate` accepts).

    A merged workspace runs it with ``by_report`` on its own database when
    that holds what the file reads; else (``api-summary``,
    ``nvtx-summary``) on each report's own ``NAME.duckdb``
    (:func:`_report_databases`), the rows of each after its label.

    Raises:
        InputError: no workspace or database by that name; a merged
            workspace lacks what the report reads and a report's own
            database is gone.
        SqlStageError: the SQL file fails (names the file and DuckDB's message).
    """
    ws, _ = locate(name)
    if not ws.database.is_file():
        raise InputError(
            f"{ws.dir} has no {ws.database.name} (convert the report first, without --no-database)"
        )
    sql_file = report_file(report, sql_dir)
    con = database.open_database(ws.database)
    try:
        merged = _has_relation(con, contract.view_with_role("merge-reports").view)
        statements = _statements(sql_file, merged)
        missing = _missing(con, statements, sql_file)
        if not merged or not missing:
            columns, rows = _run(con, statements, sql_file)
            return _result(report, columns, rows, sql_file, merged, limit)
        ranks = _report_databases(ws, con, report, missing)
    finally:
        con.close()
    # a merged workspace without the relations: each report's own database
    statements = _statements(sql_file, False)
    columns, rows = ["Report"], []
    for label, db in ranks:
        rcon = database.open_database(db)
        try:
            cols, part = _run(rcon, statements, sql_file)
        finally:
            rcon.close()
        columns = ["Report", *cols]
        rows += [(label, *r) for r in part]
    return _result(report, columns, rows, sql_file, True, limit)


def _statements(sql_file: pipeline.SqlFile, by_report: bool) -> list[str]:
    text = pipeline.render(sql_file, pipeline.Context(columns={}, options={"by_report": by_report}))
    try:
        statements = [s.query for s in duckdb.extract_statements(text)]
    except duckdb.Error as exc:
        raise SqlStageError(f"{sql_file.relpath}: {_message(exc)}") from None
    if not statements:
        raise SqlStageError(f"{sql_file.relpath}: the file holds no SQL statement")
    return statements


def _missing(con, statements: list[str], sql_file: pipeline.SqlFile) -> list[str]:
    """The relations the last statement reads that the database lacks."""
    try:
        names = con.get_table_names(statements[-1], qualified=False)
    except duckdb.Error as exc:
        raise SqlStageError(f"{sql_file.relpath}: {_message(exc)}") from None
    return sorted(t for t in names if not _has_relation(con, t))


def _run(con, statements: list[str], sql_file: pipeline.SqlFile) -> tuple[list[str], list[tuple]]:
    """Run the statements; the last one's column names and rows."""
    try:
        for query in statements[:-1]:
            con.execute(query).fetchall()
        cur = con.execute(statements[-1])
        return [d[0] for d in cur.description], cur.fetchall()
    except duckdb.Error as exc:
        raise SqlStageError(f"{sql_file.relpath}: {_message(exc)}") from None


def _message(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:500]


def _result(report, columns, rows, sql_file, merged, limit) -> ReportResult:
    if limit is not None:
        rows = _limited(columns, rows, limit, merged)
    return ReportResult(report, columns, rows, sql_file, merged)


def _report_databases(
    ws, con: duckdb.DuckDBPyConnection, report: str, missing: list[str]
) -> list[tuple[str, Path]]:
    """(label, NAME.duckdb) of every report of a merge, in merge order: the
    workspace each was converted into, ``MERGE/ranks/REPORT/`` or
    ``ROOT/NAME/`` (what ``nsys-duck merge`` uses), and only when it still
    holds a conversion of the report that was merged (:func:`_same_report`).

    Raises:
        InputError: a report's database is not found (moved or removed).
    """
    found = []
    recorded = _merged_sources(ws.dir)
    rows = con.execute(contract.query("merge-reports", "report, label, slices")).fetchall()
    for key, label, slices in rows:
        own = key.rsplit("/", 1)[-1]
        candidates = [
            ws.dir / MERGE_RANKS_DIR / urllib.parse.quote(key, safe="") / f"{own}{DATABASE_SUFFIX}",
            *(
                r / own / f"{own}{DATABASE_SUFFIX}"
                for r in dict.fromkeys([ws.dir.parent, workspace_root()])
            ),
        ]
        db = next((c for c in candidates if _same_report(c, recorded.get(key), slices)), None)
        if db is None:
            raise InputError(
                f"{report} reads {', '.join(missing)}, which a merged workspace does not "
                f"hold, and the database report {key} was converted into is gone or holds "
                f"another report now (looked in {', '.join(str(c) for c in candidates)}); "
                "merge again, or run it on that report's own workspace"
            )
        found.append((label, db))
    return found


def _merged_sources(merged_dir: Path) -> dict[str, dict]:
    """report -> the source the merge's manifest records for it (path, kind,
    SHA-256 and options of its conversion, ``merge.report_source``); a
    merge made before nsys-duck recorded them has none."""
    recorded = manifest.read(merged_dir) or {}
    reports = (recorded.get("merge") or {}).get("reports") or []
    return {
        r["report"]: r["source"]
        for r in reports
        if isinstance(r, dict) and isinstance(r.get("source"), dict) and "report" in r
    }


def _same_report(db: Path, source: dict | None, slices: int) -> bool:
    """Whether ``db`` holds a conversion of the report that was merged: its
    workspace's manifest names the same source (kind and SHA-256: the same
    capture, wherever it lies now), whatever options converted it since
    (``--no-osrt`` changes no API call or NVTX range). Without a recorded
    source (an older merge), as many slices as the merge took."""
    if not db.is_file():
        return False
    if source is None:
        return _slices(db) == slices
    own = (manifest.read(db.parent) or {}).get("source")
    return (
        isinstance(own, dict)
        and own.get("sha256") == source.get("sha256")
        and own.get("kind") == source.get("kind")
    )


def _slices(db: Path) -> int | None:
    try:
        rcon = database.open_database(db)
    except WorkspaceError:
        return None
    try:
        return rcon.execute(contract.query("slices", "count(*)")).fetchall()[0][0]
    except duckdb.Error:
        return None
    finally:
        rcon.close()


def _has_relation(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return bool(
        con.execute(
            "SELECT 1 FROM duckdb_tables() WHERE table_name = ? "
            "UNION ALL SELECT 1 FROM duckdb_views() WHERE view_name = ?",
            [name, name],
        ).fetchall()
    )


def _limited(columns: list[str], rows: list[tuple], limit: int, merged: bool) -> list[tuple]:
    """The first ``limit`` rows (of each report, in a merge: rows come
    grouped by the "Report" column)."""
    if not merged or "Report" not in columns:
        return rows[:limit]
    i = columns.index("Report")
    seen: dict[object, int] = {}
    kept = []
    for row in rows:
        seen[row[i]] = seen.get(row[i], 0) + 1
        if seen[row[i]] <= limit:
            kept.append(row)
    return kept


# --- rendering ------------------------------------------------------------------


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _plain(value: object) -> object:
    """A value for csv/json: floats that are whole stay floats (``12.0``),
    NaN/inf become None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _shown(value: object, column: str) -> str:
    """A value as the table prints it: thousands separators, 0.1 for the
    columns nsys rounds to 0.1."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:,.1f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def to_csv(res: ReportResult) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(res.columns)
    for row in res.rows:
        w.writerow(["" if v is None else _plain(v) for v in row])
    return buf.getvalue()


def to_json(res: ReportResult) -> str:
    """One JSON array of objects, one per row (column name -> value)."""
    return (
        json.dumps(
            [{c: _plain(v) for c, v in zip(res.columns, row, strict=True)} for row in res.rows],
            ensure_ascii=False,
            indent=1,
        )
        + "\n"
    )


#: what GitHub's Markdown reads as markup inside a table cell (emphasis,
#: code, links, HTML tags and entities, strikethrough, math, the cell
#: separator): each is written backslash-escaped
MARKDOWN_SPECIAL = "\\`*_[]<>|~&$"


def _visible(text: str) -> str:
    """``text`` with its control characters (and other unprintable ones)
    written as Python escapes (``\\x01``, ``\\n``): shown, not acted on
    by a terminal or a Markdown reader."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _markdown_text(text: str) -> str:
    """``text`` as literal Markdown: :func:`_visible`, then each character
    of :data:`MARKDOWN_SPECIAL` backslash-escaped."""
    return "".join("\\" + c if c in MARKDOWN_SPECIAL else c for c in _visible(text))


def to_markdown(res: ReportResult) -> str:
    """A GitHub-flavoured Markdown table (numbers right-aligned), every name
    literal (:func:`_markdown_text`)."""
    numeric = [
        bool(res.rows) and all(_is_number(r[i]) or r[i] is None for r in res.rows)
        for i in range(len(res.columns))
    ]

    def cell(v: object, i: int) -> str:
        shown = _shown(v, res.columns[i])
        return shown if numeric[i] else _markdown_text(shown)

    lines = [
        "| " + " | ".join(_markdown_text(c) for c in res.columns) + " |",
        "|" + "|".join("---:" if n else "---" for n in numeric) + "|",
    ]
    lines += ["| " + " | ".join(cell(v, i) for i, v in enumerate(r)) + " |" for r in res.rows]
    return "\n".join(lines) + "\n"


#: a text column (a kernel name) keeps at least this many characters a line
TEXT_MIN_WIDTH = 24
#: what the table puts between two columns (padding, rule, padding)
COLUMN_GAP = 3


def _column_widths(natural: list[int], numeric: list[bool], width: int) -> list[int]:
    """Each column's width in a table of ``width`` characters: numbers and
    headers never narrower than they are; text columns as wide as their
    longest cell, the widest narrowed first while the table is too wide, to
    no less than :data:`TEXT_MIN_WIDTH` (the table may then pass ``width``)."""
    widths = list(natural)
    least = [n if numeric[i] else min(n, TEXT_MIN_WIDTH) for i, n in enumerate(natural)]
    excess = sum(widths) + COLUMN_GAP * (len(widths) - 1) - width
    while excess > 0:
        i = max(range(len(widths)), key=lambda k: widths[k] - least[k])
        if widths[i] <= least[i]:
            break
        step = min(excess, widths[i] - least[i])
        widths[i] -= step
        excess -= step
    return widths


def _wrapped(text: str, width: int) -> str:
    """``text`` in lines of at most ``width`` characters, broken at spaces
    where it can and inside a word where it must; every character is kept
    (the space a line breaks at is the break)."""
    import textwrap

    if len(text) <= width:
        return text
    return "\n".join(
        textwrap.wrap(
            text,
            width,
            break_long_words=True,
            break_on_hyphens=False,
            replace_whitespace=False,
            drop_whitespace=True,
        )
    )


def print_table(res: ReportResult, console=None) -> None:
    """A readable table (rich): numbers right-aligned with separators and
    never cut; on a terminal, names wrapped whole in their column (at least
    :data:`TEXT_MIN_WIDTH` characters a line, :func:`_wrapped`: no
    character dropped; a terminal narrower than that table gets it anyway,
    its lines wrap: no column is dropped). Not on a terminal (piped), every
    row is one line. Cells are plain text: no rich markup or ``:emoji:``
    code in a kernel or NVTX name is rendered, control characters are
    shown escaped (:func:`_visible`)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    plain = {"markup": False, "emoji": False, "highlight": False}
    cells = [
        [_visible(_shown(v, c)) for v, c in zip(row, res.columns, strict=True)] for row in res.rows
    ]
    numeric = [
        bool(res.rows) and all(_is_number(r[i]) or r[i] is None for r in res.rows)
        for i in range(len(res.columns))
    ]
    natural = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(res.columns)]
    piped = None
    if console is None and not sys.stdout.isatty():  # as wide as the longest row
        piped = io.StringIO()
        wide = sum(natural) + COLUMN_GAP * len(natural) + 8
        console = Console(file=piped, width=wide, soft_wrap=False, color_system=None, **plain)
    elif console is None:
        console = Console(**plain)
    widths = _column_widths(natural, numeric, console.width)
    needed = sum(widths) + COLUMN_GAP * (len(widths) - 1)
    if console.width < needed:
        console = Console(width=needed, file=console.file, **plain)
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for i, c in enumerate(res.columns):
        table.add_column(
            Text(c),
            justify="right" if numeric[i] else "left",
            width=widths[i],
            no_wrap=True,
            header_style="bold",
        )
    for row in cells:
        table.add_row(*(Text(_wrapped(v, widths[i])) for i, v in enumerate(row)))
    console.print(table, **plain)
    if not res.rows:
        console.print(f"(no rows: the workspace has no data for {res.report})", **plain)
    if piped is not None:
        sys.stdout.write("".join(line.rstrip() + "\n" for line in piped.getvalue().splitlines()))


def render(res: ReportResult, fmt: str) -> str:
    """The text of ``res`` in ``fmt`` (csv, json, markdown)."""
    return {"csv": to_csv, "json": to_json, "markdown": to_markdown}[fmt](res)
