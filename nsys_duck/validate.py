"""File validator for nsys-duck ``.perfetto.json.gz`` traces.

``validate_trace(path)`` checks a trace against the output contract
(``output-contract.md``) and Perfetto's JSON importer rules in bounded
memory and returns a :class:`ValidationReport`; a bad trace never raises
(every problem is a :class:`Violation`), a missing file raises
``FileNotFoundError``. JSON ``ts``/``dur`` are µs; every check uses their
exact integer ns and half-open intervals ``[ts, ts+dur)``; messages print µs
with 3 decimals.

How it works (one path):

1. A byte scan (``_ByteScan``, in a thread beside step 2) decompresses the
   file in blocks (``isal``) and checks what SQL cannot see: gzip, the head
   and tail of the stream, raw control bytes, invalid UTF-8, surrogate and
   ``\u0000`` escapes, ts/dur number syntax. If it found bytes DuckDB's
   reader rejects, a repaired copy (same events, each bad byte or escape
   replaced) is read instead, so one bad byte does not hide the rest.
2. DuckDB reads the array (``read_json(format='array')``, each field as its
   JSON value) into ``json_events``; ``sql/validate/`` makes ``chk_events``
   of it (exact ns: the number's text as DECIMAL(18,3)). A file DuckDB
   cannot parse is one ``json`` violation with DuckDB's message.
3. The ``check_*`` views of ``sql/50_checks/`` (the ones a conversion runs
   over its own ``chk_events``) return the offending rows: rule id = view
   name without ``check_``. DuckDB has ``memory_limit`` and a private
   ``temp_directory`` (it spills). Ctrl-C stops it (KeyboardInterrupt).

Rules (ids of ``ValidationReport.violation_counts``; the SQL ones are
documented in their view's header):

- ``gzip``: gzip magic, full decompression, CRC/length, exactly one member
  (later members are still decoded, as Perfetto does).
- ``json``: one non-empty JSON array of objects; no BOM; the first 128
  bytes start with ``[{"`` after whitespace; nothing (not even whitespace)
  after the closing ``]``; DuckDB's parse errors.
- ``number``: ts/dur plain JSON numbers (no exponent, NaN/Infinity, > 3
  fraction digits, strings); 0 <= ts < 2^42 µs, dur >= 0, ts+dur < 2^42
  µs; non-M events have ts, X have dur.
- ``string``: no ``\ud800``-``\udfff`` or ``\u0000`` escape (an escaped
  backslash before ``u`` is plain text), no raw control byte < 0x20, valid
  UTF-8.
- ``ph``, ``pid_tid``, ``track_named``, ``be_balance``, ``overlap``,
  ``b_e_async``, ``flow``, ``flow_kind``, ``metadata``: the ``check_*``
  views of ``sql/50_checks/``.
- ``internal``: the validator itself failed; the trace is not known good.

Command line: ``nsys-duck validate FILE|NAME [--json] [--max-examples N]``
(``python -m nsys_duck.validate`` is the same command).
"""

from __future__ import annotations

import codecs
import json
import os
import re
import shutil
import tempfile
import threading
import zlib
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from . import pipeline
from .errors import SqlStageError

try:  # ISA-L is ~2x faster than zlib; same API.
    from isal import isal_zlib as _zlib
except ImportError:  # pragma: no cover - isal is a dependency
    _zlib = zlib

__all__ = [
    "RULES",
    "ValidationReport",
    "Violation",
    "is_kineto_trace",
    "print_report",
    "print_reports",
    "validate_trace",
]

#: Rule ids, in report order.
RULES = (
    "gzip",
    "json",
    "number",
    "string",
    "ph",
    "pid_tid",
    "track_named",
    "be_balance",
    "overlap",
    "b_e_async",
    "flow",
    "flow_kind",
    "metadata",
    "internal",
)
#: The SQL folders the validator runs: macros and domain tables; then (after
#: loading json_events) the JSON -> chk_events view; then the generic checks.
BASE_FOLDERS = ("00_macros", "05_domain")
LOAD_FOLDERS = ("validate",)
CHECK_FOLDERS = ("50_checks",)
TEXT_LIMIT = 300  # characters of event text kept per violation
READ_BLOCK = 1 << 20  # compressed bytes per file read
OUT_CHUNK = 1 << 22  # decompressed bytes per chunk
HOLD = 256  # bytes held back per chunk so a pattern is seen whole
LOOKBEHIND = 64  # bytes kept before the held-back part (escape parity)

