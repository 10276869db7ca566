"""``nsys-duck sql``'s engine: run SQL on a workbench's connection and print
or write the result; hand the interactive prompt to the DuckDB CLI.

:func:`run_sql` is ``sql NAME -c SQL``: the statements run in a worker
thread (so Ctrl-C interrupts DuckDB with ``con.interrupt()``) and the last
one's result is printed as a table or written by DuckDB's COPY
(:data:`COPY_OPTIONS`). :func:`duckdb_prompt` is ``sql NAME``: the DuckDB CLI
(:func:`duckdb_cli`, the duckdb-cli package), read-only on the database.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import duckdb

from .compat import arrow_reader
from .console import err, fail, silence_stdout
from .sources import sql_string

#: What ``--format`` asks DuckDB's COPY for.
COPY_OPTIONS = {
    "csv": "(FORMAT csv, HEADER true)",
    "json": "(FORMAT json, ARRAY true)",
    "parquet": "(FORMAT parquet, COMPRESSION zstd)",
}


def duckdb_cli() -> str | None:
    """The DuckDB CLI that opens NAME.duckdb (1.4 or newer): the one installed
    with nsys-duck (duckdb-cli, beside this Python), else ``duckdb`` on PATH;
    None when there is neither."""
    beside = Path(sys.executable).parent / "duckdb"
    for cli in (str(beside) if beside.is_file() else None, shutil.which("duckdb")):
        if not cli:
            continue
        try:
            version = subprocess.run(
                [cli, "--version"], capture_output=True, text=True, timeout=20
            ).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        m = re.search(r"v(\d+)\.(\d+)", version)
        if m and (int(m.group(1)), int(m.group(2))) >= (1, 4):
            return cli
    return None


def duckdb_prompt(cli: str, database: Path) -> int:
    """Run the DuckDB CLI ``cli`` read-only on ``database`` until the user
    leaves it; returns its exit status (130 when SIGTERM/SIGHUP reached us
    as KeyboardInterrupt: the CLI is ended too). Ctrl-C belongs to the CLI
    (it stops a query there), so this process ignores SIGINT meanwhile."""
    err.print(
        f"DuckDB CLI on {database} (read-only). The pipeline's views: "
        ".tables, or nsys-duck views NAME. Leave with .quit or Ctrl-D.",
        markup=False,
        highlight=False,
    )
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    proc = subprocess.Popen(
        [cli, "-readonly", str(database)],
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        proc.wait()
        return 130
    finally:
        signal.signal(signal.SIGINT, old)


INTERRUPTED = 130  # the exit status of a query stopped by Ctrl-C, SIGTERM or SIGHUP


def leave_interrupted() -> None:
    """End the process with status :data:`INTERRUPTED` at once, output
    flushed, without the interpreter's teardown. An interrupted query's
    DuckDB threads may still be finishing a task that calls into Python (the
    Arrow stream of the result); at teardown Python ends such a thread
    mid-call (pthread_exit), which DuckDB's C++ does not survive: the
    process aborted ("terminate called ... FATAL: exception not rethrown",
    status -6) about once in 20 runs on a loaded machine. Call it only once
    every temporary file is removed."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(INTERRUPTED)


def run_sql(con: duckdb.DuckDBPyConnection, sql: str, fmt: str, output: Path | None) -> int:
    """Run ``sql`` on ``con`` in a worker thread and print or write the last
    statement's result (:func:`write_result`); returns the exit status (0,
    1 on an SQL error, said in one line on stderr, 130 on Ctrl-C or
    SIGTERM/SIGHUP: the query is interrupted with ``con.interrupt()``). A
    closed pipe (``| head``) ends quietly with status 0.
    """
    outcome: dict = {}
    temp = Path(tempfile.mkdtemp(prefix="nsys-duck-"))

    def work() -> None:
        try:
            rel = last_result(con, sql)
            if rel is not None:
                write_result(rel, fmt, output, temp)
        except BrokenPipeError:
            outcome["pipe"] = True
        except BaseException as exc:  # reported by the main thread
            outcome["error"] = exc

    if _interrupted(con, work, temp):
        return INTERRUPTED
    if outcome.get("pipe"):  # the reader left (e.g. | head): no more output, no error at exit
        silence_stdout()
        return 0
    return _exit_status(outcome.get("error"))


