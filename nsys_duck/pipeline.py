"""Find, render and run the SQL stages in order.

The semantics live in ``sql/`` (packaged as ``nsys_duck/sql`` in the wheel):
numbered folders and files, run in sorted order of their relative path
compared folder by folder (:func:`run_order`: a sub-folder such as
``30_intermediate/10_gpu/`` runs whole, in its sorted place among its
parent's files and folders), each a Jinja template rendered with the
table/column discovery results and the CLI's options, each creating named
views or tables. This module only decides
how SQL runs; it never names a view except through the files' own headers
(a hook's relation here; the views the writers read: ``contract``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import duckdb
import jinja2

from . import headers
from .errors import InputError, SqlStageError

_CREATED = re.compile(
    r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP\w*\s+)?(VIEW|TABLE|MACRO)\s+"
    r"(?:IF\s+NOT\s+EXISTS\s+)?([\w.\"]+)",
    re.IGNORECASE,
)
_COMMENT = re.compile(r"\s*COMMENT\s+ON\s", re.IGNORECASE)


def packaged_sql_dir() -> Path:
    """The SQL folder shipped with the package (wheel), else the checkout's ``sql/``."""
    packaged = Path(str(resources.files("nsys_duck"))) / "sql"
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parent.parent / "sql"
    if checkout.is_dir():
        return checkout
    raise SqlStageError("the packaged SQL files are missing (reinstall nsys-duck)")


@dataclass
class SqlFile:
    """One stage file: its path relative to the SQL root and where it comes from."""

    relpath: str
    path: Path
    overridden: bool = False  # comes from --sql-dir and replaces a packaged file
    added: bool = False  # comes from --sql-dir and has no packaged twin

    @property
    def text(self) -> str:
        return self.path.read_text(encoding="utf-8")

    @property
    def description(self) -> str:
        """The header comment's first paragraph (what the stage produces), as
        one line: up to the first empty comment line."""
        words: list[str] = []
        for line in self.text.splitlines():
            if not line.startswith("--"):
                if line.strip() or words:
                    break
                continue
            text = line.lstrip("-").strip()
            if not text:
                if words:
                    break
                continue
            words.append(text)
        return " ".join(words)


_STAGE_FOLDER = re.compile(r"^\d+_")


def sql_files(sql_dir: Path | None = None, folders: tuple[str, ...] | None = None) -> list[SqlFile]:
    """Stage files in run order, with ``sql_dir``'s files overriding.

    A file of ``sql_dir`` replaces the packaged file with the same relative
    path (``30_intermediate/50_tracks/10_int_lane_clusters.sql``); other
    files are added and run in their sorted position (:func:`run_order`).

    Args:
        folders: top-level folders to take files from (e.g. ``("05_domain",
            "validate")`` for the file validator); by default the pipeline's
            numbered folders (``NN_name``), so an unnumbered folder such as
            ``sql/validate/`` never runs in a conversion.
    """

    def wanted(rel: str) -> bool:
        top = rel.split("/", 1)[0] if "/" in rel else ""
        return top in folders if folders is not None else bool(_STAGE_FOLDER.match(top))

    root = packaged_sql_dir()
    files = {
        rel: SqlFile(rel, p)
        for p in root.rglob("*.sql")
        if wanted(rel := p.relative_to(root).as_posix())
    }
    if sql_dir is not None:
        sql_dir = Path(sql_dir)
        for p in sql_dir.rglob("*.sql"):
            rel = p.relative_to(sql_dir).as_posix()
            top = rel.split("/", 1)[0] if "/" in rel else ""
            if not wanted(rel) and (folders is not None or (top and (root / top).is_dir())):
                continue  # a packaged non-stage folder (validate/), or not asked for
            if rel in files and files[rel].text == p.read_text(encoding="utf-8"):
                continue  # an unchanged copy: keep the packaged file
            files[rel] = SqlFile(rel, p, overridden=rel in files, added=rel not in files)
    return [files[k] for k in sorted(files, key=run_order)]


def shadowing(files: list[SqlFile]) -> list[tuple[str, str, str]]:
    """(added file, object, packaged file): each view or table (macros
    aside: a macro file redefines them on purpose) a ``--sql-dir`` file
    added at a path of its own creates that a packaged file of the same run
    creates too (names compared as DuckDB does: case-insensitive, without a
    ``main.`` schema). Such a file runs beside the packaged one (after it,
    or before and then replaced by it), not instead of it: often a copy
    kept at a path the packaged file has left (the stages moved into domain
    folders), which the summary names (:func:`convert.convert`)."""

    def key(name: str) -> str:
        return name.lower().removeprefix("main.")

    packaged = {
        key(name): f.relpath
        for f in files
        if not f.added
        for kind, name in created_objects(f.text)
        if kind != "macro"
    }
    return [
        (f.relpath, name, packaged[key(name)])
        for f in files
        if f.added
        for kind, name in created_objects(f.text)
        if kind != "macro" and key(name) in packaged
    ]