# RE2 prefilter (pyarrow, over every chunk): a superset of the exact
# patterns below, which only run on the chunks it flags.
_PREFILTER = (
    r"[\x00-\x08\x0b\x0c\x0e-\x1f]|\\u(?:[dD][89a-fA-F]|0000)"
    r'|"(?:ts|dur)"\s*:\s*-?(?:N|I|[0-9][0-9.]*[eE]|[0-9]*\.[0-9]{4})'
)
_RE_CTRL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_RE_ESC = re.compile(rb"\\u(?:[dD][89a-fA-F][0-9a-fA-F]{2}|0000)")
_RE_NUM = re.compile(
    rb'[{,]\s*"(ts|dur)"\s*:\s*(-?(?:NaN|Infinity|[0-9][0-9.]*(?:[eE][-+]?[0-9]*)?))'
)
_WS = b" \t\n\r"
_CTRL_TO_SPACE = bytes(0x20 if b < 0x20 and b not in (0x09, 0x0A, 0x0D) else b for b in range(256))


@dataclass
class Violation:
    """One broken rule.

    ``rule`` is a rule id (module docstring), ``message`` one sentence (times
    in µs), ``event`` the text of the offending event (compact JSON, at most
    ~300 characters), or for byte-level findings the raw bytes around the
    offending position; ``None`` for file-wide findings.
    """

    rule: str
    message: str
    event: str | None = None