def last_result(con: duckdb.DuckDBPyConnection, sql: str) -> duckdb.DuckDBPyRelation | None:
    """Run every statement of ``sql`` on ``con`` but the last, then return
    the last as a relation (None: no statement, or one without a result)."""
    statements = [s.query for s in duckdb.extract_statements(sql)]
    for query in statements[:-1]:
        con.execute(query).fetchall()  # DuckDB 2 wants each result consumed
    return con.sql(statements[-1]) if statements else None


def write_result(rel: duckdb.DuckDBPyRelation, fmt: str, output: Path | None, temp: Path) -> None:
    """Print or write ``rel`` as ``fmt``.

    ``table`` is DuckDB's box: shortened on a terminal; piped, all of it,
    printed by the DuckDB CLI from a Parquet file of the result in ``temp``
    (without a CLI, DuckDB's own box of up to 10,000 rows). csv, json and
    parquet are written by DuckDB's COPY to ``output``, or to a file in
    ``temp`` then copied to standard output (so ``>>`` appends and the
    output keeps its place among other writes).

    Raises:
        RuntimeError: the DuckDB CLI failed to print the table.
    """
    if fmt == "table" and sys.stdout.isatty():
        rel.show()  # DuckDB's box, shortened to the terminal
        return
    cli = duckdb_cli() if fmt == "table" else None
    if fmt == "table" and cli is None:
        rel.show(max_rows=10_000, max_width=2**31, max_col_width=2**31)
        return
    to_stdout = output is None or cli is not None
    target = str(temp / "result") if to_stdout else str(output)
    copy_result(rel, target, "parquet" if cli else fmt)
    sys.stdout.flush()
    if cli is not None:  # piped table: every row and column, by the CLI
        status = subprocess.run(
            [cli, "-box", "-c", f"FROM read_parquet({sql_string(target)})"],
            stderr=subprocess.PIPE,
            text=True,
        )
        if status.returncode and status.stderr.strip():
            raise RuntimeError(status.stderr.strip())
    elif to_stdout:
        with open(target, "rb") as f:
            shutil.copyfileobj(f, sys.stdout.buffer)
        sys.stdout.flush()


def copy_result(rel: duckdb.DuckDBPyRelation, target: str, fmt: str) -> None:
    """Write ``rel`` to the file ``target`` with DuckDB's COPY in ``fmt``
    (csv, json or parquet), streamed as Arrow batches through a scratch
    connection."""
    scratch = duckdb.connect()
    try:
        scratch.register("nsys_duck_result", arrow_reader(rel, 65_536))
        scratch.execute(f"COPY nsys_duck_result TO {sql_string(target)} " + COPY_OPTIONS[fmt])
    finally:
        scratch.close()


def _interrupted(con: duckdb.DuckDBPyConnection, work: Callable[[], None], temp: Path) -> bool:
    """Run ``work`` in a daemon thread and wait for it; on Ctrl-C interrupt
    ``con``'s query, say so and return True (when DuckDB does not stop
    within 5 s, leave the process at once with status 130). ``temp`` is
    removed once the thread is done."""
    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    try:
        try:
            while worker.is_alive():
                worker.join(0.1)
        except KeyboardInterrupt:
            con.interrupt()
            worker.join(5)
            fail(None, "interrupted")
            if worker.is_alive():  # DuckDB did not stop: leave without waiting for it
                shutil.rmtree(temp, ignore_errors=True)
                leave_interrupted()
            return True
    finally:
        if not worker.is_alive():
            shutil.rmtree(temp, ignore_errors=True)
    return False


def _exit_status(exc: BaseException | None) -> int:
    """0 without an error; 1 for an SQL error (DuckDB's, or the CLI's),
    said in one line; anything else is a bug and raised again."""
    if exc is None:
        return 0
    text = " ".join(str(exc).split())
    if isinstance(exc, (duckdb.Error, RuntimeError)):
        fail(None, f"SQL error: {text[:500]}")
        return 1
    raise exc