def run_order(relpath: str) -> tuple[str, ...]:
    """Sort key of a stage file: its relative path's parts, so the files of a
    sub-folder (``30_intermediate/40_slices/``) run together, in its sorted
    place among its parent's entries, and by name inside it."""
    return tuple(relpath.split("/"))


@dataclass
class Context:
    """Template parameters: discovered tables/columns plus CLI options."""

    columns: dict[str, list[str]]
    options: dict[str, object] = field(default_factory=dict)

    def has_table(self, table: str) -> bool:
        return table in self.columns

    def has_column(self, table: str, column: str) -> bool:
        return column in self.columns.get(table, ())

    def col(self, table: str, column: str) -> str:
        """``column`` (quoted) when the export has it, else ``NULL``."""
        if self.has_column(table, column):
            return '"' + column.replace('"', '""') + '"'
        return "NULL"


# Template options a stage may read, with the values a conversion uses when
# the CLI does not set them (a replay such as the workbench passes fewer).
# cpu_trace_sources.source, the words of the --no-SOURCE flags
# (tests/test_cpu_side.py checks they are the domain table's rows).
CPU_SOURCES = ("osrt", "sched", "cudnn", "cublas")

DEFAULT_OPTIONS: dict[str, object] = {
    "nvtx_scope": "thread",
    # --max-json-size: what ui.perfetto.dev opens (README, "Traces that open":
    # the importer takes 2-2.2x the JSON's size in memory, the browser ~2 GB)
    "max_json_bytes": 800_000_000,
    "window_start_s": None,  # --window START:END, seconds after the first event
    "window_end_s": None,
    "devices": [],  # --devices 0,3
    # the CPU-side sources drawn (sql/05_domain/cpu_trace_sources.sql);
    # --no-osrt, --no-sched, --no-cudnn, --no-cublas leave one out
    "cpu_sources": list(CPU_SOURCES),
}


def render(sql_file: SqlFile, ctx: Context) -> str:
    """Render one file's Jinja template (StrictUndefined: typos fail loudly).

    Template names: ``col(table, column)``, ``has_table(table)``,
    ``has_column(table, column)``, ``export_tables`` (the export's table
    names, sorted) and the CLI options (:data:`DEFAULT_OPTIONS`: ``nvtx_scope``,
    ``max_json_bytes``, ``window_start_s``, ``window_end_s``, ``devices``,
    ``cpu_sources``).
    """
    env = jinja2.Environment(
        undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True
    )
    try:
        template = env.from_string(sql_file.text)
        return template.render(
            col=ctx.col,
            has_table=ctx.has_table,
            has_column=ctx.has_column,
            export_tables=sorted(ctx.columns),
            **{**DEFAULT_OPTIONS, **ctx.options},
        )
    except jinja2.TemplateError as exc:
        raise SqlStageError(f"{sql_file.relpath}: template error: {exc}") from None


Hook = Callable[[duckdb.DuckDBPyConnection], None]


@dataclass
class StageTiming:
    relpath: str
    seconds: float