@dataclass
class ValidationReport:
    """Result of :func:`validate_trace`.

    ``events`` is the number of elements of the top-level array.
    ``counts`` holds ``ph:<ph>`` and ``cat:<cat>`` event counts plus
    ``flows`` (ids with exactly one s and one f), ``slices`` (X + matched
    B/E), ``processes`` and ``threads``. ``violations`` keeps at most
    ``max_examples`` examples per rule; ``violation_counts`` has the total
    per rule (only rules with violations).
    """

    path: str
    events: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    violations: list[Violation] = field(default_factory=list)
    violation_counts: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when no rule was broken."""
        return not self.violation_counts


class _Collector:
    """Counts violations per rule; keeps the first ``max_examples`` of each
    as (rule, message, event text or None, seq or None)."""

    def __init__(self, max_examples: int):
        self.max_examples = max(0, max_examples)
        self.counts: dict[str, int] = {}
        self.examples: list[tuple[str, str, str | None, int | None]] = []
        self._kept: dict[str, int] = {}

    def add(
        self, rule: str, message: str, event: str | None = None, seq: int | None = None, n: int = 1
    ) -> None:
        self.counts[rule] = self.counts.get(rule, 0) + n
        if self._kept.get(rule, 0) < self.max_examples:
            self._kept[rule] = self._kept.get(rule, 0) + 1
            self.examples.append((rule, message, event, seq))


def _snippet(buf: bytes, pos: int) -> str:
    """Raw bytes around ``pos`` (from the start of the enclosing event if near)."""
    start = buf.rfind(b"{", max(0, pos - 200), pos + 1)
    if start < 0:
        start = max(0, pos - 100)
    return buf[start : start + TEXT_LIMIT].decode("utf-8", "backslashreplace")[:TEXT_LIMIT]


def _escaped(buf: bytes, pos: int) -> bool:
    """Is the backslash at ``buf[pos]`` itself escaped (odd run before it)?"""
    j = pos
    while j > 0 and buf[j - 1] == 0x5C:
        j -= 1
    return (pos - j) % 2 == 1


# --------------------------------------------------------------------------
# step 1: the byte scan


def _chunks(path: str, col: _Collector | None) -> Iterator[bytes]:
    """The decompressed stream in chunks of at most OUT_CHUNK bytes; gzip
    problems go to ``col`` (None: a second pass, already reported). A file
    without gzip magic is read as plain JSON."""
    with open(path, "rb") as f:
        buf = f.read(READ_BLOCK)
        if buf[:2] != b"\x1f\x8b":
            if col is not None:
                col.add("gzip", "not a gzip file (no 1f 8b magic); checked as plain JSON")
            while buf:
                yield buf
                buf = f.read(READ_BLOCK)
            return
        member, total = 1, 0
        d = _zlib.decompressobj(wbits=31)
        while True:
            if not buf:
                buf = f.read(READ_BLOCK)
                if not buf:
                    break
            try:
                out = d.decompress(buf, OUT_CHUNK)
            except Exception as exc:
                if col is not None:
                    col.add(
                        "gzip",
                        f"gzip member {member} is corrupt after {total} decompressed bytes: {exc}",
                    )
                return
            buf = d.unconsumed_tail
            total += len(out)
            if out:
                yield out
            if d.eof:
                rest = d.unused_data + buf
                if not rest:
                    rest = f.read(READ_BLOCK)
                if not rest:
                    return
                if member == 1 and col is not None:
                    where = f"after {total} decompressed bytes"
                    if rest[:2] == b"\x1f\x8b":
                        col.add(
                            "gzip",
                            f"more than one gzip member: a second member starts "
                            f"{where} (Perfetto concatenates them; the contract wants "
                            "exactly one)",
                        )
                    else:
                        col.add(
                            "gzip",
                            f"{len(rest)}+ trailing bytes after the gzip member "
                            f"({where}), not a gzip member",
                        )
                if rest[:2] != b"\x1f\x8b":
                    return
                member += 1
                d = _zlib.decompressobj(wbits=31)
                buf = rest
        if not d.eof and col is not None:
            col.add(
                "gzip",
                f"truncated gzip stream: member {member} ends without its "
                f"trailer after {total} decompressed bytes",
            )


class _ByteScan:
    """Byte-level checks over the decompressed stream (``feed`` each chunk,
    then ``finish``). Memory: one chunk plus HOLD + LOOKBEHIND bytes."""

    def __init__(self, col: _Collector):
        self.col = col
        self.total = 0  # decompressed bytes
        self.head = b""  # first 128 bytes
        self.last = b""  # last non-whitespace byte
        self.trailing_ws = 0  # whitespace bytes after it
        self.buf = b""  # bytes not yet scanned (plus lookbehind)
        self.lo = 0  # buf[lo:] is not yet scanned
        self.base = 0  # stream offset of buf[0]
        self.utf8 = codecs.getincrementaldecoder("utf-8")("strict")
        self.dirty = False  # DuckDB's reader would reject some bytes

    def feed(self, chunk: bytes, final: bool = False) -> None:
        if len(self.head) < 128:
            self.head += chunk[: 128 - len(self.head)]
        stripped = chunk.rstrip(_WS)
        if stripped:
            self.last, self.trailing_ws = stripped[-1:], len(chunk) - len(stripped)
        else:
            self.trailing_ws += len(chunk)
        self._utf8(chunk)
        self.total += len(chunk)
        buf = self.buf + chunk
        cut = len(buf) if final else len(buf) - HOLD
        if cut > self.lo:
            if pc.match_substring_regex(pa.array([buf], pa.binary()), _PREFILTER)[0].as_py():
                self._exact(buf, self.lo, cut)
            keep = max(0, cut - LOOKBEHIND)
            while keep > 0 and buf[keep - 1] == 0x5C:
                keep -= 1
            self.base += keep
            self.buf, self.lo = buf[keep:], cut - keep
        else:
            self.buf = buf

    def _utf8(self, chunk: bytes) -> None:
        if chunk.isascii() and not self.utf8.getstate()[0]:
            return
        rest, off = chunk, 0
        for _ in range(100):
            try:
                self.utf8.decode(rest)
                return
            except UnicodeDecodeError as exc:
                self.utf8.reset()
                self.dirty = True
                self.col.add(
                    "string",
                    f"invalid UTF-8 at byte offset {self.total + off + exc.start}",
                    _snippet(chunk, off + exc.start),
                )
                off += exc.end
                rest = rest[exc.end :]

    def _exact(self, buf: bytes, lo: int, hi: int) -> None:
        """Report the matches starting in buf[lo:hi]."""
        col = self.col

        def found(pattern: re.Pattern) -> Iterator[re.Match]:
            for m in pattern.finditer(buf, lo):
                if m.start() >= hi:
                    return
                yield m

        for m in found(_RE_CTRL):
            b = buf[m.start()]
            what = "NUL" if b == 0 else f"control byte 0x{b:02x}"
            self.dirty = True
            col.add(
                "string",
                f"raw {what} at byte offset {self.base + m.start()} (must be "
                "escaped, NUL never written)",
                _snippet(buf, m.start()),
            )
        for m in found(_RE_ESC):
            if _escaped(buf, m.start()):
                continue
            esc = m.group().decode()
            self.dirty = True
            msg = (
                "\\u0000 escape (Perfetto cuts the string there)"
                if esc == "\\u0000"
                else f"surrogate escape {esc} (Perfetto rejects the whole file)"
            )
            col.add(
                "string", f"{msg} at byte offset {self.base + m.start()}", _snippet(buf, m.start())
            )
        for m in found(_RE_NUM):
            key, lit = m.group(1).decode(), m.group(2).decode()
            frac = lit.split(".", 1)[1] if "." in lit else ""
            if "N" in lit or "I" in lit:
                msg = f"{key} is {lit} (not a JSON number)"
            elif "e" in lit or "E" in lit:
                msg = f"{key} {lit} uses exponent notation"
            elif len(frac) > 3:
                msg = f"{key} {lit} has {len(frac)} fraction digits (max 3: ns)"
            else:
                continue
            col.add("number", msg, _snippet(buf, m.start()))

    def finish(self) -> None:
        """The deferred checks and the ``json`` rules on the head and tail."""
        self.feed(b"", final=True)
        col = self.col
        try:
            self.utf8.decode(b"", final=True)
        except UnicodeDecodeError:
            self.dirty = True
            col.add("string", "invalid UTF-8: stream ends inside a multi-byte character")
        if self.total == 0:
            col.add("json", "empty trace (no bytes after decompression)")
            return
        head = self.head
        if head.startswith(b"\xef\xbb\xbf"):
            col.add(
                "json",
                "starts with a UTF-8 BOM (Perfetto: unknown trace type)",
                head.decode("utf-8", "backslashreplace"),
            )
        elif not head.translate(None, _WS).startswith(b'[{"'):
            col.add(
                "json",
                'first 128 bytes do not start with [{" after whitespace (need a '
                "bare array whose first element is an object)",
                head.decode("utf-8", "backslashreplace"),
            )
        if self.last != b"]":
            col.add(
                "json",
                "the stream does not end with ] (last non-blank byte is "
                f"{self.last.decode('utf-8', 'backslashreplace')!r})",
            )
        elif self.trailing_ws:
            col.add(
                "json",
                f"{self.trailing_ws} whitespace byte(s) after the closing ] "
                "(nothing may follow it)",
            )


_RE_FIX_ESC = re.compile(rb"(?<!\\)((?:\\\\)*)\\u(?:[dD][89a-fA-F][0-9a-fA-F]{2}|0000)")


def _write_repaired(path: str, dest: str) -> None:
    """The decompressed stream with what DuckDB's reader rejects repaired
    (raw control bytes -> space, invalid UTF-8 -> U+FFFD, surrogate and
    \\u0000 escapes -> \\ufffd), so the events are still read."""
    text = codecs.getincrementaldecoder("utf-8")("replace")
    carry = b""
    with open(dest, "wb") as out:
        for chunk in _chunks(path, None):
            # the replacement keeps lengths: carry is already repaired
            data = _RE_FIX_ESC.sub(
                rb"\1\\ufffd", carry + text.decode(chunk).encode("utf-8").translate(_CTRL_TO_SPACE)
            )
            keep = max(0, len(data) - 16)
            j = data.rfind(b"\\", max(0, keep - 6), keep)  # no escape cut in two
            if j >= 0:
                keep = j
            while keep > 0 and data[keep - 1] == 0x5C:  # nor a backslash run
                keep -= 1
            out.write(data[:keep])
            carry = data[keep:]
        tail = text.decode(b"", final=True).encode("utf-8").translate(_CTRL_TO_SPACE)
        out.write(_RE_FIX_ESC.sub(rb"\1\\ufffd", carry + tail))


# --------------------------------------------------------------------------
# steps 2 and 3: DuckDB


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


_FIELDS = ("ph", "cat", "name", "pid", "tid", "ts", "dur", "id", "id2", "bp", "s", "args")
_LOAD_SQL = """
CREATE OR REPLACE VIEW json_events AS
SELECT o - 1 AS seq, {fields_but_args},
    CASE WHEN ph ->> '$' = 'M' THEN args END AS args
FROM read_json({src}, format = 'array', records = 'true', compression = '{comp}',
               columns = {{{columns}}})
    WITH ORDINALITY AS r({fields}, o)
""".format(
    fields_but_args=", ".join(_FIELDS[:-1]),
    fields=", ".join(_FIELDS),
    columns=", ".join(f"{f}: 'JSON'" for f in _FIELDS),
    src="{src}",
    comp="{comp}",
)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _execute(con: duckdb.DuckDBPyConnection, sql: str, params=None) -> list[tuple]:
    """``con.execute(sql).fetchall()`` in a helper thread, so Ctrl-C in the
    main thread interrupts DuckDB (which notices it only between tasks).
    Raises KeyboardInterrupt on Ctrl-C, else DuckDB's own errors."""
    box: list = []
    done = threading.Event()

    def work() -> None:
        try:
            box.append(con.execute(sql, params).fetchall())
        except BaseException as exc:
            box.append(exc)
        finally:
            done.set()

    threading.Thread(target=work, daemon=True, name="nsys-duck-validate-query").start()
    try:
        while not done.wait(0.05):
            pass
    except BaseException:
        # again until the worker is done: an interrupt that lands before
        # DuckDB started the query is lost, and the query would run on
        con.interrupt()
        while not done.wait(0.1):
            con.interrupt()
        raise
    if isinstance(box[0], BaseException):
        if isinstance(box[0], RuntimeError) and "interrupted" in str(box[0]).lower():
            raise KeyboardInterrupt from None
        raise box[0]
    return box[0]