def run_pipeline(
    con: duckdb.DuckDBPyConnection,
    files: list[SqlFile],
    ctx: Context,
    hooks: dict[str, Hook] | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[StageTiming]:
    """Run every file's statements in order.

    Args:
        hooks: name -> function. A file whose header says ``-- hook: NAME
            registers RELATION`` gets the function run right before its
            first statement that mentions RELATION (which the function
            creates).
        progress: called with each file's relative path before it runs.

    Returns:
        per-file wall time in seconds.

    Raises:
        SqlStageError: naming the file, the view being created and DuckDB's
            message, for any template, SQL or hook failure.
        InputError: a stage refused the input with ``error('refuse: ...')``
            (its sentence is the message).
    """
    hooks = hooks or {}
    timings = []
    for sql_file in files:
        if progress:
            progress(sql_file.relpath)
        t0 = time.perf_counter()
        text = render(sql_file, ctx)
        pending = headers.hooks(text)
        for name, relation in pending:
            if name not in hooks:
                raise SqlStageError(f"{sql_file.relpath}: unknown hook {name!r}")
            if not relation:
                raise SqlStageError(
                    f"{sql_file.relpath}: hook {name}: say what it creates "
                    f"(-- hook: {name} registers RELATION)"
                )
        try:
            statements = duckdb.extract_statements(text)
        except duckdb.Error as exc:
            raise SqlStageError(f"{sql_file.relpath}: {_first_line(exc)}") from None
        comments: list[str] = []
        for stmt in statements:
            query = stmt.query
            if _COMMENT.match(_strip_comments(query)):
                comments.append(query)
                continue
            run_comments(con, comments)
            for name, relation in list(pending):
                if relation in _strip_comments(query):
                    try:
                        hooks[name](con)
                    except duckdb.Error as exc:
                        raise SqlStageError(
                            f"{sql_file.relpath}: hook {name}: {_first_line(exc)}"
                        ) from None
                    pending.remove((name, relation))
            try:
                con.execute(query)
            except duckdb.Error as exc:
                refused = _refusal(exc)
                if refused:
                    raise InputError(refused) from None
                m = _CREATED.search(query)
                what = f" ({m.group(1).lower()} {m.group(2)})" if m else ""
                raise SqlStageError(f"{sql_file.relpath}{what}: {_first_line(exc)}") from None
        run_comments(con, comments)
        _inherit_comments(con, text)
        timings.append(StageTiming(sql_file.relpath, time.perf_counter() - t0))
    return timings


def run_comments(con: duckdb.DuckDBPyConnection, comments: list[str]) -> None:
    """Run a file's COMMENT ON statements (and empty the list), in one
    transaction: one commit instead of one per statement (a stage file has
    one per column; on a database file each commit costs ~1.7 ms, ~4x the
    statement). COMMENT ON only documents: one that fails (an edited stage
    dropped a commented column) is skipped, never stops the run; the
    missing column is reported by check_outputs, or it was not needed."""
    if not comments:
        return
    try:
        con.execute("BEGIN TRANSACTION")
    except duckdb.Error:  # already inside the caller's transaction
        began = False
    else:
        began = True
    try:
        for query in comments:
            con.execute(query)
        if began:
            con.execute("COMMIT")
    except duckdb.Error:
        if not began:
            raise
        con.execute("ROLLBACK")
        for query in comments:
            try:
                con.execute(query)
            except duckdb.Error:
                continue
    comments.clear()


def _inherit_comments(con: duckdb.DuckDBPyConnection, text: str) -> None:
    """Give the columns a file's header lists under "Column comments from:"
    the comments of their sources (:data:`headers.COLUMN_COMMENTS_FROM`)."""
    sources = headers.comment_sources(text)
    if not sources:
        return
    for kind, name in created_objects(text):
        if kind == "macro":
            continue
        rows = con.execute(
            "SELECT c.column_name, s.comment FROM duckdb_columns() AS c "
            "JOIN duckdb_columns() AS s ON s.column_name = c.column_name "
            "AND s.schema_name = 'main' AND list_position(?, s.table_name) IS NOT NULL "
            "WHERE c.schema_name = 'main' AND c.table_name = ? AND c.comment IS NULL "
            "AND s.comment IS NOT NULL "
            "QUALIFY row_number() OVER (PARTITION BY c.column_name "
            "ORDER BY list_position(?, s.table_name)) = 1",
            [sources, name, sources],
        ).fetchall()
        run_comments(
            con,
            [
                f'COMMENT ON COLUMN "{name}"."{column}" IS {_sql_string(comment)}'
                for column, comment in rows
            ],
        )


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


# A stage refuses an input it cannot turn into a correct trace by calling
# error('refuse: ONE SENTENCE') (e.g. 40_trace/10_trace_base.sql when the
# events span more time than Perfetto can place exactly): the sentence is
# the user's message, not a SQL failure.
REFUSAL = "refuse: "


def _refusal(exc: BaseException) -> str | None:
    """The sentence of a stage's ``error('refuse: ...')``, else None."""
    text = " ".join(str(exc).split())
    if isinstance(exc, duckdb.InvalidInputException) and REFUSAL in text:
        return text.split(REFUSAL, 1)[1]
    return None


def created_objects(sql_text: str) -> list[tuple[str, str]]:
    """(kind, name) of every view/table/macro a SQL text creates, in order."""
    return [
        (m.group(1).lower(), m.group(2).strip('"'))
        for m in _CREATED.finditer(_strip_comments(sql_text))
    ]


def _strip_comments(query: str) -> str:
    return "\n".join(line.split("--", 1)[0] for line in query.splitlines())


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return " ".join(text.split("\n")[:3])