def _source(path: str, work: str, repaired: bool) -> tuple[str, str]:
    """(SQL literal naming the file DuckDB reads, its compression). DuckDB
    expands glob characters in names: read through a link in ``work``."""
    if repaired:
        return _sql_str(os.path.join(work, "repaired.json")), "uncompressed"
    with open(path, "rb") as f:
        comp = "gzip" if f.read(2) == b"\x1f\x8b" else "uncompressed"
    link = os.path.join(work, "trace.json.gz" if comp == "gzip" else "trace.json")
    try:
        os.symlink(os.path.abspath(path), link)
    except OSError:
        link = os.path.abspath(path)
    return _sql_str(link), comp


def _run_sql(con, folders: tuple[str, ...]) -> list[str]:
    """Create the views of ``folders``; returns the views created."""
    files = pipeline.sql_files(folders=folders)
    pipeline.run_pipeline(con, files, pipeline.Context(columns={}))
    return [
        name for f in files for kind, name in pipeline.created_objects(f.text) if kind == "view"
    ]


def _materialize(con, views: list[str]) -> None:
    """Compute each view once into a table of the same name (in order, so
    each reads the tables before it): the checks read chk_events and the
    private ``_chk_*`` views several times. Views bind names when queried,
    so the ones above them read the tables."""
    for view in views:
        _execute(con, f'ALTER VIEW "{view}" RENAME TO "{view}__view"')
        _execute(con, f'CREATE TABLE "{view}" AS FROM "{view}__view"')


def _checks(con, col: _Collector, views: list[str]) -> None:
    """Count each check view's rows; keep the first examples (by seq)."""
    for view in views:
        rule = view[len("check_") :]
        rows = _execute(
            con,
            f"""
            SELECT message, seq, count(*) OVER () FROM {view}
            ORDER BY seq NULLS FIRST, message LIMIT {max(1, col.max_examples)}""",
        )
        if rows:
            col.add(rule, rows[0][0], seq=rows[0][1], n=rows[0][2])
            for message, seq, _ in rows[1:]:
                col.add(rule, message, seq=seq, n=0)


_COUNTS_SQL = """
SELECT 'ph:' || coalesce(ph, 'null'), count(*) FROM chk_events GROUP BY 1
UNION ALL
SELECT 'cat:' || cat, count(*) FROM chk_events WHERE cat IS NOT NULL GROUP BY 1
UNION ALL
SELECT 'flows', count(*) FROM (
    SELECT id FROM chk_events WHERE ph IN ('s', 'f') AND id IS NOT NULL GROUP BY id
    HAVING count(*) FILTER (WHERE ph = 's') = 1 AND count(*) FILTER (WHERE ph = 'f') = 1)
UNION ALL
SELECT 'slices', count(*) FROM _chk_slices
UNION ALL
SELECT 'processes', count(DISTINCT pid) FROM chk_events
UNION ALL
SELECT 'threads', count(DISTINCT (pid, tid)) FROM chk_events
WHERE pid IS NOT NULL AND tid IS NOT NULL
"""


def _counts(con) -> dict[str, int]:
    rows = [(k, int(n)) for k, n in _execute(con, _COUNTS_SQL)]
    order = ("flows", "slices", "processes", "threads")
    out = dict(sorted((k, n) for k, n in rows if k.startswith(("ph:", "cat:"))))
    out.update(sorted(((k, n) for k, n in rows if k in order), key=lambda kv: order.index(kv[0])))
    return out


def _event_texts(con, src: str, comp: str, seqs: list[int]) -> dict[int, str]:
    """Compact JSON text of the events at positions ``seqs`` (one scan,
    stopped after the last one)."""
    if not seqs:
        return {}
    rows = _execute(
        con,
        f"""
        SELECT o - 1, j::VARCHAR
        FROM read_json_objects({src}, format = 'array', compression = '{comp}')
            WITH ORDINALITY AS r(j, o)
        WHERE o <= {max(seqs) + 1} AND o - 1 IN (SELECT unnest($1::BIGINT[]))""",
        [seqs],
    )
    return {i: (t if len(t) <= TEXT_LIMIT else t[: TEXT_LIMIT - 3] + "...") for i, t in rows}


class _Scanner(threading.Thread):
    """Step 1 in a thread of its own, beside DuckDB's load (both mostly
    outside the GIL). ``stop`` ends it early (Ctrl-C)."""

    def __init__(self, path: str, col: _Collector):
        super().__init__(daemon=True, name="nsys-duck-validate-scan")
        self.path, self.scan, self.stop = path, _ByteScan(col), threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            for chunk in _chunks(self.path, self.scan.col):
                if self.stop.is_set():
                    return
                self.scan.feed(chunk)
            self.scan.finish()
        except BaseException as exc:  # re-raised by the main thread
            self.error = exc


def _load(con, src: str, comp: str, path: str) -> str | None:
    """Read the trace once into table chk_events (view json_events over
    DuckDB's reader, then sql/validate/); DuckDB's message on failure."""
    try:
        _execute(con, "DROP TABLE IF EXISTS chk_events")
        _execute(con, "DROP VIEW IF EXISTS chk_events__view")
        _execute(con, _LOAD_SQL.replace("{src}", src).replace("{comp}", comp))
        _run_sql(con, LOAD_FOLDERS)
        _materialize(con, ["chk_events"])
        return None
    except (duckdb.Error, SqlStageError) as exc:
        return " ".join(_first_line(exc).split()).replace(src.strip("'"), path)


def _validate(path: str, col: _Collector, report: ValidationReport, con, work: str) -> None:
    _run_sql(con, BASE_FOLDERS)
    scanner = _Scanner(path, col)
    scanner.start()
    try:
        src, comp = _source(path, work, False)
        failed = _load(con, src, comp, path)
    except BaseException:  # Ctrl-C: stop the scan too
        scanner.stop.set()
        raise
    finally:
        scanner.join()
    if scanner.error is not None:
        raise scanner.error
    scan = scanner.scan
    if scan.dirty:  # bytes DuckDB rejects or reads differently: read a repaired copy
        _write_repaired(path, os.path.join(work, "repaired.json"))
        src, comp = _source(path, work, True)
        failed = _load(con, src, comp, path)
    if failed:
        col.add("json", f"DuckDB cannot read the trace as a JSON array of objects: {failed}")
        if "control character" in failed:  # others were repaired: a raw tab, newline or CR
            col.add("string", "raw tab, newline or CR inside a string (must be escaped)")
        return
    report.events = _execute(con, "SELECT count(*) FROM chk_events")[0][0]
    if report.events == 0 and scan.total and "json" not in col.counts:
        col.add("json", "the top-level array is empty")
    views = _run_sql(con, CHECK_FOLDERS)
    _materialize(con, [v for v in views if v.startswith("_chk_")])
    views = [v for v in views if v.startswith("check_")]
    _checks(con, col, views)
    report.counts = _counts(con)
    want = sorted({s for _, _, t, s in col.examples if t is None and s is not None})
    texts = _event_texts(con, src, comp, want)
    col.examples = [
        (r, m, texts.get(s) if t is None and s is not None else t, s) for r, m, t, s in col.examples
    ]


def validate_trace(
    path, *, max_examples: int = 5, memory_limit: str = "1GB", temp_dir=None
) -> ValidationReport:
    """Validate an nsys-duck Perfetto JSON trace (normally ``.perfetto.json.gz``).

    Streams the file once for the byte-level rules, lets DuckDB read the
    events and runs the ``check_*`` views (module docstring). Times in the
    input are µs; all checks use exact integer ns and half-open intervals.

    Args:
        max_examples: examples kept per rule (totals are always exact).
        memory_limit: DuckDB's memory limit; it spills beyond it to a
            private directory created under ``temp_dir`` (default: the system
            temp dir) and removed afterwards.

    Returns:
        a :class:`ValidationReport`; never raises for a bad trace (a
        validator failure is an ``internal`` violation).

    Raises:
        FileNotFoundError: ``path`` does not exist.
        KeyboardInterrupt: Ctrl-C.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(path)
    if temp_dir is not None:
        os.makedirs(temp_dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="nsys-duck-validate-", dir=temp_dir)
    col = _Collector(max_examples)
    report = ValidationReport(path=path)
    con = duckdb.connect(":memory:")
    try:
        con.execute("SET enable_progress_bar = false")
        con.execute(f"SET memory_limit = {_sql_str(memory_limit)}")
        con.execute(f"SET temp_directory = {_sql_str(os.path.join(work, 'spill'))}")
        _validate(path, col, report, con, work)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # a validator bug must not look like a clean trace
        col.add(
            "internal",
            f"validator could not finish: {type(exc).__name__}: {' '.join(str(exc).split())}",
        )
    finally:
        con.close()
        shutil.rmtree(work, ignore_errors=True)
    order = {r: i for i, r in enumerate(RULES)}
    ex = sorted(col.examples, key=lambda e: order.get(e[0], len(order)))
    report.violations = [Violation(r, m, t) for r, m, t, _ in ex]
    report.violation_counts = {
        r: col.counts[r]
        for r in sorted(col.counts, key=lambda r: order.get(r, len(order)))
        if col.counts[r]
    }
    return report


def print_report(rep: ValidationReport, as_json: bool = False) -> int:
    """Print ``rep`` (text, or JSON with ``ok``) to stdout; returns the exit
    status: 0 when clean, 1 on violations."""
    if as_json:
        print(json.dumps(dict(asdict(rep), ok=rep.ok), indent=2, ensure_ascii=False))
        return 0 if rep.ok else 1
    print(f"{rep.path}: {rep.events} events")
    for k, n in rep.counts.items():
        print(f"  {k:<24} {n}")
    if rep.ok:
        print("OK: no violations")
        return 0
    print(f"FAILED: {sum(rep.violation_counts.values())} violation(s)")
    for rule, n in rep.violation_counts.items():
        print(f"  {rule:<12} {n}")
    for v in rep.violations:
        print(f"[{v.rule}] {v.message}")
        if v.event:
            print(f"    {v.event}")
    return 1


def print_reports(reps: list[ValidationReport], as_json: bool = False) -> int:
    """Print the reports of a trace's files (one, or every part of a split
    trace, then a line on all of them; JSON: one report, or ``{"ok", "parts"}``);
    returns the exit status: 0 when all are clean, 1 on violations."""
    if len(reps) == 1:
        return print_report(reps[0], as_json)
    ok = all(r.ok for r in reps)
    if as_json:
        parts = [dict(asdict(r), ok=r.ok) for r in reps]
        print(json.dumps({"ok": ok, "parts": parts}, indent=2, ensure_ascii=False))
        return 0 if ok else 1
    for i, rep in enumerate(reps):
        if i:
            print()
        print_report(rep)
    failed = sum(not r.ok for r in reps)
    print()
    print(
        f"all {len(reps)} parts: OK, no violations"
        if ok
        else f"FAILED: violations in {failed} of {len(reps)} parts"
    )
    return 0 if ok else 1


#: How a Kineto trace (``--format kineto``, sql/60_kineto) starts: a JSON
#: object, not the bare array of a Perfetto trace.
KINETO_HEAD = re.compile(rb'\s*\{\s*"(schemaVersion|traceEvents|distributedInfo)"')


def is_kineto_trace(path) -> bool:
    """``path`` (gzip or plain) starts as a Kineto trace does (an object
    with ``schemaVersion``/``traceEvents``), what this validator does not check."""
    try:
        with open(path, "rb") as f:
            raw = f.read(1 << 16)
        head = zlib.decompressobj(47).decompress(raw, 4096) if raw[:2] == b"\x1f\x8b" else raw
    except (OSError, zlib.error):
        return False
    return KINETO_HEAD.match(head) is not None
